#!/usr/bin/env bash
# session 20, call 3: deployments (--deploy, --ratios fit), small kernels as PDL (--pdl 2), the norm's L1 prefetch;
# c75 = c75a6bd's binary, new3 = this change
set -u
export CUDA_MODULE_LOADING=EAGER
C=build-s20-carry
cd "$(dirname "$0")/.." && (cd $C && tar xJf bins.tar.xz)
R=$OUT/r; mkdir -p $R
( time $C/new3/test_engine_gpu ) > $R/test_engine_gpu.log 2>&1; echo "test rc=$?" | tee -a $R/test_engine_gpu.log
grep -E "passed|failed|FAIL" $R/test_engine_gpu.log | tail -5
row() { grep -A3 '^   r %' $1 | tail -1; }
for round in 1 2; do
  for v in c75 new3-pdl1 new3-pdl2; do
    B=$C/c75/dak; P=1; [ $v != c75 ] && B=$C/new3/dak; [ $v = new3-pdl2 ] && P=2
    for mdl in opt-6.7b llama-2-7b; do
      $B decode --model configs/$mdl --batch 8 --ratios 0 --baseline direct --pdl $P --breakdown 5 --json $R/$mdl-$v-$round.json > $R/$mdl-$v-$round.txt 2>/dev/null
      echo "round $round $v $mdl: $(row $R/$mdl-$v-$round.txt)"
    done
  done
done
for P in 1 2; do
  $C/new3/dak decode --model configs/opt-6.7b --batch 8 --ratios 10 --baseline direct --pdl $P --json $R/opt-r10-pdl$P.json > $R/opt-r10-pdl$P.txt 2>/dev/null
  echo "r10 pdl $P: $(row $R/opt-r10-pdl$P.txt)"
done
$C/new3/dak decode --model configs/opt-6.7b --batch 8 --ratios 0,10 --deploy 1 --json $R/opt-deploy.json > $R/opt-deploy.txt 2>$R/opt-deploy.err; echo "deploy opt rc=$?"; tail -4 $R/opt-deploy.txt
$C/new3/dak decode --model configs/llama-2-7b --batch 8 --prompt 16 --tokens 16 --deploy 1 --gpu-mem 8GiB --ratios fit --json $R/llama-fit8.json > $R/llama-fit8.txt 2>$R/llama-fit8.err; echo "fit llama rc=$?"; grep -E "^fit|^deployment" $R/llama-fit8.txt; tail -2 $R/llama-fit8.txt
timeout 150 $C/new3/dak decode --model configs/opt-30b --batch 8 --prompt 8 --tokens 8 --deploy 1 --gpu-mem 24GiB --ratios fit --baseline direct --json $R/opt30-fit24.json > $R/opt30-fit24.txt 2>$R/opt30-fit24.err; echo "fit opt-30b rc=$?"; grep -E "^fit|^deployment" $R/opt30-fit24.txt; tail -2 $R/opt30-fit24.txt; tail -c 300 $R/opt30-fit24.err
cd $OUT && tar czf r.tgz r && rm -rf r
