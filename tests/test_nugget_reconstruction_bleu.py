"""Fig. 4 (§5.1): beam search against greedy search on a tiny random model, and corpus BLEU against sacrebleu."""

import math
from collections import Counter

import pytest
import torch

from multivec.nugget.analysis.reconstruction_bleu import (BLEU_TOKENIZE, corpus_bleu, dev_documents, fig4_markdown,
                                                          fig4_table, plot_fig4, reconstruct, round_trip)
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.generation import beam_search, greedy_decode, hypothesis_scores
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.target_tokenizer import TargetTokenizer

TEXTS = ["The cat sat on the mat. It was happy, very happy indeed.", "Dogs bark loudly at night!",
         "A short one", "One more sentence, with a comma. And a second one; then a third!",
         "Rain fell on the roofs of the old town", "Numbers: one, two, three, four and five."]
MAX_NEW = 10


@pytest.fixture(scope="module")
def model():
    """A tiny random NUGGET model whose decoder has peaked, input-dependent next-token distributions
    (large random output embeddings), so that beam search and greedy search can disagree."""
    bpe = TargetTokenizer.train_bpe(TEXTS * 3, 300)
    cfg = NuggetConfig(encoder="tiny-random-bert", architecture="bert_decoder", ratio=0.3, scorer_layer=2,
                       decoder_heads=2, decoder_ffn=64, target_vocab_size=300, target_tokenizer="bpe", seed=3)
    m = NuggetModel.from_backbone(cfg, bpe).eval()
    with torch.no_grad():
        generator = torch.Generator().manual_seed(0)
        for p in m.decoder.parameters():
            if p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=generator) * 0.3)
    return m


@pytest.fixture(scope="module")
def nuggets(model):
    ids, mask = model.processor.collate_sources(model.processor.tokenize_sources(TEXTS), model.device)
    with torch.no_grad():
        return model.encode(ids, mask)


def test_beam_of_one_is_greedy(model, nuggets):
    greedy = greedy_decode(model, nuggets, MAX_NEW)
    assert beam_search(model, nuggets, MAX_NEW, num_beams=1) == greedy
    assert len({tuple(g) for g in greedy}) > 1  # the documents decode differently: not a constant model


def test_beam_of_five_never_scores_below_greedy(model, nuggets):
    greedy = greedy_decode(model, nuggets, MAX_NEW)
    beam = beam_search(model, nuggets, MAX_NEW, num_beams=5)
    greedy_scores = hypothesis_scores(model, nuggets, greedy, MAX_NEW)
    beam_scores = hypothesis_scores(model, nuggets, beam, MAX_NEW)
    for row, (b, g) in enumerate(zip(beam_scores, greedy_scores)):
        assert b >= g - 1e-5, f"document {row}: beam {beam[row]} scores {b} < greedy {g}"
    # Beam search must search: on some document it finds a strictly better hypothesis than greedy.
    assert any(b > g + 1e-4 for b, g in zip(beam_scores, greedy_scores))


def test_hypothesis_scores_match_the_decoders_own_step_scores(model, nuggets):
    """Teacher-forced scores equal the step-by-step log-probabilities of the cached greedy decoder."""
    greedy = greedy_decode(model, nuggets, MAX_NEW)
    tok = model.processor.target_tokenizer
    scores = hypothesis_scores(model, nuggets, greedy, MAX_NEW)
    bias = model.memory_bias(nuggets)
    for row, hyp in enumerate(greedy):
        sequence, total = [tok.eos_id] + list(tok.prefix_ids), 0.0
        targets = hyp + ([tok.eos_id] if len(hyp) < MAX_NEW else [])
        for token in targets:
            with torch.no_grad():
                hidden, _ = model.decoder(torch.tensor([sequence]), nuggets.vectors[row:row + 1], bias[row:row + 1])
                total += float(torch.log_softmax(model.decoder.logits(hidden[0, -1]), -1)[token])
            sequence.append(token)
        assert scores[row] == pytest.approx(total / len(targets), abs=1e-5)


def _hand_bleu(hyp_tokens, ref_tokens):
    """BLEU-4 by its definition (Papineni et al. 2002): clipped n-gram precisions summed over the corpus,
    geometric mean, brevity penalty."""
    matches, totals = [0] * 4, [0] * 4
    for h, r in zip(hyp_tokens, ref_tokens):
        for n in range(1, 5):
            hc = Counter(tuple(h[i:i + n]) for i in range(len(h) - n + 1))
            rc = Counter(tuple(r[i:i + n]) for i in range(len(r) - n + 1))
            matches[n - 1] += sum(min(c, rc[g]) for g, c in hc.items())
            totals[n - 1] += max(len(h) - n + 1, 0)
    hyp_len, ref_len = sum(map(len, hyp_tokens)), sum(map(len, ref_tokens))
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return 100 * bp * math.exp(sum(math.log(m / t) for m, t in zip(matches, totals)) / 4)


EN_HYP = ["the cat sat on the mat today", "a dog barked at the mailman all day long", "it rained"]
EN_REF = ["the cat sat on a mat today", "a dog barked at the postman all day", "it rained all night"]
ZH_HYP = ["我认为学习一个计算机系统就像学习一门新的外语", "虽然教程和文档很有帮助"]
ZH_REF = ["我认为学习计算机系统就像学习一门新外语", "虽然教程书籍和文档很有帮助"]


@pytest.mark.parametrize("objective,hyps,refs,split", [
    ("ae", EN_HYP, EN_REF, str.split),
    ("mt", ZH_HYP, ZH_REF, lambda text: [c for c in text if not c.isspace()]),  # zh: one token per character
])
def test_corpus_bleu_is_sacrebleus_and_the_definition(objective, hyps, refs, split):
    import sacrebleu

    ours = corpus_bleu(hyps, refs, BLEU_TOKENIZE[objective])
    theirs = sacrebleu.corpus_bleu(hyps, [refs], tokenize=BLEU_TOKENIZE[objective])
    assert ours["bleu"] == pytest.approx(theirs.score, abs=1e-9)
    assert ours["bleu_unit"] == pytest.approx(theirs.score / 100, abs=1e-12)
    assert f"tok:{BLEU_TOKENIZE[objective]}" in ours["signature"]
    assert ours["bleu"] == pytest.approx(_hand_bleu([split(h) for h in hyps], [split(r) for r in refs]), abs=1e-6)
    # Micro-averaged: not the mean of the sentences' BLEU.
    mean_sentence = sum(sacrebleu.sentence_bleu(h, [r], tokenize=BLEU_TOKENIZE[objective]).score
                        for h, r in zip(hyps, refs)) / len(hyps)
    assert abs(ours["bleu"] - mean_sentence) > 0.1


def test_zh_tokenisation_differs_from_13a_on_chinese():
    assert corpus_bleu(ZH_HYP, ZH_REF, "zh")["bleu"] != corpus_bleu(ZH_HYP, ZH_REF, "13a")["bleu"]


def test_corpus_bleu_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        corpus_bleu(["a", "b"], ["a"], "13a")


def test_dev_documents_name_the_file_and_key(tmp_path):
    path = tmp_path / "dev.jsonl"
    path.write_text('{"id": "d1", "source": "text", "target": "文本"}\n{"id": "d2", "source": "more"}\n',
                    encoding="utf-8")
    assert dev_documents(path, "ae") == [{"id": "d1", "source": "text", "reference": "text"},
                                         {"id": "d2", "source": "more", "reference": "more"}]
    assert dev_documents(path, "ae", max_documents=1)[0]["id"] == "d1"
    with pytest.raises(ValueError, match=r"dev.jsonl:2: key 'target'"):
        dev_documents(path, "mt")


def test_reconstruct_and_table(model, tmp_path):
    rows = [{"id": str(i), "source": t, "reference": t} for i, t in enumerate(TEXTS[:3])]
    records, summary = reconstruct(model, rows, "ae", num_beams=2, batch_size=2, max_new_tokens=6)
    assert [r["id"] for r in records] == ["0", "1", "2"]
    ks = [math.ceil(len(model.processor.tokenize_sources([t])[0]) * 0.3 - 1e-9) for t in TEXTS[:3]]
    assert [r["vectors"] for r in records] == ks
    assert summary["vectors_per_document"] == pytest.approx(sum(ks) / 3)
    trips = round_trip(TEXTS[:3], model.processor.target_tokenizer)
    assert [r["round_trip"] for r in records] == trips and summary["lowercased"] is False  # a cased BPE
    assert summary["bleu"] == pytest.approx(corpus_bleu([r["hypothesis"] for r in records], trips, "13a")["bleu"])
    assert summary["ceiling"] == pytest.approx(corpus_bleu(trips, TEXTS[:3], "13a")["bleu"])
    trainings = [{"best_dev_loss": 5.0, "train_steps": 9}, {"best_dev_loss": 6.0, "train_steps": 9},
                 {"best_dev_loss": 7.0, "train_steps": 9}]
    df = fig4_table([{**summary, "ratio": "0.1"}, {**summary, "ratio": "0", "vectors_per_document": 1},
                     {**summary, "objective": "mt", "ratio": "0.25"}], trainings)
    assert list(df["objective"]) == ["ae", "ae", "mt"] and list(df["ratio"]) == [0.0, 0.1, 0.25]
    assert df["best_dev_loss"].tolist() == [6.0, 5.0, 7.0]  # each row keeps its own model's loss after sorting
    with pytest.raises(ValueError, match="lacks key 'best_dev_loss'"):
        fig4_table([{**summary, "ratio": "0.1"}], [{"train_steps": 9}])
    with pytest.raises(ValueError, match="1 BLEU summaries but 2 training"):
        fig4_table([{**summary, "ratio": "0.1"}], trainings[:2])
    md = fig4_markdown(df, "Scale: test.")
    assert "| AE | 0 (one vector) | 1.00 |" in md and "| 6.000 | 9 | – |" in md and "| 5.000 | 9 | > 0.99 |" in md
    assert f"| {summary['ceiling']:.2f} | no |" in md and "round trip" in md
    plot_fig4(df, tmp_path / "fig4.png", "test")
    assert (tmp_path / "fig4.png").stat().st_size > 0
    assert df["paper_ae_bleu_at_least"].tolist()[1] == 0.99
    assert df["paper_ae_bleu_at_least"].isna().tolist() == [True, False, True]
