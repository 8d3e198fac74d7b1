"""The NUGGET model on tiny random encoders: selection, gradients, feedback, residual bias, decoding, save/load."""

import math

import pytest
import torch

from multivec.nugget.configuration import TABLE4_ABLATIONS, NuggetConfig, ablation_config
from multivec.nugget.generation import beam_search, greedy_decode
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.processing import NuggetProcessor, load_source_tokenizer
from multivec.nugget.target_tokenizer import TargetTokenizer
from multivec.training.batching import pad_sequences

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
    processor = model.processor
    ids, mask = processor.collate_sources(processor.tokenize_sources(texts), model.device)
    decoder_input_ids, labels = processor.target_batch(processor.target_tokenizer.encode(texts, 32), model.device)
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


def test_chunking_selector_ends_chunks_at_comma_or_period(bpe):
    model = make(bpe, selector="chunking", residual=False).eval()
    assert model.scorer is None
    ids, mask, decoder_input_ids, labels = batch(model)
    nuggets = model.encode(ids, mask)
    assert nuggets.scores is None
    tokens = model.processor.source_tokenizer.convert_ids_to_tokens(ids[0].tolist())
    chosen = [tokens[i] for i in nuggets.indices[0][nuggets.mask[0]].tolist()]
    n = int(mask[0].sum())
    assert len(chosen) == math.ceil(n * 0.3 - 1e-9)
    assert {",", "."} & set(chosen)
    assert torch.isfinite(model.train()(ids, mask, decoder_input_ids, labels))


@pytest.mark.parametrize("punctuation, mark", [("comma_period", None), ("wide", ";")])
def test_chunking_punctuation_is_comma_and_period_unless_widened(bpe, punctuation, mark):
    # 4 content tokens + [CLS]/[SEP] = 6, r = 0.3: two chunks [0..2], [3..5]; a ";" at position 2.
    model = make(bpe, selector="chunking", residual=False, chunk_punctuation=punctuation).eval()
    ids, mask, _, _ = batch(model, ["alpha beta; gamma"])
    tokens = model.processor.source_tokenizer.convert_ids_to_tokens(ids[0].tolist())
    assert tokens == ["[CLS]", "alpha", "beta", ";", "gamma", "[SEP]"]
    ids, mask = ids[:, 1:], mask[:, 1:]  # drop [CLS]: 5 tokens, chunks [0..1], [2..4] -> ";" is position 2
    chosen = model.encode(ids, mask).indices[0].tolist()
    assert chosen == ([1, 4] if mark is None else [1, 2])


SENTENCES = ["Dr. Smith met Mr. Jones at 5 p.m. on Monday. They talked, then left!",
             "A short one without an end mark"]


def sentence_ends(text):
    """Real boundaries as the corpus builders record them (exclusive character offsets)."""
    return {SENTENCES[0]: [45, len(SENTENCES[0])], SENTENCES[1]: [len(SENTENCES[1])]}[text]


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_sentence_boundary_selector_uses_real_sentence_ends(bpe, architecture):
    model = make(bpe, architecture, selector="sentence_boundary", residual=False).eval()
    assert model.scorer is None
    ids, mask, decoder_input_ids, labels = batch(model, SENTENCES)
    masks = model.processor.sentence_end_masks(SENTENCES, [sentence_ends(t) for t in SENTENCES])
    end_mask, _ = pad_sequences(masks, 0, model.device)  # flags pad with 0, not the pad token id
    nuggets = model.encode(ids, mask, sentence_end_mask=end_mask)
    assert nuggets.scores is None
    tokenizer = model.processor.source_tokenizer
    chosen = [tokenizer.convert_ids_to_tokens(ids[row, nuggets.indices[row][nuggets.mask[row]]].tolist())
              for row in range(len(SENTENCES))]
    # The period after "Monday" and the "!" -- not the periods of "Dr.", "Mr." or "p.m." -- and, without
    # a final mark, the last word (never [SEP]).
    assert chosen == [[".", "!"], ["mark"]]
    first = model.processor.source_tokenizer.convert_ids_to_tokens(ids[0].tolist())
    assert nuggets.indices[0, 0] == first.index("monday") + 1
    assert torch.isfinite(model.train()(ids, mask, decoder_input_ids, labels, sentence_end_mask=end_mask))


def test_sentence_boundary_selector_needs_the_mask(bpe):
    model = make(bpe, selector="sentence_boundary", residual=False).eval()
    ids, mask, decoder_input_ids, labels = batch(model, SENTENCES)
    with pytest.raises(ValueError, match="sentence_boundary.*sentence_end_mask"):
        model(ids, mask, decoder_input_ids, labels)
    with pytest.raises(ValueError, match="marks no real token in batch row"):
        model.encode(ids, mask, sentence_end_mask=torch.zeros_like(ids))
    with pytest.raises(ValueError, match="sentence_end_mask has shape"):
        model.encode(ids, mask, sentence_end_mask=torch.ones_like(ids[:, 1:]))
    with pytest.raises(ValueError, match="source 1 .*each end must be"):
        model.processor.sentence_end_masks(SENTENCES, [[45], [999]])


def test_sentence_end_masks_follow_truncation(bpe):
    """A sentence cut off by max_source_tokens ends at the last kept token: the document keeps a nugget."""
    model = make(bpe, selector="sentence_boundary", residual=False).eval()
    ids = model.processor.tokenize_sources(SENTENCES[:1], max_tokens=6)
    masks = model.processor.sentence_end_masks(SENTENCES[:1], [sentence_ends(SENTENCES[0])], max_tokens=6)
    assert len(masks[0]) == len(ids[0]) == 6
    assert masks[0] == [0, 0, 0, 0, 1, 0]  # [CLS] dr . smith met [SEP]: "met" ends the truncated text


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
    tok = model.processor.target_tokenizer
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


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_value_projection_is_linear_without_bias(bpe, architecture):
    """Eq. 4: Z = X'W^V. No shared offset (it would add a constant to every nugget and inflate cosines)."""
    model = make(bpe, architecture).eval()
    assert not any(name.startswith("value_projection.") and name != "value_projection.weight"
                   for name, _ in model.named_parameters())
    torch.testing.assert_close(model.value_projection.weight, torch.eye(model.encoder.hidden_size))
    with torch.no_grad():
        for param in model.value_projection.parameters():
            param.normal_()
        d = model.encoder.hidden_size
        x = torch.randn(3, d)
        torch.testing.assert_close(model.value_projection(torch.zeros(1, d)), torch.zeros(1, d))
        torch.testing.assert_close(model.value_projection(x), x @ model.value_projection.weight.T)


def scorer_inputs_and_outputs(model, inputs, repeats=2):
    """The scorer's input (the frozen bottom's output, layer l) and the encoder's last layer, per forward."""
    bottoms, tops = [], []
    handles = [model.scorer.register_forward_pre_hook(lambda m, args: bottoms.append(args[0].detach().clone())),
               model.encoder.layers[-1].register_forward_hook(
                   lambda m, args, out: tops.append((out[0] if isinstance(out, tuple) else out).detach().clone()))]
    for _ in range(repeats):
        model(*inputs)
    for handle in handles:
        handle.remove()
    return bottoms, tops


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_frozen_bottom_runs_without_dropout_while_top_trains(bpe, architecture):
    model = make(bpe, architecture).train()
    inputs = batch(model)
    bottoms, tops = scorer_inputs_and_outputs(model, inputs)
    assert torch.equal(bottoms[0], bottoms[1])  # no dropout below the scorer in train mode
    assert not torch.equal(tops[0], tops[1])  # the trainable top still has dropout
    model.eval()
    eval_bottoms, eval_tops = scorer_inputs_and_outputs(model, inputs, repeats=1)
    torch.testing.assert_close(bottoms[0], eval_bottoms[0], atol=1e-6, rtol=1e-6)
    assert torch.equal(*scorer_inputs_and_outputs(model, inputs)[1])  # eval: deterministic everywhere


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_unfrozen_bottom_trains_with_dropout(bpe, architecture):
    """frozen_layers: -1 (TSDAE, §6.1.2): every encoder parameter trains, the embeddings' dropout included."""
    model = make(bpe, architecture, frozen_layers=-1).train()
    assert model.frozen_modules() == []
    inputs = batch(model)
    bottoms, _ = scorer_inputs_and_outputs(model, inputs)
    assert not torch.equal(bottoms[0], bottoms[1])
    model.zero_grad()
    model(*inputs).backward()
    for name, module in [("embeddings", model.encoder.embedding_modules()[0]), ("layer 1", model.encoder.layers[0])]:
        grads = [p.grad for p in module.parameters()]
        assert all(p.requires_grad for p in module.parameters()), name
        assert any(g is not None and float(g.abs().sum()) > 0 for g in grads), name


@pytest.mark.parametrize("frozen_layers, expected", [(None, 2), (0, 0), (1, 1), (4, 4)])
def test_frozen_layers_sets_the_frozen_bottom(bpe, frozen_layers, expected):
    model = make(bpe, frozen_layers=frozen_layers).train()  # scorer_layer = 2
    frozen = [not any(p.requires_grad for p in layer.parameters()) for layer in model.encoder.layers]
    assert frozen == [i < expected for i in range(model.encoder.num_layers)]
    assert not any(p.requires_grad for p in model.encoder.embedding_modules()[0].parameters())
    assert all(not m.training for m in model.frozen_modules())
    assert all(m.training for m in model.encoder.layers[expected:])
    model(*batch(model)).backward()  # frozen layers above l still pass the feedback's gradient down to e^n
    assert model.type_embedding.weight.grad is not None and float(model.type_embedding.weight.grad.abs().sum()) > 0
    for layer in model.encoder.layers[:expected]:
        assert all(p.grad is None for p in layer.parameters())


def test_frozen_layers_beyond_the_encoder_is_a_clear_error(bpe):
    with pytest.raises(ValueError, match="frozen_layers=5 but the encoder 'tiny-random-bert' has 4 layers"):
        make(bpe, frozen_layers=5)


def test_tsdae_row_trains_unfrozen(bpe):
    """The zoo builds the TSDAE row's config (multivec.rules.nugget_zoo): mean bottleneck, nothing frozen
    (§6.1.2)."""
    from multivec.rules.nugget_zoo import NuggetZoo

    zoo = NuggetZoo({"nugget": {"encoder": "tiny-random-bert", "scorer_layer": 2, "decoder_heads": 2,
                                "decoder_ffn": 64, "target_vocab_size": 300},
                     "nugget_analysis": {"model": {}},
                     "table2": {"rows": []},
                     "seed": 0, "tsdae": {"noise_deletion": 0.6}})
    cfg = NuggetConfig.from_dict(zoo.tsdae_model_config("ae"))
    assert cfg.bottleneck == "mean" and cfg.frozen_bottom == -1 and cfg.noise_deletion == 0.6
    assert zoo.tsdae_model_config("ae", "14")["seed"] == 14  # the path's seed is the training seed
    model = NuggetModel.from_backbone(cfg, bpe)
    assert model.frozen_modules() == [] and all(p.requires_grad for p in model.parameters())


@pytest.mark.parametrize("name", list(TABLE4_ABLATIONS))
def test_table4_ablations_build_the_model_they_name(bpe, name):
    """Every Table 4 row (§7.1) on a 12-layer tiny BERT (l = 9 needs 9 layers): frozen layers, selector, feedback."""
    from transformers import BertConfig, BertModel

    cfg = ablation_config(name, {"encoder": "tiny-random-bert", "decoder_heads": 2, "decoder_ffn": 64,
                                 "target_vocab_size": 300})
    torch.manual_seed(0)
    backbone = BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=12, num_attention_heads=2,
                                    intermediate_size=64, attn_implementation="sdpa"), add_pooling_layer=False)
    processor = NuggetProcessor(load_source_tokenizer("tiny-random-bert", cfg.src_lang), bpe, cfg.max_source_tokens)
    model = NuggetModel(cfg, backbone, processor).train()
    frozen = sum(not any(p.requires_grad for p in layer.parameters()) for layer in model.encoder.layers)
    assert frozen == cfg.scorer_layer == {"nugget_l0": 0, "nugget_l6": 6, "nugget_l9": 9}.get(name, 3)
    assert (model.type_embedding is None) == (name == "no_feedback")
    assert (model.scorer is None) == (name in ("chunking", "sentence_boundary", "random"))
    assert (model.rule_selector.kind if model.rule_selector else "learned") == cfg.selector
    ids, mask, decoder_input_ids, labels = batch(model, SENTENCES)
    end_mask = None
    if name == "sentence_boundary":
        masks = model.processor.sentence_end_masks(SENTENCES, [sentence_ends(t) for t in SENTENCES])
        end_mask, _ = pad_sequences(masks, 0, model.device)
    nuggets = model.encode(ids, mask, sentence_end_mask=end_mask)
    counts = nuggets.mask.sum(1).tolist()
    if name == "sentence_boundary":
        assert counts == [2, 1]
    else:
        assert counts == [math.ceil(int(n) * cfg.ratio - 1e-9) for n in mask.sum(1)]
    model(ids, mask, decoder_input_ids, labels, sentence_end_mask=end_mask).backward()
