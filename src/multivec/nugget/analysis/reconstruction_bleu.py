"""Fig. 4 (Qin & Van Durme 2023, §5.1): what a compression ratio keeps, as reconstruction BLEU.

Every dev document is encoded to its nuggets and decoded back with beam search (beam 5, §5.1;
``multivec.nugget.generation``). Micro-averaged (corpus) BLEU is sacrebleu's ``corpus_bleu`` against
the input document for AE (tokenize ``13a``) and against the reference translation for MT (tokenize
``zh``, sacrebleu's Chinese tokenisation). r = 0 is the one-vector model (mean bottleneck). The paper
prints one number: AE BLEU above 0.99 for r >= 0.1 (on the 0-1 scale); the figure shows it as a
``paper_ae_bleu_at_least`` column and a dashed line.

Like with like (``reconstruction_bleu``): a decoder can only write what its target tokenizer can
write, so a hypothesis is scored against the tokenizer's round trip of the reference,
``decode(encode(reference))``, not against the reference itself. An uncased vocabulary (MiniLM's
WordPieces, the demo's AE targets) cannot write a capital letter, so hypothesis and round trip are
then compared lowercased; whether the vocabulary is uncased is detected from the tokenizer (a probe
with capitals loses them in the round trip). Beside every number goes its ceiling: the BLEU of the
round trip itself against the original reference (same tokenisation and casing), i.e. what the
tokenizer alone costs. A perfect decoder scores 100 (1.0) whatever the ceiling.

Beside BLEU, each row carries its model's best teacher-forced dev loss (``training_summary.json``, nats
per target token): BLEU stays at its floor until a decoder reconstructs whole n-grams, while the loss
shows, at any training length, how much more of the document the decoder predicts from more nuggets.

Uncertainty: corpus BLEU is a statistic of per-document sacrebleu statistics (hypothesis and
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

from multivec.io.markdown_table import markdown_table

BLEU_TOKENIZE = {"ae": "13a", "mt": "zh"}
REFERENCE_KEY = {"ae": "source", "mt": "target"}  # AE reconstructs its input; MT translates it
PAPER_AE_BLEU_AT_LEAST = 0.99  # §5.1: "the BLEU value is higher than 0.99 when r >= 0.1"
PAPER_AE_FROM_RATIO = 0.1
BLEU_METRIC = "BLEU"  # the unit files' metric and the table's column (0-100)
FIG4_COLUMNS = ["row", "objective", "ratio", "vectors_per_document", BLEU_METRIC, "bleu_unit", "ceiling", "lowercased",
                "documents", "best_dev_loss", "train_steps", "paper_ae_bleu_at_least"]
# The keys of one decoded document in the hypotheses JSONL (what ``bleu_measurement`` reads back).
HYPOTHESIS_KEYS = ("id", "source", "reference", "round_trip", "lowercased", "hypothesis", "vectors")
_CASE_PROBE = "The Quick Brown Fox Met ANNA In Paris"


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], tokenize: str, lowercase: bool = False) -> dict:
    """Corpus (micro-averaged) BLEU of one reference per hypothesis, on the 0-100 and 0-1 scales
    (``lowercase``: sacrebleu compares both sides lowercased)."""
    from sacrebleu.metrics import BLEU

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise ValueError("no hypotheses to score")
    metric = BLEU(tokenize=tokenize, lowercase=lowercase)
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return {"bleu": score.score, "bleu_unit": score.score / 100, "precisions": list(score.precisions),
            "brevity_penalty": score.bp, "hypothesis_length": score.sys_len, "reference_length": score.ref_len,
            "signature": str(metric.get_signature())}


def round_trip(texts: Sequence[str], tokenizer, max_tokens: int | None = None) -> list[str]:
    """``decode(encode(text))`` of each text: what a decoder with this target vocabulary can write at best.

    ``tokenizer``: the model's ``TargetTokenizer`` (``max_tokens`` cuts as training does; None = no cut),
    a Hugging Face tokenizer, or a ``tokenizers.Tokenizer``; special tokens are skipped when decoding."""
    from multivec.nugget.target_tokenizer import TargetTokenizer

    texts = list(texts)
    if isinstance(tokenizer, TargetTokenizer):
        limit = max_tokens if max_tokens is not None else 10 ** 9
        return [tokenizer.decode(ids) for ids in tokenizer.encode(texts, limit)]
    if hasattr(tokenizer, "encode_batch"):  # tokenizers.Tokenizer
        encodings = tokenizer.encode_batch(texts)
        ids = [e.ids[:max_tokens] if max_tokens else e.ids for e in encodings]
        return [tokenizer.decode(i, skip_special_tokens=True).strip() for i in ids]
    if callable(tokenizer) and hasattr(tokenizer, "decode"):  # transformers tokenizer
        kwargs = {"truncation": True, "max_length": max_tokens} if max_tokens else {}
        ids = tokenizer(texts, add_special_tokens=True, **kwargs)["input_ids"]
        return [tokenizer.decode(i, skip_special_tokens=True).strip() for i in ids]
    raise TypeError(f"round_trip: {type(tokenizer).__name__} is no tokenizer (TargetTokenizer, transformers or "
                    f"tokenizers)")


def is_uncased(tokenizer) -> bool:
    """Whether the vocabulary cannot write capital letters: a probe with capitals comes back without any."""
    back = round_trip([_CASE_PROBE], tokenizer)[0]
    if not back.strip():
        raise ValueError(f"is_uncased: the tokenizer's round trip of {_CASE_PROBE!r} is empty")
    return not any(c.isupper() for c in back)


def reconstruction_bleu(hypotheses: Sequence[str], references: Sequence[str], tokenizer, tokenize: str = "13a",
                        round_trips: Sequence[str] | None = None, lowercased: bool | None = None) -> dict:
    """Corpus BLEU of ``hypotheses`` against the tokenizer's round trip of ``references`` (like with like).

    Returns ``bleu`` (0-100) and ``bleu_unit`` (0-1) against the round trip, ``ceiling`` / ``ceiling_unit``
    (the round trip against the original references: what the tokenizer alone costs), ``lowercased``
    (True when the vocabulary is uncased, so both comparisons ignore case), ``round_trips`` and sacrebleu's
    ``signature``. ``round_trips`` / ``lowercased`` skip recomputing them (they must come from ``tokenizer``)."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    trips = list(round_trips) if round_trips is not None else round_trip(references, tokenizer)
    if len(trips) != len(references):
        raise ValueError(f"{len(trips)} round trips but {len(references)} references")
    lower = is_uncased(tokenizer) if lowercased is None else bool(lowercased)
    score = corpus_bleu(hypotheses, trips, tokenize, lowercase=lower)
    ceiling = corpus_bleu(trips, references, tokenize, lowercase=lower)
    return {"bleu": score["bleu"], "bleu_unit": score["bleu_unit"], "ceiling": ceiling["bleu"],
            "ceiling_unit": ceiling["bleu_unit"], "lowercased": lower, "round_trips": trips,
            "signature": score["signature"]}


def bleu_measurement(path: str | os.PathLike, row: str, seed: int | None, objective: str):
    """Per-document sacrebleu statistics of one model's decoded dev documents (``reconstruct``'s JSONL,
    ``HYPOTHESIS_KEYS``) as a ``bleu`` Measurement of ``BLEU`` (0-100): each hypothesis against its
    reference's round trip, lowercased where the records say so, as ``reconstruction_bleu`` scores them."""
    from multivec.io import iter_jsonl
    from multivec.statistics import Measurement
    from multivec.statistics.statistics import bleu_components

    if objective not in BLEU_TOKENIZE:
        raise ValueError(f"objective {objective!r}: expected one of {sorted(BLEU_TOKENIZE)}")
    records = []
    for line, record in iter_jsonl(path):
        for key in ("id", "hypothesis", "round_trip"):
            if not isinstance(record.get(key), str):
                raise ValueError(f"{path}:{line}: key {key!r} is missing or not a string (a hypotheses file "
                                 f"written before BLEU was scored against the round trip? rebuild it)")
        if not isinstance(record.get("lowercased"), bool):
            raise ValueError(f"{path}:{line}: key 'lowercased' is missing or not true/false")
        records.append(record)
    if not records:
        raise ValueError(f"{path}: no decoded documents")
    casing = {r["lowercased"] for r in records}
    if len(casing) > 1:
        raise ValueError(f"{path}: documents disagree on 'lowercased' (one model has one target vocabulary)")
    components = bleu_components([r["hypothesis"] for r in records], [r["round_trip"] for r in records],
                                 lowercase=casing.pop(), tokenize=BLEU_TOKENIZE[objective])
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
    """Decode every row from its nuggets; the per-document records (``HYPOTHESIS_KEYS``) and the corpus BLEU
    summary (``reconstruction_bleu`` against the model's target tokenizer: BLEU, ceiling, lowercased)."""
    import time

    from multivec.nugget.generation import generate

    start = time.perf_counter()
    outputs = generate(model, [r["source"] for r in rows], num_beams=num_beams, max_new_tokens=max_new_tokens,
                       batch_size=batch_size)
    seconds = time.perf_counter() - start
    tokenizer = model.processor.target_tokenizer
    scores = reconstruction_bleu([text for text, _ in outputs], [r["reference"] for r in rows], tokenizer,
                                 BLEU_TOKENIZE[objective])
    trips = scores.pop("round_trips")
    records = [{**row, "round_trip": trip, "lowercased": scores["lowercased"], "hypothesis": text, "vectors": count}
               for row, trip, (text, count) in zip(rows, trips, outputs)]
    summary = dict(scores)
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
        for key in ("objective", "ratio", "vectors_per_document", "bleu", "ceiling", "lowercased", "documents"):
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
                     "ceiling": round(float(s["ceiling"]), 2), "lowercased": bool(s["lowercased"]),
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

    rows = []
    for r in df.to_dict("records"):
        paper = f"> {r['paper_ae_bleu_at_least']:g}" if pd.notna(r["paper_ae_bleu_at_least"]) else "–"
        ratio = "0 (one vector)" if r["ratio"] == 0 else f"{r['ratio']:g}"
        rows.append([f"{r['row']}", r['objective'].upper(), ratio, f"{r['vectors_per_document']:.2f}",
                     estimate_cell(r, BLEU_METRIC), f"{r['bleu_unit']:.4f}", f"{r['ceiling']:.2f}",
                     'yes' if r['lowercased'] else 'no', f"{r['documents']}", f"{r['best_dev_loss']:.3f}",
                     f"{r['train_steps']}", paper])
    lines = ["# NUGGET Fig. 4: reconstruction BLEU vs compression ratio (§5.1)", "", scale_line, "",
             *markdown_table(["row", "objective", "r", "vectors/doc", "BLEU (0-100)", "BLEU (0-1)", "ceiling (0-100)",
                              "lowercased", "documents", "best dev loss", "steps", "paper"], rows)]
    lines += ["", "AE is scored against the input (sacrebleu tokenize 13a), MT against the reference translation "
              "(tokenize zh), each as the model's target tokenizer writes it: BLEU compares the decoded text with "
              "decode(encode(reference)), so a perfect decoder scores 100 (1.0). Ceiling: that round trip scored "
              "against the original reference (what the target vocabulary alone loses). Lowercased: yes where the "
              "target vocabulary is uncased (detected from the tokenizer), so both BLEU and ceiling ignore case. "
              "The paper prints only AE BLEU > 0.99 (0-1 scale) for r >= 0.1. Best dev loss: the "
              "model's lowest teacher-forced cross-entropy on the corpus dev split (nats per target token; AE and "
              "MT targets use different tokenizers, so compare ratios within an objective).", *notes]
    return "\n".join(lines) + "\n"


def plot_fig4(df: pd.DataFrame, path: str | os.PathLike, title: str) -> None:
    """Left: BLEU (0-1, against the round trip) against r, a line per objective, its ceiling dotted (the round
    trip against the reference, cased or lowercased as scored), and the paper's AE statement as a dashed line.
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
        casing = "lowercased" if part["lowercased"].all() else "cased"
        ax.plot(part["ratio"], part["ceiling"].astype(float) / 100, linestyle=":", color=line.get_color(),
                label=f"{objective.upper()} ceiling: round trip vs reference ({casing})")
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
    ax.set_ylabel("corpus BLEU (0-1) vs decode(encode(reference))")
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
