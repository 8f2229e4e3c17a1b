#!/usr/bin/env bash
# make bench, second part: our tower per block beside the strongest CPU anchor this machine has
# (transformers' own Qwen3VLVisionModel on PyTorch, float32, sdpa; else a hand-written PyTorch
# tower, labelled as the fallback) and OpenBLAS's sgemm, and the Metal kernels' performance model
# (measured too on a Mac), in one run on one checkpoint with the same threads (the machines are
# shared and noisy: compare the ratios, not the seconds across runs).
#   BENCH_CHECKPOINT  a checkpoint to use (default: a random qwen3-vl-8b one, generated here, ~1 GiB)
#   BENCH_PATCHES     patch counts (default 1024,5120)
#   BENCH_THREADS     thread counts, each a run of both sides (default: every core), e.g. 2,8,16
#   BENCH_PASSES      1 (default): a pass per thread count with the detail (residencies, ops,
#                     GEMMs beside OpenBLAS and torch); 0: none
#   BENCH_PAIRS       rounds of ours and the anchor in pairs, seconds apart, every cell once a
#                     round (default 5; 0: none): the ratios to quote (median of the pairs, range)
#   BENCH_GEMM_PAIRS  1: each round also pairs our GEMMs with torch's F.linear and OpenBLAS's
#                     sgemm (numpy) at the fewest threads (the GEMM targets on the same footing)
#   BENCH_BIN         the inspector to run (default bin/inspector). On a machine without Go or
#                     cgo, carry the static build (make bin/static/inspector: no window, no cgo)
#                     and this folder's scripts: BENCH_BIN=bin/static/inspector scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BENCH_BIN:-./bin/inspector}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ck=${BENCH_CHECKPOINT:-}
if [ -z "$ck" ]; then
  ck=$tmp/qwen3-vl-8b
  "$bin" gen --preset qwen3-vl-8b --out "$ck"
fi
# The Metal kernels on the same checkpoint: the performance model on named Apple GPUs (on a Mac,
# the GPU's own times beside it).
"$bin" gpumodel --checkpoint "$ck" --patches "${BENCH_PATCHES:-1024,5120}"
echo
py=
for c in python3 /usr/bin/python3 /usr/local/bin/python3 /opt/homebrew/bin/python3; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import torch, numpy' >/dev/null 2>&1; then py=$c; break; fi
done
[ -n "$py" ] || py=$(command -v python3 || true)
IFS=, read -ra thread_counts <<<"${BENCH_THREADS:-$(getconf _NPROCESSORS_ONLN)}"
pass=0
[ "${BENCH_PASSES:-1}" = 0 ] && thread_counts=(none)
for threads in "${thread_counts[@]}"; do
  [ "$threads" = none ] && break
  pass=$((pass + 1))
  echo "== $threads threads"
  "$bin" bench --checkpoint "$ck" --patches "${BENCH_PATCHES:-1024,5120}" --threads "$threads" \
    --residency mapped,pread --gemm --json "$tmp/ours-$pass.json"
  echo
  if [ -z "$py" ]; then echo "bench anchors skipped: no python3"; continue; fi
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" scripts/bench_torch.py "$ck" --ours "$tmp/ours-$pass.json" --threads "$threads"
  echo
done
# Every pass's cells side by side, and the speed-up from the fewest threads to the most.
if [ -n "$py" ] && [ "$pass" -gt 1 ]; then
  passes=()
  for ((k = 1; k <= pass; k++)); do passes+=("$tmp/ours-$k.json"); done
  "$py" scripts/bench_torch.py --summary "${passes[@]}"
fi
# Ours and the anchor in pairs: the figures to quote (a pass above runs ours, then the anchor,
# minutes apart; here each pair is seconds apart and every cell's pairs span the whole run).
if [ -n "$py" ] && [ "${BENCH_PAIRS:-5}" != 0 ]; then
  echo
  "$py" scripts/bench_torch.py --pairs "$ck" --bin "$bin" --patches "${BENCH_PATCHES:-1024,5120}" \
    --threads "${BENCH_THREADS:-$(getconf _NPROCESSORS_ONLN)}" --rounds "${BENCH_PAIRS:-5}" \
    $([ "${BENCH_GEMM_PAIRS:-0}" = 1 ] && echo --gemm)
fi
