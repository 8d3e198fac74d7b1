"""The NUGGET model on tiny random encoders: selection, gradients, feedback, residual bias, decoding, save/load."""

import math

import pytest
import torch

from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.generation import beam_search, greedy_decode
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.target_tokenizer import TargetTokenizer

TEXTS = ["The cat sat on the mat. It was happy, very happy indeed.", "Dogs bark loudly at night!",
         "A short one", "One more sentence, with a comma. And a second one; then a third!"]


@pytest.fixture(scope="module")
def bpe():
    return TargetTokenizer.train_bpe(TEXTS * 3, 300)


def make(bpe, architecture="bert_decoder", **changes):
    mbart = architecture == "mbart"
    cfg = NuggetConfig(encoder="tiny-random-mbart" if mbart else "tiny-random-bert", architecture=architecture,
                       ratio=0.3, scorer_layer=2, decoder_heads=2, decoder_ffn=64, target_vocab_size=300,
                       target_tokenizer="source" if mbart else "bpe", **changes)
    return NuggetModel.from_backbone(cfg, None if mbart else bpe)


def batch(model, texts=TEXTS):
    ids, mask = model.collate_sources(model.tokenize_sources(texts))
    decoder_input_ids, labels = model.target_batch(model.target_tokenizer.encode(texts, 32))
    return ids, mask, decoder_input_ids, labels


ARCHITECTURES = ["bert_decoder", "mbart"]


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_selection_counts_real_tokens(bpe, architecture):
    model = make(bpe, architecture).eval()
    ids, mask, _, _ = batch(model)
    nuggets = model.encode(ids, mask)
    for row in range(len(TEXTS)):
        n = int(mask[row].sum())
        k = math.ceil(n * 0.3 - 1e-9)
        chosen = nuggets.indices[row, : int(nuggets.mask[row].sum())].tolist()
        assert len(chosen) == k and chosen == sorted(chosen) and max(chosen) < n
    assert nuggets.vectors.shape == (len(TEXTS), int(nuggets.mask.sum(1).max()), model.encoder.hidden_size)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_untrained_nuggets_are_the_pretrained_encoders_states(bpe, architecture):
    """Adapter check: with W^V = I and no feedback, nuggets are rows of the library's own encoder output."""
    model = make(bpe, architecture, feedback=False).eval()
    ids, mask, _, _ = batch(model)
    with torch.no_grad():
        nuggets = model.encode(ids, mask)
        hf_encoder = model.encoder.bert if architecture == "bert_decoder" else model.encoder.encoder
        reference = hf_encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    expected = reference.gather(1, nuggets.indices.unsqueeze(-1).expand(-1, -1, reference.shape[-1]))
    real = nuggets.mask
    torch.testing.assert_close(nuggets.vectors[real], expected[real], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
@pytest.mark.parametrize("residual", [True, False])
def test_scorer_gradient_only_through_residual_and_frozen_bottom(bpe, architecture, residual):
    model = make(bpe, architecture, residual=residual).train()
    model(*batch(model)).backward()
    scorer_grads = [p.grad for p in model.scorer.parameters()]
    if residual:
        assert all(g is not None for g in scorer_grads) and sum(float(g.abs().sum()) for g in scorer_grads) > 0
    else:
        assert all(g is None or float(g.abs().sum()) == 0 for g in scorer_grads)
    for module in model.frozen_modules():
        for param in module.parameters():
            assert not param.requires_grad and param.grad is None
    top_layer = model.encoder.layers[-1]
    assert any(p.grad is not None and float(p.grad.abs().sum()) > 0 for p in top_layer.parameters())


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_feedback_adds_type_embeddings_to_layer_l_plus_1_input(bpe, architecture):
    with_feedback = make(bpe, architecture, feedback=True).eval()
    without = make(bpe, architecture, feedback=False).eval()
    without.load_state_dict(with_feedback.state_dict(), strict=False)
    with torch.no_grad():
        with_feedback.type_embedding.weight.normal_()  # e^o = row 0, e^n = row 1 (zero at init)
    ids, mask, _, _ = batch(with_feedback)
    captured = {}

    def capture(name):
        def hook(module, args):
            captured[name] = args[0].detach().clone()
        return hook

    layer = with_feedback.config.scorer_layer
    handles = [with_feedback.encoder.layers[layer].register_forward_pre_hook(capture("on")),
               without.encoder.layers[layer].register_forward_pre_hook(capture("off"))]
    with torch.no_grad():
        nuggets = with_feedback.encode(ids, mask)
        without.encode(ids, mask)
    for handle in handles:
        handle.remove()
    is_nugget = torch.zeros_like(ids, dtype=torch.bool)
    for row in range(ids.shape[0]):
        is_nugget[row, nuggets.indices[row][nuggets.mask[row]]] = True
    e_other, e_nugget = with_feedback.type_embedding.weight
    difference = captured["on"] - captured["off"]
    torch.testing.assert_close(difference[is_nugget], e_nugget.expand(int(is_nugget.sum()), -1))
    torch.testing.assert_close(difference[~is_nugget], e_other.expand(int((~is_nugget).sum()), -1))


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_residual_bias_enters_every_cross_attention_softmax(bpe, architecture):
    """A constant added to all scores changes nothing (softmax), one nugget's score changes the output,
    and a blocked slot equals a missing nugget: the 4-D float mask is applied as an additive bias."""
    model = make(bpe, architecture).eval()
    ids, mask, decoder_input_ids, _ = batch(model, TEXTS[:1])
    with torch.no_grad():
        nuggets = model.encode(ids, mask)

        def decode(n):
            hidden, _ = model.decoder(decoder_input_ids, n.vectors, model.memory_bias(n))
            return hidden

        base = decode(nuggets)
        shifted = type(nuggets)(nuggets.vectors, nuggets.mask, nuggets.indices, nuggets.scores + 3.0)
        torch.testing.assert_close(decode(shifted), base, atol=1e-5, rtol=1e-5)
        bumped_scores = nuggets.scores.clone()
        bumped_scores[0, 0] += 3.0
        bumped = type(nuggets)(nuggets.vectors, nuggets.mask, nuggets.indices, bumped_scores)
        assert (decode(bumped) - base).abs().max() > 1e-4
        blocked_mask = nuggets.mask.clone()
        blocked_mask[0, -1] = False
        blocked = type(nuggets)(nuggets.vectors, blocked_mask, nuggets.indices, nuggets.scores)
        dropped = type(nuggets)(nuggets.vectors[:, :-1], nuggets.mask[:, :-1], nuggets.indices[:, :-1],
                                nuggets.scores[:, :-1])
        torch.testing.assert_close(decode(blocked), decode(dropped), atol=1e-5, rtol=1e-5)


def test_batch_padding_does_not_change_a_documents_nuggets(bpe):
    model = make(bpe).eval()
    ids, mask, _, _ = batch(model)
    alone_ids, alone_mask, _, _ = batch(model, TEXTS[2:3])
    with torch.no_grad():
        together, alone = model.encode(ids, mask), model.encode(alone_ids, alone_mask)
    k = int(alone.mask.sum())
    assert together.indices[2, :k].tolist() == alone.indices[0, :k].tolist()
    torch.testing.assert_close(together.vectors[2, :k], alone.vectors[0, :k], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("selector", ["chunking", "sentence_boundary"])
def test_rule_selectors(bpe, selector):
    model = make(bpe, selector=selector, residual=False).eval()
    assert model.scorer is None
    ids, mask, decoder_input_ids, labels = batch(model)
    nuggets = model.encode(ids, mask)
    assert nuggets.scores is None
    tokens = model.source_tokenizer.convert_ids_to_tokens(ids[0].tolist())
    chosen = [tokens[i] for i in nuggets.indices[0][nuggets.mask[0]].tolist()]
    if selector == "sentence_boundary":
        assert chosen == [".", "."]  # both sentences end with a period
        short = make(bpe, selector=selector, residual=False).eval()
        short_ids, short_mask, _, _ = batch(short, ["no final punctuation here"])
        found = short.encode(short_ids, short_mask)
        assert short.source_tokenizer.convert_ids_to_tokens(
            short_ids[0, found.indices[0]].tolist()) == ["here"]  # the last content word, not [SEP]
    else:
        n = int(mask[0].sum())
        assert len(chosen) == math.ceil(n * 0.3 - 1e-9)
        assert {",", "."} & set(chosen)
    assert torch.isfinite(model.train()(ids, mask, decoder_input_ids, labels))


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_mean_bottleneck_is_masked_mean_of_last_layer(bpe, architecture):
    model = make(bpe, architecture, bottleneck="mean", residual=False, feedback=False).eval()
    assert model.scorer is None and model.value_projection is None
    ids, mask, _, _ = batch(model)
    with torch.no_grad():
        nuggets = model.encode(ids, mask)
        hf_encoder = model.encoder.bert if architecture == "bert_decoder" else model.encoder.encoder
        states = hf_encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    expected = (states * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
    assert nuggets.vectors.shape == (len(TEXTS), 1, model.encoder.hidden_size)
    torch.testing.assert_close(nuggets.vectors[:, 0], expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_save_load_identical_outputs(bpe, architecture, tmp_path):
    model = make(bpe, architecture)
    with torch.no_grad():  # move away from the initial values so loading is really tested
        model.type_embedding.weight.normal_()
        model.scorer.ffn[0].weight.mul_(3)
    model.eval()
    model.save_pretrained(tmp_path)
    loaded = NuggetModel.from_pretrained(tmp_path)
    inputs = batch(model)
    with torch.no_grad():
        torch.testing.assert_close(loaded(*inputs), model(*inputs), atol=0, rtol=0)
        a, b = model.encode(*inputs[:2]), loaded.encode(*inputs[:2])
    assert torch.equal(a.vectors, b.vectors) and torch.equal(a.indices, b.indices)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_beam_of_one_equals_greedy_and_cache_is_exact(bpe, architecture):
    model = make(bpe, architecture).train()
    # A few reconstruction steps: a fresh decoder only repeats one token, which would test little.
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=5e-3)
    inputs = batch(model)
    for _ in range(80):
        optimizer.zero_grad()
        model(*inputs).backward()
        optimizer.step()
    model.eval()
    ids, mask, _, _ = inputs
    with torch.no_grad():
        nuggets = model.encode(ids, mask)
    greedy = greedy_decode(model, nuggets, max_new_tokens=8)
    assert beam_search(model, nuggets, max_new_tokens=8, num_beams=1) == greedy
    assert len({tuple(g) for g in greedy}) > 1 or len(set(greedy[0])) > 1  # not a degenerate constant
    # The cached decoder must agree with recomputing the whole prefix at every step.
    tok = model.target_tokenizer
    prefix = [tok.eos_id] + list(tok.prefix_ids)
    bias = model.memory_bias(nuggets)
    for row in range(len(TEXTS)):
        sequence = list(prefix)
        for _ in range(8):
            with torch.no_grad():
                hidden, _ = model.decoder(torch.tensor([sequence]), nuggets.vectors[row:row + 1], bias[row:row + 1])
                token = int(model.decoder.logits(hidden[0, -1]).argmax())
            if token == tok.eos_id:
                break
            sequence.append(token)
        assert sequence[len(prefix):] == greedy[row]
    five = beam_search(model, nuggets, max_new_tokens=8, num_beams=5)
    assert len(five) == len(TEXTS)
