"""Encoding whole documents: the encoder's position limit, truncation counts, bf16, byte-identical reruns."""

import hashlib
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from transformers import BertConfig, MBartConfig, RobertaConfig

from multivec.baselines.base_encoder import (encode_token_states, length_sorted_batches, load_encoder,
                                            write_baseline_encodings)
from multivec.encodings import encoder_token_limit, read_encodings, resolve_max_tokens, truncation_summary
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.encoding import encode_documents, write_nugget_encodings
from multivec.nugget.modeling import NuggetModel

WORDS = "the european lobster lives in the eastern atlantic ocean near rocks and sand".split()


def long_text(n_words: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(rng.choice(WORDS, size=n_words))


def test_position_limits_per_architecture():
    assert encoder_token_limit(BertConfig(max_position_embeddings=512)) == 512
    assert encoder_token_limit(MBartConfig(max_position_embeddings=1024)) == 1024  # offset 2 is added by the module
    assert encoder_token_limit(RobertaConfig(max_position_embeddings=514, pad_token_id=1)) == 512
    with pytest.raises(ValueError, match="'t5' config has no max_position_embeddings"):
        encoder_token_limit(SimpleNamespace(model_type="t5", relative_attention_num_buckets=32))


def test_max_tokens_defaults_to_the_limit_and_refuses_more():
    assert resolve_max_tokens(None, 512) == 512
    assert resolve_max_tokens(256, 512) == 256
    with pytest.raises(ValueError, match="table2.max_tokens=600 exceeds the encoder's position limit of 512"):
        resolve_max_tokens(600, 512, "table2.max_tokens")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            resolve_max_tokens(bad, 512)


def test_truncation_summary_counts_documents_and_tokens():
    summary = truncation_summary([10, 600, 512, 700], [10, 512, 512, 512], 512, 512)
    assert summary["truncated_documents"] == 2 and summary["truncated_share"] == 0.5
    assert summary["tokens_lost"] == 88 + 188 and summary["tokens"] == 1822
    assert summary["tokens_lost_share"] == pytest.approx(276 / 1822)
    assert summary["longest_document"] == 700
    with pytest.raises(ValueError, match="exceed"):
        truncation_summary([5], [6], 512, 512)


def test_length_sorted_batches_are_stable_and_cover_every_document():
    batches = length_sorted_batches([3, 7, 3, 9, 7], 2)
    assert [b.tolist() for b in batches] == [[3, 1], [4, 0], [2]]
    with pytest.raises(ValueError, match="batch_size"):
        length_sorted_batches([3, 7], 0)


def test_base_encoder_reads_whole_documents_up_to_its_limit(tmp_path):
    tokenizer, model = load_encoder("tiny-random-bert")
    texts = {"short": "a lobster .", "long": long_text(700), "mid": long_text(300, 1)}
    full = {k: len(tokenizer(v)["input_ids"]) for k, v in texts.items()}
    assert full["long"] > 512 > full["mid"] > 256
    write_baseline_encodings("tiny-random-bert", texts, tmp_path / "whole", show_progress=False)
    whole = read_encodings(tmp_path / "whole")
    assert [len(v) for v in whole.vectors] == [full["short"], 512, full["mid"]]
    cut = whole.info["truncation"]
    assert cut["max_tokens"] == cut["encoder_limit"] == 512 and whole.info["max_length"] == 512
    assert cut["truncated_documents"] == 1 and cut["tokens_lost"] == full["long"] - 512
    write_baseline_encodings("tiny-random-bert", texts, tmp_path / "short", max_length=64, show_progress=False)
    short = read_encodings(tmp_path / "short")
    assert [len(v) for v in short.vectors] == [full["short"], 64, 64]
    assert short.info["truncation"]["truncated_documents"] == 2
    with pytest.raises(ValueError, match="exceeds the encoder's position limit of 512"):
        encode_token_states("tiny-random-bert", list(texts.values()), max_length=513, show_progress=False)


def test_base_encodings_are_byte_identical_across_runs_and_batchings(tmp_path):
    texts = {f"d{i}": long_text(20 + 37 * i, i) for i in range(7)}
    digests = set()
    for name, batch_size in (("a", 3), ("b", 3)):
        write_baseline_encodings("tiny-random-bert", texts, tmp_path / name, batch_size=batch_size,
                                 show_progress=False)
        digests.add(hashlib.sha256((tmp_path / name / "vectors.safetensors").read_bytes()).hexdigest())
    assert len(digests) == 1


def test_bf16_autocast_stays_close_to_float32():
    texts = [long_text(40, 0), long_text(90, 1)]
    exact = encode_token_states("tiny-random-bert", texts, show_progress=False)
    bf16 = encode_token_states("tiny-random-bert", texts, show_progress=False, bf16=True)
    for a, b in zip(exact, bf16):
        assert a.shape == b.shape and a.dtype == b.dtype == np.float32
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        assert cos.min() > 0.99 and not np.array_equal(a, b)  # bf16 did run, and changes little


@pytest.fixture(scope="module")
def nugget_model():
    config = NuggetConfig(encoder="tiny-random-bert", ratio=0.25, scorer_layer=2, decoder_heads=2, decoder_ffn=64,
                          target_tokenizer="source", max_source_tokens=32, max_target_tokens=32)
    return NuggetModel.from_backbone(config)


def test_nugget_encoding_reads_past_the_training_length_up_to_the_limit(nugget_model, tmp_path):
    texts = [long_text(100, 0), long_text(700, 1), "a dog ."]
    full = [len(nugget_model.processor.source_tokenizer(t)["input_ids"]) for t in texts]
    documents = encode_documents(nugget_model, texts, batch_size=2)
    assert [d.n_tokens for d in documents] == [full[0], 512, full[2]]
    assert [len(d.vectors) for d in documents] == [int(np.ceil(n * 0.25 - 1e-9)) for n in (full[0], 512, full[2])]
    assert max(documents[1].nugget_indices) < 512
    write_nugget_encodings(tmp_path / "enc", ["a", "b", "c"], texts, nugget_model, batch_size=2)
    cut = read_encodings(tmp_path / "enc").info["truncation"]
    assert cut["truncated_documents"] == 1 and cut["tokens_lost"] == full[1] - 512 and cut["max_tokens"] == 512
    with pytest.raises(ValueError, match="position limit of 512"):
        encode_documents(nugget_model, texts, max_tokens=1000)
    assert encode_documents(nugget_model, []) == []
    torch.manual_seed(0)  # a second run with the same inputs gives the same bytes
    write_nugget_encodings(tmp_path / "again", ["a", "b", "c"], texts, nugget_model, batch_size=2)
    assert (tmp_path / "enc" / "vectors.safetensors").read_bytes() == \
        (tmp_path / "again" / "vectors.safetensors").read_bytes()


def test_shared_frozen_bottom_gives_the_models_own_nuggets(nugget_model, tmp_path):
    """Encoding from the task's stored frozen-bottom states (computed once from the pretrained encoder)
    equals the model's own full encoding; states of other texts, settings or a changed bottom are refused."""
    import copy

    from multivec.nugget.frozen_bottom import read_bottom_states, write_bottom_states

    texts = [long_text(40, 3), long_text(600, 4), "a dog .", long_text(90, 5), long_text(12, 6)]
    ids = [f"d{i}" for i in range(len(texts))]
    torch.manual_seed(1234)  # the states must not depend on the global random state
    info = write_bottom_states(tmp_path / "bottom", ids, texts, nugget_model.config, None, batch_size=2)
    assert info["layer"] == 2 and info["documents"] == 5 and info["truncation"]["truncated_documents"] == 1
    bottom = read_bottom_states(tmp_path / "bottom")

    own = encode_documents(nugget_model, texts, batch_size=2)
    shared = encode_documents(nugget_model, texts, batch_size=3, bottom=bottom)
    for a, b in zip(own, shared):
        assert a.nugget_indices == b.nugget_indices
        np.testing.assert_allclose(a.vectors, b.vectors, atol=1e-5)

    write_nugget_encodings(tmp_path / "enc", ids, texts, nugget_model, batch_size=2, bottom=bottom)
    assert read_encodings(tmp_path / "enc").info["shared_frozen_bottom"] is True
    with pytest.raises(ValueError, match="other document ids"):
        write_nugget_encodings(tmp_path / "enc2", ids[::-1], texts[::-1], nugget_model, bottom=bottom)
    with pytest.raises(ValueError, match="token-id digest differs"):
        encode_documents(nugget_model, texts[:4] + ["another text"], bottom=bottom)
    with pytest.raises(ValueError, match="max_tokens=512 \\(model: 64\\)"):
        encode_documents(nugget_model, texts, max_tokens=64, bottom=bottom)

    changed = copy.deepcopy(nugget_model)
    with torch.no_grad():
        changed.encoder.layers[0].output.dense.weight.mul_(1.5)  # a bottom that is not the pretrained one
    with pytest.raises(ValueError, match="differ from this model's bottom"):
        encode_documents(changed, texts, bottom=bottom)
    unfrozen = copy.deepcopy(nugget_model)
    unfrozen.config.frozen_layers = -1
    with pytest.raises(ValueError, match="cannot use a shared frozen bottom"):
        encode_documents(unfrozen, texts, bottom=bottom)
