#!/usr/bin/env bash
# Thirty-sixth session, call 1: (a) the head's k_whole / k_whole_sw after dd58aeb's whole_start (not GPU-run in the
# thirty-fifth session): test_gemm_split --whole and test_engine_gpu on head/; (b) pa/ = head + s36-act.patch +
# s36-packr.patch: its test_gemm_split --whole (the two packed-A cases), then s36-packr.sh's benches and s36-act.sh's
# decodes (one round each of the decodes' four settings, the benches two rounds).  Predictions as in s36-act.sh and
# s36-packr.sh's headers.
. docs/perf/raw/call-lib.sh
call_begin build-s36-carry/s36.tar.xz /tmp/c1
call_test test_gemm_split head --whole
call_test test_gemm_split pa --whole
F="--sections fixed --ratios 0 --reps 5 --n 1,8,16,24,32,48,64"
for r in 1 2; do
  bench r$r-11008-def pa $F --shapes 11008x4096
  DAK_PACK_R=88 bench r$r-11008-p88k2 pa $F --shapes 11008x4096 --whole 1 --whole-swap 2 --kstep 2
  DAK_PACK_R=88 bench r$r-11008-p88k1 pa $F --shapes 11008x4096 --whole 1 --whole-swap 2 --kstep 1
  bench r$r-12288-def pa $F --shapes 12288x4096
  DAK_PACK_R=96 bench r$r-12288-p96k2 pa $F --shapes 12288x4096 --whole 1 --whole-swap 2 --kstep 2
  bench r$r-4096-def pa $F --shapes 4096x4096
  DAK_PACK_R=32 bench r$r-4096-p32 pa $F --shapes 4096x4096 --whole 1 --whole-swap 2
done
for r in 1 2; do
  for cfg in "0 0" "4 1" "8 1" "0 1"; do
    set -- $cfg; a=$1; lv=$2
    for sw in 1 0; do DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-l-b8-sw$sw-a$a-l$lv pa llama-2-7b 8 --gemm-whole-swap $sw; done
    DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-l-b1-a$a-l$lv pa llama-2-7b 1
    DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-o67-b8-a$a-l$lv pa opt-6.7b 8
    [ $r = 1 ] && DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-l-b32-a$a-l$lv pa llama-2-7b 32
    [ $r = 1 ] && DAK_ACT_CTAS=$a DAK_LEAVE=$lv decode r$r-o30-b8-a$a-l$lv pa opt-30b 8
  done
done
DAK_ACT_CTAS=4 DAK_LEAVE=1 timeout 120 $W/pa/dak decode --model configs/llama-2-7b --batch 8 --prompt 8 --tokens 24 \
  --ratios 0 --baseline direct --layers 8 --deploy 0 --gemm-whole-swap 0 --diag-times $R/st-b8-sw0-a4-l1-times.json \
  > $R/st-b8-sw0-a4-l1.txt 2>&1
echo "st-b8-sw0-a4-l1 rc=$? ${SECONDS}s" >> $S
call_test test_engine_gpu head
call_end c1
