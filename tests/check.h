/* Minimal assertion helpers for the C test programs: each CHECK counts a pass
 * or prints the failure with file:line; check_done() prints the closing line
 * "N passed, M failed" and returns the exit status. */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <inttypes.h>
#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (cond) {                                                            \
            check_passed++;                                                    \
        } else {                                                               \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

#define CHECK_EQ_I64(a, b, what)                                               \
    CHECK((int64_t)(a) == (int64_t)(b), "%s: %" PRId64 " != %" PRId64, what,  \
          (int64_t)(a), (int64_t)(b))

static inline int check_done(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
