"""Documents of the distillation work (Burian 2023): the student's training documents (§3: the
documents both teachers embed and the student learns from) and the demo evaluation tasks (§5;
the demo replaces the thesis's IMDB etc. with real data that ships offline).

Every document set is a JSONL file of ``{"id", "text"}`` rows. Built here:

- ``train.jsonl``: English text that no evaluation task uses — gensim's ``lee_background.cor``
  (300 news documents), gensim's Wikipedia sample (one document per article) and the Debian
  Reference English side (one document per chapter); at paper scale WikiText-103's training articles
  (``wikitext103``: the English-Wikipedia half of the thesis's corpus that is reachable; docs/distill.md);
  long documents are cut at paragraph boundaries into pieces of at most ``max_words`` words. ``lee.cor``, the polarity sentences and
  the PI/RR documents are never read for training; ``check_no_overlap`` fails the build if an
  evaluation document's text also occurs in the training documents.
- ``eval_<task>.jsonl`` and the task's gold folder ``eval_<task>/``:
  ``lee`` (50 documents of ``lee.cor``; ``similarities.txt``, the 50x50 human ratings),
  ``polarity`` (200 movie-review sentences; ``labels.jsonl``),
  ``pi`` and ``rr`` (the documents of the first ``n_queries`` queries of NUGGET's Table 2 tasks;
  ``docs.txt`` + ``task.jsonl``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from multivec.data.document_task_gold import LEE_SIZE, read_lee_similarities  # shared: every representation's Lee
from multivec.io import EmptyOutputError, MalformedInputError, write_jsonl

log = logging.getLogger(__name__)

EVAL_TASKS = ("lee", "polarity", "pi", "rr")
TRAIN_SOURCES = ("lee_background", "gensim_enwiki", "debian_reference", "wikitext103")
POLARITY_LABELS = {"__label__neg": 0, "__label__pos": 1}


def read_latin1_lines(path: str | os.PathLike) -> list[str]:
    """Non-empty lines of one of gensim's test corpora (Latin-1 encoded, e.g. the £ in ``lee.cor``),
    checked to be English (``multivec.data.language.LanguageCheck``; Latin-1 itself cannot fail)."""
    from multivec.data.language import LanguageCheck

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    lines, language = [], LanguageCheck(path, "en")
    for number, line in enumerate(path.read_text(encoding="latin-1").splitlines(), start=1):
        if line.strip():
            lines.append(" ".join(line.split()))
            language.add(line, number)
    language.finish()
    return lines


def split_words(paragraphs: list[str], max_words: int | None) -> list[str]:
    """Join paragraphs into documents of at most ``max_words`` words, cutting only between paragraphs
    (a single longer paragraph stays whole)."""
    if not max_words:
        return [" ".join(paragraphs)] if paragraphs else []
    pieces, current, count = [], [], 0
    for paragraph in paragraphs:
        words = len(paragraph.split())
        if current and count + words > max_words:
            pieces.append(" ".join(current))
            current, count = [], 0
        current.append(paragraph)
        count += words
    if current:
        pieces.append(" ".join(current))
    return pieces


def _grouped(paragraphs: Iterable, key=lambda p: p.doc) -> Iterator[tuple[str, list[str]]]:
    current, texts = None, []
    for paragraph in paragraphs:
        if key(paragraph) != current and texts:
            yield current, texts
            texts = []
        current = key(paragraph)
        texts.append(paragraph.text)
    if texts:
        yield current, texts


def training_documents(sources: dict[str, str], max_words: int | None) -> list[dict]:
    """``{"id", "text"}`` rows from the training sources: ``{source name: path}`` with names from
    ``TRAIN_SOURCES``."""
    from multivec.data.corpora import debian_reference_paragraphs, enwiki_dump_paragraphs, wikitext_paragraphs
    from multivec.data.documents import slug

    unknown = set(sources) - set(TRAIN_SOURCES)
    if unknown:
        raise ValueError(f"unknown distillation training source(s) {sorted(unknown)}; known: {', '.join(TRAIN_SOURCES)}")
    rows: list[dict] = []
    for name, path in sources.items():
        if name == "lee_background":
            grouped = ((f"{n:03d}", [line]) for n, line in enumerate(read_latin1_lines(path)))
        elif name == "gensim_enwiki":
            grouped = ((slug(title), texts) for title, texts in _grouped(enwiki_dump_paragraphs(path)))
        elif name == "wikitext103":  # paper scale: WikiText-103's training articles (detokenised)
            grouped = ((slug(title), texts) for title, texts in _grouped(wikitext_paragraphs(path, "wikitext103")))
        else:
            grouped = ((slug(doc), texts) for doc, texts in _grouped(debian_reference_paragraphs(path)))
        before = len(rows)
        for doc, texts in grouped:
            for piece_number, text in enumerate(split_words(texts, max_words)):
                rows.append({"id": f"{name}/{doc}/{piece_number}", "text": text})
        log.info("%s: %d documents from %s", name, len(rows) - before, path)
    if not rows:
        raise EmptyOutputError(f"no training documents from {', '.join(map(str, sources.values()))}")
    return rows


def lee_documents(path: str | os.PathLike) -> list[dict]:
    lines = read_latin1_lines(path)
    if len(lines) != LEE_SIZE:
        raise MalformedInputError(path, None, f"expected {LEE_SIZE} Lee documents, found {len(lines)}")
    return [{"id": f"lee_{n:02d}", "text": text} for n, text in enumerate(lines)]


def polarity_documents(path: str | os.PathLike) -> tuple[list[dict], list[dict]]:
    """Documents and ``{"id", "label"}`` rows (0 negative, 1 positive) of ``pang_lee_polarity.cor``."""
    docs, labels = [], []
    for n, line in enumerate(read_latin1_lines(path)):
        tag, _, text = line.partition(" ")
        if tag not in POLARITY_LABELS or not text:
            raise MalformedInputError(path, n + 1, f"expected '__label__neg|__label__pos TEXT', got {line[:40]!r}")
        docs.append({"id": f"polarity_{n:03d}", "text": text})
        labels.append({"id": f"polarity_{n:03d}", "label": POLARITY_LABELS[tag]})
    present = {row["label"] for row in labels}
    missing = [tag for tag, value in POLARITY_LABELS.items() if value not in present]
    if missing:  # a classifier and its accuracy need both classes
        raise MalformedInputError(path, None, f"no sentence labelled {', '.join(missing)} "
                                              f"(of {len(labels)}); both classes are needed")
    return docs, labels


def _fingerprint(text: str) -> str:
    return hashlib.sha1(" ".join(text.lower().split()).encode()).hexdigest()


def check_no_overlap(train: list[dict], evaluation: dict[str, list[dict]]) -> None:
    """Fail when an evaluation document's (case/space-normalised) text is also a training document,
    or is contained in one (the word 8-gram audit of ``results/overlap.csv`` is finer)."""
    seen = {_fingerprint(row["text"]) for row in train}
    joined = "\n".join(" ".join(row["text"].lower().split()) for row in train)
    for task, rows in evaluation.items():
        leaked = [row["id"] for row in rows
                  if _fingerprint(row["text"]) in seen or (len(row["text"]) > 80
                                                           and " ".join(row["text"].lower().split()) in joined)]
        if leaked:
            raise ValueError(f"evaluation task {task!r}: {len(leaked)} document(s) also in the training "
                             f"documents, e.g. {leaked[:3]}")


OVERLAP_NGRAM = 8  # the overlap audit's n (multivec.data.overlap)
# A training document sharing this many 8-grams with the evaluation documents is dropped. 1, not 8: a short RR
# passage (< 15 words, fewer than 8 8-grams) inside a kept piece failed the overlap audit in the rehearsal.
OVERLAP_MIN_SHARED = 1


def drop_evaluation_overlap(train: list[dict], evaluation: dict[str, list[dict]],
                            min_shared: int = OVERLAP_MIN_SHARED) -> tuple[list[dict], list[str]]:
    """Training documents that share fewer than ``min_shared`` word 8-grams with every evaluation document
    together, and the ids of those dropped. Paper scale needs it: RR's passages are cut from WikiText-103,
    whose training articles are also the student's training documents (``distill.data.drop_evaluation_overlap``)."""
    import numpy as np

    from multivec.data.overlap import contains, ngram_set, ngram_table

    evaluation_set = ngram_set(((row["id"], row["text"]) for rows in evaluation.values() for row in rows),
                               OVERLAP_NGRAM)
    table = ngram_table(((row["id"], row["text"]) for row in train), OVERLAP_NGRAM)
    shared = np.bincount(table.document, weights=contains(evaluation_set, table.hashes), minlength=len(train))
    kept = [row for row, count in zip(train, shared) if count < min_shared]
    dropped = [row["id"] for row, count in zip(train, shared) if count >= min_shared]
    return kept, dropped


def ranking_documents(folder: str | os.PathLike, n_queries: int | None, out_folder: str | os.PathLike) -> list[dict]:
    """Cut a Table 2 ranking task to its first ``n_queries`` queries, save it to ``out_folder`` and
    return its documents."""
    from multivec.tasks.ranking_task import RankingTask

    task = RankingTask.load(folder)
    if n_queries is not None and n_queries < task.n_queries:
        task = task.first(n_queries)
    task.save(out_folder)
    return [{"id": doc_id, "text": task.documents[doc_id]} for doc_id in task.used_document_ids()]


def build_eval_task(task: str, inputs: dict[str, str], documents_path: str | os.PathLike,
                    gold_folder: str | os.PathLike, n_queries: int | None = None) -> list[dict]:
    """Write ``eval_<task>.jsonl`` (``documents_path``) and its gold folder; return the documents."""
    gold_folder = Path(gold_folder)
    if gold_folder.exists():
        shutil.rmtree(gold_folder)
    gold_folder.mkdir(parents=True)
    if task == "lee":
        docs = lee_documents(inputs["documents"])
        read_lee_similarities(inputs["similarities"])  # checked before it is copied
        shutil.copyfile(inputs["similarities"], gold_folder / "similarities.txt")
    elif task == "polarity":
        docs, labels = polarity_documents(inputs["documents"])
        write_jsonl(gold_folder / "labels.jsonl", labels)
    elif task in ("pi", "rr"):
        docs = ranking_documents(Path(inputs["task"]).parent, n_queries, gold_folder)
    else:
        raise ValueError(f"unknown distillation evaluation task {task!r}; known: {', '.join(EVAL_TASKS)}")
    write_jsonl(documents_path, docs)
    return docs


def read_documents(path: str | os.PathLike) -> list[dict]:
    """``{"id", "text"}`` rows of a document file, checked (fields, strings, unique ids; file:line)."""
    from multivec.io import FirstSeen, check_fields, iter_jsonl

    rows, ids = [], FirstSeen(path)
    for number, row in iter_jsonl(path):
        check_fields(row, {"id": "string", "text": "string"}, path, number)
        ids.add(row["id"], number)
        rows.append({"id": row["id"], "text": row["text"]})
    if not rows:
        raise MalformedInputError(path, None, "no documents")
    return rows
