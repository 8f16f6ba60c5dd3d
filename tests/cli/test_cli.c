/* test_cli.c: the flag table every tool parses with (src/cli/cli.c): the
 * forms of a bool flag (alone it means true; a following word is its value
 * only when it is true or false), switches that take no value, values
 * given with '=' or as the next word, and bad values named. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli.h"

typedef struct Opts {
    bool flag, sw;
    int64_t n;
} Opts;

static const CliFlag flags[] = {
    {"--flag", CLI_BOOL, offsetof(Opts, flag), "[=true|false]", "false", "a bool"},
    {"--sw", CLI_SWITCH, offsetof(Opts, sw), "", "off", "a switch"},
    {"--n", CLI_INT, offsetof(Opts, n), "=N", "0", "a number"},
};

/* Parses the words (argv[0] a tool name) into *o; the positionals' count in
 * *n_pos, the first in *first. */
static bool parse(Opts *o, int *n_pos, const char **first, char *msg, int argc, ...)
{
    char *argv[16] = { "tool" };
    va_list ap;
    va_start(ap, argc);
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    memset(o, 0, sizeof *o);
    const char *pos[4] = { 0 };
    bool ok = cli_parse(flags, 3, argc, argv, o, pos, 4, n_pos, msg, 200);
    *first = pos[0];
    return ok;
}

static void test_bool_forms(void **state)
{
    (void)state;
    Opts o;
    int n;
    const char *first;
    char msg[200];
    assert_true(parse(&o, &n, &first, msg, 2, "--flag"));
    assert_true(o.flag);
    assert_true(parse(&o, &n, &first, msg, 2, "--flag=false"));
    assert_false(o.flag);
    assert_true(parse(&o, &n, &first, msg, 3, "--flag", "false"));
    assert_false(o.flag);
    assert_int_equal(n, 0);
    /* alone before a positional: true, and the word stays positional */
    assert_true(parse(&o, &n, &first, msg, 3, "--flag", "m.hlo"));
    assert_true(o.flag);
    assert_int_equal(n, 1);
    assert_string_equal(first, "m.hlo");
    assert_false(parse(&o, &n, &first, msg, 2, "--flag=maybe"));
    assert_non_null(strstr(msg, "--flag: bad value 'maybe'"));
}

static void test_switch_and_values(void **state)
{
    (void)state;
    Opts o;
    int n;
    const char *first;
    char msg[200];
    assert_true(parse(&o, &n, &first, msg, 4, "--sw", "--n", "7"));
    assert_true(o.sw);
    assert_int_equal(o.n, 7);
    assert_false(parse(&o, &n, &first, msg, 2, "--sw=true"));
    assert_non_null(strstr(msg, "--sw takes no value"));
    assert_false(parse(&o, &n, &first, msg, 2, "--n"));
    assert_non_null(strstr(msg, "--n needs a value"));
    assert_false(parse(&o, &n, &first, msg, 2, "--nope"));
    assert_non_null(strstr(msg, "unknown flag '--nope'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bool_forms),
        cmocka_unit_test(test_switch_and_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
