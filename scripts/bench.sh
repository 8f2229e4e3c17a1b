#!/usr/bin/env bash
# make bench, second part: our tower per block beside PyTorch CPU's and OpenBLAS's sgemm, and the
# Metal kernels' performance model (measured too on a Mac), in one run on one checkpoint with the
# same threads (the machines are shared and noisy: compare the
# ratios, not the seconds across runs).
#   BENCH_CHECKPOINT  a checkpoint to use (default: a random qwen3-vl-8b one, generated here, ~1 GiB)
#   BENCH_PATCHES     patch counts (default 1024,5120)
#   BENCH_THREADS     threads for every side (default: every core)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ck=${BENCH_CHECKPOINT:-}
if [ -z "$ck" ]; then
  ck=$tmp/qwen3-vl-8b
  ./bin/inspector gen --preset qwen3-vl-8b --out "$ck"
fi
threads=${BENCH_THREADS:-$(getconf _NPROCESSORS_ONLN)}
./bin/inspector bench --checkpoint "$ck" --patches "${BENCH_PATCHES:-1024,5120}" --threads "$threads" \
  --residency mapped,pread --gemm --json "$tmp/ours.json"
echo
# The Metal kernels on the same checkpoint: the performance model on named Apple GPUs (on a Mac,
# the GPU's own times beside it).
./bin/inspector gpumodel --checkpoint "$ck" --patches "${BENCH_PATCHES:-1024,5120}"
echo
py=
for c in python3 /usr/bin/python3 /usr/local/bin/python3 /opt/homebrew/bin/python3; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import torch, numpy' >/dev/null 2>&1; then py=$c; break; fi
done
if [ -z "$py" ]; then
  py=$(command -v python3 || true)
  [ -n "$py" ] || { echo "bench anchors skipped: no python3"; exit 0; }
fi
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" scripts/bench_torch.py "$ck" --ours "$tmp/ours.json" --threads "$threads"
