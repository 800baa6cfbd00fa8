/* The model arguments `dak decode` and `dak ckpt` share: --model CONFIG (a config.json or a folder holding
 * one) or --tiny opt|llama (the test model), --layers N, and the weights (--weights PATH, or the checkpoint in
 * the --model folder, or synthetic); and the tokenizer `dak decode` and `dak tokenize` share (--tokenizer PATH,
 * or the tokenizer beside --model's config.json). */
#ifndef DAK_TOOL_MODEL_ARGS_H
#define DAK_TOOL_MODEL_ARGS_H

#include <stdint.h>

#include "dak/engine.h"
#include "dak/tokenizer.h"

/* The model of --model / --tiny (exactly one of them non-NULL), with the first `layers` layers (0: all); its
 * label (the config's path or "tiny ARCH") into label.  Messages on stderr under prog; 2 on bad input. */
int model_from_args(const char *prog, const char *model, const char *tiny, uint32_t layers, dak_eng_model *m,
                    char *label, size_t label_n);

/* The weights: --weights PATH ("synthetic": none), else a checkpoint beside --model's config.json
 * (model.safetensors.index.json or model.safetensors in its folder), else none (*ck NULL: synthetic).  The
 * checkpoint is opened and bound to m; messages on stderr under prog; 2 on bad input. */
int weights_from_args(const char *prog, const char *weights, const char *model, const dak_eng_model *m,
                      dak_eng_ckpt **ck);

/* The tokenizer: --tokenizer PATH (a tokenizer.json, a vocab.json with merges.txt beside it, or a folder holding
 * one), else the one in the folder of --model (a folder, or a config.json's folder), else none (*tok NULL; an
 * error when `required`).  In a folder: its tokenizer.json, else its vocab.json + merges.txt (GPT-2's older form,
 * OPT's; the special tokens from the folder's tokenizer_config.json etc.: dak_tok_load_bpe_folder).  Its path (the
 * tokenizer.json's or the vocab.json's) into path (path_n bytes).  Messages on stderr under prog; 2 when the file
 * is missing, 1 when it is refused (malformed, unsupported). */
int tokenizer_from_args(const char *prog, const char *tokenizer, const char *model, int required, dak_tok **tok,
                        char *path, size_t path_n);

#endif
