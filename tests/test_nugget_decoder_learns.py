"""The NUGGET demo decoder can learn, and every model starts from one shared r = 1 seq2seq model.

Each test fails if a measured defect comes back: the output layer tied to the encoder's frozen word embedding,
the output bias a buffer that never trains, the decoder's copied layers at the pretrained learning rate; and
the shared starting point (``bottleneck: tokens`` + ``initialize_from``) and the unigram reference.
"""

import math

import pytest
import torch

from multivec.nugget.configuration import ConfigError, NuggetConfig
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.training import (TokenizedPairs, TrainConfig, parameter_groups, train, unigram_nats,
                                     unigram_output_bias)

TEXTS = ["the cat sat on the mat.", "a small dog ran near the red house and the big tree."]
WARM = dict(decoder_init="encoder", target_tokenizer="source", decoder_copy_layers=[0, 1])


def config(**changes):
    base = dict(encoder="tiny-random-bert", ratio=0.5, scorer_layer=1, decoder_layers=2, max_source_tokens=32,
                max_target_tokens=32, **WARM)
    return NuggetConfig(**{**base, **changes})


def batch(model):
    processor = model.processor
    ids, mask = processor.collate_sources(processor.tokenize_sources(TEXTS), model.device)
    decoder_input_ids, labels = processor.target_batch(processor.target_tokenizer.encode(TEXTS, 32), model.device)
    return ids, mask, decoder_input_ids, labels


def optimizer_params(model, loaded=frozenset()):
    groups = parameter_groups(model, TrainConfig(lr=1e-4, lr_scratch=1e-3), loaded)
    return {name: group["lr"] for group in groups for name, _ in group["params"]}


@pytest.mark.parametrize("init", ["encoder", "scratch"])
def test_output_layer_and_bias_are_trainable_untied_and_learn(init):
    changes = {} if init == "encoder" else {"decoder_init": "scratch", "decoder_copy_layers": None,
                                            "decoder_heads": 2, "decoder_ffn": 64}
    if init == "scratch":
        from multivec.nugget.target_tokenizer import TargetTokenizer
        model = NuggetModel.from_backbone(config(**changes, target_tokenizer="bpe", target_vocab_size=300),
                                          TargetTokenizer.train_bpe(TEXTS * 20, 300))
    else:
        model = NuggetModel.from_backbone(config(**changes))
    out, bias = model.decoder.output_weight(), model.decoder.final_logits_bias
    encoder_words = model.encoder.bert.embeddings.word_embeddings.weight
    assert out is not encoder_words and out is not model.decoder.input_embedding().weight
    assert isinstance(bias, torch.nn.Parameter) and bias.requires_grad and out.requires_grad
    lrs = optimizer_params(model)
    assert lrs["decoder.output_projection.weight"] == lrs["decoder.final_logits_bias"] == 1e-3
    before_out, before_bias, before_words = out.detach().clone(), bias.detach().clone(), encoder_words.detach().clone()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    model.train()
    for _ in range(3):
        optimizer.zero_grad()
        model(*batch(model)).backward()
        optimizer.step()
    assert not torch.equal(model.decoder.output_weight(), before_out)
    assert not torch.equal(model.decoder.final_logits_bias, before_bias)
    assert torch.equal(encoder_words, before_words)  # the frozen bottom stays frozen


def test_tied_output_is_the_decoders_own_trainable_embedding():
    model = NuggetModel.from_backbone(config(decoder_output="tied"))
    assert model.decoder.output_weight() is model.decoder.input_embedding().weight
    assert model.decoder.output_weight() is not model.encoder.bert.embeddings.word_embeddings.weight
    assert model.decoder.output_weight().requires_grad


def test_tokens_bottleneck_passes_every_token_state():
    model = NuggetModel.from_backbone(config(bottleneck="tokens", ratio=1.0, residual=False, feedback=False)).eval()
    ids, mask, *_ = batch(model)
    nuggets = model.encode(ids, mask)
    assert torch.equal(nuggets.mask, mask.bool()) and nuggets.vectors.shape[:2] == ids.shape
    assert model.scorer is None and model.value_projection is None and model.type_embedding is None
    for bad, key in (({"ratio": 0.5}, "ratio"), ({"residual": True}, "residual")):
        with pytest.raises(ConfigError, match=key):
            config(**{"bottleneck": "tokens", "ratio": 1.0, "residual": False, "feedback": False, **bad})


def test_initialize_from_loads_encoder_and_decoder_and_keeps_new_parts(tmp_path):
    base = NuggetModel.from_backbone(config(bottleneck="tokens", ratio=1.0, residual=False, feedback=False, seed=1))
    with torch.no_grad():
        base.decoder.final_logits_bias.fill_(0.5)
        base.encoder.bert.encoder.layer[1].output.dense.weight.mul_(2)
    base.save_pretrained(tmp_path / "base")
    model = NuggetModel.from_backbone(config(seed=2))
    scorer = {k: v.clone() for k, v in model.scorer.state_dict().items()}
    loaded = model.initialize_from(tmp_path / "base")
    assert torch.equal(model.decoder.final_logits_bias, base.decoder.final_logits_bias)
    assert torch.equal(model.decoder.output_weight(), base.decoder.output_weight())
    assert torch.equal(model.encoder.bert.encoder.layer[1].output.dense.weight,
                       base.encoder.bert.encoder.layer[1].output.dense.weight)
    assert all(torch.equal(v, model.scorer.state_dict()[k]) for k, v in scorer.items())
    assert torch.equal(model.value_projection.weight, torch.eye(model.encoder.hidden_size))
    # What was loaded is pretrained (lr); the new parts learn at lr_scratch.
    lrs = optimizer_params(model, loaded)
    assert lrs["decoder.output_projection.weight"] == 1e-4 and lrs["value_projection.weight"] == 1e-3
    assert not any(name.startswith(("scorer.", "value_projection.", "type_embedding.")) for name in loaded)
    with pytest.raises(ValueError, match="objective='ae' there, 'mt' here"):
        NuggetModel.from_backbone(config(objective="mt")).initialize_from(tmp_path / "base")


def test_unigram_reference_is_the_dev_targets_unigram_entropy_and_bias_init_predicts_it():
    model = NuggetModel.from_backbone(config())
    prefix = model.processor.target_tokenizer.prefix_ids
    dev_pairs = TokenizedPairs([[1], [1]], [prefix + [5, 7], prefix + [5, 5]])
    assert unigram_nats(model, dev_pairs) == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    bias = unigram_output_bias(model, dev_pairs)[0]
    vocab = model.processor.target_tokenizer.vocab_size
    assert float(bias[5]) == pytest.approx(math.log(4 / (4 + vocab)), rel=1e-5)
    assert float(bias[9]) == pytest.approx(math.log(1 / (4 + vocab)), rel=1e-5)


def test_training_records_step_zero_and_the_unigram_reference(tmp_path):
    import json

    rows = [{"id": str(i), "source": t, "target": t} for i, t in enumerate(TEXTS * 4)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = train(config(output_bias_init="unigram"), TrainConfig(max_steps=2, batch_size=4, eval_every=2, checkpoint_every=2,
                                          eval_at_start=True), path, path, tmp_path / "model")
    metrics = (tmp_path / "model" / "metrics.csv").read_text().splitlines()
    assert metrics[1].startswith("0,") and len(metrics) == 3
    derived = json.loads((tmp_path / "model" / "config.json").read_text())["derived"]
    assert derived["unigram_nats"] > 0 and summary["best_dev_loss"] is not None
