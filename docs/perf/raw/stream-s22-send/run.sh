#!/usr/bin/env bash
# Twenty-second session, helper (send): HEAD's generator (4a80710, the cap only halves) against
# this tree's (the cap rises again after clean passes: dsb_stream_rate_policy, defaults down 0.5,
# up 0.125, hold 2), UDP loopback on this machine into the GPU, Mattis n = 10^5, B = 8, K = 11
# (12 passes, so that a recovery shows), the sender 8 queues on 8 threads.  Rounds of:
#   queue8:  the receiver with 8 threads, a socket each (--recv-mode queue): the twenty-first
#            session's run in which 2 of 3 runs lost ~1 % of the first attempt at ~47 Gb/s;
#   shared4: 4 threads on one socket (its capacity between the half rung, ~30, and the
#            sender's ~60 Gb/s: where probing upward costs attempts).
# Each run uses one binary for both ends (the receivers of the two are the same code).  Before:
# this tree's test_stream_net_gpu (its cases replay the generator's caps through the policy).
# Results under $OUT: summary.txt and s22send.tar.xz (every run's receiver table, JSON, stderr,
# the sender's lines and, for this tree, its JSON with every attempt's cap).
set -uo pipefail
C=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out-s22send}
R=$OUT/s22send
mkdir -p "$R"
S=$R/summary.txt
: >"$S"
say() { echo "$*" | tee -a "$S"; }
T0=$(date +%s)
BUDGET=${BUDGET:-320}
left() { echo $((BUDGET - ($(date +%s) - T0))); }
W=/tmp/s22send-bins
mkdir -p "$W" && tar -C "$W" -xJf "$C/bins.tar.xz" || { say "untar failed"; exit 1; }
HEADB=$W/head/dsb-stream
NEWB=$W/new/dsb-stream
say "s22 send: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$S"
say "cpus $(nproc); kernel $(uname -r); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); rmem_max $(cat /proc/sys/net/core/rmem_max 2>/dev/null)"
t=$(date +%s)
timeout 90 "$W/new/test_stream_net_gpu" >"$R/test-net-gpu.log" 2>&1
say "test_stream_net_gpu (new): rc=$? in $(($(date +%s) - t)) s: $(grep -E 'passed, .* failed' "$R/test-net-gpu.log" | tail -1)"
grep -m 10 "CHECK(" "$R/test-net-gpu.log" | tee -a "$S" >/dev/null

kdrops() {
  local sn=0 v np
  if [ -r /proc/net/softnet_stat ]; then
    while read -r _ v _; do sn=$((sn + 16#$v)); done </proc/net/softnet_stat
  fi
  np=$(awk '/^Udp:/ { if (seen) { print $col; exit }
                      for (i = 1; i <= NF; i++) if ($i == "NoPorts") col = i; seen = 1 }' \
    /proc/net/snmp 2>/dev/null)
  echo "$sn $(cat /sys/class/net/lo/statistics/rx_dropped 2>/dev/null || echo 0) ${np:-0}"
}

# netrun LABEL BINARY "RECEIVER FLAGS" "SENDER FLAGS"
netrun() {
  local label=$1 bin=$2 rargs=$3 sargs=$4
  if [ "$(left)" -le 25 ]; then
    say "skipped (budget): $label"
    return
  fi
  local port=$((9500 + RANDOM % 400)) k0 k1
  k0=$(kdrops)
  # shellcheck disable=SC2086 # the flags: words on purpose
  timeout 60 "$bin" --backend "${BACKEND:-gpu}" --source udp --port $port --instance mattis --n "${NET_N:-100000}" \
    --replicas 8 --updates 11 --quiet --timeout 20 --json "$R/$label.json" $rargs \
    >"$R/$label.recv.txt" 2>"$R/$label.recv.err" &
  local rp=$! waited=0
  while ! grep -q "receiving on port" "$R/$label.recv.err" 2>/dev/null && kill -0 $rp 2>/dev/null &&
        [ $waited -lt 300 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  # shellcheck disable=SC2086
  timeout 60 "$bin" send --port $port --queues 8 --instance mattis --n "${NET_N:-100000}" $sargs \
    >"$R/$label.send.txt" 2>&1
  local sr=$?
  wait $rp
  local r=$?
  k1=$(kdrops)
  local a b
  read -r -a a <<<"$k0"
  read -r -a b <<<"$k1"
  say "rc=$r (send rc=$sr) [$label] receiver: $rargs; sender: --queues 8 $sargs"
  grep -E '^# [0-9]|^# received|^#   [0-9]* frames found|^# end to end|^# Mattis' "$R/$label.recv.txt" |
    sed 's/^/    /' | tee -a "$S" >/dev/null
  grep -E '^pass [0-9]+ attempt|^# sent|^# rate cap' "$R/$label.send.txt" | sed 's/^/    sender: /' |
    tee -a "$S" >/dev/null
  say "    kernel drops outside the socket: softnet $((b[0] - a[0])), lo rx_dropped $((b[1] - a[1])), udp no port $((b[2] - a[2]))"
}

Q8="--recv-threads 8 --recv-mode queue"
SH4="--recv-threads 4"
for round in 1 2 3; do
  say "--- round $round"
  if [ $((round % 2)) -eq 1 ]; then
    netrun r$round-head-queue8 "$HEADB" "$Q8" ""
    netrun r$round-new-queue8 "$NEWB" "$Q8" "--json $R/r$round-new-queue8.send.json"
    netrun r$round-head-shared4 "$HEADB" "$SH4" ""
    netrun r$round-new-shared4 "$NEWB" "$SH4" "--json $R/r$round-new-shared4.send.json"
  else
    netrun r$round-new-queue8 "$NEWB" "$Q8" "--json $R/r$round-new-queue8.send.json"
    netrun r$round-head-queue8 "$HEADB" "$Q8" ""
    netrun r$round-new-shared4 "$NEWB" "$SH4" "--json $R/r$round-new-shared4.send.json"
    netrun r$round-head-shared4 "$HEADB" "$SH4" ""
  fi
done
say "total $(($(date +%s) - T0)) s"
cp "$S" "$OUT/summary.txt"
tar -C "$OUT" -cJf "$OUT/s22send.tar.xz" s22send && rm -rf "$R"
exit 0
