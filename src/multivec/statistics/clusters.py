"""Which cluster an evaluation unit belongs to: the level the bootstrap and the tests resample.

Units that share a source are not independent: the PropSegment queries of one document, the LM segments of
one stream, the Lee document pairs that share a document. Resampling them as if they were inflates the
evidence; the cluster bootstrap resamples whole clusters instead (Davison & Hinkley 1997, §3.8; Field &
Welsh 2007), and the paired randomization test swaps whole clusters between the two systems.

``unit_clusters(units, kind)`` maps unit ids to cluster labels, one kind per unit-id format:

| kind | unit id | cluster |
|---|---|---|
| ``None`` / ``"unit"`` | anything | the unit itself (independent units) |
| ``"propsegment_query"`` | ``q{row}:{document}:{sentence}`` (``subencoder.evaluation.retrieval.query_unit_id``) | the document |
| ``"document_sentence"`` | ``{document}:{sentence}`` (``retrieval.unit_id`` of a sentence) | the document |
| ``"lm_segment"`` | ``{stream}:{position}`` (``nugget.language_model.evaluate_segments``) | the stream |
| ``"document_pair"`` | ``{docA}|{docB}`` (the Lee pair statistics) | both documents (``pair_documents``) |

A pair statistic (``statistics.PAIR_STATISTICS``) always resamples documents and keeps the pairs among them,
whatever kind is given; ``"document_pair"`` only names that for the callers.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

CLUSTER_KINDS = ("unit", "propsegment_query", "document_sentence", "lm_segment", "document_pair")

_QUERY = re.compile(r"^q\d+:(.+):\d+$")
_LAST_INTEGER = re.compile(r"^(.+):\d+$")


def cluster_of(unit: str, kind: str | None) -> str:
    """The cluster id of one unit id under ``kind`` (module doc); ValueError for an id of another format."""
    if kind is None or kind == "unit":
        return unit
    if kind == "propsegment_query":
        match = _QUERY.match(unit)
    elif kind in ("document_sentence", "lm_segment"):
        match = _LAST_INTEGER.match(unit)
    elif kind == "document_pair":
        raise ValueError("a document pair belongs to two documents: use pair_documents")
    else:
        raise ValueError(f"unknown cluster kind {kind!r}; known: {list(CLUSTER_KINDS)}")
    if match is None:
        raise ValueError(f"unit {unit!r} is not a {kind!r} id (module multivec.statistics.clusters)")
    return match.group(1)


def unit_clusters(units: Sequence[str], kind: str | None) -> np.ndarray:
    """Integer cluster labels (n_units,), numbered in order of first appearance, of ``units`` under ``kind``;
    ``None`` or ``"unit"``: every unit its own cluster (0, 1, 2, ...). ``"document_pair"``: (n_units, 2), the
    labels of each pair's two documents (``pair_documents``)."""
    if kind == "document_pair":
        a, b, _ = pair_documents(units)
        return np.column_stack([a, b])
    if kind is None or kind == "unit":
        return np.arange(len(units))
    labels: dict[str, int] = {}
    return np.array([labels.setdefault(cluster_of(u, kind), len(labels)) for u in units], dtype=np.int64)


def pair_documents(units: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """The two documents of each ``"a|b"`` unit as labels (first, second) and the number of documents."""
    docs: dict[str, int] = {}
    a, b = [], []
    for u in units:
        if u.count("|") != 1:
            raise ValueError(f"unit {u!r} is not a document pair 'a|b'")
        left, right = u.split("|")
        a.append(docs.setdefault(left, len(docs)))
        b.append(docs.setdefault(right, len(docs)))
    return np.array(a, dtype=np.int64), np.array(b, dtype=np.int64), len(docs)


# The cluster kind of each results table whose units are not independent (the one place it is declared);
# a table not named here has independent units (or pair statistics, which always resample documents).
TABLE_CLUSTERS: dict[str, str] = {
    "subencoder_table7": "document_sentence",  # PropSegment sentences (``Sentence.key``), clustered by their document
    "subencoder_table1": "propsegment_query",  # PropSegment queries, clustered by their document
    "subencoder_table4": "propsegment_query",
    "subencoder_table5": "propsegment_query",
    "subencoder_table8": "propsegment_query",
    "distill_propsegment": "propsegment_query",  # the distillation models on PropSegment (representation matrix)
    "nugget_table3": "lm_segment",  # LM test segments, clustered by their stream (document)
}


def table_cluster_kind(table: str) -> str | None:
    """The cluster kind of a results table's units (``TABLE_CLUSTERS``; None: independent units)."""
    return TABLE_CLUSTERS.get(table)


def table_of_units_file(path) -> str:
    """The table a unit file holds, from its name ``<table>.<seedset>.parquet`` (``workflow_tables.units_path``)."""
    from pathlib import Path

    name = Path(path).name
    if not name.endswith(".parquet") or name.count(".") != 2:
        raise ValueError(f"{path}: not a unit file name <table>.<seedset>.parquet")
    return name.split(".")[0]
