"""Exports of every kind of trained model folder (multivec.interop) load with sentence-transformers' own loaders
and give the vectors this project computes (max abs difference <= 1e-5), on tiny random models built here;
folders that miss a file or use an older layout fail naming the folder and the file."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TOLERANCE = 1e-5
TEXTS = ["the cat sat on the mat , and the dog ran . " * k for k in (1, 3, 9, 60)] + ["", "short", "a b c d e f g"]
MEASURED: dict[str, float] = {}


def _perturb(module: torch.nn.Module, seed: int = 3, scale: float = 0.05) -> None:
    """Move every weight off its initialisation, as training would (exports must carry the trained weights)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.add_(scale * torch.randn(parameter.shape, generator=generator))


def _max_diff(name: str, got, expected) -> float:
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    diff = float(np.abs(got - expected).max()) if got.size else 0.0
    MEASURED[name] = max(MEASURED.get(name, 0.0), diff)
    print(f"\n{name}: max abs difference {diff:.3g}")
    assert diff <= TOLERANCE, (name, diff)
    return diff


# -- distilled students and the structural teacher -------------------------------------------------------
def _student_folder(folder, **student):
    from safetensors.torch import save_file

    from multivec.distill.configuration import LossConfig, StudentConfig
    from multivec.distill.training import DistillModel
    from multivec.io import write_json

    config = StudentConfig(backbone="tiny-random-bert", structural_head=[], contextual_head=[8], teacher_head=[8],
                           structural_head_init="random", structural_head_trainable=True, **student)
    loss = LossConfig()
    model = DistillModel(config, loss, 16, 10)
    _perturb(model)
    folder.mkdir(parents=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(folder / "model.safetensors"))
    write_json(folder / "config.json", {"model": {"student": config.to_dict(), "loss": loss.to_dict()},
                                        "derived": {"structural_dim": 16, "contextual_dim": 10}})
    return folder


@pytest.mark.parametrize("name,settings,remote", [("chunked", dict(max_tokens=40, chunk_tokens=12), True),
                                                  ("one_window", dict(max_tokens=30, chunk_tokens=None), False)])
def test_a_distilled_student_loads_as_a_sentence_transformer_with_the_projects_embeddings(tmp_path, name, settings,
                                                                                           remote):
    from sentence_transformers import SentenceTransformer

    from multivec.distill.student import embed_texts
    from multivec.distill.training import load_trained
    from multivec.interop import export_model

    src = _student_folder(tmp_path / "student", **settings)
    expected = embed_texts(load_trained(src).student, TEXTS, batch_size=3)
    info = export_model(src, tmp_path / "st", metrics=None)
    assert info["kind"] == "student" and info["trust_remote_code"] is remote
    if remote:
        assert info["modules"] == ["ChunkedTransformer", "ChunkMeanPooling"]
        with pytest.raises(ValueError, match="trust_remote_code=True"):
            SentenceTransformer(str(tmp_path / "st"), device="cpu")
        model = SentenceTransformer(str(tmp_path / "st"), device="cpu", trust_remote_code=True)
    else:
        assert info["modules"] == ["Transformer", "Pooling"]  # the library's own modules: no remote code
        model = SentenceTransformer(str(tmp_path / "st"), device="cpu")
        assert model.max_seq_length == settings["max_tokens"] + 2  # the trained length, specials included
    assert not any(type(m).__name__ == "Normalize" for m in model)  # the project does not normalise students
    _max_diff(f"student ({name})", model.encode(TEXTS, batch_size=2), expected)
    card = (tmp_path / "st" / "README.md").read_text()
    assert "library_name: sentence-transformers" in card and "demo model" in card
    assert "### Training Data" in card and '"max_tokens": ' in card and "cannot express" in card


def test_the_structural_teacher_exports_at_the_projects_length_with_its_normalisation(tmp_path):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling

    from multivec.baselines.base_encoder import load_encoder
    from multivec.distill.teachers.sbert import embed_documents, load_teacher
    from multivec.interop import export_model

    tokenizer, backbone = load_encoder("tiny-random-bert")
    _perturb(backbone)
    backbone.save_pretrained(tmp_path / "hf")
    tokenizer.save_pretrained(tmp_path / "hf")
    transformer = Transformer(str(tmp_path / "hf"), max_seq_length=64)
    SentenceTransformer(modules=[transformer, Pooling(32, "mean"), Normalize()], device="cpu").save(
        str(tmp_path / "teacher"))
    expected = embed_documents(load_teacher(str(tmp_path / "teacher"), 12), TEXTS, batch_size=3,
                               show_progress=False).vectors
    metrics = tmp_path / "metrics.json"
    metrics.write_text(json.dumps({"lee": {"pearson": 0.5}, "n": 3}))
    info = export_model(tmp_path / "teacher", tmp_path / "st", max_seq_length=12, metrics=metrics)
    assert info["kind"] == "teacher" and info["normalize"] and info["max_seq_length"] == 12
    model = SentenceTransformer(str(tmp_path / "st"), device="cpu")
    assert model.max_seq_length == 12
    _max_diff("teacher (SBERT, normalised)", model.encode(TEXTS, batch_size=2), expected)
    card = (tmp_path / "st" / "README.md").read_text()
    assert "| lee.pearson | 0.5000 |" in card


# -- NUGGET and TSDAE ---------------------------------------------------------------------------------
def _nugget_folder(folder, **settings):
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.modeling import NuggetModel

    base = dict(encoder="tiny-random-bert", scorer_layer=2, decoder_heads=2, decoder_ffn=64, target_tokenizer="source",
                max_source_tokens=32, max_target_tokens=32)
    config = NuggetConfig(**{**base, **settings})
    model = NuggetModel.from_backbone(config)
    _perturb(model)
    model.save_pretrained(folder)
    return folder


NUGGETS = {"learned": dict(ratio=0.25), "learned_l0": dict(ratio=0.1, scorer_layer=0),
           "chunking": dict(ratio=0.3, selector="chunking", residual=False),
           "random": dict(ratio=0.2, selector="random", residual=False, feedback=False),
           "tokens": dict(bottleneck="tokens", ratio=1.0, residual=False, feedback=False)}


@pytest.mark.parametrize("name", list(NUGGETS))
def test_nugget_loads_as_a_multi_vector_encoder_keeping_k_nuggets_a_document(tmp_path, name):
    from sentence_transformers import MultiVectorEncoder

    from multivec.interop import export_model
    from multivec.nugget.encoding import encode_documents
    from multivec.nugget.modeling import NuggetModel

    settings = NUGGETS[name]
    src = _nugget_folder(tmp_path / "nugget", **settings)
    expected = encode_documents(NuggetModel.from_pretrained(src), TEXTS, batch_size=3)
    info = export_model(src, tmp_path / "st")
    assert info["kind"] == "nugget"
    model = MultiVectorEncoder(str(tmp_path / "st"), device="cpu", trust_remote_code=name != "tokens")
    got = model.encode_document(TEXTS, batch_size=2, convert_to_numpy=True)
    for text, vectors, document in zip(TEXTS, got, expected):
        if name != "tokens":
            n = document.n_tokens
            assert len(vectors) == max(1, int(np.ceil(n * settings["ratio"] - 1e-9)))  # k = ceil(n r)
        _max_diff(f"nugget ({name})", vectors, document.vectors)
    # The query side is the same encoding (the project encodes a query document as a candidate).
    queries = model.encode_query(TEXTS[:3], convert_to_numpy=True)
    for a, b in zip(queries, got[:3]):
        assert np.abs(a - b).max() <= TOLERANCE
    if name == "learned":
        raw = model.encode_document(TEXTS[:2], output_value=None)
        for features, document in zip(raw, expected[:2]):
            k = int(features["attention_mask"].sum())
            assert features["nugget_indices"][:k].tolist() == document.nugget_indices
        _check_meanmaxsim_is_the_projects_score(model)


def _check_meanmaxsim_is_the_projects_score(model):
    """encode(..., normalize_embeddings=True) + similarity (meanmaxsim) = the project's MaxSim-mean (eq. 10)."""
    from multivec.metrics.maxsim import maxsim_mean, normalize, pad_vector_sets

    queries = model.encode_query(TEXTS[:2], normalize_embeddings=True)
    documents = model.encode_document(TEXTS[2:5], normalize_embeddings=True)
    library = model.similarity(queries, documents).numpy()
    q, qm = pad_vector_sets([v.numpy() for v in queries])
    d, dm = pad_vector_sets([v.numpy() for v in documents])
    project = np.stack([maxsim_mean(normalize(q[i:i + 1]).unsqueeze(1), qm[i:i + 1].unsqueeze(1),
                                    normalize(d).unsqueeze(0), dm.unsqueeze(0), normalized=True).numpy()[0]
                        for i in range(len(queries))])
    _max_diff("nugget MaxSim-mean score", library, project)


def test_tsdae_loads_as_a_single_vector_sentence_transformer(tmp_path):
    from sentence_transformers import SentenceTransformer

    from multivec.interop import export_model
    from multivec.nugget.encoding import encode_documents
    from multivec.nugget.modeling import NuggetModel

    src = _nugget_folder(tmp_path / "tsdae", bottleneck="mean", ratio=1.0, residual=False, feedback=False,
                         frozen_layers=-1, noise_deletion=0.1)
    expected = np.stack([d.vectors[0] for d in encode_documents(NuggetModel.from_pretrained(src), TEXTS, 3)])
    info = export_model(src, tmp_path / "st")
    assert info["kind"] == "tsdae" and info["modules"] == ["Transformer", "Pooling"]
    model = SentenceTransformer(str(tmp_path / "st"), device="cpu")  # no remote code
    assert model.max_seq_length == 512
    _max_diff("tsdae", model.encode(TEXTS, batch_size=2), expected)


# -- the sub-sentence encoder --------------------------------------------------------------------------
def test_the_subencoder_gives_one_vector_per_proposition(tmp_path):
    from sentence_transformers import SentenceTransformer

    from multivec.interop import encode_propositions, export_model
    from multivec.subencoder.configuration import SubEncoderConfig
    from multivec.subencoder.model import SubEncoder

    model = SubEncoder.from_backbone(SubEncoderConfig(encoder="tiny-random-bert", output_dim=8, max_tokens=16))
    _perturb(model)
    model.save_pretrained(tmp_path / "sub")
    model = SubEncoder.load(tmp_path / "sub")
    sentences = ["The cat sat on the mat while the dog slept.", "Paris is big.",
                 "A very long sentence that goes on and on past the limit of sixteen tokens for sure."]
    spans = [[[[0, 23]], [[24, 43]], [[4, 7], [30, 42]]], [[[0, 13]]], [[[0, 20]], [[21, 40]]]]
    encoded, masks = model.span_masks(sentences, spans)
    expected = model.encode(sentences, masks, input_ids=encoded["input_ids"]).numpy()
    info = export_model(tmp_path / "sub", tmp_path / "st")
    assert info["kind"] == "subencoder" and info["modules"] == ["Transformer", "PropositionPooling"]
    exported = SentenceTransformer(str(tmp_path / "st"), device="cpu", trust_remote_code=True)
    got = encode_propositions(exported, sentences, spans, batch_size=2)
    assert [len(v) for v in got] == [3, 1, 2]
    _max_diff("subencoder (per proposition)", np.concatenate(got), expected)
    whole_spans = [[[[0, len(s)]]] for s in sentences]
    encoded, masks = model.span_masks(sentences, whole_spans)
    _max_diff("subencoder (encode: whole sentence)", exported.encode(sentences), model.encode(sentences, masks))
    with pytest.raises(ValueError, match="proposition 0: the spans .* select no token"):
        encode_propositions(exported, ["Paris is big."], [[[[5, 5]]]])


# -- folders that miss a file, or that an older version wrote -------------------------------------------
def test_a_folder_missing_a_file_or_in_an_older_layout_names_the_folder_and_the_file(tmp_path):
    from multivec.interop import ExportError, detect_kind, export_model

    src = _student_folder(tmp_path / "student", max_tokens=20, chunk_tokens=None)
    assert detect_kind(src) == "student"
    (src / "model.safetensors").rename(tmp_path / "weights")
    with pytest.raises(ExportError, match=f"{src / 'model.safetensors'}: missing: a student model folder"):
        export_model(src, tmp_path / "out1")
    (tmp_path / "weights").rename(src / "model.safetensors")
    config = json.loads((src / "config.json").read_text())
    del config["derived"]  # as an older version wrote it
    (src / "config.json").write_text(json.dumps(config))
    with pytest.raises(ExportError, match=r"config.json: no derived.structural_dim, derived.contextual_dim: "
                                          r"not a student model folder of this version"):
        export_model(src, tmp_path / "out2")

    nugget = _nugget_folder(tmp_path / "nugget", ratio=0.25)
    shutil.rmtree(nugget / "source_tokenizer")
    with pytest.raises(ExportError, match=f"{nugget / 'source_tokenizer'}: missing: a nugget model folder "
                                          f"\\({nugget}\\) needs source_tokenizer/"):
        export_model(nugget, tmp_path / "out3")
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "config.json").write_text(json.dumps({"model": {"what": 1}}))
    with pytest.raises(ExportError, match="cannot tell the model kind"):
        export_model(tmp_path / "odd", tmp_path / "out4")
    with pytest.raises(ExportError, match="exists and is not empty"):
        export_model(src, tmp_path / "odd")


def test_an_exported_folder_missing_a_module_file_fails_to_load_naming_it(tmp_path):
    from sentence_transformers import MultiVectorEncoder

    from multivec.interop import export_model

    export_model(_nugget_folder(tmp_path / "nugget", ratio=0.25), tmp_path / "st")
    weights = tmp_path / "st" / "1_NuggetSelector" / "model.safetensors"
    weights.unlink()
    with pytest.raises(FileNotFoundError, match=f"{weights}: missing; the exported folder"):
        MultiVectorEncoder(str(tmp_path / "st"), device="cpu", trust_remote_code=True)


def test_the_cli_exports_with_the_detected_kind(tmp_path, capsys):
    from multivec.__main__ import main

    src = _student_folder(tmp_path / "student", max_tokens=20, chunk_tokens=None)
    assert main(["export-model", str(src), str(tmp_path / "st")]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "student"
    assert (tmp_path / "st" / "modules.json").is_file()
    assert main(["export-model", str(tmp_path / "missing"), str(tmp_path / "st2")]) == 1
    assert "no such model folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["export-model", "--help"])
    out = capsys.readouterr().out
    assert "--kind {student,teacher,tsdae,nugget,subencoder}" in out and "trust_remote_code" in out
