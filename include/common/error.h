/* Error reporting shared by every library function: a function that can fail
 * returns 0 on success and -1 on failure, after writing a one-line message
 * (what, where, what was expected) into the caller's cm_err. */
#ifndef COMMON_ERROR_H
#define COMMON_ERROR_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char msg[512];
} cm_err;

#if defined(__GNUC__)
#define CM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CM_PRINTF(a, b)
#endif

/* Formats the message into err (if not NULL) and returns -1. */
int cm_fail(cm_err *err, const char *fmt, ...) CM_PRINTF(2, 3);

/* malloc/calloc that abort with a message on exhaustion (no silent NULLs). */
void *cm_malloc(size_t bytes);
void *cm_calloc(size_t count, size_t size);

/* The whole file at path into *text (malloc'd, NUL-terminated; *n its bytes without the NUL), at most `limit`
 * bytes; `kind` names the contents for the message when it is larger ("file too large: expected at most
 * 64 MiB of <kind>").  Messages: "path: cannot open: <reason>", "path: read error". */
int cm_read_file(const char *path, size_t limit, const char *kind, char **text, size_t *n, cm_err *err);
/* The same from an open stream (standard input, say), named `name` in the messages; the stream stays open. */
int cm_read_stream(FILE *f, const char *name, size_t limit, const char *kind, char **text, size_t *n, cm_err *err);
/* 1 when path names a regular file (after links), else 0. */
int cm_is_file(const char *path);

#ifdef __cplusplus
}
#endif

#endif
