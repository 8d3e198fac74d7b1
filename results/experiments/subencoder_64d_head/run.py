"""Where the 64-d SubEncoder's loss comes from (Table 5, claim S2): the 64-d bottleneck itself, or training
a new 64-d head jointly with the encoder on the demo's 502 training rows?

Every variant is scored by the pipeline's own evaluation (``multivec.subencoder.evaluation.retrieval.evaluate``, the
authors' protocol of Table 5) on PropSegment dev, against the same seed's trained full SubEncoder:

- ``full``: the trained full SubEncoder (384-d), as the pipeline trains it.
- ``joint_64``: the pipeline's 64-d SubEncoder (MLP 384 -> 384 -> 64 trained with the encoder), as Table 5.
- ``pca_64``: the full SubEncoder's outputs projected on their first 64 principal components, fitted on the
  TRAINING propositions (no dev text; ``multivec.subencoder.pca_projection``, Table 5's PCA row since).
- ``two_step_64``: the full SubEncoder's encoder and first head layer kept, frozen, and a new 384 -> 64 last
  layer trained on the same rows, loss, batches and steps (the two-step idea of Wang et al. 2023, whom the
  paper cites for the reduced dimension: train the encoder, then the low-dimensional pooler).

Run in a clone that built the full and 64-d models of one seed (``snakemake results/subencoder_table5.csv``):
``python results/experiments/subencoder_64d_head/run.py --seed 13 --out results/experiments/subencoder_64d_head``
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
from pathlib import Path

import torch
import yaml
from torch import nn

from multivec.io import write_csv
from multivec.subencoder.evaluation.retrieval import evaluate
from multivec.subencoder.model import SubEncoder
from multivec.subencoder.pca_projection import with_pca_projection
from multivec.subencoder.evaluation.retrieval_set import build_retrieval_set
from multivec.subencoder.training import SubEncoderTask, read_sentences
from multivec.training.engine import TrainConfig, train_task


def summary(result: dict) -> dict:
    """P@1 and R@5 under the authors' protocol, and the per-query scores for paired comparisons."""
    return {"metrics": {k: round(v, 2) for k, v in result["proposition"].items()}, "per_query": result["per_query"]}


class TwoStepTask(SubEncoderTask):
    """SubEncoderTask whose model is the trained full SubEncoder with a new last layer of ``dim`` outputs;
    only that layer trains."""

    def __init__(self, full: SubEncoder, dim: int, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.full, self.dim = full, dim

    def setup(self, out_dir, runtime, resuming):
        super().setup(out_dir, runtime, resuming)
        model = copy.deepcopy(self.full)
        torch.manual_seed(self.cfg.seed)
        model.head[2] = nn.Linear(model.head[2].in_features, self.dim)
        model.output_dim = self.dim
        model.config = dataclasses.replace(model.config, output_dim=self.dim)  # what SubEncoder.load rebuilds
        for name, parameter in model.named_parameters():
            parameter.requires_grad = name.startswith("head.2.")
        self.model = model

    def parameter_groups(self, cfg):
        return [{"params": [(n, p) for n, p in self.model.named_parameters() if n.startswith("head.2.")],
                 "lr": cfg.lr_scratch or cfg.lr}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--models", default="models/subencoder")
    parser.add_argument("--data", default="data/built/subencoder")
    parser.add_argument("--propsegment", default=None, help="PropSegment dev folder (default: the mirror's)")
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    config = yaml.safe_load(Path(args.config).read_text())["subencoder"]
    if args.propsegment is None:
        from multivec.io.resources import data_mirror

        args.propsegment = str(Path(data_mirror()) / "propsegment" / "v1")
    rs = build_retrieval_set(args.propsegment)
    full = SubEncoder.load(f"{args.models}/minilm_full/seed{args.seed}")
    results = {"full": summary(evaluate(full, rs))}
    joint = Path(f"{args.models}/minilm_d{args.dim}/seed{args.seed}")
    if joint.is_dir():
        results[f"joint_{args.dim}"] = summary(evaluate(SubEncoder.load(str(joint)), rs))
    train_rows = read_sentences(f"{args.data}/train.jsonl")
    projected, fit = with_pca_projection(full, train_rows, args.dim)
    results[f"pca_{args.dim}"] = {**summary(evaluate(projected, rs)), "fit": fit}
    train = {**config["train"], "seed": args.seed, "lr": config["model"]["backbones"][0]["lr"]}
    cfg = TrainConfig.from_dict({k: v for k, v in train.items() if k in TrainConfig.__dataclass_fields__})
    task = TwoStepTask(full, args.dim, full.config, cfg, train_rows, read_sentences(f"{args.data}/dev.jsonl"),
                       temperature=float(config["train"]["temperature"]))
    work = out / f"two_step_{args.dim}_seed{args.seed}"
    training = train_task(task, cfg, work)
    two_step = SubEncoder.load(str(work))
    results[f"two_step_{args.dim}"] = {**summary(evaluate(two_step, rs)), "training": training}
    (out / f"seed{args.seed}.json").write_text(json.dumps(results, indent=1))
    for name, result in results.items():
        print(name, result["metrics"])
    write_csv(out / f"seed{args.seed}_summary.csv", summary_rows(results, args.dim))
    write_csv(out / f"seed{args.seed}_comparisons.csv", comparisons(results, args.seed, args.dim))


def summary_rows(results: dict, dim: int) -> list[dict]:
    """One row per variant: its metrics (authors' protocol) and what it is."""
    notes = {"full": "the trained full SubEncoder (384-d), as Table 5",
             f"joint_{dim}": f"the trained {dim}-d SubEncoder, as Table 5 (the paper's recipe)",
             f"pca_{dim}": f"the full model projected on {dim} principal components of its training outputs "
                           "(Table 5's PCA row)",
             f"two_step_{dim}": f"the full model frozen, a new 384 -> {dim} last layer trained on the same rows, "
                                "loss and steps"}
    return [{"variant": name, "P@1": result["metrics"]["p@1"], "R@5": result["metrics"]["r@5"],
             "R@10": result["metrics"]["r@10"], "R@20": result["metrics"]["r@20"], "note": notes[name]}
            for name, result in results.items()]


def comparisons(results: dict, seed: int, dim: int) -> list[dict]:
    """Each pair of variants paired over the same 349 queries (Table 5's metrics): the difference, its 95%
    paired bootstrap CI and the randomization p, Holm-corrected over all pairs and metrics."""
    from multivec.statistics.resampling import paired_difference, with_holm
    from multivec.statistics.units import stack_seeds
    from multivec.subencoder.tables.units import retrieval_measurements

    stacks = stack_seeds([m for name, result in results.items()
                          for m in retrieval_measurements("table5", name, result, seed)])
    names = [n for n in ("full", f"joint_{dim}", f"pca_{dim}", f"two_step_{dim}") if n in results]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    rows = []
    for a, b in pairs:
        for metric in sorted({m for _, m in stacks}):
            d = paired_difference(stacks[(b, metric)], stacks[(a, metric)])
            rows.append({"variant": b, "against": a, "metric": metric, "difference": round(d.difference, 2),
                         "lo": round(d.lo, 2), "hi": round(d.hi, 2), "p": round(d.p, 4)})
    return with_holm(rows)


if __name__ == "__main__":
    main()
