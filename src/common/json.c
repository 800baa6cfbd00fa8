#include "common/json.h"

#include <inttypes.h>
#include <math.h>

void json_init(json_w *w, FILE *out)
{
    w->out = out;
    w->depth = 0;
    w->need_comma[0] = 0;
    w->after_key = 0;
}

static void sep(json_w *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->need_comma[w->depth]) fputc(',', w->out);
    w->need_comma[w->depth] = 1;
}

static void open(json_w *w, char c)
{
    sep(w);
    fputc(c, w->out);
    if (w->depth + 1 < JSON_MAX_DEPTH) w->depth++;
    w->need_comma[w->depth] = 0;
}

static void close_(json_w *w, char c)
{
    fputc(c, w->out);
    if (w->depth > 0) w->depth--;
    if (w->depth == 0) fputc('\n', w->out);
}

void json_obj_begin(json_w *w) { open(w, '{'); }
void json_obj_end(json_w *w) { close_(w, '}'); }
void json_arr_begin(json_w *w) { open(w, '['); }
void json_arr_end(json_w *w) { close_(w, ']'); }

static void raw_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(o, "\\%c", *p);
        else if (*p < 0x20) fprintf(o, "\\u%04x", *p);
        else fputc(*p, o);
    }
    fputc('"', o);
}

void json_key(json_w *w, const char *key)
{
    sep(w);
    raw_str(w->out, key);
    fputc(':', w->out);
    w->after_key = 1;
}

void json_str(json_w *w, const char *s)
{
    sep(w);
    raw_str(w->out, s ? s : "");
}
void json_i64(json_w *w, int64_t v)
{
    sep(w);
    fprintf(w->out, "%" PRId64, v);
}
void json_u64(json_w *w, uint64_t v)
{
    sep(w);
    fprintf(w->out, "%" PRIu64, v);
}
void json_f64(json_w *w, double v)
{
    sep(w);
    if (isfinite(v)) fprintf(w->out, "%.9g", v);
    else fputs("null", w->out);
}
void json_bool(json_w *w, int v)
{
    sep(w);
    fputs(v ? "true" : "false", w->out);
}
void json_null(json_w *w)
{
    sep(w);
    fputs("null", w->out);
}
void json_kv_str(json_w *w, const char *k, const char *s) { json_key(w, k); json_str(w, s); }
void json_kv_i64(json_w *w, const char *k, int64_t v) { json_key(w, k); json_i64(w, v); }
void json_kv_u64(json_w *w, const char *k, uint64_t v) { json_key(w, k); json_u64(w, v); }
void json_kv_f64(json_w *w, const char *k, double v) { json_key(w, k); json_f64(w, v); }
void json_kv_bool(json_w *w, const char *k, int v) { json_key(w, k); json_bool(w, v); }
