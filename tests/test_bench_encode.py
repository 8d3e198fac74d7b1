"""The opt-in ONNX encoding path and benchmarks/encode_speed.py's core, on tiny inputs.

An ONNX export is checked against the torch encoder (max abs difference of the last-layer states) and a
disagreeing export must fail. Correctness and agreement only, never timing."""

import os

import numpy as np
import pytest
from benchmark_scripts import load_benchmark
import torch

if os.environ.get("CI"):  # CI installs the bench extra (scripts/install.sh): the export check must run there
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
else:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")

from multivec.baselines.base_encoder import encode_mean_pooled  # noqa: E402
from multivec.baselines.onnx_encoder import OnnxMismatch, export_onnx, verify_onnx  # noqa: E402

TEXTS = ["A short one.", "A somewhat longer document, so that batches need padding.", "Mid length text here."]


def _load_benchmark():
    return load_benchmark("encode_speed")


@pytest.fixture(scope="module")
def tiny_exports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx")
    return {fuse: export_onnx("tiny-random-bert", folder / f"tiny_{fuse}.onnx", fuse=fuse) for fuse in (False, True)}


@pytest.mark.parametrize("fuse", [False, True])
def test_export_matches_torch_and_onnx_backend_gives_the_same_vectors(tiny_exports, fuse):
    export = tiny_exports[fuse]
    assert export["max_abs_difference"] <= 1e-4
    torch_vectors = encode_mean_pooled("tiny-random-bert", TEXTS, 32, batch_size=2, show_progress=False)
    onnx_vectors = encode_mean_pooled("tiny-random-bert", TEXTS, 32, batch_size=2, show_progress=False,
                                      backend="onnx", onnx_path=export["path"])
    assert onnx_vectors.shape == torch_vectors.shape
    np.testing.assert_allclose(onnx_vectors, torch_vectors, atol=1e-4)
    cosine = (onnx_vectors * torch_vectors).sum(1) / np.linalg.norm(onnx_vectors, axis=1) / np.linalg.norm(
        torch_vectors, axis=1)
    assert cosine.min() >= 0.9999


def test_a_disagreeing_export_fails_the_check(tiny_exports, tmp_path):
    import onnx
    from onnx import numpy_helper

    model = onnx.load(tiny_exports[False]["path"])
    # perturb the largest weight matrix: the exported graph no longer computes the torch encoder
    target = max(model.graph.initializer, key=lambda t: int(np.prod(t.dims)))
    values = numpy_helper.to_array(target).copy()
    target.CopyFrom(numpy_helper.from_array(values * 1.5, target.name))
    broken = tmp_path / "broken.onnx"
    onnx.save(model, str(broken))
    with pytest.raises(OnnxMismatch, match="differ from torch"):
        verify_onnx(broken, "tiny-random-bert")


def test_onnx_backend_needs_a_path_and_refuses_bf16():
    with pytest.raises(ValueError, match="onnx_path"):
        encode_mean_pooled("tiny-random-bert", TEXTS, backend="onnx")
    with pytest.raises(ValueError, match="backend"):
        encode_mean_pooled("tiny-random-bert", TEXTS, backend="tensorrt")


def test_restated_st_onnx_loop_equals_sentence_transformers_encode():
    """The benchmark's re-stated onnx-backend loop, with a session that runs the torch model, reproduces
    SentenceTransformer.encode: preprocess, order and pooling are sentence-transformers' own."""
    from sentence_transformers import SentenceTransformer

    from multivec.io.resources import resolve_model

    bench = _load_benchmark()
    st_model = SentenceTransformer(resolve_model("minilm"), device="cpu")
    encoder = st_model[0].auto_model

    class TorchSession:
        def run(self, _, feed):
            with torch.inference_mode():
                return [encoder(input_ids=torch.from_numpy(feed["input_ids"]),
                                attention_mask=torch.from_numpy(feed["attention_mask"])).last_hidden_state.numpy()]

    got = bench.st_onnx_restated(st_model, TorchSession(), TEXTS, batch_size=2)
    expected = st_model.encode(TEXTS, batch_size=2, convert_to_numpy=True, show_progress_bar=False)
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_benchmark_needs_the_mirror(monkeypatch, tmp_path):
    bench = _load_benchmark()
    monkeypatch.delenv("MULTIVEC_DATA_MIRROR", raising=False)
    monkeypatch.setattr(bench, "data_mirror", lambda _: None)
    with pytest.raises(SystemExit, match="MULTIVEC_DATA_MIRROR"):
        bench.pi_documents(4)
    monkeypatch.setattr(bench, "data_mirror", lambda _: tmp_path)
    with pytest.raises(SystemExit, match="missing"):
        bench.pi_documents(4)
