"""The shared Markdown table helper (``multivec.io.markdown_table``) and every writer that uses it.

The writer tests pin the table block of each writer's output (the blank line before it, the table, the line
after it) on a small fixed input; the expected strings were rendered by the writers as they were before they
used the helper, so they check that the refactor left every Markdown file byte-identical.
"""

import math

import pandas as pd
import pytest

from multivec.io.markdown_table import markdown_row, markdown_table

NAN = math.nan


# ---------------------------------------------------------------- the helper

def test_markdown_table_lines():
    assert markdown_table(["a", "b c"], [["1", "x"], ["", "y | z"]]) == [
        "| a | b c |", "|---|---|", "| 1 | x |", "|  | y | z |"]
    assert markdown_table(("only",), iter([("v",)])) == ["| only |", "|---|", "| v |"]
    assert markdown_table(["a", "b"], []) == ["| a | b |", "|---|---|"]
    assert markdown_row(["p", "q"]) == "| p | q |"


def test_markdown_table_separator_matches_the_old_spellings():
    for n in (1, 3, 12):
        columns = [f"c{k}" for k in range(n)]
        separator = markdown_table(columns, [])[1]
        assert separator == "|" + "---|" * n == "|" + "|".join("---" for _ in columns) + "|" == "|---" * n + "|"


@pytest.mark.parametrize("row, cells", [(["1"], 1), (["1", "2", "3"], 3)])
def test_markdown_table_refuses_a_row_of_the_wrong_width(row, cells):
    with pytest.raises(ValueError, match=rf"row 2 has {cells} cells, the header 2 columns"):
        markdown_table(["a", "b"], [["x", "y"], row])


# ---------------------------------------------------------------- the writers, unchanged

def _block(text: str) -> str:
    """The table of a writer's output with the line before and after it."""
    lines = text.split("\n")
    rows = [k for k, line in enumerate(lines) if line.startswith("|")]
    return "\n".join(lines[max(rows[0] - 1, 0):rows[-1] + 2])


def _table1_frame():
    from multivec.nugget.tables.table1 import TABLE1_COLUMNS

    return pd.DataFrame([
        {"task": "PI", "corpus": "ParaBank", "n_queries": 1024, "mean_query_tokens": 241.3027,
         "mean_document_tokens": 242.1318, "n_documents": 1024, "unknown_token_share": 8.17e-05,
         "unknown_tokenizer": "minilm", "unknown_over_threshold": False, "paper_corpus": "ParaBank",
         "paper_n_queries": 1024, "paper_mean_query_tokens": 241.3, "paper_mean_document_tokens": 242.1},
        {"task": "RR", "corpus": "MS MARCO", "n_queries": 121, "mean_query_tokens": 6.1,
         "mean_document_tokens": 58.25, "n_documents": 2420, "unknown_token_share": 0.0123,
         "unknown_tokenizer": "minilm", "unknown_over_threshold": True, "paper_corpus": NAN,
         "paper_n_queries": NAN, "paper_mean_query_tokens": NAN, "paper_mean_document_tokens": NAN},
    ], columns=TABLE1_COLUMNS)


def _table2_frame():
    common = {"multi_vector": True, "n_queries_PI": 1024, "n_queries_RR": 121, "gate": "ok"}
    return pd.DataFrame([
        {**common, "row": "nugget_mt_r0.1", "model": "NUGGET", "objective": "MT", "ratio": 0.1, "PI": 94.192,
         "PI_lo": 92.954, "PI_hi": 95.46, "PI_sd": 0.42, "RR": 87.775, "RR_lo": 82.3, "RR_hi": 92.438, "RR_sd": NAN,
         "paper_PI": 96.69, "paper_RR": 50.04, "vectors_per_doc": 34.243, "train_steps": 60.0,
         "best_dev_loss": 5.9413, "unigram_nats": 6.77996},
        {**common, "row": "bm25", "model": "BM25", "objective": NAN, "ratio": NAN, "multi_vector": False,
         "PI": 88.5, "PI_lo": NAN, "PI_hi": NAN, "PI_sd": NAN, "RR": NAN, "RR_lo": NAN, "RR_hi": NAN, "RR_sd": NAN,
         "paper_PI": NAN, "paper_RR": 46.2, "vectors_per_doc": NAN, "train_steps": NAN, "best_dev_loss": NAN,
         "unigram_nats": NAN, "gate": NAN},
    ])


def _table4_frame():
    return pd.DataFrame([
        {"name": "nugget_l6", "configuration": "NUGGET (l = 6)", "selector": "learned", "paper_l": 6.0, "l": 4.0,
         "frozen_bottom": 4.0, "r": 0.1, "feedback": True, "PI": 94.4088, "PI_lo": 93.147, "PI_hi": 95.6297,
         "PI_sd": NAN, "RR": 88.355, "RR_lo": 83.059, "RR_hi": 92.89, "RR_sd": 1.5, "paper_pi": 93.24,
         "paper_rr": 48.84, "nuggets_per_doc_pi": 27.5254, "nuggets_per_doc_rr": 40.96, "train_steps": 60.0,
         "best_dev_loss": 5.937, "unigram_nats": 6.779958, "gate": "ok"},
        {"name": "random", "configuration": "random selector", "selector": "random", "paper_l": NAN, "l": 3.0,
         "frozen_bottom": 3.0, "r": 0.1, "feedback": False, "PI": 90.0, "PI_lo": NAN, "PI_hi": NAN, "PI_sd": NAN,
         "RR": NAN, "RR_lo": NAN, "RR_hi": NAN, "RR_sd": NAN, "paper_pi": NAN, "paper_rr": NAN,
         "nuggets_per_doc_pi": 27.5254, "nuggets_per_doc_rr": 40.96, "train_steps": 60.0, "best_dev_loss": 5.99,
         "unigram_nats": 6.779958, "gate": "FAILED: 7.0 >= 6.78"},
    ])


def _table3_rows():
    return [
        {"row": "nugget_r0.05", "model": "NUGGET r=0.05", "ppl_h0": 2419.18, "ppl_h0_lo": 2030.42,
         "ppl_h0_hi": 2893.69, "ppl_h0_sd": NAN, "ppl_h1": 2186.08, "ppl_h1_lo": 1841.69, "ppl_h1_hi": 2612.87,
         "ppl_h1_sd": 12.5, "drop_h0_h1": 0.096356, "drop_h0_h1_lo": 0.082727, "drop_h0_h1_hi": 0.108895,
         "paper_h0": "", "paper_h1": 29.88},
        {"row": "transformer", "model": "Transformer", "ppl_h0": 2500.0, "ppl_h1": 2500.0, "drop_h0_h1": 0.0,
         "paper_h0": 31.2, "paper_h1": ""},
    ]


def _fig4_frame():
    return pd.DataFrame([
        {"row": "ae_r0", "objective": "ae", "ratio": 0.0, "vectors_per_document": 1.0, "BLEU": 0.0, "BLEU_lo": 0.0,
         "BLEU_hi": 0.0, "BLEU_sd": NAN, "bleu_unit": 0.0, "ceiling": 92.47, "lowercased": True, "documents": 64,
         "best_dev_loss": 5.8718, "train_steps": 60, "paper_ae_bleu_at_least": NAN},
        {"row": "mt_r0.1", "objective": "mt", "ratio": 0.1, "vectors_per_document": 12.3456, "BLEU": 41.2345,
         "BLEU_lo": 39.5, "BLEU_hi": 43.01, "BLEU_sd": 0.7, "bleu_unit": 0.4123, "ceiling": 99.1, "lowercased": False,
         "documents": 64, "best_dev_loss": 3.25, "train_steps": 120, "paper_ae_bleu_at_least": 0.99},
    ])


def _gain_bins_frame():
    return pd.DataFrame([
        {"row": "len64", "gain_before_20plus": -0.0064, "gain_before_5_19": -0.0068, "gain_before_1_4": -0.00734,
         "gain_before_1_4_lo": -0.00974, "gain_before_1_4_hi": -0.00512, "gain_before_1_4_sd": 0.001,
         "gain_d0": 0.0395, "gain_d0_lo": 0.0334, "gain_d0_hi": 0.0461, "gain_d0_sd": NAN,
         "gain_after_1_4": -0.0079, "gain_after_5_19": -0.00704, "gain_after_20plus": NAN, "documents": 100},
    ])


def _memory_use_rows():
    bins = {f"{kind}_{name}{suffix}": value for name, value in zip(("d0", "d1", "d2", "d3plus"), (1.83, 5.32, 5.69, 6.31))
            for kind, suffix, value in (("nats", "", value), ("nats", "_lo", value - 0.1),
                                        ("nats", "_hi", value + 0.1), ("share", "", value / 20))}
    return [
        {"model": "nugget_ae_r0.25", "folder": "models/nugget/ae/r0.25/seed13", "unigram_nats": 6.66711,
         "nats_own": 4.73094, "nats_own_lo": 4.6376, "nats_own_hi": 4.82434, "nats_other_document": 7.44092,
         "nats_other_document_lo": 7.32632, "nats_other_document_hi": 7.56318, "memory_gain": 2.70998,
         "memory_gain_lo": 2.63862, "memory_gain_hi": 2.77689, "distance_bins": "", **bins},
        {"model": "tsdae_mt", "folder": "models/nugget/mt/tsdae/seed13", "unigram_nats": 6.78, "nats_own": 5.9,
         "nats_own_lo": 5.8, "nats_own_hi": 6.0, "nats_other_document": NAN, "memory_gain": NAN,
         "distance_bins": "targets are translations"},
    ]


def _shares_frame():
    return pd.DataFrame([
        {"row": "ae", "nugget_share_eos_punct": 0.008678, "nugget_share_eos_punct_lo": 0.00336,
         "nugget_share_eos_punct_hi": 0.015182, "nugget_share_eos_punct_sd": NAN, "text_share_eos_punct": 0.14272,
         "nugget_share_the": 0.001335, "nugget_share_the_lo": 0.0, "nugget_share_the_hi": 0.003345,
         "nugget_share_the_sd": 0.0002, "text_share_the": NAN},
    ])


def _table_statistics():
    from multivec.statistics.tables import TableStatistics

    summary = pd.DataFrame({"row": ["a", "b", "a"], "metric": ["PI", "PI", "pearson"], "mean": [90.0, 85.0, 0.5]})
    tests = pd.DataFrame([
        {"row": "a", "against": "b", "metric": "PI", "difference": 5.2458, "difference_lo": 4.0713,
         "difference_hi": 6.4354, "p": 0.00019996, "p_holm": 0.0039992, "significant": True},
        {"row": "a", "against": "c", "metric": "pearson", "difference": -0.01234, "difference_lo": -0.05,
         "difference_hi": 0.0251, "p": 0.5, "p_holm": 0.5, "significant": False},
        {"row": "b", "against": "c", "metric": "PI", "difference": 0.0, "difference_lo": -1.0, "difference_hi": 1.0,
         "p": 0.00001234, "p_holm": NAN, "significant": False},
    ])
    return TableStatistics(summary=summary, tests=tests, alpha=0.05, stacks={})


def _claims_frame():
    return pd.DataFrame([
        {"id": "N1", "claim": "NUGGET MT r = 0.1 >= TSDAE MT on PI", "source": "§6.1.3, Table 2",
         "paper": "96.69 / 95.04", "ours": "93.84 [92.57, 95.09] ±0.42", "difference": -1.2345,
         "difference_lo": -2.5, "difference_hi": 0.031, "p_holm": 0.0123, "n_seeds": 3.0, "verdict": "not supported",
         "note": "demo scale"},
        {"id": "S2", "claim": "a claim without a comparison", "source": "Table 7", "paper": "", "ours": "",
         "difference": NAN, "difference_lo": NAN, "difference_hi": NAN, "p_holm": NAN, "n_seeds": NAN,
         "verdict": "not measured", "note": ""},
    ])


def _subencoder_frame():
    return pd.DataFrame([
        {"row": "word Jaccard [authors]", "dim": NAN, "P@1": 29.51, "P@1_lo": 24.93, "P@1_hi": 34.67, "P@1_sd": NAN,
         "R@5": 62.8, "top1_own_sentence_pct": 46.99, "paper_row": "", "queries": 349, "stand_in": True},
        {"row": "SubEncoder (MiniLM)", "dim": 384.0, "P@1": 41.0, "P@1_lo": 37.1, "P@1_hi": 45.25, "P@1_sd": 1.3,
         "R@5": NAN, "top1_own_sentence_pct": 12.5, "paper_row": "SubEncoder", "queries": 349, "stand_in": False},
    ])


def _overlap_results():
    from multivec.data.overlap import OverlapResult

    return [
        OverlapResult("ae", "pi", 8, 0.05, 2048, 409479, 301908, 0.0, 0.0, 0.0, 0),
        OverlapResult("ae", "rr", 8, 0.05, 528, 348897, 301908, 0.018939, 4.3e-05, 0.08086, 2,
                      [("L36", 0.08086), ("R21", 0.06), ("R225", 0.002), ("R450", 0.001)]),
        OverlapResult("mt", "nugget_lm_test", 8, 0.05, 62, 1000, 2000, 0.0484, 0.00002, 0.06, 1,
                      [("00001 Du Fu", 0.06)], enforced=False),
    ]


def _render():
    """Each writer's output on the inputs above."""
    from multivec.data.overlap import overlap_markdown
    from multivec.nugget.analysis.gain_bins import gain_bins_markdown
    from multivec.nugget.analysis.memory_use import memory_use_markdown
    from multivec.nugget.analysis.reconstruction_bleu import fig4_markdown
    from multivec.nugget.analysis.selected_tokens import shares_markdown
    from multivec.nugget.lm_table3 import table3_markdown
    from multivec.nugget.tables.table1 import table1_markdown
    from multivec.nugget.tables.table2 import table2_markdown
    from multivec.nugget.tables.table4 import table4_markdown
    from multivec.statistics.claims import claims_markdown
    from multivec.subencoder.tables.paper_tables import markdown_table as subencoder_markdown_table

    share = {"encoder": "mbart", "documents": 10, "tokens": 100, "share": 0.0712}
    return {
        "table1": table1_markdown(_table1_frame()),
        "table2": table2_markdown(_table2_frame(), "scale", ["note"], "statistics note"),
        "table4": table4_markdown(_table4_frame(), ["header"], share, ["note"]),
        "table3": table3_markdown(_table3_rows(), [0, 1], "scale", ["note"]),
        "fig4": fig4_markdown(_fig4_frame(), "scale", ["note"]),
        "gain_bins": gain_bins_markdown(_gain_bins_frame(), ["header"], ["note"]),
        "memory_use": "\n".join(memory_use_markdown(_memory_use_rows(), 0.95)),
        "shares": shares_markdown(_shares_frame(), ["header"], ["note"]),
        "tests": "\n".join(_table_statistics().markdown_tests()) + "\nafter",
        "claims": "\n".join(claims_markdown(_claims_frame())) + "\nafter",
        "subencoder": "before\n\n" + "\n".join(subencoder_markdown_table(_subencoder_frame(), ["P@1", "R@5"]))
                      + "\nafter",
        "overlap": overlap_markdown(_overlap_results()),
    }


# Rendered by the writers before they used markdown_table.
EXPECTED = {
    'claims': (
        '\n'
        '| id | claim | source | paper | ours | difference, p | seeds | verdict | note |\n'
        '|---|---|---|---|---|---|---|---|---|\n'
        '| N1 | NUGGET MT r = 0.1 >= TSDAE MT on PI | §6.1.3, Table 2 | 96.69 / 95.04 | 93.84 [92.57, 95.09] ±0.42 | -1.23 [-2.50, +0.03], p = 0.0123 | 3 | **not supported** | demo scale |\n'
        '| S2 | a claim without a comparison | Table 7 |  |  |  |  | **not measured** |  |\n'
        'after'
    ),
    'fig4': (
        '\n'
        '| row | objective | r | vectors/doc | BLEU (0-100) | BLEU (0-1) | ceiling (0-100) | lowercased | documents | best dev loss | steps | paper |\n'
        '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
        '| ae_r0 | AE | 0 (one vector) | 1.00 | 0.00 [0.00, 0.00] | 0.0000 | 92.47 | yes | 64 | 5.872 | 60 | – |\n'
        '| mt_r0.1 | MT | 0.1 | 12.35 | 41.23 [39.50, 43.01] ±0.70 | 0.4123 | 99.10 | no | 64 | 3.250 | 120 | > 0.99 |\n'
        ''
    ),
    'gain_bins': (
        '\n'
        '| row | gain_before_20plus | gain_before_5_19 | gain_before_1_4 | gain_d0 | gain_after_1_4 | gain_after_5_19 | gain_after_20plus | documents |\n'
        '|---|---|---|---|---|---|---|---|---|\n'
        '| len64 | -0.0064 | -0.0068 | -0.0073 [-0.0097, -0.0051] ±0.0010 | 0.0395 [0.0334, 0.0461] | -0.0079 | -0.0070 |  | 100 |\n'
        ''
    ),
    'memory_use': (
        '\n'
        '| model | folder | unigram | own | other | gain | d0 | d1 | d2 | d3+ |\n'
        '|---|---|---|---|---|---|---|---|---|---|\n'
        '| nugget_ae_r0.25 | `models/nugget/ae/r0.25/seed13` | 6.67 | 4.73 [4.64, 4.82] | 7.44 [7.33, 7.56] | 2.71 [2.64, 2.78] | 1.83 [1.73, 1.93] (9%) | 5.32 [5.22, 5.42] (27%) | 5.69 [5.59, 5.79] (28%) | 6.31 [6.21, 6.41] (32%) |\n'
        '| tsdae_mt | `models/nugget/mt/tsdae/seed13` | 6.78 | 5.90 [5.80, 6.00] | – | – | – | – | – | – |\n'
        ''
    ),
    'overlap': (
        '\n'
        '| corpus | task | documents | docs with a shared n-gram | n-grams shared | max per document | docs over threshold | threshold | passed | worst documents |\n'
        '|---|---|---|---|---|---|---|---|---|---|\n'
        '| ae | pi | 2048 | 0.00% | 0.000% | 0.00% | 0 | 0.05 | yes |  |\n'
        '| ae | rr | 528 | 1.89% | 0.004% | 8.09% | 2 | 0.05 | **no** | L36 (8.1%), R21 (6.0%), R225 (0.2%) |\n'
        '| mt | nugget_lm_test | 62 | 4.84% | 0.002% | 6.00% | 1 | 0.05 | not scored | 00001 Du Fu (6.0%) |\n'
        ''
    ),
    'shares': (
        '\n'
        '| row | nugget_share_eos_punct | text_share_eos_punct | nugget_share_the | text_share_the |\n'
        '|---|---|---|---|---|\n'
        '| ae | 0.009 [0.003, 0.015] | 0.143 | 0.001 [0.000, 0.003] ±0.000 |  |\n'
        ''
    ),
    'subencoder': (
        '\n'
        '| row | dim | P@1 | R@5 | top1_own_sentence_pct | paper_row | queries | stand_in |\n'
        '|---|---|---|---|---|---|---|---|\n'
        '| word Jaccard [authors] |  | 29.51 [24.93, 34.67] | 62.80 | 46.99 |  | 349 | True |\n'
        '| SubEncoder (MiniLM) | 384.00 | 41.00 [37.10, 45.25] ±1.30 |  | 12.50 | SubEncoder | 349 | False |\n'
        'after'
    ),
    'table1': (
        '\n'
        '| task | corpus | n_queries | mean_query_tokens | mean_document_tokens | n_documents | unknown_token_share | unknown_tokenizer | unknown_over_threshold | paper_corpus | paper_n_queries | paper_mean_query_tokens | paper_mean_document_tokens |\n'
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
        '| PI | ParaBank | 1024 | 241.3 | 242.1 | 1024 | 0.01% | minilm | no | ParaBank | 1024 | 241.3 | 242.1 |\n'
        '| RR | MS MARCO | 121 | 6.1 | 58.2 | 2420 | 1.23% | minilm | yes |  |  |  |  |\n'
        ''
    ),
    'table2': (
        '\n'
        '| row | model | objective | ratio | multi_vector | PI | RR | paper_PI | paper_RR | vectors_per_doc | n_queries_PI | n_queries_RR | train_steps | best_dev_loss | unigram_nats | gate |\n'
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
        '| nugget_mt_r0.1 | NUGGET | MT | 0.1 | yes | 94.19 [92.95, 95.46] ±0.42 | 87.78 [82.30, 92.44] | 96.69 | 50.04 | 34.2 | 1024 | 121 | 60 | 5.941 | 6.780 | ok |\n'
        '| bm25 | BM25 |  |  | no | 88.50 |  |  | 46.20 |  | 1024 | 121 |  |  |  |  |\n'
        ''
    ),
    'table3': (
        '\n'
        '| row | model | h=0 | h=1 | drop h=0→1 | paper h=0 | paper h=1 |\n'
        '|---|---|---|---|---|---|---|\n'
        '| nugget_r0.05 | NUGGET r=0.05 | 2419.18 [2030.42, 2893.69] | 2186.08 [1841.69, 2612.87] ±12.50 | 0.096 [0.083, 0.109] |  | 29.88 |\n'
        '| transformer | Transformer | 2500.00 | 2500.00 | 0.000 | 31.2 |  |\n'
        ''
    ),
    'table4': (
        '\n'
        '| name | configuration | selector | paper_l | l | frozen_bottom | r | feedback | PI | RR | paper_pi | paper_rr | nuggets_per_doc_pi | nuggets_per_doc_rr | train_steps | best_dev_loss | unigram_nats | gate |\n'
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
        '| nugget_l6 | NUGGET (l = 6) | learned | 6.0 | 4.0 | 4.0 | 0.1 | yes | 94.41 [93.15, 95.63] | 88.36 [83.06, 92.89] ±1.50 | 93.24 | 48.84 | 27.5 | 41.0 | 60.0 | 5.937 | 6.780 | ok |\n'
        '| random | random selector | random |  | 3.0 | 3.0 | 0.1 | no | 90.00 |  |  |  | 27.5 | 41.0 | 60.0 | 5.990 | 6.780 | FAILED: 7.0 >= 6.78 |\n'
        ''
    ),
    'tests': (
        '\n'
        '| row | vs | metric | difference [95% CI] | p | p (Holm) |\n'
        '|---|---|---|---|---|---|\n'
        '| a | b | PI | +5.25 [+4.07, +6.44] | 0.0002 | 0.0040 * |\n'
        '| a | c | pearson | -0.012 [-0.050, +0.025] | 0.5000 | 0.5000 |\n'
        '| b | c | PI | +0.00 [-1.00, +1.00] | 1.2e-05 |  |\n'
        'after'
    ),
}


@pytest.mark.parametrize("writer", sorted(EXPECTED))
def test_writer_output_unchanged(writer):
    assert _block(_render()[writer]) == EXPECTED[writer]


def test_every_writer_is_pinned():
    assert sorted(_render()) == sorted(EXPECTED)


# ---------------------------------------------------------------- the distillation writers, unchanged

def _distill_statistics_table():
    from multivec.distill.tables.statistics import markdown_table as distill_markdown_table

    frame = pd.DataFrame([
        {"row": "student_ls_cosine", "model": "minilm", "loss": "cosine", "lee_pearson": 0.70321,
         "lee_pearson_lo": 0.6188, "lee_pearson_hi": 0.7693, "lee_pearson_sd": NAN, "pi_mrr": 94.0312,
         "pi_mrr_lo": 91.4655, "pi_mrr_hi": 96.3121, "pi_mrr_sd": 0.4211, "dimension": 384, "train_minutes": 1.25},
        {"row": "teachers_concatenated", "model": None, "loss": NAN, "lee_pearson": NAN, "pi_mrr": 94.6,
         "dimension": 868, "train_minutes": NAN},
    ])
    return "\n".join(distill_markdown_table(frame, ["row", "model", "loss", "lee_pearson", "pi_mrr", "dimension",
                                                    "train_minutes"], {"lee_pearson": 3, "pi_mrr": 2}))


def _distill_geometry_md(monkeypatch, tmp_path):
    import multivec.statistics
    from multivec.distill.analysis import geometry

    frame = pd.DataFrame([
        {"row": "structural_teacher", "lee_mean_cosine": 0.11834, "lee_mean_cosine_lo": 0.09865,
         "lee_mean_cosine_hi": 0.1435, "lee_mean_cosine_sd": NAN, "lee_agreement_structural": 1.0},
        {"row": "student_ls_cosine", "lee_mean_cosine": 0.15, "lee_mean_cosine_lo": 0.127, "lee_mean_cosine_hi": 0.176,
         "lee_mean_cosine_sd": 0.0123, "lee_agreement_structural": NAN},
    ])

    class Stats:
        def add_columns(self, *args, **kwargs):
            return frame

        def write_tests(self, path):
            pass

        def markdown_tests(self, digits=3):
            return ["the tests"]

    monkeypatch.setattr(geometry, "GEOMETRY_METRICS", ("mean_cosine", "agreement_structural"))
    monkeypatch.setattr(geometry, "geometry_measurements", lambda entries, tasks: [])
    monkeypatch.setattr(geometry, "geometry_comparisons", lambda entries: [])
    monkeypatch.setattr(multivec.statistics, "table_statistics", lambda *args, **kwargs: Stats())
    statistics = {"alpha": 0.05, "confidence": 0.95, "bootstrap_resamples": 1, "permutation_resamples": 1}
    entries = [{"name": row} for row in frame["row"]]
    geometry.write_geometry(entries, ["lee"], statistics, tmp_path / "g.csv", tmp_path / "g.md", tmp_path / "t.csv")
    return (tmp_path / "g.md").read_text()


def _distill_loss_curves_md():
    from multivec.distill.analysis.loss_curves import trend_lines

    trends = pd.DataFrame([
        {"row": "student_ls_cosine", "seed": 13, "term": "train_loss", "windows": 12, "first": 0.094443,
         "last": 0.089594, "change": -0.004849, "fell": True},
        {"row": "student_lc_soft_cca", "seed": 13, "term": "train_sdl_student", "windows": 12, "first": 0.207551,
         "last": 0.443468, "change": 0.235917, "fell": False},
    ])
    return "\n".join(trend_lines(trends, 0.2))


def _distill_length_md(monkeypatch):
    import multivec.distill.embeddings
    import multivec.distill.tables.statistics
    from multivec.distill.tables.main_table import length_lines

    metas = {
        ("student", "lee"): {"lengths": {"documents": 50, "max_length": 152, "longer_than_structural_teacher": 0,
                                         "longer_than_structural_teacher_share": 0.0, "truncated": 0,
                                         "truncated_share": 0.0, "student_max_tokens": 2048}},
        ("student", "pi"): {"lengths": {"documents": 1137, "max_length": 348, "truncated": 0, "truncated_share": 0.0,
                                        "student_max_tokens": 2048}},
        ("student", "rr"): {"lengths": {"documents": 528, "max_length": 8864, "longer_than_structural_teacher": 334,
                                        "longer_than_structural_teacher_share": 0.63258, "truncated": 39,
                                        "truncated_share": 0.073864, "student_max_tokens": 2048}},
        ("student", "none"): {},
        ("teacher", "lee"): {"truncated_share": 0.0}, ("teacher", "pi"): {"truncated_share": 0.0},
        ("teacher", "rr"): {"truncated_share": 0.63258},
    }
    monkeypatch.setattr(multivec.distill.embeddings, "read_meta", lambda folder: metas[tuple(folder.split("/"))])
    monkeypatch.setattr(multivec.distill.tables.statistics, "entry_folder",
                        lambda entry, task: f"{entry['kind'].split('_')[-1]}/{task}")
    entries = [{"kind": "untrained_student"}, {"kind": "structural_teacher"}]
    return "\n".join(length_lines(entries, ["lee", "pi", "rr", "none"]) + length_lines(entries[:1], ["rr"]))


def _distill_render(monkeypatch, tmp_path):
    """Each distillation writer's output on the inputs above."""
    return {
        "statistics": _distill_statistics_table(),
        "geometry": _distill_geometry_md(monkeypatch, tmp_path),
        "loss_curves": _distill_loss_curves_md(),
        "length": _distill_length_md(monkeypatch),
    }


# Rendered by the distillation writers before they used markdown_table.
DISTILL_EXPECTED = {
    'statistics': (
        '| row | model | loss | lee_pearson | pi_mrr | dimension | train_minutes |\n'
        '|---|---|---|---|---|---|---|\n'
        '| student_ls_cosine | minilm | cosine | 0.703 [0.619, 0.769] | 94.03 [91.47, 96.31] ±0.42 | 384 | 1.25 |\n'
        '| teachers_concatenated | – | – | – | 94.60 | 868 | – |'
    ),
    'geometry': (
        '# Document embedding by distillation: the embedding space of every row\n'
        '\n'
        "Over all pairs of each task's documents: the mean pairwise cosine, and the Pearson correlation of the row's pairwise cosines with each teacher's. Cells: mean [95% CI, documents resampled with the pairs among them].\n"
        '\n'
        '| row | lee_mean_cosine | lee_agreement_structural |\n'
        '|---|---|---|\n'
        '| structural_teacher | 0.118 [0.099, 0.143] | 1.000 |\n'
        '| student_ls_cosine | 0.150 [0.127, 0.176] ±0.012 |  |\n'
        '\n'
        'the tests\n'
        ''
    ),
    'loss_curves': (
        'Mean of each term over the first vs the last 20% of the logged windows:\n'
        '\n'
        '| row | seed | term | windows | first | last | change | fell |\n'
        '|---|---|---|---|---|---|---|---|\n'
        '| student_ls_cosine | 13 | train_loss | 12 | 0.0944 | 0.0896 | -0.0048 | yes |\n'
        '| student_lc_soft_cca | 13 | train_sdl_student | 12 | 0.2076 | 0.4435 | +0.2359 | **no** |\n'
        '\n'
        'Terms that did not fall: student_lc_soft_cca seed 13: train_sdl_student.'
    ),
    'length': (
        "Documents longer than each model's input limit, per task (student tokens without specials; the structural teacher's own count in brackets):\n"
        '\n'
        '| task | documents | longest | > structural teacher | truncated by the student |\n'
        '|---|---|---|---|---|\n'
        '| lee | 50 | 152 | 0 (0.0%) [0.0%] | 0 (0.0%) of > 2048 |\n'
        '| pi | 1137 | 348 |  [0.0%] | 0 (0.0%) of > 2048 |\n'
        '| rr | 528 | 8864 | 334 (63.3%) [63.3%] | 39 (7.4%) of > 2048 |\n'
        '\n'
        "Documents longer than each model's input limit, per task (student tokens without specials; the structural teacher's own count in brackets):\n"
        '\n'
        '| task | documents | longest | > structural teacher | truncated by the student |\n'
        '|---|---|---|---|---|\n'
        '| rr | 528 | 8864 | 334 (63.3%) | 39 (7.4%) of > 2048 |\n'
        ''
    ),
}


@pytest.mark.parametrize("writer", ["statistics", "geometry", "loss_curves", "length"])
def test_distill_writer_output_unchanged(writer, monkeypatch, tmp_path):
    assert _distill_render(monkeypatch, tmp_path)[writer] == DISTILL_EXPECTED[writer]
