/* dak's tokenizer: a Hugging Face tokenizer.json's BPE, text to ids and back (include/dak/tokenizer.h).
 *
 * Loading: the JSON tree (common/json_read.h) into flat tables: every token's text in one arena, indexed by
 * id; a hash map text -> id (common/strmap.h); a hash map (left id, right id) -> (rank, merged id) for the
 * merges; the normalizer, pre-tokenizer, post-processor and decoder as short lists of operations.
 * Encoding: added tokens split the raw text into segments; each segment is normalized, pre-tokenized
 * (nothing, Metaspace or ByteLevel with GPT-2's pattern) into words, and each word's symbols (characters,
 * or bytes) are merged by the BPE: a binary heap of the adjacent pairs that have a merge, keyed by
 * (rank, position of the left symbol), with stale entries skipped when popped.
 * Decoding: the ids' texts through the decoder's operations, each one a list of strings to a list of
 * strings, then joined. */
#include "dak/tokenizer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/json_read.h"
#include "common/strmap.h"
#include "unicode_classes.h"
#ifdef DAK_HAVE_ICU
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#endif

#define TOK_MAX_IDS (1u << 24) /* ids and merge ranks stay below this */
#define TOK_MAX_OPS 16         /* normalizer / decoder operations */

/* ---------------------------------------------------------------- UTF-8 */

/* The character at s[0..n) (n >= 1): its length 1..4 and *cp, or -k when it is not valid UTF-8: k >= 1 bytes
 * form the longest start of a valid sequence there (what one U+FFFD stands for when repairing). */
static int utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned b = s[0], lo = 0x80, hi = 0xBF;
    int need;
    uint32_t c;
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if (b >= 0xC2 && b <= 0xDF) need = 1, c = b & 0x1F;
    else if (b >= 0xE0 && b <= 0xEF) need = 2, c = b & 0x0F, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    else if (b >= 0xF0 && b <= 0xF4) need = 3, c = b & 0x07, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    else return -1;
    for (int k = 1; k <= need; k++) {
        if ((size_t)k >= n || s[k] < lo || s[k] > hi) return -k;
        c = (c << 6) | (s[k] & 0x3Fu);
        lo = 0x80, hi = 0xBF;
    }
    *cp = c;
    return need + 1;
}

static size_t utf8_put(char *out, uint32_t cp)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) return o[0] = (unsigned char)cp, 1;
    if (cp < 0x800) return o[0] = (unsigned char)(0xC0 | cp >> 6), o[1] = (unsigned char)(0x80 | (cp & 0x3F)), 2;
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12), o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18), o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* -1 with "<what>: invalid UTF-8 at byte N (0xXX): expected ..." unless s[0..n) is valid UTF-8. */
static int utf8_check(const char *s, size_t n, const char *what, cm_err *err)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int l = utf8_char(u + i, n - i, &cp);
        if (l > 0) {
            i += (size_t)l;
            continue;
        }
        /* a valid lead byte: the first byte that does not continue it (the start of a valid sequence is -l bytes) */
        size_t at = i + (size_t)-l;
        int lead_ok = u[i] >= 0xC2 && u[i] <= 0xF4;
        if (lead_ok && at >= n)
            return cm_fail(err, "%s: invalid UTF-8 at byte %zu: the character starting at byte %zu (0x%02x) is cut "
                                "off by the end of the text",
                           what, n, i, u[i]);
        if (!lead_ok)
            return cm_fail(err, "%s: invalid UTF-8 at byte %zu (0x%02x): expected the first byte of a character "
                                "(0x00..0x7f, 0xc2..0xf4)",
                           what, i, u[i]);
        return cm_fail(err, "%s: invalid UTF-8 at byte %zu (0x%02x): expected a continuation byte of the character "
                            "starting at byte %zu (0x%02x)",
                       what, at, u[at], i, u[i]);
    }
    return 0;
}

/* ---------------------------------------------------------------- growable buffers */

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const void *src, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (b->n + n + 1 > cap) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            fprintf(stderr, "out of memory growing a buffer to %zu bytes\n", cap);
            abort();
        }
        b->p = q, b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, src, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* Appends s[0..n), every bad UTF-8 sequence replaced by U+FFFD. */
static void sb_put_repaired(sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int l = utf8_char((const unsigned char *)s + i, n - i, &cp);
        if (l > 0) sb_put(b, s + i, (size_t)l), i += (size_t)l;
        else sb_put(b, "\xEF\xBF\xBD", 3), i += (size_t)-l;
    }
}

typedef struct {
    int32_t *v;
    size_t n, cap;
} ibuf;

static void ib_push(ibuf *b, int32_t x)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        int32_t *q = realloc(b->v, b->cap * sizeof *q);
        if (!q) {
            fprintf(stderr, "out of memory growing an id list to %zu ids\n", b->cap);
            abort();
        }
        b->v = q;
    }
    b->v[b->n++] = x;
}

/* ---------------------------------------------------------------- Unicode classes */

/* Unicode's White_Space property (what \s matches in the GPT-2 pattern), a fixed list. */
static int is_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* c in one of the sorted inclusive ranges r[0..n) */
static int in_ranges(uint32_t c, const uint32_t (*r)[2], size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c > r[mid][1]) lo = mid + 1;
        else if (c < r[mid][0]) hi = mid;
        else return 1;
    }
    return 0;
}
/* \p{L}, \p{N}: Unicode's general categories, from the generated table (unicode_classes.h) */
static int is_letter(uint32_t c)
{
    if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    return in_ranges(c, uc_letters, sizeof uc_letters / sizeof uc_letters[0]);
}
static int is_number(uint32_t c)
{
    if (c < 0x80) return c >= '0' && c <= '9';
    return in_ranges(c, uc_numbers, sizeof uc_numbers / sizeof uc_numbers[0]);
}
#ifdef DAK_HAVE_ICU
int dak_tok_have_normalization(void) { return 1; }
#else
int dak_tok_have_normalization(void) { return 0; }
#endif

/* a word character for added tokens' single_word */
static int is_word_char(uint32_t c) { return c == '_' || is_letter(c) || is_number(c); }

/* GPT-2's printable stand-ins for bytes: 0x21..0x7e, 0xa1..0xac and 0xae..0xff stand for themselves, the other
 * 68 bytes, in increasing order, for U+0100 .. U+0143.  byte_cp[256] and its inverse cp_byte[0x144] (-1: no
 * byte). */
#define STAND_INS 0x144
static void byte_tables(uint32_t byte_cp[256], int16_t cp_byte[STAND_INS])
{
    uint32_t next = 0x100;
    for (int c = 0; c < STAND_INS; c++) cp_byte[c] = -1;
    for (unsigned b = 0; b < 256; b++) {
        int self = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        byte_cp[b] = self ? b : next++;
        cp_byte[byte_cp[b]] = (int16_t)b;
    }
}

/* ---------------------------------------------------------------- the merge table */

/* (left id, right id) -> (rank, merged id), open addressing; a key is never all ones (ids < 2^24). */
typedef struct {
    uint64_t *key, *val;
    size_t cap;
} pairmap;

static size_t pm_slot(const pairmap *m, uint64_t k)
{
    size_t mask = m->cap - 1, i = (size_t)cm_mix64(k) & mask;
    while (m->key[i] != UINT64_MAX && m->key[i] != k) i = (i + 1) & mask;
    return i;
}

static int pm_get(const pairmap *m, int32_t a, int32_t b, uint32_t *rank, int32_t *merged)
{
    if (!m->cap) return 0;
    size_t i = pm_slot(m, (uint64_t)(uint32_t)a << 32 | (uint32_t)b);
    if (m->key[i] == UINT64_MAX) return 0;
    *rank = (uint32_t)(m->val[i] >> 32), *merged = (int32_t)(uint32_t)m->val[i];
    return 1;
}

/* ---------------------------------------------------------------- the tokenizer */

typedef enum { NORM_PREPEND, NORM_REPLACE, NORM_UNICODE } norm_kind;
typedef enum { PRE_NONE, PRE_METASPACE, PRE_BYTE_LEVEL } pre_kind;
typedef enum { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER } prepend_scheme;
typedef enum { DEC_REPLACE, DEC_BYTE_FALLBACK, DEC_FUSE, DEC_STRIP, DEC_BYTE_LEVEL, DEC_METASPACE } dec_kind;

typedef struct {
    int kind;          /* norm_kind or dec_kind */
    char *from, *to;   /* Prepend: from; Replace: from -> to (both own their bytes) */
    size_t nfrom, nto;
    uint32_t ch;       /* Strip: the character; Metaspace: the replacement; NFC etc.: which form (0..3) */
    uint32_t start, stop;
    prepend_scheme scheme;
} tok_op;

typedef struct {
    const char *text; /* in the arena */
    size_t len;
    int32_t id;
    int lstrip, rstrip, single_word;
} added_tok;

struct dak_tok {
    char name[256];
    dak_tok_flavour flavour;
    uint32_t n_ids;
    char *arena;          /* every token's text, NUL-separated */
    const char **text;    /* [n_ids]: the id's text (NULL: no token) */
    uint32_t *text_len;   /* [n_ids] */
    cm_strmap vocab;      /* the model's vocabulary: text -> id */
    cm_strmap added_ids;  /* added tokens: text -> id */
    pairmap merges;
    int32_t unk;          /* -1: none */
    int byte_fallback, fuse_unk, ignore_merges;
    int32_t byte_tok[256]; /* "<0xXX>" ids, -1 where absent */
    tok_op norm[TOK_MAX_OPS];
    int n_norm;
    pre_kind pre;
    uint32_t ms_repl;     /* Metaspace */
    prepend_scheme ms_scheme;
    int ms_split;
    int bl_prefix_space, bl_regex; /* ByteLevel */
    int32_t bl_byte_id[256];       /* ByteLevel: each byte's stand-in's id (-1: not in the vocabulary) */
    uint32_t byte_cp[256];         /* GPT-2's stand-ins and their inverse (byte_tables) */
    int16_t cp_byte[STAND_INS];
    added_tok *added;     /* sorted by first byte, then longest first */
    size_t n_added;
    size_t added_from[257]; /* added[added_from[b] .. added_from[b + 1]) start with byte b */
    int32_t *pre_ids, *post_ids;
    size_t n_pre, n_post;
    int have_decoder;
    tok_op dec[TOK_MAX_OPS];
    int n_dec;
};

static void free_ops(tok_op *ops, int n)
{
    for (int k = 0; k < n; k++) free(ops[k].from), free(ops[k].to);
}

void dak_tok_free(dak_tok *t)
{
    if (!t) return;
    free(t->arena), free(t->text), free(t->text_len);
    cm_strmap_free(&t->vocab), cm_strmap_free(&t->added_ids);
    free(t->merges.key), free(t->merges.val);
    free_ops(t->norm, t->n_norm), free_ops(t->dec, t->n_dec);
    free(t->added), free(t->pre_ids), free(t->post_ids);
    free(t);
}

dak_tok_flavour dak_tok_flavour_of(const dak_tok *t) { return t->flavour; }
const char *dak_tok_flavour_name(const dak_tok *t)
{
    return t->flavour == DAK_TOK_BYTE_LEVEL ? "byte-level-bpe" : "sentencepiece-bpe";
}
uint32_t dak_tok_n_ids(const dak_tok *t) { return t->n_ids; }

const char *dak_tok_token(const dak_tok *t, int32_t id, size_t *len)
{
    if (id < 0 || (uint32_t)id >= t->n_ids || !t->text[id]) return NULL;
    if (len) *len = t->text_len[id];
    return t->text[id];
}

int32_t dak_tok_id(const dak_tok *t, const char *token, size_t len)
{
    int64_t v;
    if (cm_strmap_get(&t->added_ids, token, len, &v) || cm_strmap_get(&t->vocab, token, len, &v)) return (int32_t)v;
    return -1;
}

/* ---------------------------------------------------------------- loading */

typedef struct {
    const jr_doc *doc;
    dak_tok *t;
    cm_err *err;
    ibuf pre, post; /* the post-processors' ids before and after the text */
} loader;

/* "name:line:col: <message>" at the value v (or "name: <message>" when v is NULL) */
static int lfail(loader *L, const jr_val *v, const char *fmt, ...) CM_PRINTF(3, 4);
static int lfail(loader *L, const jr_val *v, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (v) return cm_fail(L->err, "%s:%d:%d: %s", L->doc->name, v->line, v->col, msg);
    return cm_fail(L->err, "%s: %s", L->doc->name, msg);
}

/* A string member `key` of obj (required or not) that is valid UTF-8; *out NULL when absent. */
static int get_text(loader *L, const jr_val *obj, const char *key, int required, const char **out, size_t *len)
{
    *out = NULL, *len = 0;
    if (jr_get_str(L->doc, obj, key, required, NULL, out, L->err)) return -1;
    if (!*out) return 0;
    const jr_val *v = jr_obj_get(obj, key);
    *len = v->len;
    char what[64];
    snprintf(what, sizeof what, "key '%.40s'", key);
    cm_err e2;
    if (utf8_check(v->str, v->len, what, &e2)) return lfail(L, v, "%s", e2.msg);
    return 0;
}

/* A required string member holding exactly one character (Metaspace's replacement, Strip's content). */
static int get_char(loader *L, const jr_val *obj, const char *key, uint32_t *cp)
{
    const char *s;
    size_t n;
    if (get_text(L, obj, key, 1, &s, &n)) return -1;
    int l = n ? utf8_char((const unsigned char *)s, n, cp) : 0;
    if (l <= 0 || (size_t)l != n)
        return lfail(L, jr_obj_get(obj, key), "key '%s': expected exactly one character, got '%s'", key, s);
    return 0;
}

static char *dup_bytes(const char *s, size_t n)
{
    char *p = cm_malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* A Replace operation (normalizer or decoder, `what`): {"pattern": {"String": s}, "content": c} into o (a regular
 * expression is refused). */
static int get_replace(loader *L, const jr_val *op, const char *what, int kind, tok_op *o)
{
    const jr_val *pat = jr_obj_get(op, "pattern");
    const char *s, *c;
    size_t n, nc;
    if (jr_expect(L->doc, pat, JR_OBJECT, "Replace's 'pattern'", L->err)) return -1;
    if (jr_obj_get(pat, "Regex"))
        return lfail(L, pat, "%s Replace with a Regex pattern: not implemented (expected {\"String\": ...})", what);
    if (get_text(L, pat, "String", 1, &s, &n) || get_text(L, op, "content", 1, &c, &nc)) return -1;
    if (!n) return lfail(L, pat, "%s Replace: expected a non-empty pattern string", what);
    o->kind = kind, o->from = dup_bytes(s, n), o->nfrom = n, o->to = dup_bytes(c, nc), o->nto = nc;
    return 0;
}

/* Metaspace's prepend_scheme ("always", "first", "never") or its older add_prefix_space (true: always). */
static int get_scheme(loader *L, const jr_val *op, prepend_scheme *ps)
{
    const char *s;
    if (jr_get_str(L->doc, op, "prepend_scheme", 0, NULL, &s, L->err)) return -1;
    if (s) {
        if (!strcmp(s, "always")) *ps = PREPEND_ALWAYS;
        else if (!strcmp(s, "first")) *ps = PREPEND_FIRST;
        else if (!strcmp(s, "never")) *ps = PREPEND_NEVER;
        else return lfail(L, jr_obj_get(op, "prepend_scheme"), "prepend_scheme '%s': expected always, first or never", s);
        return 0;
    }
    int add;
    if (jr_get_bool(L->doc, op, "add_prefix_space", 0, 1, &add, L->err)) return -1;
    *ps = add ? PREPEND_ALWAYS : PREPEND_NEVER;
    return 0;
}

/* A section's operation object: its "type" into *type; a Sequence's members (the array `members`) each through
 * `each`, then 1.  0: not a Sequence (the caller reads it); -1: an error. */
static int sequence_of(loader *L, const jr_val *op, const char *section, const char *members,
                       int (*each)(loader *, const jr_val *), const char **type)
{
    if (jr_expect(L->doc, op, JR_OBJECT, section, L->err) || jr_get_str(L->doc, op, "type", 1, NULL, type, L->err))
        return -1;
    if (strcmp(*type, "Sequence")) return 0;
    const jr_val *list = jr_obj_get(op, members);
    char what[96];
    snprintf(what, sizeof what, "%s Sequence's '%s'", section, members);
    if (jr_expect(L->doc, list, JR_ARRAY, what, L->err)) return -1;
    for (size_t k = 0; k < list->len; k++)
        if (each(L, &list->items[k])) return -1;
    return 1;
}

static int add_norm(loader *L, const jr_val *op)
{
    dak_tok *t = L->t;
    const char *type, *s;
    size_t n;
    int seq = sequence_of(L, op, "normalizer", "normalizers", add_norm, &type);
    if (seq) return seq < 0 ? -1 : 0;
    if (t->n_norm == TOK_MAX_OPS) return lfail(L, op, "normalizer: expected at most %d operations", TOK_MAX_OPS);
    tok_op *o = &t->norm[t->n_norm];
    if (!strcmp(type, "Prepend")) {
        if (get_text(L, op, "prepend", 1, &s, &n)) return -1;
        o->kind = NORM_PREPEND, o->from = dup_bytes(s, n), o->nfrom = n;
    } else if (!strcmp(type, "Replace")) {
        if (get_replace(L, op, "normalizer", NORM_REPLACE, o)) return -1;
    } else if (!strcmp(type, "NFC") || !strcmp(type, "NFKC") || !strcmp(type, "NFD") || !strcmp(type, "NFKD")) {
        if (!dak_tok_have_normalization())
            return lfail(L, op, "normalizer %s needs Unicode normalization, and this build has no ICU: install "
                                "libicu-dev and configure with -DDAK_TOKENIZER_ICU=ON", type);
        o->kind = NORM_UNICODE, o->ch = !strcmp(type, "NFC") ? 0 : !strcmp(type, "NFKC") ? 1 : !strcmp(type, "NFD") ? 2 : 3;
    } else {
        return lfail(L, op, "normalizer type '%s': not implemented (expected Sequence, Prepend, Replace, NFC, NFKC, "
                            "NFD or NFKD)", type);
    }
    t->n_norm++;
    return 0;
}

static int set_pre(loader *L, const jr_val *op)
{
    dak_tok *t = L->t;
    const char *type;
    int seq = sequence_of(L, op, "pre_tokenizer", "pretokenizers", set_pre, &type);
    if (seq) return seq < 0 ? -1 : 0;
    if (t->pre != PRE_NONE)
        return lfail(L, op, "pre_tokenizer '%s' after another one: expected a single Metaspace or ByteLevel", type);
    if (!strcmp(type, "Metaspace")) {
        t->pre = PRE_METASPACE;
        if (get_char(L, op, "replacement", &t->ms_repl) || get_scheme(L, op, &t->ms_scheme) ||
            jr_get_bool(L->doc, op, "split", 0, 1, &t->ms_split, L->err))
            return -1;
        return 0;
    }
    if (!strcmp(type, "ByteLevel")) {
        t->pre = PRE_BYTE_LEVEL;
        if (jr_get_bool(L->doc, op, "add_prefix_space", 0, 1, &t->bl_prefix_space, L->err) ||
            jr_get_bool(L->doc, op, "use_regex", 0, 1, &t->bl_regex, L->err))
            return -1;
        return 0;
    }
    return lfail(L, op, "pre_tokenizer type '%s': not implemented (expected Metaspace, ByteLevel or a Sequence of one "
                        "of them)", type);
}

static int add_dec(loader *L, const jr_val *op)
{
    dak_tok *t = L->t;
    const char *type;
    int seq = sequence_of(L, op, "decoder", "decoders", add_dec, &type);
    if (seq) return seq < 0 ? -1 : 0;
    if (t->n_dec == TOK_MAX_OPS) return lfail(L, op, "decoder: expected at most %d operations", TOK_MAX_OPS);
    tok_op *o = &t->dec[t->n_dec];
    uint64_t start, stop;
    if (!strcmp(type, "Replace")) {
        if (get_replace(L, op, "decoder", DEC_REPLACE, o)) return -1;
    } else if (!strcmp(type, "ByteFallback")) {
        o->kind = DEC_BYTE_FALLBACK;
    } else if (!strcmp(type, "Fuse")) {
        o->kind = DEC_FUSE;
    } else if (!strcmp(type, "Strip")) {
        if (get_char(L, op, "content", &o->ch) ||
            jr_get_u64(L->doc, op, "start", 1, 0, 1u << 20, 0, &start, L->err) ||
            jr_get_u64(L->doc, op, "stop", 1, 0, 1u << 20, 0, &stop, L->err))
            return -1;
        o->kind = DEC_STRIP, o->start = (uint32_t)start, o->stop = (uint32_t)stop;
    } else if (!strcmp(type, "ByteLevel")) {
        o->kind = DEC_BYTE_LEVEL;
    } else if (!strcmp(type, "Metaspace")) {
        if (get_char(L, op, "replacement", &o->ch) || get_scheme(L, op, &o->scheme)) return -1;
        o->kind = DEC_METASPACE;
    } else {
        return lfail(L, op, "decoder type '%s': not implemented (expected Sequence, Replace, ByteFallback, Fuse, Strip, "
                            "ByteLevel or Metaspace)", type);
    }
    t->n_dec++;
    return 0;
}

/* An id named by the post-processor: in range and a token. */
static int check_id(loader *L, const jr_val *v, uint64_t id, const char *what)
{
    if (id >= L->t->n_ids || !L->t->text[id])
        return lfail(L, v, "%s: id %llu is not a token of the vocabulary (expected 0..%u)", what,
                     (unsigned long long)id, L->t->n_ids - 1);
    return 0;
}

/* The ids a post-processor puts around the text: L->pre (before) and L->post (after), wrapping earlier ones. */
static int add_post(loader *L, const jr_val *op)
{
    const char *type;
    ibuf *pre = &L->pre, *post = &L->post;
    int seq = sequence_of(L, op, "post_processor", "processors", add_post, &type);
    if (seq) return seq < 0 ? -1 : 0;
    if (!strcmp(type, "ByteLevel")) return 0; /* offsets only */
    ibuf mine_pre = {0}, mine_post = {0};
    int rc = -1;
    if (!strcmp(type, "RobertaProcessing") || !strcmp(type, "BertProcessing")) {
        const char *keys[2] = {"cls", "sep"};
        for (int k = 0; k < 2; k++) {
            const jr_val *pair = jr_obj_get(op, keys[k]), *idv = jr_arr_at(pair, 1);
            char what[64];
            snprintf(what, sizeof what, "%s's '%s'", type, keys[k]);
            if (jr_expect(L->doc, pair, JR_ARRAY, what, L->err)) goto out;
            if (!idv || idv->type != JR_NUMBER || !idv->is_integer || idv->num < 0 || idv->num >= TOK_MAX_IDS) {
                lfail(L, pair, "%s: expected [token, id]", what);
                goto out;
            }
            if (check_id(L, idv, (uint64_t)idv->num, what)) goto out;
            ib_push(k ? &mine_post : &mine_pre, (int32_t)idv->num);
        }
    } else if (!strcmp(type, "TemplateProcessing")) {
        const jr_val *single = jr_obj_get(op, "single"), *specials = jr_obj_get(op, "special_tokens");
        if (jr_expect(L->doc, single, JR_ARRAY, "TemplateProcessing's 'single'", L->err)) goto out;
        if (jr_expect(L->doc, specials, JR_OBJECT, "TemplateProcessing's 'special_tokens'", L->err)) goto out;
        int seen_a = 0;
        for (size_t k = 0; k < single->len; k++) {
            const jr_val *item = &single->items[k], *sp = jr_obj_get(item, "SpecialToken"),
                         *sq = jr_obj_get(item, "Sequence");
            const char *name;
            if (item->type != JR_OBJECT || item->len != 1 || (!sp && !sq)) {
                lfail(L, item, "TemplateProcessing's 'single' item: expected {\"SpecialToken\": ...} or "
                               "{\"Sequence\": ...}");
                goto out;
            }
            if (jr_get_str(L->doc, sp ? sp : sq, "id", 1, NULL, &name, L->err)) goto out;
            if (sq) {
                if (strcmp(name, "A") || seen_a) {
                    lfail(L, item, "TemplateProcessing's 'single': expected the sequence A once, got '%s'", name);
                    goto out;
                }
                seen_a = 1;
                continue;
            }
            const jr_val *def = jr_obj_get(specials, name), *ids = jr_obj_get(def, "ids");
            if (!def) {
                lfail(L, item, "TemplateProcessing: special token '%s' is not in 'special_tokens'", name);
                goto out;
            }
            if (jr_expect(L->doc, ids, JR_ARRAY, "special_tokens' 'ids'", L->err)) goto out;
            for (size_t j = 0; j < ids->len; j++) {
                const jr_val *x = &ids->items[j];
                if (x->type != JR_NUMBER || !x->is_integer || x->num < 0 || x->num >= TOK_MAX_IDS) {
                    lfail(L, x, "special token '%s': expected ids that are whole numbers", name);
                    goto out;
                }
                if (check_id(L, x, (uint64_t)x->num, "TemplateProcessing")) goto out;
                ib_push(seen_a ? &mine_post : &mine_pre, (int32_t)x->num);
            }
        }
        if (!seen_a) {
            lfail(L, single, "TemplateProcessing's 'single': expected the sequence A in it");
            goto out;
        }
    } else {
        lfail(L, op, "post_processor type '%s': not implemented (expected TemplateProcessing, RobertaProcessing, "
                     "BertProcessing, ByteLevel or a Sequence of them)", type);
        goto out;
    }
    /* this processor's ids wrap what the earlier ones produced */
    for (size_t k = 0; k < pre->n; k++) ib_push(&mine_pre, pre->v[k]);
    free(pre->v);
    *pre = mine_pre, mine_pre.v = NULL;
    for (size_t k = 0; k < mine_post.n; k++) ib_push(post, mine_post.v[k]);
    rc = 0;
out:
    free(mine_pre.v), free(mine_post.v);
    return rc;
}

/* A JSON number that is a whole id in [0, TOK_MAX_IDS). */
static int get_id(loader *L, const jr_val *v, const char *what, int32_t *id)
{
    if (v && v->type == JR_NUMBER && v->is_integer && v->num >= 0 && v->num < TOK_MAX_IDS) {
        *id = (int32_t)v->num;
        return 0;
    }
    return lfail(L, v, "%s: expected an id in [0, %u]", what, TOK_MAX_IDS - 1);
}

/* An added token as load_vocab takes it: from tokenizer.json's added_tokens (at: its item) or from a
 * vocab.json + merges.txt pair's special tokens (at NULL; optional: left out when the vocabulary lacks it). */
typedef struct {
    dak_tok_added a;
    size_t len;
    const jr_val *at;
    int optional;
} added_spec;

/* tokenizer.json's added_tokens into specs (*out malloc'd, also on failure) */
static int json_added(loader *L, const jr_val *added, added_spec **out, size_t *n)
{
    *n = added ? added->len : 0;
    *out = cm_calloc(*n, sizeof **out);
    for (size_t k = 0; k < *n; k++) {
        const jr_val *a = &added->items[k];
        added_spec *x = &(*out)[k];
        x->at = a;
        if (jr_expect(L->doc, a, JR_OBJECT, "added_tokens item", L->err) ||
            get_id(L, jr_obj_get(a, "id"), "added token's 'id'", &x->a.id) ||
            get_text(L, a, "content", 1, &x->a.text, &x->len))
            return -1;
        if (!x->len) return lfail(L, a, "added token %d: expected a non-empty 'content'", x->a.id);
        if (jr_get_bool(L->doc, a, "lstrip", 0, 0, &x->a.lstrip, L->err) ||
            jr_get_bool(L->doc, a, "rstrip", 0, 0, &x->a.rstrip, L->err) ||
            jr_get_bool(L->doc, a, "single_word", 0, 0, &x->a.single_word, L->err))
            return -1;
    }
    return 0;
}

/* The model's vocabulary (a JSON object, token -> id) and the added tokens: the texts indexed by id and the two
 * maps.  An added token without an id (-1) takes the vocabulary's id of its text. */
static int load_vocab(loader *L, const jr_val *vocab, const added_spec *spec, size_t n_spec)
{
    dak_tok *t = L->t;
    size_t total = 0;
    int32_t max_id = -1, id = -1;
    for (size_t k = 0; k < vocab->len; k++) {
        char what[96];
        snprintf(what, sizeof what, "vocab token '%.60s'", vocab->keys[k]);
        if (get_id(L, &vocab->items[k], what, &id)) return -1;
        if (id > max_id) max_id = id;
        total += strlen(vocab->keys[k]) + 1;
    }
    for (size_t k = 0; k < n_spec; k++) {
        if (spec[k].a.id > max_id) max_id = spec[k].a.id;
        total += spec[k].len + 1;
    }
    if (max_id < 0) return lfail(L, vocab, "vocab: expected at least one token");
    t->n_ids = (uint32_t)max_id + 1;
    t->text = cm_calloc(t->n_ids, sizeof *t->text);
    t->text_len = cm_calloc(t->n_ids, sizeof *t->text_len);
    t->arena = cm_malloc(total + 1);
    cm_strmap_init(&t->vocab, vocab->len);
    char *at = t->arena;
    for (size_t k = 0; k < vocab->len; k++) {
        size_t n = strlen(vocab->keys[k]);
        id = (int32_t)vocab->items[k].num;
        cm_err e2;
        if (utf8_check(vocab->keys[k], n, "a vocab token", &e2)) return lfail(L, &vocab->items[k], "%s", e2.msg);
        if (t->text[id])
            return lfail(L, &vocab->items[k], "vocab: id %d given to both '%s' and '%s': expected each id once", id,
                         t->text[id], vocab->keys[k]);
        memcpy(at, vocab->keys[k], n + 1);
        t->text[id] = at, t->text_len[id] = (uint32_t)n;
        cm_strmap_put(&t->vocab, at, n, id, NULL);
        at += n + 1;
    }
    t->added = cm_calloc(n_spec, sizeof *t->added);
    cm_strmap_init(&t->added_ids, n_spec);
    for (size_t k = 0; k < n_spec; k++) {
        const added_spec *sp = &spec[k];
        const char *text = sp->a.text, *named = sp->a.named_by ? sp->a.named_by : "added token";
        added_tok *x = &t->added[t->n_added];
        int64_t v;
        x->id = sp->a.id;
        if (x->id < 0) {
            if (!cm_strmap_get(&t->vocab, text, sp->len, &v)) {
                if (sp->optional) continue;
                return lfail(L, sp->at, "%s '%s' is not in the vocabulary: expected one of its tokens, or an id of its "
                                        "own (tokenizer_config.json's added_tokens_decoder, added_tokens.json)",
                             named, text);
            }
            x->id = (int32_t)v;
        }
        for (size_t j = 0; j < t->n_added; j++)
            if (t->added[j].id == x->id)
                return lfail(L, sp->at, "%s '%s': id %d is already the added token '%s'", named, text, x->id,
                             t->added[j].text);
        x->lstrip = sp->a.lstrip, x->rstrip = sp->a.rstrip, x->single_word = sp->a.single_word;
        memcpy(at, text, sp->len + 1); /* the map keeps the arena's copy: the document is freed after loading */
        if (cm_strmap_put(&t->added_ids, at, sp->len, x->id, &v))
            return lfail(L, sp->at, "%s '%s' (id %d) repeats the text of id %d: expected each text once", named, text,
                         x->id, (int)v);
        x->text = at, x->len = sp->len;
        t->text[x->id] = at, t->text_len[x->id] = (uint32_t)sp->len; /* an added token's text wins, as in HF */
        at += sp->len + 1;
        t->n_added++;
    }
    /* the matching order: by first byte, then the longest first */
    for (size_t k = 1; k < t->n_added; k++) {
        added_tok x = t->added[k];
        size_t j = k;
        for (; j > 0; j--) {
            const added_tok *y = &t->added[j - 1];
            unsigned bx = (unsigned char)x.text[0], by = (unsigned char)y->text[0];
            if (by < bx || (by == bx && y->len >= x.len)) break;
            t->added[j] = *y;
        }
        t->added[j] = x;
    }
    size_t k = 0;
    for (unsigned b = 0; b <= 256; b++) {
        while (k < t->n_added && (unsigned char)t->added[k].text[0] < b) k++;
        t->added_from[b] = k;
    }
    return 0;
}

/* One merge: "a b" or ["a", "b"] -> its two ids and the merged token's. */
static int merge_ids(loader *L, const jr_val *m, size_t rank, sbuf *tmp, int32_t ids[3])
{
    const char *part[2];
    size_t len[2];
    if (m->type == JR_STRING) {
        const char *sp = memchr(m->str, ' ', m->len);
        if (!sp || memchr(sp + 1, ' ', m->len - (size_t)(sp + 1 - m->str)) || sp == m->str || sp + 1 == m->str + m->len)
            return lfail(L, m, "merge %zu '%s': expected two tokens separated by one space", rank, m->str);
        part[0] = m->str, len[0] = (size_t)(sp - m->str), part[1] = sp + 1, len[1] = m->len - len[0] - 1;
    } else if (m->type == JR_ARRAY && m->len == 2 && m->items[0].type == JR_STRING && m->items[1].type == JR_STRING) {
        for (int k = 0; k < 2; k++) part[k] = m->items[k].str, len[k] = m->items[k].len;
    } else {
        return lfail(L, m, "merge %zu: expected \"a b\" or [\"a\", \"b\"], got %s", rank, jr_type_name(m->type));
    }
    tmp->n = 0;
    for (int k = 0; k < 2; k++) {
        int64_t v;
        if (!cm_strmap_get(&L->t->vocab, part[k], len[k], &v))
            return lfail(L, m, "merge %zu ('%.*s', '%.*s'): '%.*s' is not in the vocabulary", rank, (int)len[0],
                         part[0], (int)len[1], part[1], (int)len[k], part[k]);
        ids[k] = (int32_t)v;
        sb_put(tmp, part[k], len[k]);
    }
    int64_t v;
    if (!cm_strmap_get(&L->t->vocab, tmp->p, tmp->n, &v))
        return lfail(L, m, "merge %zu ('%.*s', '%.*s'): the merged token '%s' is not in the vocabulary", rank,
                     (int)len[0], part[0], (int)len[1], part[1], tmp->p);
    ids[2] = (int32_t)v;
    return 0;
}

static int load_merges(loader *L, const jr_val *merges)
{
    pairmap *pm = &L->t->merges;
    if (merges->len >= TOK_MAX_IDS) return lfail(L, merges, "merges: expected fewer than %u", TOK_MAX_IDS);
    pm->cap = 16;
    while (pm->cap < 2 * merges->len) pm->cap *= 2;
    pm->key = cm_malloc(pm->cap * sizeof *pm->key);
    pm->val = cm_malloc(pm->cap * sizeof *pm->val);
    memset(pm->key, 0xFF, pm->cap * sizeof *pm->key);
    sbuf tmp = {0};
    int rc = 0;
    for (size_t r = 0; r < merges->len && !rc; r++) {
        int32_t ids[3];
        if ((rc = merge_ids(L, &merges->items[r], r, &tmp, ids))) break;
        size_t i = pm_slot(pm, (uint64_t)(uint32_t)ids[0] << 32 | (uint32_t)ids[1]);
        if (pm->key[i] != UINT64_MAX) {
            rc = lfail(L, &merges->items[r], "merge %zu ('%s', '%s') repeats merge %u: expected each pair once", r,
                       L->t->text[ids[0]], L->t->text[ids[1]], (unsigned)(pm->val[i] >> 32));
            break;
        }
        pm->key[i] = (uint64_t)(uint32_t)ids[0] << 32 | (uint32_t)ids[1];
        pm->val[i] = (uint64_t)r << 32 | (uint32_t)ids[2];
    }
    free(tmp.p);
    return rc;
}

static int load_model(loader *L, const jr_val *model, const jr_val *added)
{
    dak_tok *t = L->t;
    const char *type, *unk, *s;
    if (jr_expect(L->doc, model, JR_OBJECT, "'model'", L->err) ||
        jr_get_str(L->doc, model, "type", 0, NULL, &type, L->err))
        return -1;
    if (type ? strcmp(type, "BPE") != 0 : !jr_obj_get(model, "merges"))
        return lfail(L, model, "model type '%s': expected BPE (the only model this tokenizer implements)",
                     type ? type : "(none, and no merges)");
    const jr_val *vocab = jr_obj_get(model, "vocab"), *merges = jr_obj_get(model, "merges");
    if (jr_expect(L->doc, vocab, JR_OBJECT, "model 'vocab'", L->err) ||
        jr_expect(L->doc, merges, JR_ARRAY, "model 'merges'", L->err))
        return -1;
    if (added && jr_expect(L->doc, added, JR_ARRAY, "'added_tokens'", L->err)) return -1;
    double dropout;
    if (jr_get_f64(L->doc, model, "dropout", 0, 0, 1, 0, &dropout, L->err)) return -1;
    if (dropout > 0)
        return lfail(L, jr_obj_get(model, "dropout"), "BPE dropout %g: expected null (dropout is for training)", dropout);
    const char *affix[2] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int k = 0; k < 2; k++) {
        if (jr_get_str(L->doc, model, affix[k], 0, NULL, &s, L->err)) return -1;
        if (s && *s)
            return lfail(L, jr_obj_get(model, affix[k]), "BPE %s '%s': not implemented (expected null or \"\")",
                         affix[k], s);
    }
    added_spec *spec = NULL;
    size_t n_spec = 0;
    int bad = jr_get_bool(L->doc, model, "byte_fallback", 0, 0, &t->byte_fallback, L->err) ||
              jr_get_bool(L->doc, model, "fuse_unk", 0, 0, &t->fuse_unk, L->err) ||
              jr_get_bool(L->doc, model, "ignore_merges", 0, 0, &t->ignore_merges, L->err) ||
              jr_get_str(L->doc, model, "unk_token", 0, NULL, &unk, L->err) || json_added(L, added, &spec, &n_spec) ||
              load_vocab(L, vocab, spec, n_spec) || load_merges(L, merges);
    free(spec);
    if (bad) return -1;
    t->unk = -1;
    if (unk) {
        int64_t v;
        if (!cm_strmap_get(&t->vocab, unk, strlen(unk), &v))
            return lfail(L, jr_obj_get(model, "unk_token"), "unk_token '%s' is not in the vocabulary", unk);
        t->unk = (int32_t)v;
    }
    return 0;
}

/* What every tokenizer derives from its tables: the flavour, the <0xXX> tokens' ids, GPT-2's byte stand-ins and
 * their ids. */
static void finish(dak_tok *t)
{
    t->flavour = t->pre == PRE_BYTE_LEVEL ? DAK_TOK_BYTE_LEVEL : DAK_TOK_SENTENCEPIECE;
    byte_tables(t->byte_cp, t->cp_byte);
    for (unsigned b = 0; b < 256; b++) {
        char name[8], u[4];
        int64_t v;
        snprintf(name, sizeof name, "<0x%02X>", b);
        t->byte_tok[b] = cm_strmap_get(&t->vocab, name, 6, &v) ? (int32_t)v : -1;
        size_t n = utf8_put(u, t->byte_cp[b]);
        t->bl_byte_id[b] = cm_strmap_get(&t->vocab, u, n, &v) ? (int32_t)v : -1;
    }
}

static int load(loader *L)
{
    dak_tok *t = L->t;
    const jr_val *root = L->doc->root;
    if (jr_expect(L->doc, root, JR_OBJECT, "the document", L->err)) return -1;
    if (load_model(L, jr_obj_get(root, "model"), jr_obj_get(root, "added_tokens"))) return -1;
    const jr_val *norm = jr_obj_get(root, "normalizer"), *pre = jr_obj_get(root, "pre_tokenizer"),
                 *post = jr_obj_get(root, "post_processor"), *dec = jr_obj_get(root, "decoder");
    if (norm && norm->type != JR_NULL && add_norm(L, norm)) return -1;
    if (pre && pre->type != JR_NULL && set_pre(L, pre)) return -1;
    if (post && post->type != JR_NULL) {
        int rc = add_post(L, post);
        t->pre_ids = L->pre.v, t->n_pre = L->pre.n, t->post_ids = L->post.v, t->n_post = L->post.n;
        if (rc) return -1;
    }
    t->have_decoder = dec && dec->type != JR_NULL;
    if (t->have_decoder && add_dec(L, dec)) return -1;
    finish(t);
    return 0;
}

/* The tokenizer of a parsed document (freed here). */
static int from_doc(dak_tok **out, jr_doc *doc, cm_err *err)
{
    dak_tok *t = cm_calloc(1, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", doc->name);
    loader L = {doc, t, err, {0}, {0}};
    int rc = load(&L);
    jr_free(doc);
    if (rc) {
        dak_tok_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int dak_tok_load_text(dak_tok **out, const char *json, size_t n, const char *name, cm_err *err)
{
    jr_doc doc;
    *out = NULL;
    return jr_parse(&doc, json, n, name, err) ? -1 : from_doc(out, &doc, err);
}

int dak_tok_load(dak_tok **out, const char *path, cm_err *err)
{
    jr_doc doc;
    *out = NULL;
    return jr_parse_file(&doc, path, err) ? -1 : from_doc(out, &doc, err);
}

/* ---------------------------------------------------------------- GPT-2's vocab.json + merges.txt */

/* merges.txt as the merges load_merges reads from a tokenizer.json: each merge line an "a b" string at its line
 * (column 1) of a document named after the file; lines starting with "#version" are skipped (Hugging Face's
 * reader does the same), a final newline ends the last line.  *text (the lines, NUL-terminated in place) and
 * arr->items are malloc'd, also on failure. */
static int merges_txt(const char *path, jr_doc *doc, jr_val *arr, char **text, cm_err *err)
{
    size_t n, lines = 1;
    if (cm_read_file(path, (size_t)64 << 20, "merges", text, &n, err)) return -1;
    snprintf(doc->name, sizeof doc->name, "%s", path);
    char *s = *text;
    for (size_t i = 0; i < n; i++) lines += s[i] == '\n';
    arr->type = JR_ARRAY, arr->line = 1, arr->col = 1;
    arr->items = cm_calloc(lines, sizeof *arr->items);
    int line = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) : n, len = end - i;
        line++;
        if (len && s[end - 1] == '\r') len--; /* CRLF */
        s[i + len] = '\0';
        if (strncmp(s + i, "#version", 8)) {
            cm_err e2;
            if (utf8_check(s + i, len, "merge line", &e2)) return cm_fail(err, "%s:%d: %s", path, line, e2.msg);
            jr_val *v = &arr->items[arr->len++];
            v->type = JR_STRING, v->line = line, v->col = 1, v->str = s + i, v->len = len;
        }
        i = end + 1;
    }
    return 0;
}

/* The byte-level tokenizer of vocab.json + merges.txt (dak_tok_load_bpe_files), with the added tokens spec and bos
 * (named_by bos_named) first when add_special. */
static int load_pair(dak_tok **out, const char *vocab_path, const char *merges_path, const added_spec *spec,
                     size_t n_spec, const char *bos, const char *bos_named, int prefix_space, cm_err *err)
{
    jr_doc vdoc, mdoc;
    jr_val merges;
    char *mtext = NULL;
    memset(&mdoc, 0, sizeof mdoc), memset(&merges, 0, sizeof merges);
    *out = NULL;
    if (jr_parse_file(&vdoc, vocab_path, err)) return -1;
    dak_tok *t = cm_calloc(1, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", vocab_path);
    loader L = {&vdoc, t, err, {0}, {0}};
    const jr_val *root = vdoc.root;
    int bad = jr_expect(&vdoc, root, JR_OBJECT, "vocab.json", err);
    const jr_val *model = bad ? NULL : jr_obj_get(root, "model"); /* (GPT-2's vocabulary has a token "model") */
    if (model && model->type == JR_OBJECT)
        bad = lfail(&L, root, "a tokenizer.json (its 'model' is an object), not a vocab.json: expected an object of "
                              "token -> id");
    if (!bad) bad = load_vocab(&L, root, spec, n_spec) || merges_txt(merges_path, &mdoc, &merges, &mtext, err);
    L.doc = &mdoc;
    if (!bad) bad = load_merges(&L, &merges);
    int32_t bos_id = bad || !bos ? -1 : dak_tok_id(t, bos, strlen(bos));
    if (!bad && bos && bos_id < 0)
        bad = cm_fail(err, "%s: the bos token '%s' (%s) is not in the vocabulary: expected one of its tokens",
                      vocab_path, bos, bos_named);
    if (!bad) {
        if (bos) t->pre_ids = cm_malloc(sizeof *t->pre_ids), t->pre_ids[0] = bos_id, t->n_pre = 1;
        t->unk = -1, t->pre = PRE_BYTE_LEVEL, t->bl_prefix_space = prefix_space, t->bl_regex = 1;
        t->have_decoder = 1, t->dec[0].kind = DEC_BYTE_LEVEL, t->n_dec = 1;
        finish(t);
    }
    jr_free(&vdoc);
    free(merges.items), free(mtext);
    if (bad) {
        dak_tok_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int dak_tok_load_bpe_files(dak_tok **out, const char *vocab_path, const char *merges_path, const dak_tok_bpe_opts *o,
                           cm_err *err)
{
    static const dak_tok_bpe_opts none = {NULL, 0, NULL, 0};
    if (!o) o = &none;
    *out = NULL;
    added_spec *spec = cm_calloc(o->n_added, sizeof *spec);
    int rc = 0;
    for (size_t k = 0; k < o->n_added && !rc; k++) {
        const dak_tok_added *a = &o->added[k];
        const char *named = a->named_by ? a->named_by : "added token";
        cm_err e2;
        spec[k].a = *a, spec[k].len = strlen(a->text);
        if (!spec[k].len) rc = cm_fail(err, "%s: %s %zu: expected a non-empty text", vocab_path, named, k);
        else if (utf8_check(a->text, spec[k].len, "the text", &e2))
            rc = cm_fail(err, "%s: %s %zu: %s", vocab_path, named, k, e2.msg);
    }
    if (!rc)
        rc = load_pair(out, vocab_path, merges_path, spec, o->n_added, o->bos, "the bos", o->add_prefix_space, err);
    free(spec);
    return rc;
}

/* The special tokens a model folder names, for load_pair: each text once (the first naming wins). */
typedef struct {
    added_spec *v;
    char (*named)[128]; /* v[k].a.named_by */
    size_t n;
} special_list;

/* Adds text (len bytes; id -1 or its own) to l unless it is there already. */
static void special_add(special_list *l, const dak_tok_added *a, size_t len, int optional, const char *file,
                        const char *key)
{
    for (size_t k = 0; k < l->n; k++)
        if (l->v[k].len == len && !memcmp(l->v[k].a.text, a->text, len)) return;
    added_spec *x = &l->v[l->n];
    snprintf(l->named[l->n], sizeof l->named[0], "%s's '%s'", file, key);
    x->a = *a, x->a.named_by = l->named[l->n], x->len = len, x->optional = optional;
    l->n++;
}

/* The file name at the end of a path */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A special token's value in special_tokens_map.json, tokenizer_config.json or its added_tokens_decoder (key:
 * what names it; id: -1 or the decoder's): "text", {"content": "text", "lstrip": .., "rstrip": .., "single_word":
 * ..} or null (none).  Added to l unless null; *text its text (NULL for null). */
static int special_value(const jr_doc *doc, const jr_val *v, const char *key, int32_t id, special_list *l,
                         const char **text, cm_err *err)
{
    dak_tok_added a;
    memset(&a, 0, sizeof a);
    a.id = id, *text = NULL;
    if (!v || v->type == JR_NULL) return 0;
    if (v->type == JR_STRING) a.text = v->str;
    else if (v->type != JR_OBJECT)
        return cm_fail(err, "%s:%d:%d: '%s': expected a token (a string, or an object with 'content'), got %s",
                       doc->name, v->line, v->col, key, jr_type_name(v->type));
    else if (jr_get_str(doc, v, "content", 1, NULL, &a.text, err) ||
             jr_get_bool(doc, v, "lstrip", 0, 0, &a.lstrip, err) ||
             jr_get_bool(doc, v, "rstrip", 0, 0, &a.rstrip, err) ||
             jr_get_bool(doc, v, "single_word", 0, 0, &a.single_word, err))
        return -1;
    size_t len = strlen(a.text);
    cm_err e2;
    if (!len) return cm_fail(err, "%s:%d:%d: '%s': expected a non-empty token", doc->name, v->line, v->col, key);
    if (utf8_check(a.text, len, "the token", &e2))
        return cm_fail(err, "%s:%d:%d: '%s': %s", doc->name, v->line, v->col, key, e2.msg);
    special_add(l, &a, len, 0, base_name(doc->name), key);
    *text = a.text;
    return 0;
}

/* dir/name parsed into doc, or doc->root NULL when there is no such file */
static int optional_json(const char *dir, const char *name, jr_doc *doc, cm_err *err)
{
    char path[4096];
    memset(doc, 0, sizeof *doc);
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return cm_fail(err, "%s/%s: path too long (at most %zu bytes)", dir, name, sizeof path - 1);
    if (!cm_is_file(path)) return 0;
    return jr_parse_file(doc, path, err);
}

int dak_tok_load_bpe_folder(dak_tok **out, const char *vocab_path, cm_err *err)
{
    static const char *const keys[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                       "pad_token", "cls_token", "mask_token"};
    static const char *const opt_dflt[] = {"</s>", "</s>", "<unk>", NULL, "<pad>", NULL, NULL};
    static const char *const gpt2_dflt[] = {"<|endoftext|>", "<|endoftext|>", "<|endoftext|>", NULL, NULL, NULL, NULL};
    char dir[4096], merges[4200];
    size_t dl = (size_t)(base_name(vocab_path) - vocab_path);
    *out = NULL;
    if (dl) snprintf(dir, sizeof dir, "%.*s", dl > 1 ? (int)dl - 1 : 1, vocab_path); /* "/" stays */
    else snprintf(dir, sizeof dir, ".");
    snprintf(merges, sizeof merges, "%s/merges.txt", dir);
    if (!cm_is_file(merges))
        return cm_fail(err, "%s: no merges.txt beside it ('%s'): expected GPT-2's pair vocab.json + merges.txt, or a "
                            "tokenizer.json", vocab_path, merges);
    jr_doc stm, tc, at, cfg;
    special_list l = {NULL, NULL, 0};
    const char *model_type = "", *cls = NULL, *bos = NULL, *bos_named = "";
    int add_bos = -1, prefix = 0, rc = -1;
    memset(&stm, 0, sizeof stm), memset(&tc, 0, sizeof tc), memset(&at, 0, sizeof at), memset(&cfg, 0, sizeof cfg);
    if (optional_json(dir, "special_tokens_map.json", &stm, err) ||
        optional_json(dir, "tokenizer_config.json", &tc, err) || optional_json(dir, "added_tokens.json", &at, err) ||
        optional_json(dir, "config.json", &cfg, err))
        goto out;
    const jr_val *dec = jr_obj_get(tc.root, "added_tokens_decoder"), *extra[2] = {NULL, NULL};
    const jr_doc *extra_doc[2] = {&stm, &tc};
    for (int k = 0; k < 2; k++) extra[k] = jr_obj_get(extra_doc[k]->root, "additional_special_tokens");
    const jr_val *ex = extra[0] ? extra[0] : extra[1];
    const jr_doc *exd = extra[0] ? &stm : &tc;
    if ((stm.root && jr_expect(&stm, stm.root, JR_OBJECT, "special_tokens_map.json", err)) ||
        (tc.root && (jr_expect(&tc, tc.root, JR_OBJECT, "tokenizer_config.json", err) ||
                     jr_get_str(&tc, tc.root, "tokenizer_class", 0, NULL, &cls, err) ||
                     jr_get_bool(&tc, tc.root, "add_prefix_space", 0, 0, &prefix, err) ||
                     jr_get_bool(&tc, tc.root, "add_bos_token", 0, -1, &add_bos, err) ||
                     (dec && jr_expect(&tc, dec, JR_OBJECT, "added_tokens_decoder", err)))) ||
        (at.root && jr_expect(&at, at.root, JR_OBJECT, "added_tokens.json", err)) ||
        (ex && ex->type != JR_NULL && jr_expect(exd, ex, JR_ARRAY, "additional_special_tokens", err)) ||
        (cfg.root && jr_get_str(&cfg, cfg.root, "model_type", 0, "", &model_type, err)))
        goto out;
    if (cls && strcmp(cls, "GPT2Tokenizer") && strcmp(cls, "GPT2TokenizerFast")) {
        cm_fail(err, "%s/tokenizer_config.json: tokenizer_class '%s': expected GPT2Tokenizer (the only one read from "
                     "vocab.json + merges.txt; OPT's and GPT-2's)", dir, cls);
        goto out;
    }
    int opt = !strcmp(model_type, "opt");
    if (add_bos < 0) add_bos = opt;
    size_t cap = 8 + (dec ? dec->len : 0) + (at.root ? at.root->len : 0) + (ex && ex->type == JR_ARRAY ? ex->len : 0);
    l.v = cm_calloc(cap, sizeof *l.v), l.named = cm_calloc(cap, sizeof *l.named);
    /* the tokens with ids of their own first, then the named ones (which may be among them) */
    for (size_t k = 0; dec && k < dec->len; k++) {
        const char *key = dec->keys[k], *text;
        char *end;
        unsigned long id = strtoul(key, &end, 10);
        if (*key < '0' || *key > '9' || *end || id >= TOK_MAX_IDS) {
            cm_fail(err, "%s:%d:%d: added_tokens_decoder: key '%s': expected an id in [0, %u]", tc.name,
                    dec->items[k].line, dec->items[k].col, key, TOK_MAX_IDS - 1);
            goto out;
        }
        if (special_value(&tc, &dec->items[k], "added_tokens_decoder", (int32_t)id, &l, &text, err)) goto out;
    }
    for (size_t k = 0; at.root && k < at.root->len; k++) {
        const jr_val *v = &at.root->items[k];
        dak_tok_added a;
        memset(&a, 0, sizeof a);
        a.text = at.root->keys[k];
        if (!v->is_integer || v->type != JR_NUMBER || v->num < 0 || v->num >= TOK_MAX_IDS || !*a.text) {
            cm_fail(err, "%s:%d:%d: token '%.60s': expected a non-empty token and an id in [0, %u]", at.name, v->line,
                    v->col, a.text, TOK_MAX_IDS - 1);
            goto out;
        }
        a.id = (int32_t)v->num;
        special_add(&l, &a, strlen(a.text), 0, "added_tokens.json", a.text);
    }
    for (int k = 0; k < 7; k++) {
        const jr_doc *d = jr_obj_get(stm.root, keys[k]) ? &stm : jr_obj_get(tc.root, keys[k]) ? &tc : NULL;
        const char *text = opt ? opt_dflt[k] : gpt2_dflt[k];
        if (d) {
            if (special_value(d, jr_obj_get(d->root, keys[k]), keys[k], -1, &l, &text, err)) goto out;
        } else if (text) { /* transformers' default: only where the vocabulary has it */
            dak_tok_added a = {text, -1, 0, 0, 0, NULL};
            special_add(&l, &a, strlen(text), 1, opt ? "model_type opt" : "GPT-2", keys[k]);
        }
        if (k == 0) bos = text, bos_named = d ? (d == &stm ? "special_tokens_map.json" : "tokenizer_config.json")
                                              : opt ? "the default of model_type opt" : "GPT-2's default";
    }
    for (size_t k = 0; ex && ex->type == JR_ARRAY && k < ex->len; k++) {
        const char *text;
        if (special_value(exd, &ex->items[k], "additional_special_tokens", -1, &l, &text, err)) goto out;
    }
    if (add_bos && !bos) {
        cm_fail(err, "%s: add_bos_token is true (%s), and no bos_token is named: expected a bos_token in "
                     "special_tokens_map.json or tokenizer_config.json", dir,
                tc.root && jr_obj_get(tc.root, "add_bos_token") ? "tokenizer_config.json" : "model_type opt");
        goto out;
    }
    rc = load_pair(out, vocab_path, merges, l.v, l.n, add_bos ? bos : NULL, bos_named, prefix, err);
out:
    jr_free(&stm), jr_free(&tc), jr_free(&at), jr_free(&cfg);
    free(l.v), free(l.named);
    return rc;
}

/* ---------------------------------------------------------------- the BPE */

/* One word's symbols as a doubly linked list over their first positions, and the heap of candidate merges. */
typedef struct {
    int32_t *id, *prev, *next;
    size_t cap;
    struct cand {
        uint64_t key; /* rank << 32 | left position */
        uint32_t right;
    } *heap;
    size_t nheap, capheap;
    sbuf word; /* ignore_merges: the word's text */
} bpe_ws;

static void ws_reserve(bpe_ws *w, size_t n)
{
    if (n <= w->cap) return;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < n) cap *= 2;
    free(w->id), free(w->prev), free(w->next);
    w->id = cm_malloc(cap * sizeof *w->id);
    w->prev = cm_malloc(cap * sizeof *w->prev);
    w->next = cm_malloc(cap * sizeof *w->next);
    w->cap = cap;
}

static void ws_free(bpe_ws *w)
{
    free(w->id), free(w->prev), free(w->next), free(w->heap), free(w->word.p);
}

static void heap_push(bpe_ws *w, uint64_t key, uint32_t right)
{
    if (w->nheap == w->capheap) {
        w->capheap = w->capheap ? 2 * w->capheap : 256;
        struct cand *h = realloc(w->heap, w->capheap * sizeof *h);
        if (!h) {
            fprintf(stderr, "out of memory growing the BPE heap to %zu entries\n", w->capheap);
            abort();
        }
        w->heap = h;
    }
    size_t i = w->nheap++;
    while (i > 0 && w->heap[(i - 1) / 2].key > key) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i].key = key, w->heap[i].right = right;
}

static struct cand heap_pop(bpe_ws *w)
{
    struct cand top = w->heap[0], last = w->heap[--w->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= w->nheap) break;
        if (c + 1 < w->nheap && w->heap[c + 1].key < w->heap[c].key) c++;
        if (w->heap[c].key >= last.key) break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (w->nheap) w->heap[i] = last;
    return top;
}

/* the pair (l, its next) as a candidate, when it has a merge */
static void cand_push(const dak_tok *t, bpe_ws *w, int32_t l)
{
    int32_t r = w->next[l], merged;
    uint32_t rank;
    if (r >= 0 && pm_get(&t->merges, w->id[l], w->id[r], &rank, &merged))
        heap_push(w, (uint64_t)rank << 32 | (uint32_t)l, (uint32_t)r);
}

/* Merges the m symbols w->id[0..m) and appends the result to out. */
static void bpe_merge(const dak_tok *t, bpe_ws *w, size_t m, ibuf *out)
{
    for (size_t i = 0; i < m; i++) w->prev[i] = (int32_t)i - 1, w->next[i] = i + 1 < m ? (int32_t)i + 1 : -1;
    w->nheap = 0;
    for (size_t i = 0; i + 1 < m; i++) cand_push(t, w, (int32_t)i);
    while (w->nheap) {
        struct cand c = heap_pop(w);
        int32_t l = (int32_t)(uint32_t)c.key, r = (int32_t)c.right, merged;
        uint32_t rank;
        /* stale: l was absorbed by its left neighbour (prev set to -2), or has another right neighbour now, or
           the pair's ids changed since it was pushed */
        if (w->prev[l] == -2 || w->next[l] != r || !pm_get(&t->merges, w->id[l], w->id[r], &rank, &merged) ||
            rank != (uint32_t)(c.key >> 32))
            continue;
        w->id[l] = merged;
        w->next[l] = w->next[r];
        if (w->next[r] >= 0) w->prev[w->next[r]] = l;
        w->prev[r] = -2;
        if (w->prev[l] >= 0) cand_push(t, w, w->prev[l]);
        cand_push(t, w, l);
    }
    for (int32_t i = m ? 0 : -1; i >= 0; i = w->next[i]) ib_push(out, w->id[i]);
}

/* A character (or byte) missing from the vocabulary: unk (fused with a previous unk under fuse_unk), or an
 * error.  *m: the symbols so far. */
static int push_unknown(const dak_tok *t, bpe_ws *w, size_t *m, int *last_unk, const char *what, cm_err *err)
{
    if (t->unk < 0)
        return cm_fail(err, "text: %s is not in the vocabulary of %s, which has neither byte_fallback nor an "
                            "unk_token to stand for it",
                       what, t->name);
    if (!(t->fuse_unk && *last_unk)) w->id[(*m)++] = t->unk;
    *last_unk = 1;
    return 0;
}

/* The BPE of one word s[0..n) of characters (SentencePiece flavour). */
static int bpe_chars(const dak_tok *t, bpe_ws *w, const char *s, size_t n, ibuf *out, cm_err *err)
{
    int64_t v;
    if (t->ignore_merges && cm_strmap_get(&t->vocab, s, n, &v)) {
        ib_push(out, (int32_t)v);
        return 0;
    }
    ws_reserve(w, n + 1); /* at most a symbol a byte */
    size_t m = 0;
    int last_unk = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = (size_t)utf8_char((const unsigned char *)s + i, n - i, &cp); /* valid: checked on entry */
        if (cm_strmap_get(&t->vocab, s + i, l, &v)) {
            w->id[m++] = (int32_t)v, last_unk = 0;
        } else {
            int bytes = t->byte_fallback;
            for (size_t k = 0; k < l && bytes; k++) bytes = t->byte_tok[(unsigned char)s[i + k]] >= 0;
            if (bytes) {
                for (size_t k = 0; k < l; k++) w->id[m++] = t->byte_tok[(unsigned char)s[i + k]];
                last_unk = 0;
            } else {
                char what[64];
                snprintf(what, sizeof what, "the character U+%04X '%.*s'", (unsigned)cp, (int)l, s + i);
                if (push_unknown(t, w, &m, &last_unk, what, err)) return -1;
            }
        }
        i += l;
    }
    bpe_merge(t, w, m, out);
    return 0;
}

/* The BPE of one word s[0..n) of bytes (byte-level flavour: each byte is its stand-in character). */
static int bpe_bytes(const dak_tok *t, bpe_ws *w, const char *s, size_t n, ibuf *out, cm_err *err)
{
    if (t->ignore_merges) {
        char u[4];
        int64_t v;
        w->word.n = 0;
        for (size_t i = 0; i < n; i++) sb_put(&w->word, u, utf8_put(u, t->byte_cp[(unsigned char)s[i]]));
        if (cm_strmap_get(&t->vocab, w->word.p, w->word.n, &v)) {
            ib_push(out, (int32_t)v);
            return 0;
        }
    }
    ws_reserve(w, n + 1);
    size_t m = 0;
    int last_unk = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t id = t->bl_byte_id[(unsigned char)s[i]];
        if (id >= 0) {
            w->id[m++] = id, last_unk = 0;
        } else {
            char what[64];
            snprintf(what, sizeof what, "the byte 0x%02x (its stand-in U+%04X)", (unsigned char)s[i],
                     (unsigned)t->byte_cp[(unsigned char)s[i]]);
            if (push_unknown(t, w, &m, &last_unk, what, err)) return -1;
        }
    }
    bpe_merge(t, w, m, out);
    return 0;
}

/* ---------------------------------------------------------------- pre-tokenizers */

typedef enum { CL_SPACE, CL_LETTER, CL_NUMBER, CL_OTHER } char_class;

static char_class class_at(const char *s, size_t n, size_t i, size_t *len)
{
    uint32_t c;
    *len = (size_t)utf8_char((const unsigned char *)s + i, n - i, &c);
    return is_space(c) ? CL_SPACE : is_letter(c) ? CL_LETTER : is_number(c) ? CL_NUMBER : CL_OTHER;
}

/* The end of the piece of GPT-2's pattern that starts at s[i] (i < n):
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * The alternatives are tried in that order, each as long as it goes. */
static size_t gpt2_piece(const char *s, size_t n, size_t i)
{
    static const char *const tails[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    if (s[i] == '\'')
        for (int k = 0; k < 7; k++) {
            size_t l = strlen(tails[k]);
            if (n - i - 1 >= l && !memcmp(s + i + 1, tails[k], l)) return i + 1 + l;
        }
    size_t l, j = (s[i] == ' ' && i + 1 < n) ? i + 1 : i; /* ' ?': the space belongs to a run of one class */
    char_class c = class_at(s, n, j, &l);
    if (c != CL_SPACE) {
        for (j += l; j < n && class_at(s, n, j, &l) == c;) j += l;
        return j;
    }
    /* whitespace at i: the run, less its last character when a non-space follows it (\s+(?!\S)), unless that
       leaves nothing (then \s+ takes the one character) */
    size_t last = i;
    for (j = i; j < n && class_at(s, n, j, &l) == CL_SPACE;) last = j, j += l;
    return (j < n && last > i) ? last : j;
}

/* ---------------------------------------------------------------- encoding */

typedef struct {
    const dak_tok *t;
    bpe_ws w;
    sbuf a, b; /* normalization buffers */
    ibuf *out;
    cm_err *err;
} encoder;

/* Replaces every `from` in s[0..n) by `to`, into dst. */
static void replace_all(sbuf *dst, const char *s, size_t n, const char *from, size_t nf, const char *to, size_t nt)
{
    dst->n = 0;
    sb_put(dst, "", 0);
    for (size_t i = 0; i < n;) {
        if (n - i >= nf && !memcmp(s + i, from, nf)) sb_put(dst, to, nt), i += nf;
        else {
            size_t j = i + 1;
            while (j < n && s[j] != from[0]) j++;
            sb_put(dst, s + i, j - i), i = j;
        }
    }
}

/* Unicode normalization form `form` (0 NFC, 1 NFKC, 2 NFD, 3 NFKD) of s[0..n) into dst, through UTF-16. */
static int unicode_normalize(uint32_t form, const char *s, size_t n, sbuf *dst, cm_err *err)
{
#ifdef DAK_HAVE_ICU
    static const char *const names[4] = {"NFC", "NFKC", "NFD", "NFKD"};
    UErrorCode st = U_ZERO_ERROR;
    const UNormalizer2 *nz = form == 0 ? unorm2_getNFCInstance(&st) : form == 1 ? unorm2_getNFKCInstance(&st)
                             : form == 2 ? unorm2_getNFDInstance(&st) : unorm2_getNFKDInstance(&st);
    if (n > INT32_MAX / 8) return cm_fail(err, "text: %zu bytes: too long to normalize (at most %d)", n, INT32_MAX / 8);
    int32_t cap16 = (int32_t)n + 1, len16 = 0, cap_out = 0, len_out = 0, len8 = 0;
    UChar *in16 = cm_malloc((size_t)cap16 * sizeof *in16), *out16 = NULL;
    if (U_SUCCESS(st)) u_strFromUTF8(in16, cap16, &len16, s, (int32_t)n, &st);
    if (U_SUCCESS(st)) {
        cap_out = 4 * len16 + 16; /* NFKD can grow text; ICU says how much when it does not fit */
        out16 = cm_malloc((size_t)cap_out * sizeof *out16);
        len_out = unorm2_normalize(nz, in16, len16, out16, cap_out, &st);
        if (st == U_BUFFER_OVERFLOW_ERROR) {
            st = U_ZERO_ERROR, free(out16), cap_out = len_out + 1;
            out16 = cm_malloc((size_t)cap_out * sizeof *out16);
            len_out = unorm2_normalize(nz, in16, len16, out16, cap_out, &st);
        }
    }
    if (U_SUCCESS(st)) u_strToUTF8(NULL, 0, &len8, out16, len_out, &st);
    if (st == U_BUFFER_OVERFLOW_ERROR) st = U_ZERO_ERROR;
    if (U_SUCCESS(st)) {
        dst->n = 0;
        sb_put(dst, "", 0);
        char *o = cm_malloc((size_t)len8 + 1);
        u_strToUTF8(o, len8 + 1, &len8, out16, len_out, &st);
        sb_put(dst, o, (size_t)len8);
        free(o);
    }
    free(in16), free(out16);
    if (U_FAILURE(st)) return cm_fail(err, "text: Unicode normalization %s failed: %s", names[form], u_errorName(st));
    return 0;
#else
    (void)form, (void)s, (void)n, (void)dst;
    return cm_fail(err, "text: Unicode normalization needs ICU, which this build lacks");
#endif
}

/* One segment of text between added tokens (at_start: it starts the text), through normalizer,
 * pre-tokenizer and BPE. */
static int encode_segment(encoder *E, const char *s, size_t n, int at_start)
{
    const dak_tok *t = E->t;
    if (!n) return 0;
    /* normalizer: alternate between the two buffers */
    sbuf *cur = NULL;
    for (int k = 0; k < t->n_norm; k++) {
        const tok_op *o = &t->norm[k];
        sbuf *dst = cur == &E->a ? &E->b : &E->a;
        if (o->kind == NORM_PREPEND) {
            dst->n = 0;
            sb_put(dst, o->from, o->nfrom);
            sb_put(dst, s, n);
        } else if (o->kind == NORM_UNICODE) {
            if (unicode_normalize(o->ch, s, n, dst, E->err)) return -1;
        } else {
            replace_all(dst, s, n, o->from, o->nfrom, o->to, o->nto);
        }
        cur = dst, s = dst->p, n = dst->n;
    }
    if (t->pre == PRE_NONE) return bpe_chars(t, &E->w, s, n, E->out, E->err);
    if (t->pre == PRE_METASPACE) {
        char r[4];
        size_t nr = utf8_put(r, t->ms_repl);
        sbuf *dst = cur == &E->a ? &E->b : &E->a;
        dst->n = 0;
        sb_put(dst, "", 0);
        /* spaces become the replacement; then one is put first unless the text starts with one already */
        int starts = s[0] == ' ' || (n >= nr && !memcmp(s, r, nr));
        if (!starts && (t->ms_scheme == PREPEND_ALWAYS || (t->ms_scheme == PREPEND_FIRST && at_start)))
            sb_put(dst, r, nr);
        for (size_t i = 0; i < n; i++) {
            if (s[i] == ' ') sb_put(dst, r, nr);
            else sb_put(dst, s + i, 1);
        }
        s = dst->p, n = dst->n;
        if (!t->ms_split) return bpe_chars(t, &E->w, s, n, E->out, E->err);
        /* split before every replacement character (each piece but the first starts with one) */
        size_t from = 0;
        for (size_t i = 1; i <= n; i++) {
            if (i < n && !(n - i >= nr && !memcmp(s + i, r, nr))) continue;
            if (bpe_chars(t, &E->w, s + from, i - from, E->out, E->err)) return -1;
            from = i;
        }
        return 0;
    }
    /* ByteLevel */
    if (t->bl_prefix_space && s[0] != ' ') {
        sbuf *dst = cur == &E->a ? &E->b : &E->a;
        dst->n = 0;
        sb_put(dst, " ", 1);
        sb_put(dst, s, n);
        s = dst->p, n = dst->n;
    }
    if (!t->bl_regex) return bpe_bytes(t, &E->w, s, n, E->out, E->err);
    for (size_t i = 0; i < n;) {
        size_t j = gpt2_piece(s, n, i);
        if (bpe_bytes(t, &E->w, s + i, j - i, E->out, E->err)) return -1;
        i = j;
    }
    return 0;
}

/* The character that ends just before byte i (i > 0) of valid UTF-8 text: its start. */
static size_t char_before(const char *s, size_t i)
{
    do i--;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80);
    return i;
}

/* The longest added token at s[i] that is allowed there: its index, and the span it takes [*a, *b) with the
 * whitespace lstrip / rstrip absorb (never before `floor`).  -1 when none. */
static long added_at(const dak_tok *t, const char *s, size_t n, size_t i, size_t floor, size_t *a, size_t *b)
{
    unsigned c0 = (unsigned char)s[i];
    for (size_t k = t->added_from[c0]; k < t->added_from[c0 + 1]; k++) {
        const added_tok *x = &t->added[k];
        if (x->len > n - i || memcmp(s + i, x->text, x->len)) continue;
        size_t e = i + x->len;
        uint32_t c;
        if (x->single_word) {
            if (i > 0) {
                size_t p = char_before(s, i);
                utf8_char((const unsigned char *)s + p, n - p, &c);
                if (is_word_char(c)) continue;
            }
            if (e < n && utf8_char((const unsigned char *)s + e, n - e, &c) > 0 && is_word_char(c)) continue;
        }
        *a = i, *b = e;
        while (x->lstrip && *a > floor) {
            size_t p = char_before(s, *a);
            utf8_char((const unsigned char *)s + p, n - p, &c);
            if (!is_space(c)) break;
            *a = p;
        }
        int l;
        while (x->rstrip && *b < n && (l = utf8_char((const unsigned char *)s + *b, n - *b, &c)) > 0 && is_space(c))
            *b += (size_t)l;
        return (long)k;
    }
    return -1;
}

int dak_tok_encode(const dak_tok *t, const char *text, size_t n, int add_special, int32_t **ids, size_t *n_ids,
                   cm_err *err)
{
    *ids = NULL, *n_ids = 0;
    if (utf8_check(text, n, "text", err)) return -1;
    ibuf out = {0};
    encoder E;
    memset(&E, 0, sizeof E);
    E.t = t, E.out = &out, E.err = err;
    if (add_special)
        for (size_t k = 0; k < t->n_pre; k++) ib_push(&out, t->pre_ids[k]);
    size_t seg = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        size_t a, b;
        long k = t->n_added ? added_at(t, text, n, i, seg, &a, &b) : -1;
        if (k < 0) {
            i++;
            continue;
        }
        rc = encode_segment(&E, text + seg, a - seg, seg == 0);
        ib_push(&out, t->added[k].id);
        i = seg = b;
    }
    if (!rc) rc = encode_segment(&E, text + seg, n - seg, seg == 0);
    if (add_special)
        for (size_t k = 0; k < t->n_post; k++) ib_push(&out, t->post_ids[k]);
    ws_free(&E.w);
    free(E.a.p), free(E.b.p);
    if (rc) {
        free(out.v);
        return -1;
    }
    *ids = out.v ? out.v : cm_malloc(sizeof **ids);
    *n_ids = out.n;
    return 0;
}

/* ---------------------------------------------------------------- decoding */

/* A list of strings: string k is p[off[k] .. off[k + 1]). */
typedef struct {
    sbuf b;
    size_t *off, n, cap;
} strlist;

static void sl_end(strlist *l) /* closes the string being built */
{
    if (l->n + 2 > l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        size_t *o = realloc(l->off, l->cap * sizeof *o);
        if (!o) {
            fprintf(stderr, "out of memory growing a token list to %zu entries\n", l->cap);
            abort();
        }
        l->off = o;
    }
    if (!l->n) l->off[0] = 0;
    l->off[++l->n] = l->b.n;
}

static void sl_reset(strlist *l)
{
    l->b.n = 0, l->n = 0;
    sb_put(&l->b, "", 0);
}

/* a run of <0xXX> tokens' bytes as one string if it is UTF-8, else one U+FFFD a byte */
static void flush_bytes(strlist *dst, sbuf *run)
{
    if (!run->n) return;
    cm_err e;
    if (!utf8_check(run->p, run->n, "", &e)) {
        sb_put(&dst->b, run->p, run->n), sl_end(dst);
    } else {
        for (size_t k = 0; k < run->n; k++) sb_put(&dst->b, "\xEF\xBF\xBD", 3), sl_end(dst);
    }
    run->n = 0;
}

static int hexdig(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One decoder operation: src's strings to dst's. */
static void decode_op(const dak_tok *t, const tok_op *o, const strlist *src, strlist *dst, sbuf *tmp)
{
    sl_reset(dst);
    char r[4];
    size_t nr = utf8_put(r, o->ch);
    tmp->n = 0;
    for (size_t k = 0; k < src->n; k++) {
        const char *s = src->b.p + src->off[k];
        size_t n = src->off[k + 1] - src->off[k];
        switch (o->kind) {
        case DEC_REPLACE:
            replace_all(tmp, s, n, o->from, o->nfrom, o->to, o->nto);
            sb_put(&dst->b, tmp->p, tmp->n), sl_end(dst);
            break;
        case DEC_BYTE_FALLBACK: {
            int hi = n == 6 && !memcmp(s, "<0x", 3) && s[5] == '>' ? hexdig(s[3]) : -1, lo = hi >= 0 ? hexdig(s[4]) : -1;
            if (lo >= 0) {
                char byte = (char)(hi * 16 + lo);
                sb_put(tmp, &byte, 1);
            } else {
                flush_bytes(dst, tmp);
                sb_put(&dst->b, s, n), sl_end(dst);
            }
            break;
        }
        case DEC_FUSE:
            sb_put(&dst->b, s, n);
            break;
        case DEC_STRIP: {
            size_t a = 0, e = n;
            for (uint32_t j = 0; j < o->start && n - a >= nr && !memcmp(s + a, r, nr); j++) a += nr;
            for (uint32_t j = 0; j < o->stop && e - a >= nr && !memcmp(s + e - nr, r, nr); j++) e -= nr;
            sb_put(&dst->b, s + a, e - a), sl_end(dst);
            break;
        }
        case DEC_BYTE_LEVEL: {
            /* each character back to its byte; a token with a character that stands for no byte (an added
               token's text) goes as its own bytes */
            size_t mark = tmp->n;
            int all = 1;
            for (size_t i = 0; i < n && all;) {
                uint32_t cp;
                int l = utf8_char((const unsigned char *)s + i, n - i, &cp);
                if (l <= 0 || cp >= STAND_INS || t->cp_byte[cp] < 0) {
                    all = 0;
                } else {
                    char c = (char)t->cp_byte[cp];
                    sb_put(tmp, &c, 1);
                    i += (size_t)l;
                }
            }
            if (!all) tmp->n = mark, sb_put(tmp, s, n);
            break;
        }
        case DEC_METASPACE:
            for (size_t i = 0; i < n;) {
                if (n - i >= nr && !memcmp(s + i, r, nr)) {
                    if (!(k == 0 && o->scheme != PREPEND_NEVER)) sb_put(&dst->b, " ", 1);
                    i += nr;
                } else {
                    sb_put(&dst->b, s + i, 1), i++;
                }
            }
            sl_end(dst);
            break;
        }
    }
    if (o->kind == DEC_BYTE_FALLBACK) flush_bytes(dst, tmp);
    if (o->kind == DEC_FUSE) sl_end(dst);
    if (o->kind == DEC_BYTE_LEVEL) sb_put_repaired(&dst->b, tmp->p, tmp->n), sl_end(dst);
}

int dak_tok_decode(const dak_tok *t, const int32_t *ids, size_t n, char **text, size_t *len, cm_err *err)
{
    *text = NULL;
    if (len) *len = 0;
    for (size_t k = 0; k < n; k++) {
        if (ids[k] < 0 || (uint32_t)ids[k] >= t->n_ids)
            return cm_fail(err, "ids: id %d at position %zu is out of range: expected 0..%u (the vocabulary of %s)",
                           ids[k], k, t->n_ids - 1, t->name);
        if (!t->text[ids[k]])
            return cm_fail(err, "ids: id %d at position %zu is no token of %s (the vocabulary skips it)", ids[k], k,
                           t->name);
    }
    strlist l[2];
    memset(l, 0, sizeof l);
    sbuf tmp = {0};
    sl_reset(&l[0]);
    for (size_t k = 0; k < n; k++) sb_put(&l[0].b, t->text[ids[k]], t->text_len[ids[k]]), sl_end(&l[0]);
    int cur = 0;
    for (int k = 0; k < t->n_dec; k++, cur ^= 1) decode_op(t, &t->dec[k], &l[cur], &l[cur ^ 1], &tmp);
    sbuf out = {0};
    sb_put(&out, "", 0);
    for (size_t k = 0; k < l[cur].n; k++) {
        if (k && !t->have_decoder) sb_put(&out, " ", 1); /* no decoder: the tokens joined by spaces, as in HF */
        sb_put_repaired(&out, l[cur].b.p + l[cur].off[k], l[cur].off[k + 1] - l[cur].off[k]);
    }
    for (int k = 0; k < 2; k++) free(l[k].b.p), free(l[k].off);
    free(tmp.p);
    *text = out.p;
    if (len) *len = out.n;
    return 0;
}
