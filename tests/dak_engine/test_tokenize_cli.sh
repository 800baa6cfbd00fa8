#!/bin/bash
# dak tokenize: text to ids and back through a small hand-written tokenizer.json (Llama-2's sections; the ids worked
# out by hand as in test_tokenizer.c) and a small vocab.json + merges.txt pair (GPT-2's older form, OPT's folders);
# bad flags refused with status 2, bad files and text with status 1; and dak
# decode's --prompt-text / --tokenizer refused with status 2 (CPU; no GPU needed: every decode case fails before
# the engine starts).  Usage: test_tokenize_cli.sh DAK_BIN
dak=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
. "$(dirname "$0")/../cli_expect.sh"
out_is() { [ "$(cat "$tmp/out")" = "$1" ]; }

# ids: 0 <unk>, 1 <s>, 2 </s>, 3 <0x0A>, 4 ▁, 5 a, 6 b, 7 ▁a, 8 ab, 9 ▁ab; 5000 <big> (an added token past a small
# model's vocabulary).  merges: 0 "▁ a", 1 "a b", 2 "▁a b".
mkdir -p "$tmp/model"
cat > "$tmp/model/tokenizer.json" <<'EOF'
{"version": "1.0",
 "added_tokens": [{"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true},
                  {"id": 2, "content": "</s>", "special": true}, {"id": 5000, "content": "<big>", "special": true}],
 "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
 "pre_tokenizer": null,
 "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}}],
                    "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
 "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
             {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
 "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
           "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "▁": 4, "a": 5, "b": 6, "▁a": 7, "ab": 8, "▁ab": 9},
           "merges": ["▁ a", "a b", "▁a b"]}}
EOF
tok=$tmp/model/tokenizer.json
echo '{"model_type": "llama"}' > "$tmp/model/config.json"

# "ab ab" -> ▁ab▁ab: (▁,a) rank 0 twice, then (▁a,b) rank 2 twice -> 9, 9; <s> (1) first unless --add-special 0
expect 0 "1,9,9" -- "$dak" tokenize --tokenizer "$tok" --text "ab ab"
check "ids with <s>" out_is "1,9,9"
expect 0 "9,9" -- "$dak" tokenize --tokenizer "$tok" --text "ab ab" --add-special 0
check "ids without <s>" out_is "9,9"
expect 0 "9" -- "$dak" tokenize --model "$tmp/model" --text "ab" --add-special=0
check "--model DIR" out_is "9"
expect 0 "1,9" -- "$dak" tokenize --model "$tmp/model/config.json" --text "ab"
expect 0 "1,9" -- "$dak" tokenize --tokenizer "$tmp/model" --text "ab"
# "zb\n" -> ▁ z b \n: z unknown (<unk>), \n by its byte (<0x0A>)
expect 0 "4,0,6,3" -- "$dak" tokenize --tokenizer "$tok" --text "zb
" --add-special 0
printf 'ab\nab' > "$tmp/text"
expect 0 "1,9,3,8" -- "$dak" tokenize --tokenizer "$tok" --text-file "$tmp/text"
expect 0 "1,9,3,8" -- sh -c "\"$dak\" tokenize --tokenizer \"$tok\" --text-file - < \"$tmp/text\""
expect 0 "ms" -- "$dak" tokenize --tokenizer "$tok" --text "ab" --time
# decoding: Replace ▁ -> ' ', ByteFallback, Fuse, Strip one leading space
expect 0 "<s> ab ab" -- "$dak" tokenize --tokenizer "$tok" --ids 1,9,9
check "decoded text" out_is "<s> ab ab"
expect 0 "ab" -- "$dak" tokenize --tokenizer "$tok" --ids 9,3,8
check "decoded newline" out_is "ab
ab"
expect 0 "usage: dak tokenize" -- "$dak" tokenize --help
# bad flags: status 2
expect 2 "exactly one of --text" -- "$dak" tokenize --tokenizer "$tok"
expect 2 "exactly one of --text" -- "$dak" tokenize --tokenizer "$tok" --text a --ids 1
expect 2 "exactly one of --tokenizer PATH and --model DIR" -- "$dak" tokenize --text a
expect 2 "exactly one of --tokenizer PATH and --model DIR" -- "$dak" tokenize --text a --tokenizer "$tok" --model "$tmp/model"
expect 2 "--add-special" -- "$dak" tokenize --tokenizer "$tok" --text a --add-special 2
expect 2 "--add-special: expected it with --text" -- "$dak" tokenize --tokenizer "$tok" --ids 1 --add-special 1
expect 2 "--ids: expected comma-separated token ids" -- "$dak" tokenize --tokenizer "$tok" --ids 1,,2
expect 2 "--ids: expected comma-separated token ids" -- "$dak" tokenize --tokenizer "$tok" --ids x
expect 2 "--ids: expected comma-separated token ids" -- "$dak" tokenize --tokenizer "$tok" --ids -1
expect 2 "--ids: expected comma-separated token ids" -- "$dak" tokenize --tokenizer "$tok" --ids 3000000000
expect 2 "--ids: expected comma-separated token ids" -- "$dak" tokenize --tokenizer "$tok" --ids 1,
expect 2 "unknown option '--frobnicate'" -- "$dak" tokenize --tokenizer "$tok" --text a --frobnicate 1
expect 2 "--tokenizer: '$tmp/none.json' does not exist" -- "$dak" tokenize --tokenizer "$tmp/none.json" --text a
expect 2 "no tokenizer.json at '$tmp/tokenizer.json'" -- "$dak" tokenize --model "$tmp" --text a
expect 2 "--text-file: cannot open" -- "$dak" tokenize --tokenizer "$tok" --text-file "$tmp/none.txt"
# bad files and bad text: status 1, the message says what and where
printf '{"model": {"type": "Unigram", "vocab": []}}' > "$tmp/unigram.json"
expect 1 "unigram.json:1:11: model type 'Unigram': expected BPE" -- "$dak" tokenize --tokenizer "$tmp/unigram.json" --text a
printf '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a q"]}}' > "$tmp/merge.json"
expect 1 "'q' is not in the vocabulary" -- "$dak" tokenize --tokenizer "$tmp/merge.json" --text a
printf '{"model": {' > "$tmp/cut.json"
expect 1 "cut.json:1:12" -- "$dak" tokenize --tokenizer "$tmp/cut.json" --text a
expect 1 "id 5001 at position 1 is out of range: expected 0..5000" -- "$dak" tokenize --tokenizer "$tok" --ids 1,5001
expect 1 "id 10 at position 0 is no token" -- "$dak" tokenize --tokenizer "$tok" --ids 10
expect 1 "invalid UTF-8 at byte 1 (0xff)" -- "$dak" tokenize --tokenizer "$tok" --text "$(printf 'a\377')"

# GPT-2's older pair in a model folder (OPT's form), no tokenizer.json: ids 0 a, 1 b, 2 c, 3 ab, 4 bc, 5 abc, 6 Ġ,
# 7 Ġa, 8 </s>, 9 <pad>; merges (rank = line - 2): 0 "b c", 1 "a b", 2 "a bc", 3 "Ġ a".  model_type opt and no
# tokenizer_config.json: </s> (8) first, </s> and <pad> special.
mkdir -p "$tmp/opt"
printf '{"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "Ġ": 6, "Ġa": 7, "</s>": 8, "<pad>": 9}' > "$tmp/opt/vocab.json"
printf '#version: 0.2\nb c\na b\na bc\nĠ a\n' > "$tmp/opt/merges.txt"
echo '{"model_type": "opt"}' > "$tmp/opt/config.json"
# "abc": (b,c) 0, then (a,bc) 2 -> abc; " abc" -> Ġ abc; " cab" -> Ġ c ab (neither (Ġ,c) nor (c,a) has a merge)
expect 0 "8,5" -- "$dak" tokenize --model "$tmp/opt" --text "abc"
check "vocab.json + merges.txt found in --model DIR" out_is "8,5"
expect 0 "8,6,5,6,2,3" -- "$dak" tokenize --tokenizer "$tmp/opt" --text " abc cab"
expect 0 "5,8,9" -- "$dak" tokenize --tokenizer "$tmp/opt/vocab.json" --text "abc</s><pad>" --add-special 0
expect 0 "8,5" -- "$dak" tokenize --model "$tmp/opt/config.json" --text "abc"
expect 0 "</s> aabc" -- "$dak" tokenize --tokenizer "$tmp/opt" --ids 8,7,5
check "pair decoded" out_is "</s> aabc"
expect 0 "opt/vocab.json (byte-level-bpe, 10 ids)" -- "$dak" tokenize --tokenizer "$tmp/opt" --text a --time
# a tokenizer.json beside them wins
mkdir -p "$tmp/both" && cp "$tmp/opt/"* "$tmp/both/" && cp "$tok" "$tmp/both/"
expect 0 "1,9" -- "$dak" tokenize --model "$tmp/both" --text "ab"
# refused: status 1, what and where
mkdir -p "$tmp/nomerges" && cp "$tmp/opt/vocab.json" "$tmp/nomerges/"
expect 1 "nomerges/vocab.json: no merges.txt beside it" -- "$dak" tokenize --tokenizer "$tmp/nomerges" --text a
# pair_refused NAME VOCAB MERGES PATTERN: the folder NAME with these vocab.json and merges.txt (printf format) is
# refused by dak tokenize --model NAME with status 1 and PATTERN
pair_refused() {
    mkdir -p "$tmp/$1" && printf '%s' "$2" > "$tmp/$1/vocab.json" && printf "$3" > "$tmp/$1/merges.txt"
    expect 1 "$4" -- "$dak" tokenize --model "$tmp/$1" --text a
}
v=$(cat "$tmp/opt/vocab.json")
pair_refused three "$v" '#version: 0.2\nb c\na b c\n' "three/merges.txt:3:1: merge 1 'a b c': expected two tokens separated by one space"
pair_refused unknown "$v" 'a q\n' "unknown/merges.txt:1:1: merge 0 ('a', 'q'): 'q' is not in the vocabulary"
pair_refused dupid '{"a": 0, "b": 0}' 'a b\n' "dupid/vocab.json:1:15: vocab: id 0 given to both 'a' and 'b'"
mkdir -p "$tmp/empty"
expect 2 "--tokenizer: no tokenizer.json at '$tmp/empty/tokenizer.json' (nor a vocab.json + merges.txt)" -- "$dak" tokenize --tokenizer "$tmp/empty" --text a

# dak decode: --prompt-text and --tokenizer (refused before the engine starts)
expect 2 "--prompt-text and --prompt-ids: expected one of them" -- "$dak" decode --tiny llama --tokenizer "$tok" --prompt-text ab --prompt-ids 1,2
expect 2 "no tokenizer: expected --tokenizer PATH" -- "$dak" decode --tiny llama --prompt-text ab
expect 2 "--model: no tokenizer.json at '$tmp/tokenizer.json'" -- "$dak" decode --model "$tmp" --prompt-text ab
expect 2 "--tokenizer: '$tmp/none.json' does not exist" -- "$dak" decode --tiny llama --tokenizer "$tmp/none.json"
expect 2 "model type 'Unigram': expected BPE" -- "$dak" decode --tiny llama --tokenizer "$tmp/unigram.json" --prompt-text ab
expect 2 "--prompt-text: text: invalid UTF-8 at byte 0 (0xff)" -- "$dak" decode --tiny llama --tokenizer "$tok" --prompt-text "$(printf '\377')"
expect 2 "--prompt-text: token 5000 (position 2): expected 0..999" -- "$dak" decode --tiny llama --tokenizer "$tok" --prompt-text "ab<big>"
expect 2 "--prompt 5 and --prompt-text of 3 tokens" -- "$dak" decode --tiny llama --tokenizer "$tok" --prompt-text "ab ab" --prompt 5
expect 2 "--prompt-text" -- "$dak" decode --tiny llama --tokenizer "$tok" --prompt-text
# a bad tokenizer.json found beside the model (not asked for) is said and left unused: decode goes on to the model
mkdir -p "$tmp/badmodel" && cp "$tmp/unigram.json" "$tmp/badmodel/tokenizer.json"
expect 2 "left unused: prompts and outputs stay token ids" -- "$dak" decode --model "$tmp/badmodel" --prompt-ids 1
expect 2 "badmodel/config.json" -- "$dak" decode --model "$tmp/badmodel" --prompt-ids 1
expect 2 "model type 'Unigram': expected BPE" -- "$dak" decode --model "$tmp/badmodel" --prompt-text ab
# the pair: --prompt-text "abc" is </s> abc, two tokens; a folder whose vocab.json lacks its merges.txt is left unused
expect 2 "--prompt 5 and --prompt-text of 2 tokens" -- "$dak" decode --tiny opt --tokenizer "$tmp/opt" --prompt-text abc --prompt 5
expect 2 "no merges.txt beside it" -- "$dak" decode --tiny opt --tokenizer "$tmp/nomerges/vocab.json" --prompt-text abc
echo '{"model_type": "opt"}' > "$tmp/nomerges/config.json"
expect 2 "left unused: prompts and outputs stay token ids" -- "$dak" decode --model "$tmp/nomerges" --prompt-ids 1
expect 0 "--prompt-text TEXT" -- "$dak" decode --help
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
