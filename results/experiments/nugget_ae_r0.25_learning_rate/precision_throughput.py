"""Would a faster training step buy Fig. 4's AE BLEU target back? (this folder's README, *What it costs*)

Trains the AE r = 0.25 zoo model from the shared base for ``steps`` steps at the 1500-step run's settings
(lr 1e-3, batch 16, one thread), once in float32 and once under CPU bfloat16 autocast, and writes each
10-step window's training throughput (the engine's own ``tokens_per_s`` column, which times only the
training steps) and dev loss to a CSV. Beside it (``OUT`` with ``.json``) it counts the WordPieces that occur in
the training targets: the output layer a vocabulary cut to them would keep. The engine refuses ``train.precision: bf16`` off CUDA
(``multivec.training.distributed.check_precision``); this script lifts that refusal for the measurement
only, and trains into a scratch folder.

    PYTHONPATH=src OMP_NUM_THREADS=1 python precision_throughput.py MODEL_DIR BASE_DIR AE_CORPUS_DIR OUT.csv [steps]

MODEL_DIR: a trained AE r = 0.25 model folder (its config.json gives the model and training settings).
"""

from __future__ import annotations

import csv
import json
import sys
import tempfile
from pathlib import Path

import multivec.training.distributed as distributed
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.training import train
from multivec.training.engine import TrainConfig


def target_vocabulary(model_dir: str, corpus_dir: str) -> dict[str, int]:
    """How many of the target vocabulary's pieces the training targets use (the model's own tokenizer)."""
    from transformers import AutoTokenizer

    from multivec.io import read_jsonl

    tokenizer = AutoTokenizer.from_pretrained(Path(model_dir) / "source_tokenizer")
    seen: set[int] = set()
    tokens = 0
    for row in read_jsonl(Path(corpus_dir) / "train.jsonl"):
        ids = tokenizer(row["target"])["input_ids"]
        seen.update(ids)
        tokens += len(ids)
    return {"vocabulary": len(tokenizer), "pieces_in_train_targets": len(seen), "train_target_tokens": tokens}


def main(model_dir: str, base_dir: str, corpus_dir: str, out_csv: str, steps: int = 40) -> None:
    Path(out_csv).with_suffix(".json").write_text(json.dumps(target_vocabulary(model_dir, corpus_dir), indent=1) + "\n")
    saved = json.loads((Path(model_dir) / "config.json").read_text())
    rows = []
    refuse_off_cuda = distributed.check_precision
    distributed.check_precision = lambda precision, device: None  # the measurement only; see the docstring
    try:
        for precision in ("fp32", "bf16"):
            settings = {**saved["train"], "max_steps": steps, "eval_every": 10, "checkpoint_every": 10**6,
                        "precision": precision, "eval_at_start": False, "threads": 1}
            with tempfile.TemporaryDirectory() as scratch:
                summary = train(NuggetConfig(**saved["model"]), TrainConfig(**settings),
                                Path(corpus_dir) / "train.jsonl", Path(corpus_dir) / "dev.jsonl", scratch,
                                init_from=base_dir)
                with open(Path(scratch) / "metrics.csv") as handle:
                    for row in csv.DictReader(handle):
                        rows.append({"precision": precision, "step": row["step"], "dev_loss": row["dev_loss"],
                                     "tokens_per_s": row["tokens_per_s"],
                                     "train_minutes": summary["train_minutes"]})
    finally:
        distributed.check_precision = refuse_off_cuda
    with open(out_csv, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main(*sys.argv[1:5], *(int(a) for a in sys.argv[5:6]))
