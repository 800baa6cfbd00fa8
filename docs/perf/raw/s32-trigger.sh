#!/usr/bin/env bash
# Thirty-second session (lead), call 3.  Call 2 (s32-default2.sh): with k_whole on its full ring dak decode OPT-30B was
# +0.8 / +0.5 % a token at b1 / b8, +-0 at b32, -0.5 % at b64 against the split; in the breakdowns o_proj gained (b8
# -85 us, b64 -248 us over 48 layers) but the GEMM two kernels after each k_whole lost ~3 us a layer (ffn_in after
# o_proj -> norm: +128 / +170 us at b8 / b64; qkv after ffn_out -> norm at b8: +117 us), in both calls.  Guess: k_whole
# lets its dependents launch at its top (griddepcontrol.launch_dependents), and with 112 CTAs on 132 SMs the norm
# and then that GEMM's CTAs take the 20 idle SMs early.  Three builds of the same tree: t0 the trigger at the top (as
# landed), t1 once B's last copy is issued, t2 none (at exit); the engine at b1 / b8 / b64 with each and with the
# split (--gemm-whole 0), interleaved, two rounds (breakdowns in the first), and the GEMM bench's PDL graphs of
# 7168^2 (k_whole back to back) with each.
# Prediction: if the guess holds, t1 / t2 take the neighbours back to the split's times: b8 ~-0.6 %, b64 ~-1.3 % a
# token against the split; in the GEMM bench the late trigger costs k_whole its overlap with the next (+1-2 us).
# carry ["build-s32-carry"]; OUT=... bash docs/perf/raw/s32-trigger.sh
. docs/perf/raw/call-lib.sh
call_begin build-s32-carry/s32c3.tar.xz /tmp/trigger
row() { grep -A2 '^   r %' $1 | tail -1 | awk '{print $3}'; }
dec() { local tag=$1 bin=$2 b=$3; shift 3
  timeout 90 $W/$bin/dak decode --model configs/opt-30b --batch $b --prompt 8 --tokens 24 --ratios 0 --deploy 1 \
    --baseline direct "$@" --json $R/$tag.json > $R/$tag.txt 2> $R/$tag.err
  echo "$tag rc=$? ${SECONDS}s: TPOT $(row $R/$tag.txt) ms" >> $S; }
for r in 1 2; do
  for b in 1 8 64; do
    bk=""; [ $r = 1 ] && [ $b != 1 ] && bk="--breakdown 3"
    for t in t0 t1 t2; do dec r$r-b$b-$t $t $b $bk; done
    dec r$r-b$b-w0 t0 $b --gemm-whole 0 $bk
  done
done
for t in t0 t1 t2; do
  bench g-$t $t --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 1,8,16,32,48,64
done
bench g-w0 t0 --sections fixed --ratios 0 --reps 5 --shapes 7168x7168 --n 1,8,16,32,48,64 --whole 0
call_end s32-trigger
