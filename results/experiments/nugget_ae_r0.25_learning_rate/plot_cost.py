"""What reconstruction costs: dev loss and Fig. 4's BLEU of every run here against the training documents it
read (steps x batch size), the quantity that sets its CPU time. Left: dev loss at each evaluation (the
unigram model of the targets as a line). Right: BLEU on the 0-100 scale with its 95% CI over the 64 documents
where the decodes are kept (``bleu_cis.csv``), the AE BLEU target (50) and the round-trip ceiling as lines.

    PYTHONPATH=src python results/experiments/nugget_ae_r0.25_learning_rate/plot_cost.py [OUT.png]

Every number is read from this folder's files (``metrics_<run>.csv``, ``bleu_<run>.json``, ``bleu_cis.csv``)
and each run's batch size from its overlay (the demo's ``train.batch_size`` where the overlay sets none).
"""

import json
import sys
from pathlib import Path

import pandas as pd
import yaml

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[2] / "config" / "config.yaml"
TARGET_BLEU = 50.0  # the AE BLEU target: r = 0.25 reaches >= 0.5 (0-1 scale)

# (label, file stem of metrics_/bleu_, overlay, row of bleu_cis.csv or None). The demo's own model (lr 1e-4,
# 60 steps) has no files here but its row of bleu_cis.csv: it is drawn on the BLEU panel only.
DEMO = ("lr 1e-4, 60 x 16 (the demo)", "lr1e-4_60_steps")
RUNS = [
    ("lr 3e-4, 60 x 16", "lr3e-4_60_steps", "lr3e-4_60_steps.yaml", None),
    ("lr 1e-3, 60 x 16", "lr1e-3_60_steps", "lr1e-3_60_steps.yaml", None),
    ("lr 1e-3, 300 x 16", "lr1e-3_300_steps", "lr1e-3_300_steps.yaml", "lr1e-3_300_steps"),
    ("lr 3e-3, 300 x 16 (Xeon host)", "lr3e-3_300_steps", "lr3e-3_300_steps.yaml", None),
    ("lr 1e-3, 1000 x 16, seed 13", "lr1e-3_1000_steps_seed13", "lr1e-3_1000_steps.yaml", "lr1e-3_1000_steps_seed13"),
    ("lr 1e-3, 1000 x 16, seed 14", "lr1e-3_1000_steps_seed14", "lr1e-3_1000_steps.yaml", "lr1e-3_1000_steps_seed14"),
    ("lr 1e-3, 1500 x 16, seed 13", "lr1e-3_1500_steps_seed13", "lr1e-3_1500_steps.yaml", "lr1e-3_1500_steps_seed13"),
    ("lr 1e-3, 1500 x 16, seed 14", "lr1e-3_1500_steps_seed14", "lr1e-3_1500_steps.yaml", "lr1e-3_1500_steps_seed14"),
    ("lr 1e-3, 1000 x 8, seed 13", "lr1e-3_1000_steps_batch8_seed13", "lr1e-3_1000_steps_batch8.yaml",
     "lr1e-3_1000_steps_batch8_seed13"),
    ("lr 1e-3, 1000 x 8, seed 14", "lr1e-3_1000_steps_batch8_seed14", "lr1e-3_1000_steps_batch8.yaml",
     "lr1e-3_1000_steps_batch8_seed14"),
    ("lr 1e-3, 1000 x 4, seed 13", "lr1e-3_1000_steps_batch4_seed13", "lr1e-3_1000_steps_batch4.yaml",
     "lr1e-3_1000_steps_batch4_seed13"),
    ("lr 1e-3, 1000 x 4, seed 14", "lr1e-3_1000_steps_batch4_seed14", "lr1e-3_1000_steps_batch4.yaml",
     "lr1e-3_1000_steps_batch4_seed14"),
]


def batch_size(overlay: str | None) -> int:
    """The overlay's nugget_analysis.train.batch_size, else the demo's train.batch_size."""
    own = None if overlay is None else \
        yaml.safe_load((HERE / overlay).read_text())["nugget_analysis"]["train"].get("batch_size")
    return int(own if own is not None else yaml.safe_load(CONFIG.read_text())["train"]["batch_size"])


def runs() -> pd.DataFrame:
    cis = pd.read_csv(HERE / "bleu_cis.csv").set_index("run")
    label, ci_row = DEMO
    demo = cis.loc[ci_row]
    steps = yaml.safe_load(CONFIG.read_text())["nugget_analysis"]["train"]["max_steps"]
    empty = pd.Series(dtype=float)
    rows = [{"label": label, "documents": empty, "dev_loss": empty,
             "bleu": demo["bleu"], "bleu_lo": demo["bleu_lo"], "bleu_hi": demo["bleu_hi"], "ceiling": None,
             "read": steps * batch_size(None)}]
    for label, stem, overlay, ci_row in RUNS:
        metrics = pd.read_csv(HERE / f"metrics_{stem}.csv")
        bleu = json.loads((HERE / f"bleu_{stem}.json").read_text())
        lo = hi = float("nan")
        if ci_row is not None:
            lo, hi = cis.loc[ci_row, ["bleu_lo", "bleu_hi"]]
        batch = batch_size(overlay)
        rows.append({"label": label, "documents": metrics["step"] * batch,
                     "dev_loss": metrics["dev_loss"], "bleu": bleu["bleu"], "bleu_lo": lo, "bleu_hi": hi,
                     "ceiling": bleu["ceiling"], "read": int(metrics["step"].max()) * batch})
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame, unigram: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (loss_ax, bleu_ax) = plt.subplots(1, 2, figsize=(12, 4.6))
    for i, run in df.iterrows():
        colour = plt.get_cmap("tab20")(i)
        keep = run["dev_loss"].notna()
        if keep.any():
            loss_ax.plot(run["documents"][keep], run["dev_loss"][keep], marker="o", ms=3, color=colour,
                         label=run["label"])
        bleu_ax.errorbar([run["read"]], [run["bleu"]], fmt="o", color=colour, capsize=3,
                         yerr=None if pd.isna(run["bleu_lo"]) else
                         [[run["bleu"] - run["bleu_lo"]], [run["bleu_hi"] - run["bleu"]]], label=run["label"])
    loss_ax.axhline(unigram, color="grey", ls=":", label=f"unigram model ({unigram:.2f})")
    loss_ax.set_xlabel("training documents read (steps x batch)")
    loss_ax.set_ylabel("dev loss (nats per token)")
    loss_ax.set_title("AE r = 0.25: dev loss")
    loss_ax.legend(fontsize=7)
    bleu_ax.axhline(TARGET_BLEU, color="tab:red", ls="--", label="AE BLEU target (50)")
    ceiling = df["ceiling"].dropna().iloc[0]
    bleu_ax.axhline(ceiling, color="grey", ls=":", label=f"round-trip ceiling ({ceiling:.1f})")
    bleu_ax.set_xscale("log")
    bleu_ax.set_xlabel("training documents read (steps x batch, log)")
    bleu_ax.set_ylabel("Fig. 4 BLEU (0-100), 95% CI over 64 documents")
    bleu_ax.set_title("AE r = 0.25: reconstruction BLEU")
    bleu_ax.set_ylim(0, 100)
    bleu_ax.legend(fontsize=7, loc="upper left")
    for ax in (loss_ax, bleu_ax):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(out: str = str(HERE / "cost.png")) -> None:
    memory = pd.read_csv(HERE / "memory_use.csv")
    plot(runs(), float(memory["unigram_nats"].iloc[0]), Path(out))
    print(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
