"""Fig. 5 (Qin & Van Durme 2023, §5.2): which tokens the scorer selects as nuggets.

The scorer s = FFN(X^(l)) (eq. 2) scores every token; TopK keeps k = ceil(n·r) of them (eq. 3).
Over dev documents of at most ``max_tokens`` source tokens (the paper: 128 documents of up to 128
tokens, r = 0.1), each token type's share among the selected tokens is set against its share in the
text. A type is the source tokenizer's token decoded on its own (``token_type``: WordPiece keeps its
``##``; special tokens keep their names, e.g. ``[CLS]``, ``</s>``, ``en_XX``). Text counts include the
special tokens, which the scorer can select like any other.

The paper's observations as numbers (``observations``): the selection rate (selected / documents)
of the last token, EOS (``[SEP]`` for MiniLM, ``</s>`` for mBART), and of the first, BOS (``[CLS]``, or
mBART-50's language code); and the share of the type 'the' in the text and among the nuggets (paper:
5.2% and 0.7%; BOS never selected).

Uncertainty: each document's selections are kept (``document_selections``: its token types
and selected flags, ``results/nugget_analysis/selected_tokens/<objective>_r<ratio>/seed<seed>.jsonl``),
and ``share_measurements`` turns them into per-document counts for the ``ratio`` statistic:
``nugget_share_eos_punct`` (delimiters among the nuggets: the document's EOS, its last token, or a type
made only of punctuation characters; §5.2: "punctuation tokens (commas and periods)", "prefers EOS"),
``text_share_eos_punct`` (delimiters among all its tokens), ``nugget_share_the`` and ``text_share_the``
(the type 'the'). Summed over documents they give the shares of the whole sample, as ``type_counts``
does; the bootstrap resamples documents. A row is an objective (``ae``, ``mt``).
"""

from __future__ import annotations

# torch and pandas are imported where they are used: the workflow reads SHARE_METRICS while it parses.
import os
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from multivec.io.markdown_table import markdown_table

if TYPE_CHECKING:
    import pandas as pd

    from multivec.statistics.resampling import BootstrapSettings

PAPER_THE_TEXT_SHARE = 0.052  # §5.2: "the type 'the', which makes up 5.2% of all tokens in the corpus"
PAPER_THE_NUGGET_SHARE = 0.007  # "... accounts for only 0.7% of selected nuggets"
PAPER_BOS_SELECTION_RATE = 0.0  # "NUGGET prefers EOS while BOS is never selected"
FIG5_COLUMNS = ["objective", "type", "text_count", "text_share", "text_share_lo", "text_share_hi", "nugget_count",
                "nugget_share", "nugget_share_lo", "nugget_share_hi", "rank"]
SHARE_METRICS = ["nugget_share_eos_punct", "text_share_eos_punct", "nugget_share_the", "text_share_the"]
OBSERVATION_COLUMNS = ["objective", "statistic", "token", "value", "value_lo", "value_hi", "paper_value", "what"]


@dataclass
class ScoredDocument:
    """One document's source token ids, every token's score s_i (eq. 2) and which tokens were selected."""

    id: str
    ids: list[int]
    scores: list[float]
    selected: list[bool]


def token_type(tokenizer, token_id: int) -> str:
    """The token's own text: a special token's name, else the token decoded alone (the raw token if that is blank)."""
    raw = tokenizer.convert_ids_to_tokens(int(token_id))
    if int(token_id) in set(tokenizer.all_special_ids):
        return raw
    text = tokenizer.decode([int(token_id)]).strip()
    return text or raw


def short_documents(path: str | os.PathLike, model, max_documents: int,
                    max_tokens: int) -> list[tuple[dict, list[int]]]:
    """The first ``max_documents`` corpus rows whose source has at most ``max_tokens`` tokens (specials
    included), with their token ids."""
    from multivec.io import iter_jsonl

    chosen = []
    for line, row in iter_jsonl(path):
        if not isinstance(row.get("source"), str) or not isinstance(row.get("id"), str):
            raise ValueError(f"{path}:{line}: key 'id' or 'source' is missing or not a string")
        ids = model.processor.tokenize_sources([row["source"]], max_tokens + 1)[0]  # one past the limit: too long
        if len(ids) <= max_tokens:
            chosen.append((row, ids))
            if len(chosen) == max_documents:
                break
    if not chosen:
        raise ValueError(f"{path}: no document has at most {max_tokens} source tokens")
    return chosen


def score_documents(model, documents: Sequence[tuple[str, list[int]]], batch_size: int = 16) -> list[ScoredDocument]:
    """Every token's score and the model's own selection (``NuggetModel.encode``), per ``(id, ids)``."""
    import torch

    if model.scorer is None or model.config.bottleneck != "nuggets":
        raise ValueError(f"the model (bottleneck {model.config.bottleneck!r}, selector {model.config.selector!r}) "
                         "has no learned scorer: Figs. 5-6 need a NUGGET model with r > 0")
    model.eval()
    out = []
    for start in range(0, len(documents), batch_size):
        chunk = documents[start:start + batch_size]
        ids, mask = model.processor.collate_sources([d[1] for d in chunk], model.device)
        with torch.inference_mode():
            nuggets = model.encode(ids, mask)
            scores = model.scorer(model.encode_bottom(ids, mask)).float()
        for row, (doc_id, doc_ids) in enumerate(chunk):
            n = len(doc_ids)
            chosen = set(nuggets.indices[row][nuggets.mask[row]].tolist())
            out.append(ScoredDocument(doc_id, list(doc_ids), scores[row, :n].tolist(), [i in chosen for i in range(n)]))
    return out


def type_counts(tokenizer, documents: Sequence[ScoredDocument],
                bootstrap: BootstrapSettings | None = None) -> pd.DataFrame:
    """Per token type: count and share in the text and among the nuggets, ranked by nugget share; each share
    with its bootstrap CI over documents (``*_lo``/``*_hi``; the default ``BootstrapSettings`` unless given)."""
    import numpy as np
    import pandas as pd

    from multivec.statistics.resampling import BootstrapSettings

    bootstrap = bootstrap or BootstrapSettings()
    types: dict[str, int] = {}
    per_doc = []  # (text Counter, nugget Counter) per document, over type columns
    for doc in documents:
        text, nuggets = Counter(), Counter()
        for token_id, selected in zip(doc.ids, doc.selected):
            column = types.setdefault(token_type(tokenizer, token_id), len(types))
            text[column] += 1
            nuggets[column] += int(selected)
        per_doc.append((text, nuggets))
    text_counts, nugget_counts = np.zeros((len(documents), len(types))), np.zeros((len(documents), len(types)))
    for row, (text, nuggets) in enumerate(per_doc):
        text_counts[row, list(text)] = list(text.values())
        nugget_counts[row, list(nuggets)] = list(nuggets.values())
    total_text, total_nuggets = text_counts.sum(), nugget_counts.sum()
    if not total_nuggets:
        raise ValueError("no token was selected in any document")
    # a share is Σ_docs count / Σ_docs total: the documents are the units resampled
    text_lo, text_hi = bootstrap.cis(text_counts, text_counts.sum(1, keepdims=True))
    nugget_lo, nugget_hi = bootstrap.cis(nugget_counts, nugget_counts.sum(1, keepdims=True))
    names = list(types)
    df = pd.DataFrame({"type": names, "text_count": text_counts.sum(0).astype(int),
                       "text_share": text_counts.sum(0) / total_text, "text_share_lo": text_lo,
                       "text_share_hi": text_hi,
                       "nugget_count": nugget_counts.sum(0).astype(int),
                       "nugget_share": nugget_counts.sum(0) / total_nuggets, "nugget_share_lo": nugget_lo,
                       "nugget_share_hi": nugget_hi})
    df = df.sort_values(["nugget_count", "text_count", "type"], ascending=[False, False, True]).reset_index(drop=True)
    df["rank"] = range(1, len(df) + 1)
    return df


def observations(tokenizer, documents: Sequence[ScoredDocument], counts: pd.DataFrame,
                 bootstrap: BootstrapSettings | None = None) -> list[dict]:
    """§5.2's statements as numbers: EOS and BOS selection rates, and the share of 'the' in text and nuggets
    (``counts``: ``type_counts``, whose CIs it copies), each with its bootstrap CI over documents."""
    import numpy as np

    from multivec.statistics.resampling import BootstrapSettings

    first = Counter(token_type(tokenizer, d.ids[0]) for d in documents)
    last = Counter(token_type(tokenizer, d.ids[-1]) for d in documents)
    bos, eos = first.most_common(1)[0][0], last.most_common(1)[0][0]
    n = len(documents)
    the = counts[counts["type"] == "the"]
    cell = {c: float(the[c].iloc[0]) if len(the) else 0.0
            for c in ("text_share", "text_share_lo", "text_share_hi", "nugget_share", "nugget_share_lo",
                      "nugget_share_hi")}
    # per document: last and first token selected; selected and all tokens (a ratio over documents)
    rates = np.array([[d.selected[-1], d.selected[0], sum(d.selected)] for d in documents], dtype=float)
    lengths = np.array([[1.0, 1.0, len(d.ids)] for d in documents])
    lo, hi = (bootstrap or BootstrapSettings()).cis(rates, lengths)
    return [
        {"statistic": "eos_selection_rate", "token": eos, "value": rates[:, 0].sum() / n, "value_lo": lo[0],
         "value_hi": hi[0], "paper_value": None,
         "what": "share of documents whose last token (EOS) is a nugget; paper: 'prefers EOS'"},
        {"statistic": "bos_selection_rate", "token": bos, "value": rates[:, 1].sum() / n, "value_lo": lo[1],
         "value_hi": hi[1], "paper_value": PAPER_BOS_SELECTION_RATE,
         "what": "share of documents whose first token (BOS) is a nugget"},
        {"statistic": "the_text_share", "token": "the", "value": cell["text_share"], "value_lo": cell["text_share_lo"],
         "value_hi": cell["text_share_hi"], "paper_value": PAPER_THE_TEXT_SHARE,
         "what": "share of the type 'the' among all tokens"},
        {"statistic": "the_nugget_share", "token": "the", "value": cell["nugget_share"],
         "value_lo": cell["nugget_share_lo"], "value_hi": cell["nugget_share_hi"],
         "paper_value": PAPER_THE_NUGGET_SHARE, "what": "share of the type 'the' among the nuggets"},
        {"statistic": "documents", "token": "", "value": n, "value_lo": None, "value_hi": None, "paper_value": 128,
         "what": "documents analysed (a count: no CI)"},
        {"statistic": "nuggets_per_token", "token": "", "value": rates[:, 2].sum() / lengths[:, 2].sum(),
         "value_lo": lo[2], "value_hi": hi[2], "paper_value": None, "what": "selected tokens / all tokens (about r)"},
    ]


def document_selections(tokenizer, documents: Sequence[ScoredDocument]) -> list[dict]:
    """Per document: ``{id, types, selected}`` (every source token's ``token_type`` and whether it is a nugget)."""
    return [{"id": d.id, "types": [token_type(tokenizer, i) for i in d.ids], "selected": [bool(x) for x in d.selected]}
            for d in documents]


def is_punctuation(text: str) -> bool:
    """A type made only of Unicode punctuation characters (``.``, ``,``, ``/``, ``-``, ``。`` ...)."""
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def share_components(record: dict) -> dict[str, tuple[int, int]]:
    """One document's (count, total) per ``SHARE_METRICS``: delimiters (its EOS = last token, or a punctuation
    type) and 'the', among its nuggets and among all its tokens."""
    types, selected = record["types"], record["selected"]
    if len(types) != len(selected) or not types:
        raise ValueError(f"document {record.get('id')!r}: {len(types)} types but {len(selected)} selection flags")
    delimiter = [k == len(types) - 1 or is_punctuation(t) for k, t in enumerate(types)]
    the = [t == "the" for t in types]
    nuggets = sum(selected)
    return {"nugget_share_eos_punct": (sum(d and s for d, s in zip(delimiter, selected)), nuggets),
            "text_share_eos_punct": (sum(delimiter), len(types)),
            "nugget_share_the": (sum(t and s for t, s in zip(the, selected)), nuggets),
            "text_share_the": (sum(the), len(types))}


def share_measurements(path: str | os.PathLike, row: str, seed: int | None) -> list:
    """``ratio`` Measurements of every ``SHARE_METRICS`` over the documents of a ``document_selections`` JSONL."""
    from multivec.io import read_jsonl
    from multivec.statistics import Measurement

    records = read_jsonl(path)
    if not records:
        raise ValueError(f"{path}: no documents")
    components = [share_components(r) for r in records]
    if not any(c["nugget_share_eos_punct"][1] for c in components):
        raise ValueError(f"{path}: no document has a nugget")
    units = [r["id"] for r in records]
    return [Measurement(row, metric, "ratio", units, [c[metric] for c in components], seed)
            for metric in SHARE_METRICS]


def shares_markdown(df: pd.DataFrame, header_lines: Sequence[str], notes: Sequence[str] = ()) -> str:
    """The shares table (one row per objective; cells ``mean [lo, hi] ±sd``) with §5.2's numbers beside."""
    from multivec.statistics import estimate_cell

    head = ["row", *SHARE_METRICS]
    lines = ["# NUGGET Fig. 5 / §5.2: delimiters and 'the' among the nuggets vs in the text", "", *header_lines, "",
             *markdown_table(head, ([str(record["row"])] + [estimate_cell(record, m, 3) for m in SHARE_METRICS]
                                   for record in df.to_dict("records")))]
    lines += ["", "Shares on the 0-1 scale. eos_punct: the document's EOS (its last token) or a type made only of "
              "punctuation characters; the: the type 'the'. nugget_share_*: among the selected tokens; text_share_*: "
              f"among all tokens. The paper (§5.2): 'the' is {PAPER_THE_TEXT_SHARE:.1%} of the text and "
              f"{PAPER_THE_NUGGET_SHARE:.1%} of the nuggets; nuggets are 'mostly delimiter words, like punctuation "
              "tokens' and NUGGET 'prefers EOS'.", *notes]
    return "\n".join(lines) + "\n"


def plot_fig5(counts: pd.DataFrame, path: str | os.PathLike, top: int, title: str) -> None:
    """A panel per objective: the ``top`` types by nugget share, grouped bars (nuggets, text) with their CIs over
    documents as whiskers, as the paper."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    objectives = sorted(counts["objective"].unique())
    fig, axes = plt.subplots(1, len(objectives), figsize=(5 * len(objectives), 3.8), squeeze=False)
    for ax, objective in zip(axes[0], objectives):
        part = counts[(counts["objective"] == objective) & (counts["rank"] <= top)].sort_values("rank")
        x = range(len(part))
        for offset, share, label in ((-0.2, "nugget_share", "nuggets"), (0.2, "text_share", "text")):
            # whiskers: the 95% CI over documents, where the table carries it
            error = ([(part[share] - part[f"{share}_lo"]) * 100, (part[f"{share}_hi"] - part[share]) * 100]
                     if f"{share}_lo" in part else None)
            ax.bar([i + offset for i in x], part[share] * 100, width=0.4, label=label, yerr=error, capsize=2)
        ax.set_xticks(list(x))
        ax.set_xticklabels(part["type"].tolist())
        ax.set_ylabel("share (%)")
        ax.set_title(f"{objective.upper()}")
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
