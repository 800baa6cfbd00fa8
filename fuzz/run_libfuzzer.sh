#!/usr/bin/env bash
# Builds the decoder, store and stream fuzz targets with libFuzzer, ASan and UBSan
# (clang) and runs each for SECONDS (default 60), starting from a seed corpus
# written by the standalone driver.  Usage: fuzz/run_libfuzzer.sh [SECONDS] [OUTDIR]
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$root/build-fuzz}
mkdir -p "$out"
CC=${CC:-clang}
# src/dsb/*.c holds the codec (wire.c) and the streaming reference (stream.c)
srcs=("$root"/src/common/*.c "$root"/src/dsb/*.c "$root"/src/dsb/gpu/stub.c
      "$root"/src/dsb/service/store.c)
[ -f "$root/src/dsb/gpu/common.c" ] && srcs+=("$root/src/dsb/gpu/common.c")
flags=(-std=c11 -D_GNU_SOURCE -O1 -g -ffp-contract=off -mpopcnt -I"$root/include"
       -fno-sanitize-recover=undefined)
for t in decoder store stream; do
    "$CC" "${flags[@]}" -fsanitize=fuzzer,address,undefined "$root/fuzz/fuzz_$t.c" "${srcs[@]}" \
        -lpthread -lm -o "$out/libfuzzer_$t"
    "$CC" "${flags[@]}" -fsanitize=address,undefined "$root/fuzz/fuzz_$t.c" "$root/fuzz/fuzz_main.c" \
        "${srcs[@]}" -lpthread -lm -o "$out/seed_$t"
    rm -rf "$out/corpus_$t" && mkdir -p "$out/corpus_$t"
    "$out/seed_$t" --write-corpus "$out/corpus_$t"
    echo "== $t: libFuzzer for $secs s"
    "$out/libfuzzer_$t" -max_total_time="$secs" -max_len=4096 -print_final_stats=1 \
        "$out/corpus_$t" 2>&1 | tee "$out/log_$t.txt" | grep -E "stat::|#[0-9]+.*DONE|ERROR|SUMMARY" || true
done
