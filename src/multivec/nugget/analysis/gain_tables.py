"""Figs. 7, 8 and 11 from the saved probability gains (Qin & Van Durme 2023, §5.3, eq. 9, App. C).

``multivec.nugget.analysis.probability_gain`` computes g_i^j with the model and writes one file per document
length (``save_gains``); this module reads it back (``load_gains``) and averages, with numpy only, so the light
(local) rules that build the figures load neither torch nor the model:
- per nugget rank j over the documents that have a j-th nugget (Figs. 7, 11: ``gain_by_nugget``),
- over all nuggets by the position of the token relative to the nugget's (Fig. 8: ``gain_by_relative_position``).

Uncertainty: every point of Figs. 7, 8 and 11 gets a 95% percentile-bootstrap CI over documents
(``*_lo``/``*_hi`` columns, a band in the figure): each point is a ratio of per-document sums (gain sum over
pair count; documents with the nugget there over documents with that nugget), resampled by
``multivec.statistics.resampling.ratio_bootstrap_cis``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from multivec.statistics.resampling import BootstrapSettings

# ---------------------------------------------------------------- averages

def nugget_components(gains: np.ndarray, positions: np.ndarray, rank: int) -> dict[str, np.ndarray]:
    """Per-document parts of Fig. 7 / 11 for the ``rank``-th nugget (1-based), over the documents that have
    one (D' × L each): ``gain_sum``/``gain_count`` (the gain at each position, 0/1 where it is NaN) and
    ``at``/``has`` (1 where the nugget sits at that position; D' × 1 ones, every document counts once)."""
    if rank < 1:
        raise ValueError(f"nugget rank {rank} must be >= 1")
    length = gains.shape[-1]
    if positions.shape[1] < rank:
        empty = np.zeros((0, length))
        return {"gain_sum": empty, "gain_count": empty, "at": empty, "has": np.zeros((0, 1))}
    has = positions[:, rank - 1] >= 0
    values = gains[has, rank - 1].astype(np.float64)
    count = (~np.isnan(values)).astype(np.float64)
    at = np.zeros_like(values)
    at[np.arange(len(values)), positions[has, rank - 1]] = 1.0
    return {"gain_sum": np.nan_to_num(values, nan=0.0), "gain_count": count, "at": at, "has": np.ones((len(values), 1))}


def gain_by_nugget(gains: np.ndarray, positions: np.ndarray, rank: int) -> dict[str, np.ndarray]:
    """Fig. 7 / 11 for the ``rank``-th nugget (1-based) over the documents that have one:
    the share of documents whose rank-th nugget sits at each position, and the mean gain per position."""
    parts = nugget_components(gains, positions, rank)
    n = len(parts["has"])
    if not n:
        length = gains.shape[-1]
        return {"nugget_share": np.zeros(length), "mean_gain": np.full(length, np.nan), "documents": 0}
    counts = parts["gain_count"].sum(0)
    with np.errstate(invalid="ignore"):
        mean = np.where(counts > 0, parts["gain_sum"].sum(0) / np.maximum(counts, 1), np.nan)
    return {"nugget_share": parts["at"].sum(0) / n, "mean_gain": mean, "documents": n}


def relative_components(gains: np.ndarray, positions: np.ndarray) -> dict[str, np.ndarray]:
    """Per-document parts of Fig. 8 (D × (2L - 1), offsets -(L-1)..L-1): ``gain_sum`` over the document's
    (nugget, token) pairs at each offset i - t_j, and their number ``pairs``."""
    n_docs, _, length = gains.shape
    docs, slots = np.nonzero(positions >= 0)
    offsets = np.arange(length)[None, :] - positions[docs, slots][:, None]  # pairs × L
    values = gains[docs, slots]
    keep = ~np.isnan(values)
    cell = (np.repeat(docs[:, None], length, axis=1) * (2 * length - 1) + offsets + length - 1)[keep]
    size = n_docs * (2 * length - 1)
    sums = np.bincount(cell, weights=values[keep].astype(np.float64), minlength=size).reshape(n_docs, -1)
    pairs = np.bincount(cell, minlength=size).reshape(n_docs, -1).astype(np.float64)
    return {"gain_sum": sums, "pairs": pairs}


def gain_by_relative_position(gains: np.ndarray, positions: np.ndarray) -> dict[str, np.ndarray]:
    """Fig. 8: the mean gain of token i given nugget j over all (document, nugget) pairs, by
    i - t_j (t_j: the nugget's position). Returns offsets -(L-1)..L-1, means and pair counts."""
    length = gains.shape[-1]
    parts = relative_components(gains, positions)
    sums, counts = parts["gain_sum"].sum(0), parts["pairs"].sum(0).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return {"relative_position": np.arange(-(length - 1), length), "mean_gain": mean, "pairs": counts}


# ---------------------------------------------------------------- the artifact

GAIN_TENSORS = ("gains", "positions", "source_indices", "target_ids")


def load_gains(path) -> tuple[np.ndarray, np.ndarray, int]:
    """``gains``, ``positions`` and L of a ``save_gains`` file; a clear error naming the file and key."""
    from safetensors import SafetensorError, safe_open

    from multivec.io.safe_loading import unreadable_safetensors

    try:
        with safe_open(str(path), framework="numpy") as f:
            keys, metadata = set(f.keys()), f.metadata() or {}
            missing = [k for k in GAIN_TENSORS if k not in keys] + [k for k in ("length",) if k not in metadata]
            if missing:
                raise ValueError(f"{path}: not a probability-gain file, missing {', '.join(missing)}")
            gains, positions, length = f.get_tensor("gains"), f.get_tensor("positions"), int(metadata["length"])
    except (SafetensorError, OSError) as err:
        raise unreadable_safetensors(Path(path), err) from None
    if gains.shape[-1] != length or gains.shape[:2] != positions.shape:
        raise ValueError(f"{path}: gains {gains.shape} and positions {positions.shape} do not fit length {length}")
    return gains, positions, length


# ---------------------------------------------------------------- tables and figures

def by_nugget_table(gains: np.ndarray, positions: np.ndarray, ranks: Sequence[int], length: int,
                    bootstrap: BootstrapSettings = BootstrapSettings()):
    """Figs. 7 and 11 as rows (length, nugget, position, nugget_share [_lo, _hi], mean_gain [_lo, _hi],
    documents); CIs over the documents that have the nugget."""
    import pandas as pd

    rows = []
    for rank in ranks:
        result = gain_by_nugget(gains, positions, rank)
        parts = nugget_components(gains, positions, rank)
        cis = {name: bootstrap.cis(parts[a], parts[b])
               for name, a, b in (("nugget_share", "at", "has"), ("mean_gain", "gain_sum", "gain_count"))}
        for position in range(gains.shape[-1]):
            row = {"length": length, "nugget": rank, "position": position}
            for name, (lo, hi) in cis.items():
                row.update({name: float(result[name][position]), f"{name}_lo": float(lo[position]),
                            f"{name}_hi": float(hi[position])})
            rows.append({**row, "documents": result["documents"]})
    return pd.DataFrame(rows)


def by_relative_position_table(per_length: dict[int, tuple[np.ndarray, np.ndarray]],
                               bootstrap: BootstrapSettings = BootstrapSettings()):
    """Fig. 8 as rows (length, relative_position, mean_gain, mean_gain_lo, mean_gain_hi, pairs, documents);
    only offsets some pair reaches; CIs over documents."""
    import pandas as pd

    rows = []
    for length, (gains, positions) in sorted(per_length.items()):
        result = gain_by_relative_position(gains, positions)
        parts = relative_components(gains, positions)
        lo, hi = bootstrap.cis(parts["gain_sum"], parts["pairs"])
        for offset, mean, low, high, pairs in zip(result["relative_position"], result["mean_gain"], lo, hi,
                                                  result["pairs"]):
            if pairs:
                rows.append({"length": length, "relative_position": int(offset), "mean_gain": float(mean),
                             "mean_gain_lo": float(low), "mean_gain_hi": float(high), "pairs": int(pairs),
                             "documents": gains.shape[0]})
    return pd.DataFrame(rows)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_by_nugget(df, path, title: str, columns: int = 3) -> None:
    """One panel per nugget rank: the share of documents with that nugget at each token index (red,
    left axis) and the mean gain per token position (blue, right axis; shaded: its CI), as Figs. 7 and 11."""
    plt = _pyplot()
    ranks = sorted(df["nugget"].unique())
    columns = min(columns, len(ranks))
    rows = -(-len(ranks) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.8 * rows), squeeze=False)
    for ax, rank in zip(axes.flat, ranks):
        part = df[df["nugget"] == rank]
        ax.plot(part["position"], part["nugget_share"], color="tab:red", lw=1)
        ax.set_ylabel("nugget index share", color="tab:red", fontsize=8)
        twin = ax.twinx()
        twin.plot(part["position"], part["mean_gain"], color="tab:blue", lw=1)
        if "mean_gain_lo" in part:
            twin.fill_between(part["position"], part["mean_gain_lo"], part["mean_gain_hi"], color="tab:blue",
                              alpha=0.2, lw=0)
        twin.axhline(0, color="grey", lw=0.5)
        twin.set_ylabel("mean gain", color="tab:blue", fontsize=8)
        documents = int(part["documents"].iloc[0])
        ax.set_title(f"nugget {rank} ({documents} docs)", fontsize=9)
        if not documents:
            ax.text(0.5, 0.5, f"no document has {rank} nuggets", transform=ax.transAxes, ha="center", fontsize=8)
        ax.set_xlabel("token position", fontsize=8)
    for ax in list(axes.flat)[len(ranks):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_by_relative_position(df, path, title: str) -> None:
    """Fig. 8: one panel per document length, mean gain against the token's offset from the nugget."""
    plt = _pyplot()
    lengths = sorted(df["length"].unique())
    fig, axes = plt.subplots(1, len(lengths), figsize=(4.5 * len(lengths), 3.2), squeeze=False)
    for ax, length in zip(axes[0], lengths):
        part = df[df["length"] == length]
        ax.plot(part["relative_position"], part["mean_gain"], color="tab:blue", lw=1)
        if "mean_gain_lo" in part:
            ax.fill_between(part["relative_position"], part["mean_gain_lo"], part["mean_gain_hi"], color="tab:blue",
                            alpha=0.2, lw=0, label="95% CI over documents")
            ax.legend(fontsize=7, loc="upper right")
        ax.axvline(0, color="tab:red", lw=0.8)
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_title(f"{length} tokens ({int(part['documents'].iloc[0])} docs)", fontsize=9)
        ax.set_xlabel("token position - nugget position", fontsize=8)
        ax.set_ylabel("mean gain", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
