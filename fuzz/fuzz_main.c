/* Standalone driver for the fuzz targets where libFuzzer is not used (the
 * regular build and CI): mutates seed inputs (bit flips, interesting values,
 * truncation, extension, splices) and runs the target on each, from an
 * exact-size heap copy.  Usage: fuzz_X [iterations] [seed] [--write-corpus DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"

static uint64_t rng;
static uint64_t next(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define CAP 4096

static size_t mutate(uint8_t *b, size_t len)
{
    static const uint8_t interesting[] = {0, 1, 2, 0x7F, 0x80, 0xFF, 64, 63, 0x40, 0x05};
    int rounds = 1 + (int)(next() % 6);
    for (int k = 0; k < rounds; k++) {
        uint64_t r = next();
        size_t pos = len ? (size_t)((r >> 8) % len) : 0;
        switch (r % 7) {
        case 0: if (len) b[pos] ^= (uint8_t)(1u << ((r >> 40) % 8)); break;
        case 1: if (len) b[pos] = interesting[(r >> 40) % sizeof interesting]; break;
        case 2: if (len) b[pos] = (uint8_t)(r >> 48); break;
        case 3: len = len ? (size_t)((r >> 20) % (len + 1)) : 0; break; /* truncate */
        case 4: { /* extend */
            size_t add = (size_t)((r >> 20) % 64);
            if (len + add > CAP) add = CAP - len;
            for (size_t i = 0; i < add; i++) b[len + i] = (uint8_t)next();
            len += add;
            break;
        }
        case 5: if (len >= 4) { uint32_t v = (uint32_t)(r >> 32); memcpy(b + (pos & ~3u) % (len - 3), &v, 4); } break;
        default: if (len >= 2) b[pos] = b[(size_t)(r >> 40) % len]; break;
        }
    }
    return len;
}

int main(int argc, char **argv)
{
    uint64_t iters = 200000, seed = 1;
    const char *corpus = NULL;
    int pos = 0;
    for (int i = 1; i < argc; i++) {
        int numeric = argv[i][0] && strspn(argv[i], "0123456789") == strlen(argv[i]);
        if (!strcmp(argv[i], "--write-corpus") && i + 1 < argc) corpus = argv[++i];
        else if (numeric && pos == 0) iters = strtoull(argv[i], NULL, 10), pos++;
        else if (numeric && pos == 1) seed = strtoull(argv[i], NULL, 10), pos++;
        else {
            fprintf(stderr, "usage: %s [iterations] [seed] [--write-corpus DIR]\n", argv[0]);
            return 2;
        }
    }
    uint8_t buf[CAP];
    rng = seed;
    if (corpus) {
        for (int i = 0; i < 64; i++) {
            size_t len = fuzz_make_seed(next(), buf, CAP);
            char path[4096];
            snprintf(path, sizeof path, "%s/seed%02d", corpus, i);
            FILE *f = fopen(path, "wb");
            if (!f) { perror(path); return 1; }
            fwrite(buf, 1, len, f);
            fclose(f);
        }
        return 0;
    }
    clock_t t0 = clock();
    for (uint64_t it = 0; it < iters; it++) {
        size_t len = fuzz_make_seed(next(), buf, CAP);
        if (it % 8) len = mutate(buf, len); /* every 8th input is an unmutated seed */
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        LLVMFuzzerTestOneInput(copy, len);
        free(copy);
    }
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("fuzz %s: %llu inputs in %.1f s; accepted %llu, rejected %llu, other %llu\n",
           fuzz_name(), (unsigned long long)fuzz_stats[0], secs, (unsigned long long)fuzz_stats[1],
           (unsigned long long)fuzz_stats[2], (unsigned long long)fuzz_stats[3]);
    /* the run must have exercised both outcomes, else the mutator is broken */
    int passed = 0, failed = 0;
    if (fuzz_stats[0] == iters) passed++; else failed++;
    if (fuzz_stats[1] > 0) passed++; else { failed++; fprintf(stderr, "no input accepted\n"); }
    if (fuzz_stats[2] > 0) passed++; else { failed++; fprintf(stderr, "no input rejected\n"); }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
