#!/usr/bin/env bash
# One call on the lent H200 for the dak planner (issue 8): build the dak tool
# (only that target) and record the machine profile that `dak plan --profile`
# reads.  Output lands in $OUT (profile JSON, the table, the build log).
set -u
OUT=${OUT:-/tmp/planner-out}
mkdir -p "$OUT"
B=build-planner-gpu
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,pcie.link.gen.max,pcie.link.width.max \
  --format=csv > "$OUT/gpu.txt" 2>&1
DAK=""
if cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
   cmake --build $B -j16 --target dak >> "$OUT/build.log" 2>&1; then
  DAK=$B/tools/dak/dak
else
  # Another area's half-written code must not stop the profile: build the
  # profiler alone with nvcc.
  echo "cmake build of dak failed; direct nvcc build" | tee -a "$OUT/build.log"
  mkdir -p /tmp/pf && cat > /tmp/pf/main.c <<'EOC'
#include "commands.h"
int main(int argc, char **argv) { return cmd_profile(argc - 1, argv + 1); }
EOC
  nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -Iinclude -Itools/dak -o /tmp/pf/dakprof \
    /tmp/pf/main.c tools/dak/cmd_profile.c src/common/*.c src/dak/planner/model_config.c \
    src/dak/planner/planner.c src/dak/planner/profile.c src/dak/planner/profile_gpu.cu \
    -lcublas >> "$OUT/build.log" 2>&1 && DAK="/tmp/pf/dakprof"
fi
[ -z "$DAK" ] && { tail -40 "$OUT/build.log"; exit 1; }
set -o pipefail
$DAK profile --out "$OUT/h200-profile.json" --reps 7 2>&1 | tee "$OUT/profile.txt"
