"""NUGGET's per-unit scores: each reader reproduces its table's summary number exactly, the
tables get CI columns and a tests CSV, the declared comparisons are what the config says, and every
trained model carries its training seed (path, model config, train config)."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from multivec.evaluation.ranking_evaluation import result_from_scores
from multivec.nugget.tables.uncertainty import ranking_measurements
from multivec.statistics import estimate_cell, table_statistics_from_units
from multivec.io import write_jsonl
from multivec.nugget.analysis.reconstruction_bleu import BLEU_TOKENIZE, bleu_measurement, corpus_bleu
from multivec.nugget.analysis.selected_tokens import SHARE_METRICS, share_components, share_measurements
from multivec.nugget.language_model import segment_word_nll, word_perplexity
from multivec.nugget.lm_table3 import lm_measurements, segment_records
from multivec.statistics import compute_statistic, write_units
from multivec.tasks.ranking_task import RankingQuery, RankingTask

from conftest import REPO

SETTINGS = {"alpha": 0.05, "confidence": 0.95, "bootstrap_resamples": 200, "permutation_resamples": 200}


def _rankings(tmp_path, name, seed):
    """A 30-query ranking task scored at random; the rankings file and the MRR×100 it reports."""
    rng = np.random.default_rng(seed)
    queries = [RankingQuery(f"q{k}", [f"d{j}" for j in range(5)], int(rng.integers(5))) for k in range(30)]
    task = RankingTask({**{f"q{k}": "x" for k in range(30)}, **{f"d{j}": "y" for j in range(5)}}, queries)
    result = result_from_scores(task, rng.normal(size=(30, 5)), "cosine")
    path = tmp_path / f"{name}.rankings.jsonl"
    result.write_rankings(path)
    return path, result.mrr


def test_ranking_units_reproduce_mrr_and_the_table_gets_cis_and_tests(tmp_path):
    files, mrr = [], {}
    for row, seed, offset in [("nugget", 13, 0), ("nugget", 14, 1), ("tsdae", 13, 2), ("tsdae", 14, 3),
                              ("bm25", None, 4)]:
        for task in ("pi", "rr"):
            path, mrr[(row, seed, task)] = _rankings(tmp_path, f"{row}{seed}{task}", offset * 10 + len(task))
            files.append((path, row, seed, task))
    measurements = ranking_measurements(files)
    for m, (_, row, seed, task) in zip(measurements, files):
        assert (m.row, m.seed, m.metric, m.statistic) == (row, seed, task.upper(), "mean")
        assert compute_statistic("mean", m.values) == pytest.approx(mrr[(row, seed, task)], abs=1e-9)
    units = tmp_path / "table2.tables.parquet"
    write_units(units, measurements)
    comparisons = [{"row": "nugget", "against": ["tsdae"]}]
    stats = table_statistics_from_units(units, comparisons, SETTINGS)
    frame = pd.DataFrame({"row": ["nugget", "tsdae", "bm25"], "PI": [0.0, 0.0, 0.0], "RR": [0.0, 0.0, 0.0]})
    table = stats.add_columns(frame, "row", ["PI", "RR"], require=True)
    assert list(table.columns) == ["row", "PI", "PI_lo", "PI_hi", "PI_sd", "RR", "RR_lo", "RR_hi", "RR_sd", "n_seeds"]
    assert table["n_seeds"].tolist() == [2, 2, 1]
    nugget = table.iloc[0]
    assert nugget["PI"] == pytest.approx((mrr[("nugget", 13, "pi")] + mrr[("nugget", 14, "pi")]) / 2)
    assert nugget["PI_lo"] <= nugget["PI"] <= nugget["PI_hi"] and nugget["PI_sd"] > 0
    assert math.isnan(table.iloc[2]["PI_sd"])  # one (untrained) seed: no seed-to-seed SD
    cell = estimate_cell(table.iloc[0].to_dict(), "PI")
    assert cell.startswith(f"{nugget['PI']:.2f} [") and " ±" in cell
    stats.write_tests(tmp_path / "tests.csv")
    tests = pd.read_csv(tmp_path / "tests.csv")
    assert tests[["row", "against", "metric"]].values.tolist() == [["nugget", "tsdae", "PI"], ["nugget", "tsdae", "RR"]]
    assert tests["p_holm"].between(0, 1).all()
    with pytest.raises(ValueError, match="no per-unit scores"):
        stats.add_columns(pd.DataFrame({"row": ["colbart"]}), "row", ["PI"], require=True)


def test_bleu_units_reproduce_corpus_bleu(tmp_path):
    """Units score each hypothesis against its reference's round trip, lowercased when the records say so."""
    rows = [{"id": "a", "hypothesis": "the cat sat on the mat today", "round_trip": "The cat sat on the mat"},
            {"id": "b", "hypothesis": "a dog ran in the park , fast", "round_trip": "a dog ran fast in the big park ."},
            {"id": "c", "hypothesis": "Nothing here matches", "round_trip": "something else entirely was written"}]
    for lowercased in (False, True):
        write_jsonl(tmp_path / "bleu.jsonl", [{**r, "reference": "unused", "lowercased": lowercased} for r in rows])
        m = bleu_measurement(tmp_path / "bleu.jsonl", "ae_r0.1", 13, "ae")
        assert (m.row, m.metric, m.statistic, m.units) == ("ae_r0.1", "BLEU", "bleu", ["a", "b", "c"])
        expected = corpus_bleu([r["hypothesis"] for r in rows], [r["round_trip"] for r in rows], BLEU_TOKENIZE["ae"],
                               lowercase=lowercased)
        assert compute_statistic("bleu", m.values) == pytest.approx(expected["bleu"], abs=1e-9)
    write_jsonl(tmp_path / "old.jsonl", [{"id": "a", "hypothesis": "x", "reference": "x"}])
    with pytest.raises(ValueError, match=r"old.jsonl:1: key 'round_trip'"):
        bleu_measurement(tmp_path / "old.jsonl", "ae_r0.1", 13, "ae")


def test_share_units_count_delimiters_and_the_per_document(tmp_path):
    docs = [{"id": "d0", "types": ["[CLS]", "the", "cat", ",", "the", "dog", ".", "[SEP]"],
             "selected": [False, False, False, True, True, False, False, True]},
            {"id": "d1", "types": ["[CLS]", "a", "/", "file", "[SEP]"], "selected": [False, False, True, False, False]}]
    assert share_components(docs[0]) == {"nugget_share_eos_punct": (2, 3), "text_share_eos_punct": (3, 8),
                                         "nugget_share_the": (1, 3), "text_share_the": (2, 8)}
    write_jsonl(tmp_path / "sel.jsonl", docs)
    found = {m.metric: m for m in share_measurements(tmp_path / "sel.jsonl", "ae", 13)}
    assert list(found) == SHARE_METRICS
    # summed over documents: the sample's shares (what type_counts reports for the whole sample)
    assert compute_statistic("ratio", found["nugget_share_eos_punct"].values) == pytest.approx(3 / 4)
    assert compute_statistic("ratio", found["text_share_eos_punct"].values) == pytest.approx(5 / 13)
    assert compute_statistic("ratio", found["text_share_the"].values) == pytest.approx(2 / 13)


def test_segment_units_reproduce_word_perplexity_and_drops(tmp_path):
    rng = np.random.default_rng(0)
    # two segments of one stream; word 3 spans both segments, word 5 is OOV, word 7 is cut (1 of its 2 tokens)
    token_word = [(0, 0), (0, 1), (0, 1), (0, 2), (0, 3), (0, 3), (0, 4), (0, 5), (0, 6), (0, 7)]
    token_segment = ["0:0"] * 5 + ["0:1"] * 5
    words = {(0, 0): ("a", 1), (0, 1): ("bb", 2), (0, 2): ("c", 1), (0, 3): ("dd", 2), (0, 4): ("e", 1),
             (0, 5): ("<unk>", 1), (0, 6): ("f", 1), (0, 7): ("gg", 2)}
    per_history = {}
    for h in (0, 1, 2):
        nll = rng.uniform(0.5, 3.0, size=len(token_word)) / (1 + h)
        summary = word_perplexity(nll, token_word, words)
        per_segment = segment_word_nll(nll, token_word, token_segment, words)
        total = sum(v for v, _ in per_segment.values())
        assert sum(n for _, n in per_segment.values()) == summary["words"] == 6
        assert math.exp(total / summary["words"]) == pytest.approx(summary["ppl"], rel=1e-12)
        assert per_segment["0:0"][1] == 4  # a, bb, c and dd (first token in segment 0:0)
        per_history[h] = (summary, per_segment)
    write_jsonl(tmp_path / "seg.jsonl", segment_records({h: v[1] for h, v in per_history.items()}))
    found = {m.metric: m for m in lm_measurements(tmp_path / "seg.jsonl", "nugget_r0.1", 13, [0, 1, 2])}
    assert list(found) == ["ppl_h0", "ppl_h1", "ppl_h2", "drop_h0_h1", "drop_h0_h2"]
    for h in (0, 1, 2):
        assert compute_statistic("perplexity", found[f"ppl_h{h}"].values) == pytest.approx(per_history[h][0]["ppl"])
    assert compute_statistic("relative_drop", found["drop_h0_h2"].values) == pytest.approx(
        1 - per_history[2][0]["ppl"] / per_history[0][0]["ppl"])
    with pytest.raises(ValueError, match="needs h = 0"):
        lm_measurements(tmp_path / "seg.jsonl", "nugget_r0.1", 13, [0, 4])


def test_tiny_random_encoder_is_the_same_for_every_training_seed():
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.modeling import NuggetModel

    settings = dict(encoder="tiny-random-bert", architecture="bert_decoder", scorer_layer=1, decoder_layers=1,
                    decoder_heads=2, decoder_ffn=32, target_tokenizer="source", objective="ae", ratio=0.25)
    a = NuggetModel.from_backbone(NuggetConfig.from_dict({**settings, "seed": 13}))
    b = NuggetModel.from_backbone(NuggetConfig.from_dict({**settings, "seed": 14}))
    encoder_a, encoder_b = a.encoder.state_dict(), b.encoder.state_dict()
    assert encoder_a and all(np.array_equal(encoder_a[k].numpy(), encoder_b[k].numpy()) for k in encoder_a)
    scorer_a, scorer_b = a.scorer.state_dict(), b.scorer.state_dict()
    assert not all(np.array_equal(scorer_a[k].numpy(), scorer_b[k].numpy()) for k in scorer_a)  # new parts: seeded


def test_config_declares_the_nugget_comparisons_and_claims_name_registered_rows():
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    comparisons = config["statistics"]["comparisons"]
    assert {"row": "nugget_mt_r0.1", "against": ["tsdae_mt", "token_pooling_r0.1"]} in comparisons["table2"]
    assert {"row": "nugget_ae_r0.25", "against": ["tsdae_ae", "token_pooling_r0.25"]} in comparisons["table2"]
    assert comparisons["nugget_table4"][0] == {"row": "nugget_l3", "against": ["random", "chunking",
                                                                              "sentence_boundary", "nugget_l0",
                                                                              "no_feedback",
                                                                              "token_pooling"]}
    table2_rows = {r["name"] for r in config["table2"]["rows"]}
    assert {c["row"] for c in comparisons["table2"]} | {b for c in comparisons["table2"] for b in c["against"]} \
        <= table2_rows
    claims = yaml.safe_load((REPO / "config/claims.yaml").read_text())["claims"]
    ids = [c["id"] for c in claims if c["work"] == "nugget"]
    assert ids == [f"N{k}" for k in range(1, 13)]
    smoke = yaml.safe_load((REPO / "config/smoke.yaml").read_text())
    assert {"N3", "N6", "N7"} <= set(smoke["statistics"]["skip_claims"])


def test_claim_units_train_every_claim_seed_into_its_own_folder(mirror, tmp_path):
    """The claim seeds' unit files (smoke with two claim seeds, 13 and 14: tests/fixtures/smoke_two_claim_seeds.yaml)
    train each claimed Table 2 / ablation / long / LM model once per seed, into its own folder, and leave out the
    rows no claim names."""
    snakemake = str(Path(sys.executable).parent / "snakemake")
    targets = [f"results/units/{t}.claims.parquet" for t in ("table2", "nugget_table4", "nugget_fig4",
                                                                      "nugget_fig5", "nugget_fig7_8", "nugget_table3")]
    listed = subprocess.run([snakemake, "--summary", "--cores", "1", *targets, "--configfile", "config/smoke.yaml",
                             "tests/fixtures/smoke_two_claim_seeds.yaml"],
                            cwd=REPO, capture_output=True, text=True, timeout=600)
    assert listed.returncode == 0, listed.stderr[-3000:]
    out = listed.stdout
    for seed in (13, 14):
        # one zoo: smoke's scorer layer is 2
        for path in (f"models/nugget/mt/r0.1_l2_learned_fb/seed{seed}/model.safetensors",
                     f"models/nugget/mt/tsdae/seed{seed}/config.json",
                     f"models/nugget/ae/r0.1_l2_learned_fb/seed{seed}/model.safetensors",
                     f"models/nugget/mt/r0.1_l2_random_fb/seed{seed}/model.safetensors",
                     f"models/nugget_lm/nugget_r0.1/seed{seed}/model.safetensors",
                     f"results/table2/nugget_mt_r0.1/seed{seed}/pi.rankings.jsonl"):
            assert path in out, path
    assert "models/nugget/mt/r0.1_l2_learned_fb/model.safetensors" not in out
    # every seed starts from the one shared r = 1 model of its objective (data seed 13)
    assert "models/nugget/mt/base_r1/seed13/model.safetensors" in out
    assert "models/nugget/mt/base_r1/seed14/" not in out
    # only the rows a claim names are trained at the claim seeds
    # (AE r = 0.25 is trained at seed 14: Table 2's row is Fig. 4's ae_r0.25, which a claim names)
    for path in ("models/nugget/mt/rsb_l2_learned_fb/seed14/",
                 "models/nugget_lm/transformer/seed14/", "results/table2/bm25/"):
        assert path not in out, path
    assert "results/units/table2.claims.parquet" in out
