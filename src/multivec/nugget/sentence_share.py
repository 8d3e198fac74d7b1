"""The share of sentence-final tokens, r_sb, for Table 4's sentence-boundary rows (NUGGET §7.1).

§7.1: "As we concatenate the sentences in WMT19 to form documents, we use the ending tokens of
sentences as the nuggets. 3.3% of tokens are selected nuggets on average, thus we train a nugget model
with r = 0.033 as a comparison." ``sentence_final_share`` measures that share on our translation
corpus's sources with the model's own source tokenizer and truncation: the sentence-final tokens (from
the rows' real ``source_sentence_ends``, as the selector reads them) over the n real tokens per
document (special tokens included, the n of k = ceil(n·r)), summed over documents.

``document_sentence_ends`` gives evaluation documents (PI, RR: no stored sentence boundaries) their
sentence ends with NLTK punkt, so the sentence-boundary selector can encode them.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

from multivec.nugget.configuration import PAPER_SENTENCE_RATIO, NuggetConfig


def sentence_final_share(config: NuggetConfig, rows: Iterable[dict[str, Any]],
                         source: str = "corpus") -> dict[str, Any]:
    """r_sb of ``rows`` (corpus rows with ``source`` and ``source_sentence_ends``) under ``config``'s source
    tokenizer and ``max_source_tokens``; ``source`` names the rows in error messages."""
    from multivec.nugget.processing import load_source_tokenizer, sentence_end_masks

    rows = list(rows)
    if not rows:
        raise ValueError(f"{source}: no rows to measure the share of sentence-final tokens on")
    bad = [r.get("id", i) for i, r in enumerate(rows)
           if not isinstance(r.get("source"), str) or not isinstance(r.get("source_sentence_ends"), list)]
    if bad:
        raise ValueError(f"{source}: {len(bad)} row(s) lack 'source' or a 'source_sentence_ends' list "
                         f"(e.g. id {bad[0]!r}): rebuild the corpus")
    tokenizer = load_source_tokenizer(config.encoder, config.src_lang)
    # The processor's own masks (NuggetProcessor.sentence_end_masks), so the share counts exactly the tokens
    # the sentence-boundary selector picks while training.
    texts = [r["source"] for r in rows]
    masks = sentence_end_masks(tokenizer, texts, [r["source_sentence_ends"] for r in rows], config.max_source_tokens)
    final = sum(sum(m) for m in masks)
    tokens = sum(len(m) for m in masks)
    return {"share": final / tokens, "sentence_final_tokens": final, "tokens": tokens, "documents": len(rows),
            "mean_sentences_per_document": sum(len(r["source_sentence_ends"]) for r in rows) / len(rows),
            "encoder": config.encoder, "max_source_tokens": config.max_source_tokens,
            "paper_share": PAPER_SENTENCE_RATIO}


def read_share(path: str | os.PathLike) -> float:
    """r_sb from a ``sentence_final_share`` JSON file, checked."""
    from multivec.io import read_json

    data = read_json(path)
    share = data.get("share") if isinstance(data, dict) else None
    if not isinstance(share, (int, float)) or not 0 < share <= 1:
        raise ValueError(f"{path}: key 'share' must be a number in (0, 1], got {share!r}")
    return float(share)


def document_sentence_ends(texts: Sequence[str], mirror: str | os.PathLike | None = None) -> list[list[int]]:
    """Per text, the character offsets (exclusive) where NLTK punkt (english) ends its sentences; none
    for an empty (or blank) text, which ``sentence_final_token_mask`` gives one nugget at its EOS."""
    from nltk.tokenize.punkt import PunktTokenizer

    from multivec.data.nltk_resources import load_nltk_resource

    punkt = load_nltk_resource("tokenizers/punkt_tab/english", lambda: PunktTokenizer("english"), mirror)
    ends = []
    for text in texts:
        ends.append([end for _, end in punkt.span_tokenize(text)] if text.strip() else [])
    return ends
