"""Positive-pair judges (subencoder/data/nli.py): the paper's NLI path on a tiny random model, the demo proxy on MiniLM."""
import pytest
import torch

from multivec.io.resources import load_tokenizer
from multivec.subencoder.data.nli import SimilarityProxy, TransformersNLI, content_forms, judge_from_config


def tiny_nli(folder, id2label, entail_bias_label=None):
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = load_tokenizer("minilm")
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=len(id2label), id2label=id2label,
                        label2id={v: k for k, v in id2label.items()})
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.zero_()
        if entail_bias_label is not None:
            model.classifier.bias[entail_bias_label] = 5.0
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_transformers_nli_needs_entailment_both_ways(tmp_path, monkeypatch):
    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    always = TransformersNLI(model=tiny_nli(tmp_path / "yes", labels, 0), device="cpu")
    assert always.positive([("A cat sat.", "A cat was sitting."), ("x", "y")]) == [True, True]
    never = TransformersNLI(model=tiny_nli(tmp_path / "no", labels, 1), device="cpu")
    assert never.positive([("A cat sat.", "A cat sat.")]) == [False]
    with pytest.raises(ValueError, match="no 'entailment' label"):
        TransformersNLI(model=tiny_nli(tmp_path / "bad", {0: "LABEL_0", 1: "LABEL_1"}), device="cpu").positive([("a", "b")])


def test_one_direction_is_not_enough(monkeypatch):
    judge = TransformersNLI(model="unused")
    # a premise entails its shorter hypothesis but not the reverse: only "a -> b" says entailment
    verdicts = {("Jolie signed in April 2016.", "Jolie signed."): True, ("Jolie signed.", "Jolie signed in April 2016."): False}

    class FakeBatch(dict):
        def to(self, device):
            return self

    class FakeModel:
        config = type("C", (), {"id2label": {0: "ENTAILMENT", 1: "neutral"}})()

        def eval(self):
            return self

        def to(self, device):
            return self

        def __call__(self, premises, hypotheses):
            logits = torch.tensor([[1.0, 0.0] if verdicts[(p, h)] else [0.0, 1.0] for p, h in zip(premises, hypotheses)])
            return type("O", (), {"logits": logits})()

    class FakeTokenizer:
        def __call__(self, premises, hypotheses, **kw):
            return FakeBatch(premises=premises, hypotheses=hypotheses)

    import transformers
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: FakeTokenizer())
    monkeypatch.setattr(transformers.AutoModelForSequenceClassification, "from_pretrained", lambda *a, **k: FakeModel())
    monkeypatch.setattr("multivec.io.resources.resolve_model", lambda ref: ref)
    assert judge.positive([("Jolie signed in April 2016.", "Jolie signed.")]) == [False]


def test_similarity_proxy_keeps_paraphrases_and_drops_topical_neighbours():
    judge = judge_from_config({"kind": "proxy", "encoder": "minilm", "threshold": 0.7, "min_overlap": 0.3})
    assert isinstance(judge, SimilarityProxy) and judge.stand_in and "stand-in" in judge.name
    pairs = [("Jolie signed on in April 2016", "In April 2016, Jolie signed on"),
             ("Jolie signed on in April 2016", "The film was released in the United States in October 2019"),
             ("The panda is a species of mammal", "The giant panda inhabits mountain regions of Sichuan")]
    assert judge.positive(pairs) == [True, False, False]
    assert content_forms("The museums in Pittsburgh") == frozenset({"museum", "pittsburgh"})
    with pytest.raises(ValueError, match="subencoder.nli.kind"):
        judge_from_config({"kind": "oracle"})
