"""Fetching registered sources: mirror copy, file:// download, sha256 checks, helpful errors."""

import logging

import pytest

from multivec.data.download import DownloadError, fetch, gensim_test_file, sha256_of
from multivec.data.sources import MIRROR_OPTIONAL, SOURCES, RemoteFile, Source, UnknownSourceError


def _leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


def test_every_registered_mirror_file_matches_its_sha256(mirror):
    checked = 0
    for source in SOURCES.values():
        for name, remote in source.files.items():
            path = mirror / remote.mirror_path
            if remote.sha256 is None or (source.name in MIRROR_OPTIONAL and not path.exists()):
                continue
            assert path.is_file(), f"{source.name}/{name}: {path} missing from the mirror"
            assert sha256_of(path) == remote.sha256, f"{source.name}/{name}: mirror copy differs from the registry"
            if remote.size is not None:
                assert path.stat().st_size == remote.size
            checked += 1
    assert checked == 15  # nugget_pi 4, nugget_rr 1, wikitext2 2, debian_reference 1, propsegment 7


def test_registry_shape():
    expected = {"nugget_pi", "nugget_rr", "wikitext2", "debian_reference", "propsegment",
                "wikitext103_raw", "wmt19_enzh", "parabank_v1"}
    assert expected <= set(SOURCES)
    for source in SOURCES.values():
        assert source.files and source.licence and source.description
        for remote in source.files.values():
            assert remote.url is None or remote.url.startswith(("https://", "http://"))
            if remote.sha256 is None:
                assert "sha256 unknown" in source.note  # unverified files say so
    assert SOURCES["debian_reference"].mirror_only
    assert "hiaoxui/nugget-data" in SOURCES["nugget_pi"].files["dev/docs.txt"].url


def test_fetch_from_mirror_verifies_sha256(mirror, tmp_path):
    dest = tmp_path / "raw" / "wikitext2" / "valid.txt"
    assert fetch("wikitext2", "valid.txt", dest, mirror=mirror) == dest
    assert sha256_of(dest) == SOURCES["wikitext2"].files["valid.txt"].sha256
    assert _leftovers(dest.parent) == []


def test_corrupted_mirror_copy_raises_and_leaves_nothing(tmp_path):
    fake_mirror = tmp_path / "mirror"
    (fake_mirror / "wikitext-2").mkdir(parents=True)
    (fake_mirror / "wikitext-2" / "valid.txt").write_text("not the real file\n")
    dest = tmp_path / "out" / "valid.txt"
    with pytest.raises(DownloadError) as info:
        fetch("wikitext2", "valid.txt", dest, mirror=fake_mirror)
    message = str(info.value)
    assert "wikitext2/valid.txt" in message and "sha256 mismatch" in message
    assert f"expected {SOURCES['wikitext2'].files['valid.txt'].sha256}" in message
    assert f"got {sha256_of(fake_mirror / 'wikitext-2' / 'valid.txt')}" in message
    assert not dest.exists() and _leftovers(dest.parent) == []


def test_missing_mirror_file_names_mirror_path_and_source(tmp_path):
    with pytest.raises(DownloadError) as info:
        fetch("nugget_pi", "dev/task.jsonl", tmp_path / "task.jsonl", mirror=tmp_path)
    message = str(info.value)
    assert "nugget_pi/dev/task.jsonl" in message
    assert "nugget-data/paraphrase_identification/dev/task.jsonl" in message


def test_mirror_only_source_without_mirror_says_so(tmp_path):
    # C-STS: mirror-only and nothing builds it (the Debian Reference pairs are built instead: test_data_without_mirror)
    with pytest.raises(DownloadError, match="mirror-only.*data_mirror"):
        fetch("csts", "validation.jsonl", tmp_path / "validation.jsonl")


def test_unknown_source_or_file_lists_what_exists(tmp_path):
    with pytest.raises(UnknownSourceError, match="registered: .*wikitext2"):
        fetch("wikitext3", "valid.txt", tmp_path / "x")
    with pytest.raises(UnknownSourceError, match="it has: valid.txt, test.txt"):
        fetch("wikitext2", "train.txt", tmp_path / "x")


@pytest.fixture
def local_source(tmp_path, monkeypatch):
    upstream = tmp_path / "upstream" / "data.txt"
    upstream.parent.mkdir()
    upstream.write_bytes(b"line one\nline two\n" * 1000)

    def register(sha256):
        remote = RemoteFile(upstream.as_uri(), "local/data.txt", sha256, upstream.stat().st_size)
        monkeypatch.setitem(SOURCES, "local_test", Source("local_test", "test", {"data.txt": remote}, "none"))
        return upstream

    return register


def test_file_url_download_verified(local_source, tmp_path):
    upstream = local_source(None)
    local_source(sha256_of(upstream))
    dest = tmp_path / "out" / "data.txt"
    fetch("local_test", "data.txt", dest)
    assert dest.read_bytes() == upstream.read_bytes()


def test_file_url_download_with_wrong_sha256(local_source, tmp_path):
    local_source("0" * 64)
    dest = tmp_path / "out" / "data.txt"
    with pytest.raises(DownloadError, match="expected 0{64}, got [0-9a-f]{64}"):
        fetch("local_test", "data.txt", dest)
    assert not dest.exists() and _leftovers(dest.parent) == []


def test_unknown_sha256_is_accepted_with_logged_digest(local_source, tmp_path, caplog):
    upstream = local_source(None)
    with caplog.at_level(logging.WARNING, logger="multivec.data.download"):
        fetch("local_test", "data.txt", tmp_path / "data.txt")
    assert f"sha256={sha256_of(upstream)}" in caplog.text


def test_unreachable_url_raises_download_error(monkeypatch, tmp_path):
    remote = RemoteFile((tmp_path / "absent.txt").as_uri(), "x")
    monkeypatch.setitem(SOURCES, "gone", Source("gone", "test", {"f": remote}, "none"))
    with pytest.raises(DownloadError, match="cannot download file://"):
        fetch("gone", "f", tmp_path / "f")


def test_gensim_test_files():
    for name in ("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2", "lee_background.cor"):
        assert gensim_test_file(name).stat().st_size > 0
    with pytest.raises(DownloadError, match="no file 'nope.txt'"):
        gensim_test_file("nope.txt")


def test_file_identity_is_the_registry_entry_not_a_location(monkeypatch):
    from multivec.data.download import file_identity

    assert file_identity("wikitext2", "valid.txt") == f"sha256:{SOURCES['wikitext2'].files['valid.txt'].sha256}"
    monkeypatch.setitem(SOURCES, "unverified", Source("unverified", "test", {
        "a": RemoteFile("https://example.org/a.txt", "u/a.txt"), "b": RemoteFile(None, "u/b.txt")}, "none"))
    assert file_identity("unverified", "a") == "url:https://example.org/a.txt"
    assert file_identity("unverified", "b") == "mirror:u/b.txt"
    with pytest.raises(UnknownSourceError):
        file_identity("wikitext2", "train.txt")


def test_moving_the_mirror_reruns_no_download(mirror, tmp_path):
    """A completed download stays up to date when an identical mirror lies elsewhere."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    remote = SOURCES["wikitext2"].files["valid.txt"]
    copies = []
    for name in ("mirror_a", "elsewhere/mirror_b"):
        target = tmp_path / name / remote.mirror_path
        target.parent.mkdir(parents=True)
        shutil.copyfile(mirror / remote.mirror_path, target)
        copies.append(tmp_path / name)
    snakemake = str(Path(sys.executable).parent / "snakemake")
    work = tmp_path / "work"
    args = ["--configfile", "config/smoke.yaml", "--directory", str(work), "data/raw/wikitext2/valid.txt"]

    def run(*extra, mirror_copy):
        env = dict(os.environ, HF_HUB_OFFLINE="1", MULTIVEC_DATA_MIRROR=str(mirror_copy))
        result = subprocess.run([snakemake, *extra, *args], cwd=repo, env=env, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout + result.stderr

    run("--cores", "1", mirror_copy=copies[0])
    assert sha256_of(work / "data/raw/wikitext2/valid.txt") == remote.sha256
    assert "Nothing to be done" in run("-n", mirror_copy=copies[1])
