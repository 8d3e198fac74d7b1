"""The contextual teacher (multivec.distill.teachers.paragraph_vector): preprocessing, concatenation and
determinism (same seed and PYTHONHASHSEED -> byte-identical vectors, also across processes)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from multivec.distill.data.documents import read_latin1_lines
from multivec.distill.teachers.paragraph_vector import PVVariant, tokenize, train_and_infer
from multivec.data.download import gensim_test_file

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def texts():
    return read_latin1_lines(gensim_test_file("lee_background.cor"))[:60]


def test_preprocessing_options():
    assert tokenize("Running Dogs, ran.", "none") == ["Running", "Dogs", ",", "ran", "."]
    assert tokenize("Running Dogs, ran.", "lowercase") == ["running", "dogs", ",", "ran", "."]
    assert tokenize("Running Dogs, ran.", "stem") == ["run", "dog", ",", "ran", "."]
    with pytest.raises(ValueError, match="unknown preprocessing 'upper'"):
        tokenize("x", "upper")


def test_bad_variant_config_names_the_variant():
    with pytest.raises(ValueError, match="architecture 'lstm'"):
        PVVariant.from_config({"name": "v", "parts": [{"architecture": "lstm"}]})
    with pytest.raises(ValueError, match="variant 'v'.*unexpected keyword"):
        PVVariant.from_config({"name": "v", "parts": [{"architecture": "dm", "size": 3}]})
    with pytest.raises(ValueError, match="needs 'name'"):
        PVVariant.from_config({"parts": []})


def _variant(seed=13):
    return PVVariant.from_config({"name": "dm_dbow", "parts": [
        {"architecture": "dm", "vector_size": 12, "min_count": 2, "preprocessing": "stem"},
        {"architecture": "dbow", "vector_size": 8, "min_count": 2, "preprocessing": "none"}]}, epochs=2, seed=seed)


def test_concatenation_and_same_seed_gives_byte_identical_vectors(texts):
    unseen = {"eval": texts[:5]}
    first = train_and_infer(_variant(), texts[5:], unseen)
    assert first.train_vectors.shape == (55, 20) and first.inferred["eval"].shape == (5, 20)
    assert len(first.vocabulary) == 2 and all(v > 100 for v in first.vocabulary)
    again = train_and_infer(_variant(), texts[5:], unseen)
    assert first.train_vectors.tobytes() == again.train_vectors.tobytes()
    assert first.inferred["eval"].tobytes() == again.inferred["eval"].tobytes()
    other = train_and_infer(_variant(seed=14), texts[5:], unseen)
    assert not np.array_equal(first.train_vectors, other.train_vectors)


_CHILD = """
import json, sys
from multivec.distill.teachers.paragraph_vector import PVVariant, train_and_infer
texts = json.load(sys.stdin)
variant = PVVariant.from_config({"name": "v", "parts": [{"architecture": "dm", "vector_size": 8, "min_count": 2,
                                                          "preprocessing": "lowercase"}]}, epochs=2, seed=3)
result = train_and_infer(variant, texts[2:], {"eval": texts[:2]})
print(result.train_vectors.tobytes().hex() + " " + result.inferred["eval"].tobytes().hex())
"""


def test_identical_across_processes_with_the_rules_hash_seed(texts):
    def run(hash_seed):
        env = dict(os.environ, PYTHONPATH=str(SRC), PYTHONHASHSEED=str(hash_seed), OMP_NUM_THREADS="1")
        done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(texts[:30]), env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    first, second = run(0), run(0)
    assert first == second
    # Training does not depend on Python's hash salt (stable word hash); only infer_vector's start does.
    assert run(1)[0] == first[0]


def test_saved_models_infer_what_the_training_process_inferred(texts, tmp_path):
    from multivec.distill.teachers.paragraph_vector import (infer_part, infer_sets, load_models, save_models,
                                                            train_part, trained_vectors)

    variant = PVVariant.from_config({"name": "v", "parts": [
        {"architecture": "dm", "vector_size": 8, "min_count": 2, "preprocessing": "lowercase"},
        {"architecture": "dbow", "vector_size": 6, "min_count": 2, "preprocessing": "none"}]}, epochs=2, seed=3)
    train, first, second = texts[:40], texts[40:50], texts[50:]
    in_process = train_and_infer(variant, train, {"first": first, "second": second})
    save_models(tmp_path / "pv", variant, [train_part(p, train, variant.epochs, variant.seed) for p in variant.parts])
    loaded, models, record = load_models(tmp_path / "pv")
    assert loaded == variant and record["name"] == "v"
    for name, unseen in (("first", first), ("second", second)):  # the same order of infer_vector calls
        got = np.concatenate([infer_part(m, p, unseen) for m, p in zip(models, loaded.parts)], axis=1)
        assert got.shape == (len(unseen), 14)
        assert np.array_equal(got, in_process.inferred[name])
    # What the DAG runs: the saved model's own training vectors, then every set in one infer_sets call.
    loaded, models, _ = load_models(tmp_path / "pv")
    assert np.array_equal(trained_vectors(models, len(train)), in_process.train_vectors)
    inferred, seconds = infer_sets(loaded, models, {"first": first, "second": second})
    assert set(seconds) == {"first", "second"} and all(t >= 0 for t in seconds.values())
    assert all(np.array_equal(inferred[n], in_process.inferred[n]) for n in ("first", "second"))
    with pytest.raises(ValueError, match="trained on 40 documents, not the 39"):
        trained_vectors(models, 39)
    (tmp_path / "pv" / "part1.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="part1.safetensors: missing"):
        load_models(tmp_path / "pv")


def _same_state(saved, loaded) -> None:
    """Every attribute of a Doc2Vec and of its word and document KeyedVectors, exactly (type, dtype, bytes)."""
    def same(a, b, where):
        if isinstance(a, np.ndarray):
            assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
            if a.dtype == object:
                assert all(x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in zip(a, b)), where
            else:
                assert a.tobytes() == b.tobytes(), where
        elif isinstance(a, dict):
            assert set(a) == set(b), where
            for key in a:
                same(a[key], b[key], f"{where}.{key}")
        else:
            assert type(a) is type(b) and a == b, (where, a, b)

    assert set(vars(saved)) == set(vars(loaded))
    for name, value in vars(saved).items():
        if name in ("wv", "dv"):
            assert set(vars(value)) == set(vars(getattr(loaded, name)))
            for key, item in vars(value).items():
                if key != "norms":  # a cache, recomputed on use
                    same(item, vars(getattr(loaded, name))[key], f"{name}.{key}")
        elif name == "random":
            kind, keys, *rest = value.get_state()
            kind2, keys2, *rest2 = loaded.random.get_state()
            assert (kind, rest) == (kind2, rest2) and np.array_equal(keys, keys2)
        elif name == "raw_vocab":
            assert dict(value) == dict(loaded.raw_vocab) == {}
        elif name == "lifecycle_events":  # gensim's log: values that are not JSON types are kept as str
            assert json.loads(json.dumps(value, default=str)) == loaded.lifecycle_events
        elif name != "load":
            same(value, getattr(loaded, name), name)


def test_saved_files_rebuild_the_model_bit_for_bit_without_pickle(texts, tmp_path):
    """part<i>.safetensors + part<i>.json rebuild every attribute of each part's Doc2Vec, so the
    trained vectors and infer_vector give the same bytes as the model before saving."""
    from multivec.distill.teachers.paragraph_vector import (infer_sets, load_models, save_models, train_part,
                                                            trained_vectors)

    variant = _variant()
    train, unseen = texts[:45], {"first": texts[45:52], "second": texts[52:]}
    models = [train_part(p, train, variant.epochs, variant.seed) for p in variant.parts]
    save_models(tmp_path / "pv", variant, models)
    assert sorted(p.name for p in (tmp_path / "pv").iterdir()) == [
        "part0.json", "part0.safetensors", "part1.json", "part1.safetensors", "variant.json"]
    _, loaded, _ = load_models(tmp_path / "pv")
    for model, again in zip(models, loaded):
        _same_state(model, again)
    assert trained_vectors(loaded, len(train)).tobytes() == trained_vectors(models, len(train)).tobytes()
    before, _ = infer_sets(variant, models, unseen)  # the in-memory models' RNG advances here ...
    after, _ = infer_sets(variant, loaded, unseen)  # ... and the loaded ones' from the same saved state
    assert all(before[name].tobytes() == after[name].tobytes() for name in unseen)


def test_hierarchical_softmax_models_round_trip(texts, tmp_path):
    """syn1 and the per-word Huffman codes/points (ragged arrays) are stored too."""
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    from multivec.distill.teachers.doc2vec_files import read_doc2vec, write_doc2vec
    from multivec.distill.teachers.paragraph_vector import stable_hash

    corpus = [TaggedDocument(tokenize(t, "lowercase"), [i]) for i, t in enumerate(texts[:30])]
    model = Doc2Vec(corpus, vector_size=6, min_count=2, hs=1, negative=0, dm=0, epochs=2, workers=1, seed=1,
                    hashfxn=stable_hash)
    write_doc2vec(model, tmp_path, "hs", stable_hash)
    loaded = read_doc2vec(tmp_path, "hs", stable_hash)
    _same_state(model, loaded)
    words = tokenize(texts[40], "lowercase")
    assert model.infer_vector(words).tobytes() == loaded.infer_vector(words).tobytes()


def test_an_attribute_that_cannot_be_stored_is_an_error_not_dropped(texts, tmp_path):
    from multivec.distill.teachers.doc2vec_files import write_doc2vec
    from multivec.distill.teachers.paragraph_vector import stable_hash, train_part

    model = train_part(_variant().parts[0], texts[:20], 1, 1)
    model.extra = {"a": 1}
    with pytest.raises(TypeError, match=r"Doc2Vec\.extra \(dict\) cannot be stored without pickle"):
        write_doc2vec(model, tmp_path, "part0", stable_hash)
    del model.extra
    model.hashfxn = hash
    with pytest.raises(ValueError, match="word hash"):
        write_doc2vec(model, tmp_path, "part0", stable_hash)


def test_damaged_files_name_the_file(texts, tmp_path):
    from safetensors.numpy import load_file, save_file

    from multivec.distill.teachers.paragraph_vector import UnsafeModelError, load_models, save_models, train_part

    variant = PVVariant.from_config({"name": "v", "parts": [
        {"architecture": "dm", "vector_size": 8, "min_count": 2, "preprocessing": "lowercase"}]}, epochs=1, seed=3)
    folder = tmp_path / "pv"
    save_models(folder, variant, [train_part(variant.parts[0], texts[:20], 1, 3)])
    tensors = load_file(str(folder / "part0.safetensors"))
    save_file({**tensors, "wv.vectors": tensors["wv.vectors"][:-1]}, str(folder / "part0.safetensors"))
    with pytest.raises(ValueError, match=r"part0\.safetensors: wv\.vectors has shape"):
        load_models(folder)
    save_file(tensors, str(folder / "part0.safetensors"))
    record = json.loads((folder / "part0.json").read_text(encoding="utf-8"))
    del record["random"]
    (folder / "part0.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match=r"part0\.json: incomplete or inconsistent"):
        load_models(folder)
    (folder / "part0.model").write_bytes(b"not read")
    with pytest.raises(UnsafeModelError, match=r"part0\.model: refused to load: a gensim pickle"):
        load_models(folder)


def test_a_model_gensim_saved_before_is_stored_too(texts, tmp_path):
    """gensim's own save() leaves lists of attribute names on the model (``__numpys`` ...): plain lists, kept."""
    from multivec.distill.teachers.doc2vec_files import read_doc2vec, write_doc2vec
    from multivec.distill.teachers.paragraph_vector import stable_hash, train_part

    model = train_part(_variant().parts[1], texts[:20], 1, 1)
    model.save(str(tmp_path / "gensim.model"))
    assert isinstance(vars(model)["__numpys"], list)
    write_doc2vec(model, tmp_path, "part0", stable_hash)
    _same_state(model, read_doc2vec(tmp_path, "part0", stable_hash))
