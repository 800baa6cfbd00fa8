#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
