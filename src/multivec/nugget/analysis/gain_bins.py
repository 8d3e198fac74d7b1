"""Figs. 7-8's reading as statistics (Qin & Van Durme 2023, §5.3, eq. 9).

The probability gain of token i when only nugget j is exposed (eq. 9),

    g_i^j = p(y_i | y_<i, z_j) - p(y_i | y_<i),

is binned by the token's SIGNED index relative to the nugget's token, d = i - t_j, as Fig. 8 centres the
nugget and shows relative indices: d < 0 ("before") is a token that precedes the nugget's token, d > 0
("after") one that follows it. The sign is what tests the paper's reading of Fig. 7, "We can see that the
exposure of a nugget can improve the decoding of its preceding texts" (before > after), besides the peak
at the nugget's own token (d = 0).

``document_bin_gains`` gives each document's mean gain over its (nugget, token) pairs with d in each of
``DISTANCE_BINS`` (d <= -20; -19..-5; -4..-1; 0; 1..4; 5..19; d >= 20), and ``gain_measurements`` keeps
them per document (statistic ``mean``; a row is a document length, ``len<L>``). Every metric of a row uses
the same documents (the statistics compare a row's metrics paired on units, and a metric's seeds on the same
units): those with pairs in every bin, for every seed (``shared_documents``); the others are counted and
left out. A document lacks a bin only if its nuggets all sit within 19 tokens of the same end (or it is
shorter than 21 tokens): its first nugget gives the "after" bins and its last the "before" ones; on nugget
positions drawn as the demo's (committed Fig. 11), none of 100 / 100 / 20 documents of 64 / 128 / 256
tokens lacks one. The gains themselves come from ``probability_gain``.

Only numpy at import: the workflow reads ``DISTANCE_BINS`` while it parses.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from multivec.io.markdown_table import markdown_table


# Bins of the signed relative index d = i - t_j (negative: token i precedes the nugget's token t_j), in
# Fig. 8's left-to-right order: metric -> (lowest, highest), None for an open end. The one place they are
# declared: the workflow registers these metric names for table nugget_fig7_8 and claim N5 names them.
DISTANCE_BINS: dict[str, tuple[int | None, int | None]] = {
    "gain_before_20plus": (None, -20),
    "gain_before_5_19": (-19, -5),
    "gain_before_1_4": (-4, -1),
    "gain_d0": (0, 0),
    "gain_after_1_4": (1, 4),
    "gain_after_5_19": (5, 19),
    "gain_after_20plus": (20, None),
}


def _bin_label(low: int | None, high: int | None) -> str:
    if low is None:
        return f"d <= {high}"
    if high is None:
        return f"d >= {low}"
    return f"d = {low}" if low == high else f"{low} <= d <= {high}"


def document_bin_gains(gains: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """D × len(DISTANCE_BINS): each document's mean gain over its (nugget, token) pairs whose signed
    relative index d = i - t_j lies in the bin (NaN where it has none). ``gains``: D × k × L (NaN where
    nothing is predicted or the slot is padding); ``positions``: D × k nugget token indices t_j (-1: padding)."""
    n_docs, _, length = gains.shape
    out = np.full((n_docs, len(DISTANCE_BINS)), np.nan)
    for doc in range(n_docs):
        slots = np.flatnonzero(positions[doc] >= 0)
        if not len(slots):
            continue
        offset = np.arange(length)[None, :] - positions[doc, slots][:, None]  # d = i - t_j, slots × L
        values = gains[doc, slots].astype(np.float64)
        known = ~np.isnan(values)
        for column, (low, high) in enumerate(DISTANCE_BINS.values()):
            inside = known.copy()
            if low is not None:
                inside &= offset >= low
            if high is not None:
                inside &= offset <= high
            if inside.any():
                out[doc, column] = values[inside].mean()
    return out


def gain_measurements(path, row: str, seed: int | None) -> tuple[list, int]:
    """``mean`` Measurements of per-document bin gains (``DISTANCE_BINS``) of a ``save_gains`` file, over
    the documents with pairs in every bin (so every metric of the row has the same units); and how many
    documents were left out."""
    import json

    from safetensors import safe_open

    from multivec.nugget.analysis.gain_tables import load_gains
    from multivec.statistics import Measurement

    gains, positions, _ = load_gains(path)
    with safe_open(str(path), framework="numpy") as f:
        doc_ids = json.loads((f.metadata() or {}).get("doc_ids", "null")) or [str(k) for k in range(len(gains))]
    per_document = document_bin_gains(gains, positions)
    keep = ~np.isnan(per_document).any(axis=1)
    if not keep.any():
        raise ValueError(f"{path}: no document has (nugget, token) pairs in every bin of the relative index "
                         f"d = i - t_j {list(DISTANCE_BINS)}")
    units = [str(d) for d, k in zip(doc_ids, keep) if k]
    return ([Measurement(row, metric, "mean", units, per_document[keep, column], seed)
             for column, metric in enumerate(DISTANCE_BINS)], int((~keep).sum()))


def shared_documents(measurements: Sequence) -> tuple[list, dict[str, int]]:
    """``gain_measurements`` of several seeds restricted, per row, to the documents every seed kept (a seed's
    positions differ, so may the documents it leaves out; the seeds of a (row, metric) must share units);
    and, per row, how many documents only some seeds kept."""
    from dataclasses import replace

    shared: dict[str, set[str]] = {}
    for m in measurements:
        shared[m.row] = shared[m.row] & set(m.units) if m.row in shared else set(m.units)
    dropped = {row: len({u for m in measurements if m.row == row for u in m.units} - units)
               for row, units in shared.items()}
    empty = [row for row, units in shared.items() if not units]
    if empty:
        raise ValueError(f"rows {empty}: no document has (nugget, token) pairs in every bin for every seed")
    out = []
    for m in measurements:
        keep = np.array([u in shared[m.row] for u in m.units])
        out.append(m if keep.all() else replace(m, units=[u for u, k in zip(m.units, keep) if k],
                                                values=np.asarray(m.values)[keep]))
    return out, dropped


def gain_bins_markdown(df, header_lines: Sequence[str], notes: Sequence[str] = ()) -> str:
    """One row per document length; each bin's mean gain ``mean [lo, hi] ±sd``, bins in order of the signed
    relative index (before the nugget, its token, after it); the ``documents`` column when ``df`` has one."""
    from multivec.statistics import estimate_cell

    extra = ["documents"] if "documents" in df.columns else []
    head = ["row", *DISTANCE_BINS, *extra]
    bins = "; ".join(f"{metric}: {_bin_label(*bounds)}" for metric, bounds in DISTANCE_BINS.items())
    lines = ["# NUGGET Figs. 7-8: probability gain by signed position relative to the exposed nugget "
             "(§5.3, eq. 9)", "",
             *header_lines, "",
             *markdown_table(head, ([str(record["row"])] + [estimate_cell(record, m, 4) for m in DISTANCE_BINS]
                                    + [_count(record[c]) for c in extra]
                                    for record in df.to_dict("records")))]
    lines += ["", "Each cell: a document's mean of g_i^j = p(y_i | y_<i, z_j) - p(y_i | y_<i) (eq. 9) over its "
              "(nugget j, token i) pairs whose signed relative index d = i - t_j (t_j: the nugget's token) lies in "
              f"the bin, then the mean over documents. Bins: {bins}. \"before\" (d < 0): tokens preceding the "
              "nugget's token; \"after\" (d > 0): tokens following it; gain_d0: the nugget's own token. Every bin of "
              "a row uses the same documents, those with pairs in every bin for every seed"
              + (" (`documents`; the units rule's log counts the others)" if extra else "")
              + ". The paper's Figs. 7-8 show the gain peaking around the nugget's token, and read Fig. 7 as "
              "\"the exposure of a nugget can improve the decoding of its preceding texts\" (the before bins).",
              *notes]
    return "\n".join(lines) + "\n"


def _count(value) -> str:
    return "" if value is None or value != value else str(int(value))
