/* files.c: what the tools write goes through here: directories made on
 * the way, and every file written beside its target and renamed over it
 * (modules, .npy arrays, reports, hlo-fuzz's summary). */
#include "ir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool cannot_write(const char *path, int e, Error *err)
{
    return error_set(err, ERR_IO, (IrLoc){ path, 0, 0 }, "cannot write %s: %s", path, strerror(e ? e : EIO));
}

bool ir_atomic_open(IrAtomicFile *a, const char *path, Error *err)
{
    memset(a, 0, sizeof *a);
    a->path = path;
    size_t cap = strlen(path) + 32;
    if (!(a->tmp = xmalloc_try(cap)))
        return error_nomem(err, (IrLoc){ path, 0, 0 });
    snprintf(a->tmp, cap, "%s.tmp.%ld", path, (long)getpid());
    errno = 0;
    if (!(a->f = fopen(a->tmp, "wb"))) {
        int e = errno;
        free(a->tmp);
        a->tmp = NULL;
        return cannot_write(path, e, err);
    }
    return true;
}

bool ir_atomic_close(IrAtomicFile *a, bool ok, Error *err)
{
    if (!a->f)
        return false;
    int e = 0;
    if (!ok || ferror(a->f))
        e = errno ? errno : EIO;
    else if (fflush(a->f) != 0 || fsync(fileno(a->f)) != 0)
        e = errno ? errno : EIO;
    if (fclose(a->f) != 0 && e == 0)
        e = errno ? errno : EIO;
    a->f = NULL;
    if (e == 0 && rename(a->tmp, a->path) != 0)
        e = errno ? errno : EIO;
    if (e != 0)
        remove(a->tmp);
    free(a->tmp);
    a->tmp = NULL;
    return e == 0 || cannot_write(a->path, e, err);
}

bool ir_make_dirs(const char *dir, Error *err)
{
    char path[4096];
    if (!dir[0])
        return error_set(err, ERR_IO, (IrLoc){ dir, 0, 0 }, "an empty directory name");
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return error_set(err, ERR_IO, (IrLoc){ dir, 0, 0 }, "directory name too long");
    for (char *p = path + 1;; p++) {
        bool end = *p == '\0';
        if (*p != '/' && !end)
            continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return error_set(err, ERR_IO, (IrLoc){ dir, 0, 0 }, "cannot create directory %s: %s", path,
                             strerror(errno));
        if (end)
            break;
        *p = '/';
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return error_set(err, ERR_IO, (IrLoc){ dir, 0, 0 }, "not a directory");
    return true;
}
