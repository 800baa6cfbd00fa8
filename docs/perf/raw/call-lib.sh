# Sourced by the per-call scripts under docs/perf/raw/ (thirtieth session on): what every call on the lent H200
# repeated.  call_begin CARRY_TAR RESULT_DIR: unpacks the carried binaries (a tar.xz of folders, e.g. new/ head/)
# into $W and starts $R/summary.txt ($S) with the date, the GPU, its driver and clock; call_test NAME BIN [ARGS]:
# runs a test binary (200 s at most) and logs its pass line and any failure; bench TAG BIN ARGS...: one `dak bench
# gemm` run into $R/TAG.{txt,json}, logged; decode TAG BIN MODEL BATCH ARGS...: one `dak decode` at r = 0,
# deployed, into $R/TAG.{txt,json,err}, its TPOT (ms) logged (an environment assignment before it reaches the
# binary; thirty-third session); call_end NAME: gzips the JSON, tars $R into $OUT/NAME.tgz.
set -u
export CUDA_MODULE_LOADING=EAGER
call_begin() {
  W=/tmp/call-bin; R=$2; S=$R/summary.txt
  mkdir -p "$W" "$R" && tar -C "$W" -xJf "$1"
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$S" 2>&1
}
call_test() { local name=$1 bin=$2; shift 2; local t0=$SECONDS
  timeout 200 "$W/$bin/$name" "$@" > "$R/$name.txt" 2>&1
  echo "$name rc=$? $((SECONDS - t0)) s: $(grep -E 'passed, .* failed' "$R/$name.txt" | tail -1)" >> "$S"
  grep -m5 -i 'fail' "$R/$name.txt" | grep -v ' 0 failed' >> "$S"; }
bench() { local tag=$1 bin=$2; shift 2
  timeout 300 "$W/$bin/dak" bench gemm "$@" --json "$R/$tag.json" > "$R/$tag.txt" 2>&1
  echo "$tag rc=$? ${SECONDS}s: $bin $*" >> "$S"; }
decode() { local tag=$1 bin=$2 model=$3 b=$4; shift 4
  timeout 90 "$W/$bin/dak" decode --model "configs/$model" --batch "$b" --prompt 8 --tokens 24 --ratios 0 --deploy 1 \
    --baseline direct "$@" --json "$R/$tag.json" > "$R/$tag.txt" 2> "$R/$tag.err"
  echo "$tag rc=$? ${SECONDS}s: $bin $model b$b $* TPOT $(grep -A2 '^   r %' "$R/$tag.txt" | tail -1 | awk '{print $3}') ms" >> "$S"; }
call_end() {
  gzip -9 "$R"/*.json "$R"/test_*.txt 2>/dev/null
  echo "total ${SECONDS}s" >> "$S"; cat "$S"
  tar -C "$(dirname "$R")" -czf "$OUT/$1.tgz" "$(basename "$R")"
}
