/* error.c: the one error struct, carrying file:line:col. */
#include "ir.h"

#include <stdarg.h>
#include <string.h>

bool error_set(Error *err, ErrCode code, IrLoc loc, const char *fmt, ...)
{
    if (!err || err->code != ERR_OK)
        return false;
    err->code = code;
    error_set_loc(err, loc);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return false;
}

bool error_nomem(Error *err, IrLoc loc)
{
    return error_set(err, ERR_NOMEM, loc, "out of memory");
}

void error_set_loc(Error *err, IrLoc loc)
{
    err->loc = loc;
    snprintf(err->file, sizeof err->file, "%s", loc.file ? loc.file : "");
}

void error_print(const Error *err, FILE *out)
{
    const char *file = err->file[0] ? err->file : NULL;
    if (file && err->loc.line > 0)
        fprintf(out, "%s:%d:%d: error: %s\n", file, err->loc.line, err->loc.col, err->msg);
    else if (file)
        fprintf(out, "%s: error: %s\n", file, err->msg);
    else
        fprintf(out, "error: %s\n", err->msg);
}

int error_exit_code(const Error *err)
{
    switch (err->code) {
    case ERR_OK:
        return 0;
    case ERR_INTERNAL:
    case ERR_NOMEM:
        return 3;
    case ERR_SYNTAX:
    case ERR_SHAPE:
    case ERR_UNSUPPORTED:
    case ERR_MPI:
    case ERR_MISMATCH:
    case ERR_IO:
        return 2;
    }
    return 3;
}
