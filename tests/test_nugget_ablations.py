"""NUGGET Table 4 (§7.1): ablation configs build the models they name, r_sb is measured, the table reads models."""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from multivec.nugget.tables.table4 import (PAPER_TABLE4, TABLE4_COLUMNS, assemble_table4, table4_record,
                                        token_pooling_record, write_table4)
from multivec.nugget.configuration import (PAPER_SENTENCE_RATIO, SENTENCE_RATIO, TABLE4_ABLATIONS, ConfigError,
                                           ablation_config, ablation_settings, resolve_sentence_ratio)
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.processing import NuggetProcessor, load_source_tokenizer
from multivec.nugget.sentence_share import document_sentence_ends, read_share, sentence_final_share
from multivec.nugget.target_tokenizer import TargetTokenizer
from multivec.training.batching import pad_sequences

SENTENCES = [["The cat sat on the mat.", "It was happy."], ["Dogs bark loudly at night!"],
             ["Dr. Smith came home.", "He slept, then woke.", "Then he left."]]
TEXTS = [" ".join(s) for s in SENTENCES]
DEMO_LAYERS = {0: 0, 3: 3, 6: 4, 9: 5}  # config/config.yaml nugget_ablation.layers (MiniLM, 6 layers)
REPO = Path(__file__).resolve().parents[1]
BASE = {"encoder": "tiny-random-bert", "decoder_heads": 2, "decoder_ffn": 64, "target_vocab_size": 300}


def ends_of(sentences):
    ends, position = [], 0
    for sentence in sentences:
        position += len(sentence)
        ends.append(position)
        position += 1
    return ends


@pytest.fixture(scope="module")
def bpe():
    return TargetTokenizer.train_bpe(TEXTS * 3, 300)


@pytest.mark.parametrize("name", list(TABLE4_ABLATIONS))
def test_ablations_build_the_model_they_name_with_mapped_layers(bpe, name):
    """On a 6-layer tiny BERT with the demo's mapping: frozen layers, selector, feedback, nugget count."""
    from transformers import BertConfig, BertModel

    cfg = ablation_config(name, BASE, layers=DEMO_LAYERS, sentence_ratio=0.2)
    torch.manual_seed(0)
    backbone = BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=6, num_attention_heads=2,
                                    intermediate_size=64, attn_implementation="sdpa"), add_pooling_layer=False)
    processor = NuggetProcessor(load_source_tokenizer("tiny-random-bert", cfg.src_lang), bpe, cfg.max_source_tokens)
    model = NuggetModel(cfg, backbone, processor).train()
    layer = {"nugget_l0": 0, "nugget_l6": 4, "nugget_l9": 5}.get(name, 3)
    frozen = sum(not any(p.requires_grad for p in block.parameters()) for block in model.encoder.layers)
    assert cfg.scorer_layer == layer and frozen == layer
    assert (model.type_embedding is None) == (name == "no_feedback")
    rule_selectors = {"chunking": "chunking", "sentence_boundary": "sentence_boundary", "random": "random"}
    selector = rule_selectors.get(name, "learned")
    assert (model.rule_selector.kind if model.rule_selector else "learned") == selector
    assert (model.scorer is not None) == (selector == "learned") == cfg.residual
    assert cfg.ratio == (0.2 if name in ("nugget_r_sb", "sentence_boundary") else 0.1) and cfg.objective == "mt"
    processor = model.processor
    ids, mask = processor.collate_sources(processor.tokenize_sources(TEXTS), model.device)
    end_mask = None
    if name == "sentence_boundary":
        end_mask, _ = pad_sequences(processor.sentence_end_masks(TEXTS, [ends_of(s) for s in SENTENCES]), 0, model.device)
    nuggets = model.encode(ids, mask, sentence_end_mask=end_mask)
    expected = ([len(s) for s in SENTENCES] if name == "sentence_boundary"
                else [math.ceil(int(n) * cfg.ratio - 1e-9) for n in mask.sum(1)])
    assert nuggets.mask.sum(1).tolist() == expected
    decoder_input_ids, labels = processor.target_batch(processor.target_tokenizer.encode(TEXTS, 32), model.device)
    model(ids, mask, decoder_input_ids, labels, sentence_end_mask=end_mask).backward()


def test_sentence_ratio_stays_symbolic_until_measured():
    settings = ablation_settings("sentence_boundary", BASE, layers=DEMO_LAYERS)
    assert settings["ratio"] == SENTENCE_RATIO
    assert resolve_sentence_ratio(settings, 0.046)["ratio"] == 0.046
    assert resolve_sentence_ratio(ablation_settings("random", BASE), 0.046)["ratio"] == 0.1  # untouched
    assert ablation_config("nugget_r_sb", BASE).ratio == PAPER_SENTENCE_RATIO
    for bad in (0, 1.5, "0.04", True):
        with pytest.raises(ConfigError, match="r_sb"):
            resolve_sentence_ratio(settings, bad)
    with pytest.raises(ConfigError, match="l=6 has no mapping"):
        ablation_settings("nugget_l6", BASE, layers={0: 0, 3: 3})


def test_sentence_final_share_counts_the_selectors_tokens():
    cfg = ablation_config("sentence_boundary", BASE, sentence_ratio=0.2)
    rows = [{"id": str(i), "source": t, "source_sentence_ends": ends_of(s)} for i, (t, s) in
            enumerate(zip(TEXTS, SENTENCES))]
    share = sentence_final_share(cfg, rows)
    tokenizer = load_source_tokenizer("tiny-random-bert", "en_XX")
    tokens = sum(len(ids) for ids in tokenizer(TEXTS, truncation=True, max_length=cfg.max_source_tokens)["input_ids"])
    assert share["sentence_final_tokens"] == sum(len(s) for s in SENTENCES) == 6
    assert share["tokens"] == tokens and share["share"] == pytest.approx(6 / tokens)
    assert share["documents"] == 3 and share["paper_share"] == PAPER_SENTENCE_RATIO
    with pytest.raises(ValueError, match="source_sentence_ends"):
        sentence_final_share(cfg, [{"id": "x", "source": "No ends."}], source="corpus.jsonl")


def test_read_share_checks_the_file(tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({"share": 0.05}))
    bad.write_text(json.dumps({"tokens": 3}))
    assert read_share(good) == 0.05
    with pytest.raises(ValueError, match="bad.json.*'share'"):
        read_share(bad)


def test_document_sentence_ends_use_punkt_spans():
    text = "Dr. Smith went home. He slept!  Then more"
    assert document_sentence_ends([text]) == [[20, 30, len(text)]]
    assert document_sentence_ends(["", "  ", "A b."]) == [[], [], [4]]  # empty documents have no sentence


def _metrics(pi, rr):
    return {"pi": {"mrr": pi, "vectors_per_doc": 3.0}, "rr": {"mrr": rr, "vectors_per_doc": 5.0}}


def test_table4_reads_each_models_config_and_the_paper(tmp_path):
    records = []
    for name in TABLE4_ABLATIONS:
        saved = ablation_config(name, BASE, layers=DEMO_LAYERS, sentence_ratio=0.046).to_dict()
        records.append(table4_record(name, saved, _metrics(90.0, 40.0), {"train_steps": 7, "best_dev_loss": 6.5}))
    df = assemble_table4(records)
    assert list(df.columns) == TABLE4_COLUMNS and len(df) == len(TABLE4_ABLATIONS)
    by_name = df.set_index("name")
    assert by_name.loc["nugget_l9", "l"] == 5 and by_name.loc["nugget_l9", "paper_l"] == 9
    assert by_name.loc["nugget_l9", "frozen_bottom"] == 5
    assert by_name.loc["sentence_boundary", "r"] == 0.046 and by_name.loc["sentence_boundary", "selector"] == \
        "sentence_boundary"
    assert not by_name.loc["no_feedback", "feedback"] and by_name.loc["chunking", "feedback"]
    assert by_name.loc["nugget_l0", "paper_pi"] == PAPER_TABLE4["nugget_l0"][1] == 69.82
    assert pd.isna(by_name.loc["random", "paper_pi"]) and pd.isna(by_name.loc["random", "paper_rr"])
    assert (df["best_dev_loss"] == 6.5).all()
    share = {"share": 0.046, "encoder": "minilm", "documents": 3, "tokens": 100}
    write_table4(df, tmp_path / "t4.csv", tmp_path / "t4.md", ["Scale: test."], share)
    md = (tmp_path / "t4.md").read_text()
    assert "**0.0460**" in md and "0.033" in md and "| random |" in md and "| 6.500 |" in md
    assert pd.read_csv(tmp_path / "t4.csv")["PI"].tolist() == [90.0] * len(TABLE4_ABLATIONS)
    with pytest.raises(ValueError, match="no rr metrics"):
        table4_record("random", records and ablation_config("random", BASE).to_dict(), {"pi": {"mrr": 1.0}}, None)


def test_token_pooling_row_reads_table2s_evaluation_without_a_model(tmp_path):
    """Table 4's token-pooling row: Table 2's run at r = 0.1; no paper number, no model columns."""
    saved = ablation_config("nugget_l3", BASE, layers=DEMO_LAYERS).to_dict()
    records = [table4_record("nugget_l3", saved, _metrics(90.0, 40.0), {"train_steps": 7, "best_dev_loss": 6.5}),
               token_pooling_record(0.1, _metrics(80.0, 30.0))]
    df = assemble_table4(records).set_index("name")
    pooled = df.loc["token_pooling"]
    assert pooled["PI"] == 80.0 and pooled["RR"] == 30.0 and pooled["r"] == 0.1
    assert pooled["nuggets_per_doc_pi"] == 3.0 and pooled["configuration"].startswith("Token pooling")
    assert pooled[["paper_pi", "paper_rr", "l", "train_steps", "gate"]].isna().all()
    share = {"share": 0.046, "encoder": "minilm", "documents": 3, "tokens": 100}
    write_table4(df.reset_index(), tmp_path / "t4.csv", tmp_path / "t4.md", ["Scale: test."], share)
    assert "| token_pooling | Token pooling (not in the paper) |" in (tmp_path / "t4.md").read_text()
    with pytest.raises(ValueError, match="'token_pooling': no rr metrics"):
        token_pooling_record(0.1, {"pi": {"mrr": 1.0}})


def test_table4_token_pooling_reuses_table2s_pooling_and_scoring(mirror, tmp_path):
    """The Table 4 units read Table 2's token_pooling_r0.1 rankings under the row `token_pooling` (no seed): no
    second pooling or scoring, and the learned selector is compared with it."""
    snakemake = str(Path(sys.executable).parent / "snakemake")
    units = "results/units/nugget_table4.tables.parquet"
    result = subprocess.run([snakemake, "-n", "--directory", str(tmp_path), "results/nugget_table4_ablations.csv",
                             "--configfile", "config/smoke.yaml"], cwd=REPO, capture_output=True, text=True,
                            env=dict(os.environ, HF_HUB_OFFLINE="1"), timeout=600)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-5000:]
    blocks = {}
    for block in out.split("\nrule ")[1:]:
        output = re.search(r"^\s+output: (.*)$", block, re.MULTILINE)
        blocks.setdefault(block.split(":", 1)[0].strip(), []).append((output.group(1) if output else "", block))
    (_, units_job), = [(o, b) for o, b in blocks["units_nugget_table4"] if units in o]
    for task in ("pi", "rr"):
        assert f"results/table2/token_pooling_r0.1/{task}.rankings.jsonl" in units_job
    scored = [o for o, _ in blocks["evaluate_ranking"]]
    assert sorted(scored) == [f"results/table2/token_pooling_r0.1/{t}.json, "
                              f"results/table2/token_pooling_r0.1/{t}.rankings.jsonl" for t in ("pi", "rr")]
    assert "token_pooling" not in "".join(o for o, _ in blocks["evaluate_nugget_ablation"])
    assert len(blocks["token_pooling_encodings"]) == 2  # one pooling job per task, Table 2's
    (_, table_job), = blocks["nugget_table4"]
    assert "results/table2/token_pooling_r0.1/pi.json" in table_job
    import yaml

    comparisons = yaml.safe_load((REPO / "config/config.yaml").read_text())["statistics"]["comparisons"]
    assert "token_pooling" in comparisons["nugget_table4"][0]["against"]


def test_sentence_boundary_encoding_reads_each_documents_sentence_ends(bpe):
    """Evaluation documents: punkt sentence ends -> one nugget per sentence; without them, a clear error."""
    from multivec.nugget.encoding import encode_documents

    cfg = ablation_config("sentence_boundary", {**BASE, "scorer_layer": 1}, layers={3: 1}, sentence_ratio=0.2)
    model = NuggetModel.from_backbone(cfg, bpe)
    ends = document_sentence_ends(TEXTS)
    assert [len(e) for e in ends] == [len(s) for s in SENTENCES]
    documents = encode_documents(model, TEXTS, batch_size=2, sentence_ends=ends)
    assert [len(d.vectors) for d in documents] == [len(s) for s in SENTENCES]
    tokenizer = model.processor.source_tokenizer
    assert [d.nugget_tokens[-1] for d in documents] == [tokenizer.tokenize(t)[-1] for t in TEXTS]  # the final "." / "!"
    with pytest.raises(ValueError, match="sentence_ends"):
        encode_documents(model, TEXTS, batch_size=2)
    # The released PI set has empty documents: one nugget each, at the EOS (its last token).
    empty = encode_documents(model, ["", TEXTS[0]], batch_size=2, sentence_ends=document_sentence_ends(["", TEXTS[0]]))
    assert len(empty[0].vectors) == 1 and empty[0].nugget_tokens == [tokenizer.convert_ids_to_tokens(
        tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id)]
    assert len(empty[1].vectors) == len(SENTENCES[0])
