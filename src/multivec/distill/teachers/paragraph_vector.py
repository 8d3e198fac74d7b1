"""The contextual teacher (Burian 2023, §3.2.2): Paragraph Vector (Le & Mikolov 2014) as gensim's
``Doc2Vec``, trained on the documents that need a contextual embedding (the student's training
documents); documents it has not seen (the evaluation tasks') get ``infer_vector``.

Options as the thesis explores them: the architecture (``dm`` = PV-DM, ``dbow`` = PV-DBOW; a
variant with several parts concatenates their vectors, e.g. the thesis's 2048-d DM 1024 (stemmed)
+ DBOW 1024 (no preprocessing)), ``vector_size``, ``min_count``, the text preprocessing
(``none`` / ``lowercase`` / ``stem`` = lowercase + Porter stemmer) and, for a DBOW part, ``dbow_words``
(train word vectors skip-gram style alongside the document vectors; gensim ignores it for DM).
Fixed as the authors' PV configs have them: window 5, negative 5, sample 0, mean of the context
vectors (gensim's default, the authors' ``dm_mean: 1``). The epochs come from the config
(``distill.contextual_teacher.epochs``, a variant may set its own). The authors' PV configs
(experiments/generate_embeddings_pv_wikipedia.yaml) train 30 epochs with ``min_count`` 10 and
``dbow_words`` 0: config/paper.yaml sets those; the demo keeps ``min_count`` 2 and ``dbow_words`` on for
its 517 documents (docs/distill.md). ``dbow_words`` defaults to on so that saved demo models and their
``variant.json`` stay as they were: a part records it only when it is off.

Determinism: one worker, a fixed ``seed`` and a fixed word hash (``stable_hash``, so the initial
word vectors do not depend on Python's salted ``hash``); ``infer_vector`` seeds a new document's
start vector with Python's ``hash`` of its words, so the rule fixes ``PYTHONHASHSEED``
(``ensure_hash_seed``). Same seed and input give byte-identical vectors.

``save_models`` / ``load_models`` keep a trained variant: the DAG trains each variant once (rule
``paragraph_vector_model``) and every document set, the demo tasks' and at paper scale IMDB's, gets
``infer_vector`` from that very model; inferring after a reload continues the saved model's RNG, so the
vectors equal those of training and inferring in one process, bit for bit. The files are data only:
each part is ``part<i>.safetensors`` (arrays) + ``part<i>.json`` (vocabulary, hyper-parameters;
``multivec.distill.teachers.doc2vec_files``), never gensim's pickle-based ``.model``, which ``load_models`` refuses
unread because unpickling a planted file runs code.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

ARCHITECTURES = ("dm", "dbow")
PREPROCESSING = ("none", "lowercase", "stem")
FIXED = dict(window=5, negative=5, hs=0, sample=0)
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def stable_hash(text: str) -> int:
    """A hash that is the same in every process (gensim's default is Python's salted ``hash``)."""
    return zlib.crc32(text.encode("utf-8"))


# The name saved models record for this hash (``doc2vec_files.hash_name``): its path from before this module moved
# into ``multivec.distill.teachers``, kept so that saved models stay readable and new ones byte-identical.
stable_hash.stored_name = "multivec.distill.paragraph_vector.stable_hash"


def ensure_hash_seed(value: int | str = 0) -> None:
    """Re-execute this Python process with ``PYTHONHASHSEED=value`` unless it already runs with it
    (``infer_vector`` draws from ``hash``; see the module docstring)."""
    if os.environ.get("PYTHONHASHSEED") != str(value):
        os.environ["PYTHONHASHSEED"] = str(value)
        os.execv(sys.executable, [sys.executable, *sys.argv])


def tokenize(text: str, preprocessing: str) -> list[str]:
    """Words and punctuation of ``text``; ``lowercase`` lowercases, ``stem`` also Porter-stems."""
    if preprocessing not in PREPROCESSING:
        raise ValueError(f"unknown preprocessing {preprocessing!r}; known: {', '.join(PREPROCESSING)}")
    words = _TOKEN.findall(text)
    if preprocessing == "none":
        return words
    words = [w.lower() for w in words]
    if preprocessing == "stem":
        from gensim.parsing.porter import PorterStemmer

        stemmer = PorterStemmer()
        words = [stemmer.stem(w) for w in words]
    return words


@dataclass(frozen=True)
class PVPart:
    architecture: str = "dm"
    vector_size: int = 100
    min_count: int = 2
    preprocessing: str = "lowercase"
    dbow_words: bool = True  # DBOW parts: also train word vectors (skip-gram); the authors' PV configs: off

    def __post_init__(self):
        if not isinstance(self.dbow_words, bool):
            raise ValueError(f"paragraph vector dbow_words must be true or false, got {self.dbow_words!r}")
        if self.architecture not in ARCHITECTURES:
            raise ValueError(f"paragraph vector architecture {self.architecture!r}; known: {', '.join(ARCHITECTURES)}")
        if self.preprocessing not in PREPROCESSING:
            raise ValueError(f"paragraph vector preprocessing {self.preprocessing!r}; known: {', '.join(PREPROCESSING)}")
        if self.vector_size < 1 or self.min_count < 1:
            raise ValueError(f"vector_size and min_count must be >= 1, got {self.vector_size}, {self.min_count}")


def part_record(part: PVPart) -> dict:
    """A part's fields as ``variant.json`` and the embeddings' meta record them: ``dbow_words`` only when it is off
    (its default, on, is what every part trained before the option had, so their records stay byte-identical)."""
    record = vars(part).copy()
    if record["dbow_words"]:
        del record["dbow_words"]
    return record


@dataclass(frozen=True)
class PVVariant:
    name: str
    parts: tuple[PVPart, ...]
    epochs: int = 10
    seed: int = 13

    @property
    def dimension(self) -> int:
        return sum(p.vector_size for p in self.parts)

    @classmethod
    def from_config(cls, entry: dict, epochs: int = 10, seed: int = 13) -> "PVVariant":
        """``{"name": ..., "parts": [{"architecture", "vector_size", "min_count", "preprocessing"}, ...]}``."""
        if "name" not in entry or not entry.get("parts"):
            raise ValueError(f"paragraph vector variant {entry!r}: needs 'name' and a non-empty 'parts' list")
        try:
            parts = tuple(PVPart(**part) for part in entry["parts"])
        except TypeError as err:
            raise ValueError(f"paragraph vector variant {entry['name']!r}: {err}") from None
        return cls(entry["name"], parts, int(entry.get("epochs", epochs)), seed)


@dataclass
class PVResult:
    train_vectors: np.ndarray
    inferred: dict[str, np.ndarray] = field(default_factory=dict)
    vocabulary: list[int] = field(default_factory=list)
    seconds: float = 0.0


def train_part(part: PVPart, texts: list[str], epochs: int, seed: int):
    """A trained ``Doc2Vec`` for one part, on ``texts`` (document tags 0..N-1)."""
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    corpus = [TaggedDocument(tokenize(text, part.preprocessing), [i]) for i, text in enumerate(texts)]
    model = Doc2Vec(vector_size=part.vector_size, min_count=part.min_count, dm=int(part.architecture == "dm"),
                    dbow_words=int(part.dbow_words), epochs=epochs, workers=1, seed=seed, hashfxn=stable_hash,
                    **FIXED)
    model.build_vocab(corpus)
    if len(model.wv) == 0:
        raise ValueError(f"paragraph vector: no word occurs min_count={part.min_count} times in {len(texts)} documents")
    start = time.time()
    model.train(corpus, total_examples=len(corpus), epochs=epochs)
    log.info("PV %s %d-d %s min_count %d%s: %d documents, %d words in vocabulary, %d epochs, %.1f s",
             part.architecture, part.vector_size, part.preprocessing, part.min_count,
             "" if part.dbow_words or part.architecture == "dm" else " (no word vectors)", len(corpus), len(model.wv),
             epochs, time.time() - start)
    return model


def infer_part(model, part: PVPart, texts: list[str]) -> np.ndarray:
    """``infer_vector`` of each text ([N, part.vector_size]), in order (each call advances the model's RNG)."""
    if not texts:
        return np.zeros((0, part.vector_size), np.float32)
    return np.stack([model.infer_vector(tokenize(t, part.preprocessing)) for t in texts])


class UnsafeModelError(ValueError):
    """A saved model folder holds a pickle (gensim's ``.model`` format); it was not loaded."""


def part_stem(i: int) -> str:
    """The file stem of part ``i``: ``part<i>.safetensors`` + ``part<i>.json``."""
    return f"part{i}"


def pickled_parts(folder: str | os.PathLike) -> list[Path]:
    """gensim pickles (``part<i>.model`` and the ``part<i>.model.*.npy`` beside them) in ``folder``."""
    return sorted(Path(folder).glob("part*.model*"))


def save_models(folder: str | os.PathLike, variant: PVVariant, models: list, meta: dict | None = None) -> None:
    """Each part's trained ``Doc2Vec`` as ``part<i>.safetensors`` + ``part<i>.json`` (no pickle; see
    ``multivec.distill.teachers.doc2vec_files``) and ``variant.json`` (the variant, so ``load_models`` rebuilds it)."""
    from multivec.distill.teachers.doc2vec_files import write_doc2vec

    if len(models) != len(variant.parts):
        raise ValueError(f"{variant.name}: {len(models)} models for {len(variant.parts)} parts")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for i, model in enumerate(models):
        write_doc2vec(model, folder, part_stem(i), stable_hash)
    record = {"name": variant.name, "parts": [part_record(p) for p in variant.parts], "epochs": variant.epochs,
              "seed": variant.seed, **(meta or {})}
    (folder / "variant.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def load_models(folder: str | os.PathLike) -> tuple[PVVariant, list, dict]:
    """``(variant, [Doc2Vec per part], variant.json's record)`` written by ``save_models`` (the record also
    holds the ``meta`` given there: documents, vocabulary, training seconds). Nothing is unpickled: a folder
    holding a gensim pickle is refused before anything is read; errors name the file."""
    from multivec.distill.teachers.doc2vec_files import file_names, read_doc2vec
    from multivec.io import MalformedInputError, read_json

    folder = Path(folder)
    pickles = pickled_parts(folder)
    if pickles:
        raise UnsafeModelError(
            f"{pickles[0]}: refused to load: a gensim pickle (the old Paragraph Vector format), and unpickling "
            f"it could run code. Delete {folder} and rerun the paragraph_vector_model rule, which writes "
            "part<i>.safetensors + part<i>.json")
    path = folder / "variant.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (a saved Paragraph Vector model folder holds variant.json, "
                                "part<i>.safetensors and part<i>.json)")
    record = read_json(path)
    if not isinstance(record, dict):
        raise MalformedInputError(path, None, "must hold a JSON object")
    variant = PVVariant.from_config(record, epochs=record.get("epochs", 10), seed=record.get("seed", 13))
    models = []
    for i, part in enumerate(variant.parts):
        for name in file_names(part_stem(i)):
            if not (folder / name).is_file():
                raise FileNotFoundError(f"{folder / name}: missing (variant {variant.name} has "
                                        f"{len(variant.parts)} parts)")
        model = read_doc2vec(folder, part_stem(i), stable_hash)
        if model.vector_size != part.vector_size or bool(model.dm) != (part.architecture == "dm"):
            raise MalformedInputError(folder / file_names(part_stem(i))[1], None,
                                      f"a {model.vector_size}-d {'dm' if model.dm else 'dbow'} model, but "
                                      f"{path.name} says part {i} is {part.vector_size}-d {part.architecture}")
        models.append(model)
    return variant, models, record


def trained_vectors(models: list, n_documents: int) -> np.ndarray:
    """The training documents' own vectors (tags 0..N-1), the parts concatenated in order ([N, dimension])."""
    for model in models:
        if len(model.dv) != n_documents:
            raise ValueError(f"paragraph vector: the model was trained on {len(model.dv)} documents, "
                             f"not the {n_documents} given (a stale saved model?)")
    return np.concatenate([np.stack([m.dv[i] for i in range(n_documents)]) for m in models],
                          axis=1).astype(np.float32)


def infer_sets(variant: PVVariant, models: list, unseen: dict[str, list[str]]
               ) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """``infer_vector`` of each document set ``{name: texts}``, the parts concatenated, and the seconds each
    set took. Each part's model infers the sets in the given order, so the same order gives the same vectors
    (each call advances the model's RNG), whether the model was just trained or reloaded."""
    inferred: dict[str, list[np.ndarray]] = {name: [] for name in unseen}
    seconds = {name: 0.0 for name in unseen}
    for model, part in zip(models, variant.parts):
        for name, texts in unseen.items():
            start = time.time()
            inferred[name].append(infer_part(model, part, texts))
            seconds[name] += time.time() - start
    return {name: np.concatenate(parts, axis=1).astype(np.float32) for name, parts in inferred.items()}, seconds


def train_and_infer(variant: PVVariant, train_texts: list[str], unseen: dict[str, list[str]]) -> PVResult:
    """Train every part on ``train_texts``; their trained vectors (concatenated, in part order) and
    ``infer_vector`` embeddings of each unseen document set ``{name: texts}``. The DAG does the same in two
    steps (``save_models`` after training, then ``load_models`` + ``infer_sets``) so the model is trained once."""
    start = time.time()
    models = [train_part(part, train_texts, variant.epochs, variant.seed) for part in variant.parts]
    inferred, _ = infer_sets(variant, models, unseen)
    return PVResult(trained_vectors(models, len(train_texts)), inferred, [len(m.wv) for m in models],
                    time.time() - start)
