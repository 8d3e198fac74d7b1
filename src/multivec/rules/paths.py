"""Shared by every work's rules: the paths of raw, extracted and built data, the raw files each corpus source
needs, and the overlap audit's registry of training corpora and evaluation tasks (formerly in rules/common.smk).

Functions that read the config take it as their first argument; the rule files bind it (rules/common.smk).
Nothing here imports a heavy library: the workflow imports it at every start.
"""

from __future__ import annotations

from typing import Any, Mapping

from multivec.data.sources import SOURCES
from multivec.nugget.tables.encoding_folders import TOKEN_POOLING_ENCODINGS

TASKS = ["pi", "rr"]  # Table 2's ranking tasks: paraphrase identification, passage reranking
SEED_PATTERN = "[0-9]+"  # a training seed in a path: models/.../seed<seed>/
REGISTERED_SOURCES = "|".join(SOURCES)  # the download rule's {source} wildcard


def raw(source: str, file: str) -> str:
    """A downloaded (or mirrored) file of a registered source."""
    return f"data/raw/{source}/{file}"


def corpus(objective: str, split: str) -> str:
    """Training documents for an objective: ae (autoencoding) or mt (translation)."""
    name = {"ae": "autoencoding", "mt": "translation"}[objective]
    return f"data/built/corpora/{name}/{split}.jsonl"


def task_dir(task: str) -> str:
    return f"data/built/tasks/{task}"


def frozen_bottom_dir(task: str) -> str:
    """Token states after the frozen bottom (embeddings + layers 1..l) of every document of a task."""
    return f"data/frozen_bottom/{task}"


PROPSEGMENT_SPLIT = "eval_propsegment"  # PropSegment's propositions as texts, for the distillation models' embeddings
DOCUMENT_TASKS = ["lee", "polarity"]  # the document tasks every representation is scored on (evaluation.document_tasks)


def document_task_documents(task: str) -> str:
    """A document task's documents: the distillation work's evaluation file (rules/distill_teachers.smk)."""
    return f"data/built/distill/eval_{task}.jsonl"


def document_task_gold(task: str) -> str:
    """A document task's gold folder beside its documents (ratings or labels)."""
    return f"data/built/distill/eval_{task}"


def token_pooling_dir(ratio: Any, task: str) -> str:
    """The pooled encodings of one ratio on one task (rules/token_pooling.smk)."""
    return f"data/encodings/{TOKEN_POOLING_ENCODINGS}/r{ratio}/{task}"


# Raw files each corpus source needs (names as in src/multivec/data/sources.py).
GENSIM_ENWIKI = "data/raw/gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
SOURCE_FILES = {
    "wikitext2": [raw("wikitext2", "valid.txt"), raw("wikitext2", "test.txt")],
    "wikitext103": ["data/extracted/wikitext103_raw/wikitext-103-raw/wiki.train.raw"],
    "gensim_enwiki": [GENSIM_ENWIKI],
    "debian_reference": [raw("debian_reference", "pairs.jsonl")],
    "wmt19_enzh": [raw("wmt19_enzh", "news-commentary-v14.en-zh.tsv.gz")],
    "wmt19_enzh_dev": [raw("wmt19_enzh", "dev.tgz")],
    "parabank_v1": ["data/extracted/parabank_v1/full/parabank.tsv"],
}

ARCHIVES = {
    "wikitext103_raw": raw("wikitext103_raw", "wikitext-103-raw-v1.zip"),
    "parabank_v1": raw("parabank_v1", "parabank-1.0-full.zip"),
}


def autoencoding_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The raw files of every source of the autoencoding corpus (corpora.autoencoding.sources)."""
    return {name: SOURCE_FILES[name] for name in config["corpora"]["autoencoding"]["sources"]}


def translation_inputs(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The raw files of the translation corpus's source, and WMT19's dev set when that is the source."""
    source = config["corpora"]["translation"]["source"]
    inputs = {source: SOURCE_FILES[source]}
    if source == "wmt19_enzh":
        inputs["dev"] = SOURCE_FILES["wmt19_enzh_dev"]
    return inputs


def pi_task_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """Table 2's PI task: the released dev set, or ParaBank to build it from (table2.pi.source)."""
    if config["table2"]["pi"]["source"] == "released":
        return {
            "docs": raw("nugget_pi", "dev/docs.txt"),
            "task": raw("nugget_pi", "dev/task.jsonl"),
        }
    return {"parabank": SOURCE_FILES["parabank_v1"]}


def rr_task_inputs(config: Mapping[str, Any]) -> list[str]:
    """Table 2's RR task: the raw files of its passage source (table2.rr.source)."""
    return SOURCE_FILES[config["table2"]["rr"]["source"]]


# Overlap audit (rules/audit.smk): every training corpus x every evaluation task the DAG builds. One entry per
# corpus or task: {"format": a reader of multivec.data.overlap, "files": [...]}; each work's rules add theirs.
def audit_corpora() -> dict[str, dict[str, Any]]:
    """NUGGET's training corpora, the first entries of the audit's corpora (a new dict each call)."""
    return {
        "ae": {"format": "training_jsonl", "files": [corpus("ae", "train"), corpus("ae", "dev")]},
        "mt": {"format": "training_jsonl", "files": [corpus("mt", "train"), corpus("mt", "dev")]},
    }


def audit_tasks() -> dict[str, dict[str, Any]]:
    """Table 2's tasks, the first entries of the audit's tasks (a new dict each call)."""
    return {task: {"format": "ranking_task", "files": [f"{task_dir(task)}/docs.txt", f"{task_dir(task)}/task.jsonl"]}
            for task in TASKS}


def audit_inputs(corpora: Mapping[str, Mapping[str, Any]], tasks: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every file of every audited corpus and task, sorted and once."""
    return sorted({f for spec in [*corpora.values(), *tasks.values()] for f in spec["files"]})
