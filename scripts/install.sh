#!/usr/bin/env bash
# Installs the project into ./.venv on a fresh machine (CPU). Idempotent.
# torch first, pinned: 2.13.0 resolves to a local CPU wheel here, and an unpinned torch
# would pull several GB of CUDA packages; the project's range (<2.14) keeps it.
#
# A CUDA torch instead (one GPU: config/gpu.yaml; paper scale), from a PyTorch wheel index:
#   TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128 bash scripts/install.sh
#   bash scripts/install.sh --cuda        # the same: the CUDA 12.8 wheels
# Pick the index of your driver's CUDA (https://pytorch.org/get-started/locally/). Only torch comes from
# that index (the same 2.13.0, built for CUDA, several GB); everything else as without it. Into an
# existing .venv with the CPU torch: remove .venv first (pip keeps an installed torch==2.13.0).
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH_VERSION=2.13.0
CUDA_INDEX_URL=https://download.pytorch.org/whl/cu128
for arg in "$@"; do
  case "$arg" in
    --cuda) TORCH_INDEX_URL=${TORCH_INDEX_URL:-$CUDA_INDEX_URL} ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument $arg (known: --cuda, --help)" >&2; exit 2 ;;
  esac
done
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if [ -n "${TORCH_INDEX_URL:-}" ]; then
  # Only the index: a local wheel folder (PIP_FIND_LINKS) may hold the CPU build of the same version.
  env -u PIP_FIND_LINKS .venv/bin/python -m pip install -q --index-url "$TORCH_INDEX_URL" "torch==$TORCH_VERSION"
else
  .venv/bin/python -m pip install -q "torch==$TORCH_VERSION"
fi
# test: the suite; bench: the speed benchmarks' anchors and the ONNX path, whose export check is a test;
# interop: MTEB (the exports target's MTEB results, and their tests)
.venv/bin/python -m pip install -q -c requirements/constraints.txt -e ".[test,bench,interop]"
.venv/bin/python -c "import multivec, torch, transformers, snakemake; print('installed: multivec', multivec.__version__, '| torch', torch.__version__, '(CUDA ' + str(torch.version.cuda) + ')' if torch.version.cuda else '(CPU)', '| transformers', transformers.__version__)"
