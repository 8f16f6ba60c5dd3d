/* cli.c: parsing a flag table (cli.h). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const CliFlag *find_flag(const CliFlag *flags, int n, const char *arg, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, arg, len) == 0)
            return &flags[i];
    return NULL;
}

static bool word_in(const char *word, const char *list)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (*p == '=')
            p++, len--;
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        p += bar ? len + 1 : len;
    }
    return false;
}

/* "2.5GB", "300MB", "1e9" (bytes), "8G", "8GiB": decimal units with a B,
 * binary ones without it or with iB (as sort -S and ulimit read them). */
static bool parse_bytes(const char *v, int64_t *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || x < 0)
        return false;
    static const char units[] = "KMGTPE";
    const char *u = *end ? strchr(units, end[0] & ~0x20) : NULL;
    double scale = 1;
    if (*end == 'B' && !end[1]) {
        end++;
    } else if (u && *u) {
        int k = (int)(u - units) + 1;
        bool decimal = (end[1] == 'B' || end[1] == 'b') && !end[2];
        bool binary = !end[1] || (end[1] == 'i' && (end[2] == 'B' || end[2] == 'b') && !end[3]);
        if (!decimal && !binary)
            return false;
        for (int i = 0; i < k; i++)
            scale *= decimal ? 1000.0 : 1024.0;
        end += strlen(end);
    }
    if (*end || x * scale >= 9.2e18)
        return false;
    *out = (int64_t)(x * scale);
    return true;
}

static bool set_value(const CliFlag *f, const char *v, void *opts, char *msg, size_t n)
{
    char *field = (char *)opts + f->offset, *end = NULL;
    errno = 0;
    switch (f->kind) {
    case CLI_SWITCH:
        *(bool *)field = true;
        return true;
    case CLI_BOOL:
        if (strcmp(v, "true") && strcmp(v, "false"))
            break;
        *(bool *)field = strcmp(v, "true") == 0;
        return true;
    case CLI_INT:
        *(int64_t *)field = strtoll(v, &end, 10);
        if (*v && !*end && !errno)
            return true;
        break;
    case CLI_UINT64:
        *(uint64_t *)field = strtoull(v, &end, 0);
        if (*v && *v != '-' && !*end && !errno)
            return true;
        break;
    case CLI_DOUBLE:
        *(double *)field = strtod(v, &end);
        if (*v && !*end && !errno && isfinite(*(double *)field))   /* no nan, no inf */
            return true;
        break;
    case CLI_STRING:
        *(const char **)field = v;
        return true;
    case CLI_BYTES:
        if (parse_bytes(v, (int64_t *)field))
            return true;
        break;
    case CLI_CHOICE:
        if (!word_in(v, f->metavar))
            break;
        *(const char **)field = v;
        return true;
    }
    snprintf(msg, n, "%s: bad value '%s' (want %s); see --help", f->name, v, f->metavar);
    return false;
}

/* One flag at argv[*i]; takes the next word as its value when there is no '='. */
static bool parse_flag(const CliFlag *flags, int n_flags, int argc, char **argv, int *i, void *opts, char *msg,
                       size_t n)
{
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    const CliFlag *f = find_flag(flags, n_flags, arg, eq ? (size_t)(eq - arg) : strlen(arg));
    if (!f) {
        snprintf(msg, n, "unknown flag '%s'; see --help", arg);
        return false;
    }
    if (f->kind == CLI_SWITCH) {
        if (eq) {
            snprintf(msg, n, "%s takes no value; see --help", f->name);
            return false;
        }
        return set_value(f, NULL, opts, msg, n);
    }
    const char *v = eq ? eq + 1 : NULL;
    /* a bool alone means true; a following word is its value only when it
     * is one */
    if (!v && f->kind == CLI_BOOL &&
        (*i + 1 >= argc || (strcmp(argv[*i + 1], "true") != 0 && strcmp(argv[*i + 1], "false") != 0)))
        return set_value(f, "true", opts, msg, n);
    if (!v) {
        if (*i + 1 >= argc) {
            snprintf(msg, n, "%s needs a value (%s%s); see --help", f->name, f->name, f->metavar);
            return false;
        }
        v = argv[++*i];
    }
    return set_value(f, v, opts, msg, n);
}

bool cli_parse(const CliFlag *flags, int n_flags, int argc, char **argv, void *opts, const char **pos,
               int max_pos, int *n_pos, char *msg, size_t msg_size)
{
    bool only_positional = false;
    *n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_positional && strcmp(arg, "--") == 0) {
            only_positional = true;
        } else if (!only_positional && arg[0] == '-' && arg[1] != '\0') {
            if (!parse_flag(flags, n_flags, argc, argv, &i, opts, msg, msg_size))
                return false;
        } else if (*n_pos == max_pos) {
            snprintf(msg, msg_size, "too many inputs ('%s'); see --help", arg);
            return false;
        } else {
            pos[(*n_pos)++] = arg;
        }
    }
    return true;
}

void cli_print_help(FILE *out, const char *usage, const CliFlag *flags, int n_flags)
{
    fputs(usage, out);
    for (int i = 0; i < n_flags; i++) {
        const CliFlag *f = &flags[i];
        fprintf(out, "  %s%s\n      %s", f->name, f->metavar, f->help);
        if (f->deflt[0])
            fprintf(out, " (default: %s)", f->deflt);
        fputc('\n', out);
    }
}

bool cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
        return false;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool cli_can_create(const char *path, char *why, size_t why_n)
{
    if (!path || strcmp(path, "-") == 0)
        return true;
    char probe[4200];
    snprintf(probe, sizeof probe, "%s.tmp.%ld.probe", path, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) {
        snprintf(why, why_n, "%s: cannot be written (%s)", path, strerror(errno));
        return false;
    }
    close(fd);
    unlink(probe);
    return true;
}

char *cli_list_item(const char *list, int k, int *n)
{
    *n = 1;
    for (const char *q = list; *q; q++)
        *n += *q == ',';
    if (k < 0 || k >= *n)
        return NULL;
    const char *q = list;
    for (int i = 0; i < k; i++)
        q = strchr(q, ',') + 1;
    size_t len = strcspn(q, ",");
    return len ? strndup(q, len) : NULL;
}
