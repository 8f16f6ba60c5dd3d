/* files.c: directories made for what the tools write (the files themselves
 * are written beside their target and renamed: print.c, npy.c). */
#include "ir.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
