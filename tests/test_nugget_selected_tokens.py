"""Fig. 5 (§5.2): token types among the nuggets against the text, and the paper's observations as numbers."""

import math

import pytest
import torch

from multivec.nugget.analysis.selected_tokens import (OBSERVATION_COLUMNS, ScoredDocument, observations,
                                                      score_documents, short_documents,
                                                      token_type, type_counts)
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.target_tokenizer import TargetTokenizer

TEXTS = ["The cat sat on the mat, and the dog sat on the rug.", "Dogs bark loudly at night!",
         "A much longer document that goes on and on, with commas, periods. And more words than the others have."]


@pytest.fixture(scope="module")
def model():
    bpe = TargetTokenizer.train_bpe(TEXTS * 3, 300)
    cfg = NuggetConfig(encoder="tiny-random-bert", architecture="bert_decoder", ratio=0.25, scorer_layer=2,
                       decoder_heads=2, decoder_ffn=64, target_vocab_size=300, target_tokenizer="bpe")
    return NuggetModel.from_backbone(cfg, bpe).eval()


def test_token_type_names_specials_and_decodes_words(model):
    tok = model.processor.source_tokenizer
    assert token_type(tok, tok.cls_token_id) == "[CLS]" and token_type(tok, tok.sep_token_id) == "[SEP]"
    assert token_type(tok, tok.convert_tokens_to_ids("the")) == "the"
    assert token_type(tok, tok.convert_tokens_to_ids("##ing")) == "##ing"  # a continuation stays distinct


def test_selection_is_the_models_top_k_of_every_tokens_score(model):
    ids = model.processor.tokenize_sources(TEXTS)
    docs = score_documents(model, [(str(i), x) for i, x in enumerate(ids)], batch_size=2)
    for doc, x in zip(docs, ids):
        k = math.ceil(len(x) * 0.25 - 1e-9)
        assert doc.ids == x and len(doc.scores) == len(x) and sum(doc.selected) == k
        top = sorted(range(len(x)), key=lambda i: -doc.scores[i])[:k]
        assert sorted(top) == [i for i, s in enumerate(doc.selected) if s]
    # Scores of the selected tokens are the ones the model passes to the decoder (residual, eq. 5).
    batch_ids, mask = model.processor.collate_sources(ids, model.device)
    with torch.no_grad():
        nuggets = model.encode(batch_ids, mask)
    for row, doc in enumerate(docs):
        chosen = [doc.scores[i] for i, s in enumerate(doc.selected) if s]
        assert chosen == pytest.approx(nuggets.scores[row][nuggets.mask[row]].tolist(), abs=1e-5)


def test_counts_and_observations_by_hand(model):
    tok = model.processor.source_tokenizer
    t = tok.convert_tokens_to_ids
    cls, sep, the, cat, comma = tok.cls_token_id, tok.sep_token_id, t("the"), t("cat"), t(",")
    docs = [ScoredDocument("a", [cls, the, cat, comma, the, sep], [0.0] * 6, [False, False, False, True, False, True]),
            ScoredDocument("b", [cls, the, the, sep], [0.0] * 4, [False, True, False, False])]
    counts = type_counts(tok, docs).set_index("type")
    assert counts.loc["the", "text_count"] == 4 and counts.loc["the", "nugget_count"] == 1
    assert counts.loc["the", "text_share"] == pytest.approx(4 / 10)
    assert counts.loc["the", "nugget_share"] == pytest.approx(1 / 3)
    assert counts.loc["[CLS]", "nugget_count"] == 0 and counts.loc["cat", "nugget_share"] == 0
    assert counts["nugget_share"].sum() == pytest.approx(1) and counts["text_share"].sum() == pytest.approx(1)
    obs = {o["statistic"]: o for o in observations(tok, docs, counts.reset_index())}
    assert obs["eos_selection_rate"]["token"] == "[SEP]" and obs["eos_selection_rate"]["value"] == 0.5
    assert obs["bos_selection_rate"]["token"] == "[CLS]" and obs["bos_selection_rate"]["value"] == 0
    assert obs["the_text_share"]["value"] == pytest.approx(0.4) and obs["the_text_share"]["paper_value"] == 0.052
    assert obs["the_nugget_share"]["value"] == pytest.approx(1 / 3) and obs["the_nugget_share"]["paper_value"] == 0.007
    assert obs["nuggets_per_token"]["value"] == pytest.approx(3 / 10)
    # CIs over the two documents: a resample is {a, a}, {a, b} or {b, b}, so 'the' (2 of 6 tokens
    # in a, 2 of 4 in b) spans 1/3..1/2, and the EOS rate (a's EOS selected, b's not) spans 0..1
    the = counts.loc["the"]
    assert 1 / 3 - 1e-9 <= the["text_share_lo"] < 0.4 < the["text_share_hi"] <= 0.5 + 1e-9
    assert the["nugget_share_lo"] <= 1 / 3 <= the["nugget_share_hi"]
    assert (obs["eos_selection_rate"]["value_lo"], obs["eos_selection_rate"]["value_hi"]) == (0.0, 1.0)
    assert obs["the_text_share"]["value_lo"] == the["text_share_lo"] and obs["documents"]["value_lo"] is None
    assert set(OBSERVATION_COLUMNS) - {"objective"} == set(obs["documents"])


def test_short_documents_keep_the_length_limit_and_name_the_file(model, tmp_path):
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(f'{{"id": "d{i}", "source": "{t}"}}\n' for i, t in enumerate(TEXTS)), encoding="utf-8")
    limit = len(model.processor.tokenize_sources([TEXTS[0]])[0])
    kept = short_documents(path, model, max_documents=10, max_tokens=limit)
    assert [row["id"] for row, _ in kept] == ["d0", "d1"] and all(len(ids) <= limit for _, ids in kept)
    assert [row["id"] for row, _ in short_documents(path, model, 1, limit)] == ["d0"]
    with pytest.raises(ValueError, match="dev.jsonl: no document has at most 2 source tokens"):
        short_documents(path, model, 10, 2)
    path.write_text('{"id": "d0"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"dev.jsonl:1: key 'id' or 'source'"):
        short_documents(path, model, 10, limit)


def test_one_vector_model_is_refused():
    cfg = NuggetConfig(encoder="tiny-random-bert", architecture="bert_decoder", ratio=1.0, scorer_layer=2,
                       decoder_heads=2, decoder_ffn=64, target_vocab_size=300, target_tokenizer="bpe",
                       bottleneck="mean", residual=False, feedback=False)
    m = NuggetModel.from_backbone(cfg, TargetTokenizer.train_bpe(TEXTS * 3, 300))
    with pytest.raises(ValueError, match="no learned scorer"):
        score_documents(m, [("a", [1, 2, 3])])
