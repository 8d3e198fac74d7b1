"""Every kind of artifact the DAG writes, with the inspector that describes it.

One ``ArtifactKind`` a line: a path pattern relative to the working directory (``*`` = one
path segment or part of one, ``**`` = any number of segments) and the name of the inspector
that ``detect`` must pick for such a path. The first pattern that matches a path is its kind.
``tests/test_inspector_registry.py`` lists the DAG's outputs (``snakemake --summary`` at demo and
paper scale) and the rules' ``log:``/``benchmark:`` paths and fails for any path no pattern covers,
then builds a small sample of every kind and checks ``detect`` names its inspector.
A new rule's output is one more line here (and, for a new inspector, a sample in that test).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class ArtifactKind:
    pattern: str
    inspector: str
    what: str

    @cached_property
    def regex(self) -> re.Pattern:
        parts = re.split(r"(\*\*/|\*)", self.pattern)
        translated = {"**/": "(?:.*/)?", "*": "[^/]*"}
        return re.compile("".join(translated.get(p, re.escape(p)) for p in parts) + r"/?\Z")


ARTIFACT_KINDS: tuple[ArtifactKind, ...] = (
    # downloads and extracted sources (rules/data.smk)
    ArtifactKind("data/raw/*/**/docs.txt", "documents tsv", "a released ranking task's documents (NUGGET PI)"),
    ArtifactKind("data/raw/*/**/task.jsonl", "ranking task file", "a released ranking task's queries"),
    ArtifactKind("data/raw/**/*.jsonl", "jsonl", "downloaded JSONL (Debian Reference pairs)"),
    ArtifactKind("data/raw/**/*.json", "json", "downloaded JSON (PropSegment)"),
    ArtifactKind("data/raw/**/*.zip", "archive", "a downloaded zip (WikiText-103, ParaBank)"),
    ArtifactKind("data/raw/**/*.tgz", "archive", "a downloaded tar archive (WMT19 dev)"),
    ArtifactKind("data/raw/**/*.bz2", "compressed", "a compressed dump (gensim's Wikipedia sample)"),
    ArtifactKind("data/raw/**/*.tar.gz", "archive", "a downloaded tar.gz archive (IMDB aclImdb_v1)"),
    ArtifactKind("data/raw/**/*.gz", "compressed", "a compressed corpus (News Commentary)"),
    ArtifactKind("data/raw/**/*.txt", "text", "downloaded raw text (WikiText-2)"),
    ArtifactKind("data/raw/gensim/*.cor", "text", "gensim's Lee corpus"),
    ArtifactKind("data/extracted/**/*.tsv", "tsv", "an extracted tab-separated source (ParaBank)"),
    ArtifactKind("data/extracted/**/*.raw", "text", "extracted raw text (WikiText-103)"),
    # built data (rules/data.smk, rules/table2.smk)
    ArtifactKind("data/built/corpora/*/*.jsonl", "corpus", "training documents {id, source, target}"),
    ArtifactKind("data/built/**/meta.json", "json", "a builder's inputs, counts, skips and warnings"),
    ArtifactKind("data/built/subencoder/pairs/pairs.jsonl", "subencoder sentence pairs",
                 "sub-sentence encoder: unlabelled sentence pairs"),
    ArtifactKind("data/built/subencoder/*/segments.jsonl", "subencoder segments",
                 "sub-sentence encoder: sentences -> propositions with aligned char spans"),
    ArtifactKind("data/built/subencoder/*.jsonl", "subencoder training rows",
                 "sub-sentence encoder: training/dev rows (propositions, char spans, labels)"),
    ArtifactKind("models/subencoder_segmenter", "model", "the distilled seq2seq segmenter (paper scale)"),
    ArtifactKind("data/built/nugget_lm/*.jsonl", "jsonl", "NUGGET LM text streams {id, text} (train, dev, test)"),
    ArtifactKind("data/built/tasks/*", "ranking task", "a ranking task folder (docs.txt + task.jsonl)"),
    ArtifactKind("data/built/tasks/*/docs.txt", "documents tsv", "a ranking task's documents"),
    ArtifactKind("data/built/tasks/*/task.jsonl", "ranking task file", "a ranking task's queries"),
    ArtifactKind("data/frozen_bottom/*", "frozen bottom states", "a task's shared frozen-bottom token states"),
    ArtifactKind("data/encodings/nugget_ablation/*/seed*/*", "encodings",
                 "one Table 4 ablation's (one training seed) vectors of one task"),
    ArtifactKind("data/encodings/token_pooling/r*/*", "encodings",
                 "token pooling: the base encoder's token vectors Ward-pooled to NUGGET's k at one ratio, one task"),
    ArtifactKind("data/encodings/*/seed*/*", "encodings", "a trained Table 2 row's (one seed) vectors of one task"),
    ArtifactKind("data/encodings/*/*", "encodings", "per-document vectors of one encoder on one task"),
    ArtifactKind("data/built/corpora/*/sentence_final_share.json", "json",
                 "r_sb: the share of sentence-final source tokens (NUGGET Table 4)"),
    # distillation teachers (rules/distill_teachers.smk)
    ArtifactKind("data/built/nugget_gain/documents.jsonl", "jsonl", "probability-gain documents {id, text, length}"),
    ArtifactKind("data/built/distill/*.jsonl", "jsonl", "distillation documents {id, text} (train, eval_<task>)"),
    ArtifactKind("data/built/distill/eval_pi", "ranking task", "PI cut to the distillation's queries"),
    ArtifactKind("data/built/distill/eval_rr", "ranking task", "RR cut to the distillation's queries"),
    ArtifactKind("data/built/distill/eval_*", "distill evaluation task", "Lee ratings or polarity labels"),
    ArtifactKind("data/distill/teachers/*/*", "distill embeddings", "one teacher's vectors of one document set"),
    ArtifactKind("results/distill_teachers.csv", "csv table", "every teacher on every demo distillation task"),
    # document embedding by distillation, student side (rules/distill.smk)
    ArtifactKind("data/distill/student/*/seed*/*", "distill embeddings", "a trained student's (one seed) embeddings of one split"),
    ArtifactKind("data/distill/student/*/*", "distill embeddings", "the untrained student's embeddings of one split"),
    ArtifactKind("data/distill/concat/*", "distill embeddings", "both teachers' embeddings side by side"),
    ArtifactKind("models/paragraph_vector/*", "paragraph vector model", "a saved Paragraph Vector variant"),
    ArtifactKind("models/paragraph_vector/*/part*.safetensors", "safetensors",
                 "one Paragraph Vector part's arrays: word and document vectors, output weights, counts, RNG"),
    ArtifactKind("models/paragraph_vector/*/part*.json", "json",
                 "one Paragraph Vector part's vocabulary and hyper-parameters"),
    ArtifactKind("models/distill/*/seed*", "distill student", "a trained distillation student (one seed)"),
    ArtifactKind("results/distill_imdb/*/*.reviews.jsonl", "jsonl", "one IMDB row's (one seed) test predictions"),
    # trained models (rules/nugget.smk)
    ArtifactKind("models/*/*/seed*", "model", "a trained model folder (one training seed)"),
    ArtifactKind("models/*/*", "model", "a trained model folder"),
    ArtifactKind("models/**/model.safetensors", "safetensors", "a model's weights"),
    ArtifactKind("models/**/checkpoint", "checkpoint", "the last training checkpoint"),
    ArtifactKind("models/**/metrics.csv", "csv table", "training and dev loss per evaluation"),
    ArtifactKind("models/**/*.json", "json", "a model's config or training summary"),
    # results (rules/table2.smk and any later table)
    ArtifactKind("results/table2/**/*.rankings.jsonl", "rankings",
                 "per-query rankings of one row (a trained row: one seed, seed<seed>/) on one task"),
    ArtifactKind("results/table2/**/*.json", "ranking metrics", "one row's (one seed's) MRR on one task"),
    ArtifactKind("results/nugget_table4/*/seed*/*.rankings.jsonl", "rankings",
                 "per-query rankings of one ablation (one seed) on one task"),
    ArtifactKind("results/nugget_table4/*/seed*/*.json", "ranking metrics", "one Table 4 ablation's (one seed) MRR on one task"),
    ArtifactKind("results/subencoder/**/*.rankings.jsonl", "jsonl",
                 "PropSegment per query and ranking of one evaluation: the top 20 units, their scores, the gold units"),
    ArtifactKind("results/table2.csv", "results table", "Table 2 with the paper's numbers"),
    ArtifactKind("results/representations.csv", "csv table",
                 "every representation against every task: value, CI, index bytes per document, Pareto front"),
    ArtifactKind("results/representation_sizes.json", "json",
                 "the representation matrix's index size per document of every (representation, task)"),
    ArtifactKind("results/distill_frozen_check.json", "json",
                 "the distillation table's sanity row: the frozen-backbone student embeds as the untrained one"),
    ArtifactKind("results/inputs/**/*.json", "json",
                 "a committed copy of a small file a results table reads (training summary, config, meta.json)"),
    # the statistics layer (rules/statistics_common.smk, rules/claims.smk)
    ArtifactKind("results/units/*.parquet", "unit scores", "per-unit scores of one table's rows over a seed set"),
    ArtifactKind("results/*_tests.csv", "csv table", "a table's paired comparisons: difference, CI, p, Holm p"),
    ArtifactKind("results/claims.csv", "csv table", "every paper claim with its computed verdict"),
    ArtifactKind("results/claims/*.csv", "csv table", "one work's paper claims with their computed verdicts"),
    ArtifactKind("results/claims.md", "text", "the claims and their verdicts in markdown"),
    ArtifactKind("results/nugget_analysis/bleu/*/*.jsonl", "jsonl",
                 "NUGGET Fig. 4: dev documents decoded from nuggets (one model, one seed)"),
    ArtifactKind("results/nugget_analysis/selected_tokens/*/*.jsonl", "jsonl",
                 "NUGGET Fig. 5: per dev document, every token's type and whether it is a nugget (one seed)"),
    ArtifactKind("results/*.html", "text", "a figure as an HTML page (NUGGET Fig. 6)"),
    ArtifactKind("results/nugget_analysis/probability_gain/seed*/*.safetensors", "safetensors",
                 "raw eq. 9 gains of one document length: gains, positions, source_indices, target_ids"),
    ArtifactKind("results/nugget_analysis/probability_gain/vectors_only/seed*/*.safetensors", "safetensors",
                 "the same gains with each nugget exposed by its vector alone (no decoder position term)"),
    ArtifactKind("results/nugget_lm/*/*.history.safetensors", "safetensors",
                 "history vectors per evaluated segment (vectors, counts, stream, position), one LM and seed"),
    ArtifactKind("results/nugget_lm/*/*.segments.jsonl", "jsonl",
                 "Table 3 per test segment: its words' NLL at each h and their count (one LM and seed)"),
    ArtifactKind("results/**/*.csv", "csv table", "a results or benchmark table"),
    ArtifactKind("results/**/*.md", "text", "a table in markdown"),
    ArtifactKind("results/**/*.png", "image", "a figure"),
    ArtifactKind("results/**/*.json", "json", "results metadata"),
    # running the DAG
    ArtifactKind("logs/**/*.log", "rule log", "a rule's log"),
    ArtifactKind("benchmarks/rules/**/*.tsv", "snakemake benchmark", "a job's time and memory"),
    ArtifactKind("benchmarks/rules", "snakemake benchmarks folder", "time and memory per rule"),
    # metadata sidecars any builder may add
    ArtifactKind("**/*.meta.json", "json", "an artifact's metadata (counts) sidecar"),
)


def kind_of(relative_path: str) -> ArtifactKind | None:
    """The first kind whose pattern matches a path relative to the working directory."""
    path = relative_path.replace("\\", "/").strip("/")
    return next((kind for kind in ARTIFACT_KINDS if kind.regex.match(path)), None)
