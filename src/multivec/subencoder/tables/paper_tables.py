"""Tables 1, 3, 4, 5, 7 and 8 of the sub-sentence encoder paper (Chen et al. 2023), ours beside the paper's, as
CSV and Markdown. Our numbers come from the evaluation JSONs (``multivec.subencoder.evaluation.retrieval``); the
paper's live only in the ``paper_*`` columns, copied from the paper's text (``PAPER_*`` below).

- Table 1 (§4.2.1): atomic-fact retrieval, P@1 and R@5/10/20 ×100, per encoder row and evaluation
  protocol (``multivec.subencoder.evaluation.retrieval.PROTOCOLS``), with the share of top-1 candidates from the
  query's own sentence; the paper's numbers only beside the authors' protocol.
- Table 3 (§4.2.2): C-STS Spearman r ×100 (paper scale; ``multivec.subencoder.evaluation.csts``).
- Table 4 (§5.2): sentence- and document-level retrieval, P@1 and R@5.
- Table 5 (§5.4): the SubEncoder with a reduced output dimension (64) against the full one, P@1 and R@5.
- Table 8 (App. C.2): P@1 and R@5 with segmenter-predicted query propositions (token-set Jaccard above
  ``subencoder.evaluation.match_jaccard`` with a gold one) against the same queries' gold propositions,
  one row each.
- Table 7 (App. A.4): segmentation P/R/F1 against PropSegment's human segmentations, from the per-sentence
  match counts of ``multivec.subencoder.evaluation.segmentation_quality`` (the metric lives there, the table here).

Every metric column gets its 95% bootstrap CI over queries and its seed-to-seed SD (``<metric>_lo``,
``_hi``, ``_sd``, ``n_seeds``; ``multivec.statistics``); the Markdown shows them as ``mean [lo, hi] ±sd``
and ends with the declared paired comparisons and the verdicts of the table's claims.
Each Markdown file ends with an index-size line: vectors per sentence and bytes per vector (float32) at
the full and the reduced dimension.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from multivec.io.markdown_table import markdown_table as table_lines
from multivec.subencoder.evaluation.segmentation_quality import OUR_COLUMNS, prf_of

PAPER_SOURCE = "Chen et al. 2023, Sub-Sentence Encoder: Contrastive Learning of Propositional Semantic Representations, Tables 1, 4, 5 and 8 (text in shared/papers)"

# Table 1: System -> (P@1, R@5, R@10, R@20)
PAPER_TABLE1: dict[str, tuple[float, float, float, float]] = {
    "MiniLM-L6-v2": (18.36, 37.28, 44.87, 51.62),
    "DistilRoberta": (16.59, 33.65, 40.82, 46.79),
    "SimCSE (unsupervised)": (8.90, 45.13, 69.47, 84.29),
    "SimCSE (supervised)": (16.53, 57.83, 77.28, 87.89),
    "GTR base": (21.90, 52.50, 65.54, 75.69),
    "ST5 base": (26.16, 57.65, 69.00, 78.58),
    "SUBENCODER (SimCSE)": (41.64, 71.48, 78.22, 83.34),
    "SUBENCODER (ST5 base)": (40.97, 72.15, 79.30, 84.33),
    "SUBENCODER (GTR base)": (40.77, 72.90, 80.45, 85.81),
}
# Table 3 (C-STS): (LLM, SubEncoder backbone family) -> Spearman r x 100, GPT + SUBENCODER (0-shot) rows
PAPER_TABLE3: dict[tuple[str, str], float] = {
    ("gpt-3.5-turbo", "SimCSE"): 27.5, ("gpt-3.5-turbo", "GTR"): 31.9, ("gpt-3.5-turbo", "ST5"): 33.0,
    ("gpt-4", "SimCSE"): 34.5, ("gpt-4", "GTR"): 36.9, ("gpt-4", "ST5"): 37.2,
}
# Table 4: Model -> (sentence P@1, sentence R@5, document P@1, document R@5)
PAPER_TABLE4: dict[str, tuple[float, float, float, float]] = {
    "GTR base": (49.35, 77.01, 51.93, 81.97),
    "Sentence-T5 base": (50.59, 79.37, 45.27, 77.10),
    "SUBENCODER (GTR)": (42.94, 82.27, 45.04, 90.13),
    "SUBENCODER (ST5)": (43.49, 81.44, 45.93, 89.19),
}
# Table 5: (Model, Dim.) -> (P@1, R@5)
PAPER_TABLE5: dict[tuple[str, int], tuple[float, float]] = {
    ("SUBENCODER (ST5-Large)", 1024): (42.61, 72.93),
    ("SUBENCODER (ST5-Large)", 64): (42.10, 70.17),
    ("SUBENCODER (ST5-Base)", 768): (40.97, 72.15),
    ("SUBENCODER (ST5-Base)", 64): (40.45, 71.62),
}
# Table 8: Base Model -> (P@1 gold, P@1 predicted, R@5 gold, R@5 predicted); the paper's third row says
# "ST5 base" twice; its numbers are those of SUBENCODER (SimCSE) in Table 1, so we list it as SimCSE.
PAPER_TABLE8: dict[str, tuple[float, float, float, float]] = {
    "GTR base": (40.77, 38.39, 72.90, 71.47),
    "ST5 base": (40.97, 38.14, 72.15, 70.94),
    "SimCSE": (41.64, 37.28, 71.48, 69.32),
}


def _paper(table: dict, key: Any, n: int) -> tuple:
    if key in (None, ""):
        return (None,) * n
    if key not in table:
        raise KeyError(f"paper row {key!r} is not in the paper's table; known: {sorted(map(str, table))}")
    return table[key]


def _round(value):
    return None if value is None else round(float(value), 2)


def table1(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """``rows``: ``{"row", "kind", "strategy", "protocol", "paper_row", "result"}`` with ``result`` an
    evaluation JSON; ``protocol`` (``evaluation.retrieval.PROTOCOLS``, default ``authors``) picks its proposition-level
    scores and where its top-1 candidates come from (``top1_own_sentence_pct``)."""
    records = []
    for row in rows:
        protocol = row.get("protocol") or "authors"
        result = row["result"]
        prop = result["protocols"][protocol] if "protocols" in result else result["proposition"]
        paper = _paper(PAPER_TABLE1, row.get("paper_row"), 4)
        top1 = (result.get("top1") or {}).get(protocol, {})
        records.append({"row": row["row"], "protocol": protocol, "kind": row["kind"], "encoding": row["strategy"],
                        "dim": result.get("dim"), "P@1": _round(prop["p@1"]), "R@5": _round(prop["r@5"]),
                        "R@10": _round(prop["r@10"]), "R@20": _round(prop["r@20"]),
                        "top1_own_sentence_pct": _round(top1.get("top1_own_sentence_pct")),
                        "paper_row": row.get("paper_row") or "", "paper_P@1": paper[0], "paper_R@5": paper[1],
                        "paper_R@10": paper[2], "paper_R@20": paper[3], "queries": result["queries"],
                        "candidates": result["candidates"]})
    df = pd.DataFrame.from_records(records)
    df["dim"] = df["dim"].astype("Int64")
    return df


# Table 3's SubEncoders by backbone family, and how a backbone's encoder id or name shows its family.
TABLE3_FAMILIES: dict[str, tuple[str, ...]] = {"SimCSE": ("simcse",), "GTR": ("gtr",), "ST5": ("st5", "sentence-t5")}


def table3_family(backbone: dict[str, Any]) -> str | None:
    """The Table 3 family (SimCSE, GTR or ST5) of a backbone (``{"name", "encoder"}`` from the config), found
    in its encoder id or name; None where it is none of them (e.g. the demo's MiniLM, not in Table 3)."""
    text = f"{backbone.get('encoder', '')} {backbone.get('name', '')}".lower()
    families = [family for family, marks in TABLE3_FAMILIES.items() if any(mark in text for mark in marks)]
    if len(families) > 1:
        raise ValueError(f"backbone {backbone.get('name')!r} ({backbone.get('encoder')!r}) names several Table 3 "
                         f"families: {families}")
    return families[0] if families else None


def paper_table3(llm: str, backbone: dict[str, Any]) -> float | None:
    """The paper's Table 3 Spearman r x100 for ``llm`` picking the words and a SubEncoder of ``backbone``'s
    family, or None where the paper has no such row (another LLM or family)."""
    family = table3_family(backbone)
    return None if family is None else PAPER_TABLE3.get((llm, family))


def table3(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """``rows``: ``{"llm", "backbone": config backbone, "spearman_x100", "counts": csts_predictions' counts}``."""
    records = []
    for row in rows:
        records.append({"llm": row["llm"], "subencoder": row["backbone"]["name"],
                        "spearman_x100": _round(row["spearman_x100"]),
                        "paper_family": table3_family(row["backbone"]) or "",
                        "paper_spearman_x100": paper_table3(row["llm"], row["backbone"]), **row["counts"]})
    return pd.DataFrame.from_records(records)


def table4(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    records = []
    for row in rows:
        res, paper = row["result"], _paper(PAPER_TABLE4, row.get("paper_row"), 4)
        records.append({"row": row["row"], "kind": row["kind"], "encoding": row["strategy"],
                        "sentence_P@1": _round(res["sentence"]["p@1"]), "sentence_R@5": _round(res["sentence"]["r@5"]),
                        "document_P@1": _round(res["document"]["p@1"]), "document_R@5": _round(res["document"]["r@5"]),
                        "paper_row": row.get("paper_row") or "", "paper_sentence_P@1": paper[0],
                        "paper_sentence_R@5": paper[1], "paper_document_P@1": paper[2],
                        "paper_document_R@5": paper[3], "sentences": res["sentence_units"],
                        "documents": res["document_units"]})
    return pd.DataFrame.from_records(records)


def table5(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """``rows``: the full-dimension SubEncoder first, then its reduced-dimension variant(s)."""
    records, full = [], None
    for row in rows:
        res = row["result"]
        paper = _paper(PAPER_TABLE5, (row["paper_row"], row["paper_dim"]) if row.get("paper_row") else None, 2)
        p1, r5 = res["proposition"]["p@1"], res["proposition"]["r@5"]
        if full is None:
            full = (p1, r5)
        records.append({"row": row["row"], "dim": res["dim"], "P@1": _round(p1), "R@5": _round(r5),
                        "delta_P@1": _round(p1 - full[0]), "delta_R@5": _round(r5 - full[1]),
                        "bytes_per_vector": res["index"]["bytes_per_vector_fp32"],
                        "paper_row": row.get("paper_row") or "", "paper_dim": row.get("paper_dim"),
                        "paper_P@1": paper[0], "paper_R@5": paper[1]})
    return pd.DataFrame.from_records(records)


def table8(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """``rows``: ``{"row", "queries": gold | predicted, "segmenter", "paper_row", "result": that part of the
    Table 8 evaluation JSON, "all_queries"}``; a SubEncoder's gold and predicted rows score the same matched
    queries (its predicted row's P@1 against its gold row's is the paired comparison)."""
    records = []
    for row in rows:
        prop, paper = row["result"]["proposition"], _paper(PAPER_TABLE8, row.get("paper_row"), 4)
        predicted = row["queries"] == "predicted"
        records.append({"row": row["row"], "queries": row["queries"], "segmenter": row["segmenter"],
                        "P@1": _round(prop["p@1"]), "R@5": _round(prop["r@5"]),
                        "matched_queries": row["result"]["queries"], "all_queries": row.get("all_queries"),
                        "paper_row": row.get("paper_row") or "", "paper_P@1": paper[1 if predicted else 0],
                        "paper_R@5": paper[3 if predicted else 2]})
    return pd.DataFrame.from_records(records)


def index_size_line(vectors_per_sentence: float, full_dim: int, reduced_dim: int | None) -> str:
    parts = [f"Index size: {vectors_per_sentence:.2f} vectors per sentence (one per proposition); "
             f"{4 * full_dim} bytes per float32 vector at {full_dim} dims"]
    if reduced_dim:
        parts.append(f", {4 * reduced_dim} bytes at {reduced_dim} dims")
    return "".join(parts) + "."


# The paper's retrieval set (Chen et al. 2023, Fig. 3 and §4.2.1), quoted beside ours.
PAPER_RETRIEVAL_SET = "8.8k query propositions over ~45k candidate propositions from 1.5k News and Wikipedia documents"
PROTOCOL_TEXT = {
    "authors": "only the query itself leaves its ranking, as the authors' evaluation does",
    "own_sentence_excluded": "every candidate of the query's own sentence leaves its ranking (the query's sibling "
                             "propositions, which share its context; never gold)",
    "own_document_excluded": "every candidate of the query's own document leaves its ranking (never gold)",
}


def retrieval_notes(table: str, evaluation: dict[str, Any], subencoder: dict[str, Any], scale: str,
                    seeds: Sequence[int], pca: dict[str, Any] | None = None) -> list[str]:
    """The notes under a retrieval table, from the data and the configuration, never fixed text:
    ``evaluation`` is an evaluation JSON of the table's first SubEncoder (counts of the retrieval set, the
    candidates each protocol removes), ``subencoder`` the configuration's ``subencoder`` block, ``pca`` what
    Table 5's PCA row was fitted on (its evaluation JSON's ``pca``, first seed)."""
    model, train, ev = subencoder["model"], subencoder["train"], subencoder["evaluation"]
    data, segmenter, nli = subencoder.get("data", {}), subencoder.get("segmenter", {}), subencoder.get("nli", {})
    removed = evaluation.get("removed_per_query", {})
    lines = [
        index_size_line(evaluation["index"]["vectors_per_sentence"], evaluation["dim"], model.get("reduced_dim")),
        f"Retrieval set: {evaluation['queries']} PropSegment dev hypothesis propositions (queries) over "
        f"{evaluation['candidates']} candidate propositions from {evaluation['candidate_sentences']} sentences of "
        f"{evaluation['candidate_documents']} documents; the paper's: {PAPER_RETRIEVAL_SET}.",
        f"Scale: {scale}. SubEncoders train {train['max_steps']} steps of {train['batch_size']} sentences "
        f"({train.get('device', 'auto')}) on sentence pairs from {data.get('pairs_source', '?')}, propositions from "
        f"the {segmenter.get('kind', '?')} segmenter, positives from the {nli.get('kind', '?')} NLI "
        "(data/built/subencoder/meta.json says what each built).",
        f"SubEncoder rows: mean over {len(seeds)} training seed(s) ({', '.join(map(str, seeds))}); cells are mean "
        "[95% bootstrap CI over queries, pooled across seeds] ± seed-to-seed SD (with two or more seeds); "
        "untrained and lexical rows are deterministic (one evaluation).",
    ]
    if table == "table1":
        for protocol in ev.get("protocols") or ["authors"]:
            mean = removed.get(protocol)
            lines.append(f"Protocol {protocol}: {PROTOCOL_TEXT[protocol]}"
                         + ("" if mean is None else f" ({mean:.2f} candidates removed per query on average)") + ".")
        lines.append("top1_own_sentence_pct: % of queries whose top-1 candidate is a proposition of the query's own "
                     "sentence (always a miss: gold is in another document).")
        if ev.get("lexical_baseline"):
            lines.append("word Jaccard (lexical baseline): candidates ranked by the Jaccard similarity of the "
                         "lower-cased word sets (PropSegment tokens holding a letter or digit), no model; ties go "
                         "to the earlier candidate.")
        lines.append("paper_* columns: only beside the authors' protocol, on the encoding the paper reports for "
                     "that encoder (App. C.1).")
    elif table == "table4":
        mean = removed.get("own_document_excluded")
        lines.append("A unit's score is the max over its propositions; the query's own document is left out"
                     + ("" if mean is None else f" ({mean:.2f} candidate propositions per query)") + ".")
    elif table == "table5":
        lines.append("delta_*: the reduced model's seed mean minus the full model's; authors' protocol.")
        if pca:
            lines.append(f"PCA {pca['dim']}-d row (not in the paper, which trains its reduced models as the row "
                         f"above): the trained full SubEncoder's outputs projected on their first {pca['dim']} "
                         f"principal components, fitted after training on its {pca['fit_propositions']} training "
                         f"propositions (seed {seeds[0]}; the components keep {100 * pca['variance_kept']:.1f}% of "
                         "their variance); no evaluation text is read to fit it.")
    elif table == "table8":
        lines.append(f"Queries: the gold queries whose sentence has a proposition predicted by the "
                     f"{ev.get('segmenter')!r} segmenter with token-set Jaccard > {ev.get('match_jaccard')} "
                     "with them; gold = the same queries' human propositions. Both runs leave out the same "
                     "candidate, the gold query's own (authors' protocol).")
    return lines


STAT_SUFFIXES = ("_lo", "_hi", "_sd")


def markdown_cell(value) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def markdown_table(df: pd.DataFrame, metrics: Sequence[str] = ()) -> list[str]:
    """Markdown table lines of ``df``. Each of ``metrics`` that has ``_lo``/``_hi``/``_sd`` columns
    (``TableStatistics.add_columns``) is one compact cell ``mean [lo, hi] ±sd`` (``format_estimate``;
    no ± for a single seed), and those columns are not shown on their own."""
    from multivec.statistics import format_estimate

    with_stats = [m for m in metrics if f"{m}_lo" in df.columns]
    hidden = {f"{m}{suffix}" for m in with_stats for suffix in STAT_SUFFIXES}
    shown = [c for c in df.columns if c not in hidden]
    rows = []
    for record in df.to_dict("records"):
        cells = []
        for column in shown:
            if column in with_stats:
                def value(key):
                    v = record.get(key)
                    return None if v is None or pd.isna(v) else float(v)
                cells.append(format_estimate(value(column), value(f"{column}_lo"), value(f"{column}_hi"),
                                             value(f"{column}_sd")))
            else:
                cells.append(markdown_cell(record[column]))
        rows.append(cells)
    return table_lines(shown, rows)


def markdown(df: pd.DataFrame, title: str, notes: Sequence[str], metrics: Sequence[str] = (),
             sections: Sequence[str] = ()) -> str:
    """The table's Markdown: title, table (``markdown_table``), notes, the paper source, then ``sections``
    (lines: the paired comparisons and the claims' verdicts)."""
    lines = [f"# {title}", "", *markdown_table(df, metrics)]
    lines += ["", *[f"{note}" for note in notes], "", f"Paper columns: {PAPER_SOURCE}."]
    if sections:
        lines += ["", *sections]
    return "\n".join(lines) + "\n"


def write_table(df: pd.DataFrame, csv_path: str | os.PathLike, md_path: str | os.PathLike, title: str,
                notes: Sequence[str], metrics: Sequence[str] = (), sections: Sequence[str] = ()) -> None:
    Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv_path, index=False)
    Path(md_path).write_text(markdown(df, title, notes, metrics, sections))


def paper_base_row(entry: dict[str, Any], strategy: str, protocol: str | None) -> str | None:
    """The paper's Table 1 row beside an untrained encoder's row: only under the authors' protocol (the
    paper's numbers are measured so) and only for the encoding the paper reports for it (``paper_encoding``
    of a baseline encoder, ``paper_base_encoding`` of a backbone; App. C.1: mask pooling unless given)."""
    if protocol not in (None, "authors"):
        return None
    encoding = entry.get("paper_encoding") or entry.get("paper_base_encoding") or "mask_pooling"
    return entry.get("paper_row" if "paper_encoding" in entry else "paper_base_row") if strategy == encoding else None


def retrieval_table_frame(table: str, subencoder: dict[str, Any], seed: int, read=None) -> pd.DataFrame:
    """Table 1, 4, 5 or 8 from the evaluation JSONs of one training seed (``seed``; untrained rows have one),
    rows as ``units.table_rows`` names them for the ``subencoder`` block of the configuration. The
    metric columns are that seed's; ``add_statistics`` replaces them by the seed means over the table's seeds."""
    from multivec.io import read_json
    from multivec.subencoder.tables.units import Layout, evaluation_path, table_rows

    read = read or read_json
    config = {b["name"]: b for b in subencoder["model"]["backbones"]}
    extra = {e["name"]: {**e, "paper_encoding": e.get("paper_encoding") or "mask_pooling"}
             for e in subencoder["evaluation"].get("baseline_encoders") or []}
    sources = table_rows(table, Layout.from_config(subencoder))
    results = {s.row: read(evaluation_path(s, seed)) for s in sources}
    if table == "table1":
        def paper_row(s):
            if s.evaluation == "lexical":
                return None
            if s.trained:
                return config[s.backbone].get("paper_row") if s.protocol == "authors" else None
            return paper_base_row(extra.get(s.backbone) or config[s.backbone], s.variant, s.protocol)

        kinds = {"trained": "subencoder", "base": "base", "lexical": "lexical"}
        return table1([{"row": s.row, "kind": kinds[s.evaluation], "protocol": s.protocol,
                        "strategy": "mask_pooling" if s.trained else s.variant, "paper_row": paper_row(s),
                        "result": results[s.row]} for s in sources])
    if table == "table4":
        return table4([{"row": s.row, "kind": "subencoder" if s.trained else "base", "strategy": "mask_pooling",
                        "paper_row": config[s.backbone].get("paper_table4_row") if s.trained else None,
                        "result": results[s.row]} for s in sources])
    if table == "table5":
        paper_table5_row = subencoder["model"].get("paper_table5_row")
        return table5([{"row": s.row, "result": results[s.row], "paper_row": paper_table5_row,
                        "paper_dim": results[s.row]["dim"] if paper_table5_row else None} for s in sources])
    if table == "table8":
        return table8([{"row": s.row, "queries": s.variant, "segmenter": results[s.row]["segmenter"],
                        "paper_row": config[s.backbone].get("paper_table8_row"),
                        "result": results[s.row][s.variant], "all_queries": results[s.row]["all_queries"]}
                       for s in sources])
    raise ValueError(f"unknown retrieval table {table!r}")


def pca_fit(subencoder: dict[str, Any], seed: int, read=None) -> dict[str, Any] | None:
    """What Table 5's PCA row was fitted on at ``seed`` (its evaluation JSON's ``pca``: dim, propositions,
    variance kept), for the table's note; None when Table 5 has no PCA row."""
    from multivec.io import read_json
    from multivec.subencoder.tables.units import Layout, evaluation_path, table_rows

    rows = [s for s in table_rows("table5", Layout.from_config(subencoder)) if s.variant.startswith("pca")]
    return (read or read_json)(evaluation_path(rows[0], seed)).get("pca") if rows else None


def add_statistics(df: pd.DataFrame, units_path: str | os.PathLike, metrics: Sequence[str],
                   statistics: dict[str, Any], comparisons: Sequence[dict[str, Any]] | None):
    """``df`` with each metric replaced by its seed mean (2 decimals) and followed by its CI and seed SD
    (``TableStatistics.add_columns``), ``n_seeds``; and the ``TableStatistics`` (the comparisons' tests).
    ``statistics``: the configuration's alpha, confidence, bootstrap_resamples, permutation_resamples.
    Table 5's ``delta_*`` columns are recomputed from the seed means."""
    from multivec.statistics import table_statistics_from_units

    stats = table_statistics_from_units(units_path, comparisons, statistics)
    out = stats.add_columns(df, "row", metrics)
    for metric in metrics:
        for suffix in ("", *STAT_SUFFIXES):
            out[f"{metric}{suffix}"] = out[f"{metric}{suffix}"].astype(float).round(2)
        if f"delta_{metric}" in out.columns:
            out[f"delta_{metric}"] = (out[metric] - out[metric].iloc[0]).round(2)
    out["n_seeds"] = out["n_seeds"].astype("Int64")
    return out, stats


# Table 7 (App. A.4): segmentation quality (the metric is multivec.subencoder.evaluation.segmentation_quality). The paper's
# numbers, copied from its text: (precision, recall, F1) at theta 0.8, then at theta 0.5.
PAPER_TABLE7 = {
    "GPT-3.5-turbo": (35.79, 31.65, 33.60, 71.52, 63.87, 67.48),
    "T5-Large (w/ GPT3.5 training data)": (35.91, 31.70, 33.68, 70.27, 63.39, 66.65),
    "BERT-Large (fine-tuned on PropSegment, Chen et al. 2023)": (34.97, 33.42, 34.17, 67.42, 64.17, 65.75),
    "T5-Large (fine-tuned on PropSegment, Chen et al. 2023)": (55.95, 55.05, 55.50, 78.03, 76.74, 77.38),
}
PAPER_TABLE7_COLUMNS = ("paper_p_0.8", "paper_r_0.8", "paper_f1_0.8", "paper_p_0.5", "paper_r_0.5", "paper_f1_0.5")

# The paper's systems as our segmenter kinds compute them (paper scale), for the paper_* columns.
PAPER_ROW_OF_KIND = {"llm": "GPT-3.5-turbo", "seq2seq": "T5-Large (w/ GPT3.5 training data)"}
TABLE7_COLUMNS = ["row", "system", "kind", "stand_in", "split", "sentences", "predicted", "gold", *OUR_COLUMNS,
                  *PAPER_TABLE7_COLUMNS]


def training_segmenter_note(kind: str, alignment: str) -> str:
    """A line of Table 7 on the segmenter of the training data (``subencoder.segmenter.kind``)."""
    from multivec.subencoder.data.segmentation import ORACLE_NAME

    if kind == "oracle":
        return (f"Training data: the {ORACLE_NAME} of the PropSegment TEST sentences the training pairs come from. It has "
                "no row here (N/A): scored against the same human segmentations it is 100 by construction, and it "
                "never reads a DEV sentence. Predicted claims above are aligned with App. A.3 mode "
                f"{alignment!r}.")
    return (f"Training data: segmented by the {kind!r} segmenter (its row above); claims aligned with App. A.3 "
            f"mode {alignment!r}.")


def table7_rows(scores: Sequence[dict]) -> list[dict]:
    """Our rows (one per segmenter kind and split, from ``table7_scores``) then the paper's reference rows.

    Paper values fill ``paper_*`` of the row computing the same system (the LLM and the distilled T5 at
    paper scale); the fine-tuned systems of Chen et al. are reference rows with our columns empty. ``row``
    is the statistics layer's row name (``units.table7_row``).
    """
    from multivec.subencoder.tables.units import table7_row

    rows = []
    for entry in scores:
        paper = PAPER_TABLE7.get(PAPER_ROW_OF_KIND.get(entry["kind"]) if not entry["stand_in"] else None)
        ours = []
        for theta in (0.8, 0.5):
            prf = prf_of(entry["sentences"], theta)
            ours += [round(prf.precision, 2), round(prf.recall, 2), round(prf.f1, 2)]
        rows.append({"row": table7_row(entry["kind"], entry["split"]), "system": entry["system"],
                     "kind": entry["kind"], "stand_in": entry["stand_in"], "split": entry["split"],
                     "sentences": len(entry["sentences"]), "predicted": prf_of(entry["sentences"], 0.8).predicted,
                     "gold": prf_of(entry["sentences"], 0.8).gold, **dict(zip(OUR_COLUMNS, ours)),
                     **dict(zip(PAPER_TABLE7_COLUMNS, paper if paper else [None] * 6))})
    computed = {PAPER_ROW_OF_KIND.get(e["kind"]) for e in scores if not e["stand_in"]}
    for system, values in PAPER_TABLE7.items():
        if system in computed:
            continue
        rows.append({"row": f"{system} [paper only]", "system": f"{system} [paper only]", "kind": "paper",
                     "stand_in": False, "split": "as published", "sentences": None, "predicted": None, "gold": None,
                     **dict.fromkeys(OUR_COLUMNS), **dict(zip(PAPER_TABLE7_COLUMNS, values))})
    return rows


def table7_markdown(table, scale_line: str, sections: Sequence[str] = ()) -> str:
    """Table 7 as Markdown: ``table`` (a frame of ``TABLE7_COLUMNS``, with ``<metric>_lo/_hi/_sd`` beside
    our metrics once the statistics are added) with compact ``mean [lo, hi]`` cells, then ``sections``
    (the paired comparisons and the claims' verdicts)."""
    lines = ["# Sub-sentence encoder Table 7: proposition segmentation vs PropSegment", "", scale_line.strip(), "",
             "Jaccard-matched precision / recall / F1 (x100) at theta = 0.8 and 0.5, one-to-one matching per "
             "sentence, micro-averaged (Chen et al. 2023, PropSegmEnt). Claims are aligned to the sentence "
             "with App. A.3 before matching. [lo, hi]: 95% bootstrap CI over sentences (segmenters are not "
             "trained here, so there is no seed SD). paper_*: Table 7 of Chen et al. 2023 (Sub-sentence "
             "encoder), zero-shot on PropSegment; `[paper only]` rows are systems we do not run. Rows with "
             "stand_in = True are the demo's offline stand-in, not the paper's segmenter.", ""]
    lines += markdown_table(table, OUR_COLUMNS)
    if sections:
        lines += ["", *sections]
    return "\n".join(lines) + "\n"


def table7_frame(scores: Sequence[dict]):
    """Table 7 (``TABLE7_COLUMNS``) from ``table7_scores``: our rows then the paper's reference rows."""
    table = pd.DataFrame(table7_rows(scores), columns=TABLE7_COLUMNS)
    table[["sentences", "predicted", "gold"]] = table[["sentences", "predicted", "gold"]].astype("Int64")
    return table
