#define _POSIX_C_SOURCE 200809L
/* JSON reader (include/common/json_read.h): values, escapes, positions, and
 * malformed input rejected with line:column messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "common/json_read.h"

static int parse(jr_doc *d, const char *s, cm_err *e)
{
    return jr_parse(d, s, strlen(s), "t.json", e);
}

/* The text must fail and the message must contain `want`. */
static void bad(const char *text, const char *want)
{
    jr_doc d;
    cm_err e = {{0}};
    int rc = parse(&d, text, &e);
    CHECK(rc == -1, "accepted malformed input: %s", text);
    CHECK(d.root == NULL, "root left behind for: %s", text);
    CHECK(strstr(e.msg, want) != NULL, "message '%s' lacks '%s' (input %s)", e.msg, want, text);
    if (rc == 0) jr_free(&d);
}

static void test_values(void)
{
    jr_doc d;
    cm_err e = {{0}};
    const char *text = "{\n  \"a\": 1,\n  \"b\": [true, false, null, -0.5e2, \"x\\ty\"],\n"
                       "  \"c\": {\"d\": \"\\u00e9\\ud83d\\ude00\\/\"}, \"e\": 12345678901\n}";
    CHECK(parse(&d, text, &e) == 0, "valid document rejected: %s", e.msg);
    if (!d.root) return;
    CHECK(d.root->type == JR_OBJECT && d.root->len == 4, "top level");
    const jr_val *a = jr_obj_get(d.root, "a");
    CHECK(a && a->type == JR_NUMBER && a->num == 1 && a->is_integer, "a = 1");
    CHECK(a && a->line == 2 && a->col == 8, "a at 2:8, got %d:%d", a ? a->line : 0, a ? a->col : 0);
    const jr_val *b = jr_obj_get(d.root, "b");
    CHECK(b && b->type == JR_ARRAY && b->len == 5, "b has 5 items");
    CHECK(jr_arr_at(b, 0)->type == JR_BOOL && jr_arr_at(b, 0)->boolean == 1, "true");
    CHECK(jr_arr_at(b, 1)->type == JR_BOOL && jr_arr_at(b, 1)->boolean == 0, "false");
    CHECK(jr_arr_at(b, 2)->type == JR_NULL, "null");
    CHECK(jr_arr_at(b, 3)->num == -50.0 && !jr_arr_at(b, 3)->is_integer, "-0.5e2 = -50");
    CHECK(!strcmp(jr_arr_at(b, 4)->str, "x\ty"), "tab escape");
    CHECK(jr_arr_at(b, 5) == NULL, "past the end");
    CHECK(jr_arr_at(b, 3)->line == 3 && jr_arr_at(b, 3)->col == 28, "-0.5e2 at 3:28, got %d:%d",
          jr_arr_at(b, 3)->line, jr_arr_at(b, 3)->col);
    const jr_val *dd = jr_obj_get(jr_obj_get(d.root, "c"), "d");
    /* U+00E9 = C3 A9; U+1F600 (surrogates D83D DE00) = F0 9F 98 80; then '/' */
    CHECK(dd && !strcmp(dd->str, "\xc3\xa9\xf0\x9f\x98\x80/") && dd->len == 7, "unicode escapes");
    uint64_t u;
    CHECK(jr_get_u64(&d, d.root, "e", 1, 0, UINT64_MAX, 0, &u, &e) == 0 && u == 12345678901ull,
          "big integer");
    CHECK(jr_obj_get(d.root, "zz") == NULL && jr_obj_get(b, "a") == NULL, "absent lookups");
    jr_free(&d);
    CHECK(d.root == NULL, "freed");

    /* scalars at top level, whitespace, BOM */
    CHECK(parse(&d, " \t\r\n42 \n", &e) == 0 && d.root->num == 42, "bare number");
    jr_free(&d);
    CHECK(parse(&d, "\xef\xbb\xbf[]", &e) == 0 && d.root->type == JR_ARRAY && d.root->len == 0,
          "BOM then []");
    jr_free(&d);
    CHECK(parse(&d, "{}", &e) == 0 && d.root->type == JR_OBJECT && d.root->len == 0, "{}");
    jr_free(&d);
}

static void test_malformed(void)
{
    bad("", "t.json:1:1: expected a JSON value, got end of input");
    bad("   ", "t.json:1:4:");
    bad("{\n  \"a\": 1,\n}", "t.json:3:1: trailing comma");
    bad("[1 2]", "t.json:1:4: in array: expected ',' or ']'");
    bad("[1,]", "t.json:1:4: trailing comma");
    bad("{\"a\" 1}", "t.json:1:6: after key: expected ':'");
    bad("{a: 1}", "t.json:1:2: in object: expected a key string");
    bad("{\"a\": 1, \"a\": 2}", "t.json:1:10: duplicate key 'a'");
    bad("\"abc", "unterminated string");
    bad("\"a\x01\"", "t.json:1:3: control character in string");
    bad("\"\\x\"", "t.json:1:3: bad escape");
    bad("\"\\u12g4\"", "bad \\u escape");
    bad("\"\\ud800\"", "lone high surrogate");
    bad("\"\\udc00\"", "lone low surrogate");
    bad("01", "t.json:1:2: bad number: expected no leading zeros");
    bad("-", "t.json:1:2: bad number: expected a digit");
    bad("1.", "t.json:1:3: bad number: expected a digit after '.'");
    bad("1e+", "t.json:1:4: bad number: expected a digit in the exponent");
    bad("1e999", "number out of range");
    bad("tru", "t.json:1:1: expected a JSON value");
    bad("nul", "t.json:1:1:");
    bad("[1] x", "t.json:1:5: after the document: expected end of input, got 'x'");
    bad("{\"a\":1}}", "t.json:1:8: after the document");
    bad("// comment\n1", "t.json:1:1:");
    bad("[\n\n   @]", "t.json:3:4:");
    bad("'single'", "t.json:1:1:");
    /* nesting beyond the limit */
    char deep[JR_MAX_DEPTH + 8];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    bad(deep, "nesting too deep");
}

static void test_getters(void)
{
    jr_doc d;
    cm_err e = {{0}};
    const char *text = "{\"i\": 7, \"f\": 2.5, \"s\": \"str\", \"b\": true, \"n\": null,\n"
                       " \"neg\": -3, \"big\": 1e30, \"arr\": [1]}";
    CHECK(parse(&d, text, &e) == 0, "getter doc: %s", e.msg);
    if (!d.root) return;
    uint64_t u;
    double f;
    int bo;
    const char *s;
    CHECK(jr_get_u64(&d, d.root, "i", 1, 0, 10, 0, &u, &e) == 0 && u == 7, "i");
    CHECK(jr_get_u64(&d, d.root, "missing", 0, 0, 10, 5, &u, &e) == 0 && u == 5, "default");
    CHECK(jr_get_u64(&d, d.root, "n", 0, 0, 10, 6, &u, &e) == 0 && u == 6, "null = absent");
    CHECK(jr_get_u64(&d, d.root, "missing", 1, 0, 10, 0, &u, &e) == -1 &&
              strstr(e.msg, "t.json:1:1: missing key 'missing'"),
          "required missing: %s", e.msg);
    CHECK(jr_get_u64(&d, d.root, "f", 1, 0, 10, 0, &u, &e) == -1 &&
              strstr(e.msg, "t.json:1:15: key 'f': expected an integer in [0, 10], got 2.5"),
          "fraction as integer: %s", e.msg);
    CHECK(jr_get_u64(&d, d.root, "i", 1, 8, 10, 0, &u, &e) == -1 && strstr(e.msg, "got 7"),
          "below range: %s", e.msg);
    CHECK(jr_get_u64(&d, d.root, "neg", 1, 0, 10, 0, &u, &e) == -1 && strstr(e.msg, "2:9"),
          "negative: %s", e.msg);
    CHECK(jr_get_u64(&d, d.root, "s", 1, 0, 10, 0, &u, &e) == -1 && strstr(e.msg, "got string"),
          "string as integer: %s", e.msg);
    CHECK(jr_get_u64(&d, d.root, "big", 1, 0, UINT64_MAX, 0, &u, &e) == -1, "1e30 > u64");
    CHECK(jr_get_f64(&d, d.root, "f", 1, 0, 10, 0, &f, &e) == 0 && f == 2.5, "f");
    CHECK(jr_get_f64(&d, d.root, "b", 1, 0, 10, 0, &f, &e) == -1 && strstr(e.msg, "got boolean"),
          "bool as number: %s", e.msg);
    CHECK(jr_get_bool(&d, d.root, "b", 1, 0, &bo, &e) == 0 && bo == 1, "b");
    CHECK(jr_get_bool(&d, d.root, "i", 1, 0, &bo, &e) == -1 &&
              strstr(e.msg, "expected true or false, got number"),
          "number as bool: %s", e.msg);
    CHECK(jr_get_str(&d, d.root, "s", 1, NULL, &s, &e) == 0 && !strcmp(s, "str"), "s");
    CHECK(jr_get_str(&d, d.root, "arr", 1, NULL, &s, &e) == -1 && strstr(e.msg, "got array"),
          "array as string: %s", e.msg);
    CHECK(jr_get_str(&d, jr_obj_get(d.root, "arr"), "x", 1, NULL, &s, &e) == -1 &&
              strstr(e.msg, "expected an object holding 'x', got array"),
          "lookup in array: %s", e.msg);
    CHECK(jr_expect(&d, jr_obj_get(d.root, "s"), JR_OBJECT, "key 's'", &e) == -1 &&
              strstr(e.msg, "key 's': expected object, got string"),
          "expect: %s", e.msg);
    jr_free(&d);

    /* files */
    CHECK(jr_parse_file(&d, "/nonexistent/dir/x.json", &e) == -1 &&
              strstr(e.msg, "/nonexistent/dir/x.json: cannot open"),
          "missing file: %s", e.msg);
    char path[] = "/tmp/test_json_read_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        fputs("{\n  \"x\": [1,\n        2,,\n  ]\n}\n", f);
        fclose(f);
        CHECK(jr_parse_file(&d, path, &e) == -1 && strstr(e.msg, ":3:11: expected a JSON value"),
              "file position: %s", e.msg);
        remove(path);
    }
}

/* Large objects (a tokenizer's vocabulary has 50,000 keys): every key still checked against all the others (past 16
 * keys through a hash map), the duplicate's position reported, and the whole parse linear, not quadratic. */
static void test_large_object(void)
{
    const int n = 50000;
    char *text = malloc((size_t)n * 24 + 64);
    size_t len = 0;
    len += (size_t)sprintf(text + len, "{");
    for (int k = 0; k < n; k++) len += (size_t)sprintf(text + len, "%s\"k%d\": %d", k ? ",\n" : "", k, k);
    size_t body = len;
    strcpy(text + len, "}");
    jr_doc d;
    cm_err e = {{0}};
    clock_t c0 = clock();
    int rc = jr_parse(&d, text, len + 1, "big.json", &e);
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    CHECK(rc == 0 && d.root->len == (size_t)n, "50,000 distinct keys: %s", e.msg);
    CHECK(secs < 1.0, "50,000 keys parsed in %.2f s, expected well under a second", secs);
    if (rc == 0) jr_free(&d);
    /* a key repeating the 8th (in the linear part) and one repeating the 30,000th, both at the end (line n + 1) */
    const char *dups[2] = {"k7", "k29999"};
    for (int j = 0; j < 2; j++) {
        char want[64];
        snprintf(want, sizeof want, "big.json:%d:1: duplicate key '%s'", n + 1, dups[j]);
        int m = sprintf(text + body, ",\n\"%s\": 0}", dups[j]);
        rc = jr_parse(&d, text, body + (size_t)m, "big.json", &e);
        CHECK(rc == -1 && strstr(e.msg, want), "duplicate %s: got '%s', expected '%s'", dups[j], rc ? e.msg : "success",
              want);
        if (rc == 0) jr_free(&d);
    }
    free(text);
}

int main(void)
{
    test_values();
    test_malformed();
    test_getters();
    test_large_object();
    return check_done();
}
