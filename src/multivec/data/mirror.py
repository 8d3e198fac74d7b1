"""``python -m multivec mirror DIR [--scale ...]``: write a data mirror of every source file a scale reads.

For an air-gapped cluster: run it on a connected machine, copy ``DIR`` over, and point the pipeline at it
(``$MULTIVEC_DATA_MIRROR`` or the config key ``data_mirror``). ``DIR`` gets the layout of the mirror README
(each file at its registered ``mirror_path``, ``multivec.data.sources``). Each file comes, in this order, from

1. ``DIR`` itself, when it already holds the file with the registered sha256 (a rerun fetches what is left);
2. an existing data mirror (``--from-mirror``, default ``$MULTIVEC_DATA_MIRROR``) that holds it: copied;
3. its builder (``multivec.data.builders``; the Debian Reference pairs from the Debian packages);
4. its upstream URL: downloaded, with a progress bar;

always through ``multivec.data.download.fetch_file``'s checks (sha256 where registered, else size where known;
a file whose digest is not registered is written with a warning that logs it). A file none of these provide
(a mirror-only file without a mirror copy; a failed download) is listed at the end with its reason, and the
command exits with status 1 after writing everything else.

The files are those the scale's DAG reads (``multivec.data.needs``), plus NLTK's data (``nltk_data/``: the
punkt_tab sentence splitter and WordNet, which every scale loads through ``ensure_nltk_data``), copied from the
existing mirror or fetched with ``nltk.download``. ``--scale rehearsal`` writes the demo files the rehearsal's
fixture mirror is made from (WikiText-2, the Debian Reference pairs, PropSegment, NLTK data: what
``multivec.rehearsal.fixture_mirror`` links or cuts); ``python -m multivec rehearsal-mirror OUT --from-mirror DIR``
then writes the fixture mirror. Hub models are not mirrored (the pipeline's README says how to pre-fetch them).
``DIR/mirror-manifest.json`` lists what was written: scale, each file's sha256 and origin.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from multivec.data.builders import builder_for
from multivec.data.debian_reference import DebianReferenceError
from multivec.data.download import DownloadError, fetch_file, sha256_of
from multivec.data.needs import SCALE_FILES, needed_files, scale_config
from multivec.data.sources import get_file
from multivec.io.resources import ENV_MIRROR

log = logging.getLogger(__name__)

MANIFEST = "mirror-manifest.json"
# The demo mirror's files that multivec.rehearsal.fixture_mirror links (LINKED) or cuts (propsegment_files).
REHEARSAL_INPUTS: dict[str, list[str]] = {
    "wikitext2": ["valid.txt", "test.txt"],
    "debian_reference": ["pairs.jsonl"],
    "propsegment": [f"v1/{name}.{split}.json" for split in ("dev", "test")
                    for name in ("document_clusters", "document_cluster_retrieval_instructions", "propositions")]
                   + ["v1/relationships.dev.json"],
}
# NLTK resources every scale loads (multivec.io.resources.ensure_nltk_data): folder under nltk_data/ -> package.
NLTK_RESOURCES = {"tokenizers/punkt_tab": "punkt_tab", "corpora/wordnet": "wordnet"}


@dataclass
class Outcome:
    name: str  # source/file, or nltk_data/<resource>
    ok: bool
    how: str  # "copied", "built", "downloaded", "present", or the reason it failed
    detail: str = ""
    sha256: str | None = None


def files_for_scale(scale: str) -> dict[str, list[str]]:
    """``{source: [file, ...]}`` the mirror of ``scale`` holds (module docstring)."""
    if scale == "rehearsal":
        return {source: list(files) for source, files in REHEARSAL_INPUTS.items()}
    return needed_files(scale_config(scale))


def _size(path: Path) -> str:
    size = float(path.stat().st_size)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return ""


def _readable(path: Path) -> None:
    """Files written through a temporary file are private (0600); a mirror is read by everyone its cluster runs as."""
    umask = os.umask(0)
    os.umask(umask)
    path.chmod(0o666 & ~umask)


def _copy_tree(src: Path, dst: Path) -> None:
    """Copy a folder's files, with this process's default permissions (the source may be read-only)."""
    for path in sorted(src.rglob("*")):
        target = dst / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def mirror_file(source_name: str, relative_file: str, out: Path, source_mirror: Path | None) -> Outcome:
    """Put one registered file at ``out/<mirror_path>`` (module docstring's order)."""
    name = f"{source_name}/{relative_file}"
    remote = get_file(source_name, relative_file)
    dest = out / remote.mirror_path
    if dest.is_file():  # written atomically by an earlier run: complete, but checked against the registry
        if remote.sha256 is not None and sha256_of(dest) == remote.sha256:
            return Outcome(name, True, "present", f"already in {out}, sha256 ok", remote.sha256)
        if remote.sha256 is None and (remote.size is None or dest.stat().st_size == remote.size):
            return Outcome(name, True, "present", f"already in {out}, no registered sha256", sha256_of(dest))
    failures = []
    if source_mirror is not None and (source_mirror / remote.mirror_path).is_file():
        try:
            fetch_file(remote, dest, source_mirror, label=name)
            return Outcome(name, True, "copied", f"from {source_mirror}, {_size(dest)}", sha256_of(dest))
        except DownloadError as err:
            failures.append(str(err))
    builder = builder_for(source_name, relative_file)
    if builder is not None:
        ready, why = builder.prerequisites(source_mirror)
        if ready:
            try:
                report = builder.build(dest, source_mirror, remote.sha256, name)
                digest = sha256_of(dest)
                check = "sha256 ok" if digest == remote.sha256 else f"sha256 {digest} differs from the registry's"
                return Outcome(name, True, "built", f"{report.summary()}, {check}", digest)
            except (DebianReferenceError, OSError, ValueError) as err:
                failures.append(f"build failed: {err}")
        else:
            failures.append(f"cannot be {builder.what} here: {why}")
    if remote.url is not None:
        try:
            fetch_file(remote, dest, None, label=name)
            return Outcome(name, True, "downloaded", f"from {remote.url}, {_size(dest)}", sha256_of(dest))
        except DownloadError as err:
            failures.append(str(err))
    elif builder is None:
        failures.append("mirror-only (no upstream URL) and "
                        + (f"the mirror {source_mirror} has no {remote.mirror_path}" if source_mirror is not None
                           else f"no existing mirror to copy {remote.mirror_path} from (--from-mirror or "
                                f"${ENV_MIRROR})"))
    return Outcome(name, False, "; ".join(f.removeprefix(f"{name}: ") for f in failures))


def mirror_nltk(folder: str, package: str, out: Path, source_mirror: Path | None) -> Outcome:
    """Copy ``nltk_data/<folder>`` from the existing mirror, else ``nltk.download`` it into ``out/nltk_data``."""
    name = f"nltk_data/{folder}"
    target = out / "nltk_data" / folder
    if target.is_dir() or target.with_suffix(".zip").is_file():
        return Outcome(name, True, "present", f"already in {out}")
    if source_mirror is not None and (source_mirror / "nltk_data" / folder).is_dir():
        _copy_tree(source_mirror / "nltk_data" / folder, target)
        return Outcome(name, True, "copied", f"from {source_mirror} (not sha256-checked: no registered digest)")
    try:
        import nltk

        if nltk.download(package, download_dir=str(out / "nltk_data"), quiet=True, raise_on_error=True):
            return Outcome(name, True, "downloaded", f"nltk.download({package!r}) (no registered digest)")
        return Outcome(name, False, f"nltk.download({package!r}) failed")
    except Exception as err:  # nltk raises plain errors (ValueError, OSError, URLError) for a failed download
        return Outcome(name, False, f"nltk.download({package!r}) failed: {err}")


def write_mirror(out: str | os.PathLike, scale: str = "demo", source_mirror: str | os.PathLike | None = None,
                 echo=print) -> list[Outcome]:
    """Write the mirror of ``scale`` to ``out``; one progress line per file through ``echo``; the outcomes."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    source_mirror = Path(source_mirror).resolve() if source_mirror else None
    if source_mirror is not None and not source_mirror.is_dir():
        raise DownloadError(f"existing mirror {source_mirror} (--from-mirror or ${ENV_MIRROR}) is not a directory")
    if source_mirror is not None and source_mirror == out.resolve():
        source_mirror = None  # completing a mirror in place: what it holds is checked as "present"
    jobs = [(s, f) for s, files in files_for_scale(scale).items() for f in files]
    total = len(jobs) + len(NLTK_RESOURCES)
    echo(f"mirror of the {scale} scale into {out}: {len(jobs)} registered files and {len(NLTK_RESOURCES)} NLTK "
         f"resources" + (f"; copying what {source_mirror} holds" if source_mirror else "; no existing mirror"))
    outcomes = []
    for number, (source_name, relative_file) in enumerate(jobs, start=1):
        start = time.time()
        outcome = mirror_file(source_name, relative_file, out, source_mirror)
        if outcome.ok and outcome.how != "present":
            _readable(out / get_file(source_name, relative_file).mirror_path)
        outcomes.append(outcome)
        echo(f"[{number}/{total}] {outcome.name}: " + (f"{outcome.how} ({outcome.detail}, {time.time() - start:.1f} s)"
                                                       if outcome.ok else f"FAILED: {outcome.how}"))
    for number, (folder, package) in enumerate(NLTK_RESOURCES.items(), start=len(jobs) + 1):
        outcome = mirror_nltk(folder, package, out, source_mirror)
        outcomes.append(outcome)
        echo(f"[{number}/{total}] {outcome.name}: " + (f"{outcome.how} ({outcome.detail})" if outcome.ok
                                                       else f"FAILED: {outcome.how}"))
    manifest = {"scale": scale, "files": {o.name: {"how": o.how, "sha256": o.sha256} for o in outcomes if o.ok}}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return outcomes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="the folder to write the mirror to (created; files already there and "
                                    "matching the registry are kept)")
    parser.add_argument("--scale", choices=list(SCALE_FILES), default="demo",
                        help="the scale whose files to mirror (default demo); rehearsal: the demo files the "
                             "rehearsal's fixture mirror is made from")
    parser.add_argument("--from-mirror", metavar="PATH", default=os.environ.get(ENV_MIRROR) or None,
                        help=f"an existing data mirror to copy from (default ${ENV_MIRROR})")


def run(args: argparse.Namespace) -> int:
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    outcomes = write_mirror(args.dir, args.scale, args.from_mirror)
    failed = [o for o in outcomes if not o.ok]
    counts: dict[str, int] = {}
    for outcome in outcomes:
        if outcome.ok:
            counts[outcome.how] = counts.get(outcome.how, 0) + 1
    done = ", ".join(f"{n} {how}" for how, n in counts.items()) or "none"
    print(f"\n{len(outcomes) - len(failed)} of {len(outcomes)} written to {args.dir} ({done}); "
          f"manifest {Path(args.dir) / MANIFEST}")
    if args.scale == "rehearsal" and not failed:
        print(f"next: python -m multivec rehearsal-mirror OUT --from-mirror {args.dir}")
    if failed:
        print(f"{len(failed)} could not be obtained:")
        for outcome in failed:
            print(f"  {outcome.name}: {outcome.how}")
        return 1
    return 0
