"""Train/test overlap audit: how much of each evaluation task's text a training corpus contains.

NUGGET (Qin & Van Durme 2023, §6.1 and Appendix A) evaluates encoders trained by
autoencoding / translation (§4) on document similarity tasks (PI from ParaBank, RR from
WikiText). A task document whose text was also a training document measures memorisation,
not similarity, so every training corpus is checked against every task the DAG builds.

What is measured, for one (training corpus, task) pair, on word n-grams (n = 8 by default):

- a text is normalised to the project's one word tokeniser (``multivec.retrieval.bm25.tokenize``:
  lowercase, maximal ``\\w+`` runs, punctuation dropped), and every window of n consecutive
  tokens inside one document is an n-gram (windows never cross documents; a document with
  fewer than n tokens has none);
- each n-gram is hashed to a 64-bit integer: every distinct token gets a stable 64-bit
  hash (blake2b, so runs and machines agree), and the n token hashes are combined as
  ``sum_i h_i * M_i mod 2^64`` with fixed odd multipliers M_i, then mixed by the splitmix64
  finaliser; two distinct n-grams collide with probability about 2^-64;
- the corpus becomes one sorted array of distinct hashes, and each task n-gram is looked up
  by binary search (``numpy.searchsorted``): O((N + M) log N), no pairwise scan;
- per task document: its n-gram occurrences, how many of them occur in the corpus, and the
  share of the two (0 for a document without n-grams);
- per pair: the share of task documents with at least one shared n-gram, the share of all
  task n-gram occurrences that occur in the corpus, the largest per-document share and the
  documents above the threshold, worst first.

A pair fails when some task document shares more than ``max_document_share`` of its n-grams
with the corpus. Which files a corpus or task is read from is a *format* (``CORPUS_READERS``,
``TASK_READERS``), so a new training corpus or evaluation task is one entry in the rules.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from multivec.io import FirstSeen, MalformedInputError, check_fields, iter_jsonl
from multivec.io.markdown_table import markdown_table
from multivec.retrieval.bm25 import tokenize

log = logging.getLogger(__name__)

DEFAULT_NGRAM = 8
DEFAULT_MAX_DOCUMENT_SHARE = 0.05
N_WORST = 5  # documents named per failing pair

# Fixed odd multipliers, one per n-gram position (enough for n <= 64), from a seeded generator.
_MULTIPLIERS = np.random.default_rng(20230701).integers(0, 2**63, size=64, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


# ---------------------------------------------------------------- hashing

class TokenHasher:
    """Stable 64-bit hashes of tokens (blake2b), cached per distinct token."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def __call__(self, tokens: Sequence[str]) -> np.ndarray:
        cache = self._cache
        for token in set(tokens).difference(cache):
            cache[token] = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
        return np.fromiter((cache[token] for token in tokens), dtype=np.uint64, count=len(tokens))


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@dataclass
class NgramTable:
    """Every n-gram window of a list of documents: its hash and the index of its document."""

    ids: list[str]
    n_tokens: np.ndarray  # per document
    hashes: np.ndarray  # uint64, one per window
    document: np.ndarray  # int64, the window's document index

    @property
    def ngrams_per_document(self) -> np.ndarray:
        return np.bincount(self.document, minlength=len(self.ids))


def ngram_table(documents: Iterable[tuple[str, str]], n: int = DEFAULT_NGRAM,
                hasher: TokenHasher | None = None) -> NgramTable:
    """Hash every window of ``n`` normalised tokens of each ``(id, text)`` document."""
    if not 1 <= n <= len(_MULTIPLIERS):
        raise ValueError(f"n-gram size must be in 1..{len(_MULTIPLIERS)}, got {n}")
    hasher = hasher or TokenHasher()
    ids, lengths, token_hashes = [], [], []
    for doc_id, text in documents:
        tokens = tokenize(text)
        ids.append(doc_id)
        lengths.append(len(tokens))
        token_hashes.append(hasher(tokens))
    n_tokens = np.asarray(lengths, dtype=np.int64)
    if not ids or n_tokens.sum() < n:
        return NgramTable(ids, n_tokens, np.empty(0, np.uint64), np.empty(0, np.int64))
    flat = np.concatenate(token_hashes)
    owner = np.repeat(np.arange(len(ids), dtype=np.int64), n_tokens)
    n_windows = len(flat) - n + 1
    combined = np.zeros(n_windows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i in range(n):
            combined += flat[i:i + n_windows] * _MULTIPLIERS[i]  # wraps mod 2^64
        combined = _splitmix64(combined)
    inside = owner[:n_windows] == owner[n - 1:]  # the window starts and ends in one document
    return NgramTable(ids, n_tokens, combined[inside], owner[:n_windows][inside])


def ngram_set(documents: Iterable[tuple[str, str]], n: int = DEFAULT_NGRAM, hasher: TokenHasher | None = None,
              chunk_documents: int = 20_000) -> np.ndarray:
    """The distinct n-gram hashes of ``(id, text)`` documents, sorted (the corpus side of the audit).

    Documents are hashed ``chunk_documents`` at a time, so memory follows the distinct n-grams,
    not the corpus' token count."""
    hasher = hasher or TokenHasher()
    parts, chunk = [np.empty(0, np.uint64)], []
    for document in documents:
        chunk.append(document)
        if len(chunk) == chunk_documents:
            parts.append(np.unique(ngram_table(chunk, n, hasher).hashes))
            chunk = []
    parts.append(np.unique(ngram_table(chunk, n, hasher).hashes))
    return np.unique(np.concatenate(parts))


def contains(sorted_set: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``hashes`` are in ``sorted_set`` (binary search)."""
    if len(sorted_set) == 0:
        return np.zeros(len(hashes), dtype=bool)
    position = np.searchsorted(sorted_set, hashes)
    position[position == len(sorted_set)] = 0
    return sorted_set[position] == hashes


# ---------------------------------------------------------------- one corpus x one task

@dataclass
class OverlapResult:
    """The audit of one task against one training corpus (see the module docstring)."""

    corpus: str
    task: str
    ngram: int
    threshold: float
    n_documents: int
    n_task_ngrams: int
    n_corpus_ngrams: int  # distinct
    share_documents_with_shared_ngram: float
    share_ngrams_shared: float
    max_document_share: float
    documents_over_threshold: int
    worst: list[tuple[str, float]] = field(default_factory=list)  # (id, share), worst first, share > 0
    # False when the corpus trains only models that are never evaluated on this task (its spec's
    # `evaluated_on`): the overlap is measured and shown, but it cannot leak into a score.
    enforced: bool = True

    @property
    def passed(self) -> bool:
        return self.documents_over_threshold == 0 or not self.enforced

    def row(self) -> dict:
        return {
            "corpus": self.corpus, "task": self.task, "ngram": self.ngram, "threshold": self.threshold,
            "n_documents": self.n_documents, "n_task_ngrams": self.n_task_ngrams,
            "n_corpus_ngrams": self.n_corpus_ngrams,
            "share_documents_with_shared_ngram": round(self.share_documents_with_shared_ngram, 6),
            "share_ngrams_shared": round(self.share_ngrams_shared, 6),
            "max_document_share": round(self.max_document_share, 6),
            "documents_over_threshold": self.documents_over_threshold,
            "worst_documents": " ".join(f"{doc_id}={share:.3f}" for doc_id, share in self.worst),
            "enforced": self.enforced,
            "passed": self.passed,
        }


def document_shares(task: NgramTable, corpus_set: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per task document: (n-gram occurrences, occurrences found in the corpus)."""
    found = contains(corpus_set, task.hashes)
    total = np.bincount(task.document, minlength=len(task.ids))
    shared = np.bincount(task.document, weights=found, minlength=len(task.ids)).astype(np.int64)
    return total, shared


def measure_overlap(corpus_name: str, corpus_set: np.ndarray, task_name: str, task: NgramTable, *,
                    ngram: int, threshold: float, n_worst: int = N_WORST) -> OverlapResult:
    """Audit one task's n-gram table against one corpus' sorted n-gram set."""
    if not 0 <= threshold <= 1:
        raise ValueError(f"max_document_share must be in [0, 1], got {threshold}")
    total, shared = document_shares(task, corpus_set)
    share = np.divide(shared, total, out=np.zeros(len(total)), where=total > 0)
    order = np.argsort(-share, kind="stable")
    worst = [(task.ids[i], float(share[i])) for i in order[:n_worst] if share[i] > 0]
    n_docs = len(task.ids)
    return OverlapResult(
        corpus=corpus_name, task=task_name, ngram=ngram, threshold=threshold, n_documents=n_docs,
        n_task_ngrams=int(total.sum()), n_corpus_ngrams=len(corpus_set),
        share_documents_with_shared_ngram=float((shared > 0).sum() / n_docs) if n_docs else 0.0,
        share_ngrams_shared=float(shared.sum() / total.sum()) if total.sum() else 0.0,
        max_document_share=float(share.max()) if n_docs else 0.0,
        documents_over_threshold=int((share > threshold).sum()),
        worst=worst,
    )


# ---------------------------------------------------------------- readers (formats)

def training_jsonl_documents(paths: Sequence[str | os.PathLike]) -> Iterator[tuple[str, str]]:
    """Training corpus files ``{id, source, target}`` (data/built/corpora): the source and the
    target of every row, as two documents (an n-gram never spans the two). Fields must be
    strings and ids unique within a file (``file:line`` otherwise)."""
    for path in paths:
        ids = FirstSeen(path)
        for number, row in iter_jsonl(path):
            check_fields(row, {"id": "string", "source": "string", "target": "string"}, path, number)
            ids.add(row["id"], number)
            yield f"{row['id']}#source", row["source"]
            yield f"{row['id']}#target", row["target"]


def ranking_task_documents(paths: Sequence[str | os.PathLike]) -> Iterator[tuple[str, str]]:
    """A ranking task (``docs.txt`` + ``task.jsonl``, NUGGET release format): every document a
    query uses, queries and candidates, each once."""
    from multivec.tasks.ranking_task import RankingTask

    folders = {Path(p).parent for p in paths}
    if len(folders) != 1:
        raise ValueError(f"a ranking task is one folder's docs.txt + task.jsonl, got files in {sorted(map(str, folders))}")
    task = RankingTask.load(folders.pop())
    for doc_id in task.used_document_ids():
        yield doc_id, task.documents[doc_id]


def text_jsonl_documents(paths: Sequence[str | os.PathLike]) -> Iterator[tuple[str, str]]:
    """Documents ``{id, text}`` (the distillation's training and evaluation documents): string fields,
    ids unique within a file."""
    for path in paths:
        ids = FirstSeen(path)
        for number, row in iter_jsonl(path):
            check_fields(row, {"id": "string", "text": "string"}, path, number)
            ids.add(row["id"], number)
            yield row["id"], row["text"]


def sentence_pairs_documents(paths: Sequence[str | os.PathLike]) -> Iterator[tuple[str, str]]:
    """Sentence pairs ``{pair_id, a: {id, sentence}, b: {id, sentence}}`` (the sub-sentence encoder's
    training pairs, before segmentation): every sentence once; an id used for two different
    sentences raises naming the line."""
    seen: dict[str, tuple[str, str, int]] = {}
    for path in paths:
        for number, row in iter_jsonl(path):
            check_fields(row, {"a": "object", "b": "object"}, path, number)
            for side in ("a", "b"):
                sentence = row[side]
                if not (isinstance(sentence.get("id"), str) and isinstance(sentence.get("sentence"), str)):
                    raise MalformedInputError(path, number, f"side {side!r} is not {{id, sentence}} with string "
                                                            f"values, got {str(sentence)[:80]}")
                first = seen.get(sentence["id"])
                if first is None:
                    seen[sentence["id"]] = (sentence["sentence"], str(path), number)
                    yield sentence["id"], sentence["sentence"]
                elif first[0] != sentence["sentence"]:
                    raise MalformedInputError(path, number, f"sentence id {sentence['id']!r} names another sentence "
                                                            f"on {first[1]}:{first[2]}")


def propsegment_documents(paths: Sequence[str | os.PathLike]) -> Iterator[tuple[str, str]]:
    """PropSegment ``document_clusters.<split>.json``: every Wikipedia document's full text."""
    from multivec.subencoder.data.propsegment import read_clusters

    for path in paths:
        for cluster in read_clusters(path):
            for doc_id, sentences in cluster.documents.items():
                yield f"{cluster.cluster_id}:{doc_id}", " ".join(s.text for s in sentences)


CORPUS_READERS: dict[str, Callable[[Sequence[str]], Iterator[tuple[str, str]]]] = {
    "training_jsonl": training_jsonl_documents,
    "text_jsonl": text_jsonl_documents,
    "sentence_pairs": sentence_pairs_documents,
}
TASK_READERS: dict[str, Callable[[Sequence[str]], Iterator[tuple[str, str]]]] = {
    "ranking_task": ranking_task_documents,
    "text_jsonl": text_jsonl_documents,
    "propsegment_clusters": propsegment_documents,
}


def _read(readers: dict, kind: str, name: str, spec: dict) -> Iterator[tuple[str, str]]:
    for key in ("format", "files"):
        if key not in spec:
            raise ValueError(f"audit {kind} {name!r}: no {key!r} in {spec}")
    reader = readers.get(spec["format"])
    if reader is None:
        raise ValueError(f"audit {kind} {name!r}: unknown format {spec['format']!r}; known: {', '.join(readers)}")
    return reader([str(f) for f in spec["files"]])


# ---------------------------------------------------------------- every corpus x every task

def audit_overlap(corpora: dict[str, dict], tasks: dict[str, dict], *, ngram: int = DEFAULT_NGRAM,
                  max_document_share: float = DEFAULT_MAX_DOCUMENT_SHARE) -> list[OverlapResult]:
    """Every training corpus against every task. ``corpora``/``tasks``: name -> ``{format, files}``.

    A corpus spec may add ``evaluated_on: [task, ...]``: the only tasks on which models trained on it are
    scored (e.g. NUGGET's LM, trained on WikiText-103 train at paper scale, is scored on its test split
    only, while RR draws its passages from WikiText-103 train for other models). Other tasks are still
    measured, with ``enforced`` False, so the threshold does not fail them."""
    hasher = TokenHasher()
    task_tables = {name: ngram_table(_read(TASK_READERS, "task", name, spec), ngram, hasher)
                   for name, spec in tasks.items()}
    results = []
    for corpus_name, spec in corpora.items():
        corpus_set = ngram_set(_read(CORPUS_READERS, "corpus", corpus_name, spec), ngram, hasher)
        log.info("corpus %s: %d distinct %d-grams", corpus_name, len(corpus_set), ngram)
        scope = spec.get("evaluated_on")
        unknown = sorted(set(scope or ()) - set(task_tables))
        if unknown:
            raise ValueError(f"audit corpus {corpus_name!r}: evaluated_on names unknown tasks {unknown}; "
                             f"known: {', '.join(task_tables)}")
        for task_name, table in task_tables.items():
            result = measure_overlap(corpus_name, corpus_set, task_name, table, ngram=ngram,
                                     threshold=max_document_share)
            result.enforced = scope is None or task_name in scope
            log.info("%s x %s: %s", corpus_name, task_name, result.row())
            results.append(result)
    return results


OVERLAP_COLUMNS = ["corpus", "task", "ngram", "threshold", "n_documents", "n_task_ngrams", "n_corpus_ngrams",
                   "share_documents_with_shared_ngram", "share_ngrams_shared", "max_document_share",
                   "documents_over_threshold", "worst_documents", "enforced", "passed"]


def overlap_markdown(results: Sequence[OverlapResult]) -> str:
    ngrams = sorted({r.ngram for r in results})
    lines = ["# Train/test overlap audit", "",
             f"Word {'/'.join(map(str, ngrams))}-grams (lowercase `\\w+` tokens) of every evaluation task's documents "
             "(queries and candidates) looked up in every training corpus (train + dev, source and target). "
             "A pair fails when a task document shares more than `threshold` of its n-grams with the corpus; "
             "pairs marked *not scored* are measured only (no model trained on that corpus is scored on that task).",
             "",
             *markdown_table(["corpus", "task", "documents", "docs with a shared n-gram", "n-grams shared",
                              "max per document", "docs over threshold", "threshold", "passed", "worst documents"],
                             ([f"{r.corpus}", f"{r.task}", f"{r.n_documents}",
                               f"{r.share_documents_with_shared_ngram:.2%}", f"{r.share_ngrams_shared:.3%}",
                               f"{r.max_document_share:.2%}", f"{r.documents_over_threshold}", f"{r.threshold:g}",
                               ('yes' if r.passed else '**no**') if r.enforced else 'not scored',
                               ", ".join(f"{i} ({s:.1%})" for i, s in r.worst[:3])] for r in results))]
    return "\n".join(lines) + "\n"


def write_overlap(results: Sequence[OverlapResult], csv_path: str | os.PathLike, md_path: str | os.PathLike) -> None:
    """``results/overlap.csv`` (one row per corpus x task, columns ``OVERLAP_COLUMNS``) and its markdown."""
    import pandas as pd

    for path in (csv_path, md_path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([r.row() for r in results], columns=OVERLAP_COLUMNS).to_csv(csv_path, index=False)
    Path(md_path).write_text(overlap_markdown(results), encoding="utf-8")


class OverlapError(RuntimeError):
    """Some task document shares more than the allowed share of its n-grams with a training corpus."""


def check_overlap(results: Sequence[OverlapResult]) -> None:
    """Raise ``OverlapError`` naming corpus, task and worst documents of every failing pair."""
    failed = [r for r in results if not r.passed]
    if failed:
        lines = [f"training corpus {r.corpus!r} overlaps task {r.task!r}: {r.documents_over_threshold} of "
                 f"{r.n_documents} documents share more than {r.threshold:g} of their {r.ngram}-grams with it "
                 f"(max {r.max_document_share:.1%}); worst: "
                 + ", ".join(f"{doc_id} ({share:.1%})" for doc_id, share in r.worst) for r in failed]
        raise OverlapError("train/test overlap above config audit.max_document_share:\n  " + "\n  ".join(lines))
