"""The distilled student (Burian 2023) on the shared training engine: chunked mean pooling, smoke-scale
training with every loss, resumption byte-identical to an uninterrupted run, and clear input errors."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from multivec.distill.student import Student, StudentConfig
from multivec.distill.training import LossConfig, load_trained, train
from multivec.io import write_jsonl
from multivec.training import TrainConfig
from multivec.training.engine import _Interrupted

FIXTURES = Path(__file__).parent / "fixtures"
_spec = importlib.util.spec_from_file_location("distill_embeddings_stub", FIXTURES / "distill_embeddings_stub.py")
_stub = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_stub)
embeddings = _stub.ensure_embeddings_module()

WORDS = ("the cat sat on a mat while dogs ran around the park and birds sang songs of spring in old trees "
         "near quiet rivers where children played games").split()


def tiny_student(**overrides):
    settings = dict(backbone="tiny-random-bert", max_tokens=40, chunk_tokens=12, structural_head=[],
                    contextual_head=[8], teacher_head=[8])
    settings.update(overrides)
    return StudentConfig(**settings)


def make_data(folder: Path, n=12, seed=0):
    rng = np.random.default_rng(seed)
    docs = [{"id": f"d{i}", "text": " ".join(rng.choice(WORDS, size=int(rng.integers(3, 60))))} for i in range(n)]
    write_jsonl(folder / "train.jsonl", docs)
    ids = [d["id"] for d in docs][::-1]  # teacher order differs from the documents': alignment is by id
    embeddings.write_embeddings(folder / "structural", ids, rng.normal(size=(n, 16)).astype(np.float32),
                                {"model": "stub-structural", "truncated_share": 0.0})
    embeddings.write_embeddings(folder / "contextual", ids, rng.normal(size=(n, 10)).astype(np.float32),
                                {"model": "stub-pv", "truncated_share": 0.0})
    return docs


def test_chunked_mean_pooling_equals_the_token_weighted_mean_over_chunks():
    student = Student(tiny_student()).eval()
    tokens = student.tokenize(["the cat sat on a mat while dogs ran around the park and birds sang songs",
                               "quiet rivers"])
    batch = student.collate(tokens)
    # 16 content tokens in pieces of 10 -> two chunks; the short text one chunk
    assert batch.document.tolist() == [0, 0, 1]
    with torch.no_grad():
        pooled = student(batch)
        states = student.backbone(input_ids=batch.input_ids, attention_mask=batch.attention_mask).last_hidden_state
    mask = batch.attention_mask.bool()
    first = torch.cat([states[0][mask[0]], states[1][mask[1]]]).mean(0)
    second = states[2][mask[2]].mean(0)
    assert torch.allclose(pooled[0], first, atol=1e-5)
    assert torch.allclose(pooled[1], second, atol=1e-5)
    assert len(tokens[0]) == 16 and batch.attention_mask[0].sum() == 12 and batch.attention_mask[1].sum() == 8


def test_a_window_past_the_backbone_positions_is_refused():
    with pytest.raises(ValueError, match="chunk_tokens"):
        Student(tiny_student(chunk_tokens=1000))


def run(tmp_path, loss, steps=4, interrupt=None, out="model", **train_overrides):
    cfg = TrainConfig(max_steps=steps, batch_size=4, lr=1e-3, schedule="cosine", warmup_steps=1, eval_every=2,
                      checkpoint_every=2, seed=3, threads=1, device="cpu", **train_overrides)
    return train(tiny_student(), loss, cfg, tmp_path / "train.jsonl", tmp_path / "structural",
                 tmp_path / "contextual", tmp_path / out, _interrupt_after=interrupt)


@pytest.mark.parametrize("loss", [
    LossConfig(structural="max_marginals", contextual="soft_cca", mask_max_tokens=20),
    LossConfig(structural="mse", contextual=None),
    LossConfig(structural=None, contextual="cca"),
    LossConfig(structural="cosine", contextual="dcca", combination="eq_3_1"),
], ids=["mm+softcca", "mse", "cca", "cos+dcca"])
def test_training_with_each_loss_writes_a_loadable_model(tmp_path, loss):
    make_data(tmp_path)
    summary = run(tmp_path, loss)
    assert summary["train_steps"] == 4
    model = load_trained(tmp_path / "model")
    assert model.structural_dim == 16
    # cca compares with the raw teacher; dcca and soft_cca project the teacher too
    assert (model.teacher_head is not None) == (loss.contextual in ("soft_cca", "dcca"))
    rows = (tmp_path / "model" / "metrics.csv").read_text().splitlines()
    losses = [float(r.split(",")[1]) for r in rows[1:]]
    assert len(losses) == 2 and all(np.isfinite(losses))
    config = json.loads((tmp_path / "model" / "config.json").read_text())
    assert config["model"]["loss"]["structural"] == loss.structural
    assert 0 <= config["derived"]["mask_share"] <= 1


def test_resumed_training_is_byte_identical_and_keeps_the_softcca_state(tmp_path):
    make_data(tmp_path)
    loss = LossConfig(structural="cosine", contextual="soft_cca")
    run(tmp_path, loss, out="straight")
    with pytest.raises(_Interrupted):
        run(tmp_path, loss, out="resumed", interrupt=2)
    run(tmp_path, loss, out="resumed")
    assert (tmp_path / "straight" / "model.safetensors").read_bytes() == \
        (tmp_path / "resumed" / "model.safetensors").read_bytes()
    model = load_trained(tmp_path / "resumed")
    assert float(model.contextual_loss.sdl_student.normaliser) == pytest.approx(
        sum(0.95 ** k for k in range(4)), rel=1e-6)  # 4 training steps of batch statistics


def test_a_document_without_teacher_embedding_names_the_folder(tmp_path):
    docs = make_data(tmp_path)
    write_jsonl(tmp_path / "train.jsonl", docs + [{"id": "extra", "text": "a lone extra document"}])
    with pytest.raises(KeyError, match="structural"):
        run(tmp_path, LossConfig())


def test_malformed_documents_name_the_file(tmp_path):
    make_data(tmp_path)
    write_jsonl(tmp_path / "train.jsonl", [{"id": "x", "body": "no text"}])
    with pytest.raises(ValueError, match="train.jsonl"):
        run(tmp_path, LossConfig())
