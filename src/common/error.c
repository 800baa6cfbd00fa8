#define _POSIX_C_SOURCE 200809L /* stat */
#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cm_fail(cm_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void *cm_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
        abort();
    }
    return p;
}

void *cm_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "out of memory allocating %zu x %zu bytes\n", count, size);
        abort();
    }
    return p;
}

int cm_read_stream(FILE *f, const char *name, size_t limit, const char *kind, char **text, size_t *n, cm_err *err)
{
    *text = NULL, *n = 0;
    size_t cap = 65536, len = 0;
    char *buf = cm_malloc(cap + 1);
    int rc = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= limit) {
                rc = cm_fail(err, "%s: file too large: expected at most %zu MiB of %s", name, limit >> 20, kind);
                break;
            }
            cap *= 2;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                rc = cm_fail(err, "%s: out of memory", name);
                break;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (!rc && ferror(f)) rc = cm_fail(err, "%s: read error", name);
    if (rc) {
        free(buf);
        return -1;
    }
    buf[len] = '\0';
    *text = buf, *n = len;
    return 0;
}

int cm_read_file(const char *path, size_t limit, const char *kind, char **text, size_t *n, cm_err *err)
{
    *text = NULL, *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return cm_fail(err, "%s: cannot open: %s", path, strerror(errno));
    int rc = cm_read_stream(f, path, limit, kind, text, n, err);
    fclose(f);
    return rc;
}

int cm_is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}
