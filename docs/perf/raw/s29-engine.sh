#!/usr/bin/env bash
# Twenty-ninth session (lead), call 6: dak decode's GEMMs with a window of 2 HBM copies by default (the engine's
# gemm_hbm_window; call 5 found OPT-6.7B b8 -2.2 %, b64 +-0.1 %).  test_engine_gpu (its dak-decode-defaults variant now
# with the window), then the new default against --gemm-hbm-window 0 (the GEMMs' own choice: the old default),
# interleaved, two rounds: OPT-6.7B b1 / b4 / b8 and b8 at r = 20 %, Llama-2-7B b1 / b8 / b64.
# carry ["build-s29-carry"]; OUT=... bash docs/perf/raw/s29-engine.sh
set -u
export CUDA_MODULE_LOADING=EAGER
D=build-s29-carry; W=/tmp/s29; mkdir -p $W && tar -C $W -xJf $D/s29c6.tar.xz
R=/tmp/engine; mkdir -p $R; S=$R/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
t0=$SECONDS; timeout 200 $W/b/test_engine_gpu > $R/test_engine_gpu.txt 2>&1
echo "test_engine_gpu rc=$? $((SECONDS - t0)) s: $(grep -E 'passed, .* failed' $R/test_engine_gpu.txt | tail -1)" >> $S
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
dec() { local tag=$1 model=$2 b=$3 ratio=$4; shift 4
  timeout 80 $W/b/dak decode --model configs/$model --batch $b --prompt 8 --tokens 24 --ratios $ratio --baseline direct \
    "$@" --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT $(row $R/$tag.txt) ms" >> $S; }
for r in 1 2; do
  for c in "opt-6.7b 1 0" "opt-6.7b 4 0" "opt-6.7b 8 0" "opt-6.7b 8 20" "llama-2-7b 1 0" "llama-2-7b 8 0" "llama-2-7b 64 0"; do
    set -- $c
    dec r$r-$1-b$2-r$3-def $1 $2 $3
    dec r$r-$1-b$2-r$3-w0 $1 $2 $3 --gemm-hbm-window 0
  done
done
gzip -9 $R/*.json $R/test_engine_gpu.txt 2>/dev/null
echo "total ${SECONDS}s" >> $S; cat $S
tar -C /tmp -czf "$OUT/s29-engine.tgz" engine
