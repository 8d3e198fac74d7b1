"""Figures for the results tables: our numbers beside the paper's."""

from __future__ import annotations

import os

import pandas as pd


def row_label(record: dict) -> str:
    parts = [str(record["model"])]
    if isinstance(record.get("objective"), str):
        parts.append(record["objective"])
    if pd.notna(record.get("ratio")):
        parts.append(f"r={record['ratio']:g}")
    return " ".join(parts)


def plot_table2(df: pd.DataFrame, path: str | os.PathLike, title: str) -> None:
    """Two panels (PI, RR): one bar per row for our MRR (with its CI where ``df`` has ``<task>_lo/_hi``), a
    marker for the paper's where it has one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [row_label(r) for r in df.to_dict("records")]
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.45 * len(df) + 1.8), sharey=True)
    positions = range(len(df))
    for ax, task in zip(axes, ("PI", "RR")):
        shown = pd.concat([df[task], df[f"paper_{task}"]]).astype(float).dropna()
        # Rows often differ by a point or two: zoom to the data rather than 0-100.
        low = max(0.0, 5 * ((shown.min() - 5) // 5)) if len(shown) else 0.0
        ours = df[task].astype(float)
        ax.barh(positions, ours - low, left=low, color="tab:blue", label="ours")
        if f"{task}_lo" in df.columns:  # 95% bootstrap CI over queries (multivec.statistics)
            lo, hi = df[f"{task}_lo"].astype(float), df[f"{task}_hi"].astype(float)
            ax.errorbar(ours, list(positions), xerr=[(ours - lo).clip(lower=0), (hi - ours).clip(lower=0)],
                        fmt="none", ecolor="black", capsize=2, lw=0.8, label="95% CI")
        paper = df[f"paper_{task}"].astype(float)
        has = paper.notna()
        ax.scatter(paper[has], [p for p, h in zip(positions, has) if h], color="tab:red", marker="D", zorder=3,
                   label="paper")
        for y, value in zip(positions, ours):
            ax.text(value + 0.3, y, f"{value:.1f}", va="center", fontsize=8)
        ax.set_title(f"{task} (MRR×100)")
        ax.set_xlim(low, 101)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(list(positions), labels)
    axes[0].invert_yaxis()
    axes[1].legend(loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
