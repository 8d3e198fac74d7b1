"""The probability gain of NUGGET eq. 9 (§5.3): exposures, exact null gain, ordering, averages, documents."""

import math

import numpy as np
import pytest
import torch

from multivec.data.wikitext import Article, Section
from multivec.nugget.analysis.gain_tables import (by_nugget_table, by_relative_position_table, gain_by_nugget,
                                                  gain_by_relative_position, load_gains)
from multivec.nugget.analysis.probability_gain import (DocumentGains, document_gains, exposure_gains, exposures,
                                                       map_source_to_target, order_by_token_index,
                                                       prepare_document, save_gains, stack_gains, word_windows)
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.target_tokenizer import TargetTokenizer
from multivec.statistics.resampling import BootstrapSettings

TEXTS = ["The cat sat on the mat. It was happy, very happy indeed.", "Dogs bark loudly at night!",
         "One more sentence, with a comma. And a second one; then a third!"]
DOCUMENT = " ".join(TEXTS * 2)


@pytest.fixture(scope="module")
def model():
    bpe = TargetTokenizer.train_bpe(TEXTS * 3, 300)
    cfg = NuggetConfig(encoder="tiny-random-bert", ratio=0.3, scorer_layer=2, decoder_heads=2, decoder_ffn=64,
                       target_vocab_size=300, seed=3)
    model = NuggetModel.from_backbone(cfg, bpe).eval()
    with torch.no_grad():  # non-zero cross-attention biases and a decoder that reads its memory strongly,
        for layer in model.decoder.decoder.layers:  # so that gains are far from 0 and from each other
            layer.encoder_attn.v_proj.bias.normal_(0, 0.5)
            layer.encoder_attn.out_proj.bias.normal_(0, 0.5)
            layer.encoder_attn.out_proj.weight.mul_(20)
        model.decoder.decoder.embed_tokens.weight.mul_(8)
        if model.decoder.output_projection is not None:  # the untied output layer too: sharp softmax
            model.decoder.output_projection.weight.mul_(8)
    return model


def direct_probabilities(model, target_ids, memory, bias):
    """p(y_i | y_<i, memory) with the decoder called directly (one row), softmax by hand."""
    decoder_input_ids, labels = model.processor.target_batch([target_ids], model.device)
    hidden, _ = model.decoder(decoder_input_ids, memory, bias)
    logits = model.decoder.logits(hidden)[0].double()
    probs = torch.exp(logits - logits.max(-1, keepdim=True).values)
    probs = probs / probs.sum(-1, keepdim=True)
    return probs[torch.arange(len(target_ids)), labels[0].clamp(min=0)], labels[0]


def test_gain_is_the_difference_of_the_two_softmax_probabilities(model):
    doc = prepare_document(model, DOCUMENT, 24)
    ids, mask = model.processor.collate_sources([doc.source_ids], model.device)
    with torch.no_grad():
        nuggets = model.encode(ids, mask)
        bias = model.memory_bias(nuggets)[0, 0, 0]
        gains = exposure_gains(model, doc.target_ids, nuggets.vectors[0], bias, nuggets.mask[0])
        d = nuggets.vectors.shape[-1]
        p_null, labels = direct_probabilities(model, doc.target_ids, torch.zeros(1, 1, d), torch.zeros(1, 1, 1, 1))
        assert nuggets.vectors.shape[1] >= 2
        for j in range(nuggets.vectors.shape[1]):
            p_j, _ = direct_probabilities(model, doc.target_ids, nuggets.vectors[:, j:j + 1], bias[j].reshape(1, 1, 1, 1))
            expected = (p_j - p_null).float()
            predicted = labels != -100
            torch.testing.assert_close(gains[j][predicted], expected[predicted], atol=1e-7, rtol=1e-3)  # gains ~1e-3
            assert torch.isnan(gains[j][~predicted]).all()  # the forced prefix is not predicted
    assert gains[:, predicted].abs().max() > 1e-3  # the exposures do change the probabilities


def test_masked_out_nugget_gives_exactly_zero_gain(model):
    doc = prepare_document(model, DOCUMENT, 24)
    ids, mask = model.processor.collate_sources([doc.source_ids], model.device)
    with torch.no_grad():
        nuggets = model.encode(ids, mask)
        bias = model.memory_bias(nuggets)[0, 0, 0]
        slot_mask = nuggets.mask[0].clone()
        slot_mask[1] = False
        gains = exposure_gains(model, doc.target_ids, nuggets.vectors[0], bias, slot_mask)
    predicted = ~torch.isnan(gains[0])
    assert torch.equal(gains[1][predicted], torch.zeros_like(gains[1][predicted]))  # exactly 0
    assert gains[0][predicted].abs().max() > 0 and gains[2][predicted].abs().max() > 0


def test_exposures_rows_are_single_nuggets_then_null():
    vectors = torch.arange(12.0).reshape(3, 4) + 1
    bias = torch.tensor([0.5, -1.0, 2.0])
    mask = torch.tensor([True, False, True])
    memory, memory_bias = exposures(vectors, bias, mask)
    assert memory.shape == (4, 1, 4) and memory_bias.shape == (4, 1, 1, 1)
    torch.testing.assert_close(memory[0, 0], vectors[0])
    torch.testing.assert_close(memory[2, 0], vectors[2])
    assert torch.equal(memory[1], torch.zeros(1, 4)) and torch.equal(memory[3], torch.zeros(1, 4))
    assert memory_bias.flatten().tolist() == [0.5, 0.0, 2.0, 0.0]


def test_nuggets_are_ordered_by_token_index():
    indices = torch.tensor([9, 2, 0, 5])
    mask = torch.tensor([True, True, False, True])
    order = order_by_token_index(indices, mask)
    assert indices[order].tolist() == [2, 5, 9, 0] and mask[order].tolist() == [True, True, True, False]


def test_document_gains_are_in_token_order_and_mapped_to_target_positions(model):
    doc = prepare_document(model, DOCUMENT, 40)
    assert len(doc.target_ids) == 40 and doc.target_ids[-1] == model.processor.target_tokenizer.eos_id
    result = document_gains(model, doc)
    assert result.gains.shape == (len(result.positions), 40)
    assert list(result.source_indices) == sorted(result.source_indices)
    assert list(result.positions) == sorted(result.positions)
    assert all(0 <= p < 40 for p in result.positions)
    assert prepare_document(model, "too short", 40) is None


def test_shared_mbart_vocabulary_maps_nuggets_to_their_own_positions():
    """Paper scale: encoder and decoder share mBART's tokenizer, so a nugget's source index is its target
    position (the leading special token, mBART's language code, is position 0 on both sides)."""
    cfg = NuggetConfig(encoder="tiny-random-mbart", architecture="mbart", ratio=0.3, scorer_layer=2,
                       decoder_heads=2, decoder_ffn=64, target_tokenizer="source")
    model = NuggetModel.from_backbone(cfg).eval()
    doc = prepare_document(model, DOCUMENT, 20)
    assert len(doc.target_ids) == 20 and len(doc.source_ids) == 20
    assert doc.source_to_target == list(range(20))
    result = document_gains(model, doc)
    assert result.positions.tolist() == result.source_indices.tolist()
    assert result.gains.shape == (len(result.positions), 20)


def test_source_tokens_map_to_the_target_token_holding_their_last_character():
    # text "ab cd": source [CLS] "ab" "c" "##d" [SEP]; target prefix (1) + "ab" " cd" + eos
    positions = map_source_to_target([(0, 0), (0, 2), (3, 4), (4, 5), (0, 0)], [1, 0, 0, 0, 1], [2, 5], 1, 4)
    assert positions == [0, 1, 2, 2, 3]


def test_gain_by_nugget_averages_over_documents_that_have_that_nugget():
    nan = np.nan
    gains = np.array([[[nan, 1.0, 2.0, 3.0], [nan, 0.0, 0.0, 4.0]],
                      [[nan, 3.0, 0.0, 1.0], [nan, nan, nan, nan]]], dtype=np.float32)
    positions = np.array([[1, 3], [2, -1]])
    first = gain_by_nugget(gains, positions, 1)
    assert first["documents"] == 2
    assert first["nugget_share"].tolist() == [0, 0.5, 0.5, 0]
    np.testing.assert_allclose(first["mean_gain"][1:], [2.0, 1.0, 2.0])
    assert math.isnan(first["mean_gain"][0])
    second = gain_by_nugget(gains, positions, 2)
    assert second["documents"] == 1 and second["nugget_share"].tolist() == [0, 0, 0, 1]
    np.testing.assert_allclose(second["mean_gain"][1:], [0.0, 0.0, 4.0])
    assert gain_by_nugget(gains, positions, 3)["documents"] == 0


def test_gain_by_relative_position_centres_each_nugget():
    nan = np.nan
    gains = np.array([[[nan, 1.0, 2.0, 3.0], [nan, 5.0, 6.0, 7.0]]], dtype=np.float32)
    positions = np.array([[1, 3]])
    result = gain_by_relative_position(gains, positions)
    table = dict(zip(result["relative_position"].tolist(), zip(result["mean_gain"].tolist(), result["pairs"].tolist())))
    # nugget at 1: offsets 0, 1, 2 -> 1, 2, 3; nugget at 3: offsets -2, -1, 0 -> 5, 6, 7
    assert table[0] == (4.0, 2) and table[1] == (2.0, 1) and table[2] == (3.0, 1)
    assert table[-2] == (5.0, 1) and table[-1] == (6.0, 1)
    assert table[-3][1] == 0 and math.isnan(table[-3][0])
    df = by_relative_position_table({4: (gains, positions)})
    assert df["relative_position"].tolist() == [-2, -1, 0, 1, 2] and df["pairs"].sum() == 6
    # one document: every resample is that document, so each point's CI is the point itself
    assert np.allclose(df["mean_gain_lo"], df["mean_gain"]) and np.allclose(df["mean_gain_hi"], df["mean_gain"])


def test_figure_points_carry_cis_over_documents():
    """Every point of Figs. 7, 8, 11 has its bootstrap CI over documents, and the CI moves
    with the documents' spread (a point all documents agree on has a zero-width CI)."""
    rng = np.random.default_rng(0)
    docs, length = 30, 6
    gains = rng.normal(0.0, 0.1, (docs, 2, length)).astype(np.float32)
    gains[:, :, 2] = 0.5  # every document agrees at position 2
    positions = np.tile([1, 4], (docs, 1))
    positions[::3, 0] = 2  # a third of the documents put their first nugget at 2
    bootstrap = BootstrapSettings(n_resamples=500)
    table = by_nugget_table(gains, positions, [1, 2], length, bootstrap)
    assert {"nugget_share_lo", "nugget_share_hi", "mean_gain_lo", "mean_gain_hi"} <= set(table.columns)
    first = table[table["nugget"] == 1].set_index("position")
    assert first.loc[2, "mean_gain_lo"] == pytest.approx(0.5) and first.loc[2, "mean_gain_hi"] == pytest.approx(0.5)
    assert first.loc[0, "mean_gain_lo"] < first.loc[0, "mean_gain"] < first.loc[0, "mean_gain_hi"]
    assert first.loc[2, "nugget_share_lo"] < 1 / 3 < first.loc[2, "nugget_share_hi"]
    relative = by_relative_position_table({length: (gains, positions)}, bootstrap)
    inside = ((relative["mean_gain_lo"] <= relative["mean_gain"] + 1e-12)
              & (relative["mean_gain"] <= relative["mean_gain_hi"] + 1e-12))
    assert inside.all() and (relative["mean_gain_hi"] - relative["mean_gain_lo"]).max() > 0


def test_saved_gains_round_trip_and_bad_files_name_themselves(model, tmp_path):
    docs = [prepare_document(model, DOCUMENT, 24), prepare_document(model, " ".join(TEXTS[::-1] * 2), 24)]
    results = [document_gains(model, d) for d in docs]
    path = tmp_path / "len24.safetensors"
    save_gains(path, results, docs, ["a", "b"], 24)
    gains, positions, length = load_gains(path)
    expected_gains, expected_positions = stack_gains(results, 24)
    assert length == 24 and np.array_equal(positions, expected_positions)
    np.testing.assert_array_equal(gains, expected_gains)
    from safetensors.numpy import save_file

    bad = tmp_path / "bad.safetensors"
    save_file({"gains": gains}, str(bad))
    with pytest.raises(ValueError, match="bad.safetensors.*positions"):
        load_gains(bad)


def test_stack_gains_pads_documents_with_fewer_nuggets():
    a = DocumentGains(np.ones((2, 3), np.float32), np.array([0, 2]), np.array([1, 4]))
    b = DocumentGains(np.ones((1, 3), np.float32), np.array([1]), np.array([2]))
    gains, positions = stack_gains([a, b], 3)
    assert positions.tolist() == [[0, 2], [1, -1]] and np.isnan(gains[1, 1]).all()


def test_word_windows_are_consecutive_words_of_one_article():
    words = [f"w{i}" for i in range(25)]
    articles = [Article("A", [Section("", " ".join(words[:12])), Section("H", " ".join(words[12:]))]),
                Article("B", [Section("", "too short")])]
    rows = word_windows(articles, {10: 5, 4: 2}, seed=1)
    tens = [r for r in rows if r["length"] == 10]
    assert [r["text"] for r in tens] == [" ".join(words[:10]), " ".join(words[10:20])]  # only 2 exist
    fours = [r for r in rows if r["length"] == 4]
    assert len(fours) == 2 and all(len(r["text"].split()) == 4 for r in fours)
    assert rows == word_windows(articles, {10: 5, 4: 2}, seed=1)
    with pytest.raises(ValueError, match="no article has 50 words"):
        word_windows(articles, {50: 1}, seed=1)


def test_gain_windows_read_wikitext_with_the_unknown_token(tmp_path):
    """The windows are real text with <unk> as the encoder's one unknown token (read_wikitext), not
    the pieces <, un, ##k, >; ids stay `len<L>/<5-digit position> <title>/<first word>`."""
    from multivec.data.wikitext import read_wikitext

    path = tmp_path / "test.txt"
    path.write_text(" \n = A <unk> = \n \n " + " ".join(f"w{i} <unk> x @-@ y" for i in range(4)) + " . \n")
    rows = word_windows(read_wikitext(path, "[UNK]"), {4: 2}, seed=1)
    assert [r["id"] for r in rows] == ["len4/00000 A [UNK]/0", "len4/00000 A [UNK]/4"]
    assert all("<unk>" not in r["text"] and "@" not in r["text"] for r in rows)
    assert rows[0]["text"] == "w0 [UNK] x-y w1"


def test_word_windows_of_articles_with_the_same_title_get_distinct_ids():
    # WikiText writes out-of-vocabulary titles as <unk>: windows at the same offset of two such articles
    # once shared an id, which the overlap audit's duplicate-id check (rightly) refused.
    text = " ".join(f"w{i}" for i in range(8))
    articles = [Article("<unk>", [Section("", text)]), Article("<unk>", [Section("", text)])]
    rows = word_windows(articles, {4: 4}, seed=1)
    assert len(rows) == 4 and len({r["id"] for r in rows}) == 4
    assert {r["id"] for r in rows} == {"len4/00000 <unk>/0", "len4/00000 <unk>/4", "len4/00001 <unk>/0",
                                       "len4/00001 <unk>/4"}
