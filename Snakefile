# One DAG, three scales: demo (default, config/config.yaml), smoke (--configfile config/smoke.yaml),
# paper (--configfile config/paper.yaml). See README.md.
import os
import sys

from snakemake.utils import min_version

min_version("9.0")

if os.path.join(workflow.basedir, "src") not in sys.path:
    sys.path.insert(0, os.path.join(workflow.basedir, "src"))
from multivec.config.checks import check_config
from multivec.config.yaml_files import check_config_files
from multivec.pipeline.targets import check_requested_targets

# The demo config is the base of every run (also with --directory elsewhere); smoke.yaml and
# paper.yaml, given with --configfile, override parts of it. Every config file is read strictly
# first (a duplicate key, a file that is not a mapping: stops naming file:line), also when the
# workflow profile, which checks the --configfile files before Snakemake loads them, is not applied.
check_config_files([os.path.join(workflow.basedir, "config", "config.yaml"), *workflow.configfiles])


configfile: os.path.join(workflow.basedir, "config", "config.yaml")


# Before any job, every problem at once, each naming its key path: config/schema.yaml strictly (13.0 is
# no integer, NaN no number), then what a schema cannot say (unique names, keys consistent with each
# other, the encoders' limits); see multivec.config.
for _note in check_config(config, os.path.join(workflow.basedir, "config", "schema.yaml")):
    print(f"Config check skipped: {_note}", file=sys.stderr)


# A SLURM run (--profile profiles/slurm) checks every job it is about to submit against the cluster
# (account, partition, CPUs, memory, time, GPUs) before any job runs; see multivec.pipeline.slurm_preflight.
# At paper scale, the settings that differ from docs/paper_settings.md are named (multivec.rules.paper_settings).
onstart:
    from snakemake.logging import logger
    from multivec.pipeline.slurm_preflight import check_workflow
    from multivec.rules.paper_settings import differences

    check_workflow(workflow)
    # A paper-scale run that overrides an audited setting on purpose goes on, naming each one (also in claims.md).
    for _line in differences(config, os.path.join(workflow.basedir, "docs", "paper_settings.md")):
        logger.warning(f"Paper setting changed: {_line}")


# Light aggregation jobs run where Snakemake runs, not as cluster jobs: per-unit score files, tables,
# figures drawn from tables, the claims and the benchmark summary read small files and compute in seconds,
# while each SLURM job costs a queue wait and a workflow start (about 8 s each on the local SLURM).
# Nothing here loads a model or needs a GPU (tests/test_workflow.py holds this list to that).
localrules:
    units_table2,
    units_nugget_table3,
    units_nugget_table4,
    units_nugget_fig4,
    units_nugget_fig5,
    units_nugget_fig7_8,
    units_subencoder_retrieval,
    units_subencoder_table7,
    units_distill_teachers,
    units_distill_table,
    units_distill_imdb,
    table2,
    nugget_table3,
    nugget_table4,
    subencoder_eval_tables,
    subencoder_data_table7,
    distill_teachers_table,
    distill_table,
    distill_loss_curves,
    distill_geometry,
    distill_imdb_table,
    representation_matrix,
    nugget_fig4,
    nugget_fig5_shares,
    nugget_fig7_8_gain_bins,
    nugget_fig7_probability_gain,
    nugget_fig8_probability_gain_lengths,
    nugget_fig11_probability_gain_all,
    claims_of_work,
    claims,
    rule_benchmarks,
    export_trec,
    export_trec_propsegment,
    export_manifest,


# `snakemake --report report.html`: every output flagged with report() in the rules, by category.
report: "workflow/report/workflow.rst"


include: "rules/statistics_common.smk"
include: "rules/common.smk"
include: "rules/committed_inputs.smk"
include: "rules/data.smk"
include: "rules/nugget.smk"
include: "rules/nugget_ablation_common.smk"
include: "rules/nugget_ablation.smk"
include: "rules/nugget_figures.smk"
include: "rules/nugget_gain.smk"
include: "rules/nugget_lm_common.smk"
include: "rules/nugget_lm.smk"
include: "rules/table2.smk"
include: "rules/token_pooling.smk"
include: "rules/subencoder_common.smk"
include: "rules/subencoder_data.smk"
include: "rules/subencoder.smk"
include: "rules/distill_teachers.smk"
include: "rules/distill_common.smk"
include: "rules/distill.smk"
include: "rules/distill_paper_tasks.smk"
include: "rules/representations.smk"
# The exports of the trained models and the rankings (target `exports` below; not part of `all`).
include: "rules/interop.smk"
# After every work: each has registered its statistics tables (rules/statistics_common.smk).
include: "rules/claims_common.smk"
include: "rules/claims.smk"
# Runtime and peak memory per rule (the report's "Runtime and memory"): runs after every other target of `all`.
include: "rules/rule_benchmarks.smk"
# Last: every work above has registered its training corpora and evaluation tasks for the audit.
include: "rules/audit.smk"


# The main targets (multivec.pipeline.targets, config/README.md). One per paper: that work's tables and figures
# at the configured scale (`snakemake --cores all nugget`); one per paper's claims, results/claims/<work>.csv
# (nugget_claims, subencoder_claims, distill_claims); `all`, the default, is the three works, every claim and the
# runtime summary. NUGGET's Table 1 (tasks) is NUGGET's; its Table 2 needs the train/test overlap audit.
NUGGET_TARGETS = [
    "results/table1_tasks.csv",
    "results/table2.csv",
    *expand("results/nugget_table3_lm.{ext}", ext=["csv", "md"]),
    "results/nugget_table4_ablations.csv",
    "results/nugget_fig4_bleu_vs_ratio.csv",
    "results/nugget_memory_use.csv",
    "results/nugget_fig5_selected_tokens.csv",
    "results/nugget_fig5_shares.csv",
    "results/nugget_fig7_8_gain_bins.csv",
    # the same exposures without the position term, where the AE decoder's memory carries one (the demo's)
    *(["results/nugget_fig7_8_vectors_only_gain_bins.csv"] if GAIN_VECTORS_ONLY else []),
    "results/nugget_fig6_highlight.html",
    *expand("results/nugget_fig7_probability_gain.{ext}", ext=["csv", "png"]),
    *expand("results/nugget_fig8_probability_gain_lengths.{ext}", ext=["csv", "png"]),
    *expand("results/nugget_fig11_probability_gain_all.{ext}", ext=["csv", "png"]),
]
SUBENCODER_TARGETS = expand("results/subencoder_{table}.{ext}", table=SUBENC_TABLES, ext=["csv", "md"])
DISTILL_TARGETS = [
    "results/distill_teachers.csv",
    "results/distill_table.csv",
    *expand("results/distill_loss_curves.{ext}", ext=["csv", "md", "png"]),
    *(["results/distill_geometry.csv"] if distill_geometry_tasks() else []),
    *DISTILL_PAPER_TARGETS,  # paper scale only (distill.paper_tasks.enabled): results/distill_imdb.{csv,md}
]
# Every representation of the three works against every task (rules/representations.smk).
REPRESENTATION_TARGETS = expand("results/representations.{ext}", ext=["csv", "md", "png"])


rule all:
    default_target: True
    input:
        NUGGET_TARGETS,
        "results/claims.csv",
        SUBENCODER_TARGETS,
        DISTILL_TARGETS,
        REPRESENTATION_TARGETS,
        RULE_BENCHMARK_OUTPUTS,  # runtime and memory per rule, after every other target above


rule nugget:
    """NUGGET (Qin & Van Durme 2023): Tables 1-4, Figures 4-8 and 11."""
    input:
        NUGGET_TARGETS,


rule subencoder:
    """Sub-sentence encoder (Chen et al. 2023): Tables 1, 4, 5, 8 (retrieval), 7 (segmenters), 3 (C-STS, opt-in)."""
    input:
        SUBENCODER_TARGETS,


rule distill:
    """Document embedding by distillation (Burian 2023): teachers, students, loss curves, geometry, IMDB (paper)."""
    input:
        DISTILL_TARGETS,


rule representations:
    """Every representation (BM25, pooling, NUGGET, TSDAE, the students and teachers, the SubEncoder) on every task."""
    input:
        REPRESENTATION_TARGETS,


rule nugget_claims:
    """NUGGET's claims with verdicts over the claim seeds."""
    input:
        "results/claims/nugget.csv",


rule subencoder_claims:
    """The sub-sentence encoder's claims with verdicts over the claim seeds."""
    input:
        "results/claims/subencoder.csv",


rule distill_claims:
    """Distillation's claims with verdicts over the claim seeds."""
    input:
        "results/claims/distill.csv",


# Not part of `all` (it would lengthen every run): `snakemake --cores all exports` after (or instead of) `all`.
rule exports:
    """Trained models as sentence-transformers folders, the ranking evaluations as TREC runs (docs/interop.md)."""
    input:
        EXPORTS.targets(),


# Last, when every rule is known: a target that no rule makes (a typo, a table named as a paper numbers it)
# stops here with the close matches and the main targets, before Snakemake's bare MissingRuleException.
check_requested_targets(workflow)
