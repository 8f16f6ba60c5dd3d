/* test_files.c: the one writer every tool's files go through
 * (src/ir/files.c): a file appears whole or not at all, an old file
 * survives a failed write, no temporary is left behind, and a failure
 * names the path. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hlocheck_files_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.')
            remove(p);
    }
    if (d)
        closedir(d);
    return rmdir(dir);
}

/* The directory's entries other than . and .. */
static int entries(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void write_text(const char *path, const char *text, bool ok)
{
    IrAtomicFile a;
    Error err = { 0 };
    assert_true(ir_atomic_open(&a, path, &err));
    fputs(text, a.f);
    bool closed = ir_atomic_close(&a, ok, &err);
    assert_int_equal(closed, ok);
    if (!ok) {
        assert_int_equal(err.code, ERR_IO);
        assert_non_null(strstr(err.msg, path));
    }
}

static char *read_text(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_written_whole_no_temporary(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    write_text(path, "first\n", true);
    assert_string_equal(read_text(path), "first\n");
    write_text(path, "second\n", true);
    assert_string_equal(read_text(path), "second\n");
    assert_int_equal(entries(), 1);
}

static void test_failed_write_keeps_the_old_file(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/keep.txt", dir);
    write_text(path, "old\n", true);
    write_text(path, "half of the new", false);
    assert_string_equal(read_text(path), "old\n");
    assert_int_equal(entries(), 2);     /* out.txt and keep.txt: no temporary */
}

static void test_missing_directory_named(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/no/such/dir/x.txt", dir);
    IrAtomicFile a;
    Error err = { 0 };
    assert_false(ir_atomic_open(&a, path, &err));
    assert_int_equal(err.code, ERR_IO);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "No such file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_whole_no_temporary),
        cmocka_unit_test(test_failed_write_keeps_the_old_file),
        cmocka_unit_test(test_missing_directory_named),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
