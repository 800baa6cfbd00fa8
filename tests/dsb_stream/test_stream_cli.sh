#!/usr/bin/env bash
# CLI behaviour of `dsb stream` (seed 000, Sec. VIII): bad flags and values exit with status 2
# and say what was expected; a run prints one row a pass and writes its records as JSON; a
# Mattis run reports its known ground state.
set -u
DSB=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../cli_expect.sh"

S=("$DSB" stream --quiet)
expect 0 "usage: dsb stream" -- "$DSB" stream --help
expect 2 "--n: expected an integer" -- "${S[@]}" --n 1
expect 2 "--n: expected an integer" -- "${S[@]}" --n 2e7
expect 2 "--n: expected an integer" -- "${S[@]}" --n ten
expect 2 "--instance: expected mattis or random, got 'sk'" -- "${S[@]}" --instance sk
expect 2 "--replicas: expected an integer" -- "${S[@]}" --replicas 0
expect 2 "--replicas: expected an integer" -- "${S[@]}" --replicas 33
expect 2 "--updates: expected an integer" -- "${S[@]}" --updates 0
expect 2 "--dt: expected a number" -- "${S[@]}" --dt -1
expect 2 "--xi: expected a number" -- "${S[@]}" --xi inf
expect 2 "--backend: expected cpu or gpu" -- "${S[@]}" --backend tpu
expect 2 "--source: expected gen, host, udp or packet, got 'tape'" -- "${S[@]}" --source tape
expect 2 "--host-bytes, --host-threads: apply to --backend gpu --source host only" -- \
    "${S[@]}" --backend gpu --source udp --host-bytes 1M
expect 2 "apply to --source udp or packet only" -- "${S[@]}" --port 5000
expect 2 "apply to --source udp or packet only" -- "${S[@]}" --timeout 5
expect 2 "--port: expected an integer" -- "${S[@]}" --source udp --port 70000
expect 2 "unknown option '--transport'" -- "${S[@]}" --source udp --transport packet
expect 2 "--threads: applies to --source gen" -- "${S[@]}" --source udp --threads 2
expect 2 "--ring: expected a size of 1MiB .. 1TiB" -- "${S[@]}" --source udp --ring 512KiB
expect 2 "--ring: expected a size of 1MiB .. 1TiB" -- "${S[@]}" --source udp --ring 2TiB
expect 2 "--ring: expected a size" -- "${S[@]}" --source udp --ring lots
expect 2 "apply to --source udp or packet only" -- "${S[@]}" --ring 4MiB
expect 2 "--ring pass: applies to --backend gpu" -- "${S[@]}" --source udp --ring pass
expect 2 "--recv-threads: expected an integer" -- "${S[@]}" --source udp --recv-threads 0
expect 2 "--recv-threads: expected an integer" -- "${S[@]}" --source udp --recv-threads 17
expect 2 "apply to --source udp or packet only" -- "${S[@]}" --recv-threads 2
expect 2 "--recv-threads: more than 1 needs --source udp" -- "${S[@]}" --source packet --recv-threads 2
expect 2 "--recv-mode: expected shared, hash or queue, got 'tcp'" -- "${S[@]}" --source udp --recv-mode tcp
expect 2 "--recv-mode: expected shared, hash or queue, got ''" -- "${S[@]}" --source udp --recv-mode ''
expect 2 "--recv-mode: expected a value" -- "${S[@]}" --source udp --recv-mode
expect 2 "apply to --source udp or packet only" -- "${S[@]}" --recv-mode queue
expect 2 "--recv-mode hash: needs --source udp" -- "${S[@]}" --source packet --recv-mode hash
expect 2 "--recv-copy: applies to --recv-mode hash or queue" -- "${S[@]}" --source udp --recv-copy
expect 2 "--recv-copy: applies to --recv-mode hash or queue" -- "${S[@]}" --source udp \
    --recv-mode shared --recv-copy
expect 2 "apply to --source udp or packet only" -- "${S[@]}" --recv-copy
expect 1 "not a numeric IPv4 or IPv6 address" -- "${S[@]}" --source udp --bind 1.2.3 --port 0
# the generator's flags
expect 0 "usage: dsb stream-send" -- "$DSB" stream-send --help
expect 2 "--queues: expected an integer" -- "$DSB" stream-send --queues 65
expect 2 "--send-threads: expected an integer" -- "$DSB" stream-send --send-threads 0
expect 2 "--send-threads: expected an integer" -- "$DSB" stream-send --queues 8 --send-threads 65
expect 2 "--send-threads: expected an integer" -- "$DSB" stream-send --send-threads two
expect 2 "--send-threads: 3 threads for 2 queues: expected at most --queues" -- \
    "$DSB" stream-send --queues 2 --send-threads 3
expect 2 "--send-threads: 2 threads for 1 queues" -- "$DSB" stream-send --send-threads 2
expect 2 "--rate: expected a number" -- "$DSB" stream-send --rate 0
# the rate policy's flags (dsb_stream_rate_policy): the cap after a resend, the step up, the hold
expect 2 "--rate-down: expected a number in \[0.05, 0.95\], got '1'" -- "$DSB" stream-send --rate-down 1
expect 2 "--rate-down: expected a number in \[0.05, 0.95\], got '0'" -- "$DSB" stream-send --rate-down 0
expect 2 "--rate-down: expected a number in \[0.05, 0.95\], got 'half'" -- "$DSB" stream-send --rate-down half
expect 2 "--rate-down: expected a value" -- "$DSB" stream-send --rate-down
expect 2 "--rate-up: expected a number in \[0, 1\], got '-0.1'" -- "$DSB" stream-send --rate-up -0.1
expect 2 "--rate-up: expected a number in \[0, 1\], got '1.5'" -- "$DSB" stream-send --rate-up 1.5
expect 2 "--rate-up: expected a number in \[0, 1\], got 'nan'" -- "$DSB" stream-send --rate-up nan
expect 2 "--rate-hold: expected an integer" -- "$DSB" stream-send --rate-hold 1001
expect 2 "--rate-hold: expected an integer" -- "$DSB" stream-send --rate-hold -1
expect 2 "--rate-hold: expected an integer" -- "$DSB" stream-send --rate-hold 1.5
expect 2 "--rate-pace: expected an integer" -- "$DSB" stream-send --rate-pace 2
expect 2 "--rate-pace: expected an integer" -- "$DSB" stream-send --rate-pace yes
expect 0 "--rate-up F" -- "$DSB" stream-send --help
expect 1 "--json: cannot open" -- "$DSB" stream-send --json "$tmp/no/such/dir/s.json" --quiet
expect 2 "--transport: expected udp or packet" -- "$DSB" stream-send --transport tcp
expect 2 "unknown option '--replicas'" -- "$DSB" stream-send --replicas 4
expect 1 "not a numeric IPv4 or IPv6 address" -- "$DSB" stream-send --server localhost --quiet
expect 2 "--source host: applies to --backend gpu only" -- "${S[@]}" --source host
expect 2 "--blocks: applies to --backend gpu only" -- "${S[@]}" --blocks 64
expect 2 "--threads: applies to --backend cpu only" -- "${S[@]}" --backend gpu --threads 2
expect 2 "--host-bytes, --host-threads: apply to --backend gpu --source host only" -- \
    "${S[@]}" --host-bytes 1GiB
expect 2 "--host-bytes, --host-threads: apply to --backend gpu --source host only" -- \
    "${S[@]}" --backend gpu --source gen --host-threads 4
expect 2 "--host-bytes: expected" -- "${S[@]}" --backend gpu --source host --host-bytes lots
expect 2 "--check-cpu: applies to --backend gpu only" -- "${S[@]}" --check-cpu
expect 2 "unknown option '--bogus'" -- "${S[@]}" --bogus 1
expect 2 "unexpected argument 'extra'" -- "${S[@]}" extra
expect 2 "expected a value" -- "${S[@]}" --n
expect 1 "--json: cannot open" -- "${S[@]}" --n 100 --updates 1 --json "$tmp/no/such/dir/r.json"

# a run's records (every pass's energies and checksums) from its --json FILE
records() { grep -o '"energy2":\[[^]]*\]\|"checksum":\[[^]]*\]' "$1"; }

# a Mattis run: 4 updates = 5 passes, the ground state -n(n-1) = -8997000 reported
expect 0 "Mattis ground state 2E = -8997000: reached" -- "${S[@]}" --n 3000 --replicas 4 \
    --updates 4 --threads 2 --json "$tmp/m.json"
check "five table rows" [ "$(grep -cE '^ +[0-9]+ +(yes|no) ' "$tmp/out")" -eq 5 ]
check "the last pass does not update" grep -qE '^ +4 +no ' "$tmp/out"
check "five JSON records" [ "$(grep -o '"pass":' "$tmp/m.json" | wc -l)" -eq 5 ]
check "JSON: frames of a pass" grep -q '"frames_per_pass":3000' "$tmp/m.json"
check "JSON: the ground state" grep -q '"ground_energy2":-8997000' "$tmp/m.json"
check "JSON: no rejected frames" bash -c "! grep -qE '\"bad_frames\":[1-9]' '$tmp/m.json'"
# a random run: no ground state line, same answer with one or two threads
expect 0 "random n=200 B=2 K=3" -- "${S[@]}" --instance random --n 200 --replicas 2 \
    --updates 3 --threads 1 --json "$tmp/r1.json"
check "random: no ground-state line" bash -c "! grep -q 'Mattis' '$tmp/out'"
"${S[@]}" --instance random --n 200 --replicas 2 --updates 3 --threads 2 --json "$tmp/r2.json" \
    >/dev/null 2>&1
check "random: records independent of the thread count" \
    diff <(records "$tmp/r1.json") <(records "$tmp/r2.json")
# the port the receiver reports on stderr ($tmp/recv.err), waited for up to 10 s (empty if none)
wait_port() {
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's/.*receiving on port \([0-9]*\).*/\1/p' "$tmp/recv.err")
        [ -n "$port" ] && return
        sleep 0.1
    done
}
# a receiver in the background ($rpid) with these flags on a port the kernel picks, waited for
# ($port); recv.err removed first: wait_port must not read the port of an earlier receiver
start_receiver() {
    rm -f "$tmp/recv.err"
    "$DSB" stream --source udp --port 0 "$@" >"$tmp/recv.out" 2>"$tmp/recv.err" &
    rpid=$!
    wait_port
}
# over UDP loopback: a receiver on a port the kernel picks, a generator with two queues; the
# received run reaches the Mattis ground state and its records equal the in-process run's
start_receiver --n 2000 --replicas 2 --updates 3 --timeout 20 --quiet --json "$tmp/net.json"
check "the receiver says its port" [ -n "$port" ]
expect 0 "sent 8000 frames" -- "$DSB" stream-send --port "${port:-1}" --n 2000 --queues 2 --quiet \
    --rate-down 0.75 --rate-up 0.25 --rate-hold 3 --rate-pace 1 --json "$tmp/send.json"
wait "$rpid"
check "the receiver exits 0" [ $? -eq 0 ]
check "sender JSON: the rate policy" grep -q '"rate_down":0.75,"rate_up":0.25,"rate_hold":3,"rate_pace":1,"ok":true' "$tmp/send.json"
check "sender JSON: an attempt a pass (none sent again)" \
    [ "$(grep -o '"attempt":' "$tmp/send.json" | wc -l)" -eq 4 ]
check "sender JSON: the first attempt uncapped" \
    grep -q '"attempts":\[{"pass":0,"attempt":0,"frames":2000,[^}]*"cap_gbps":0,"resend":false,' "$tmp/send.json"
check "sender JSON: each attempt's PASS_END resends and answer time" \
    [ "$(grep -oE '"pass_end_resends":[0-9]+,"answer_s":[0-9.e-]+}' "$tmp/send.json" | wc -l)" -eq 4 ]
check "sender JSON: the run's PASS_END resends" grep -qE '"answers":[0-9]+,"pass_end_resends":[0-9]+,' "$tmp/send.json"
check "receiver JSON: PASS_ENDs that came again" grep -qE '"resends":0,"pass_end_resends":[0-9]+,' "$tmp/net.json"
check "received: the ground state" grep -q "Mattis ground state 2E = -3998000: reached" "$tmp/recv.out"
check "received: nothing rejected or sent again" grep -q "0 rejected, 0 passes sent again (0 frames missing" "$tmp/recv.out"
"${S[@]}" --n 2000 --replicas 2 --updates 3 --json "$tmp/gen.json" >/dev/null 2>&1
check "received records = in-process records" \
    diff <(records "$tmp/net.json") <(records "$tmp/gen.json")

# the same run through a ring of 1 MiB (256 frames; the pass is 2000) and three receiving threads
start_receiver --n 2000 --replicas 2 --updates 3 --timeout 20 --quiet \
    --ring 1MiB --recv-threads 3 --json "$tmp/ring.json"
expect 0 "sent" -- "$DSB" stream-send --port "${port:-1}" --n 2000 --queues 2 --quiet
wait "$rpid"
check "ring: the receiver exits 0" [ $? -eq 0 ]
check "ring: three threads, a CPU ring" grep -q "receiver: 3 threads; CPU ring of" "$tmp/recv.out"
check "ring: JSON says so" grep -q '"receive_buffer":"cpu-ring"' "$tmp/ring.json"
check "ring: received records = in-process records" \
    diff <(records "$tmp/ring.json") <(records "$tmp/gen.json")

# a socket a receiving thread (SO_REUSEPORT), queue q to thread q mod 3: six queues driven by two
# sending threads; through a ring of 4 MiB (1024 frames, more than a sending thread's turn of
# 64 frames of each of its 3 queues); frames received straight into the ring
start_receiver --n 2000 --replicas 2 --updates 3 --timeout 20 --quiet \
    --ring 4MiB --recv-threads 3 --recv-mode queue --json "$tmp/rq.json"
check "queue mode: the receiver says its port" [ -n "$port" ]
expect 0 "sent" -- "$DSB" stream-send --port "${port:-1}" --n 2000 --queues 6 --send-threads 2 --quiet
wait "$rpid"
check "queue mode: the receiver exits 0" [ $? -eq 0 ]
check "queue mode: a socket a thread" grep -q "sockets: one a thread (SO_REUSEPORT, queue mod threads)" "$tmp/recv.out"
check "queue mode: JSON says so" grep -q '"recv_mode":"queue"' "$tmp/rq.json"
check "queue mode: frames straight into the ring" grep -qE '"direct_frames":[1-9]' "$tmp/rq.json"
check "queue mode: every thread took datagrams" grep -qE '"thread_datagrams":\[[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*\]' "$tmp/rq.json"
check "queue mode: received records = in-process records" \
    diff <(records "$tmp/rq.json") <(records "$tmp/gen.json")
# the flow hash, every frame copied (--recv-copy)
start_receiver --n 2000 --replicas 2 --updates 3 --timeout 20 --quiet \
    --ring 4MiB --recv-threads 2 --recv-mode hash --recv-copy --json "$tmp/rh.json"
expect 0 "sent" -- "$DSB" stream-send --port "${port:-1}" --n 2000 --queues 4 --quiet
wait "$rpid"
check "hash mode: the receiver exits 0" [ $? -eq 0 ]
check "hash mode: JSON says so, no frame straight into the ring" \
    grep -q '"recv_mode":"hash","recv_copy":true,"direct_frames":0' "$tmp/rh.json"
check "hash mode: received records = in-process records" \
    diff <(records "$tmp/rh.json") <(records "$tmp/gen.json")
# a port taken by another receiver is refused, also with SO_REUSEPORT (no silent sharing)
start_receiver --n 2000 --updates 1 --timeout 5 --quiet
expect 1 "Address already in use" -- "${S[@]}" --source udp --port "${port:-1}" --n 2000 \
    --recv-mode queue --recv-threads 2 --ring 4MiB --timeout 1
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null

# stream files: an SK instance written once, streamed: the resident solver's answer
expect 0 "run id" -- "$DSB" stream-write "$tmp/sk.dsbs" --gen sk:n=300 --quiet
check "the file's size: 300 frames of 4096 B" [ "$(stat -c %s "$tmp/sk.dsbs")" -eq 1228800 ]
expect 0 "best energy" -- "$DSB" solve --gen sk:n=300 --replicas 3 --steps 15 --xi 0.04 --dt 1.1 --seed 8
want=$(sed -n 's/.*(2E = \(-*[0-9]*\),.*/\1/p' "$tmp/out")
expect 0 "best energy" -- "$DSB" solve --gen sk:n=300 --replicas 3 --steps 15 --xi 0.04 --dt 1.1 --seed 8 \
    --spins-out "$tmp/solve-spins.txt"
expect 0 "file n=300" -- "${S[@]}" --file "$tmp/sk.dsbs" --replicas 3 --updates 15 --xi 0.04 --seed 8 \
    --spins-out "$tmp/stream-spins.txt"
check "the file streamed gives the resident solve's 2E ($want)" \
    grep -qE "^ +15 +no +$want " "$tmp/out"
check "the streamed best spins = the resident solve's" cmp -s "$tmp/solve-spins.txt" "$tmp/stream-spins.txt"
check "300 spins written" [ "$(wc -l <"$tmp/stream-spins.txt")" -eq 300 ]
expect 1 "--spins-out: .*cannot open" -- "${S[@]}" --n 100 --updates 1 --spins-out "$tmp/no/dir/s.txt"
expect 0 "run id" -- "$DSB" stream-write "$tmp/m.dsbs" --n 500 --instance random --quiet
expect 2 "expected the OUT file" -- "$DSB" stream-write --n 500
expect 2 "expected one of --gen SPEC, --from FILE" -- "$DSB" stream-write "$tmp/x" --gen sk:n=8 --n 9
expect 2 "unknown option '--file'" -- "$DSB" stream-write "$tmp/x" --file "$tmp/m.dsbs"
expect 1 "a stream file holds dense +-1 couplings" -- "$DSB" stream-write "$tmp/x" --gen ternary:n=64
expect 1 "No such file" -- "$DSB" stream-write "$tmp/x" --from "$tmp/none.txt"
expect 2 "--file: the file sets n and the matrix" -- "${S[@]}" --file "$tmp/m.dsbs" --n 500
expect 1 "--file: .*the first frame: bad_ethertype" -- "${S[@]}" --file "$DSB"
head -c 100 "$DSB" >"$tmp/short"
expect 1 "--file: .*shorter than one 4096-byte frame" -- "${S[@]}" --file "$tmp/short"
expect 2 "--run-id: applies to --source udp or packet only" -- "${S[@]}" --run-id 1 --n 5
expect 2 "--run-id: expected 8 hex digits" -- "${S[@]}" --source udp --run-id x1 --n 5
expect 2 "--run-id: takes --n" -- "${S[@]}" --source udp --run-id 12
expect 2 "--run-id: a receiver's flag" -- "$DSB" stream-send --run-id 12 --n 5

# --backend gpu without a usable GPU (or without the CUDA build) fails with a message, status 1
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    expect 1 "dsb stream: " -- "${S[@]}" --backend gpu --n 100 --updates 1
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
