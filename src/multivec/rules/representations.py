"""The representation matrix's layout (rules/representations.smk): which representation each results-table row
is, and where its cells and its index size come from (``multivec.evaluation.representation_matrix``).

- NUGGET's Table 2 rows: PI and RR from ``table2``; Lee and polarity from ``table2_document_tasks`` (the same
  rows on the document tasks, every row with vectors: BM25 has none there);
- the mean-pooled base encoder also on PropSegment, as Table 1's untrained backbone with the
  ``token_subset`` encoding (the proposition's own tokens, mean-pooled) when that backbone is the base encoder;
- the sub-sentence encoder's trained SubEncoders and lexical baseline: PropSegment (Table 1, authors' protocol);
- the distillation table's rows (teachers, their concatenation, the untrained and the trained students): Lee,
  polarity, PI, RR from the distillation table; PropSegment from ``distill_propsegment`` (each proposition's text
  embedded by the row's model, ranked by cosine: scored here).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from multivec.evaluation.representation_matrix import CellSource, Representation

FAMILY_OF_KIND = {"bm25": "lexical", "mean_pooled": "single-vector", "tsdae": "single-vector",
                  "nugget": "multi-vector", "token_states": "multi-vector", "token_pooling": "multi-vector"}
DOCUMENT_TASK_METRICS = {"Lee": "lee_pearson", "polarity": "polarity_accuracy"}
DISTILL_METRICS = {"Lee": "lee_pearson", "polarity": "polarity_accuracy", "PI": "pi_mrr", "RR": "rr_mrr"}
PROPSEGMENT_PROTOCOL = "authors"  # the authors' evaluation (Table 1's first block)


def table2_display_name(row: Mapping[str, Any], base_encoder: str) -> str:
    """A Table 2 row as a reader names it: ``NUGGET MT r=0.25``, ``token pooling r=0.5``, ``minilm mean-pooled``."""
    kind = row["kind"]
    if kind in ("nugget", "tsdae"):
        name = f"{'NUGGET' if kind == 'nugget' else 'TSDAE'} {row['objective'].upper()}"
        return name + (f" r={row['ratio']}" if kind == "nugget" else "")
    return {"bm25": "BM25", "mean_pooled": f"{base_encoder} mean-pooled",
            "token_states": f"ColBART ({base_encoder}, every token state)",
            "token_pooling": f"token pooling r={row.get('ratio')}"}[kind]


def matrix_representations(table2_rows: Mapping[str, Mapping[str, Any]], document_task_rows: Iterable[str],
                           base_encoder: str, subencoder_backbones: Mapping[str, str], subencoder_lexical: bool,
                           distill_rows: Iterable[str], gates: Mapping[str, str] | None = None,
                           subencoder_baselines: Iterable[str] = ("token_subset",)) -> list[Representation]:
    """Every matrix row (module doc). ``table2_rows``: ``table2.rows`` by name; ``document_task_rows``: those scored
    on the document tasks; ``subencoder_backbones``: backbone name -> encoder; ``distill_rows``: the
    distillation table's row names; ``gates``: Table 2's sanity gate of each trained row (its ``gate`` column);
    ``subencoder_baselines``: the App. C.1 encodings Table 1 evaluates (the mean-pooled row's PropSegment cell
    needs ``token_subset``)."""
    from multivec.subencoder.tables.units import LEXICAL_ROW, base_row, protocol_row, subencoder_row

    document_task_rows = set(document_task_rows)
    representations = []
    for name, row in table2_rows.items():
        cells = {"PI": CellSource("table2", name, "PI"), "RR": CellSource("table2", name, "RR")}
        if name in document_task_rows:
            cells.update({task: CellSource("table2_document_tasks", name, metric)
                          for task, metric in DOCUMENT_TASK_METRICS.items()})
        if row["kind"] == "mean_pooled" and "token_subset" in subencoder_baselines:
            for backbone, encoder in subencoder_backbones.items():
                if encoder == base_encoder:
                    cells["PropSegment"] = CellSource(
                        "subencoder_table1", protocol_row(base_row(backbone, "token_subset"), PROPSEGMENT_PROTOCOL),
                        "P@1")
                    break
        representations.append(Representation(table2_display_name(row, base_encoder), FAMILY_OF_KIND[row["kind"]],
                                               "nugget" if row["kind"] in ("nugget", "tsdae") else "baseline",
                                               cells, str((gates or {}).get(name) or "")))
    for backbone in subencoder_backbones:
        representations.append(Representation(
            subencoder_row(backbone), "proposition", "subencoder",
            {"PropSegment": CellSource("subencoder_table1", protocol_row(subencoder_row(backbone),
                                                                         PROPSEGMENT_PROTOCOL), "P@1")}))
    if subencoder_lexical:
        representations.append(Representation(
            "word Jaccard", "lexical", "baseline",
            {"PropSegment": CellSource("subencoder_table1", protocol_row(LEXICAL_ROW, PROPSEGMENT_PROTOCOL), "P@1")}))
    for name in distill_rows:
        cells = {task: CellSource("distill_table", name, metric) for task, metric in DISTILL_METRICS.items()}
        cells["PropSegment"] = CellSource("distill_propsegment", name, "P@1")
        representations.append(Representation(f"distill: {name}", "single-vector", "distill", cells))
    return representations


def size_sources(table2_rows: Mapping[str, Mapping[str, Any]], representations: Iterable[Representation],
                 encodings_dir, task_documents: Mapping[str, str], subencoder_evaluations: Mapping[str, str],
                 distill_table_csv: str, base_encoder: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Where each (representation, task)'s index size is read (``representation_matrix.size_of``):
    ``encodings_dir(row, task)``: a Table 2 row's encodings folder at the first tables seed; ``task_documents``:
    each Table 2 task's documents (BM25's postings); ``subencoder_evaluations``: the PropSegment evaluation JSON of
    each Table 1 row (its ``index``: propositions per sentence, bytes per vector); the distillation rows'
    dimension is the distillation table's. The lexical PropSegment baseline has no size (not computed)."""
    representations = list(representations)
    by_name = {table2_display_name(row, base_encoder): (name, row) for name, row in table2_rows.items()}
    # propositions per sentence: any vector row's PropSegment evaluation says it (the same retrieval set)
    with_index = [subencoder_evaluations[r.cells["PropSegment"].row] for r in representations
                  if r.family == "proposition" and r.cells["PropSegment"].row in subencoder_evaluations]
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for representation in representations:
        sources = out.setdefault(representation.name, {})
        for task, cell in representation.cells.items():
            if task == "PropSegment" and cell.table == "distill_propsegment":
                if with_index:  # one vector per proposition, as many per sentence as the SubEncoder keeps
                    sources[task] = {"kind": "table_dimension", "path": distill_table_csv, "row": cell.row,
                                     "vectors_from": with_index[0]}
            elif task == "PropSegment":
                if representation.family != "lexical" and cell.row in subencoder_evaluations:
                    sources[task] = {"kind": "retrieval_evaluation", "path": subencoder_evaluations[cell.row]}
            elif representation.name in by_name:
                name, row = by_name[representation.name]
                if row["kind"] == "bm25":
                    sources[task] = {"kind": "postings", "path": task_documents[task]}
                else:
                    sources[task] = {"kind": "encodings", "path": encodings_dir(name, task.lower()),
                                     "mean_pooled": row["kind"] == "mean_pooled"}
            elif cell.table == "distill_table":
                sources[task] = {"kind": "table_dimension", "path": distill_table_csv, "row": cell.row}
    return out
