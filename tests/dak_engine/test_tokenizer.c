/* dak tokenizer (include/dak/tokenizer.h), CPU: two small hand-written tokenizer.json files, one a flavour, with every
 * expected id worked out by hand in the comments (never by the code under test): merges by rank, ties, byte
 * fallback, unknown characters, special tokens, the space handling, decoding and round trips; malformed files and
 * bad text refused with the right message; long inputs in a fraction of a second.  GPT-2's older pair vocab.json +
 * merges.txt (OPT's folders): small hand-written pairs (ids by hand), the same ids as the byte-level tokenizer.json
 * with the same vocabulary and merges, and the refusals.  With DAK_TOKENIZER_LLAMA2 (or DAK_TOKENIZER_GPT2) naming a
 * real tokenizer.json, or DAK_TOKENIZER_GPT2_VOCAB and DAK_TOKENIZER_GPT2_MERGES real files, a few published facts
 * about them are checked too (and the pair against the tokenizer.json). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "../tmpdir.h"
#include "dak/tokenizer.h"

#define SP "\xe2\x96\x81" /* U+2581, SentencePiece's space */
#define G_SP "\xc4\xa0"   /* U+0120 'Ġ', GPT-2's stand-in for the byte 0x20 */
#define G_NL "\xc4\x8a"   /* U+010A 'Ċ', for 0x0a */
#define G_C3 "\xc3\x83"   /* U+00C3 'Ã', the byte 0xc3 stands for itself */
#define G_A9 "\xc2\xa9"   /* U+00A9 '©', likewise 0xa9 */

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
    static char p[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    FILE *f = fopen(p[k], "wb");
    fputs(text, f);
    fclose(f);
    return p[k];
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the SentencePiece-style file (Llama-2's sections, a vocabulary of 24) ----
 * ids: 0 <unk>, 1 <s>, 2 </s>, 3 <0x0A>, 4 <0xC3>, 5 <0xA9>, 6 <0xE2>, 7 <0x82>, 8 <0xAC>, 9 ▁, 10 a, 11 b, 12 c,
 *      13 ▁a, 14 ab, 15 ▁ab, 16 bc, 17 abc, 18 ▁▁, 19 h, 20 i, 21 ▁h, 22 ▁hi, 23 aa
 * merges by rank: 0 "▁ a", 1 "b c", 2 "a b", 3 "▁a b", 4 "a bc", 5 "▁ ▁", 6 "▁ h", 7 ["▁h", "i"] (the pair form),
 *      8 "a a" */
static const char *spm_json(const char *model_extra, const char *post)
{
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null,\n"
             " \"added_tokens\": [\n"
             "  {\"id\": 0, \"content\": \"<unk>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, "
             "\"normalized\": false, \"special\": true},\n"
             "  {\"id\": 1, \"content\": \"<s>\", \"special\": true},\n"
             "  {\"id\": 2, \"content\": \"</s>\", \"special\": true}],\n"
             " \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"" SP "\"},\n"
             "   {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"" SP "\"}]},\n"
             " \"pre_tokenizer\": null,\n"
             " \"post_processor\": %s,\n"
             " \"decoder\": {\"type\": \"Sequence\", \"decoders\": [\n"
             "   {\"type\": \"Replace\", \"pattern\": {\"String\": \"" SP "\"}, \"content\": \" \"},\n"
             "   {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, "
             "\"stop\": 0}]},\n"
             " \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": \"<unk>\", \"continuing_subword_prefix\": null,\n"
             "   \"end_of_word_suffix\": null, \"fuse_unk\": true, \"byte_fallback\": true%s,\n"
             "   \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2, \"<0x0A>\": 3, \"<0xC3>\": 4, \"<0xA9>\": 5, \"<0xE2>\": 6,\n"
             "     \"<0x82>\": 7, \"<0xAC>\": 8, \"" SP "\": 9, \"a\": 10, \"b\": 11, \"c\": 12, \"" SP "a\": 13, \"ab\": 14,\n"
             "     \"" SP "ab\": 15, \"bc\": 16, \"abc\": 17, \"" SP SP "\": 18, \"h\": 19, \"i\": 20, \"" SP "h\": 21, \"" SP
             "hi\": 22, \"aa\": 23},\n"
             "   \"merges\": [\"" SP " a\", \"b c\", \"a b\", \"" SP "a b\", \"a bc\", \"" SP " " SP "\", \"" SP " h\",\n"
             "     [\"" SP "h\", \"i\"], \"a a\"]}}\n",
             post, model_extra);
    return buf;
}

static const char *spm_post = "{\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\", "
                              "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"pair\": [], "
                              "\"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [1], \"tokens\": [\"<s>\"]}}}";

/* encodes text[0..n) and compares with want[0..nw) */
static void expect_ids(const dak_tok *t, const char *text, size_t n, int add, const int32_t *want, size_t nw,
                       const char *what)
{
    int32_t *ids = NULL;
    size_t k = 0;
    cm_err err = {{0}};
    int rc = dak_tok_encode(t, text, n, add, &ids, &k, &err);
    int same = rc == 0 && k == nw;
    for (size_t i = 0; same && i < nw; i++) same = ids[i] == want[i];
    char got[256] = "";
    for (size_t i = 0, o = 0; rc == 0 && i < k && o + 12 < sizeof got; i++)
        o += (size_t)snprintf(got + o, sizeof got - o, "%s%d", i ? "," : "", ids[i]);
    CHECK(same, "%s: encode: got [%s]%s%s", what, got, rc ? " error: " : "", rc ? err.msg : "");
    free(ids);
}
#define EXPECT_IDS(t, text, add, ...)                                                                                  \
    do {                                                                                                               \
        const int32_t want_[] = {__VA_ARGS__};                                                                         \
        expect_ids(t, text, strlen(text), add, want_, sizeof want_ / sizeof want_[0], #text);                         \
    } while (0)

static void expect_text(const dak_tok *t, const int32_t *ids, size_t n, const char *want, size_t nwant,
                        const char *what)
{
    char *text = NULL;
    size_t len = 0;
    cm_err err = {{0}};
    int rc = dak_tok_decode(t, ids, n, &text, &len, &err);
    CHECK(rc == 0 && len == nwant && !memcmp(text, want, nwant), "%s: decode: got '%s'%s", what,
          rc ? err.msg : text, rc ? " (an error)" : "");
    free(text);
}
#define EXPECT_TEXT(t, want, ...)                                                                                      \
    do {                                                                                                               \
        const int32_t ids_[] = {__VA_ARGS__};                                                                          \
        expect_text(t, ids_, sizeof ids_ / sizeof ids_[0], want, strlen(want), #__VA_ARGS__);                         \
    } while (0)

/* encode (without special tokens) then decode gives the text back */
static void round_trip(const dak_tok *t, const char *text)
{
    int32_t *ids = NULL;
    size_t n = 0;
    cm_err err = {{0}};
    if (dak_tok_encode(t, text, strlen(text), 0, &ids, &n, &err)) {
        CHECK(0, "round trip '%s': encode: %s", text, err.msg);
        return;
    }
    expect_text(t, ids, n, text, strlen(text), text);
    free(ids);
}

static void expect_encode_fails(const dak_tok *t, const char *text, size_t n, const char *needle, const char *what)
{
    int32_t *ids = NULL;
    size_t k = 0;
    cm_err err = {{0}};
    int rc = dak_tok_encode(t, text, n, 0, &ids, &k, &err);
    CHECK(rc != 0 && strstr(err.msg, needle), "%s: expected a refusal naming '%s', got %s", what, needle,
          rc ? err.msg : "success");
    free(ids);
}

static void spm(void)
{
    dak_tok *t;
    cm_err err = {{0}};
    const char *path = write_file("spm.json", spm_json("", spm_post));
    if (dak_tok_load(&t, path, &err)) {
        CHECK(0, "spm.json refused: %s", err.msg);
        return;
    }
    CHECK(dak_tok_flavour_of(t) == DAK_TOK_SENTENCEPIECE, "flavour %s", dak_tok_flavour_name(t));
    CHECK_EQ_I64(dak_tok_n_ids(t), 24, "ids");
    CHECK_EQ_I64(dak_tok_id(t, SP "hi", strlen(SP "hi")), 22, "id of ▁hi");
    CHECK_EQ_I64(dak_tok_id(t, "</s>", 4), 2, "id of </s>");
    CHECK_EQ_I64(dak_tok_id(t, "zz", 2), -1, "no id for zz");
    size_t len = 0;
    const char *tx = dak_tok_token(t, 17, &len);
    CHECK(tx && len == 3 && !memcmp(tx, "abc", 3), "token 17 is abc");
    CHECK(dak_tok_token(t, 24, NULL) == NULL && dak_tok_token(t, -1, NULL) == NULL, "no token outside 0..23");

    /* merges by rank: "ab" -> ▁ a b; pairs (▁,a) rank 0, (a,b) rank 2: ▁a first, then (▁a,b) rank 3 -> ▁ab (15).
       (Merging a b first would leave ▁ ab, which has no merge.)  The template puts <s> (1) first. */
    EXPECT_IDS(t, "ab", 0, 15);
    EXPECT_IDS(t, "ab", 1, 1, 15);
    /* "abc" -> ▁ a b c; (▁,a) 0, (a,b) 2, (b,c) 1: ▁a (0), then (▁a,b) 3 against (b,c) 1: bc; ▁a bc has no merge */
    EXPECT_IDS(t, "abc", 0, 13, 16);
    /* "cabc" -> ▁ c a b c; only (a,b) 2 and (b,c) 1: bc first, then (a,bc) 4 -> abc: ▁ c abc */
    EXPECT_IDS(t, "cabc", 0, 9, 12, 17);
    /* ties: "caaa" -> ▁ c a a a; (a,a) rank 8 at positions 2 and 3: the leftmost first -> ▁ c aa a */
    EXPECT_IDS(t, "caaa", 0, 9, 12, 23, 10);
    /* the space handling: " a" -> Prepend + Replace -> ▁▁a; (▁,▁) 5 at 0, (▁,a) 0 at 1: ▁a wins -> ▁ ▁a */
    EXPECT_IDS(t, " a", 0, 9, 13);
    /* "a  a" -> ▁a▁▁a: (▁,a) rank 0 at 0 and at 3 (leftmost first, then the other); ▁▁ (5) never gets its pair */
    EXPECT_IDS(t, "a  a", 0, 13, 9, 13);
    /* the ["▁h", "i"] pair form: ▁ h i -> (▁,h) 6 -> ▁h i -> (▁h,i) 7 -> ▁hi */
    EXPECT_IDS(t, "hi", 0, 22);
    /* byte fallback: é (c3 a9) and € (e2 82 ac) are not in the vocabulary: their bytes' tokens */
    EXPECT_IDS(t, "\xc3\xa9", 0, 9, 4, 5);
    EXPECT_IDS(t, "\xe2\x82\xac", 0, 9, 6, 7, 8);
    EXPECT_IDS(t, "a\nb", 0, 13, 3, 11); /* ▁ a <0x0A> b: ▁a */
    /* unknown: z has no token nor <0x7A>: <unk> (0), consecutive ones fused (fuse_unk) */
    EXPECT_IDS(t, "zz", 0, 9, 0);
    EXPECT_IDS(t, "zaz", 0, 9, 0, 10, 0);
    /* special tokens in the text, matched before the normalizer: "<s>ab</s>" -> <s>, "ab" (its own ▁ab), </s> */
    EXPECT_IDS(t, "<s>ab</s>", 0, 1, 15, 2);
    EXPECT_IDS(t, "<s>ab</s>", 1, 1, 1, 15, 2);
    EXPECT_IDS(t, "ab<s>", 0, 15, 1);
    /* nothing in, nothing out; the template still adds <s> */
    int32_t *ids = NULL;
    size_t n = 99;
    CHECK(dak_tok_encode(t, "", 0, 0, &ids, &n, &err) == 0 && n == 0, "empty text: no ids");
    free(ids);
    EXPECT_IDS(t, "", 1, 1);

    /* decoding: Replace ▁ -> ' ', ByteFallback, Fuse, Strip one leading space */
    EXPECT_TEXT(t, "<s> ab", 1, 15); /* "<s>" " ab" fused: starts with '<', nothing to strip */
    EXPECT_TEXT(t, "abc", 15, 12);   /* " ab" "c" -> " abc" -> "abc" */
    EXPECT_TEXT(t, " a", 9, 13);     /* " " " a" -> "  a" -> " a" */
    EXPECT_TEXT(t, "\xc3\xa9", 9, 4, 5); /* " " <0xC3> <0xA9> -> " é" -> "é" */
    EXPECT_TEXT(t, "\xef\xbf\xbd", 4);   /* a lone <0xC3> is no character: U+FFFD */
    EXPECT_TEXT(t, "\xef\xbf\xbd\xef\xbf\xbd" "a", 6, 7, 10); /* <0xE2><0x82> cut short: one U+FFFD a byte */
    EXPECT_TEXT(t, "<unk>a<unk>", 9, 0, 10, 0);
    EXPECT_TEXT(t, "", 9);
    {
        char *text;
        cm_err e2 = {{0}};
        const int32_t bad[2] = {1, 24}, neg[1] = {-3};
        CHECK(dak_tok_decode(t, bad, 2, &text, NULL, &e2) != 0 &&
                  strstr(e2.msg, "id 24 at position 1 is out of range: expected 0..23"),
              "id 24 refused: %s", e2.msg);
        CHECK(dak_tok_decode(t, neg, 1, &text, NULL, &e2) != 0 && strstr(e2.msg, "id -3 at position 0"),
              "id -3 refused: %s", e2.msg);
    }
    /* not a round trip, as in Hugging Face's: each segment between special tokens gets its own ▁ */
    EXPECT_TEXT(t, "<s> hi</s>", 1, 22, 2);
    const char *trips[] = {"ab", " a", "a  a", "abc cabc caaa", "\xc3\xa9\xe2\x82\xac\na", "hi ab ", "  ", "<s>"};
    for (size_t k = 0; k < sizeof trips / sizeof trips[0]; k++) round_trip(t, trips[k]);

    /* UTF-8 errors, with the byte */
    expect_encode_fails(t, "a\xff" "b", 3, "invalid UTF-8 at byte 1 (0xff): expected the first byte", "0xff");
    expect_encode_fails(t, "ab\xc3", 3, "the character starting at byte 2 (0xc3) is cut off", "cut off");
    expect_encode_fails(t, "\xc3(", 2, "at byte 1 (0x28): expected a continuation byte of the character starting at "
                                       "byte 0", "bad continuation");
    expect_encode_fails(t, "\xc0\xaf", 2, "byte 0 (0xc0)", "overlong");
    expect_encode_fails(t, "a\xed\xa0\x80", 4, "at byte 2 (0xa0)", "surrogate");

    /* long inputs (a quadratic merge would take minutes): ("ab " x 33334) -> ▁ab x 33334 then the last space's ▁;
       100,000 a -> ▁a, then (a,a) ties merged left to right: 49,999 aa and one a */
    size_t reps = 33334, na = 100000;
    char *big = malloc(3 * reps + 1);
    for (size_t k = 0; k < reps; k++) memcpy(big + 3 * k, "ab ", 3);
    int32_t *want = malloc(50001 * sizeof *want); /* the longer of the two lists below */
    for (size_t k = 0; k < reps; k++) want[k] = 15;
    want[reps] = 9;
    double t0 = now_s();
    expect_ids(t, big, 3 * reps, 0, want, reps + 1, "(ab )x33334");
    double t1 = now_s();
    memset(big, 'a', na);
    for (size_t k = 0; k < 49999; k++) want[1 + k] = 23;
    want[0] = 13, want[50000] = 10;
    expect_ids(t, big, na, 0, want, 50001, "a x 100000");
    double t2 = now_s();
    printf("spm: 100,002 characters of 'ab ' encoded in %.1f ms, 100,000 'a' in %.1f ms\n", 1e3 * (t1 - t0),
           1e3 * (t2 - t1));
    CHECK(t1 - t0 < 5 && t2 - t1 < 5, "long inputs: %.2f s and %.2f s, expected well under 5 s", t1 - t0, t2 - t1);
    free(big), free(want);
    dak_tok_free(t);

    /* the older Metaspace form of the same model: pre_tokenizer Metaspace (add_prefix_space: every segment gets a
       ▁ unless it starts with a space, which becomes one), no normalizer; split (the default) cuts before every ▁ */
    char *alt = strdup(spm_json("", "null"));
    char *norm = strstr(alt, "\"normalizer\": {");
    const char *pre_at = strstr(alt, " \"pre_tokenizer\": null");
    char *doc = malloc(strlen(alt) + 512);
    snprintf(doc, strlen(alt) + 512, "%.*s\"normalizer\": null,\n \"pre_tokenizer\": {\"type\": \"Metaspace\", "
                                     "\"replacement\": \"" SP "\", \"add_prefix_space\": true}%s",
             (int)(norm - alt), alt, pre_at + strlen(" \"pre_tokenizer\": null"));
    if (dak_tok_load(&t, write_file("spm_meta.json", doc), &err) == 0) {
        /* " a" -> ▁a (no second ▁): one piece -> ▁a (13); "a  a" -> ▁a▁▁a split as ▁a | ▁ | ▁a */
        EXPECT_IDS(t, " a", 0, 13);
        EXPECT_IDS(t, "a  a", 1, 13, 9, 13); /* post_processor null: add_special adds nothing */
        /* "aa" -> ▁aa: ▁ a a; (▁,a) 0 before (a,a) 8 -> ▁a a */
        EXPECT_IDS(t, "aa", 0, 13, 10);
        dak_tok_free(t);
    } else {
        CHECK(0, "Metaspace variant refused: %s", err.msg);
    }
    free(alt), free(doc);
}

/* ---- the byte-level file (GPT-2's / OPT's sections) ----
 * ids: 0 <s>, 1 <pad>, 2 </s>, 3 <unk>, 4 Ġ, 5 Ċ, 6 h, 7 e, 8 l, 9 o, 10 ', 11 s, 12 1, 13 2, 14 !, 15 Ã, 16 ©, 17 t,
 *      18 he, 19 ll, 20 hell, 21 hello, 22 Ġh, 23 Ġhello, 24 's, 25 12, 26 ĠĠ, 27 Ã©, 28 ĊĊ
 * merges: 0 "h e", 1 "l l", 2 "he ll", 3 "hell o", 4 "Ġ h", 5 "Ġ hello", 6 "' s", 7 "1 2", 8 "Ġ Ġ", 9 "Ã ©",
 *      10 "Ċ Ċ".  No unk_token (GPT-2 has none): a byte outside the vocabulary is an error.
 * post_processor: OPT's, </s> (2) first. */
static const char *bl_json(void)
{
    return "{\"version\": \"1.0\",\n"
           " \"added_tokens\": [{\"id\": 0, \"content\": \"<s>\", \"special\": true},\n"
           "   {\"id\": 1, \"content\": \"<pad>\", \"special\": true}, {\"id\": 2, \"content\": \"</s>\", \"special\": true},\n"
           "   {\"id\": 3, \"content\": \"<unk>\", \"special\": true}],\n"
           " \"normalizer\": null,\n"
           " \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
           "\"use_regex\": true},\n"
           " \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"</s>\", "
           "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"special_tokens\": {\"</s>\": {\"id\": "
           "\"</s>\", \"ids\": [2], \"tokens\": [\"</s>\"]}}},\n"
           " \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": "
           "true},\n"
           " \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": \"\",\n"
           "   \"end_of_word_suffix\": \"\", \"fuse_unk\": false, \"byte_fallback\": false,\n"
           "   \"vocab\": {\"<s>\": 0, \"<pad>\": 1, \"</s>\": 2, \"<unk>\": 3, \"" G_SP "\": 4, \"" G_NL "\": 5, \"h\": 6,\n"
           "     \"e\": 7, \"l\": 8, \"o\": 9, \"'\": 10, \"s\": 11, \"1\": 12, \"2\": 13, \"!\": 14, \"" G_C3 "\": 15,\n"
           "     \"" G_A9 "\": 16, \"t\": 17, \"he\": 18, \"ll\": 19, \"hell\": 20, \"hello\": 21, \"" G_SP "h\": 22,\n"
           "     \"" G_SP "hello\": 23, \"'s\": 24, \"12\": 25, \"" G_SP G_SP "\": 26, \"" G_C3 G_A9 "\": 27, \"" G_NL G_NL
           "\": 28},\n"
           "   \"merges\": [\"h e\", \"l l\", \"he ll\", \"hell o\", \"" G_SP " h\", \"" G_SP " hello\", \"' s\", \"1 2\", "
           "\"" G_SP " " G_SP "\",\n"
           "     \"" G_C3 " " G_A9 "\", \"" G_NL " " G_NL "\"]}}\n";
}

static void byte_level(void)
{
    dak_tok *t;
    cm_err err = {{0}};
    const char *path = write_file("bl.json", bl_json());
    int rc = dak_tok_load(&t, path, &err);
    if (rc) {
        CHECK(0, "bl.json refused: %s", err.msg);
        return;
    }
    CHECK(dak_tok_flavour_of(t) == DAK_TOK_BYTE_LEVEL, "flavour %s", dak_tok_flavour_name(t));
    /* "hello": h e l l o; he (0), ll (1), then (he,ll) 2 -> hell, (hell,o) 3 -> hello.  OPT's </s> first. */
    EXPECT_IDS(t, "hello", 0, 21);
    EXPECT_IDS(t, "hello", 1, 2, 21);
    /* " hello" is its own piece (' ?' letters): Ġ h e l l o; he (0) removes the pair (Ġ,h) 4; ... -> Ġ hello ->
       (Ġ,hello) 5 -> Ġhello */
    EXPECT_IDS(t, "hello hello", 0, 21, 23);
    /* contractions: "he's" -> "he" | "'s" */
    EXPECT_IDS(t, "he's", 0, 18, 24);
    /* "12!" -> numbers "12" | other "!" */
    EXPECT_IDS(t, "12!", 0, 25, 14);
    /* whitespace: "h  h" -> "h" | " " (the run less its last space, which goes with the letter) | " h" */
    EXPECT_IDS(t, "h  h", 0, 6, 4, 22);
    /* "h\n\nh" -> "h" | "\n" (the run of two less its last) | "\n" (one left before a letter: \s+) | "h";
       "h\n\n" -> "h" | "\n\n" (the run reaches the end) -> ĊĊ */
    EXPECT_IDS(t, "h\n\nh", 0, 6, 5, 5, 6);
    EXPECT_IDS(t, "h\n\n", 0, 6, 28);
    /* é is c3 a9: Ã © -> (Ã,©) 9 -> Ã©; "hé!" -> letters "hé" (h Ã©) | "!" */
    EXPECT_IDS(t, "\xc3\xa9", 0, 27);
    EXPECT_IDS(t, "h\xc3\xa9!", 0, 6, 27, 14);
    /* special tokens match first: "</s>hello<pad>" */
    EXPECT_IDS(t, "</s>hello<pad>", 0, 2, 21, 1);
    /* z (0x7a) has no token and the file no unk_token */
    expect_encode_fails(t, "hez", 3, "the byte 0x7a", "byte outside the vocabulary");
    expect_encode_fails(t, "hez", 3, "neither byte_fallback nor an unk_token", "byte outside the vocabulary");
    /* decoding: each character back to its byte */
    EXPECT_TEXT(t, "</s>hello hello", 2, 21, 23);
    EXPECT_TEXT(t, " \n", 4, 5);
    EXPECT_TEXT(t, "\xef\xbf\xbd", 15); /* a lone 0xc3 */
    EXPECT_TEXT(t, "\xc3\xa9", 15, 16);
    const char *trips[] = {"hello hello", "he's 12!", "h  h\n\nh\n\n", "\xc3\xa9 hello  ", "</s>hello"};
    for (size_t k = 0; k < sizeof trips / sizeof trips[0]; k++) round_trip(t, trips[k]);
    /* long: "hello " x 20000 -> hello, then Ġhello x 19999, then the last space alone (a run at the end) */
    size_t reps = 20000;
    char *big = malloc(6 * reps + 1);
    for (size_t k = 0; k < reps; k++) memcpy(big + 6 * k, "hello ", 6);
    int32_t *want = malloc((reps + 1) * sizeof *want);
    want[0] = 21, want[reps] = 4;
    for (size_t k = 1; k < reps; k++) want[k] = 23;
    double t0 = now_s();
    expect_ids(t, big, 6 * reps, 0, want, reps + 1, "(hello )x20000");
    double t1 = now_s();
    printf("byte level: 120,000 characters encoded in %.1f ms\n", 1e3 * (t1 - t0));
    CHECK(t1 - t0 < 5, "long input: %.2f s, expected well under 5 s", t1 - t0);
    free(big), free(want);
    dak_tok_free(t);
}

/* ---- malformed files: each refused, the message naming what and where ---- */

/* a load's status rc and message err: a refusal naming needle (*t freed when it loaded after all) */
static void expect_refused(int rc, dak_tok *const *t, const cm_err *err, const char *needle, const char *what)
{
    CHECK(rc != 0 && strstr(err->msg, needle), "%s: expected a refusal naming '%s', got %s", what, needle,
          rc ? err->msg : "success");
    if (!rc) dak_tok_free(*t);
}

static void expect_load_fails(const char *name, const char *text, const char *needle)
{
    dak_tok *t;
    cm_err err = {{0}};
    expect_refused(dak_tok_load(&t, write_file(name, text), &err), &t, &err, needle, name);
}

/* a minimal BPE file with the given vocab, merges and extra top-level members */
static const char *mini(const char *vocab, const char *merges, const char *extra)
{
    static char buf[2048];
    snprintf(buf, sizeof buf, "{\"model\": {\"type\": \"BPE\", \"vocab\": %s, \"merges\": %s}%s}", vocab, merges, extra);
    return buf;
}

static void malformed(void)
{
    const char *v = "{\"a\": 0, \"b\": 1, \"ab\": 2}";
    expect_load_fails("ok.json", mini(v, "[\"a b\"]", ", \"decoder\": {\"type\": \"Wordpiece\"}"),
                      "decoder type 'Wordpiece': not implemented");
    {
        dak_tok *t;
        cm_err err = {{0}};
        CHECK(dak_tok_load(&t, write_file("min.json", mini(v, "[\"a b\"]", "")), &err) == 0, "minimal file: %s",
              err.msg);
        if (!err.msg[0]) {
            EXPECT_IDS(t, "abba", 0, 2, 1, 0); /* no normalizer: a b b a -> ab b a */
            EXPECT_TEXT(t, "ab b a", 2, 1, 0); /* no decoder: the tokens joined by spaces */
            expect_encode_fails(t, "ax", 2, "the character U+0078 'x' is not in the vocabulary", "no unk");
            dak_tok_free(t);
        }
    }
    expect_load_fails("trunc.json", "{\"model\": {\"type\": \"BPE\",", "trunc.json:1:26: in object: expected a key string, got end of input");
    expect_load_fails("type.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}",
                      "type.json:1:11: model type 'WordPiece': expected BPE");
    expect_load_fails("nomodel.json", "{\"normalizer\": null}", "'model': expected object, got nothing");
    expect_load_fails("unkmerge.json", mini(v, "[\"a q\"]", ""), "merge 0 ('a', 'q'): 'q' is not in the vocabulary");
    expect_load_fails("merged.json", mini(v, "[\"a b\", \"b a\"]", ""),
                      "merge 1 ('b', 'a'): the merged token 'ba' is not in the vocabulary");
    expect_load_fails("space.json", mini(v, "[\"ab\"]", ""), "merge 0 'ab': expected two tokens separated by one space");
    expect_load_fails("pair.json", mini(v, "[[\"a\"]]", ""), "merge 0: expected \"a b\" or [\"a\", \"b\"]");
    expect_load_fails("dupmerge.json", mini(v, "[\"a b\", [\"a\", \"b\"]]", ""),
                      "merge 1 ('a', 'b') repeats merge 0: expected each pair once");
    expect_load_fails("dupid.json", mini("{\"a\": 0, \"b\": 0}", "[]", ""), "id 0 given to both 'a' and 'b'");
    expect_load_fails("dupkey.json", mini("{\"a\": 0, \"a\": 1}", "[]", ""), "duplicate key 'a'");
    expect_load_fails("negid.json", mini("{\"a\": -1}", "[]", ""), "vocab token 'a': expected an id in [0, 16777215]");
    expect_load_fails("fracid.json", mini("{\"a\": 1.5}", "[]", ""), "expected an id");
    expect_load_fails("utf8.json", mini("{\"a\xff\": 0}", "[]", ""), "invalid UTF-8 at byte 1 (0xff)");
    expect_load_fails("unk.json",
                      "{\"model\": {\"type\": \"BPE\", \"unk_token\": \"<zz>\", \"vocab\": {\"a\": 0}, \"merges\": []}}",
                      "unk_token '<zz>' is not in the vocabulary");
    expect_load_fails("prefix.json",
                      "{\"model\": {\"type\": \"BPE\", \"continuing_subword_prefix\": \"##\", \"vocab\": {\"a\": 0}, "
                      "\"merges\": []}}",
                      "continuing_subword_prefix '##': not implemented");
    expect_load_fails("dropout.json",
                      "{\"model\": {\"type\": \"BPE\", \"dropout\": 0.1, \"vocab\": {\"a\": 0}, \"merges\": []}}",
                      "BPE dropout 0.1: expected null");
    expect_load_fails("norm.json", mini(v, "[]", ", \"normalizer\": {\"type\": \"Lowercase\"}"),
                      "normalizer type 'Lowercase': not implemented");
    expect_load_fails("regex.json",
                      mini(v, "[]", ", \"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \" +\"}, "
                                    "\"content\": \"a\"}"),
                      "Replace with a Regex pattern: not implemented");
    expect_load_fails("pre.json", mini(v, "[]", ", \"pre_tokenizer\": {\"type\": \"Whitespace\"}"),
                      "pre_tokenizer type 'Whitespace': not implemented");
    expect_load_fails("post.json",
                      mini(v, "[]", ", \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": "
                                    "[{\"SpecialToken\": {\"id\": \"<x>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": "
                                    "\"A\", \"type_id\": 0}}], \"special_tokens\": {}}"),
                      "special token '<x>' is not in 'special_tokens'");
    expect_load_fails("postid.json",
                      mini(v, "[]", ", \"post_processor\": {\"type\": \"RobertaProcessing\", \"cls\": [\"<s>\", 0], "
                                    "\"sep\": [\"</s>\", 99]}"),
                      "id 99 is not a token of the vocabulary (expected 0..2)");
    expect_load_fails("strip.json", mini(v, "[]", ", \"decoder\": {\"type\": \"Strip\", \"content\": \"ab\", "
                                                   "\"start\": 1, \"stop\": 0}"),
                      "key 'content': expected exactly one character");
    expect_load_fails("added.json", mini(v, "[]", ", \"added_tokens\": [{\"id\": 5, \"content\": \"\"}]"),
                      "added token 5: expected a non-empty 'content'");
    expect_load_fails("empty.json", "{}", "empty.json: 'model': expected object, got nothing");
    {
        dak_tok *t;
        cm_err err = {{0}};
        char p[160];
        snprintf(p, sizeof p, "%s/none.json", dir);
        CHECK(dak_tok_load(&t, p, &err) != 0 && strstr(err.msg, "cannot open"), "a missing file: %s", err.msg);
    }
}

/* ---- GPT-2's older pair, vocab.json + merges.txt (OPT's model folders) ---- */

/* dir/sub/name with text (NULL: nothing written); the path */
static const char *write_in(const char *sub, const char *name, const char *text)
{
    static char p[4][200];
    static int k;
    char d[160];
    snprintf(d, sizeof d, "%s/%s", dir, sub);
    mkdir(d, 0755);
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", d, name);
    if (text) {
        FILE *f = fopen(p[k], "wb");
        fputs(text, f);
        fclose(f);
    }
    return p[k];
}

/* a and b give the same ids for text (with and without special tokens) and the same text back */
static void same_tokens(const dak_tok *a, const dak_tok *b, const char *text, const char *what)
{
    for (int add = 0; add < 2; add++) {
        int32_t *x = NULL, *y = NULL;
        size_t nx = 0, ny = 0;
        cm_err e1 = {{0}}, e2 = {{0}};
        int ra = dak_tok_encode(a, text, strlen(text), add, &x, &nx, &e1);
        int rb = dak_tok_encode(b, text, strlen(text), add, &y, &ny, &e2);
        CHECK(ra == 0 && rb == 0 && nx == ny && !memcmp(x, y, nx * sizeof *x), "%s: '%s' (add %d): %zu ids and %zu%s%s",
              what, text, add, nx, ny, ra ? e1.msg : "", rb ? e2.msg : "");
        if (!ra) {
            char *ta = NULL, *tb = NULL;
            CHECK(!dak_tok_decode(a, x, nx, &ta, NULL, &e1) && !dak_tok_decode(b, x, nx, &tb, NULL, &e2) &&
                      !strcmp(ta, tb),
                  "%s: '%s' decoded: '%s' and '%s'", what, text, ta ? ta : e1.msg, tb ? tb : e2.msg);
            free(ta), free(tb);
        }
        free(x), free(y);
    }
}

static void expect_pair_fails(const char *vocab_path, const char *needle, const char *what)
{
    dak_tok *t;
    cm_err err = {{0}};
    expect_refused(dak_tok_load_bpe_folder(&t, vocab_path, &err), &t, &err, needle, what);
}

/* the folder dir/sub with this vocab.json and merges.txt (and what else is there) refused */
static void pair_refused(const char *sub, const char *vocab, const char *merges, const char *needle, const char *what)
{
    char v[200];
    snprintf(v, sizeof v, "%s", write_in(sub, "vocab.json", vocab));
    write_in(sub, "merges.txt", merges);
    expect_pair_fails(v, needle, what);
}

/* The small pair: ids 0 a, 1 b, 2 c, 3 ab, 4 bc, 5 abc, 6 Ġ, 7 Ġa, 8 </s>, 9 <pad>; merges.txt after its version
 * line: rank 0 "b c", 1 "a b", 2 "a bc", 3 "Ġ a" (rank = line - 2). */
#define SMALL_VOCAB                                                                                        \
    "{\"a\": 0, \"b\": 1, \"c\": 2, \"ab\": 3, \"bc\": 4, \"abc\": 5, \"" G_SP "\": 6, \"" G_SP "a\": 7, " \
    "\"</s>\": 8, \"<pad>\": 9}"
#define SMALL_MERGES "#version: 0.2\nb c\na b\na bc\n" G_SP " a\n"

static void bpe_pair(void)
{
    dak_tok *t, *u;
    cm_err err = {{0}};
    char v[200]; /* the folder's vocab.json (write_in's paths are overwritten by later calls) */
    /* a folder with config.json's model_type "opt" and no special-token files: </s> (8) first, <pad> matched */
    snprintf(v, sizeof v, "%s", write_in("opt", "vocab.json", SMALL_VOCAB));
    write_in("opt", "merges.txt", SMALL_MERGES);
    write_in("opt", "config.json", "{\"model_type\": \"opt\", \"vocab_size\": 10}");
    if (dak_tok_load_bpe_folder(&t, v, &err)) {
        CHECK(0, "opt pair refused: %s", err.msg);
    } else {
        CHECK(dak_tok_flavour_of(t) == DAK_TOK_BYTE_LEVEL, "pair flavour %s", dak_tok_flavour_name(t));
        CHECK_EQ_I64(dak_tok_n_ids(t), 10, "pair ids");
        /* "abc": a b c; (b,c) rank 0 before (a,b) rank 1 -> a bc -> (a,bc) rank 2 -> abc */
        EXPECT_IDS(t, "abc", 0, 5);
        EXPECT_IDS(t, "abc", 1, 8, 5); /* OPT's </s> first */
        EXPECT_IDS(t, "ab", 0, 3);     /* (a,b) rank 1 */
        /* " abc" is one piece: Ġ a b c; bc (0), then (a,bc) 2 before (Ġ,a) 3 -> Ġ abc, which has no merge */
        EXPECT_IDS(t, " abc", 0, 6, 5);
        EXPECT_IDS(t, "cab", 0, 2, 3); /* (c,a) has no merge; (a,b) -> c ab */
        EXPECT_IDS(t, " a", 0, 7);     /* (Ġ,a) 3 */
        /* "a b" -> "a" | " b": Ġ b has no merge */
        EXPECT_IDS(t, "a b", 0, 0, 6, 1);
        /* </s> and <pad> are special (OPT's defaults, in the vocabulary): matched whole in the text */
        EXPECT_IDS(t, "ab</s>c<pad>", 0, 3, 8, 2, 9);
        EXPECT_TEXT(t, "</s> aabc", 8, 7, 5);
        expect_encode_fails(t, "abz", 3, "the byte 0x7a", "z in the small pair");
        dak_tok_free(t);
    }
    /* the same files without config.json: no bos, no special tokens (GPT-2's <|endoftext|> is not there) */
    snprintf(v, sizeof v, "%s", write_in("plain", "vocab.json", SMALL_VOCAB));
    write_in("plain", "merges.txt", "b c\r\na b\r\na bc\r\n" G_SP " a"); /* no version line, CRLF, no final newline */
    if (dak_tok_load_bpe_folder(&t, v, &err) == 0) {
        EXPECT_IDS(t, "abc", 1, 5);
        EXPECT_IDS(t, " abc", 1, 6, 5);
        /* "</s>" is no added token here: its bytes go to the BPE, and '<' is not in the vocabulary */
        expect_encode_fails(t, "a</s>", 5, "the byte 0x3c", "</s> without a config");
        dak_tok_free(t);
    } else {
        CHECK(0, "plain pair refused: %s", err.msg);
    }
    /* tokenizer_config.json and special_tokens_map.json: the map's bos (<pad>) wins; add_bos_token true; an
       added token with an id of its own (10 <new>, past the vocabulary); added_tokens.json's <x> 11 */
    snprintf(v, sizeof v, "%s", write_in("cfg", "vocab.json", SMALL_VOCAB));
    write_in("cfg", "merges.txt", SMALL_MERGES);
    write_in("cfg", "config.json", "{\"model_type\": \"gpt2\"}");
    write_in("cfg", "tokenizer_config.json",
             "{\"add_bos_token\": true, \"add_prefix_space\": false, \"tokenizer_class\": \"GPT2Tokenizer\",\n"
             " \"bos_token\": {\"content\": \"</s>\", \"lstrip\": false, \"__type\": \"AddedToken\"}, \"eos_token\": "
             "\"</s>\",\n \"added_tokens_decoder\": {\"10\": {\"content\": \"<new>\", \"special\": true}}}");
    write_in("cfg", "special_tokens_map.json", "{\"bos_token\": \"<pad>\", \"pad_token\": null}");
    write_in("cfg", "added_tokens.json", "{\"<x>\": 11}");
    if (dak_tok_load_bpe_folder(&t, v, &err) == 0) {
        CHECK_EQ_I64(dak_tok_n_ids(t), 12, "ids with <new> and <x>");
        EXPECT_IDS(t, "ab", 1, 9, 3); /* <pad> (9) first */
        EXPECT_IDS(t, "a<new>b</s><x>", 0, 0, 10, 1, 8, 11);
        EXPECT_TEXT(t, "<new>ab<x>", 10, 3, 11);
        dak_tok_free(t);
    } else {
        CHECK(0, "cfg pair refused: %s", err.msg);
    }
    /* add_bos_token false wins over model_type opt */
    snprintf(v, sizeof v, "%s", write_in("optno", "vocab.json", SMALL_VOCAB));
    write_in("optno", "merges.txt", SMALL_MERGES);
    write_in("optno", "config.json", "{\"model_type\": \"opt\"}");
    write_in("optno", "tokenizer_config.json", "{\"add_bos_token\": false}");
    if (dak_tok_load_bpe_folder(&t, v, &err) == 0) {
        EXPECT_IDS(t, "ab", 1, 3);
        dak_tok_free(t);
    } else {
        CHECK(0, "optno pair refused: %s", err.msg);
    }
    /* the files entry point, with its own added tokens and bos */
    {
        const dak_tok_added added[1] = {{"<pad>", -1, 0, 0, 0, NULL}};
        const dak_tok_bpe_opts o = {added, 1, "</s>", 0};
        char mp[200];
        snprintf(mp, sizeof mp, "%s/cfg/merges.txt", dir);
        if (dak_tok_load_bpe_files(&t, v, mp, &o, &err) == 0) {
            EXPECT_IDS(t, "ab<pad>", 1, 8, 3, 9);
            /* </s> is the bos but no added token here: its bytes go to the BPE ('<' is not in the vocabulary) */
            expect_encode_fails(t, "ab</s>", 6, "the byte 0x3c", "</s> not added");
            dak_tok_free(t);
        } else {
            CHECK(0, "dak_tok_load_bpe_files refused: %s", err.msg);
        }
        const dak_tok_bpe_opts prefix = {NULL, 0, NULL, 1}; /* add_prefix_space: "abc" as " abc" */
        if (dak_tok_load_bpe_files(&t, v, mp, &prefix, &err) == 0) {
            EXPECT_IDS(t, "abc", 0, 6, 5);
            dak_tok_free(t);
        } else {
            CHECK(0, "add_prefix_space refused: %s", err.msg);
        }
    }

    /* the same tokenizer as a byte-level tokenizer.json: bl.json's vocabulary and merges as a pair, its four
       special tokens named by special_tokens_map.json, OPT's </s> first */
    static const char bl_vocab[] =
        "{\"<s>\": 0, \"<pad>\": 1, \"</s>\": 2, \"<unk>\": 3, \"" G_SP "\": 4, \"" G_NL "\": 5, \"h\": 6,\n"
        " \"e\": 7, \"l\": 8, \"o\": 9, \"'\": 10, \"s\": 11, \"1\": 12, \"2\": 13, \"!\": 14, \"" G_C3 "\": 15,\n"
        " \"" G_A9 "\": 16, \"t\": 17, \"he\": 18, \"ll\": 19, \"hell\": 20, \"hello\": 21, \"" G_SP "h\": 22,\n"
        " \"" G_SP "hello\": 23, \"'s\": 24, \"12\": 25, \"" G_SP G_SP "\": 26, \"" G_C3 G_A9 "\": 27, \"" G_NL G_NL
        "\": 28}\n";
    snprintf(v, sizeof v, "%s", write_in("bl", "vocab.json", bl_vocab));
    write_in("bl", "merges.txt", "#version: 0.2\nh e\nl l\nhe ll\nhell o\n" G_SP " h\n" G_SP " hello\n' s\n1 2\n" G_SP
                                 " " G_SP "\n" G_C3 " " G_A9 "\n" G_NL " " G_NL "\n");
    write_in("bl", "special_tokens_map.json", "{\"bos_token\": \"</s>\", \"eos_token\": \"</s>\", \"unk_token\": "
                                              "\"<unk>\", \"pad_token\": \"<pad>\", \"cls_token\": \"<s>\"}");
    write_in("bl", "config.json", "{\"model_type\": \"opt\"}");
    if (dak_tok_load_bpe_folder(&t, v, &err)) {
        CHECK(0, "bl pair refused: %s", err.msg);
    } else if (dak_tok_load(&u, write_file("bl.json", bl_json()), &err)) {
        CHECK(0, "bl.json refused: %s", err.msg);
        dak_tok_free(t);
    } else {
        CHECK_EQ_I64(dak_tok_n_ids(t), dak_tok_n_ids(u), "pair and tokenizer.json: ids");
        const char *texts[] = {"hello hello", "he's 12!", "h  h\n\nh\n\n", "\xc3\xa9 hello  ", "</s>hello<pad>",
                               "<s>hello<unk>", "", " ", "12 12 hello's"};
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) same_tokens(t, u, texts[k], "pair vs json");
        EXPECT_IDS(t, "hello hello", 1, 2, 21, 23); /* as bl.json gives (byte_level above) */
        dak_tok_free(t), dak_tok_free(u);
    }

    /* refusals: what, where, what was expected */
    snprintf(v, sizeof v, "%s", write_in("nomerges", "vocab.json", SMALL_VOCAB));
    expect_pair_fails(v, "no merges.txt beside it", "missing merges.txt");
    {
        char mp[200];
        snprintf(mp, sizeof mp, "%s/nomerges/merges.txt", dir);
        CHECK(dak_tok_load_bpe_files(&t, v, mp, NULL, &err) != 0 && strstr(err.msg, "merges.txt: cannot open"),
              "missing merges.txt (files): %s", err.msg);
    }
    pair_refused("three", SMALL_VOCAB, "#version: 0.2\nb c\na b c\n",
                 "merges.txt:3:1: merge 1 'a b c': expected two tokens separated by one space", "three tokens");
    pair_refused("blank", SMALL_VOCAB, "b c\n\na b\n", "merges.txt:2:1: merge 1 '': expected two tokens",
                 "a blank line");
    pair_refused("unknown", SMALL_VOCAB, "#version: 0.2\na q\n",
                 "merges.txt:2:1: merge 0 ('a', 'q'): 'q' is not in the vocabulary", "a merge naming q");
    pair_refused("merged", SMALL_VOCAB, "c a\n",
                 "merges.txt:1:1: merge 0 ('c', 'a'): the merged token 'ca' is not in the vocabulary",
                 "a merged token missing");
    pair_refused("dupmerge", SMALL_VOCAB, "a b\nb c\na b\n", "merges.txt:3:1: merge 2 ('a', 'b') repeats merge 0",
                 "a merge twice");
    pair_refused("utf8", SMALL_VOCAB, "a b\na \xff\n", "merges.txt:2: merge line: invalid UTF-8 at byte 2 (0xff)",
                 "invalid UTF-8 in merges.txt");
    pair_refused("dupid", "{\"a\": 0, \"b\": 1,\n \"ab\": 1}", "a b\n",
                 "vocab.json:2:8: vocab: id 1 given to both 'b' and 'ab'", "duplicate ids");
    pair_refused("notvocab", mini("{\"a\": 0}", "[]", ""), "",
                 "a tokenizer.json (its 'model' is an object), not a vocab.json", "a tokenizer.json as vocab");
    snprintf(v, sizeof v, "%s", write_in("badbos", "vocab.json", SMALL_VOCAB));
    write_in("badbos", "merges.txt", SMALL_MERGES);
    write_in("badbos", "tokenizer_config.json", "{\"add_bos_token\": true,\n \"bos_token\": \"<zz>\"}");
    expect_pair_fails(v, "tokenizer_config.json's 'bos_token' '<zz>' is not in the vocabulary", "a bos not there");
    write_in("badbos", "tokenizer_config.json", "{\"add_bos_token\": true, \"bos_token\": null}");
    expect_pair_fails(v, "add_bos_token is true (tokenizer_config.json), and no bos_token is named", "a null bos");
    write_in("badbos", "tokenizer_config.json", "{\"bos_token\": 5}");
    expect_pair_fails(v, "tokenizer_config.json:1:15: 'bos_token': expected a token (a string, or an object with "
                         "'content'), got number", "a number as bos");
    write_in("badbos", "tokenizer_config.json", "{\"tokenizer_class\": \"RobertaTokenizer\"}");
    expect_pair_fails(v, "tokenizer_class 'RobertaTokenizer': expected GPT2Tokenizer", "another tokenizer class");
    write_in("badbos", "tokenizer_config.json", "{\"added_tokens_decoder\": {\"x1\": {\"content\": \"<y>\"}}}");
    expect_pair_fails(v, "added_tokens_decoder: key 'x1': expected an id", "a decoder key that is no id");
    write_in("badbos", "tokenizer_config.json", "{\"add_bos_token\": true");
    expect_pair_fails(v, "tokenizer_config.json:1:23", "malformed tokenizer_config.json");
    write_in("badbos", "tokenizer_config.json", "{}");
    write_in("badbos", "added_tokens.json", "{\"<y>\": 2.5}");
    expect_pair_fails(v, "added_tokens.json:1:9: token '<y>': expected a non-empty token and an id", "a fractional id");
    write_in("badbos", "added_tokens.json", "{\"<y>\": 10}");
    if (dak_tok_load_bpe_folder(&t, v, &err) == 0) {
        EXPECT_IDS(t, "a<y>", 0, 0, 10);
        EXPECT_TEXT(t, "<y>ab", 10, 3);
        dak_tok_free(t);
    } else {
        CHECK(0, "added_tokens.json over a vocabulary id refused: %s", err.msg);
    }
}

/* ---- real files named by the environment: published facts ---- */
static void real_files(void)
{
    const char *llama = getenv("DAK_TOKENIZER_LLAMA2"), *gpt2 = getenv("DAK_TOKENIZER_GPT2");
    if (!llama) printf("note: DAK_TOKENIZER_LLAMA2 not set: Llama-2's tokenizer.json not checked\n");
    if (!gpt2) printf("note: DAK_TOKENIZER_GPT2 not set: GPT-2's tokenizer.json not checked\n");
    dak_tok *t;
    cm_err err = {{0}};
    if (llama) {
        double t0 = now_s();
        if (dak_tok_load(&t, llama, &err)) {
            CHECK(0, "DAK_TOKENIZER_LLAMA2: %s", err.msg);
        } else {
            double t1 = now_s();
            printf("Llama-2 tokenizer.json loaded in %.1f ms\n", 1e3 * (t1 - t0));
            CHECK(t1 - t0 < 1.0, "Llama-2 load took %.2f s, expected under 1 s", t1 - t0);
            CHECK_EQ_I64(dak_tok_n_ids(t), 32000, "Llama-2 ids");
            /* "Hello world": ▁Hello 15043, ▁world 3186; with BOS <s> 1 first when the file's template has it (the
               published meta-llama file does) */
            EXPECT_IDS(t, "Hello world", 0, 15043, 3186);
            int32_t *ids = NULL;
            size_t n = 0;
            dak_tok_encode(t, "Hello world", 11, 1, &ids, &n, &err);
            if (n == 3) EXPECT_IDS(t, "Hello world", 1, 1, 15043, 3186);
            else printf("note: this Llama-2 file's post_processor adds no <s>\n");
            free(ids);
            EXPECT_TEXT(t, "Hello world", 15043, 3186);
            EXPECT_IDS(t, "\n", 0, 29871, 13); /* ▁ then the byte 0x0a's <0x0A> (3 + 10) */
            dak_tok_free(t);
        }
    }
    if (gpt2) {
        if (dak_tok_load(&t, gpt2, &err)) {
            CHECK(0, "DAK_TOKENIZER_GPT2: %s", err.msg);
        } else {
            EXPECT_IDS(t, "Hello world", 0, 15496, 995); /* GPT-2: Hello 15496, Ġworld 995 */
            EXPECT_TEXT(t, "Hello world<|endoftext|>", 15496, 995, 50256);
            dak_tok_free(t);
        }
    }
    const char *gv = getenv("DAK_TOKENIZER_GPT2_VOCAB"), *gm = getenv("DAK_TOKENIZER_GPT2_MERGES");
    if (!gv || !gm) {
        printf("note: DAK_TOKENIZER_GPT2_VOCAB and _MERGES not set: GPT-2's vocab.json + merges.txt not checked\n");
        return;
    }
    const dak_tok_added eot = {"<|endoftext|>", -1, 0, 0, 0, NULL}; /* GPT-2's special token (its default) */
    const dak_tok_bpe_opts o = {&eot, 1, NULL, 0};
    if (dak_tok_load_bpe_files(&t, gv, gm, &o, &err)) {
        CHECK(0, "DAK_TOKENIZER_GPT2_VOCAB / _MERGES: %s", err.msg);
        return;
    }
    EXPECT_IDS(t, "Hello world", 0, 15496, 995);
    EXPECT_TEXT(t, "Hello world<|endoftext|>", 15496, 995, 50256);
    dak_tok *u;
    if (!gpt2) {
        printf("note: DAK_TOKENIZER_GPT2 not set: GPT-2's vocab.json + merges.txt not compared with tokenizer.json\n");
    } else if (dak_tok_load(&u, gpt2, &err) == 0) {
        CHECK_EQ_I64(dak_tok_n_ids(t), dak_tok_n_ids(u), "GPT-2 pair and tokenizer.json: ids");
        const char *texts[] = {"Hello world", " it's 2026:\tna\xc3\xafve caf\xc3\xa9\n\n  ok?",
                               "<|endoftext|>a<|endoftext|>",
                               "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x99\x82!!", "   x  \n"};
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) same_tokens(t, u, texts[k], "GPT-2 pair vs json");
        dak_tok_free(u);
    }
    dak_tok_free(t);
}

int main(void)
{
    if (test_tmpdir_make(dir, sizeof dir, "dak_tok")) return 1;
    spm();
    byte_level();
    bpe_pair();
    malformed();
    real_files();
    test_tmpdir_remove(dir);
    return check_done();
}
