/* Shared by the fuzz targets and the standalone driver (fuzz_main.c). */
#ifndef DSB_FUZZ_H
#define DSB_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* A seed input derived from r (valid frames or operation strings); length. */
size_t fuzz_make_seed(uint64_t r, uint8_t *buf, size_t cap);
/* Outcome counters of the target: [0] inputs, [1] accepted, [2] rejected,
 * [3] target-specific. */
extern uint64_t fuzz_stats[4];
const char *fuzz_name(void);

#define FUZZ_ASSERT(c)                                                                          \
    do {                                                                                        \
        if (!(c)) {                                                                             \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #c);      \
            abort();                                                                            \
        }                                                                                       \
    } while (0)

#endif
