#!/usr/bin/env bash
# Twenty-fourth session, lead: the sender's rate policy with the cap kept at the rate seen free
# (--rate-pace 1) and a longer plateau hold (--rate-hold 8), against the defaults (pace 0,
# hold 2), one binary, UDP loopback into the GPU, Mattis n = 10^5, B = 8, K = 11 (12 passes),
# the sender 8 queues on 8 threads; receivers: queue8 (8 threads, a socket each) and shared4
# (4 threads on one socket).  Rounds interleaved.  Before: test_stream_net_gpu.
set -uo pipefail
C=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out-s24}
R=$OUT/s24stream
mkdir -p "$R"
S=$R/summary.txt
: >"$S"
say() { echo "$*" | tee -a "$S"; }
T0=$(date +%s)
BUDGET=${BUDGET:-290}
left() { echo $((BUDGET - ($(date +%s) - T0))); }
W=/tmp/s24-bins
mkdir -p "$W" && tar -C "$W" -xJf "$C/stream-bins.tar.xz" || { say "untar failed"; exit 1; }
B=$W/dsb-stream
say "s24 stream: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$S"
say "cpus $(nproc); kernel $(uname -r); rmem_max $(cat /proc/sys/net/core/rmem_max 2>/dev/null)"
t=$(date +%s)
timeout 60 "$W/test_stream_net_gpu" >"$R/test-net-gpu.log" 2>&1
say "test_stream_net_gpu: rc=$? in $(($(date +%s) - t)) s: $(grep -E 'passed, .* failed' "$R/test-net-gpu.log" | tail -1)"

netrun() {
  local label=$1 rargs=$2 sargs=$3
  if [ "$(left)" -le 14 ]; then say "skipped (budget): $label"; return; fi
  local port=$((9500 + RANDOM % 400))
  # shellcheck disable=SC2086
  timeout 40 "$B" --backend gpu --source udp --port $port --instance mattis --n 100000 \
    --replicas 8 --updates 11 --quiet --timeout 20 --json "$R/$label.json" $rargs \
    >"$R/$label.recv.txt" 2>"$R/$label.recv.err" &
  local rp=$! waited=0
  while ! grep -q "receiving on port" "$R/$label.recv.err" 2>/dev/null && kill -0 $rp 2>/dev/null &&
        [ $waited -lt 300 ]; do sleep 0.1; waited=$((waited + 1)); done
  # shellcheck disable=SC2086
  timeout 40 "$B" send --port $port --queues 8 --instance mattis --n 100000 $sargs \
    --json "$R/$label.send.json" >"$R/$label.send.txt" 2>&1
  local sr=$?
  wait $rp
  local r=$?
  say "rc=$r (send rc=$sr) [$label] receiver: $rargs; sender: $sargs"
  grep -E '^# end to end|^# [0-9]+ frames' "$R/$label.recv.txt" | sed 's/^/    /' | tee -a "$S" >/dev/null
  grep -E '^# sent|^# rate cap' "$R/$label.send.txt" | sed 's/^/    sender: /' | tee -a "$S" >/dev/null
}
Q8="--recv-threads 8 --recv-mode queue"
SH4="--recv-threads 4"
V0=""; V1="--rate-pace 1"; V2="--rate-hold 8"; V3="--rate-pace 1 --rate-hold 8"
for round in 1 2 3; do
  say "--- round $round"
  if [ $((round % 2)) -eq 1 ]; then order="0 1 2 3"; else order="3 2 1 0"; fi
  for v in $order; do eval "f=\$V$v"; netrun r$round-v$v-queue8 "$Q8" "$f"; done
  for v in $order; do eval "f=\$V$v"; netrun r$round-v$v-shared4 "$SH4" "$f"; done
done
say "total $(($(date +%s) - T0)) s"
cp "$S" "$OUT/summary.txt"
tar -C "$OUT" -cJf "$OUT/s24stream.tar.xz" s24stream && rm -rf "$R"
exit 0
