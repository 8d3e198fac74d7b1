"""Shared paths of the workflow (multivec.rules.paths): data files, source inputs and the audit registry."""

import copy

import pytest

from multivec.data.sources import SOURCES
from multivec.rules import paths
from rules_configs import scale_config


@pytest.fixture(scope="module")
def demo():
    return scale_config("demo")


def test_data_paths():
    assert paths.raw("wikitext2", "test.txt") == "data/raw/wikitext2/test.txt"
    assert paths.corpus("ae", "train") == "data/built/corpora/autoencoding/train.jsonl"
    assert paths.corpus("mt", "dev") == "data/built/corpora/translation/dev.jsonl"
    with pytest.raises(KeyError):
        paths.corpus("lm", "train")
    assert paths.task_dir("pi") == "data/built/tasks/pi"
    assert paths.frozen_bottom_dir("rr") == "data/frozen_bottom/rr"
    assert paths.token_pooling_dir(0.05, "pi") == "data/encodings/token_pooling/r0.05/pi"
    assert paths.TASKS == ["pi", "rr"]
    assert paths.REGISTERED_SOURCES.split("|") == list(SOURCES)


def test_every_source_file_is_under_data(demo):
    for files in paths.SOURCE_FILES.values():
        assert files and all(f.startswith(("data/raw/", "data/extracted/")) for f in files)
    assert set(paths.ARCHIVES) == {"wikitext103_raw", "parabank_v1"}


def test_corpus_and_task_inputs_follow_the_config(demo):
    assert list(paths.autoencoding_inputs(demo)) == demo["corpora"]["autoencoding"]["sources"]
    config = copy.deepcopy(demo)
    config["corpora"]["translation"]["source"] = "wmt19_enzh"
    assert paths.translation_inputs(config) == {"wmt19_enzh": paths.SOURCE_FILES["wmt19_enzh"],
                                                "dev": paths.SOURCE_FILES["wmt19_enzh_dev"]}
    config["corpora"]["translation"]["source"] = "parabank_v1"
    assert paths.translation_inputs(config) == {"parabank_v1": paths.SOURCE_FILES["parabank_v1"]}
    config["table2"]["pi"]["source"] = "released"
    assert paths.pi_task_inputs(config) == {"docs": "data/raw/nugget_pi/dev/docs.txt",
                                            "task": "data/raw/nugget_pi/dev/task.jsonl"}
    config["table2"]["pi"]["source"] = "parabank"
    assert paths.pi_task_inputs(config) == {"parabank": paths.SOURCE_FILES["parabank_v1"]}
    assert paths.rr_task_inputs(demo) == paths.SOURCE_FILES[demo["table2"]["rr"]["source"]]


def test_audit_registry_starts_with_nuggets_corpora_and_table2s_tasks():
    corpora, tasks = paths.audit_corpora(), paths.audit_tasks()
    assert list(corpora) == ["ae", "mt"] and list(tasks) == ["pi", "rr"]
    assert paths.audit_corpora() is not corpora  # a new registry each call: the works add theirs
    corpora["extra"] = {"format": "text_jsonl", "files": ["data/built/corpora/autoencoding/train.jsonl", "x.jsonl"]}
    files = paths.audit_inputs(corpora, tasks)
    assert files == sorted(set(files)) and "x.jsonl" in files and "data/built/tasks/rr/task.jsonl" in files
    assert files.count("data/built/corpora/autoencoding/train.jsonl") == 1
