"""Figs. 7-8's reading as statistics (Qin & Van Durme 2023, §5.3, eq. 9; issue 17).

Figs. 7 and 8 say the probability gain g_i^j peaks at the nugget's own token and decays with distance.
``document_bin_gains`` gives each document's mean gain over its (nugget, token) pairs at distance
|i - t_j| in each of ``DISTANCE_BINS`` (0; 1-4; 5-19; 20 and more), and ``gain_measurements`` keeps them
per document (statistic ``mean``; a row is a document length, ``len<L>``). Every metric of a row uses the
same documents: those with pairs in every bin (all of them unless a document is shorter than 21 tokens);
the others are counted and left out. The gains themselves come from ``probability_gain``.

Only numpy at import: the workflow reads ``DISTANCE_BINS`` while it parses.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from multivec.io.markdown_table import markdown_table


# distance bins |i - t_j| of Figs. 7/8's peak-and-decay reading: metric -> (lowest, highest or None)
DISTANCE_BINS: dict[str, tuple[int, int | None]] = {"gain_d0": (0, 0), "gain_d1_4": (1, 4), "gain_d5_19": (5, 19),
                                                    "gain_d20plus": (20, None)}


def document_bin_gains(gains: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """D × len(DISTANCE_BINS): each document's mean gain over its (nugget, token) pairs whose distance
    |i - t_j| lies in the bin (NaN where it has none)."""
    n_docs, _, length = gains.shape
    out = np.full((n_docs, len(DISTANCE_BINS)), np.nan)
    for doc in range(n_docs):
        slots = np.flatnonzero(positions[doc] >= 0)
        if not len(slots):
            continue
        distance = np.abs(np.arange(length)[None, :] - positions[doc, slots][:, None])
        values = gains[doc, slots].astype(np.float64)
        for column, (low, high) in enumerate(DISTANCE_BINS.values()):
            inside = (distance >= low) & (True if high is None else distance <= high) & ~np.isnan(values)
            if inside.any():
                out[doc, column] = values[inside].mean()
    return out


def gain_measurements(path, row: str, seed: int | None) -> tuple[list, int]:
    """``mean`` Measurements of per-document bin gains (``DISTANCE_BINS``) of a ``save_gains`` file, over
    the documents with pairs in every bin; and how many documents were left out."""
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
        raise ValueError(f"{path}: no document has (nugget, token) pairs in every distance bin {list(DISTANCE_BINS)}")
    units = [str(d) for d, k in zip(doc_ids, keep) if k]
    return ([Measurement(row, metric, "mean", units, per_document[keep, column], seed)
             for column, metric in enumerate(DISTANCE_BINS)], int((~keep).sum()))


def gain_bins_markdown(df, header_lines: Sequence[str], notes: Sequence[str] = ()) -> str:
    """One row per document length; each bin's mean gain ``mean [lo, hi] ±sd``."""
    from multivec.statistics import estimate_cell

    head = ["row", *DISTANCE_BINS]
    lines = ["# NUGGET Figs. 7-8: probability gain by distance from the exposed nugget (§5.3, eq. 9)", "",
             *header_lines, "",
             *markdown_table(head, ([str(record["row"])] + [estimate_cell(record, m, 4) for m in DISTANCE_BINS]
                                   for record in df.to_dict("records")))]
    lines += ["", "gain_dA_B: a document's mean of g_i^j = p(y_i | y_<i, z_j) - p(y_i | y_<i) over its (nugget j, "
              "token i) pairs at distance A <= |i - t_j| <= B (d0: the nugget's own token), then the mean over "
              "documents. The paper's Figs. 7-8 show the gain peaking at the nugget's token and decaying with "
              "distance.", *notes]
    return "\n".join(lines) + "\n"
