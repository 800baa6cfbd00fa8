/* Hash map from byte strings to int64 values (include/common/strmap.h). */
#include "common/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/hash.h"

uint64_t cm_strhash(const char *key, size_t len)
{
    uint64_t h = 0x6a09e667f3bcc909ull ^ (uint64_t)len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, key + i, 8);
        h = cm_mix64(h ^ w);
    }
    uint64_t tail = 0;
    for (size_t k = 0; i + k < len; k++) tail |= (uint64_t)(unsigned char)key[i + k] << (8 * k);
    return cm_mix64(h ^ tail ^ ((uint64_t)(len - i) << 59));
}

void cm_strmap_init(cm_strmap *m, size_t expected)
{
    m->count = 0;
    m->cap = 0;
    m->slots = NULL;
    if (expected) {
        size_t cap = 16;
        while (cap < 2 * expected) cap *= 2;
        m->slots = cm_calloc(cap, sizeof *m->slots);
        m->cap = cap;
    }
}

void cm_strmap_free(cm_strmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

/* The slot holding the key, or the empty slot where it would go. */
static cm_strmap_slot *find(const cm_strmap *m, const char *key, size_t len, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        cm_strmap_slot *s = &m->slots[i];
        if (!s->key || (s->hash == h && s->len == len && !memcmp(s->key, key, len))) return s;
    }
}

static void grow(cm_strmap *m)
{
    size_t old_cap = m->cap;
    cm_strmap_slot *old = m->slots;
    m->cap = old_cap ? 2 * old_cap : 16;
    m->slots = cm_calloc(m->cap, sizeof *m->slots);
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key) *find(m, old[i].key, old[i].len, old[i].hash) = old[i];
    free(old);
}

int cm_strmap_put(cm_strmap *m, const char *key, size_t len, int64_t val, int64_t *old)
{
    if (2 * (m->count + 1) > m->cap) grow(m);
    uint64_t h = cm_strhash(key, len);
    cm_strmap_slot *s = find(m, key, len, h);
    if (s->key) {
        if (old) *old = s->val;
        return 1;
    }
    s->key = key ? key : "";
    s->len = len;
    s->hash = h;
    s->val = val;
    m->count++;
    return 0;
}

int cm_strmap_get(const cm_strmap *m, const char *key, size_t len, int64_t *val)
{
    if (!m->cap) return 0;
    const cm_strmap_slot *s = find(m, key, len, cm_strhash(key, len));
    if (!s->key) return 0;
    *val = s->val;
    return 1;
}
