"""The contextual teacher (multivec.distill.paragraph_vector): preprocessing, concatenation and
determinism (same seed and PYTHONHASHSEED -> byte-identical vectors, also across processes)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from multivec.distill.documents import read_latin1_lines
from multivec.distill.paragraph_vector import PVVariant, tokenize, train_and_infer
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
from multivec.distill.paragraph_vector import PVVariant, train_and_infer
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
    from multivec.distill.paragraph_vector import (infer_part, infer_sets, load_models, save_models, train_part,
                                                   trained_vectors)

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
    (tmp_path / "pv" / "part1.model").unlink()
    with pytest.raises(FileNotFoundError, match="part1.model: missing"):
        load_models(tmp_path / "pv")
