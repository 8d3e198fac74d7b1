"""What the Snakemake report (``snakemake --report``) shows beside the works' own tables and figures.

Modules:
- ``rule_benchmarks``: runtime and peak memory per rule, from the DAG's ``benchmark:`` files;
- ``report_contents``: what a built report holds (read back by the tests);
- ``report_flags``: which outputs the rules flag with ``report(...)``, without building anything.
"""
