"""docs/paper_settings.md, the audited table of every paper-scale setting, holds: each backticked value of its
"Paper scale" column equals the configuration merged as Snakemake merges config files, and every row names its
source. Also the options the paper-scale settings need: both of the distillation authors' final configurations
train (a student head ending at the teacher's dimension with no teacher head; no length mask), and Paragraph
Vector's DBOW parts can skip word vectors."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from multivec.rules.paper_settings import (MISSING, PAPER_FILES, audited_tables, differences, engine_default,
                                          lookup, same, stated_value)

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "paper_settings.md"
STATUSES = ("match (authors' code)", "match", "unstated", "deviation")


def merged(files: list[str]) -> dict:
    from snakemake.utils import update_config

    config = yaml.safe_load((REPO / files[0]).read_text())
    for name in files[1:]:
        update_config(config, yaml.safe_load((REPO / name).read_text()))
    return config


TABLES = [(list(table.files), list(table.rows)) for table in audited_tables(DOC)]
ROWS = [(files, row) for files, rows in TABLES for row in rows]


def test_the_document_holds_the_paper_table_and_the_overlay_table():
    merges = [files for files, _ in TABLES]
    assert ["config/config.yaml", "config/paper.yaml"] in merges
    assert ["config/config.yaml", "config/paper.yaml", "config/paper_distill_mm_mse.yaml"] in merges
    works = {row["Work"] for _, row in ROWS}
    assert works == {"NUGGET", "Sub-sentence encoder", "Distillation"}
    assert len(ROWS) >= 80


@pytest.mark.parametrize("files,row", ROWS, ids=[f"L{row['line']}" for _, row in ROWS])
def test_every_row_has_a_source_and_a_status(files, row):
    assert row["Source"] not in ("", "—", "-"), f"{DOC}:{row['line']}: no source"
    assert row["Paper / authors"], f"{DOC}:{row['line']}: no paper value"
    assert row["Status"].startswith(STATUSES), f"{DOC}:{row['line']}: status {row['Status']!r}"
    if row["Status"].startswith(("deviation", "unstated")):
        assert ":" in row["Status"] or row["Status"] == "unstated", \
            f"{DOC}:{row['line']}: a deviation gives its reason after a colon"
    if row["Status"].startswith("deviation"):
        assert len(row["Status"]) > len("deviation: ") + 20, f"{DOC}:{row['line']}: a deviation needs its reason"


@pytest.mark.parametrize("files,row", ROWS, ids=[f"L{row['line']}" for _, row in ROWS])
def test_every_stated_value_is_the_merged_config(files, row):
    key = row["Config key"].strip("`")
    value_cell = row["Paper scale"]
    if row["Config key"] in ("—", "-"):
        assert not value_cell.startswith("`"), f"{DOC}:{row['line']}: a value without a config key to check it at"
        return
    stated = stated_value(row, DOC)
    actual = lookup(merged(files), key)
    if actual is MISSING:
        assert "engine default" in value_cell, f"{DOC}:{row['line']}: {key} is in no config file"
        actual = engine_default(key)
        assert actual is not MISSING, f"{DOC}:{row['line']}: {key} is in no config file and no training field"
    assert same(stated, actual), (f"{DOC}:{row['line']}: {key} is {actual!r} in {' + '.join(files)}, "
                                  f"the table says {stated!r}")


def test_no_internal_references_in_the_document():
    text = DOC.read_text(encoding="utf-8")
    assert not re.search(r"\bissue \d+|\bissues? #\d+|\b[0-9a-f]{40}\b", text, re.IGNORECASE)


@pytest.mark.parametrize("files", [files for files, _ in TABLES], ids=lambda files: "+".join(Path(f).stem for f in files))
def test_each_audited_merge_is_a_valid_config(files):
    """The schema and the cross-checks the workflow runs before any job (sources not probed: no network)."""
    from multivec.config.checks import check_config

    check_config(merged(files), sources="off")


# -- the options the settings need ------------------------------------------------------------------

WORDS = ("the cat sat on a mat while dogs ran around the park and birds sang songs of spring in old trees "
         "near quiet rivers where children played games").split()


def _data(folder: Path, contextual_dim: int, n: int = 12):
    from multivec.distill import embeddings
    from multivec.io import write_jsonl

    rng = np.random.default_rng(0)
    docs = [{"id": f"d{i}", "text": " ".join(rng.choice(WORDS, size=int(rng.integers(3, 60))))} for i in range(n)]
    write_jsonl(folder / "train.jsonl", docs)
    ids = [d["id"] for d in docs]
    embeddings.write_embeddings(folder / "structural", ids, rng.normal(size=(n, 16)).astype(np.float32),
                                {"model": "stub-structural", "truncated_share": 0.0})
    embeddings.write_embeddings(folder / "contextual", ids, rng.normal(size=(n, contextual_dim)).astype(np.float32),
                                {"model": "stub-pv", "truncated_share": 0.0})


@pytest.mark.parametrize("final", ["cos_final", "mm_mse_final"])
def test_both_final_distillation_configurations_train(tmp_path, final):
    """cos_final: the student projected to the teacher's own dimension, no teacher head, L_S cosine under the mask;
    mm_mse_final: heads on both sides, L_S max-marginals MSE on every document (no mask)."""
    from multivec.distill.configuration import LossConfig, StudentConfig
    from multivec.distill.training import load_trained, train
    from multivec.training import TrainConfig

    contextual_dim = 10
    if final == "cos_final":
        student = StudentConfig(backbone="tiny-random-bert", max_tokens=40, chunk_tokens=12, structural_head=[],
                                structural_head_init="random", structural_head_trainable=True,
                                contextual_head=[8, 24, contextual_dim], teacher_head=[])
        loss = LossConfig(structural="cosine", contextual="soft_cca", mask_max_tokens=20)
    else:
        student = StudentConfig(backbone="tiny-random-bert", max_tokens=40, chunk_tokens=12, structural_head=[],
                                structural_head_init="random", structural_head_trainable=True,
                                contextual_head=[8, 12, 8], teacher_head=[8])
        loss = LossConfig(structural="max_marginals", max_marginals_distance="mse", gamma=1.0,
                          contextual="soft_cca", mask_max_tokens=None)
    _data(tmp_path, contextual_dim)
    cfg = TrainConfig(max_steps=2, batch_size=3, grad_accumulation=2, lr=1e-3, schedule="cosine", warmup_steps=1,
                      eval_every=1, checkpoint_every=1, seed=3, threads=1, device="cpu")
    summary = train(student, loss, cfg, tmp_path / "train.jsonl", tmp_path / "structural", tmp_path / "contextual",
                    tmp_path / "model")
    assert summary["train_steps"] == 2
    model = load_trained(tmp_path / "model")
    if final == "cos_final":
        assert isinstance(model.teacher_head, __import__("torch").nn.Identity)
    else:
        assert model.loss_config.mask_max_tokens is None
        import json

        assert json.loads((tmp_path / "model" / "config.json").read_text())["derived"]["mask_share"] == 1.0


def test_a_mask_of_null_keeps_every_document():
    from multivec.distill.configuration import LossConfig
    from multivec.distill.training import length_mask

    assert length_mask(["a b c", "d"], "minilm", None).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="mask_max_tokens"):
        LossConfig(mask_max_tokens=0)


def test_a_dbow_part_can_skip_word_vectors_and_records_it(tmp_path):
    from multivec.distill.teachers.paragraph_vector import (PVVariant, load_models, part_record, save_models,
                                                           train_part)

    variant = PVVariant.from_config({"name": "v", "parts": [
        {"architecture": "dm", "vector_size": 6, "min_count": 1, "preprocessing": "lowercase"},
        {"architecture": "dbow", "vector_size": 6, "min_count": 1, "preprocessing": "none", "dbow_words": False}]},
        epochs=1, seed=3)
    texts = [" ".join(WORDS[i:i + 8]) for i in range(0, 20, 2)]
    models = [train_part(part, texts, variant.epochs, variant.seed) for part in variant.parts]
    assert models[1].dbow_words == 0 and models[1].dm == 0
    # the default (on) is not recorded, so records of parts trained before the option stay as they were
    assert "dbow_words" not in part_record(variant.parts[0])
    assert part_record(variant.parts[1])["dbow_words"] is False
    save_models(tmp_path / "pv", variant, models)
    reloaded, _, _ = load_models(tmp_path / "pv")
    assert reloaded == variant
    with pytest.raises(ValueError, match="dbow_words"):
        PVVariant.from_config({"name": "w", "parts": [{"architecture": "dbow", "vector_size": 4, "min_count": 1,
                                                       "preprocessing": "none", "dbow_words": 0}]})


def test_the_demo_soft_cca_heads_are_those_of_the_authors_final_run_with_its_teacher():
    """The demo's contextual teacher is a 100-d PV-DM, as in the authors' mm_mse_final.yaml, and it keeps that run's
    SoftCCA widths (student 768 -> 1024 -> 768, PV -> 768; narrower heads pulled the demo's L_C student below the
    untrained one, docs/distill.md); paper scale runs cos_final.yaml, whose 2048-d teacher has other heads."""
    demo = merged(["config/config.yaml"])["distill"]["student"]
    mm_mse = merged(["config/config.yaml", "config/paper.yaml", "config/paper_distill_mm_mse.yaml"])["distill"]
    for key in ("contextual_head", "teacher_head"):
        assert demo[key] == mm_mse["student"][key], key
    assert mm_mse["contextual_teacher"]["teacher"] == "dm100"
    assert demo["contextual_head_init"] == "random"


def test_a_paper_run_names_every_setting_it_changes_and_nothing_else():
    """A paper-scale run that overrides settings on purpose is not stopped: the workflow prints, and
    results/claims.md lists, each audited setting that differs from the table (multivec.rules.paper_settings)."""
    import copy

    paper = merged(list(PAPER_FILES))
    assert differences(paper, DOC) == []
    changed = copy.deepcopy(paper)
    changed["train"]["grad_accumulation"] = 1
    changed["distill"]["contextual_teacher"]["epochs"] = 10
    del changed["nugget"]["residual"]  # no config value and no training field: "not set"
    lines = differences(changed, DOC)
    assert len(lines) == 3, lines
    assert any(line.startswith("train.grad_accumulation (NUGGET") and "this run 1, paper scale 4" in line
               for line in lines), lines
    assert any(line.startswith("distill.contextual_teacher.epochs") and "this run 10, paper scale 30" in line
               for line in lines), lines
    assert any(line.startswith("nugget.residual ") and "this run not set" in line for line in lines), lines
    # Other scales differ by design; a workflow copy without docs/ names nothing.
    assert differences({**changed, "scale": "demo"}, DOC) == []
    assert differences(changed, REPO / "no-such-doc.md") == []


def test_a_table_without_its_merge_line_or_with_a_short_row_stops_naming_the_line(tmp_path):
    header = "| " + " | ".join(["Work", "Setting", "Config key", "Paper / authors", "Source", "Paper scale",
                                 "Status"]) + " |\n|---|---|---|---|---|---|---|\n"
    doc = tmp_path / "settings.md"
    doc.write_text("# x\n\n" + header + "| a | b | `k` | c | d | `1` | match |\n")
    with pytest.raises(ValueError, match=r"settings.md:3: a settings table without a 'Merged config:' line"):
        audited_tables(doc)
    doc.write_text("Merged config: `config/config.yaml` + `config/paper.yaml`\n\n" + header + "| a | b | `k` |\n")
    with pytest.raises(ValueError, match=r"settings.md:5: 3 cells, expected 7"):
        audited_tables(doc)
