"""Does the decoder read the nuggets? Two teacher-forced diagnostics of a trained zoo model.

A NUGGET model is only a result if its decoder uses what the encoder kept. Both diagnostics run the model's
own training loss (mean token cross-entropy, ``NuggetModel.forward``) on its dev documents:

- **Memory gain**: the loss of each document with its own memory against the loss with the memory of
  another document (document i reads document i + 1's nuggets, the last reads the first's), in nats per
  target token. The difference is what the memory tells the decoder beyond a language model of the targets;
  near 0, the decoder ignores it, and a learned selector, trained only through the decoder (eq. 5), gets no
  signal either.
- **Loss by distance to the nearest nugget** (autoencoders whose targets are their sources, token for token:
  the target tokenizer is the source one): each target token's loss, binned by the distance of its position
  to the closest selected position (0 = the token is itself a nugget; 1, 2, 3 or more). If the nuggets carry
  the text around them (the paper's §5.3: a nugget encodes the text before it), the loss of the tokens at
  distance >= 1 falls towards that of the nuggets' own; if they carry only their own token, it stays near
  the unigram model's. The r = 1 model has every token at distance 0; the one-vector (mean) model has no
  positions and no bins.

Every number is a ratio of sums over documents (nats / tokens), with a percentile bootstrap CI over documents
(``multivec.statistics.resampling.ratio_bootstrap_cis``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import torch

from multivec.io.markdown_table import markdown_table
from multivec.nugget.modeling import IGNORE_INDEX, NuggetModel
from multivec.nugget.training import TokenizedPairs
from multivec.statistics.resampling import BootstrapSettings

DISTANCE_BINS = ("0", "1", "2", "3+")
BIN_COLUMNS = ("d0", "d1", "d2", "d3plus")  # DISTANCE_BINS as column names


@dataclass
class DocumentLosses:
    """Per-document sums (nats) and token counts of one model on its dev documents."""

    tokens: np.ndarray  # (documents,) target tokens with a label
    own: np.ndarray  # (documents,) summed nats with the document's own memory
    other: np.ndarray  # (documents,) summed nats with the next document's memory
    by_distance: np.ndarray | None = None  # (documents, bins) summed nats per distance bin; None: no bins
    distance_tokens: np.ndarray | None = None  # (documents, bins) tokens per distance bin
    no_bins_reason: str = ""


def distance_bins(length: int, positions: Sequence[int]) -> np.ndarray:
    """For sequence positions 0..length-1, the index into ``DISTANCE_BINS`` of the distance to the nearest of
    ``positions`` (``min(distance, 3)``)."""
    if not len(positions):
        raise ValueError("no nugget positions: every document keeps at least one nugget")
    index = np.arange(length)[:, None]
    distance = np.abs(index - np.asarray(sorted(positions))[None, :]).min(axis=1)
    return np.minimum(distance, len(DISTANCE_BINS) - 1)


def aligned_targets(model: NuggetModel, data: TokenizedPairs) -> str:
    """Why the distance bins cannot be computed for this model and data ("" when they can): target position i
    must be source position i, i.e. an autoencoder whose targets are its own source tokens."""
    cfg = model.config
    if cfg.bottleneck == "mean":
        return "one vector per document: no positions"
    if cfg.objective != "ae" or cfg.target_tokenizer != "source":
        return "targets are not the source tokens (translation, or another target tokenizer)"
    differ = sum(s != t for s, t in zip(data.sources, data.targets))
    if differ:
        return f"{differ} of {len(data.sources)} documents' targets differ from their sources (truncation)"
    return ""


def _batch_losses(model: NuggetModel, memory, bias, decoder_input_ids, labels) -> torch.Tensor:
    """Per-position nats (B × T); 0 where there is no label."""
    hidden, _ = model.decoder(decoder_input_ids, memory, bias)
    keep = labels != IGNORE_INDEX
    nats = torch.zeros(labels.shape, dtype=torch.float32, device=labels.device)
    nats[keep] = torch.nn.functional.cross_entropy(model.decoder.logits(hidden[keep]).float(), labels[keep],
                                                   reduction="none")
    return nats.cpu()


def document_losses(model: NuggetModel, data: TokenizedPairs, batch_size: int = 16) -> DocumentLosses:
    """``DocumentLosses`` of ``model`` (eval mode, no gradient) on ``data`` (at least 2 documents)."""
    n = len(data.sources)
    if n < 2:
        raise ValueError(f"memory use needs at least 2 dev documents (another document's memory), got {n}")
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size}: must be >= 1")
    if data.sentence_ends is not None:
        raise ValueError("memory use does not run the sentence-boundary selector (it needs sentence ends)")
    reason = aligned_targets(model, data)
    bins = len(DISTANCE_BINS)
    tokens, own, other = np.zeros(n), np.zeros(n), np.zeros(n)
    by_distance, distance_tokens = np.zeros((n, bins)), np.zeros((n, bins))
    model.eval()
    processor = model.processor
    with torch.no_grad():
        for start in range(0, n, batch_size):
            rows = list(range(start, min(start + batch_size, n)))
            decoder_input_ids, labels = processor.target_batch([data.targets[i] for i in rows], model.device)
            nuggets = model.encode(*processor.collate_sources([data.sources[i] for i in rows], model.device))
            others = model.encode(*processor.collate_sources([data.sources[(i + 1) % n] for i in rows], model.device))
            own_nats = _batch_losses(model, model.decoder_memory(nuggets), model.memory_bias(nuggets),
                                     decoder_input_ids, labels)
            other_nats = _batch_losses(model, model.decoder_memory(others), model.memory_bias(others),
                                       decoder_input_ids, labels)
            keep = (labels != IGNORE_INDEX).cpu().numpy()
            for b, row in enumerate(rows):
                tokens[row] = keep[b].sum()
                own[row] = float(own_nats[b].sum())
                other[row] = float(other_nats[b].sum())
                if reason:
                    continue
                positions = nuggets.indices[b][nuggets.mask[b]].tolist()
                which = distance_bins(labels.shape[1], positions)
                for k in range(bins):
                    here = keep[b] & (which == k)
                    by_distance[row, k] = float(own_nats[b].numpy()[here].sum(dtype=np.float64))
                    distance_tokens[row, k] = here.sum()
    if reason:
        return DocumentLosses(tokens, own, other, no_bins_reason=reason)
    return DocumentLosses(tokens, own, other, by_distance, distance_tokens)


def model_memory_use(folder: str, dev_path: str, documents: int | None, batch_size: int,
                     settings: BootstrapSettings, device: str = "cpu") -> dict[str, float | str]:
    """``memory_use_row`` of the zoo model in ``folder`` on the first ``documents`` (None: all) rows of
    ``dev_path``, with the unigram entropy of its dev targets (``config.json``) for reference."""
    from multivec.io import read_json
    from multivec.nugget.training import read_pairs, tokenize_pairs

    model = NuggetModel.from_pretrained(folder, device=device)
    rows = read_pairs(dev_path)
    data = tokenize_pairs(model, rows[:documents] if documents else rows)
    row = memory_use_row(document_losses(model, data, batch_size), settings)
    derived = read_json(f"{folder}/config.json").get("derived", {})
    return {"folder": str(folder), "unigram_nats": float(derived.get("unigram_nats", float("nan"))), **row}


def memory_use_row(losses: DocumentLosses, settings: BootstrapSettings) -> dict[str, float | str]:
    """One table row: nats per token with own and other memory, the gain (other - own), and the distance bins
    (nats per token and share of tokens), each with its bootstrap CI over documents."""
    tokens = losses.tokens[:, None]
    cells = {"nats_own": (losses.own[:, None], tokens), "nats_other_document": (losses.other[:, None], tokens),
             "memory_gain": ((losses.other - losses.own)[:, None], tokens)}
    if losses.by_distance is not None:
        for k, name in enumerate(BIN_COLUMNS):
            cells[f"nats_{name}"] = (losses.by_distance[:, k:k + 1], losses.distance_tokens[:, k:k + 1])
            cells[f"share_{name}"] = (losses.distance_tokens[:, k:k + 1], tokens)
    row: dict[str, float | str] = {"documents": int(len(losses.tokens)), "tokens": int(losses.tokens.sum())}
    for name, (numerators, denominators) in cells.items():
        total = denominators.sum()
        row[name] = float(numerators.sum() / total) if total else float("nan")
        lo, hi = settings.cis(numerators, denominators)
        row[f"{name}_lo"], row[f"{name}_hi"] = float(lo[0]), float(hi[0])
    row["distance_bins"] = "" if losses.by_distance is not None else losses.no_bins_reason
    return row


def memory_use_markdown(rows: Sequence[Mapping[str, object]], confidence: float) -> list[str]:
    """The table as Markdown lines: one line per model, nats per target token [CI]."""
    def cell(row, name, digits=2):
        value = row.get(name)
        if value is None or value != value:  # NaN: no tokens in that bin
            return "–"
        return f"{value:.{digits}f} [{row[name + '_lo']:.{digits}f}, {row[name + '_hi']:.{digits}f}]"

    pct = f"{100 * confidence:g}%"
    lines = [f"Nats per target token on the first dev documents (teacher forcing), {pct} bootstrap CI over "
             "documents. *own*: each document's own memory; *other*: the next document's memory; *gain* = "
             "other - own, what the memory tells the decoder beyond a language model of the targets. d0-d3+: "
             "own-memory loss of the target tokens at distance 0, 1, 2, >= 3 from the nearest nugget (share "
             "of tokens in brackets after the loss), for autoencoders whose targets are their sources.", ""]
    cells = []
    for row in rows:
        bins = []
        for name in BIN_COLUMNS:
            if row.get("distance_bins"):
                bins.append("–")
            else:
                bins.append(f"{cell(row, 'nats_' + name)} ({100 * row['share_' + name]:.0f}%)")
        cells.append([f"{row['model']}", f"`{row['folder']}`", f"{row['unigram_nats']:.2f}", cell(row, 'nats_own'),
                      cell(row, 'nats_other_document'), cell(row, 'memory_gain'), *bins])
    lines += markdown_table(["model", "folder", "unigram", "own", "other", "gain", "d0", "d1", "d2", "d3+"], cells)
    notes = sorted({str(row["distance_bins"]) for row in rows if row.get("distance_bins")})
    if notes:
        lines += ["", "No distance bins: " + "; ".join(notes) + "."]
    return lines
