/* A small streaming JSON writer: the one way every tool and benchmark writes
 * its machine-readable records.  Commas and nesting are tracked here. */
#ifndef COMMON_JSON_H
#define COMMON_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

typedef struct {
    FILE *out;
    int depth;
    int need_comma[JSON_MAX_DEPTH];
    int after_key;
} json_w;

void json_init(json_w *w, FILE *out);
void json_obj_begin(json_w *w);
void json_obj_end(json_w *w);
void json_arr_begin(json_w *w);
void json_arr_end(json_w *w);
void json_key(json_w *w, const char *key);
void json_str(json_w *w, const char *s);
void json_i64(json_w *w, int64_t v);
void json_u64(json_w *w, uint64_t v);
void json_f64(json_w *w, double v); /* non-finite values are written as null */
void json_bool(json_w *w, int v);
void json_null(json_w *w);

/* key + value shorthands inside an object */
void json_kv_str(json_w *w, const char *key, const char *s);
void json_kv_i64(json_w *w, const char *key, int64_t v);
void json_kv_u64(json_w *w, const char *key, uint64_t v);
void json_kv_f64(json_w *w, const char *key, double v);
void json_kv_bool(json_w *w, const char *key, int v);

#endif
