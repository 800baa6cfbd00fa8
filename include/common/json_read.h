/* A small JSON reader (RFC 8259): parses a whole document into a tree of
 * jr_val nodes that remember their line:column, so that every caller can
 * report "FILE:LINE:COL: what, expected what" for bad input.  Strict: no
 * comments, no trailing commas, no duplicate keys, no control characters in
 * strings, nothing after the value; depth is limited to JR_MAX_DEPTH.
 *
 * The typed getters (jr_get_*) look a key up in an object and check its type
 * and range; a missing required key, a wrong type or a value out of range
 * fails with a message naming the source, the position and the key. */
#ifndef COMMON_JSON_READ_H
#define COMMON_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define JR_MAX_DEPTH 256

typedef enum { JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT } jr_type;

typedef struct jr_val jr_val;
struct jr_val {
    jr_type type;
    int line, col;      /* 1-based position of the value's first character */
    int boolean;        /* JR_BOOL */
    double num;         /* JR_NUMBER */
    int is_integer;     /* JR_NUMBER written without fraction or exponent */
    char *str;          /* JR_STRING: UTF-8, NUL-terminated (may hold \u0000) */
    size_t len;         /* JR_STRING: bytes; JR_ARRAY/JR_OBJECT: element count */
    jr_val *items;      /* JR_ARRAY / JR_OBJECT: the elements (values) */
    char **keys;        /* JR_OBJECT: keys[i] names items[i] */
};

typedef struct {
    jr_val *root;
    char name[256]; /* source name used in messages (file path or a label) */
} jr_doc;

/* Parses text[0..n).  `name` labels messages ("config.json").  On failure
 * returns -1 with "name:line:col: message" in err and doc->root == NULL. */
int jr_parse(jr_doc *doc, const char *text, size_t n, const char *name, cm_err *err);
/* Reads and parses a file (limit 64 MiB). */
int jr_parse_file(jr_doc *doc, const char *path, cm_err *err);
void jr_free(jr_doc *doc);

const char *jr_type_name(jr_type t);

/* Member of an object by key, or NULL (also when obj is not an object). */
const jr_val *jr_obj_get(const jr_val *obj, const char *key);
/* Element i of an array, or NULL. */
const jr_val *jr_arr_at(const jr_val *arr, size_t i);

/* Typed getters.  When the key is absent: required -> error, otherwise *out
 * is set to dflt and 0 is returned.  A JSON null counts as absent for
 * optional keys.  Messages: "name:line:col: key 'k': expected ..., got ...". */
int jr_get_u64(const jr_doc *doc, const jr_val *obj, const char *key, int required, uint64_t lo,
               uint64_t hi, uint64_t dflt, uint64_t *out, cm_err *err);
int jr_get_f64(const jr_doc *doc, const jr_val *obj, const char *key, int required, double lo,
               double hi, double dflt, double *out, cm_err *err);
int jr_get_bool(const jr_doc *doc, const jr_val *obj, const char *key, int required, int dflt,
                int *out, cm_err *err);
/* *out points into the document (valid until jr_free); dflt may be NULL. */
int jr_get_str(const jr_doc *doc, const jr_val *obj, const char *key, int required,
               const char *dflt, const char **out, cm_err *err);
/* Fails unless v has type t: "name:line:col: <what>: expected <t>, got <type>". */
int jr_expect(const jr_doc *doc, const jr_val *v, jr_type t, const char *what, cm_err *err);

#endif
