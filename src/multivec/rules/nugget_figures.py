"""NUGGET's work beyond Table 2 (rules/nugget_figures.smk, rules/nugget_gain.smk): the figures' ratios and
objectives (``nugget_analysis``), Fig. 4's rows, and the per-seed files the figures' unit files read
(formerly in rules/common.smk). The models themselves are the zoo's (multivec.rules.nugget_zoo).

The rule files build one ``NuggetFigures`` from the config and the seed sets (rules/common.smk).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from multivec.rules.seed_sets import SeedSets

# Raw eq. 9 gains of one document length, from the AE model of one training seed (rules/nugget_gain.smk).
GAIN_FILE = "results/nugget_analysis/probability_gain/seed{seed}/len{length}.safetensors"
# The same with each nugget exposed by its vector alone, without the decoder's position term (a model whose memory
# carries each slot's position, decoder_memory_positions): which part of the gain the position channel makes.
GAIN_FILE_VECTORS_ONLY = "results/nugget_analysis/probability_gain/vectors_only/seed{seed}/len{length}.safetensors"


class NuggetFigures:
    """Figs. 4, 5, 7 and 8 as the config's ``nugget_analysis`` section sets them."""

    def __init__(self, config: Mapping[str, Any], seeds: SeedSets):
        self.seeds = seeds
        self.ratios = [str(r) for r in config["nugget_analysis"]["ratios"]]  # as the model folders spell them
        self.objectives = config["nugget_analysis"]["objectives"]

    def long_rows(self) -> list[str]:
        """Fig. 4's rows, `<objective>_r<ratio>`, as its unit file names them."""
        return [f"{o}_r{r}" for o in self.objectives for r in self.ratios]

    def fig4_hypothesis_files(self, seedset: str) -> list[tuple[str, str, Any, str]]:
        """(decoded dev documents JSONL, row, seed, objective) of every Fig. 4 model of a seed set."""
        rows = self.seeds.rows("nugget_fig4", seedset, self.long_rows())
        return [(f"results/nugget_analysis/bleu/{o}_r{r}/seed{seed}.jsonl", f"{o}_r{r}", seed, o)
                for o in self.objectives for r in self.ratios if f"{o}_r{r}" in rows
                for seed in self.seeds.model_seeds(seedset)]

    def fig5_document_files(self, seedset: str, ratio: Any) -> list[tuple[str, str, Any]]:
        """(per-document selections JSONL, row = objective, seed) of Fig. 5's models (at `ratio`) of a seed set."""
        return [(f"results/nugget_analysis/selected_tokens/{o}_r{ratio}/seed{seed}.jsonl", o, seed)
                for o in self.seeds.rows("nugget_fig5", seedset, self.objectives)
                for seed in self.seeds.model_seeds(seedset)]

    def gain_files(self, seedset: str, lengths: Iterable[Any], table: str = "nugget_fig7_8",
                   pattern: str = GAIN_FILE) -> list[tuple[str, str, Any]]:
        """(gains file, row = len<L>, seed) of every document length of a seed set (units_nugget_fig7_8; with
        ``pattern`` GAIN_FILE_VECTORS_ONLY, the table of the exposures without the position term)."""
        lengths = list(lengths)
        rows = self.seeds.rows(table, seedset, [f"len{length}" for length in lengths])
        return [(pattern.format(seed=seed, length=length), f"len{length}", seed) for length in lengths
                if f"len{length}" in rows for seed in self.seeds.model_seeds(seedset)]
