#!/bin/bash
# sixteenth session, call 4: (1) the stall reproduced with the old bench (--n 8 sizes B and C for N = 8; the wave
# section runs N = 64), cuda-gdb attached; (2) the new bench on the same command; the new GPU test of the bench
# sections; (3) test_gemm_split in full (with the operand extents) and --small
set -u
export CUDA_MODULE_LOADING=EAGER
O=/tmp/o4; mkdir -p $O
cd build-s16-carry && tar xzf a.tgz && cd ..
B=build-s16-carry/s16bin
bench() { # name bin args...: if stdout stops growing for 10 s, attach cuda-gdb, then kill it
  n=$1; shift; bin=$1; shift
  stdbuf -o0 $B/$bin bench gemm "$@" --json $O/$n.json > $O/$n.txt 2> $O/$n.err &
  pid=$!; last=0; still=0
  while kill -0 $pid 2>/dev/null; do
    sleep 1; sz=$(stat -c %s $O/$n.txt)
    if [ "$sz" = "$last" ]; then still=$((still+1)); else still=0; last=$sz; fi
    if [ $still -ge 10 ]; then
      echo "$n: stalled; gdb"
      timeout 90 cuda-gdb -batch -p $pid -ex "info cuda kernels" -ex "info cuda threads" \
         -ex "thread apply all bt" > $O/gdb-$n.txt 2>&1
      echo "gdb rc=$? lines $(wc -l < $O/gdb-$n.txt)"; head -c 4000 $O/gdb-$n.txt
      kill -9 $pid; break
    fi
  done
  wait $pid 2>/dev/null; echo "$n rc=$? last: $(grep -v '^$' $O/$n.txt | tail -1)"; grep "split:" $O/$n.err | head -3
}
W="--sections wave --shapes 2048x2048 --n 8 --reps 1"
bench old dak_old $W
bench new dak $W
bash tests/dak/test_bench_sections.sh $B/dak > $O/tbs.txt 2>&1; echo "test_bench_sections rc=$?"; tail -3 $O/tbs.txt
stdbuf -o0 $B/test_gemm_split > $O/full.txt 2> $O/full.err; echo "full rc=$? $(tail -1 $O/full.txt)"
grep -h "FAIL" $O/full.txt $O/full.err | head
timeout 100 stdbuf -o0 $B/test_gemm_split --small > $O/small.txt 2> $O/small.err; echo "small rc=$? $(tail -1 $O/small.txt)"
tar czf $OUT/o4.tgz -C /tmp o4
