/* cli.h: the command-line flag table shared by hlo-opt, hlo-run and
 * hlo-check.  One table per tool drives both parsing and --help, so a flag's
 * default is written once. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum CliKind {
    CLI_SWITCH,     /* --name: sets a bool */
    CLI_BOOL,       /* --name=true|false, --name true|false, or --name alone: true */
    CLI_INT,        /* --name=N: int64_t */
    CLI_UINT64,     /* --name=N: uint64_t */
    CLI_DOUBLE,     /* --name=X: double */
    CLI_STRING,     /* --name=TEXT: const char * */
    CLI_CHOICE,     /* --name=WORD, one of the '|'-separated words of metavar: const char * */
    CLI_BYTES,      /* --name=SIZE: int64_t bytes; 2.5GB, 300MB (powers of 1000), 8G, 8GiB (of 1024) */
} CliKind;

typedef struct CliFlag {
    const char *name;       /* "--trials", or "-o" */
    CliKind kind;
    size_t offset;          /* of the field in the tool's options struct */
    const char *metavar;    /* shown by --help after the name, e.g. "=N" */
    const char *deflt;      /* shown by --help; "" when there is none */
    const char *help;
} CliFlag;

/* Parses argv[1..] into opts: "--name=value" or "--name value" (and "-o FILE");
 * other words are positional, up to max_pos of them; "--" ends the flags.
 * On a bad flag or value returns false with a one-line message in msg. */
bool cli_parse(const CliFlag *flags, int n_flags, int argc, char **argv, void *opts,
               const char **pos, int max_pos, int *n_pos, char *msg, size_t msg_size);
void cli_print_help(FILE *out, const char *usage, const CliFlag *flags, int n_flags);
/* Do the two paths name one existing file (the same device and inode)?
 * An output that is an input is refused by every tool: nothing the user
 * gave is overwritten. */
bool cli_same_file(const char *a, const char *b);
/* The k-th item (from 0) of a comma-separated list, malloc'd, or NULL when
 * the list has fewer or the item is empty; *n is how many items it has.
 * --snapshot=F0,F1,... and --inputs: rank r takes the r-th. */
char *cli_list_item(const char *list, int k, int *n);
/* Whether a file can be created beside path (the way every output is
 * written: a temporary file renamed over it), tried before any work so that
 * a report a CI job asked for is not lost after a long run; why says what
 * stops it. */
bool cli_can_create(const char *path, char *why, size_t why_n);

#endif /* CLI_H */
