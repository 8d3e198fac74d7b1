"""The NUGGET LM (§6.2, eq. 12): word perplexity (footnote 6), history memories, Table 3."""
import math

import pytest
import torch

from multivec.nugget.language_model import (LMSettings, Memory, history_indices, history_memory, mean_pool_recent,
                                            word_perplexity)
from multivec.nugget.lm_table3 import PAPER_TABLE3, memory_positions_note, table3_markdown, table3_rows
from multivec.nugget.lm_data import Segment


def test_word_perplexity_is_exp_of_mean_word_nll_by_hand():
    # words: "the" (1 token), "cathedral" (3 tokens), "<unk>" (2 tokens, excluded), "sat" (2 tokens)
    words = {0: ("the", 1), 1: ("cathedral", 3), 2: ("<unk>", 2), 3: ("sat", 2)}
    token_nll = [0.5, 1.0, 2.0, 0.25, 3.0, 3.0, 0.7, 0.1]
    token_word = [0, 1, 1, 1, 2, 2, 3, 3]
    by_hand = math.exp((0.5 + (1.0 + 2.0 + 0.25) + (0.7 + 0.1)) / 3)
    result = word_perplexity(token_nll, token_word, words)
    assert result["ppl"] == pytest.approx(by_hand)
    assert result["words"] == 3 and result["oov_words"] == 1 and result["tokens"] == 8
    assert result["token_ppl"] == pytest.approx(math.exp(sum(token_nll) / 8))


def test_word_perplexity_leaves_out_the_unknown_token_with_attached_punctuation():
    # LM streams are detokenised WikiText with <unk> as the encoder's "[UNK]": "[UNK]," is OOV too
    words = {0: ("the", 1), 1: ("[UNK]", 1), 2: ("[UNK],", 2), 3: ("<unk>", 3)}
    result = word_perplexity([0.5, 4.0, 4.0, 1.0, 0.2, 0.3, 0.4], [0, 1, 2, 2, 3, 3, 3], words, oov_token="[UNK]")
    assert result["words"] == 2 and result["oov_words"] == 2  # "<unk>" is an ordinary word here
    assert result["ppl"] == pytest.approx(math.exp((0.5 + 0.9) / 2))


def test_word_perplexity_drops_partly_evaluated_words_and_needs_one_word():
    words = {0: ("a", 1), 1: ("cut", 2)}
    assert word_perplexity([0.3, 9.0], [0, 1], words)["ppl"] == pytest.approx(math.exp(0.3))
    with pytest.raises(ValueError, match="no in-vocabulary word"):
        word_perplexity([1.0], [0], {0: ("<unk>", 1)})
    with pytest.raises(ValueError, match="token NLLs"):
        word_perplexity([1.0, 2.0], [0], words)


def test_history_indices_stay_in_the_stream():
    segments = [Segment(0, 0, [1], [0], ""), Segment(0, 1, [1], [0], ""), Segment(0, 2, [1], [0], ""),
                Segment(1, 0, [1], [0], ""), Segment(1, 1, [1], [0], "")]
    assert history_indices(segments, 2, 1) == [1]
    assert history_indices(segments, 2, 8) == [0, 1]
    assert history_indices(segments, 3, 4) == []  # first segment of stream 1
    assert history_indices(segments, 4, 2) == [3]
    assert history_indices(segments, 2, 0) == []


def test_nugget_history_concatenates_in_order_with_scores():
    settings = LMSettings(history="nuggets")
    a = Memory(torch.ones(2, 3), torch.tensor([0.1, 0.2]))
    b = Memory(2 * torch.ones(1, 3), torch.tensor([0.3]))
    memory = history_memory(settings, [a, b], 3, "cpu")
    assert torch.equal(memory.vectors, torch.tensor([[1.0] * 3, [1.0] * 3, [2.0] * 3]))
    assert torch.allclose(memory.scores, torch.tensor([0.1, 0.2, 0.3]))


def test_no_history_is_one_zero_vector():
    for kind, history in [("none", [Memory(torch.ones(2, 3), None)]), ("nuggets", [])]:
        memory = history_memory(LMSettings(history=kind), history, 3, "cpu")
        assert torch.equal(memory.vectors, torch.zeros(1, 3)) and memory.scores is None


def test_compressive_mean_pools_the_most_recent_states():
    states = torch.arange(10, dtype=torch.float32).unsqueeze(1)  # 10 states of width 1
    pooled = mean_pool_recent(states, keep=8, window=4)  # states 2..9 -> means of 2..5 and 6..9
    assert torch.equal(pooled, torch.tensor([[3.5], [7.5]]))
    pooled = mean_pool_recent(states, keep=10, window=4)  # windows aligned to the end: [0,1], [2..5], [6..9]
    assert torch.equal(pooled, torch.tensor([[0.5], [3.5], [7.5]]))
    settings = LMSettings(history="compressive", compress_tokens=512, compress_window=16)
    memory = history_memory(settings, [Memory(torch.randn(300, 4), None), Memory(torch.randn(300, 4), None)], 4, "cpu")
    assert memory.vectors.shape == (32, 4)  # 512 -> 32 (App. B.2)


def test_settings_refuse_unknown_history():
    with pytest.raises(ValueError, match="history"):
        LMSettings(history="everything")
    with pytest.raises(ValueError, match="unknown LM settings"):
        LMSettings.from_dict({"history": "none", "segment_length": 3})


def test_table3_rows_carry_measured_and_paper_cells():
    results = {"nugget_r0.05": {"history": "nuggets", "perplexity": {"0": {"ppl": 40.0}, "8": {"ppl": 30.123}}},
               "transformer": {"history": "none", "perplexity": {"0": {"ppl": 41.0}, "8": {"ppl": 41.0}}}}
    rows = table3_rows(results, [0, 8])
    assert rows[0]["ppl_h8"] == 30.12 and rows[0]["paper_h8"] == ""  # the paper prints '-' there
    assert rows[1]["paper_h0"] == PAPER_TABLE3["transformer"][0]
    with pytest.raises(ValueError, match="h = 4"):
        table3_rows(results, [4])


def test_memory_positions_note_names_the_setting_and_refuses_unknown_values():
    # Table 3's scale line must say which history the nugget rows read: the two settings differ by
    # 14 points of perplexity drop (docs/nugget.md, Table 3)
    assert "`memory_positions: none`" in memory_positions_note("none")
    assert "positions they had in their segment" in memory_positions_note("segment")
    with pytest.raises(ValueError, match="memory_positions='segments'"):
        memory_positions_note("segments")


def test_table3_markdown_has_title_scale_and_paper_cells():
    results = {"nugget_r0.1": {"history": "nuggets", "perplexity": {"0": {"ppl": 40.0}, "8": {"ppl": 30.123}}}}
    md = table3_markdown(table3_rows(results, [0, 8]), [0, 8], "Scale: **smoke**")
    lines = md.splitlines()
    assert lines[0].startswith("# NUGGET Table 3") and "Scale: **smoke**" in lines
    row = next(line for line in lines if line.startswith("| nugget_r0.1 | NUGGET r=0.1"))
    assert row.split(" | ")[2:] == ["40.00", "30.12", "", "28.1 |"]  # ours at h=0, 8; the paper's at h=0 ('-'), 8
    # with the statistics columns: cells mean [lo, hi], the relative drops, and the notes at the end
    rows = [{**table3_rows(results, [0, 8])[0], "ppl_h8_lo": 29.0, "ppl_h8_hi": 31.5, "drop_h0_h8": 0.247,
             "drop_h0_h8_lo": 0.2, "drop_h0_h8_hi": 0.3}]
    md = table3_markdown(rows, [0, 8], "Scale: **smoke**", ["## Claims on this table"])
    row = next(line for line in md.splitlines() if line.startswith("| nugget_r0.1"))
    assert "| 30.12 [29.00, 31.50] | 0.247 [0.200, 0.300] |" in row and "drop h=0→8" in md
    assert md.rstrip().endswith("## Claims on this table")


# -- end to end on a tiny random AE model (no hub) -----------------------------------------------------
# [UNK]: tiny-random-bert's unknown token, the word the LM streams carry for WikiText's <unk> (lm_data)
WORDS = "the cat dog sat ran on a mat house red blue small big and but near far tree [UNK]".split()


@pytest.fixture(scope="module")
def ae_model(tmp_path_factory):
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.modeling import NuggetModel
    from multivec.nugget.target_tokenizer import TargetTokenizer

    import random
    rng = random.Random(0)
    texts = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(40)]
    config = NuggetConfig(encoder="tiny-random-bert", ratio=0.3, scorer_layer=2, decoder_heads=2, decoder_ffn=64,
                          target_vocab_size=300, max_source_tokens=32, max_target_tokens=32)
    model = NuggetModel.from_backbone(config, TargetTokenizer.train_bpe(texts, 300))
    out = tmp_path_factory.mktemp("ae")
    model.save_pretrained(out)
    return out


def streams(seed, n):
    import random

    from multivec.nugget.lm_data import Stream
    rng = random.Random(seed)
    return [Stream(f"s{i}", " ".join(rng.choice(WORDS) for _ in range(60))) for i in range(n)]


@pytest.mark.parametrize("kind", ["nuggets", "compressive", "none"])
def test_lm_trains_with_the_engine_and_history_changes_the_perplexity(ae_model, tmp_path, kind):
    from multivec.nugget.language_model import SegmentData, evaluate, load, train
    from multivec.training.engine import TrainConfig

    settings = LMSettings(history=kind, segment_tokens=16, train_histories=[1, 2], compress_tokens=32,
                          compress_window=8, history_source_tokens=32)
    cfg = TrainConfig(max_steps=4, batch_size=4, lr=1e-3, eval_every=2, checkpoint_every=2, threads=1, device="cpu")
    summary = train(settings, ae_model, cfg, streams(1, 6), streams(2, 2), tmp_path / "lm")
    assert (tmp_path / "lm" / "model.safetensors").exists() and summary
    lm = load(tmp_path / "lm")
    assert lm.settings.history == kind
    before = {n: p.clone() for n, p in lm.nugget.named_parameters() if not n.startswith("decoder.")}
    data = SegmentData(lm.nugget, lm.settings, streams(3, 2), max_segments=10)
    ppl = {h: evaluate(lm, data, h, batch_size=4)["ppl"] for h in (0, 2)}
    assert all(math.isfinite(p) and p > 1 for p in ppl.values())
    # the encoder tokenizer's unknown token is the OOV word perplexity leaves out (§6.2.1), not "<unk>"
    assert data.oov_token == "[UNK]"
    result = evaluate(lm, data, 0, batch_size=4)
    evaluated = {(seg.stream, w) for seg in data.segments for w in seg.word_index}
    unknown = sum(data.streams[s].words[w] == "[UNK]" for s, w in evaluated)
    assert unknown > 0 and result["oov_words"] == unknown and result["words"] <= len(evaluated) - unknown
    if kind == "none":
        assert ppl[0] == pytest.approx(ppl[2])
    else:
        assert ppl[0] != pytest.approx(ppl[2], rel=1e-9)
    # frozen encoder: training left it as the AE model's
    from multivec.nugget.modeling import NuggetModel
    ae = dict(NuggetModel.from_pretrained(ae_model).named_parameters())
    assert all(torch.equal(p, ae[n]) for n, p in before.items())
