"""Shared pipeline and cluster support: what runs the DAG, not what any paper computes.

- ``script_support``: the thin scripts' logging into the rule's ``log:`` file and thread limits;
- ``rule_resources``: a rule's threads and resources from its family in the config's ``resources`` block;
- ``lazy_exports``: package names loaded on first use, so parsing the workflow stays light;
- ``slurm_profile``: a site copy of ``profiles/slurm`` with a cluster's account and partitions;
- ``slurm_preflight``: every job about to be submitted checked against the cluster before any runs;
- ``rule_benchmarks``: runtime and peak memory per rule, from the DAG's ``benchmark:`` files;
- ``report_flags`` / ``report_contents``: what the Snakemake report flags and what a built report holds;
- ``targets``: the per-paper targets and the message for a target no rule makes;
- ``results_at_a_glance``: the README's results block, rendered from the committed results;
- ``inspector``: what ``python -m multivec inspect`` shows of benchmark files and rule logs.
"""
