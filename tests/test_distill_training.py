"""The distilled student (Burian 2023) on the shared training engine: chunked mean pooling, smoke-scale
training with every loss, resumption byte-identical to an uninterrupted run, and clear input errors."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from multivec.distill import embeddings
from multivec.distill.configuration import LossConfig, StudentConfig
from multivec.distill.student import Student
from multivec.distill.training import (DistillModel, DistillTask, TeacherMismatchError, aligned_embeddings,
                                       embed_documents, load_trained, train)
from multivec.io import write_jsonl
from multivec.training import TrainConfig
from multivec.training.engine import _Interrupted


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


def test_a_teacher_whose_ids_do_not_match_the_documents_names_both_files(tmp_path):
    docs = make_data(tmp_path)
    write_jsonl(tmp_path / "train.jsonl", docs + [{"id": "extra", "text": "a lone extra document"}])
    with pytest.raises(TeacherMismatchError, match=r"structural does not match .*train\.jsonl.*'extra'"):
        run(tmp_path, LossConfig())
    write_jsonl(tmp_path / "train.jsonl", docs[1:])  # the teachers hold an id the documents lack
    with pytest.raises(TeacherMismatchError, match=r"train\.jsonl: 1 ids that are not among them \(e\.g\. 'd0'\)"):
        run(tmp_path, LossConfig())


def test_malformed_documents_name_the_file(tmp_path):
    make_data(tmp_path)
    write_jsonl(tmp_path / "train.jsonl", [{"id": "x", "body": "no text"}])
    with pytest.raises(ValueError, match="train.jsonl"):
        run(tmp_path, LossConfig())


def test_every_student_row_scores_the_pooled_state_not_a_head(tmp_path):
    """A trained student is scored by its own embedding (the mean of its final hidden states, thesis
    §3.3), as the untrained one is; the structural head (here 16-d) serves the loss only."""
    docs = make_data(tmp_path)
    run(tmp_path, LossConfig(structural="cosine", contextual="soft_cca"))
    meta = embed_documents(tmp_path / "train.jsonl", tmp_path / "embedded", model_dir=tmp_path / "model")
    model = load_trained(tmp_path / "model")
    assert meta["dimension"] == model.student.hidden_size != model.structural_dim
    from multivec.distill.student import embed_texts

    expected = embed_texts(model.student, [d["text"] for d in docs], batch_size=3)
    ids, vectors, _ = embeddings.read_embeddings(tmp_path / "embedded")
    assert np.allclose(np.asarray(vectors)[[ids.index(d["id"]) for d in docs]], expected, atol=1e-5)
    assert meta["lengths"]["documents"] == len(docs) and "longer_than_structural_teacher" in meta["lengths"]


def test_a_frozen_backbone_scores_exactly_the_untrained_student(tmp_path):
    """The frozen-backbone sanity row: heads trained with the backbone frozen leave the scored embedding untouched."""
    make_data(tmp_path)
    cfg = TrainConfig(max_steps=3, batch_size=4, lr=1e-2, warmup_steps=1, eval_every=3, checkpoint_every=3,
                      seed=3, threads=1, device="cpu")
    student = tiny_student(freeze_backbone=True)
    train(student, LossConfig(structural="cosine", contextual="soft_cca"), cfg, tmp_path / "train.jsonl",
          tmp_path / "structural", tmp_path / "contextual", tmp_path / "frozen")
    embed_documents(tmp_path / "train.jsonl", tmp_path / "frozen_eval", model_dir=tmp_path / "frozen")
    embed_documents(tmp_path / "train.jsonl", tmp_path / "untrained_eval", student_config=tiny_student())
    frozen, untrained = (embeddings.read_embeddings(tmp_path / f)[1] for f in ("frozen_eval", "untrained_eval"))
    assert np.array_equal(np.asarray(frozen), np.asarray(untrained))
    trained = load_trained(tmp_path / "frozen")
    start, _ = _task(tmp_path / "start", LossConfig(structural="cosine", contextual="soft_cca"), student=student)
    assert not torch.equal(trained.contextual_head[0].weight, start.model.contextual_head[0].weight)  # heads moved
    # the demo's structural head is fixed at its Procrustes start
    assert torch.equal(trained.structural_head[0].weight, start.model.structural_head[0].weight)
    for (name, weight), (_, initial) in zip(trained.student.state_dict().items(),
                                            start.model.student.state_dict().items()):
        assert torch.equal(weight, initial), name  # the backbone did not


def _task(tmp_path, loss, student=None, **train_overrides):
    tmp_path.mkdir(exist_ok=True)
    docs = make_data(tmp_path)
    cfg = TrainConfig(**{**dict(max_steps=4, batch_size=4, lr=1e-4, lr_scratch=1e-2, seed=3, threads=1,
                                device="cpu", warmup_steps=1), **train_overrides})
    ids = [d["id"] for d in docs]
    task = DistillTask(student or tiny_student(), loss, cfg, docs, aligned_embeddings(tmp_path / "structural", ids),
                       aligned_embeddings(tmp_path / "contextual", ids))
    task.setup(tmp_path, None, resuming=False)
    return task, cfg


def test_backbone_and_heads_train_with_their_own_learning_rates(tmp_path):
    """The optimizer actually used gives lr to the pretrained backbone and lr_scratch to the heads."""
    from multivec.training.engine import make_optimizer

    task, cfg = _task(tmp_path, LossConfig(structural="cosine", contextual="soft_cca"))
    optimizer = make_optimizer(task.parameter_groups(cfg), cfg)
    by_id = {id(p): group["lr"] for group in optimizer.param_groups for p in group["params"]}
    backbone = [p for p in task.model.student.parameters()]
    # every head that trains (the demo's structural head is fixed: test_a_fixed_structural_head_...)
    heads = [p for name, module in task.model.heads() for p in module.parameters() if p.requires_grad]
    assert backbone and heads and len(by_id) == len(backbone) + len(heads)
    assert {by_id[id(p)] for p in backbone} == {1e-4} and {by_id[id(p)] for p in heads} == {1e-2}
    task, cfg = _task(tmp_path, LossConfig(structural="cosine", contextual=None), lr_scratch=None)
    assert {group["lr"] for group in make_optimizer(task.parameter_groups(cfg), cfg).param_groups} == {1e-4}


def test_a_fixed_structural_head_keeps_its_least_squares_start_while_the_backbone_learns(tmp_path):
    """distill.student.structural_head_trainable: false leaves the head at its lstsq start (not in the
    optimizer, no gradient), so one step of L_S moves only the backbone; the default trains both."""
    from multivec.training.engine import make_optimizer

    loss = LossConfig(structural="cosine", contextual=None)
    for trainable in (False, True):
        task, cfg = _task(tmp_path / str(trainable), loss,
                          student=tiny_student(structural_head_init="lstsq", structural_head_trainable=trainable))
        head = {n: p.detach().clone() for n, p in task.model.structural_head.named_parameters()}
        backbone = {n: p.detach().clone() for n, p in task.model.student.named_parameters()}
        optimizer = make_optimizer(task.parameter_groups(cfg), cfg)
        in_optimizer = {id(p) for group in optimizer.param_groups for p in group["params"]}
        assert all((id(p) in in_optimizer) == trainable for p in task.model.structural_head.parameters())
        batch = task.make_batch(task.epoch_batches(0)[0], None)
        task.model.train()
        value, _, _ = task.loss(task.model, batch)
        value.backward()
        optimizer.step()
        head_moved = any(not torch.equal(p, head[n]) for n, p in task.model.structural_head.named_parameters())
        assert head_moved == trainable
        assert any(not torch.equal(p, backbone[n]) for n, p in task.model.student.named_parameters())
    start = task.derived["structural_head_start"]
    assert start["init"] == "lstsq" and start["r2"] > 0.5  # 12 documents, 32 inputs: the fit is near exact


def test_a_fixed_structural_head_must_start_at_a_fitted_map(tmp_path):
    """A fixed head that no fitted map starts (init random, or hidden layers the maps cannot fill) would make
    L_S imitate a random projection of the teacher: the run stops naming the settings. The demo default (one
    Linear at the Procrustes map, fixed) and a trainable random head are accepted."""
    loss = LossConfig(structural="cosine", contextual=None)
    for settings in (dict(structural_head_init="random"), dict(structural_head=[8])):
        with pytest.raises(ValueError, match="structural_head_trainable is false"):
            DistillModel(tiny_student(structural_head_trainable=False, **settings), loss, 16, 8)
    assert StudentConfig().structural_head_init == "procrustes" and not StudentConfig().structural_head_trainable
    DistillModel(tiny_student(), loss, 16, 8)
    DistillModel(tiny_student(structural_head_init="random", structural_head_trainable=True), loss, 16, 8)
    DistillModel(tiny_student(structural_head_init="random"), LossConfig(structural=None, contextual="soft_cca"),
                 16, 8)  # no L_S: the head is never used
    # a trainable head with hidden layers keeps its own start (it used to reach the fit and fail on its None)
    task, _ = _task(tmp_path, loss, student=tiny_student(structural_head=[8], structural_head_trainable=True))
    assert not task.model.structural_head_fitted and task.derived["structural_head_start"] is None


def test_the_orthogonal_start_recovers_a_rotation_and_keeps_the_students_geometry(tmp_path):
    """structural_head_init: procrustes = the orthogonal Procrustes map between the unit rows: orthonormal rows,
    the exact map when the teacher is a rotation of the student (scaled per row), and no exact fit otherwise
    (the least-squares start fits documents fewer than its inputs almost exactly: R^2 0.9997 at demo)."""
    from multivec.distill.projection import least_squares_map, orthogonal_map

    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 6))
    q = np.linalg.qr(rng.normal(size=(10, 6)))[0].T  # [6, 10], orthonormal rows
    w, bias = orthogonal_map(x, 3.0 * (x @ q) * rng.uniform(0.5, 2, size=(40, 1)))
    assert np.allclose(w @ w.T, np.eye(6)) and np.allclose(w, q) and not bias.any()
    noise = rng.normal(size=(5, 10))  # fewer documents than inputs: least squares fits noise exactly
    fitted = x[:5] @ least_squares_map(x[:5], noise)[0] + least_squares_map(x[:5], noise)[1]
    assert np.allclose(fitted, noise, atol=0.05)
    rotated = x[:5] @ orthogonal_map(x[:5], noise)[0]
    assert not np.allclose(rotated / np.linalg.norm(rotated, axis=1, keepdims=True),
                           noise / np.linalg.norm(noise, axis=1, keepdims=True), atol=0.05)
    task, _ = _task(tmp_path, LossConfig(structural="cosine", contextual=None),
                    student=tiny_student(structural_head_init="procrustes"))
    start = task.derived["structural_head_start"]
    head = task.model.structural_head[0].weight.detach().double().numpy()  # [16, 32]: 32 -> 16, orthonormal rows
    assert start["init"] == "procrustes" and np.allclose(head @ head.T, np.eye(16), atol=1e-5)
    assert "r2" not in start and 0 < start["mean_cosine"] <= 1  # it keeps norms: an R^2 would say nothing


def test_an_ls_only_run_never_batches_a_document_outside_the_length_mask(tmp_path):
    """28 of 60 demo steps had no document inside the mask (L_S = 0) while AdamW still moved the
    weights. Documents without a loss signal are not batched in an L_S-only run (re-drawn batches)."""
    task, _ = _task(tmp_path, LossConfig(structural="cosine", contextual=None, mask_max_tokens=30))
    inside = {i for i, m in enumerate(task.mask) if m > 0}
    assert 2 <= len(inside) < len(task.documents)
    for epoch in range(3):
        batches = task.epoch_batches(epoch)
        assert batches and all(set(b) <= inside for b in batches)
    assert task.derived["unbatched_without_signal"] == len(task.documents) - len(inside)
    with pytest.raises(RuntimeError, match="without a loss signal"):  # the guard, should a batch ever come
        outside = [i for i in range(len(task.documents)) if i not in inside][:2]
        task.loss(task.model, task.make_batch(outside, None))
    both, _ = _task(tmp_path, LossConfig(structural="cosine", contextual="soft_cca", mask_max_tokens=30))
    assert sorted(i for b in both.epoch_batches(0) for i in b) == list(range(len(both.documents)))  # L_C: all


def test_metrics_show_every_loss_term_and_the_structural_head_starts_at_its_fitted_map(tmp_path):
    make_data(tmp_path)
    run(tmp_path, LossConfig(structural="cosine", contextual="soft_cca"), steps=4)
    import csv

    with open(tmp_path / "model" / "metrics.csv") as handle:
        rows = list(csv.DictReader(handle))
    for term in ("structural", "contextual", "soft_cca_mse", "sdl_student", "sdl_teacher", "mask_share"):
        assert all(row[f"train_{term}"] != "" for row in rows), term
    start = json.loads((tmp_path / "model" / "config.json").read_text())["derived"]["structural_head_start"]
    assert start["init"] == "procrustes" and 0 < start["mean_cosine"] <= 1 and start["documents"] == 12


def test_training_pieces_that_share_text_with_an_evaluation_document_are_dropped():
    """Paper scale trains on WikiText-103, from which RR's passages are also cut: such pieces must go."""
    from multivec.distill.data.documents import drop_evaluation_overlap

    passage = "the river flows past the old mill and under the stone bridge before it reaches the sea at dawn"
    train = [{"id": "a", "text": "an unrelated article about trains and timetables in the north " * 3},
             {"id": "b", "text": "intro words here. " + passage + " and then more words follow"}]
    kept, dropped = drop_evaluation_overlap(train, {"rr": [{"id": "q", "text": passage}]})
    assert [row["id"] for row in kept] == ["a"] and dropped == ["b"]


def test_gradient_checkpointing_gives_the_same_embedding_and_gradients():
    """The demo student recomputes its chunks' activations in the backward pass (config distill.student.
    gradient_checkpointing, for memory: 2,048-token documents). Same seed, same dropout masks (checkpointing
    replays the RNG state): the same pooled embedding and the same gradient on every backbone weight."""
    documents = [list(range(5, 5 + n)) for n in (30, 7, 40)]
    results = []
    for checkpointing in (False, True):
        student = Student(tiny_student(gradient_checkpointing=checkpointing, seed=3))
        assert student.backbone.is_gradient_checkpointing == checkpointing
        torch.manual_seed(0)
        pooled = student(student.collate(documents))
        pooled.pow(2).sum().backward()
        results.append((pooled.detach(), {n: p.grad.clone() for n, p in student.backbone.named_parameters()
                                          if p.grad is not None}))
    (plain, plain_grads), (checked, checked_grads) = results
    torch.testing.assert_close(checked, plain)
    assert plain_grads.keys() == checked_grads.keys() and len(plain_grads) > 10
    for name in plain_grads:
        torch.testing.assert_close(checked_grads[name], plain_grads[name], msg=name)


def test_canonical_correlation_maps_give_centred_unit_variance_uncorrelated_variates():
    """The CCA start of the SoftCCA heads (Burian 2023, Definition 2): the i-th variates of the two views are
    centred, of unit variance and correlated by rho_i (descending), every other pair uncorrelated; so the
    SoftCCA MSE of the i-th dimension starts at 2 - 2 rho_i."""
    from multivec.distill.projection import canonical_correlation_maps

    rng = np.random.default_rng(0)
    shared = rng.normal(size=(400, 3))
    x = np.hstack([shared, rng.normal(size=(400, 27))]) @ rng.normal(size=(30, 30))
    y = np.hstack([shared + 0.5 * rng.normal(size=(400, 3)), rng.normal(size=(400, 9))]) @ rng.normal(size=(12, 12))
    a, a0, b, b0, rho = canonical_correlation_maps(x, y, 4, ridge=0.0)
    u, v = x @ a + a0, y @ b + b0
    np.testing.assert_allclose(u.mean(0), 0, atol=1e-9)
    np.testing.assert_allclose(u.var(0, ddof=1), 1, atol=1e-9)
    np.testing.assert_allclose(v.var(0, ddof=1), 1, atol=1e-9)
    np.testing.assert_allclose(np.corrcoef(u.T, v.T)[:4, 4:], np.diag(rho), atol=1e-9)
    assert list(rho) == sorted(rho, reverse=True) and rho[2] > 0.8 > 0.4 > rho[3]  # three shared factors
    np.testing.assert_allclose(((u - v) ** 2).sum(0) / 399, 2 - 2 * rho, atol=1e-9)
    with pytest.raises(ValueError, match="k=13"):
        canonical_correlation_maps(x, y, 13)


def test_soft_cca_heads_start_at_the_cca_of_the_untrained_student_and_the_teacher(tmp_path):
    """contextual_head_init: cca writes each side's Linear so that the heads' outputs on the training
    documents are the canonical variates (centred, unit variance); deeper heads are refused, naming the widths."""
    task, _ = _task(tmp_path, LossConfig(structural=None, contextual="soft_cca"),
                    student=tiny_student(contextual_head_init="cca", contextual_head=[4], teacher_head=[4]))
    start = task.derived["contextual_head_start"]
    assert start["init"] == "cca" and start["k"] == 4 and 0 < start["last_correlation"] <= start["first_correlation"]
    from multivec.distill.student import embed_texts

    texts = [d["text"] for d in task.documents]
    with torch.no_grad():
        student_side = task.model.contextual_head(torch.from_numpy(
            embed_texts(task.model.student, texts, 4))).numpy()
        teacher_side = task.model.teacher_head(torch.from_numpy(task.contextual)).numpy()
    np.testing.assert_allclose(student_side.mean(0), 0, atol=1e-4)
    np.testing.assert_allclose(teacher_side.mean(0), 0, atol=1e-4)
    assert np.all(teacher_side.var(0, ddof=1) < 1.0) and np.all(teacher_side.var(0, ddof=1) > 0.5)  # ridge < 1
    random_task, _ = _task(tmp_path / "random", LossConfig(structural=None, contextual="soft_cca"))
    assert random_task.derived["contextual_head_start"] is None  # the default keeps PyTorch's start
    with pytest.raises(ValueError, match=r"contextual_head_init=cca needs one Linear per side.*\[6, 4\]"):
        _task(tmp_path / "deep", LossConfig(structural=None, contextual="soft_cca"),
              student=tiny_student(contextual_head_init="cca", contextual_head=[6, 4], teacher_head=[4]))
    with pytest.raises(ValueError, match="contextual_head_init='pca'"):
        tiny_student(contextual_head_init="pca")


