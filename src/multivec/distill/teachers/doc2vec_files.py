"""A trained gensim ``Doc2Vec`` stored without pickle, for ``paragraph_vector.save_models``.

gensim's own ``Doc2Vec.save`` / ``Doc2Vec.load`` pickle the model, so a planted ``.model`` file runs code
when it is loaded. Here one model is two files that are data only:

- ``<stem>.safetensors``: every array, float and integer (a JSON header and raw bytes, nothing to run):
  ``model.syn1neg`` (output weights; ``model.syn1`` with hierarchical softmax), ``model.cum_table`` (the
  negative-sampling table), ``wv.vectors`` / ``dv.vectors`` (word and document vectors), their
  ``vectors_lockf``, ``wv.expandos.count`` / ``wv.expandos.sample_int`` (vocabulary counts and
  down-sampling thresholds; hierarchical-softmax ``code``/``point`` as one flat array plus lengths), and
  ``random.keys`` (the MT19937 state of the model's ``RandomState``);
- ``<stem>.json``: every plain attribute (hyper-parameters, counters, the learning-rate state), the
  vocabulary in index order and its index, the document tags, the RNG position, the gensim version, and
  gensim's ``lifecycle_events`` log (read by nothing; a value that is not a JSON type, such as the
  ``frozenset`` a gensim ``save`` records, is kept as its ``str``).

``read_doc2vec`` rebuilds a ``Doc2Vec`` from them whose document vectors and ``infer_vector`` results are
bit-identical to the saved model's (``infer_vector`` continues the saved RNG state). Nothing is dropped
silently: ``write_doc2vec`` refuses an attribute it does not know how to store, and ``read_doc2vec`` refuses
a file written by another gensim version or one whose arrays disagree with its vocabulary (errors name the
file).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import numpy as np

from multivec.io import MalformedInputError, read_json

FORMAT = "multivec-doc2vec-safetensors"
FORMAT_VERSION = 1
PLAIN = (bool, int, float, str, type(None))
# Attributes rebuilt by hand rather than stored as plain values or arrays.
SPECIAL = {"wv", "dv", "random", "hashfxn", "raw_vocab", "lifecycle_events", "load"}


def file_names(stem: str) -> tuple[str, str]:
    """The two files of one stored model: ``(<stem>.safetensors, <stem>.json)``."""
    return f"{stem}.safetensors", f"{stem}.json"


def hash_name(hashfxn: Callable[[str], int]) -> str:
    """The name a stored model records for its word hash: the function's ``stored_name`` where it sets one (a
    name kept when its module moved), else ``<module>.<qualname>``."""
    return getattr(hashfxn, "stored_name", None) or f"{hashfxn.__module__}.{hashfxn.__qualname__}"


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _split_attributes(obj: Any, prefix: str, special: set[str], tensors: dict[str, np.ndarray]) -> dict[str, Any]:
    """``obj``'s plain attributes (returned) and numeric arrays (into ``tensors`` as ``<prefix>.<name>``);
    any other attribute not in ``special`` is an error (it would be lost)."""
    plain: dict[str, Any] = {}
    for name, value in vars(obj).items():
        if name in special:
            continue
        value = _plain(value)
        if isinstance(value, PLAIN) or (type(value) is list and all(isinstance(v, PLAIN) for v in value)):
            plain[name] = value  # lists: e.g. the attribute names gensim's own save() leaves behind
        elif isinstance(value, np.ndarray) and value.dtype != object:
            tensors[f"{prefix}.{name}"] = np.ascontiguousarray(value)
        else:
            raise TypeError(f"{type(obj).__name__}.{name} ({type(value).__name__}) cannot be stored without pickle; "
                            "multivec.distill.teachers.doc2vec_files needs to learn it")
    return plain


def _keyed_vectors_record(kv, prefix: str, tensors: dict[str, np.ndarray]) -> dict[str, Any]:
    record = {"attributes": _split_attributes(kv, prefix, {"expandos", "index_to_key", "key_to_index", "norms"},
                                              tensors),
              "index_to_key": list(kv.index_to_key),
              "key_to_index": [[key, int(index)] for key, index in kv.key_to_index.items()],
              "expandos": {}, "ragged_expandos": {}}
    for name, values in kv.expandos.items():
        if values.dtype != object:
            record["expandos"][name] = str(values.dtype)
            tensors[f"{prefix}.expandos.{name}"] = np.ascontiguousarray(values)
        else:  # hierarchical softmax: one small array per word
            pieces = [np.asarray(v) for v in values]
            dtype = pieces[0].dtype if pieces else np.dtype(np.uint32)
            record["ragged_expandos"][name] = str(dtype)
            tensors[f"{prefix}.expandos.{name}.values"] = np.concatenate(pieces).astype(dtype) if pieces \
                else np.zeros(0, dtype)
            tensors[f"{prefix}.expandos.{name}.lengths"] = np.array([len(v) for v in pieces], np.int64)
    return record


def write_doc2vec(model, folder: str | os.PathLike, stem: str, hashfxn: Callable[[str], int]) -> None:
    """Store ``model`` (a trained ``Doc2Vec`` whose ``hashfxn`` is ``hashfxn``) as ``<stem>.safetensors`` +
    ``<stem>.json`` in ``folder`` (see the module docstring)."""
    import gensim
    from safetensors.numpy import save_file

    if model.hashfxn is not hashfxn:
        raise ValueError(f"the model's word hash is {model.hashfxn!r}, not {hashfxn.__qualname__}: "
                         "it could not be rebuilt on loading")
    if model.raw_vocab:
        raise ValueError("the model still holds its raw vocabulary (build_vocab(keep_raw_vocab=True)); "
                         "it is not stored")
    tensors: dict[str, np.ndarray] = {}
    kind, keys, pos, has_gauss, cached = model.random.get_state()
    tensors["random.keys"] = np.ascontiguousarray(keys, dtype=np.uint32)
    record = {"format": FORMAT, "format_version": FORMAT_VERSION, "gensim": gensim.__version__,
              "hashfxn": hash_name(hashfxn),
              "attributes": _split_attributes(model, "model", SPECIAL, tensors),
              "random": {"kind": kind, "pos": int(pos), "has_gauss": int(has_gauss), "cached_gaussian": float(cached)},
              "lifecycle_events": model.lifecycle_events,
              "wv": _keyed_vectors_record(model.wv, "wv", tensors),
              "dv": _keyed_vectors_record(model.dv, "dv", tensors)}
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tensor_name, json_name = file_names(stem)
    save_file(tensors, str(folder / tensor_name))
    (folder / json_name).write_text(json.dumps(record, default=str) + "\n", encoding="utf-8")


def _read_tensors(path: Path) -> dict[str, np.ndarray]:
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (a stored Doc2Vec is <stem>.safetensors + <stem>.json)")
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError) as err:
        raise MalformedInputError(path, None, f"not a readable safetensors file ({err})") from None


def _keyed_vectors(record: dict, prefix: str, tensors: dict[str, np.ndarray], json_path: Path, tensor_path: Path):
    from gensim.models.keyedvectors import KeyedVectors

    attributes = record["attributes"]
    kv = KeyedVectors(attributes["vector_size"])
    vars(kv).update(attributes)
    for name in ("vectors", "vectors_lockf"):
        if f"{prefix}.{name}" not in tensors:
            raise MalformedInputError(tensor_path, None, f"no tensor {prefix}.{name}")
        setattr(kv, name, tensors[f"{prefix}.{name}"])
    kv.norms = None  # a cache of the vectors' lengths, recomputed when needed
    kv.index_to_key = list(record["index_to_key"])
    kv.key_to_index = {key: index for key, index in record["key_to_index"]}
    kv.expandos = {}
    for name in record["expandos"]:
        kv.expandos[name] = tensors[f"{prefix}.expandos.{name}"]
    for name in record["ragged_expandos"]:
        values, lengths = tensors[f"{prefix}.expandos.{name}.values"], tensors[f"{prefix}.expandos.{name}.lengths"]
        ends = np.cumsum(lengths)
        ragged = np.empty(len(lengths), dtype=object)
        for i, (end, length) in enumerate(zip(ends, lengths)):
            ragged[i] = values[end - length:end].copy()
        kv.expandos[name] = ragged
    rows = len(kv.index_to_key)
    if kv.vectors.shape != (rows, kv.vector_size):
        raise MalformedInputError(tensor_path, None, f"{prefix}.vectors has shape {kv.vectors.shape}, but "
                                  f"{json_path.name} lists {rows} keys of {kv.vector_size} dimensions")
    for name, values in kv.expandos.items():
        if len(values) != rows:
            raise MalformedInputError(tensor_path, None, f"{prefix}.expandos.{name} has {len(values)} rows, "
                                      f"not the {rows} keys of {json_path.name}")
    return kv


def read_doc2vec(folder: str | os.PathLike, stem: str, hashfxn: Callable[[str], int]):
    """The ``Doc2Vec`` that ``write_doc2vec`` stored as ``<stem>.safetensors`` + ``<stem>.json`` in ``folder``;
    nothing in either file is executed. Errors name the file."""
    import gensim
    from gensim.models.doc2vec import Doc2Vec

    folder = Path(folder)
    tensor_name, json_name = file_names(stem)
    json_path, tensor_path = folder / json_name, folder / tensor_name
    if not json_path.is_file():
        raise FileNotFoundError(f"{json_path}: missing (a stored Doc2Vec is {tensor_name} + {json_name})")
    record = read_json(json_path)
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise MalformedInputError(json_path, None, f"not a stored Doc2Vec (no \"format\": \"{FORMAT}\")")
    if record.get("format_version") != FORMAT_VERSION:
        raise MalformedInputError(json_path, None, f"format_version {record.get('format_version')!r}; this "
                                  f"code reads {FORMAT_VERSION}")
    if record.get("gensim") != gensim.__version__:
        raise MalformedInputError(json_path, None, f"written with gensim {record.get('gensim')}, this is gensim "
                                  f"{gensim.__version__}: its state may not match; retrain the model")
    expected_hash = hash_name(hashfxn)
    if record.get("hashfxn") != expected_hash:
        raise MalformedInputError(json_path, None, f"word hash {record.get('hashfxn')!r}, expected {expected_hash}")
    tensors = _read_tensors(tensor_path)
    try:
        attributes = record["attributes"]
        model = Doc2Vec(vector_size=attributes["vector_size"], dm=int(not attributes["sg"]), seed=attributes["seed"],
                        hashfxn=hashfxn, workers=attributes["workers"])
        fresh = set(vars(model))
        vars(model).update(attributes)
        for name, value in tensors.items():
            if name.startswith("model."):
                setattr(model, name[len("model."):], value)
        model.raw_vocab = defaultdict(int)
        model.lifecycle_events = record["lifecycle_events"]
        random = record["random"]
        model.random = np.random.RandomState()
        model.random.set_state((random["kind"], tensors["random.keys"], random["pos"], random["has_gauss"],
                                random["cached_gaussian"]))
        model.wv = _keyed_vectors(record["wv"], "wv", tensors, json_path, tensor_path)
        model.dv = _keyed_vectors(record["dv"], "dv", tensors, json_path, tensor_path)
    except MalformedInputError:
        raise
    except (KeyError, TypeError, ValueError) as err:
        raise MalformedInputError(json_path, None, f"incomplete or inconsistent with {tensor_name} "
                                  f"({type(err).__name__}: {err})") from None
    stored = set(attributes) | {n[len("model."):] for n in tensors if n.startswith("model.")} | SPECIAL
    unset = sorted(fresh - stored)
    if unset:
        raise MalformedInputError(json_path, None, f"lacks the model attribute(s) {', '.join(unset)}")
    n_words = len(model.wv.index_to_key)
    for name in ("syn1neg", "syn1", "cum_table"):
        array = getattr(model, name, None)
        if array is not None and len(array) != n_words:
            raise MalformedInputError(tensor_path, None, f"model.{name} has {len(array)} rows, not the {n_words} "
                                      f"words of {json_name}")
    return model
