"""The representation matrix (shared by the works): every representation the project builds against every task
it applies to, each cell with its CI, and what each representation costs to index.

A **representation** is one way of turning a text into vectors (or terms): BM25, the mean-pooled base encoder,
ColBART's token states, token pooling at a ratio, NUGGET and TSDAE models, the distilled students and their
teachers, the SubEncoder. Its **cells** are read from the per-unit scores the works already write
(``results/units/<table>.<seedset>.parquet``, ``multivec.statistics.units``): a ``CellSource`` names the table,
row and metric of one (representation, task). Nothing is re-scored here.

**Like with like.** A task's column is computed on the units *every* representation in it was scored on (the
intersection of their unit ids: e.g. the distillation table scores PI on its first queries only, so the PI
column is the queries all rows share), and each cell is the mean over training seeds of the statistic on those
units, with the percentile-bootstrap CI of ``multivec.statistics.resampling`` (whole clusters where the
source table's units cluster, ``statistics.clusters.TABLE_CLUSTERS``; training seeds as a random effect). The
column's unit count is in ``n_units`` and in the Markdown's notes.

**Index size per document** (``Size``): the vectors a document keeps and their dimension, in float32 bytes
(vectors x dimension x 4; the encodings files store float16, half of it); for a lexical representation, its
postings (distinct terms of the document) x 8 bytes (a 4-byte term or document id and a 4-byte weight). A
task's **Pareto front** is the set of cells no other cell beats on both quality and bytes: the trade that
multi-vector representations are for.

``size_of`` measures one size where the encodings and documents are (rule ``representation_sizes``, which writes
them with ``sizes_record``; the matrix reads them back with ``read_sizes``). ``matrix_cells(representations,
units_files, sizes, ...)`` gives one record per (representation, task)
(``CELL_COLUMNS``); ``pareto_front`` marks the front; ``matrix_markdown`` and ``plot_matrix`` render it.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from multivec.statistics.claims_file import Reference

# The tasks, their headline metric, what a unit is, and what a "document" is for the index size.
TASKS = {
    "PI": {"metric": "MRR x 100", "unit": "queries", "document": "PI document"},
    "RR": {"metric": "MRR x 100", "unit": "queries", "document": "RR passage"},
    "Lee": {"metric": "Pearson r", "unit": "document pairs (resampled by document)", "document": "Lee document"},
    "polarity": {"metric": "accuracy x 100", "unit": "sentences", "document": "sentence"},
    "PropSegment": {"metric": "P@1 x 100", "unit": "query propositions (clustered by document)",
                    "document": "sentence (one vector per proposition)"},
}
FAMILIES = ("lexical", "single-vector", "multi-vector", "proposition")
CELL_COLUMNS = ["representation", "family", "work", "task", "metric", "value", "lo", "hi", "seed_sd", "n_seeds",
                "n_units", "task_units", "vectors_per_document", "dimension", "bytes_per_document", "pareto",
                "gate", "source"]
POSTING_BYTES = 8  # a 4-byte id and a 4-byte weight per (term, document)


# Where one (representation, task) cell's per-unit scores are: a results table, its row and its metric, named as a
# claim names them (``statistics.claims_file.Reference``).
CellSource = Reference


def source_name(source: CellSource) -> str:
    return f"{source.table}/{source.row}/{source.metric}"


@dataclass
class Representation:
    """One matrix row: a name, a family (``FAMILIES``), the work that builds it, its cells by task, and the
    sanity gate of a trained model (``""`` for an untrained one)."""

    name: str
    family: str
    work: str
    cells: dict[str, CellSource] = field(default_factory=dict)
    gate: str = ""

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"{self.name}: family {self.family!r} is not one of {FAMILIES}")
        unknown = sorted(set(self.cells) - set(TASKS))
        if unknown:
            raise ValueError(f"{self.name}: unknown task(s) {unknown}; known: {list(TASKS)}")


@dataclass(frozen=True)
class Size:
    """What one document costs to index under a representation: vectors (or postings) and their bytes."""

    vectors_per_document: float | None
    dimension: int | None
    bytes_per_document: float | None

    @classmethod
    def of_vectors(cls, vectors_per_document: float, dimension: int) -> "Size":
        return cls(float(vectors_per_document), int(dimension), float(vectors_per_document) * int(dimension) * 4)

    @classmethod
    def of_postings(cls, postings_per_document: float) -> "Size":
        return cls(None, None, float(postings_per_document) * POSTING_BYTES)


NO_SIZE = Size(None, None, None)


def encodings_size(folder: str | os.PathLike, mean_pooled: bool = False) -> Size:
    """The size of an encodings folder's documents (``multivec.encodings``, from its ``info.json``); a
    mean-pooled row keeps one vector of the same dimension per document."""
    from pathlib import Path

    from multivec.io import read_json

    info = read_json(Path(folder) / "info.json")
    per_document = 1.0 if mean_pooled else info["total_vectors"] / max(info["n_documents"], 1)
    return Size.of_vectors(per_document, info["dimension"])


def postings_size(texts: Sequence[str]) -> Size:
    """BM25's postings per document (distinct tokens of ``multivec.retrieval.bm25.tokenize``)."""
    from multivec.retrieval.bm25 import tokenize

    if not texts:
        raise ValueError("no documents to count postings of")
    return Size.of_postings(sum(len(set(tokenize(t))) for t in texts) / len(texts))


def size_of(source: Mapping[str, Any]) -> Size:
    """One (representation, task)'s size from where ``multivec.rules.representations.size_sources`` says it is:
    an encodings folder, a task's documents (postings), a PropSegment evaluation JSON (its ``index``), or a
    results table's ``dimension`` column (one vector per document)."""
    from multivec.io import read_docs_tsv, read_json

    kind = source.get("kind")
    if kind == "encodings":
        return encodings_size(source["path"], bool(source.get("mean_pooled")))
    if kind == "postings":
        return postings_size(list(read_docs_tsv(source["path"], on_empty="keep").values()))
    if kind == "retrieval_evaluation":
        index = read_json(source["path"])["index"]
        return Size.of_vectors(index["vectors_per_sentence"], index["bytes_per_vector_fp32"] // 4)
    if kind == "table_dimension":
        import pandas as pd

        table = pd.read_csv(source["path"])
        match = table.loc[table["row"] == source["row"], "dimension"]
        if match.empty or pd.isna(match.iloc[0]):
            raise KeyError(f"{source['path']}: no dimension for row {source['row']!r}")
        per_document = (read_json(source["vectors_from"])["index"]["vectors_per_sentence"]
                        if source.get("vectors_from") else 1)  # PropSegment: one vector per proposition
        return Size.of_vectors(per_document, int(match.iloc[0]))
    raise ValueError(f"unknown size source {source!r}")


def sizes_record(sizes: Mapping[tuple[str, str], Size]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{representation: {task: Size fields}}`` of measured sizes, sorted: what ``representation_sizes`` writes
    to ``results/representation_sizes.json`` (committed, so that the matrix re-renders without the encodings)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for (name, task), size in sorted(sizes.items()):
        out.setdefault(name, {})[task] = {"vectors_per_document": size.vectors_per_document,
                                          "dimension": size.dimension, "bytes_per_document": size.bytes_per_document}
    return out


def read_sizes(path: str | os.PathLike) -> dict[tuple[str, str], Size]:
    """The sizes ``sizes_record`` wrote to ``path``, as ``matrix_cells`` takes them; a missing field is refused,
    naming the file and the cell."""
    from multivec.io import read_json

    sizes = {}
    for name, by_task in read_json(path).items():
        for task, fields in by_task.items():
            missing = [f for f in ("vectors_per_document", "dimension", "bytes_per_document") if f not in fields]
            if missing:
                raise KeyError(f"{path}: {name} on {task} has no {', '.join(missing)}")
            sizes[(name, task)] = Size(fields["vectors_per_document"], fields["dimension"],
                                       fields["bytes_per_document"])
    return sizes


def _stacks(units_files: Mapping[str, str | os.PathLike], needed: set[CellSource]):
    """``{CellSource: SeedStack}`` of every source named, each table's units clustered as its table declares."""
    from multivec.statistics.clusters import table_cluster_kind
    from multivec.statistics.units import read_units, stack_seeds

    stacks = {}
    for table in sorted({s.table for s in needed}):
        if table not in units_files:
            raise KeyError(f"the representation matrix names table {table!r}, whose unit file is not an input")
        by_key = stack_seeds(read_units(units_files[table]), clusters=table_cluster_kind(table))
        for source in (s for s in needed if s.table == table):
            if (source.row, source.metric) not in by_key:
                known = sorted({row for row, _ in by_key})
                raise KeyError(f"{units_files[table]}: no row {source.row!r} with metric {source.metric!r} "
                               f"(rows: {known})")
            stacks[source] = by_key[(source.row, source.metric)]
    return stacks


def common_units(stacks: Sequence[Any]) -> list[str]:
    """The units every stack has, in the first stack's order (ValueError when they share none)."""
    shared = set(stacks[0].units)
    for stack in stacks[1:]:
        shared &= set(stack.units)
    if not shared:
        raise ValueError("the representations of a task share no evaluation unit: their cells cannot be compared")
    return [u for u in stacks[0].units if u in shared]


def matrix_cells(representations: Sequence[Representation], units_files: Mapping[str, str | os.PathLike],
                 sizes: Mapping[tuple[str, str], Size], confidence: float = 0.95, n_resamples: int = 2000,
                 seed: int = 0) -> list[dict[str, Any]]:
    """One record (``CELL_COLUMNS``) per (representation, task) cell, each task on its shared units (module doc);
    ``sizes``: ``(representation, task) -> Size`` (absent: unknown). The Pareto front is marked per task."""
    from multivec.statistics.resampling import bootstrap_ci, point_estimate

    names = [r.name for r in representations]
    if len(set(names)) != len(names):
        raise ValueError(f"representation names repeat: {sorted({n for n in names if names.count(n) > 1})}")
    stacks = _stacks(units_files, {s for r in representations for s in r.cells.values()})
    records = []
    for task in TASKS:
        members = [r for r in representations if task in r.cells]
        if not members:
            continue
        units = common_units([stacks[r.cells[task]] for r in members])
        for representation in members:
            source = representation.cells[task]
            full = stacks[source]
            stack = full.restricted_to(units)
            value, sd = point_estimate(stack)
            lo, hi = bootstrap_ci(stack, confidence, n_resamples, seed)
            size = sizes.get((representation.name, task), NO_SIZE)
            records.append({"representation": representation.name, "family": representation.family,
                            "work": representation.work, "task": task, "metric": TASKS[task]["metric"],
                            "value": value, "lo": lo, "hi": hi, "seed_sd": sd,
                            "n_seeds": sum(s is not None for s in stack.seeds), "n_units": len(units),
                            "task_units": len(full.units), "vectors_per_document": size.vectors_per_document,
                            "dimension": size.dimension, "bytes_per_document": size.bytes_per_document,
                            "pareto": False, "gate": representation.gate, "source": source_name(source)})
    return pareto_front(records)


def pareto_front(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mark (``pareto``) each task's cells that no other cell of the task beats: at least as good and no larger,
    better on one of the two. A cell without a size is never on the front."""
    for task in {r["task"] for r in records}:
        sized = [r for r in records if r["task"] == task and r["bytes_per_document"] is not None]
        for r in sized:
            r["pareto"] = not any(o is not r and o["value"] >= r["value"]
                                  and o["bytes_per_document"] <= r["bytes_per_document"]
                                  and (o["value"] > r["value"] or o["bytes_per_document"] < r["bytes_per_document"])
                                  for o in sized)
    return records


def _number(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def matrix_markdown(records: Sequence[dict[str, Any]], scale_line: str, notes: Sequence[str] = ()) -> str:
    """The matrix as Markdown: representations down, tasks across (``value [lo, hi]``, a dagger on the task's
    Pareto front), then each representation's index size per task and the notes."""
    from multivec.io.markdown_table import format_bytes, markdown_table
    from multivec.statistics.tables import format_estimate

    tasks = [t for t in TASKS if any(r["task"] == t for r in records)]
    order = list(dict.fromkeys(r["representation"] for r in records))
    cell = {(r["representation"], r["task"]): r for r in records}
    first = {r["representation"]: r for r in reversed(records)}

    def estimate(r):
        digits = 3 if r["task"] == "Lee" else 2
        text = format_estimate(r["value"], r["lo"], r["hi"], r["seed_sd"], digits)
        return text + (" †" if r["pareto"] else "")

    lines = ["# The representation matrix: every representation against every task", "", scale_line, ""]
    header = ["representation", "family", *(f"{t} ({TASKS[t]['metric']})" for t in tasks), "gate"]
    rows = [[name, first[name]["family"], *(estimate(cell[(name, t)]) if (name, t) in cell else "" for t in tasks),
             first[name]["gate"]] for name in order]
    lines += markdown_table(header, rows)
    lines += ["", "Index size per document (float32 vectors x dimension x 4 bytes; lexical: postings x "
              f"{POSTING_BYTES} bytes):", ""]
    size_rows = []
    for name in order:
        parts = []
        for t in tasks:
            r = cell.get((name, t))
            if r is None or not _number(r["bytes_per_document"]):
                parts.append("")
                continue
            vectors = (f"{r['vectors_per_document']:.1f} x {r['dimension']}-d, "
                       if _number(r["vectors_per_document"]) else "")
            parts.append(vectors + format_bytes(r["bytes_per_document"]))
        size_rows.append([name, *parts])
    lines += markdown_table(["representation", *tasks], size_rows)
    lines += [""]
    for t in tasks:
        members = [r for r in records if r["task"] == t]
        shrunk = sorted({(r["task_units"], r["representation"]) for r in members if r["task_units"] > r["n_units"]})
        line = f"- {t}: {members[0]['n_units']} {TASKS[t]['unit']} shared by every representation in the column"
        if shrunk:
            line += (f" (of {max(n for n, _ in shrunk)} that {len(shrunk)} of them were scored on: each cell is "
                     "recomputed on the shared ones)")
        lines.append(line + ".")
    lines += ["- Cells: mean over training seeds [95% percentile-bootstrap CI over the task's units, whole clusters "
              "where they cluster, training seeds as a random effect] ±seed-to-seed SD (several seeds only); "
              "† = on the task's Pareto front of quality against index bytes per document."]
    lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


FAMILY_COLOURS = {"lexical": "tab:gray", "single-vector": "tab:blue", "multi-vector": "tab:red",
                  "proposition": "tab:green"}


def plot_matrix(records: Sequence[dict[str, Any]], path: str | os.PathLike, title: str) -> None:
    """Quality against index bytes per document, one panel per task (log x), CIs as bars, the Pareto front
    joined by a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = [t for t in TASKS if any(r["task"] == t and _number(r["bytes_per_document"]) for r in records)]
    if not tasks:
        raise ValueError("no cell has an index size: nothing to plot")
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.6 * len(tasks), 4.2), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        cells = [r for r in records if r["task"] == task and _number(r["bytes_per_document"])]
        for family in FAMILIES:
            mine = [r for r in cells if r["family"] == family]
            if not mine:
                continue
            x = np.array([r["bytes_per_document"] for r in mine])
            y = np.array([r["value"] for r in mine])
            err = np.array([[r["value"] - r["lo"], r["hi"] - r["value"]] for r in mine]).T
            ax.errorbar(x, y, yerr=err, fmt="o", color=FAMILY_COLOURS[family], label=family, capsize=2, ms=4)
        front = sorted((r for r in cells if r["pareto"]), key=lambda r: r["bytes_per_document"])
        if front:
            ax.step([r["bytes_per_document"] for r in front], [r["value"] for r in front], where="post",
                    color="black", lw=0.8, alpha=0.6)
            labelled = {}  # tied cells (same size and value) share one label
            for r in front:
                labelled.setdefault((r["bytes_per_document"], round(r["value"], 6)), []).append(r["representation"])
            for (x, y), names in labelled.items():
                label = names[0] + (f" (+{len(names) - 1} tied)" if len(names) > 1 else "")
                ax.annotate(label, (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_xlabel(f"index bytes per {TASKS[task]['document']}")
        ax.set_ylabel(TASKS[task]["metric"])
        ax.set_title(f"{task} ({cells[0]['n_units']} {TASKS[task]['unit'].split(' (')[0]})")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
