"""The NUGGET model zoo (multivec.nugget.zoo, rules/nugget.smk): every distinct (objective, r, scorer
layer, selector, feedback, seed) trains once, by one rule, and every table and figure reads the folder it needs;
the main job trains only Table 2's models and the shared r = 1 models they start from."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from multivec.nugget import zoo
from multivec.nugget.configuration import SENTENCE_RATIO, NuggetConfig

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
NUGGET_TARGETS = ["results/table2.csv", "results/nugget_fig4_bleu_vs_ratio.csv", "results/nugget_fig5_selected_tokens.csv",
                  "results/nugget_fig6_highlight.html", "results/nugget_fig7_probability_gain.csv",
                  "results/nugget_fig8_probability_gain_lengths.csv", "results/nugget_fig11_probability_gain_all.csv",
                  "results/nugget_table3_lm.csv", "results/nugget_table4_ablations.csv"]
OBJECTIVE = dict(encoder="tiny-random-bert", scorer_layer=2, objective="mt", residual=True, feedback=True,
                 selector="learned", frozen_layers=None)


@pytest.mark.parametrize("ratio, layer, selector, feedback, name", [
    (0.1, 3, "learned", True, "r0.1_l3_learned_fb"),
    (0.25, 0, "chunking", True, "r0.25_l0_chunking_fb"),
    (1, 3, "learned", False, "r1_l3_learned_nofb"),
    (SENTENCE_RATIO, 3, "sentence_boundary", True, "rsb_l3_sentence_boundary_fb"),
])
def test_variant_names_round_trip(ratio, layer, selector, feedback, name):
    assert zoo.nugget_variant(ratio, layer, selector, feedback) == name
    assert re.fullmatch(zoo.VARIANT_PATTERN, name)
    parsed = zoo.parse_variant(name)
    assert parsed == {"ratio": ratio if ratio == SENTENCE_RATIO else float(ratio), "scorer_layer": layer,
                      "selector": selector, "feedback": feedback}
    assert zoo.variant_of({**OBJECTIVE, **parsed}) == name


def test_settings_of_each_kind_build_a_valid_config():
    base = zoo.zoo_settings(OBJECTIVE, zoo.BASE_VARIANT, 13, 0.6)
    assert base["bottleneck"] == "tokens" and base["ratio"] == 1.0 and NuggetConfig.from_dict(base)
    tsdae = zoo.zoo_settings(OBJECTIVE, zoo.TSDAE_VARIANT, 13, 0.6)
    assert tsdae["frozen_layers"] == -1 and tsdae["noise_deletion"] == 0.6 and NuggetConfig.from_dict(tsdae)
    chunking = zoo.zoo_settings(OBJECTIVE, "r0.1_l2_chunking_fb", 14, 0.6)
    assert chunking["residual"] is False and chunking["seed"] == 14 and NuggetConfig.from_dict(chunking)
    for variant in (zoo.BASE_VARIANT, zoo.TSDAE_VARIANT, "r0.1_l2_chunking_fb"):
        assert zoo.variant_of(zoo.zoo_settings(OBJECTIVE, variant, 13, 0.6)) == variant
    with pytest.raises(ValueError, match="r<ratio|sb>"):
        zoo.parse_variant("mt_r0.1")


def _training_jobs(args, tmp_path):
    """(objective, variant, seed) of every train_nugget job of a dry run, and every output under models/nugget/."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    result = subprocess.run([SNAKEMAKE, "-n", "--directory", str(tmp_path), *args], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=900)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-5000:]
    jobs, writers = [], set()
    for block in out.split("\nrule ")[1:]:
        rule = block.split(":", 1)[0].strip()
        output = re.search(r"^\s+output: (.*)$", block, re.MULTILINE)
        # a writer under models/nugget/ (results/inputs/models/nugget/... is a committed copy, not a model)
        if output and re.search(r"(^|[ ,])models/nugget/", output.group(1)):
            writers.add(rule)
        if rule == "train_nugget":
            wildcards = dict(item.split("=", 1) for item in
                             re.search(r"^\s+wildcards: (.*)$", block, re.MULTILINE).group(1).split(", "))
            jobs.append((wildcards["objective"], wildcards["variant"], wildcards["seed"]))
    return jobs, writers


def test_objective_settings_overlay_the_analysis_blocks_in_order():
    """One place merges a zoo model's settings (the rules and the paper-shape benchmark both read it): the
    ``nugget`` block, then ``nugget_analysis.model``, then the objective's own overrides."""
    config = {"nugget": {"encoder": "e", "decoder_output": "untied", "decoder_init": "encoder"},
              "nugget_analysis": {"model": {"decoder_output": "tied"},
                                  "model_by_objective": {"ae": {"decoder_init": "scratch"}}}}
    assert zoo.objective_settings(config, "ae") == {"encoder": "e", "decoder_output": "tied",
                                                    "decoder_init": "scratch", "objective": "ae"}
    assert zoo.objective_settings(config, "mt")["decoder_init"] == "encoder"
    config["nugget_analysis"]["model_by_objective"] = None  # an empty YAML block
    assert zoo.objective_settings(config, "ae")["decoder_init"] == "encoder"


def test_every_nugget_target_trains_each_configuration_once(mirror, tmp_path):
    """Smoke maps Table 4's l = 6 and 9 onto l = 3 (tiny-random-bert has 2 layers): those rows read the one
    model, as do Table 2's MT r = 0.1, Table 4's l = 3 and Fig. 4's MT r = 0.1."""
    jobs, writers = _training_jobs([*NUGGET_TARGETS, "--configfile", "config/smoke.yaml"], tmp_path)
    assert writers == {"train_nugget"}, writers  # one rule trains every NUGGET/TSDAE model
    assert len(jobs) == len(set(jobs)), sorted(jobs)
    configs = [tuple(sorted(zoo.zoo_settings({**OBJECTIVE, "objective": o}, v, int(s), 0.6).items(), key=str))
               for o, v, s in jobs]
    assert len(configs) == len(set(configs))
    variants = {(o, v) for o, v, _ in jobs}
    assert ("mt", "r0.1_l2_learned_fb") in variants and ("ae", zoo.BASE_VARIANT) in variants
    # smoke: 2 bases; AE and MT at r = 0 (TSDAE), 0.1, 0.25 (Fig. 4) + Table 2's MT 0.05, 0.15 + Table 3's AE
    # 0.05; Table 4's l = 0, no feedback, chunking, r_sb, sentence boundary, random (l = 6, 9 coincide with l = 3)
    assert len(jobs) == 2 + 6 + 2 + 1 + 6, sorted(jobs)


def test_the_main_job_trains_only_table2_models_and_their_bases(mirror, tmp_path):
    jobs, _ = _training_jobs(["results/table2.csv"], tmp_path)
    assert sorted(jobs) == sorted([("ae", zoo.BASE_VARIANT, "13"), ("mt", zoo.BASE_VARIANT, "13"),
                                   ("ae", "r0.25_l3_learned_fb", "13"), ("ae", "tsdae", "13"),
                                   ("mt", "tsdae", "13")] + [("mt", f"r{r}_l3_learned_fb", "13")
                                                             for r in ("0.05", "0.1", "0.15", "0.25")])
