"""The distillation embeddings artifact (multivec.distill.embeddings): round trip and clear errors."""

import json

import numpy as np
import pytest

from multivec.distill.embeddings import read_embeddings, vectors_for, write_embeddings
from multivec.io import MalformedInputError


def test_round_trip_keeps_ids_vectors_and_meta(tmp_path):
    vectors = np.arange(12, dtype=np.float64).reshape(4, 3)
    write_embeddings(tmp_path / "e", ["a", "b", "c", "d"], vectors, {"model": "m", "truncated_share": 0.25})
    ids, read, meta = read_embeddings(tmp_path / "e")
    assert ids == ["a", "b", "c", "d"]
    assert read.dtype == np.float32 and np.array_equal(read, vectors.astype(np.float32))
    assert meta == {"model": "m", "truncated_share": 0.25, "dimension": 3, "n": 4}
    assert np.array_equal(vectors_for(tmp_path / "e", ["d", "a"]), read[[3, 0]])


@pytest.mark.parametrize("ids, vectors, message", [
    (["a"], np.zeros((2, 3)), "1 ids for 2 embeddings"),
    (["a", "a"], np.zeros((2, 3)), "duplicate"),
    (["a"], np.zeros(3), "2-d"),
    (["a"], np.full((1, 2), np.nan), "NaN"),
])
def test_bad_input_is_refused_when_writing(tmp_path, ids, vectors, message):
    with pytest.raises(ValueError, match=message):
        write_embeddings(tmp_path / "e", ids, vectors, {})


def test_reading_names_the_file_that_disagrees(tmp_path):
    folder = write_embeddings(tmp_path / "e", ["a", "b"], np.ones((2, 2)), {"model": "m"})
    (folder / "ids.txt").write_text("a\n")
    with pytest.raises(MalformedInputError, match="ids.txt.*1 ids but embeddings.safetensors has 2 rows"):
        read_embeddings(folder)
    (folder / "ids.txt").write_text("a\nb\n")
    (folder / "meta.json").write_text(json.dumps({"dimension": 5}))
    with pytest.raises(MalformedInputError, match="meta.json.*dimension=5"):
        read_embeddings(folder)
    (folder / "ids.txt").unlink()
    with pytest.raises(FileNotFoundError, match="ids.txt"):
        read_embeddings(folder)


def test_missing_ids_are_named(tmp_path):
    write_embeddings(tmp_path / "e", ["a"], np.ones((1, 2)), {})
    with pytest.raises(KeyError, match="zz"):
        vectors_for(tmp_path / "e", ["a", "zz"])
