/* A hash map from byte strings to 64-bit values (open addressing, linear probing, at most half full).
 * The map does not own its keys: each key's bytes must stay in place while the map holds it (the callers' keys
 * live in a parsed document or a vocabulary's own storage).  Used where a linear search would make loading
 * quadratic: the JSON reader's duplicate-key check on large objects, the tokenizer's vocabulary. */
#ifndef COMMON_STRMAP_H
#define COMMON_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *key; /* NULL: empty slot */
    size_t len;
    uint64_t hash;
    int64_t val;
} cm_strmap_slot;

typedef struct {
    cm_strmap_slot *slots;
    size_t cap, count; /* cap: a power of two (0 before the first put) */
} cm_strmap;

/* The 64-bit hash of key[0..len) the map uses (exposed for callers that hash pairs of strings alike). */
uint64_t cm_strhash(const char *key, size_t len);

/* An empty map sized for about `expected` keys (0: grows from a small table). */
void cm_strmap_init(cm_strmap *m, size_t expected);
void cm_strmap_free(cm_strmap *m);
/* Inserts key -> val.  Returns 0 when inserted; 1 when the key was already there (its value is left unchanged
 * and written to *old when old is not NULL). */
int cm_strmap_put(cm_strmap *m, const char *key, size_t len, int64_t val, int64_t *old);
/* 1 and *val when the key is present, else 0. */
int cm_strmap_get(const cm_strmap *m, const char *key, size_t len, int64_t *val);

#endif
