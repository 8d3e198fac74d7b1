"""``python -m multivec inspect``: every artifact type is recognised and summarised."""

import io
import subprocess
import sys

import numpy as np
import pytest

from multivec.__main__ import main
from multivec.encodings import write_encodings
from multivec.inspection import InspectError, detect, inspect_path, inspectors, length_summary, text_field_stats
from multivec.io import write_docs_tsv, write_json, write_jsonl


def run(path, n=2, tokenizer=None):
    out = io.StringIO()
    kind = inspect_path(path, n=n, out=out, tokenizer=tokenizer)
    return kind, out.getvalue()


def test_length_summary_and_text_field_stats():
    assert length_summary([1, 2, 3, 4, 100]) == {"n": 5, "min": 1, "mean": 22.0, "median": 3, "p95": 100, "max": 100}
    assert length_summary([])["n"] == 0
    stats = text_field_stats([{"id": "a", "source": "one two", "n": 3}, {"id": "b", "source": "three"}])
    assert list(stats) == ["source"]
    assert stats["source"]["whitespace_tokens"]["max"] == 2


def test_corpus_jsonl(tmp_path):
    ae = tmp_path / "ae.jsonl"
    write_jsonl(ae, [{"id": f"d{i}", "source": f"text number {i} .", "target": f"text number {i} ."} for i in range(5)])
    kind, text = run(ae)
    assert kind == "corpus" and "rows: 5" in text and "autoencoding" in text
    assert "source whitespace_tokens: n=5  min=4" in text and "d0" in text and "text number 0" in text
    mt = tmp_path / "mt.jsonl"
    write_jsonl(mt, [{"id": "m0", "source": "Hello world.", "target": "你好，世界。"}])
    kind, text = run(mt, tokenizer="minilm")
    assert "translation (English -> Chinese)" in text and "target: 你好，世界。" in text
    assert "source subwords: n=1  min=3" in text


@pytest.fixture
def task_folder(tmp_path):
    folder = tmp_path / "task"
    write_docs_tsv(folder / "docs.txt", {"q1": "what is a lobster", "a1": "a lobster is a crustacean",
                                         "n1": "the weather is nice", "q2": "who wrote it", "a2": "someone did"})
    write_jsonl(folder / "task.jsonl", [{"source": "q1", "candidates": ["n1", "a1"], "answer": 1},
                                        {"source": "q2", "candidates": ["a2", "n1"], "answer": 0}])
    return folder


def test_ranking_task_folder(task_folder):
    kind, text = run(task_folder)
    assert kind == "ranking task" and "queries: 2" in text and "documents: 5" in text
    assert "query q1: what is a lobster" in text and "answer a1: a lobster is a crustacean" in text
    assert "negative n1: the weather is nice" in text
    kind, text = run(task_folder / "task.jsonl")
    assert kind == "ranking task file" and "queries: 2" in text


def test_docs_txt_with_empty_document_is_reported(task_folder):
    with open(task_folder / "docs.txt", "a", encoding="utf-8") as handle:
        handle.write("e1\t\n")
    kind, text = run(task_folder / "docs.txt")
    # Present but empty: counted among the documents and named, not dropped.
    assert kind == "documents tsv" and "documents: 6 (1 empty documents, kept as '': e1)" in text


def test_empty_document_used_by_a_query_is_empty_not_missing(task_folder):
    docs = (task_folder / "docs.txt").read_text(encoding="utf-8")
    (task_folder / "docs.txt").write_text(docs + "e1\t\n", encoding="utf-8")
    write_jsonl(task_folder / "task.jsonl", [{"source": "q1", "candidates": ["e1", "a1"], "answer": 1},
                                             {"source": "q2", "candidates": ["a2", "gone"], "answer": 0}])
    kind, text = run(task_folder)
    assert "documents: 6 (1 empty documents, kept as '': e1)" in text
    assert "note: 1 empty documents are used by queries: e1" in text
    # Only the id that docs.txt lacks is missing.
    assert "WARNING: 1 ids in task.jsonl are not in docs.txt, e.g. ['gone']" in text


def test_released_pi_set_has_two_empty_documents_and_none_missing(mirror):
    folder = mirror / "nugget-data" / "paraphrase_identification" / "dev"
    kind, text = run(folder, n=1)
    assert kind == "ranking task" and "queries: 1024" in text
    assert "documents: 2048 (2 empty documents, kept as '': L873, L874)" in text
    assert "not in docs.txt" not in text and "WARNING" not in text


def test_rankings_jsonl(tmp_path):
    path = tmp_path / "rankings.jsonl"
    write_jsonl(path, [
        {"source": "q1", "candidates": ["a", "b", "c"], "scores": [0.9, 0.1, 0.2], "answer": 0, "predicted": 0,
         "rank_of_answer": 1},
        {"source": "q2", "candidates": ["a", "b", "c"], "scores": [0.3, 0.8, 0.5], "answer": 2, "predicted": 1,
         "rank_of_answer": 2},
        # A tie counts against the answer, as in the tables' MRR.
        {"source": "q3", "candidates": ["a", "b", "c"], "scores": [0.5, 0.5, 0.1], "answer": 0, "predicted": 1,
         "rank_of_answer": 2},
    ])
    kind, text = run(path)
    assert kind == "rankings" and "queries: 3" in text
    assert "MRR: 66.67" in text and "accuracy@1: 33.33" in text
    assert "query q2: answer c (score 0.5000, rank 2); winner b (score 0.8000)" in text
    assert "winner a (score 0.9000) = answer" in text


def test_encodings_folder(tmp_path):
    folder = tmp_path / "enc"
    rng = np.random.default_rng(0)
    write_encodings(folder, ["d1", "d2", "d3"], [rng.normal(size=(k, 4)) for k in (2, 3, 1)],
                    documents=[{"nugget_tokens": ["the", "lobster"]}, {"nugget_tokens": ["a", "b", "c"]},
                               {"nugget_tokens": ["x"]}],
                    info={"encoder": "nugget", "ratio": 0.25})
    kind, text = run(folder)
    assert kind == "encodings" and "documents: 3  vectors: 6 x 4" in text
    assert "vectors per document: n=3  min=1  mean=2" in text and "encoder=nugget" in text
    assert "d1: 2 vectors; nugget tokens: the lobster" in text


def test_model_folder(tmp_path):
    from safetensors.numpy import save_file

    folder = tmp_path / "model"
    folder.mkdir()
    save_file({"a.weight": np.zeros((4, 8), np.float32), "a.bias": np.zeros(8, np.float32)},
              str(folder / "model.safetensors"))
    write_json(folder / "config.json", {"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 2,
                                        "nugget_ratio": 0.25, "scorer_layer": 3, "id2label": {"0": "x"}})
    write_json(folder / "training_summary.json", {"steps": 120, "best_dev_loss": 1.23, "minutes": 4.5})
    (folder / "metrics.csv").write_text("step,split,loss\n40,dev,2.0\n80,dev,1.5\n120,dev,1.23\n")
    kind, text = run(folder)
    assert kind == "model" and "parameters: 40 in 2 tensors" in text
    assert "model_type=bert" in text and "nugget_ratio=0.25" in text and "scorer_layer=3" in text
    assert "steps: 120" in text and "metrics.csv: 3 rows x 3 columns" in text and "1.23" in text


def test_csv_and_benchmark_tables(tmp_path):
    table = tmp_path / "table2.csv"
    table.write_text("row,pi,rr\nnugget_ae_r0.25,41.2,55.0\nmean_pooled,30.1,44.4\n")
    kind, text = run(table)
    assert kind == "csv table" and "shape: 2 rows x 3 columns" in text and "nugget_ae_r0.25" in text
    bench = tmp_path / "bench.tsv"
    bench.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                     "12.5\t0:00:12\t512.3\t900.1\t400.0\t420.0\t1.0\t2.0\t95.0\t11.9\n")
    kind, text = run(bench)
    assert kind == "snakemake benchmark" and "runs: 1" in text and "mean=12.50" in text and "512.3" in text


def test_benchmarks_folder_sums_time_per_rule(tmp_path):
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for job, seconds in (("train/a", 100.0), ("train/b", 50.0), ("encode/x/pi", 7.0)):
        path = tmp_path / "rules" / f"{job}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + f"{seconds}\t0:00:00\t10.0\t0\t0\t0\t0\t0\t0\t0\n")
    kind, text = run(tmp_path / "rules")
    assert kind == "snakemake benchmarks folder" and "jobs: 3  total job seconds: 157" in text
    train_line = next(line for line in text.splitlines() if line.startswith("train"))
    assert train_line.split()[1:3] == ["2", "150.0"]
    # Snakemake's extended format names the rule, which wins over the folder name.
    extended = header.rstrip("\n") + "\tjobid\trule_name\twildcards\tparams\tthreads\tcpu_usage\tresources\tinput_size_mb\n"
    (tmp_path / "rules/train/c.tsv").write_text(extended + "30.0\t0:00:30\t10.0\t0\t0\t0\t0\t0\t0\t0\t4\ttrain_nugget_lm\t"
                                               "{'seed': '13'}\t{}\t1\t0\t{}\t{}\n")
    kind, text = run(tmp_path / "rules")
    assert kind == "snakemake benchmarks folder" and "jobs: 4  total job seconds: 187" in text
    named_line = next(line for line in text.splitlines() if line.startswith("train_nugget_lm"))
    assert named_line.split()[1:3] == ["1", "30.0"]


def test_tab_separated_files(tmp_path):
    table = tmp_path / "scores.tsv"
    table.write_text('name\tscore\n"quoted\t1.5\nplain\t2.0\n')
    kind, text = run(table)
    assert kind == "tsv" and "shape: 2 rows x 2 columns" in text and '"quoted' in text
    ragged = tmp_path / "parabank.tsv"
    ragged.write_text("a sentence .\tparaphrase one .\tparaphrase two .\nanother .\tonly one .\n")
    kind, text = run(ragged)
    assert kind == "tsv" and "ragged rows: 2 non-blank lines" in text and "min=2" in text
    assert "a sentence . | paraphrase one . | paraphrase two ." in text


def test_text_and_json(tmp_path):
    raw = tmp_path / "notes.txt"
    raw.write_text(" = Title = \n\n first line of text \nsecond line\n", encoding="utf-8")
    kind, text = run(raw)
    assert kind == "text" and "lines: 4 (3 non-blank)" in text and "first line of text" in text
    data = tmp_path / "info.json"
    write_json(data, {"n_documents": 3, "encoder": "nugget"})
    kind, text = run(data)
    assert kind == "json" and "object with 2 keys" in text and "encoder" in text
    array = tmp_path / "list.json"
    write_json(array, [{"a": 1}, {"a": 2}, {"a": 3}])
    assert "array of 3 items" in run(array)[1]


def test_unknown_artifact_lists_supported_types(tmp_path):
    odd = tmp_path / "weights.bin"
    odd.write_bytes(b"\0\1")
    with pytest.raises(InspectError) as info:
        detect(odd)
    message = str(info.value)
    assert "not an artifact that inspect knows" in message
    assert all(t.name in message for t in inspectors())


def test_cli_errors_are_one_line_without_traceback(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "absent.jsonl")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no such file" in err and "Traceback" not in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "source": "x", "target": "x"}\n{oops\n')
    assert main(["inspect", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"error: {bad}:2: JSONL line does not parse: Expecting property name enclosed in double quotes (column 2)"


def test_module_entry_point(task_folder):
    result = subprocess.run([sys.executable, "-m", "multivec", "inspect", str(task_folder), "--n", "1"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "ranking task" in result.stdout and "queries: 2" in result.stdout


def test_model_parts_checkpoints_figures_and_dumps(tmp_path):
    import bz2

    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    weights = tmp_path / "model.safetensors"
    save_file({"a": np.zeros((2, 3), np.float32), "b": np.zeros(4, np.float32)}, str(weights))
    kind, text = run(weights)
    assert kind == "safetensors" and "tensors: 2  parameters: 10" in text and "a: [2, 3] F32" in text

    folder = tmp_path / "tok"
    folder.mkdir()
    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "nuggets": 1}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    kind, text = run(folder)
    assert kind == "tokenizer" and "type: WordLevel  vocabulary: 2" in text and "['nuggets', '[UNK]'" in text

    checkpoint = tmp_path / "checkpoint"
    (checkpoint / "step_00000010").mkdir(parents=True)
    (checkpoint / "latest.json").write_text('{"folder": "step_00000010"}')
    (checkpoint / "step_00000010" / "state.json").write_text(
        '{"step": 10, "epoch": 0, "best_step": 10, "best_dev_loss": 3.5, "elapsed_s": 12.0, '
        '"metrics": [{"step": 10, "dev_loss": 3.5}]}')
    kind, text = run(checkpoint)
    assert kind == "checkpoint" and "latest: step_00000010" in text and "best dev loss: 3.5" in text

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = tmp_path / "f.png"
    plt.figure(figsize=(2, 1), dpi=50).savefig(figure)
    kind, text = run(figure)
    assert kind == "image" and "100 x 50 pixels" in text

    dump = tmp_path / "wiki.xml.bz2"
    dump.write_bytes(bz2.compress(b"<mediawiki>\n<page>Anarchism</page>\n"))
    kind, text = run(dump)
    assert kind == "compressed" and "<page>Anarchism</page>" in text


def test_corrupt_safetensors_is_one_clear_error(tmp_path, capsys):
    from safetensors.numpy import save_file

    good = tmp_path / "good.safetensors"
    save_file({"a": np.arange(6, dtype=np.float32).reshape(2, 3)}, str(good))
    data = good.read_bytes()
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(data[:-5])
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"this is not a safetensors file at all")
    header_not_json = tmp_path / "notjson.safetensors"
    header_not_json.write_bytes((4).to_bytes(8, "little") + b"{{{{" )
    tiny = tmp_path / "tiny.safetensors"
    tiny.write_bytes(b"\1\2")
    expected = {truncated: "tensor 'a' ends at byte 24 of the data but the file holds 19 (truncated file)",
                garbage: "exceeds the file's",
                header_not_json: "header is not JSON",
                tiny: "2 bytes, shorter than the 8-byte header length"}
    for path, what in expected.items():
        assert main(["inspect", str(path)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: {path}: not a valid safetensors file: ") and what in err, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    # The same check guards model and encodings folders that hold a corrupt weights file.
    folder = tmp_path / "model"
    folder.mkdir()
    write_json(folder / "config.json", {"model_type": "bert"})
    (folder / "model.safetensors").write_bytes(data[:-5])
    assert main(["inspect", str(folder)]) == 1
    assert "truncated file" in capsys.readouterr().err


def test_corrupt_safetensors_from_the_command_line(tmp_path):
    broken = tmp_path / "model.safetensors"
    broken.write_bytes((10 ** 12).to_bytes(8, "little") + b"{}")
    result = subprocess.run([sys.executable, "-m", "multivec", "inspect", str(broken)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip() == (f"error: {broken}: not a valid safetensors file: header length "
                                     "1,000,000,000,000 exceeds the file's 2 remaining bytes "
                                     "(truncated file or garbage header)")
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("rows, message", [
    ([{"source": "q1", "candidates": ["a1"], "answer": 3}],
     "task.jsonl:1: task row: answer 3 is not an index into its 1 candidates"),
    ([{"source": "q1", "candidates": ["a1"], "answer": True}], "task.jsonl:1: task row lacks an integer 'answer'"),
    ([{"source": "q1", "candidates": "a1", "answer": 0}], "task.jsonl:1: task row lacks a list 'candidates'"),
])
def test_malformed_task_rows_name_file_and_line(task_folder, rows, message, capsys):
    write_jsonl(task_folder / "task.jsonl", rows)
    assert main(["inspect", str(task_folder)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"error: {task_folder}/{message}"


def test_malformed_rankings_rows_name_file_and_line(tmp_path, capsys):
    path = tmp_path / "pi.rankings.jsonl"
    write_jsonl(path, [{"source": "q", "candidates": ["a", "b"], "scores": [0.1, 0.2], "answer": 0},
                       {"source": "q", "candidates": ["a", "b"], "scores": [0.1], "answer": 0}])
    assert main(["inspect", str(path)]) == 1
    assert capsys.readouterr().err.strip() == f"error: {path}:2: rankings row: 1 scores for 2 candidates"


def test_cli_lists_types_and_dag_kinds(capsys):
    assert main(["inspect", "--types"]) == 0
    out = capsys.readouterr().out
    assert all(f"  - {t.name}: " in out for t in inspectors())
    assert "  data/encodings/*/*: encodings (" in out and "  results/table2/**/*.rankings.jsonl: rankings (" in out
    assert main(["inspect"]) == 1
    assert capsys.readouterr().err.strip() == "error: inspect needs a PATH (or --types)"
