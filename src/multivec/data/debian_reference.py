"""The Debian Reference en -> zh pairs (source ``debian_reference``), built from the two Debian packages.

The pairs file (``debian-reference/pairs.jsonl`` in the data mirror) has no upstream URL: it is made from the
binary packages ``debian-reference-en`` and ``debian-reference-zh-cn``, which ship the book as HTML (DocBook
XSL output, ``usr/share/debian-reference/<doc>.<lang>.html``). This module rebuilds it:

1. **Packages.** ``obtain_packages`` finds the two ``.deb`` files in a folder the user placed them in --
   ``$MULTIVEC_DEBIAN_PACKAGES`` (``PACKAGES_ENV``), else ``<data mirror>/debian-reference/`` -- named as
   Debian names them (``debian-reference-en_<version>_all.deb``, ``debian-reference-zh-cn_<version>_all.deb``);
   else, where ``apt-get`` is on ``PATH`` (a Debian or Ubuntu host), runs ``apt-get download`` for both in a
   temporary folder, asking for the registered version (``REGISTERED_VERSION``) first and the host's
   candidate version when the archive no longer has it.
2. **Extraction, pure Python** (``read_deb``): a ``.deb`` is an ``ar`` archive holding ``debian-binary``,
   ``control.tar.*`` and ``data.tar.*`` (xz, gzip, bzip2 or none; zstd where the ``zstandard`` module is
   installed); no ``dpkg`` needed. The package name and version come from ``control``.
3. **Paragraphs** (``html_paragraphs``): the text of every ``<p>`` of a chapter, whitespace collapsed to
   single spaces, without table and figure captions (``<p class="title">``) and without empty paragraphs.
4. **Alignment** (``align``): the English and Chinese translations are generated from one DocBook source by
   po4a, so a chapter has the same paragraphs in the same order in both languages; paragraph ``i`` of the
   English chapter pairs with paragraph ``i`` of the Chinese one. The documents read are the preface and the
   chapters (``pr01``, ``ch01`` ... ``ch12`` in 2.100; not the title page ``index`` nor the appendix ``apa``),
   in book order. A pair is kept when its Chinese side holds a CJK ideograph (U+4E00-U+9FFF): the others are
   untranslated (command lines, file names, package names, titles left in English). ``i`` is the index of the
   paragraph in its document, before that filter. A chapter whose two languages have different numbers of
   paragraphs (a translation out of step with its English source, in some other version) is left out and
   counted, never aligned by guess.
5. **Output**: one JSON object per line, ``{"doc", "i", "en", "zh"}`` in that key order, ``ensure_ascii``
   off (``json.dumps`` defaults otherwise), UTF-8. From the 2.100 packages this reproduces the mirror's
   ``pairs.jsonl`` byte for byte (2,616 pairs, the registered sha256).

``build_pairs(dest, mirror)`` does all of it and writes ``<dest>`` atomically plus its provenance,
``<stem>.provenance.json`` next to it: the packages' names, versions and sha256, how they were obtained, the
pair count and whether the file matches the registry. Packages of another version give other pairs: they are
written anyway, with a warning that gives both counts and digests. ``prerequisites(mirror)`` says, without
building, whether a build can start here (the check before any job, ``multivec.data.availability``).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import logging
import lzma
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

log = logging.getLogger(__name__)

PACKAGES = {"en": "debian-reference-en", "zh": "debian-reference-zh-cn"}
HTML_LANG = {"en": "en", "zh": "zh-cn"}  # <doc>.<lang>.html in usr/share/debian-reference/
HTML_FOLDER = "usr/share/debian-reference"
PACKAGES_ENV = "MULTIVEC_DEBIAN_PACKAGES"
MIRROR_FOLDER = "debian-reference"  # <mirror>/debian-reference/: pairs.jsonl, or the two .deb files
REGISTERED_VERSION = "2.100"
REGISTERED_PAIRS = 2616
_DOC = re.compile(r"(pr|ch)(\d+)")  # the preface and the chapters; not index (title page) nor apa (appendix)
_HAN = re.compile(r"[\u4e00-\u9fff]")
_APT_TIMEOUT = 600


class DebianReferenceError(RuntimeError):
    """The pairs cannot be built (no packages, an unreadable package); the message says what to do."""


# -- .deb files, pure Python -----------------------------------------------------------------------------------

def _ar_members(data: bytes, where: str) -> dict[str, bytes]:
    """Members of an ``ar`` archive (the common format of ``.deb`` files): name -> bytes."""
    if not data.startswith(b"!<arch>\n"):
        raise DebianReferenceError(f"{where}: not a Debian package (no ar archive header)")
    members, offset = {}, 8
    while offset + 60 <= len(data):
        header = data[offset:offset + 60]
        if header[58:60] != b"`\n":
            raise DebianReferenceError(f"{where}: damaged ar member header at byte {offset}")
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        offset += 60
        members[name] = data[offset:offset + size]
        offset += size + (size % 2)  # members start at even offsets
    return members


def _decompress(name: str, data: bytes, where: str) -> bytes:
    if name.endswith(".xz"):
        return lzma.decompress(data)
    if name.endswith(".gz"):
        return gzip.decompress(data)
    if name.endswith(".bz2"):
        return bz2.decompress(data)
    if name.endswith(".zst"):
        try:
            import zstandard
        except ImportError:
            raise DebianReferenceError(f"{where}: {name} is zstd-compressed; install the 'zstandard' package to "
                                       "read it") from None
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    if name.endswith(".tar"):
        return data
    raise DebianReferenceError(f"{where}: unknown compression of member {name}")


def _tar_member(members: dict[str, bytes], stem: str, where: str) -> tarfile.TarFile:
    found = [name for name in members if name == stem + ".tar" or name.startswith(stem + ".tar.")]
    if not found:
        raise DebianReferenceError(f"{where}: no {stem}.tar.* member (members: {', '.join(members)})")
    return tarfile.open(fileobj=io.BytesIO(_decompress(found[0], members[found[0]], where)), mode="r:")


@dataclass
class DebPackage:
    """One read ``.deb``: its control fields, its files (``path`` without a leading ``./`` -> bytes)."""
    path: Path
    control: dict[str, str]
    files: dict[str, bytes]
    sha256: str

    @property
    def name(self) -> str:
        return self.control.get("Package", "")

    @property
    def version(self) -> str:
        return self.control.get("Version", "")


def _control_fields(text: str) -> dict[str, str]:
    fields, key = {}, None
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and key:
            fields[key] += "\n" + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            key = key.strip()
            fields[key] = value.strip()
    return fields


def read_deb(path: str | os.PathLike, wanted: str = HTML_FOLDER) -> DebPackage:
    """Read a ``.deb`` without dpkg: its ``control`` fields and the regular files under ``wanted``."""
    path = Path(path)
    data = path.read_bytes()
    members = _ar_members(data, str(path))
    with _tar_member(members, "control", str(path)) as tar:
        control = next((tar.extractfile(m).read().decode("utf-8", "replace") for m in tar.getmembers()
                        if m.isfile() and m.name.lstrip("./") == "control"), None)
    if control is None:
        raise DebianReferenceError(f"{path}: its control.tar has no control file")
    files = {}
    with _tar_member(members, "data", str(path)) as tar:
        for member in tar.getmembers():
            name = member.name[2:] if member.name.startswith("./") else member.name.lstrip("/")
            if member.isfile() and name.startswith(wanted.rstrip("/") + "/"):
                files[name] = tar.extractfile(member).read()
    return DebPackage(path, _control_fields(control), files, hashlib.sha256(data).hexdigest())


# -- paragraphs and alignment ------------------------------------------------------------------------------------

class _Paragraphs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self._depth = 0
        self._caption = False
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "p":
            if self._depth == 0:
                self._text = []
                self._caption = ("class", "title") in attrs
            self._depth += 1

    def handle_endtag(self, tag):
        if tag == "p" and self._depth:
            self._depth -= 1
            if self._depth == 0 and not self._caption:
                self.paragraphs.append(" ".join("".join(self._text).split()))

    def handle_data(self, data):
        if self._depth:
            self._text.append(data)


def html_paragraphs(html: str) -> list[str]:
    """The text of every ``<p>`` (outermost), whitespace collapsed; no captions (``class="title"``), no empty."""
    parser = _Paragraphs()
    parser.feed(html)
    parser.close()
    return [p for p in parser.paragraphs if p]


def _doc_key(doc: str) -> tuple[int, int]:
    match = _DOC.fullmatch(doc)
    return (0 if match.group(1) == "pr" else 1, int(match.group(2)))


def documents(files: dict[str, bytes], lang: str) -> dict[str, str]:
    """``{doc: html}`` of the preface and chapters in a package's files, in book order."""
    found = {}
    for name, data in files.items():
        folder, _, base = name.rpartition("/")
        suffix = f".{lang}.html"
        if folder == HTML_FOLDER and base.endswith(suffix) and _DOC.fullmatch(base[:-len(suffix)]):
            found[base[:-len(suffix)]] = data.decode("utf-8")
    return {doc: found[doc] for doc in sorted(found, key=_doc_key)}


@dataclass
class Alignment:
    pairs: list[dict] = field(default_factory=list)
    paragraphs: int = 0  # aligned paragraph pairs before the CJK filter
    untranslated: int = 0  # left out: no CJK ideograph on the Chinese side
    skipped_docs: dict[str, tuple[int, int]] = field(default_factory=dict)  # doc -> (en, zh) paragraph counts
    missing_docs: list[str] = field(default_factory=list)  # in one language only


def align(english: dict[str, str], chinese: dict[str, str]) -> Alignment:
    """Pair paragraph i of each English document with paragraph i of its Chinese translation (module docstring)."""
    result = Alignment()
    result.missing_docs = sorted(set(english) ^ set(chinese), key=_doc_key)
    for doc in english:
        if doc not in chinese:
            continue
        en, zh = html_paragraphs(english[doc]), html_paragraphs(chinese[doc])
        if len(en) != len(zh):
            result.skipped_docs[doc] = (len(en), len(zh))
            continue
        result.paragraphs += len(en)
        for i, (en_text, zh_text) in enumerate(zip(en, zh)):
            if _HAN.search(zh_text):
                result.pairs.append({"doc": doc, "i": i, "en": en_text, "zh": zh_text})
            else:
                result.untranslated += 1
    return result


def pairs_jsonl(pairs: list[dict]) -> bytes:
    return "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs).encode("utf-8")


# -- obtaining the packages ------------------------------------------------------------------------------------------

def placed_folders(mirror: str | os.PathLike | None = None) -> list[Path]:
    """Where placed package files are looked for: ``$MULTIVEC_DEBIAN_PACKAGES``, then ``<mirror>/debian-reference``."""
    folders = []
    if os.environ.get(PACKAGES_ENV):
        folders.append(Path(os.environ[PACKAGES_ENV]).expanduser())
    if mirror is not None:
        folders.append(Path(mirror) / MIRROR_FOLDER)
    return folders


def _version_of(path: Path, package: str) -> str:
    return path.name[len(package) + 1:].rsplit("_", 1)[0]


def _pick(folder: Path, package: str) -> Path | None:
    found = sorted(folder.glob(f"{package}_*.deb"))
    if not found:
        return None
    if len(found) > 1:
        registered = [p for p in found if _version_of(p, package) == REGISTERED_VERSION]
        if len(registered) == 1:
            return registered[0]
        raise DebianReferenceError(f"{folder} holds several {package} packages ({', '.join(p.name for p in found)}); "
                                   f"keep one (version {REGISTERED_VERSION} gives the registered pairs)")
    return found[0]


def placed_packages(mirror: str | os.PathLike | None = None) -> tuple[dict[str, Path], Path] | None:
    """``({"en": deb, "zh": deb}, folder)`` of the first folder that holds both packages, else None."""
    for folder in placed_folders(mirror):
        if folder.is_dir():
            picked = {lang: _pick(folder, package) for lang, package in PACKAGES.items()}
            if all(picked.values()):
                return picked, folder
    return None


def apt_get() -> str | None:
    """``apt-get`` on ``PATH`` (a Debian or Ubuntu host), else None."""
    return shutil.which("apt-get")


def _apt_download(folder: Path, versioned: bool) -> subprocess.CompletedProcess:
    names = [f"{p}={REGISTERED_VERSION}" if versioned else p for p in PACKAGES.values()]
    log.info("running: apt-get download %s (in %s)", " ".join(names), folder)
    return subprocess.run([apt_get(), "download", *names], cwd=folder, capture_output=True, text=True,
                          timeout=_APT_TIMEOUT)


def download_packages(folder: Path) -> dict[str, Path]:
    """``apt-get download`` both packages into ``folder`` (registered version first, else the candidate)."""
    if apt_get() is None:
        raise DebianReferenceError("apt-get is not on PATH")
    result = _apt_download(folder, versioned=True)
    if result.returncode != 0:
        log.warning("apt-get has no %s %s (%s); downloading the version this host's archive offers",
                    "/".join(PACKAGES.values()), REGISTERED_VERSION, result.stderr.strip().splitlines()[-1:])
        result = _apt_download(folder, versioned=False)
    if result.returncode != 0:
        raise DebianReferenceError(f"apt-get download {' '.join(PACKAGES.values())} failed (exit {result.returncode}): "
                                   f"{result.stderr.strip()[-800:]}")
    picked = {lang: _pick(folder, package) for lang, package in PACKAGES.items()}
    missing = [PACKAGES[lang] for lang, path in picked.items() if path is None]
    if missing:
        raise DebianReferenceError(f"apt-get download left no {', '.join(missing)} package in {folder}")
    return picked


def how_to_get() -> str:
    """How to make a build possible, for messages."""
    return (f"put {PACKAGES['en']}_{REGISTERED_VERSION}_all.deb and {PACKAGES['zh']}_{REGISTERED_VERSION}_all.deb "
            f"(`apt-get download {' '.join(PACKAGES.values())}` on any Debian or Ubuntu host, or any Debian "
            f"mirror's pool/main/d/debian-reference/) in a folder named by ${PACKAGES_ENV} or in "
            f"<data mirror>/{MIRROR_FOLDER}/; or run where apt-get is on PATH")


def prerequisites(mirror: str | os.PathLike | None = None) -> tuple[bool, str]:
    """(can a build start here, what it would use or what is missing); cannot test the network."""
    try:
        placed = placed_packages(mirror)
    except DebianReferenceError as err:
        return False, str(err)
    if placed is not None:
        return True, f"placed package files in {placed[1]}"
    if apt_get() is not None:
        return True, "apt-get download (Debian package archive)"
    looked = " or ".join(str(f) for f in placed_folders(mirror)) or f"${PACKAGES_ENV} (unset)"
    return False, (f"no apt-get on PATH and no package files {PACKAGES['en']}_*.deb and {PACKAGES['zh']}_*.deb "
                   f"in {looked}")


# -- building -------------------------------------------------------------------------------------------------------

@dataclass
class BuildReport:
    dest: Path
    pairs: int
    sha256: str
    versions: dict[str, str]  # package -> version
    obtained: str
    matches_registry: bool | None
    alignment: Alignment

    def summary(self) -> str:
        versions = ", ".join(f"{p} {v}" for p, v in self.versions.items())
        return f"{self.pairs} pairs from {versions} ({self.obtained})"


def build_from_packages(en_deb: str | os.PathLike, zh_deb: str | os.PathLike) -> tuple[bytes, Alignment, dict]:
    """(pairs.jsonl bytes, alignment counts, {package: {version, sha256, file}}) of two ``.deb`` files."""
    packages = {}
    html = {}
    for lang, path in (("en", en_deb), ("zh", zh_deb)):
        deb = read_deb(path)
        if deb.name != PACKAGES[lang]:
            raise DebianReferenceError(f"{path}: package {deb.name!r}, expected {PACKAGES[lang]!r}")
        packages[deb.name] = {"version": deb.version, "sha256": deb.sha256, "file": Path(path).name}
        html[lang] = documents(deb.files, HTML_LANG[lang])
        if not html[lang]:
            raise DebianReferenceError(f"{path}: no {HTML_FOLDER}/<chapter>.{HTML_LANG[lang]}.html files")
    alignment = align(html["en"], html["zh"])
    return pairs_jsonl(alignment.pairs), alignment, packages


def provenance_path(dest: str | os.PathLike) -> Path:
    """``pairs.provenance.json`` next to ``pairs.jsonl``: what a built file was built from."""
    return Path(dest).with_name(Path(dest).stem + ".provenance.json")


def build_pairs(dest: str | os.PathLike, mirror: str | os.PathLike | None = None,
                registered_sha256: str | None = None, label: str = "debian_reference/pairs.jsonl") -> BuildReport:
    """Obtain the packages (placed files, else apt-get), build the pairs, write ``dest`` and its provenance."""
    dest = Path(dest)
    with tempfile.TemporaryDirectory(prefix="debian-reference-") as tmp:
        placed = placed_packages(mirror)
        if placed is not None:
            debs, folder = placed
            obtained = f"placed package files in {folder}"
        elif apt_get() is not None:
            debs = download_packages(Path(tmp))
            obtained = "apt-get download"
        else:
            raise DebianReferenceError(f"{label}: cannot build the Debian Reference pairs: "
                                       f"{prerequisites(mirror)[1]}. To build them, {how_to_get()}; or give a "
                                       f"data mirror holding {MIRROR_FOLDER}/pairs.jsonl")
        log.info("%s: building from %s and %s (%s)", label, debs["en"].name, debs["zh"].name, obtained)
        data, alignment, packages = build_from_packages(debs["en"], debs["zh"])
    digest = hashlib.sha256(data).hexdigest()
    versions = {name: info["version"] for name, info in packages.items()}
    matches = None if registered_sha256 is None else digest == registered_sha256
    report = BuildReport(dest, len(alignment.pairs), digest, versions, obtained, matches, alignment)
    if alignment.skipped_docs:
        log.warning("%s: left out %d document(s) whose languages have different paragraph counts (en, zh): %s",
                    label, len(alignment.skipped_docs), alignment.skipped_docs)
    if alignment.missing_docs:
        log.warning("%s: documents in one language only, left out: %s", label, ", ".join(alignment.missing_docs))
    if matches is False:
        log.warning("%s: the built pairs differ from the registered ones: built %d pairs (sha256 %s) from %s; the "
                    "registry's file has %d pairs from version %s (sha256 %s). Written anyway: results will differ "
                    "from runs on the registered pairs.", label, report.pairs, digest,
                    ", ".join(f"{p} {v}" for p, v in versions.items()), REGISTERED_PAIRS, REGISTERED_VERSION,
                    registered_sha256)
    elif matches:
        log.info("%s: %s; sha256 matches the registry", label, report.summary())
    dest.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(tmp_name, dest)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    provenance = {"built_by": __name__, "packages": packages, "obtained": obtained, "pairs": report.pairs,
                  "aligned_paragraphs": alignment.paragraphs, "untranslated_left_out": alignment.untranslated,
                  "documents_left_out": {d: list(c) for d, c in alignment.skipped_docs.items()},
                  "sha256": digest, "registered_sha256": registered_sha256, "matches_registry": matches}
    provenance_path(dest).write_text(json.dumps(provenance, indent=1) + "\n", encoding="utf-8")
    return report
