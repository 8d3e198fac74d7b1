"""Rows, metrics and per-unit scores of the sub-sentence encoder's results tables (Chen et al. 2023,
Tables 1, 4, 5, 7, 8), for the statistics layer (``multivec.statistics``): one place that names every
table's rows and metrics, so that the unit files, the tables, the comparisons of the configuration and
the claims of ``config/claims.yaml`` use the same names.

Evaluation units:

- Tables 1, 4, 5, 8 (atomic-fact retrieval, §4.2.1): the PropSegment dev **queries**; a metric's unit
  value is the query's P@1 or R@k ×100 (statistic ``mean``), kept by ``evaluation.retrieval.evaluate`` under
  ``per_query``. A SubEncoder row has one measurement per training seed; the untrained App. C.1
  baselines and the lexical baseline have ``seed=None``. Table 1 has every row once per evaluation
  protocol (``subencoder.evaluation.protocols``; rows ``<row> [<protocol>]``, ``protocol_row``), so claims
  and comparisons name the protocol they read. Table 8's gold and predicted rows are the same matched queries (the
  predicted query keeps its gold query's id), so they pair up.
- Table 7 (segmentation quality, App. A.4): the PropSegment **sentences**; P/R/F1 are micro-averaged over
  sentences (``segmentation_quality``), so a sentence's components are sums: precision = Σ100·m / Σpred,
  recall = Σ100·m / Σgold, F1 = Σ200·m / Σ(pred + gold) (statistic ``ratio``, on the table's ×100
  scale), m the sentence's one-to-one Jaccard matches at θ. Segmenters are not trained here: seed None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from multivec.io import read_json
from multivec.subencoder.evaluation.segmentation_quality import OUR_COLUMNS

if TYPE_CHECKING:  # the workflow imports this module while it parses: pandas loads with the first Measurement
    from multivec.statistics import Measurement

RETRIEVAL_TABLES = ("table1", "table4", "table5", "table8")
# table -> {metric column of the table: (evaluation level, per-query metric of evaluation.unit_ranking)}
TABLE_METRICS: dict[str, dict[str, tuple[str, str]]] = {
    "table1": {"P@1": ("proposition", "p@1"), "R@5": ("proposition", "r@5"), "R@10": ("proposition", "r@10"),
               "R@20": ("proposition", "r@20")},
    "table4": {"sentence_P@1": ("sentence", "p@1"), "sentence_R@5": ("sentence", "r@5"),
               "document_P@1": ("document", "p@1"), "document_R@5": ("document", "r@5")},
    "table5": {"P@1": ("proposition", "p@1"), "R@5": ("proposition", "r@5")},
    "table8": {"P@1": ("proposition", "p@1"), "R@5": ("proposition", "r@5")},
}
THETAS = (0.8, 0.5)
TABLE7_METRICS = OUR_COLUMNS  # p_0.8, r_0.8, f1_0.8, p_0.5, r_0.5, f1_0.5, as Table 7's columns
TABLE8_QUERIES = ("gold", "predicted")


def stat_table_name(table: str) -> str:
    """The statistics layer's name of one of our tables (unit files, comparisons, claims)."""
    return f"subencoder_{table}"


# ---- row names (what the tables show, and what comparisons and claims name)

def base_row(backbone: str, strategy: str) -> str:
    return f"{backbone} (untrained, {strategy})"


def subencoder_row(backbone: str) -> str:
    return f"SubEncoder ({backbone})"


def reduced_row(backbone: str, dim: int) -> str:
    return f"SubEncoder ({backbone}, {dim}-d)"


def pca_row(backbone: str, dim: int) -> str:
    """Table 5's row of the full SubEncoder projected on ``dim`` principal components (``pca_projection``)."""
    return f"SubEncoder ({backbone}), PCA {dim}-d"


def pca_variant(dim: int) -> str:
    """The model folder's dimension part of that row: ``pca<dim>``."""
    return f"pca{int(dim)}"


def table8_row(backbone: str, queries: str) -> str:
    return f"SubEncoder ({backbone}), {queries} queries"


LEXICAL_ROW = "word Jaccard (lexical baseline)"


def protocol_row(row: str, protocol: str) -> str:
    """A Table 1 row under an evaluation protocol (``evaluation.retrieval.PROTOCOLS``): ``<row> [<protocol>]``."""
    return f"{row} [{protocol}]"


def table7_row(kind: str, split: str) -> str:
    """A Table 7 row: a segmenter kind (``subencoder.segmenter.table7``: clause, llm, seq2seq) on a split."""
    return f"{kind} segmenter, {split}"


def dim_name(dim: int | str | None) -> str:
    """The model folder's dimension part: ``full`` or ``d<dim>``."""
    return "full" if dim in (None, "full") else f"d{dim}"


@dataclass(frozen=True)
class RowSource:
    """Where one retrieval-table row's scores come from: an untrained backbone or baseline encoder with an
    App. C.1 encoding (``base``, variant = strategy, one evaluation), a trained SubEncoder (``trained``,
    variant = ``full``, ``d<dim>`` or ``pca<dim>``, the full one projected after training; one evaluation per
    seed), a SubEncoder on Table 8's matched queries
    (``predicted``, variant = ``gold`` or ``predicted``: that part of the evaluation, per seed) or the
    lexical baseline (``lexical``, no model, one evaluation). ``protocol``: Table 1's evaluation protocol
    (which candidates leave a query's ranking); None: the table's own (Tables 4, 5, 8)."""

    row: str
    evaluation: str
    backbone: str
    variant: str
    protocol: str | None = None

    @property
    def trained(self) -> bool:
        return self.evaluation in ("trained", "predicted")


@dataclass(frozen=True)
class Layout:
    """What the retrieval tables hold (``subencoder.model`` and ``subencoder.evaluation``): the SubEncoder
    backbones (names; the first is Table 5's), the App. C.1 encodings of their untrained encoders, Table 5's
    reduced dimension, Table 1's protocols, whether Table 1 has the lexical baseline row, the
    untrained-only baseline encoders (``(name, encoding)`` pairs: the paper's other Table 1 rows), and
    whether Table 5 has the PCA row (``subencoder.model.reduced_pca``)."""

    backbones: tuple[str, ...]
    baselines: tuple[str, ...]
    reduced_dim: int | None = None
    protocols: tuple[str, ...] = ("authors",)
    lexical: bool = False
    baseline_encoders: tuple[tuple[str, str], ...] = ()
    reduced_pca: bool = False  # Table 5 also has the full SubEncoder projected on reduced_dim principal components

    @classmethod
    def from_config(cls, subencoder: dict[str, Any]) -> "Layout":
        """The layout of the ``subencoder`` block of the configuration."""
        model, evaluation = subencoder["model"], subencoder["evaluation"]
        extra = tuple((entry["name"], encoding) for entry in evaluation.get("baseline_encoders") or []
                      for encoding in entry.get("encodings") or evaluation["baselines"])
        return cls(tuple(b["name"] for b in model["backbones"]), tuple(evaluation["baselines"]),
                   model.get("reduced_dim"), tuple(evaluation.get("protocols") or ("authors",)),
                   bool(evaluation.get("lexical_baseline", False)), extra, bool(model.get("reduced_pca", False)))


def table1_rows(layout: Layout) -> list[RowSource]:
    """Table 1's rows, protocol by protocol: the lexical baseline, the untrained-only baseline encoders,
    then each backbone's untrained encodings and its SubEncoder."""
    rows: list[RowSource] = []
    for protocol in layout.protocols:
        if layout.lexical:
            rows.append(RowSource(protocol_row(LEXICAL_ROW, protocol), "lexical", "", "word_jaccard", protocol))
        rows += [RowSource(protocol_row(base_row(name, s), protocol), "base", name, s, protocol)
                 for name, s in layout.baseline_encoders]
        for b in layout.backbones:
            rows += [RowSource(protocol_row(base_row(b, s), protocol), "base", b, s, protocol)
                     for s in layout.baselines]
            rows.append(RowSource(protocol_row(subencoder_row(b), protocol), "trained", b, "full", protocol))
    return rows


def table_rows(table: str, layout: Layout) -> list[RowSource]:
    """The rows of a retrieval table, in table order."""
    rows: list[RowSource] = []
    backbones, baselines, reduced_dim = layout.backbones, layout.baselines, layout.reduced_dim
    if table == "table1":
        rows = table1_rows(layout)
    elif table == "table4":
        for b in backbones:
            if "mask_pooling" in baselines:  # the SubEncoder's own encoding of the untrained backbone
                rows.append(RowSource(base_row(b, "mask_pooling"), "base", b, "mask_pooling"))
            rows.append(RowSource(subencoder_row(b), "trained", b, "full"))
    elif table == "table5":
        if not reduced_dim:
            raise ValueError("Table 5 needs subencoder.model.reduced_dim")
        first = backbones[0]
        rows = [RowSource(subencoder_row(first), "trained", first, "full"),
                RowSource(reduced_row(first, int(reduced_dim)), "trained", first, dim_name(reduced_dim))]
        if layout.reduced_pca:
            rows.append(RowSource(pca_row(first, int(reduced_dim)), "trained", first, pca_variant(reduced_dim)))
    elif table == "table8":
        rows = [RowSource(table8_row(b, q), "predicted", b, q) for b in backbones for q in TABLE8_QUERIES]
    else:
        raise ValueError(f"unknown retrieval table {table!r}; known: {RETRIEVAL_TABLES}")
    return rows


# ---- per-unit scores

def retrieval_measurements(table: str, row: str, result: dict[str, Any], seed: int | None,
                           part: str | None = None, protocol: str | None = None) -> list[Measurement]:
    """One ``Measurement`` per metric of ``table`` from an evaluation JSON (``evaluation.retrieval.evaluate``; for
    Table 8, ``part`` = gold | predicted picks that evaluation of the JSON; for Table 1, ``protocol`` picks
    that protocol's proposition-level scores)."""
    from multivec.statistics import Measurement

    if part is not None:
        result = result[part]
    per_query = result.get("per_query")
    if per_query is None or (protocol is not None and protocol not in per_query.get("protocols", {})):
        raise ValueError(f"{row}: the evaluation has no per-query scores"
                         f"{'' if protocol is None else f' under protocol {protocol!r}'} (re-run it with this version)")

    def values(level: str, name: str) -> list[float]:
        return per_query["protocols"][protocol][name] if protocol and level == "proposition" else per_query[level][name]

    return [Measurement(row, metric, "mean", per_query["units"], values(level, name), seed)
            for metric, (level, name) in TABLE_METRICS[table].items()]


def table_measurements(table: str, entries: Iterable[dict[str, Any]]) -> list[Measurement]:
    """Measurements of a retrieval table. ``entries``: ``{"row", "path", "seed", "part", "protocol"}`` per
    (row, seed): the evaluation JSON of that row at that seed (``seed`` None for the untrained rows)."""
    measurements = []
    for entry in entries:
        measurements += retrieval_measurements(table, entry["row"], read_json(entry["path"]), entry.get("seed"),
                                               entry.get("part"), entry.get("protocol"))
    return measurements


def segmentation_measurements(scores: Iterable[dict[str, Any]]) -> list[Measurement]:
    """Table 7's measurements from ``segmentation_quality.table7_scores`` (per-sentence match counts):
    one row per (segmenter, split), metrics ``TABLE7_METRICS`` with statistic ``ratio`` (module doc)."""
    from multivec.statistics import Measurement

    measurements = []
    for entry in scores:
        row, sentences = table7_row(entry["kind"], entry["split"]), entry["sentences"]
        units = [s["id"] for s in sentences]
        for theta in THETAS:
            matched = [s[f"matched_{theta}"] for s in sentences]
            components = {
                "p": [(100.0 * m, s["predicted"]) for m, s in zip(matched, sentences)],
                "r": [(100.0 * m, s["gold"]) for m, s in zip(matched, sentences)],
                "f1": [(200.0 * m, s["predicted"] + s["gold"]) for m, s in zip(matched, sentences)],
            }
            measurements += [Measurement(row, f"{name}_{theta}", "ratio", units, values)
                             for name, values in components.items()]
    return measurements



def evaluation_path(source: RowSource, seed: int | None) -> str:
    """The evaluation JSON of a row (the rules' outputs, rules/subencoder.smk): the untrained encoder's and
    the lexical baseline's once, a SubEncoder's per training seed."""
    if source.evaluation == "base":
        return f"results/subencoder/retrieval/base_{source.backbone}_{source.variant}.json"
    if source.evaluation == "lexical":
        return f"results/subencoder/retrieval/lexical_{source.variant}.json"
    if source.evaluation == "trained":
        return f"results/subencoder/retrieval/subencoder_{source.backbone}_{source.variant}/seed{seed}.json"
    return f"results/subencoder/predicted/subencoder_{source.backbone}_full/seed{seed}.json"


def row_rankings(table: str, source: RowSource) -> list[str]:
    """The rankings (the rankings JSONL's ``ranking``) the row's metrics in ``table`` read: the proposition level
    under the row's protocol (Table 1) or the authors' (Tables 5, 8), and Table 4's ``sentence`` and ``document``
    levels; for a Table 8 row, of its part (``source.variant``)."""
    return list(dict.fromkeys((source.protocol or "authors") if level == "proposition" else level
                              for level, _ in TABLE_METRICS[table].values()))


def unit_entries(table: str, layout: Layout, seeds: Sequence[int]) -> list[dict[str, Any]]:
    """``table_measurements``' entries of a retrieval table over ``seeds``: each trained row at each seed,
    each untrained row once (seed None)."""
    entries = []
    for source in table_rows(table, layout):
        for seed in (seeds if source.trained else [None]):
            entries.append({"row": source.row, "path": evaluation_path(source, seed), "seed": seed,
                            "part": source.variant if source.evaluation == "predicted" else None,
                            "protocol": source.protocol})
    return entries
