#!/usr/bin/env bash
# The one command of a session that is lent a GPU machine (docs/benchmarks.md, "The paper-shape step on a GPU"):
# the paper-shape step of each work with the training engine's speed levers side by side (eager fp32, eager
# bf16, + fused AdamW, + torch.compile, + the whole step in one micro-batch), on the GPU machine's own
# Python and PyTorch. Its figures go to results/benchmarks/paper_shape_step_levers.{csv,png}.
#
# Here, once, with the project's environment: the packages the GPU image lacks and MiniLM's tokenizer files
# (whose ids the synthetic texts use) into .device/ (git-ignored, a few hundred KB):
#     bash benchmarks/gpu_session.sh --prepare
# Then on the GPU machine, from the repository root, with .device carried along:
#     bash benchmarks/gpu_session.sh          # writes under $OUT, or results/benchmarks/ where OUT is unset
# BUDGET (seconds, default 420) stops starting new rows; every finished row is already in the CSV.
# CPU rehearsal of the same path (fp32, tiny shapes): bash benchmarks/gpu_session.sh --tiny
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--prepare" ]]; then
    python=.venv/bin/python
    version=$(sed -n 's/^pytorch-metric-learning==//p' requirements/constraints.txt)
    [[ -n "$version" ]] || { echo "gpu_session: no pytorch-metric-learning pin in requirements/constraints.txt" >&2; exit 2; }
    rm -rf .device && mkdir -p .device/wheels .device/tokenizer
    "$python" -m pip download -q --no-deps --only-binary=:all: -d .device/wheels "pytorch-metric-learning==$version" || exit 2
    PYTHONPATH="$PWD/src" "$python" - <<'EOF' || exit 2
import shutil
from pathlib import Path

from multivec.io.resources import resolve_model

source = Path(resolve_model("minilm"))
for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
    if (source / name).exists():
        shutil.copy(source / name, Path(".device/tokenizer") / name)
print(f"tokenizer files from {source}")
EOF
    du -sh .device
    exit 0
fi

if [[ ! -d .device/wheels || ! -f .device/tokenizer/tokenizer_config.json ]]; then
    echo "gpu_session: .device/ is missing: run 'bash benchmarks/gpu_session.sh --prepare' first, and carry .device" >&2
    exit 2
fi
out="${OUT:-results/benchmarks}"
mkdir -p "$out"
python=python3
[[ -x .venv/bin/python ]] && [[ "${1:-}" == "--tiny" ]] && python=.venv/bin/python  # the CPU rehearsal, here
if [[ "$python" == python3 ]]; then  # the GPU image: its own torch and transformers, plus the carried wheels
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/multivec_site \
        .device/wheels/*.whl || exit 2
    export PYTHONPATH="/tmp/multivec_site:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

if [[ "${1:-}" == "--tiny" ]]; then
    exec "$python" benchmarks/paper_shape_step.py --tiny --variants --works nugget subencoder \
        --tokenizer .device/tokenizer --out "$out/paper_shape_step_levers_tiny"
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  "$python" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
} | tee "$out/gpu_session_device.txt"
"$python" benchmarks/paper_shape_step.py --variants --warmup-steps 2 --steps 5 --budget-seconds "${BUDGET:-420}" \
    --tokenizer .device/tokenizer --out "$out/paper_shape_step_levers" 2>&1 | grep -v "it/s\]\|s/it\]" \
    | tee "$out/gpu_session.log"
