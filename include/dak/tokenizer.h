/* dak's tokenizer: text to token ids and back, from a Hugging Face tokenizer.json (the file beside a model's
 * config.json), or from GPT-2's older pair vocab.json + merges.txt (OPT's model folders ship only that).  Pure C11;
 * the GPT-2 split pattern's Unicode classes come from a generated table (unicode_classes.h, Unicode 15.0); only the
 * NFC / NFKC / NFD / NFKD normalizers need ICU (libicuuc), in a build configured with -DDAK_TOKENIZER_ICU=ON.
 *
 * The model must be "BPE".  What runs is read from the file's own sections, in two flavours:
 *   SentencePiece style (Llama-2): normalizer Prepend("▁") + Replace(" " -> "▁"), or the pre-tokenizer
 *     Metaspace (replacement, add_prefix_space / prepend_scheme always|first|never, split); the BPE over the
 *     whole normalized text; a character missing from the vocabulary becomes its UTF-8 bytes as <0xXX> tokens
 *     (byte_fallback), else unk_token (consecutive ones fused with fuse_unk); decoder Replace / ByteFallback /
 *     Fuse / Strip, or Metaspace.
 *   GPT-2 byte level (OPT, GPT-2): pre-tokenizer ByteLevel: the text split by GPT-2's pattern
 *     ('s 't 're 've 'm 'll 'd, ' ?' letters, ' ?' numbers, ' ?' other, whitespace runs), each piece's bytes
 *     mapped to GPT-2's printable characters and the BPE run within it; decoder ByteLevel.
 * The BPE merges the adjacent pair of lowest rank (the index in `merges`, "a b" or ["a", "b"]) first, the
 * leftmost of equal ranks first, until no adjacent pair has a merge (a priority queue: O(n log n)).
 * Normalizers: Prepend, Replace (a string pattern), and with ICU NFC / NFKC / NFD / NFKD, in a Sequence.
 * added_tokens are matched literally in the raw text, longest first, before everything else (lstrip, rstrip,
 * single_word honoured); the text between them goes through normalizer, pre-tokenizer and BPE.  The file's
 * truncation and padding (batch settings) are ignored: nothing is cut.
 * post_processor: TemplateProcessing (its "single" template), RobertaProcessing / BertProcessing (cls A
 * sep), ByteLevel (nothing) or a Sequence of them: the ids around the text, added when add_special is set.
 *
 * Decoding follows the decoder chain; bytes that are not valid UTF-8 in the result (a character cut at the
 * end of a generation) become U+FFFD, as in Hugging Face's tokenizers.  Special tokens are decoded as their
 * text (nothing is skipped).
 *
 * Every function that can fail returns 0 or -1 with a message in err: what, where (the file's line:column,
 * the text's byte offset, the id's position), what was expected. */
#ifndef DAK_TOKENIZER_H
#define DAK_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dak_tok dak_tok;

typedef enum { DAK_TOK_SENTENCEPIECE, DAK_TOK_BYTE_LEVEL } dak_tok_flavour;

/* Loads a tokenizer.json.  Refuses malformed JSON, a model other than BPE, a merge naming a token not in the
 * vocabulary (or whose merged token is not in it), a duplicate id or merge, and any normalizer, pre-tokenizer,
 * post-processor or decoder this reader does not implement (named in the message). */
int dak_tok_load(dak_tok **t, const char *path, cm_err *err);
/* The same from text in memory; `name` labels the messages. */
int dak_tok_load_text(dak_tok **t, const char *json, size_t n, const char *name, cm_err *err);
void dak_tok_free(dak_tok *t);

/* A special or added token of a vocab.json + merges.txt pair: matched whole in the raw text before the BPE, as
 * tokenizer.json's added_tokens are. */
typedef struct {
    const char *text;                /* UTF-8, NUL-terminated, not empty */
    int32_t id;                      /* -1: vocab.json's id of the text (then it must be there) */
    int lstrip, rstrip, single_word; /* as in added_tokens */
    const char *named_by;            /* for messages: what named it ("tokenizer_config.json's 'bos_token'"), or NULL */
} dak_tok_added;

typedef struct {
    const dak_tok_added *added; /* n_added of them; texts and ids each once */
    size_t n_added;
    const char *bos;            /* put before the text when add_special (OPT's "</s>"); NULL: nothing */
    int add_prefix_space;       /* ByteLevel's add_prefix_space (GPT-2's and OPT's: 0) */
} dak_tok_bpe_opts;

/* GPT-2's byte-level BPE from its two files: vocab.json (a JSON object, token -> id) and merges.txt (an optional
 * first line "#version ...", then one merge "a b" a line, rank 0 first; a line for every merge, no blank ones).
 * The tokenizer is what a byte-level tokenizer.json with the same vocabulary and merges gives: pre-tokenizer
 * ByteLevel (GPT-2's split pattern, add_prefix_space from o), no unk_token, decoder ByteLevel, o's added tokens,
 * and o's bos (if any) before the text when add_special (a TemplateProcessing of one special token).  Refuses
 * (file:line) a merges line that is not two tokens separated by one space, a merge naming a token not in
 * vocab.json (or whose merged token is not in it), a duplicate merge or id, invalid UTF-8, a missing file, and an
 * added token or bos that is not in vocab.json without an id of its own.  o may be NULL (no added tokens, no
 * bos). */
int dak_tok_load_bpe_files(dak_tok **t, const char *vocab_path, const char *merges_path, const dak_tok_bpe_opts *o,
                           cm_err *err);
/* The same for the files of a Hugging Face model folder without a tokenizer.json: vocab_path's merges.txt beside
 * it, and the special tokens from the folder's special_tokens_map.json, tokenizer_config.json (bos_token,
 * eos_token, unk_token, sep_token, pad_token, cls_token, mask_token, additional_special_tokens, and
 * added_tokens_decoder's id -> token; special_tokens_map.json's wins) and added_tokens.json (token -> id), each
 * when present.  The bos goes first when tokenizer_config.json's add_bos_token is true, or, without that key,
 * when config.json's model_type is "opt" (OPT was trained with </s> first).  When no file names them, the tokens
 * are transformers' defaults: GPT-2's <|endoftext|> as bos, eos and unk; for model_type "opt", bos and eos
 * </s>, pad <pad>, unk <unk>; each only where vocab.json has it. */
int dak_tok_load_bpe_folder(dak_tok **t, const char *vocab_path, cm_err *err);

dak_tok_flavour dak_tok_flavour_of(const dak_tok *t);
/* "sentencepiece-bpe" or "byte-level-bpe" */
const char *dak_tok_flavour_name(const dak_tok *t);
/* One more than the largest id (the vocabulary's and the added tokens'). */
uint32_t dak_tok_n_ids(const dak_tok *t);
/* The token's text as the file spells it (NULL for an id outside the vocabulary); *len its bytes. */
const char *dak_tok_token(const dak_tok *t, int32_t id, size_t *len);
/* The id of a token's text (the vocabulary's or an added token's), or -1. */
int32_t dak_tok_id(const dak_tok *t, const char *token, size_t len);
/* Whether this build has Unicode normalization (NFC / NFKC / NFD / NFKD normalizers: ICU, -DDAK_TOKENIZER_ICU=ON). */
int dak_tok_have_normalization(void);

/* text[0..n) (UTF-8, checked: an invalid byte is refused with its offset) to ids; add_special: the
 * post-processor's ids (Llama's <s>, OPT's </s>) around them.  *ids is malloc'd (free it); *n_ids may be 0. */
int dak_tok_encode(const dak_tok *t, const char *text, size_t n, int add_special, int32_t **ids, size_t *n_ids,
                   cm_err *err);
/* ids to text (malloc'd, NUL-terminated; *len its bytes without the NUL, len may be NULL).  An id outside
 * the vocabulary is refused with its position. */
int dak_tok_decode(const dak_tok *t, const int32_t *ids, size_t n, char **text, size_t *len, cm_err *err);

#ifdef __cplusplus
}
#endif

#endif
