"""NUGGET's results tables (Qin & Van Durme, ICML 2023), each module tied to a part of the paper:

- ``table1``: Table 1 (§6.1.1, Appendix A), size and lengths of the two ranking tasks;
- ``table2_rows``: one Table 2 row (§6.1): encode a task's documents with the row's model and rank them;
- ``table2``: Table 2 (§6.1), the rows beside the paper's, as CSV and markdown;
- ``table4``: Table 4 (§7.1), the ablations, scored like Table 2;
- ``plots``: Table 2's figure, our MRR beside the paper's;
- ``uncertainty``: per-query scores of the ranking tables and the statistics closing every NUGGET table;
- ``encoding_folders``: the names of the shared encodings folders Table 2's rows read.

The ranking evaluation itself (scoring candidates, MRR×100) is shared with the distillation work and
lives in ``multivec.evaluation.ranking_evaluation``.

Nothing is imported here: the workflow imports the encodings folder names (``encoding_folders``) while it
parses, and pandas and torch would otherwise cost every Snakemake start.
"""
