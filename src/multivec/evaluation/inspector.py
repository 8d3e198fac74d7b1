"""Inspectors for what the shared ranking evaluation and the results tables write (``ranking_evaluation.py``;
NUGGET §6.1's ``multivec.nugget.tables.table2`` and ``.plots``, and every work's tables with ``paper_*``
columns): per-query rankings, a row's MRR×100 file, result tables with the paper's numbers in ``paper_*``
columns, and figures.

The rankings inspector recomputes MRR with the project's one rank definition
(``multivec.metrics.ranking.ranks_of_answers``: ties count against the answer).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from multivec.inspection.common import (Report, format_summary, has_suffix, json_object_has, jsonl_first_row_has,
                                        length_summary, load_rows_checked, read_json_checked, read_table, schema)
from multivec.inspection.generic import describe_json, describe_table
from multivec.inspection.registry import inspector
from multivec.io import MalformedInputError, iter_lines
from multivec.tasks.inspector import answer_in_range


def _row_problem(row) -> str | None:
    if len(row["scores"]) != len(row["candidates"]):
        return f"{len(row['scores'])} scores for {len(row['candidates'])} candidates"
    return answer_in_range(row)


@inspector("rankings", "per-query JSONL: source, candidates, scores, answer, predicted, rank_of_answer",
           jsonl_first_row_has("candidates", "scores"), 70)
def inspect_rankings(path: Path, report: Report) -> None:
    import numpy as np

    from multivec.metrics.ranking import ranks_of_answers  # numpy, loaded only when a rankings file is shown

    rows = load_rows_checked(path, {"candidates": list, "scores": list, "answer": int}, "rankings row", _row_problem)
    ranks = []
    for row in rows:
        ranks.append(int(ranks_of_answers(np.asarray([row["scores"]], dtype=float), np.asarray([row["answer"]]))[0]))
    mrr = statistics.fmean(1 / r for r in ranks) if ranks else 0.0
    top1 = sum(r == 1 for r in ranks) / len(ranks) if ranks else 0.0
    report.line(f"queries: {len(rows)}  schema: {schema(rows)}")
    report.line(f"MRR: {100 * mrr:.2f}  accuracy@1: {100 * top1:.2f}")
    stored = [r["rank_of_answer"] for r in rows if "rank_of_answer" in r]
    if stored and len(stored) == len(rows):
        report.line(f"rank of answer: {format_summary(length_summary(stored))}")
        disagree = sum(s != r for s, r in zip(stored, ranks))
        if disagree:
            report.line(f"WARNING: stored rank_of_answer differs from the scores' rank in {disagree} rows")
    for row, rank in list(zip(rows, ranks))[:report.n]:
        winner = max(range(len(row["scores"])), key=row["scores"].__getitem__)
        answer = row["answer"]
        report.line(f"  query {row.get('source')}: answer {row['candidates'][answer]} "
                    f"(score {row['scores'][answer]:.4f}, rank {rank}); winner {row['candidates'][winner]} "
                    f"(score {row['scores'][winner]:.4f})" + (" = answer" if winner == answer else ""))


@inspector("ranking metrics", "a row's result on one task: row, task, method, mrr (x100), n_queries",
           json_object_has("mrr", "n_queries"), 70)
def inspect_ranking_metrics(path: Path, report: Report) -> None:
    value = read_json_checked(path)
    report.line(f"row: {value.get('row')}  task: {value.get('task')}  method: {value.get('method')}")
    report.line(f"MRR x100: {value['mrr']:.2f} over {value['n_queries']} queries")
    rest = {k: v for k, v in value.items() if k not in ("row", "task", "method", "mrr", "n_queries")}
    if rest:
        describe_json(rest, report)


def _has_paper_columns(path: Path) -> bool:
    if not (path.is_file() and path.suffix == ".csv"):
        return False
    header = next((text for _, text in iter_lines(path)), "")
    return any(name.startswith("paper_") for name in header.split(","))


@inspector("results table", "a results table with the paper's numbers in paper_* columns (table2.csv, ...)",
           _has_paper_columns, 60)
def inspect_results_table(path: Path, report: Report) -> None:
    table = read_table(path, ",")
    describe_table(table, report)
    for column in table.columns:
        ours = str(column)[len("paper_"):] if str(column).startswith("paper_") else None
        if ours is None or ours not in table.columns:
            continue
        both = table[[ours, column]].dropna()
        if len(both):
            diff = (both[ours] - both[column]).astype(float)
            report.line(f"ours - paper on {ours}: {len(both)} rows with a paper number; "
                        f"difference min={diff.min():+.2f} mean={diff.mean():+.2f} max={diff.max():+.2f}")
        else:
            report.line(f"ours - paper on {ours}: no row has a paper number")


@inspector("image", "a figure (.png): size", has_suffix(".png"), 40)
def inspect_image(path: Path, report: Report) -> None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            report.line(f"{image.width} x {image.height} pixels, mode {image.mode}, {path.stat().st_size:,} bytes")
    except (UnidentifiedImageError, OSError) as err:
        raise MalformedInputError(path, None, f"not a readable image: {err}") from None

