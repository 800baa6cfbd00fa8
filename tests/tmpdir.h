/* A test program's scratch folder: made under /tmp from a name prefix, removed with all it holds at the end.
 * Include after the system headers, with _POSIX_C_SOURCE >= 200809L defined (mkdtemp). */
#ifndef TESTS_TMPDIR_H
#define TESTS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* dir (n bytes) = /tmp/PREFIX-XXXXXX, made; -1 with a message when it cannot be */
static inline int test_tmpdir_make(char *dir, size_t n, const char *prefix)
{
    snprintf(dir, n, "/tmp/%s-XXXXXX", prefix);
    if (mkdtemp(dir)) return 0;
    perror("mkdtemp");
    return -1;
}

static inline void test_tmpdir_remove(const char *dir)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

#endif
