#!/usr/bin/env bash
# Installs the project into ./.venv on a fresh machine (CPU). Idempotent.
# torch first, pinned: 2.13.0 resolves to a local CPU wheel here, and an unpinned torch
# would pull several GB of CUDA packages; the project's range (<2.14) keeps it.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -c requirements/constraints.txt -e ".[test]"
.venv/bin/python -c "import multivec, torch, transformers, snakemake; print('installed: multivec', multivec.__version__, '| torch', torch.__version__, '| transformers', transformers.__version__)"
