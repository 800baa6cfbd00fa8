/* Strict recursive-descent JSON parser producing a jr_val tree (see
 * include/common/json_read.h). */
#include "common/json_read.h"
#include "common/strmap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *s;
    size_t n, i;
    int line, col;
    const char *name;
    cm_err *err;
    int depth;
} parser;

static int perr(parser *p, const char *what)
{
    if (p->i >= p->n)
        return cm_fail(p->err, "%s:%d:%d: %s, got end of input", p->name, p->line, p->col, what);
    unsigned char c = (unsigned char)p->s[p->i];
    if (c >= 0x20 && c < 0x7f)
        return cm_fail(p->err, "%s:%d:%d: %s, got '%c'", p->name, p->line, p->col, what, c);
    return cm_fail(p->err, "%s:%d:%d: %s, got byte 0x%02x", p->name, p->line, p->col, what, c);
}

static void adv(parser *p)
{
    if (p->i < p->n) {
        if (p->s[p->i] == '\n') {
            p->line++;
            p->col = 1;
        } else {
            p->col++;
        }
        p->i++;
    }
}

static void skip_ws(parser *p)
{
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') adv(p);
        else break;
    }
}

static void free_val(jr_val *v)
{
    if (v->type == JR_STRING) free(v->str);
    if (v->type == JR_ARRAY || v->type == JR_OBJECT) {
        for (size_t k = 0; k < v->len; k++) {
            free_val(&v->items[k]);
            if (v->keys) free(v->keys[k]);
        }
        free(v->items);
        free(v->keys);
    }
    memset(v, 0, sizeof *v);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_hex4(parser *p, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = p->i < p->n ? hexval(p->s[p->i]) : -1;
        if (h < 0) return perr(p, "bad \\u escape: expected 4 hex digits");
        v = v * 16 + (unsigned)h;
        adv(p);
    }
    *out = v;
    return 0;
}

/* Appends one code point as UTF-8. */
static void put_utf8(char *buf, size_t *len, unsigned cp)
{
    if (cp < 0x80) {
        buf[(*len)++] = (char)cp;
    } else if (cp < 0x800) {
        buf[(*len)++] = (char)(0xC0 | (cp >> 6));
        buf[(*len)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        buf[(*len)++] = (char)(0xE0 | (cp >> 12));
        buf[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[(*len)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        buf[(*len)++] = (char)(0xF0 | (cp >> 18));
        buf[(*len)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        buf[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[(*len)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* Parses a string starting at '"'; the decoded text never exceeds the raw
 * length, so one buffer of that size suffices. */
static int parse_string(parser *p, char **out, size_t *out_len)
{
    adv(p); /* opening quote */
    size_t start = p->i, end = start;
    while (end < p->n && p->s[end] != '"') end += (p->s[end] == '\\') ? 2 : 1;
    char *buf = cm_malloc(end - start + 1);
    size_t len = 0;
    for (;;) {
        if (p->i >= p->n) {
            free(buf);
            return perr(p, "unterminated string: expected '\"'");
        }
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            adv(p);
            break;
        }
        if (c < 0x20) {
            free(buf);
            return perr(p, "control character in string: expected it escaped");
        }
        if (c != '\\') {
            buf[len++] = (char)c;
            adv(p);
            continue;
        }
        adv(p);
        if (p->i >= p->n) {
            free(buf);
            return perr(p, "unterminated escape: expected one of \\\"\\\\/bfnrtu");
        }
        char e = p->s[p->i];
        const char *simple = "\"\\/bfnrt", *mapped = "\"\\/\b\f\n\r\t";
        const char *hit = strchr(simple, e);
        if (e && hit) {
            buf[len++] = mapped[hit - simple];
            adv(p);
        } else if (e == 'u') {
            adv(p);
            unsigned cp;
            if (read_hex4(p, &cp)) {
                free(buf);
                return -1;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (p->i + 1 >= p->n || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') {
                    free(buf);
                    return perr(p, "lone high surrogate: expected \\uDC00..\\uDFFF after it");
                }
                adv(p);
                adv(p);
                if (read_hex4(p, &lo)) {
                    free(buf);
                    return -1;
                }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    free(buf);
                    return perr(p, "bad surrogate pair: expected a low surrogate \\uDC00..\\uDFFF");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(buf);
                return perr(p, "lone low surrogate: expected a high surrogate before it");
            }
            put_utf8(buf, &len, cp);
        } else {
            free(buf);
            return perr(p, "bad escape: expected one of \\\"\\\\/bfnrtu");
        }
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return 0;
}

static int is_digit(parser *p)
{
    return p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9';
}

static int parse_number(parser *p, jr_val *v)
{
    size_t start = p->i;
    int integer = 1;
    if (p->s[p->i] == '-') adv(p);
    if (!is_digit(p)) return perr(p, "bad number: expected a digit");
    if (p->s[p->i] == '0') {
        adv(p);
        if (is_digit(p)) return perr(p, "bad number: expected no leading zeros");
    } else {
        while (is_digit(p)) adv(p);
    }
    if (p->i < p->n && p->s[p->i] == '.') {
        integer = 0;
        adv(p);
        if (!is_digit(p)) return perr(p, "bad number: expected a digit after '.'");
        while (is_digit(p)) adv(p);
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        integer = 0;
        adv(p);
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) adv(p);
        if (!is_digit(p)) return perr(p, "bad number: expected a digit in the exponent");
        while (is_digit(p)) adv(p);
    }
    char tmp[128];
    size_t len = p->i - start;
    char *txt = len < sizeof tmp ? tmp : cm_malloc(len + 1);
    memcpy(txt, p->s + start, len);
    txt[len] = '\0';
    errno = 0;
    double d = strtod(txt, NULL);
    int range = errno == ERANGE && fabs(d) > 1.0;
    if (txt != tmp) free(txt);
    if (range || !isfinite(d)) {
        p->i = start; /* report at the number's start */
        return cm_fail(p->err, "%s:%d:%d: number out of range: expected a finite double",
                       p->name, v->line, v->col);
    }
    v->type = JR_NUMBER;
    v->num = d;
    v->is_integer = integer;
    return 0;
}

static int parse_value(parser *p, jr_val *v);

/* After a member of an array or object: ',' -> 1 (another member must follow),
 * the closing character -> 0, anything else -> -1 with the message. */
static int after_member(parser *p, char close, const char *next, const char *bad)
{
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == ',') {
        adv(p);
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == close) {
            char msg[64];
            snprintf(msg, sizeof msg, "trailing comma: expected %s", next);
            return perr(p, msg);
        }
        return 1;
    }
    if (p->i < p->n && p->s[p->i] == close) {
        adv(p);
        return 0;
    }
    return perr(p, bad);
}

static int parse_array(parser *p, jr_val *v)
{
    v->type = JR_ARRAY;
    adv(p);
    size_t cap = 0;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == ']') {
        adv(p);
        return 0;
    }
    for (;;) {
        if (v->len == cap) {
            cap = cap ? cap * 2 : 4;
            jr_val *it = realloc(v->items, cap * sizeof *it);
            if (!it) return cm_fail(p->err, "%s: out of memory", p->name);
            v->items = it;
        }
        jr_val *e = &v->items[v->len];
        memset(e, 0, sizeof *e);
        v->len++;
        skip_ws(p);
        if (parse_value(p, e)) return -1;
        int more = after_member(p, ']', "a value", "in array: expected ',' or ']'");
        if (more <= 0) return more;
    }
}

/* Duplicate keys: a linear search up to this many keys, then a hash map of them (a tokenizer's vocabulary is
 * an object of 50,000 keys). */
#define JR_LINEAR_KEYS 16

/* Whether key k of v repeats an earlier one (seen: the hash map, filled once v passes JR_LINEAR_KEYS keys). */
static int repeats_key(const jr_val *v, size_t k, cm_strmap *seen)
{
    if (k < JR_LINEAR_KEYS) {
        for (size_t j = 0; j < k; j++)
            if (!strcmp(v->keys[j], v->keys[k])) return 1;
        return 0;
    }
    if (!seen->cap) {
        cm_strmap_init(seen, 4 * JR_LINEAR_KEYS);
        for (size_t j = 0; j < k; j++) cm_strmap_put(seen, v->keys[j], strlen(v->keys[j]), (int64_t)j, NULL);
    }
    return cm_strmap_put(seen, v->keys[k], strlen(v->keys[k]), (int64_t)k, NULL);
}

static int parse_object_members(parser *p, jr_val *v, cm_strmap *seen);

static int parse_object(parser *p, jr_val *v)
{
    cm_strmap seen;
    cm_strmap_init(&seen, 0);
    int rc = parse_object_members(p, v, &seen);
    cm_strmap_free(&seen);
    return rc;
}

static int parse_object_members(parser *p, jr_val *v, cm_strmap *seen)
{
    v->type = JR_OBJECT;
    adv(p);
    size_t cap = 0;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == '}') {
        adv(p);
        return 0;
    }
    for (;;) {
        skip_ws(p);
        if (p->i >= p->n || p->s[p->i] != '"') return perr(p, "in object: expected a key string");
        int kline = p->line, kcol = p->col;
        if (v->len == cap) {
            cap = cap ? cap * 2 : 4;
            jr_val *it = realloc(v->items, cap * sizeof *it);
            char **ks = it ? realloc(v->keys, cap * sizeof *ks) : NULL;
            if (it) v->items = it;
            if (ks) v->keys = ks;
            if (!it || !ks) return cm_fail(p->err, "%s: out of memory", p->name);
        }
        jr_val *e = &v->items[v->len];
        memset(e, 0, sizeof *e);
        v->keys[v->len] = NULL;
        v->len++;
        size_t klen;
        if (parse_string(p, &v->keys[v->len - 1], &klen)) return -1;
        if (repeats_key(v, v->len - 1, seen))
            return cm_fail(p->err, "%s:%d:%d: duplicate key '%s': expected each key once", p->name, kline,
                           kcol, v->keys[v->len - 1]);
        skip_ws(p);
        if (p->i >= p->n || p->s[p->i] != ':') return perr(p, "after key: expected ':'");
        adv(p);
        skip_ws(p);
        if (parse_value(p, e)) return -1;
        int more = after_member(p, '}', "a key", "in object: expected ',' or '}'");
        if (more <= 0) return more;
    }
}

static int parse_literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->n - p->i < n || memcmp(p->s + p->i, word, n) != 0)
        return perr(p, "expected a JSON value (object, array, string, number, true, false, null)");
    for (size_t k = 0; k < n; k++) adv(p);
    return 0;
}

static int parse_value(parser *p, jr_val *v)
{
    v->line = p->line;
    v->col = p->col;
    if (p->i >= p->n) return perr(p, "expected a JSON value");
    if (p->depth >= JR_MAX_DEPTH)
        return cm_fail(p->err, "%s:%d:%d: nesting too deep: expected at most %d levels", p->name,
                       p->line, p->col, JR_MAX_DEPTH);
    char c = p->s[p->i];
    int rc;
    switch (c) {
    case '{':
        p->depth++;
        rc = parse_object(p, v);
        p->depth--;
        return rc;
    case '[':
        p->depth++;
        rc = parse_array(p, v);
        p->depth--;
        return rc;
    case '"':
        v->type = JR_STRING;
        return parse_string(p, &v->str, &v->len);
    case 't':
        v->type = JR_BOOL;
        v->boolean = 1;
        return parse_literal(p, "true");
    case 'f':
        v->type = JR_BOOL;
        return parse_literal(p, "false");
    case 'n':
        v->type = JR_NULL;
        return parse_literal(p, "null");
    default:
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p, v);
        return perr(p, "expected a JSON value (object, array, string, number, true, false, null)");
    }
}

int jr_parse(jr_doc *doc, const char *text, size_t n, const char *name, cm_err *err)
{
    memset(doc, 0, sizeof *doc);
    snprintf(doc->name, sizeof doc->name, "%s", name ? name : "<json>");
    parser p = {text, n, 0, 1, 1, doc->name, err, 0};
    jr_val *root = cm_calloc(1, sizeof *root);
    /* skip a UTF-8 byte-order mark */
    if (n >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF)
        p.i = 3;
    skip_ws(&p);
    if (parse_value(&p, root) == 0) {
        skip_ws(&p);
        if (p.i == p.n) {
            doc->root = root;
            return 0;
        }
        perr(&p, "after the document: expected end of input");
    }
    free_val(root);
    free(root);
    return -1;
}

int jr_parse_file(jr_doc *doc, const char *path, cm_err *err)
{
    memset(doc, 0, sizeof *doc);
    char *buf;
    size_t n;
    if (cm_read_file(path, (size_t)64 << 20, "JSON", &buf, &n, err)) return -1;
    int rc = jr_parse(doc, buf, n, path, err);
    free(buf);
    return rc;
}

void jr_free(jr_doc *doc)
{
    if (doc->root) {
        free_val(doc->root);
        free(doc->root);
    }
    doc->root = NULL;
}

const char *jr_type_name(jr_type t)
{
    switch (t) {
    case JR_NULL: return "null";
    case JR_BOOL: return "boolean";
    case JR_NUMBER: return "number";
    case JR_STRING: return "string";
    case JR_ARRAY: return "array";
    case JR_OBJECT: return "object";
    }
    return "?";
}

const jr_val *jr_obj_get(const jr_val *obj, const char *key)
{
    if (!obj || obj->type != JR_OBJECT) return NULL;
    for (size_t k = 0; k < obj->len; k++)
        if (!strcmp(obj->keys[k], key)) return &obj->items[k];
    return NULL;
}

const jr_val *jr_arr_at(const jr_val *arr, size_t i)
{
    if (!arr || arr->type != JR_ARRAY || i >= arr->len) return NULL;
    return &arr->items[i];
}

int jr_expect(const jr_doc *doc, const jr_val *v, jr_type t, const char *what, cm_err *err)
{
    if (v && v->type == t) return 0;
    if (!v) return cm_fail(err, "%s: %s: expected %s, got nothing", doc->name, what, jr_type_name(t));
    return cm_fail(err, "%s:%d:%d: %s: expected %s, got %s", doc->name, v->line, v->col, what,
                   jr_type_name(t), jr_type_name(v->type));
}

/* Finds key; returns 1 when present (non-null), 0 when absent and optional,
 * -1 (with message) when absent and required or obj is not an object. */
static int lookup(const jr_doc *doc, const jr_val *obj, const char *key, int required,
                  const jr_val **out, cm_err *err)
{
    if (!obj || obj->type != JR_OBJECT) {
        if (!obj) return cm_fail(err, "%s: expected an object holding '%s'", doc->name, key);
        return cm_fail(err, "%s:%d:%d: expected an object holding '%s', got %s", doc->name,
                       obj->line, obj->col, key, jr_type_name(obj->type));
    }
    const jr_val *v = jr_obj_get(obj, key);
    if (v && v->type == JR_NULL && !required) v = NULL;
    if (!v) {
        if (required)
            return cm_fail(err, "%s:%d:%d: missing key '%s' in this object: expected it present",
                           doc->name, obj->line, obj->col, key);
        return 0;
    }
    *out = v;
    return 1;
}

int jr_get_u64(const jr_doc *doc, const jr_val *obj, const char *key, int required, uint64_t lo,
               uint64_t hi, uint64_t dflt, uint64_t *out, cm_err *err)
{
    const jr_val *v = NULL;
    int r = lookup(doc, obj, key, required, &v, err);
    if (r < 0) return -1;
    if (r == 0) {
        *out = dflt;
        return 0;
    }
    if (v->type != JR_NUMBER || v->num != floor(v->num) || v->num < (double)lo ||
        v->num > (double)hi) {
        char got[64];
        if (v->type == JR_NUMBER) snprintf(got, sizeof got, "%.17g", v->num);
        else snprintf(got, sizeof got, "%s", jr_type_name(v->type));
        return cm_fail(err, "%s:%d:%d: key '%s': expected an integer in [%llu, %llu], got %s",
                       doc->name, v->line, v->col, key, (unsigned long long)lo,
                       (unsigned long long)hi, got);
    }
    *out = (uint64_t)v->num;
    return 0;
}

int jr_get_f64(const jr_doc *doc, const jr_val *obj, const char *key, int required, double lo,
               double hi, double dflt, double *out, cm_err *err)
{
    const jr_val *v = NULL;
    int r = lookup(doc, obj, key, required, &v, err);
    if (r < 0) return -1;
    if (r == 0) {
        *out = dflt;
        return 0;
    }
    if (v->type != JR_NUMBER || v->num < lo || v->num > hi) {
        char got[64];
        if (v->type == JR_NUMBER) snprintf(got, sizeof got, "%.17g", v->num);
        else snprintf(got, sizeof got, "%s", jr_type_name(v->type));
        return cm_fail(err, "%s:%d:%d: key '%s': expected a number in [%g, %g], got %s",
                       doc->name, v->line, v->col, key, lo, hi, got);
    }
    *out = v->num;
    return 0;
}

int jr_get_bool(const jr_doc *doc, const jr_val *obj, const char *key, int required, int dflt,
                int *out, cm_err *err)
{
    const jr_val *v = NULL;
    int r = lookup(doc, obj, key, required, &v, err);
    if (r < 0) return -1;
    if (r == 0) {
        *out = dflt;
        return 0;
    }
    if (v->type != JR_BOOL)
        return cm_fail(err, "%s:%d:%d: key '%s': expected true or false, got %s", doc->name,
                       v->line, v->col, key, jr_type_name(v->type));
    *out = v->boolean;
    return 0;
}

int jr_get_str(const jr_doc *doc, const jr_val *obj, const char *key, int required,
               const char *dflt, const char **out, cm_err *err)
{
    const jr_val *v = NULL;
    int r = lookup(doc, obj, key, required, &v, err);
    if (r < 0) return -1;
    if (r == 0) {
        *out = dflt;
        return 0;
    }
    if (v->type != JR_STRING)
        return cm_fail(err, "%s:%d:%d: key '%s': expected a string, got %s", doc->name, v->line,
                       v->col, key, jr_type_name(v->type));
    *out = v->str;
    return 0;
}
