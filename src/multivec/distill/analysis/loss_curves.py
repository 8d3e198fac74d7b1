"""Training curves of the distilled students: does every loss term fall?

Each student's ``metrics.csv`` (written by ``multivec.training``) has one row per logged window: ``train_loss``
and the terms of ``multivec.distill.training.LOSS_TERMS`` (``train_structural`` = the masked mean L_S,
``train_contextual`` = L_C, SoftCCA's ``train_soft_cca_mse`` and the decorrelation terms ``train_sdl_student`` /
``train_sdl_teacher`` before δ), and ``dev_loss`` where a window was evaluated. A term a run does not have
(L_S in the L_C-only run) is an empty column and is skipped.

``loss_trends`` compares, per run, seed and term, the mean over the first and over the last ``share`` of the
logged windows (at least one window each): a loss that has been learned is lower at the end (``fell``). It
is a description of one training run, not a test over evaluation units, so it carries no interval.
``plot_loss_curves`` draws every term's curve per run (one panel per term).
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

from multivec.io.markdown_table import markdown_table

# metrics.csv columns whose fall means the student learned; train_mask_share (the share of documents inside
# the structural mask) is a property of the batches, not a loss.
CURVE_TERMS = ("train_loss", "train_structural", "train_contextual", "train_soft_cca_mse", "train_sdl_student",
               "train_sdl_teacher", "dev_loss")
TREND_COLUMNS = ("row", "seed", "term", "windows", "first", "last", "change", "fell")


def read_curves(metrics_csv: str | os.PathLike) -> "Any":
    """Long frame (step, term, value) of ``CURVE_TERMS`` found in ``metrics_csv`` with at least one value."""
    import pandas as pd

    frame = pd.read_csv(metrics_csv)
    if "step" not in frame.columns or "train_loss" not in frame.columns:
        raise ValueError(f"{metrics_csv}: not a training metrics file (no step / train_loss column)")
    terms = [t for t in CURVE_TERMS if t in frame.columns and frame[t].notna().any()]
    long = frame.melt(id_vars="step", value_vars=terms, var_name="term", value_name="value").dropna()
    return long.astype({"step": int, "value": float}).reset_index(drop=True)


def first_last(values: Sequence[float], share: float = 0.2) -> tuple[float, float]:
    """Mean of the first and of the last ``share`` of ``values`` (in logging order), one value at least."""
    if not values:
        raise ValueError("no logged values")
    if not 0 < share <= 0.5:
        raise ValueError(f"share={share}: expected a fraction in (0, 0.5]")
    n = max(1, math.ceil(len(values) * share))
    return float(sum(values[:n]) / n), float(sum(values[-n:]) / n)


def read_runs(runs: Sequence[dict[str, Any]]) -> dict[tuple[str, Any], "Any"]:
    """``runs``: ``{"row", "seed", "metrics"}`` (a metrics.csv path) per trained student ->
    {(row, seed): ``read_curves`` of its file}, in the order of ``runs``."""
    return {(run["row"], run["seed"]): read_curves(run["metrics"]) for run in runs}


def loss_trends(curves: dict[tuple[str, Any], "Any"], share: float = 0.2) -> "Any":
    """``curves``: ``read_runs``. One row per (run, seed, term) with two or more logged values:
    ``TREND_COLUMNS``; ``change`` = last - first."""
    import pandas as pd

    rows = []
    for (row, seed), frame in curves.items():
        for term, group in frame.groupby("term", sort=False):
            values = group.sort_values("step")["value"].tolist()
            if len(values) < 2:
                continue
            first, last = first_last(values, share)
            rows.append({"row": row, "seed": seed, "term": term, "windows": len(values),
                         "first": round(first, 6), "last": round(last, 6), "change": round(last - first, 6),
                         "fell": bool(last < first)})
    if not rows:
        raise ValueError("no training curve has two logged values")
    return pd.DataFrame(rows, columns=list(TREND_COLUMNS))


def trend_lines(trends: "Any", share: float) -> list[str]:
    """Markdown: one table row per (run, seed, term), and a sentence naming every term that did not fall."""
    lines = [f"Mean of each term over the first vs the last {share:.0%} of the logged windows:", "",
             *markdown_table(TREND_COLUMNS, ([f"{r.row}", f"{r.seed}", f"{r.term}", f"{r.windows}", f"{r.first:.4f}",
                                              f"{r.last:.4f}", f"{r.change:+.4f}", "yes" if r.fell else "**no**"]
                                             for r in trends.itertuples(index=False)))]
    rising = trends[~trends["fell"]]
    lines.append("")
    if rising.empty:
        lines.append("Every loss term of every run fell.")
    else:
        named = "; ".join(f"{r.row} seed {r.seed}: {r.term}" for r in rising.itertuples(index=False))
        lines.append(f"Terms that did not fall: {named}.")
    return lines


def plot_loss_curves(curves: dict[tuple[str, Any], "Any"], path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """``curves``: ``read_runs``. One panel per term, one line per (run, seed); returns {term: {line label: its
    colour}} as drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    terms = [t for t in CURVE_TERMS if any((c["term"] == t).any() for c in curves.values())]
    cols = min(3, len(terms))
    rows = math.ceil(len(terms) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows + 0.6), squeeze=False)
    # one colour per (run, seed) in every panel: a panel lacking a run must not shift the others' colours
    colours = {key: plt.get_cmap("tab10")(k % 10) for k, key in enumerate(curves)}
    handles, drawn = {}, {}
    for ax, term in zip(axes.flat, terms):
        for (row, seed), frame in curves.items():
            part = frame[frame["term"] == term].sort_values("step")
            if not part.empty:
                (line,) = ax.plot(part["step"], part["value"], marker="." if len(part) < 30 else None,
                                  color=colours[(row, seed)], label=f"{row.removeprefix('student_')} s{seed}")
                handles.setdefault((row, seed), line)
                drawn.setdefault(term, {})[line.get_label()] = line.get_color()
        ax.set_title(term)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(terms):]:
        ax.axis("off")
    fig.legend(handles=list(handles.values()), loc="lower center", ncol=min(4, len(handles)), fontsize=8)
    fig.suptitle("Distilled students: loss terms per logged window (metrics.csv)")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn


def write_loss_curves(runs: Sequence[dict[str, Any]], csv_path: str | os.PathLike, md_path: str | os.PathLike,
                      png_path: str | os.PathLike, share: float = 0.2, note: str = "") -> "Any":
    """``results/distill_loss_curves.{csv,md,png}`` from the students' metrics files; returns the trends."""
    if not runs:
        raise ValueError("distill loss curves: no trained student")
    curves = read_runs(runs)
    trends = loss_trends(curves, share)
    trends.to_csv(csv_path, index=False)
    plot_loss_curves(curves, png_path)
    lines = ["# Document embedding by distillation: do the students' loss terms fall?", ""]
    if note:
        lines += [note, ""]
    lines += trend_lines(trends, share)
    Path(md_path).write_text("\n".join(lines) + "\n")
    return trends
