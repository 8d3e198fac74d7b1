"""Fig. 4 (Qin & Van Durme 2023, §5.1): what a compression ratio keeps, as reconstruction BLEU.

Every dev document is encoded to its nuggets and decoded back with beam search (beam 5, §5.1;
``multivec.nugget.generation``). Micro-averaged (corpus) BLEU is sacrebleu's ``corpus_bleu`` against
the input document for AE (tokenize ``13a``) and against the reference translation for MT (tokenize
``zh``, sacrebleu's Chinese tokenisation). r = 0 is the one-vector model (mean bottleneck). The paper
prints one number: AE BLEU above 0.99 for r >= 0.1 (on the 0-1 scale); the figure shows it as a
``paper_ae_bleu_at_least`` column and a dashed line.

Beside BLEU, each row carries its model's best teacher-forced dev loss (``training_summary.json``, nats
per target token): BLEU stays at its floor until a decoder reconstructs whole n-grams, while the loss
shows, at any training length, how much more of the document the decoder predicts from more nuggets.

Uncertainty (issue 17): corpus BLEU is a statistic of per-document sacrebleu statistics (hypothesis and
reference lengths, n-gram matches and totals), so ``bleu_measurement`` keeps them per document
(``multivec.statistics``, statistic ``bleu``, 0-100, the table's ``BLEU`` column) with the same
tokenisation and casing as ``corpus_bleu``; their sum gives exactly the corpus BLEU of the summary,
and the bootstrap resamples documents. A row is ``<objective>_r<ratio>``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import pandas as pd

BLEU_TOKENIZE = {"ae": "13a", "mt": "zh"}
REFERENCE_KEY = {"ae": "source", "mt": "target"}  # AE reconstructs its input; MT translates it
PAPER_AE_BLEU_AT_LEAST = 0.99  # §5.1: "the BLEU value is higher than 0.99 when r >= 0.1"
PAPER_AE_FROM_RATIO = 0.1
BLEU_METRIC = "BLEU"  # the unit files' metric and the table's column (0-100)
FIG4_COLUMNS = ["row", "objective", "ratio", "vectors_per_document", BLEU_METRIC, "bleu_unit", "documents", "best_dev_loss",
                "train_steps", "paper_ae_bleu_at_least"]


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], tokenize: str) -> dict:
    """Corpus (micro-averaged) BLEU of one reference per hypothesis, on the 0-100 and 0-1 scales."""
    from sacrebleu.metrics import BLEU

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise ValueError("no hypotheses to score")
    metric = BLEU(tokenize=tokenize)
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return {"bleu": score.score, "bleu_unit": score.score / 100, "precisions": list(score.precisions),
            "brevity_penalty": score.bp, "hypothesis_length": score.sys_len, "reference_length": score.ref_len,
            "signature": str(metric.get_signature())}


def bleu_measurement(path: str | os.PathLike, row: str, seed: int | None, objective: str):
    """Per-document sacrebleu statistics of one model's decoded dev documents (``reconstruct``'s JSONL:
    ``id``, ``hypothesis``, ``reference``) as a ``bleu`` Measurement of ``BLEU`` (0-100)."""
    from multivec.io import read_jsonl
    from multivec.statistics import Measurement
    from multivec.statistics.statistics import bleu_components

    if objective not in BLEU_TOKENIZE:
        raise ValueError(f"objective {objective!r}: expected one of {sorted(BLEU_TOKENIZE)}")
    records = read_jsonl(path)
    if not records:
        raise ValueError(f"{path}: no decoded documents")
    components = bleu_components([r["hypothesis"] for r in records], [r["reference"] for r in records],
                                 tokenize=BLEU_TOKENIZE[objective])
    return Measurement(row, BLEU_METRIC, "bleu", [r["id"] for r in records], components, seed)


def dev_documents(path: str | os.PathLike, objective: str, max_documents: int | None = None) -> list[dict]:
    """The corpus rows ``{id, source, reference}`` to decode (the first ``max_documents``; None = all)."""
    from multivec.io import iter_jsonl

    if objective not in REFERENCE_KEY:
        raise ValueError(f"objective {objective!r}: expected one of {sorted(REFERENCE_KEY)}")
    key = REFERENCE_KEY[objective]
    rows = []
    for line, row in iter_jsonl(path):
        for needed in ("id", "source", key):
            if not isinstance(row.get(needed), str):
                raise ValueError(f"{path}:{line}: key {needed!r} is missing or not a string")
        rows.append({"id": row["id"], "source": row["source"], "reference": row[key]})
        if max_documents is not None and len(rows) >= max_documents:
            break
    if not rows:
        raise ValueError(f"{path}: no documents to decode")
    return rows


def reconstruct(model, rows: list[dict], objective: str, num_beams: int, batch_size: int,
                max_new_tokens: int | None = None) -> tuple[list[dict], dict]:
    """Decode every row from its nuggets; the per-document records and the corpus BLEU summary."""
    import time

    from multivec.nugget.generation import generate

    start = time.perf_counter()
    outputs = generate(model, [r["source"] for r in rows], num_beams=num_beams, max_new_tokens=max_new_tokens,
                       batch_size=batch_size)
    seconds = time.perf_counter() - start
    records = [{**row, "hypothesis": text, "vectors": count} for row, (text, count) in zip(rows, outputs)]
    summary = corpus_bleu([r["hypothesis"] for r in records], [r["reference"] for r in records],
                          BLEU_TOKENIZE[objective])
    summary.update(objective=objective, documents=len(records), num_beams=num_beams,
                   vectors_per_document=sum(r["vectors"] for r in records) / len(records),
                   decode_seconds=round(seconds, 2))
    return records, summary


def fig4_table(summaries: Sequence[dict], trainings: Sequence[dict]) -> pd.DataFrame:
    """One row per (objective, ratio), sorted; the paper's statement where it applies (AE, r >= 0.1).

    ``trainings[i]`` is the ``training_summary.json`` of the model behind ``summaries[i]``."""
    if len(summaries) != len(trainings):
        raise ValueError(f"{len(summaries)} BLEU summaries but {len(trainings)} training summaries")
    rows = []
    for s, training in zip(summaries, trainings):
        for key in ("objective", "ratio", "vectors_per_document", "bleu", "documents"):
            if key not in s:
                raise ValueError(f"BLEU summary {s.get('objective')}/{s.get('ratio')} lacks key {key!r}")
        for key in ("best_dev_loss", "train_steps"):
            if key not in training:
                raise ValueError(f"training summary of {s['objective']}/{s['ratio']} lacks key {key!r}")
        ratio = float(s["ratio"])
        paper = PAPER_AE_BLEU_AT_LEAST if s["objective"] == "ae" and ratio >= PAPER_AE_FROM_RATIO else None
        rows.append({"row": f"{s['objective']}_r{s['ratio']}", "objective": s["objective"], "ratio": ratio,
                     "vectors_per_document": round(float(s["vectors_per_document"]), 3),
                     BLEU_METRIC: round(float(s["bleu"]), 2), "bleu_unit": round(float(s["bleu"]) / 100, 4),
                     "documents": int(s["documents"]), "best_dev_loss": round(float(training["best_dev_loss"]), 4),
                     "train_steps": int(training["train_steps"]), "paper_ae_bleu_at_least": paper})
    return pd.DataFrame(rows, columns=FIG4_COLUMNS).sort_values(["objective", "ratio"]).reset_index(drop=True)


def with_bleu_statistics(df: pd.DataFrame, stats) -> pd.DataFrame:
    """``df`` with BLEU the seed mean of the unit file's statistics (``multivec.statistics.TableStatistics``),
    its ``BLEU_lo``/``_hi``/``_sd`` and ``n_seeds``, and ``bleu_unit`` recomputed from that mean."""
    out = stats.add_columns(df, "row", [BLEU_METRIC], require=True)
    out["bleu_unit"] = (out[BLEU_METRIC].astype(float) / 100).round(4)
    return out


def fig4_markdown(df: pd.DataFrame, scale_line: str, notes: Sequence[str] = ()) -> str:
    """The figure's numbers; BLEU as ``mean [lo, hi] ±sd`` when ``df`` has its statistics; ``notes`` at the end."""
    from multivec.statistics import estimate_cell

    lines = ["# NUGGET Fig. 4: reconstruction BLEU vs compression ratio (§5.1)", "", scale_line, "",
             "| row | objective | r | vectors/doc | BLEU (0-100) | BLEU (0-1) | documents | best dev loss | steps | paper |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in df.to_dict("records"):
        paper = f"> {r['paper_ae_bleu_at_least']:g}" if pd.notna(r["paper_ae_bleu_at_least"]) else "–"
        ratio = "0 (one vector)" if r["ratio"] == 0 else f"{r['ratio']:g}"
        lines.append(f"| {r['row']} | {r['objective'].upper()} | {ratio} | {r['vectors_per_document']:.2f} | "
                     f"{estimate_cell(r, BLEU_METRIC)} | "
                     f"{r['bleu_unit']:.4f} | {r['documents']} | {r['best_dev_loss']:.3f} | {r['train_steps']} | "
                     f"{paper} |")
    lines += ["", "AE is scored against the input (sacrebleu tokenize 13a), MT against the reference translation "
              "(tokenize zh). The paper prints only AE BLEU > 0.99 (0-1 scale) for r >= 0.1. Best dev loss: the "
              "model's lowest teacher-forced cross-entropy on the corpus dev split (nats per target token; AE and "
              "MT targets use different tokenizers, so compare ratios within an objective).", *notes]
    return "\n".join(lines) + "\n"


def plot_fig4(df: pd.DataFrame, path: str | os.PathLike, title: str) -> None:
    """Left: BLEU (0-1) against r, a line per objective, and the paper's AE statement as a dashed line.
    Right: each model's best dev loss against r (lower: the decoder predicts more from the nuggets)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, loss_ax) = plt.subplots(1, 2, figsize=(10, 4))
    for objective, part in df.groupby("objective", sort=True):
        line, = ax.plot(part["ratio"], part["bleu_unit"], marker="o", label=f"{objective.upper()} (ours)")
        if f"{BLEU_METRIC}_lo" in part.columns:  # 95% bootstrap CI over documents, on the 0-1 scale
            ax.fill_between(part["ratio"], part[f"{BLEU_METRIC}_lo"].astype(float) / 100,
                            part[f"{BLEU_METRIC}_hi"].astype(float) / 100, color=line.get_color(), alpha=0.2)
        loss_ax.plot(part["ratio"], part["best_dev_loss"], marker="o", label=f"{objective.upper()} (ours)")
    loss_ax.set_xlabel("compression ratio r (0 = one vector)")
    loss_ax.set_ylabel("best dev loss (nats / target token)")
    loss_ax.set_title(f"teacher-forced dev loss after {int(df['train_steps'].max())} steps")
    loss_ax.legend()
    loss_ax.grid(alpha=0.3)
    paper = df[df["paper_ae_bleu_at_least"].notna()]
    if len(paper):
        ax.hlines(PAPER_AE_BLEU_AT_LEAST, paper["ratio"].min(), max(paper["ratio"].max(), PAPER_AE_FROM_RATIO),
                  colors="tab:red", linestyles="dashed", label=f"paper: AE > {PAPER_AE_BLEU_AT_LEAST:g} (r ≥ 0.1)")
    ax.set_xlabel("compression ratio r (0 = one vector)")
    ax.set_ylabel("corpus BLEU (0-1)")
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
