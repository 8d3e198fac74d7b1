"""Unknown-token shares: how much of a task's or corpus's text its encoder cannot read.

A text the tokenizer maps to its unknown token (MiniLM's ``[UNK]``, mBART's ``<unk>``) carries no
word; a task whose documents are full of them measures the encoder on masks, not text. The NUGGET
paper reads raw WikiText-103 (App. A: "we use the raw version without masking out any UNK tokens");
the demo's WikiText-2 is the tokenised variant, where about 2.6% of the words are ``<unk>``
(``multivec.data.wikitext``).

``unknown_share`` counts, over texts, the tokenizer's tokens (no special tokens added) and how many
of them are its unknown token. ``check_unknown_share`` warns (the build log and the ``warnings`` of
the builder's ``meta.json``) when the share exceeds the configured ``data.max_unknown_share``.
"""

from __future__ import annotations

import logging
from typing import Iterable

log = logging.getLogger(__name__)


def unknown_share(texts: Iterable[str], tokenizer, batch_size: int = 256, label: str | None = None) -> dict:
    """``{"tokenizer", "unknown_token", "tokens", "unknown", "share"}`` of ``texts`` under a Hugging Face
    tokenizer (``tokenizer.unk_token_id``); ``share`` is ``unknown / tokens`` (0 when there are no tokens).
    ``label`` names the tokenizer (e.g. the config's encoder reference); default its ``name_or_path``."""
    unk_id = getattr(tokenizer, "unk_token_id", None)
    if unk_id is None:
        raise ValueError(f"{type(tokenizer).__name__} has no unknown token (unk_token_id is None)")
    texts = list(texts)
    tokens = unknown = 0
    for start in range(0, len(texts), batch_size):
        for ids in tokenizer(texts[start:start + batch_size], add_special_tokens=False, verbose=False)["input_ids"]:
            tokens += len(ids)
            unknown += sum(1 for i in ids if i == unk_id)
    name = label or getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    return {"tokenizer": str(name), "unknown_token": tokenizer.unk_token, "tokens": tokens, "unknown": unknown,
            "share": unknown / tokens if tokens else 0.0}


def check_unknown_share(name: str, share: dict, max_share: float, where: str,
                        warnings: list[str] | None = None) -> bool:
    """Warn (log WARNING, append to ``warnings``) when ``share["share"]`` exceeds ``max_share``
    (config ``data.max_unknown_share``); True when it does. ``where`` names the input files."""
    if not 0 <= max_share <= 1:
        raise ValueError(f"data.max_unknown_share must lie in [0, 1], not {max_share!r}")
    if share["share"] <= max_share:
        return False
    message = (f"{where}: {name}: {share['share']:.2%} of its {share['tokens']} tokens are the tokenizer's unknown "
               f"token {share['unknown_token']!r} ({share['unknown']}), above data.max_unknown_share "
               f"{max_share:.2%}: the encoder reads masks, not text")
    log.warning(message)
    if warnings is not None:
        warnings.append(message)
    return True
