"""benchmarks/nugget_cpu_levers.py on the smoke configuration: the model's settings are the rules', real
one-thread trainings write the curves the benchmark reads, a run that computes another model is refused, and what
cannot be measured (bf16 without bf16 units, a missing corpus, an unknown run) stops with a message before anything
trains. Never timing."""

from __future__ import annotations

import csv
import json

import pytest

from benchmark_scripts import load_benchmark

from multivec.training import distributed

SMOKE = "config/smoke.yaml"
WORDS = "the river crossed a small town where people built boats and sold fish at the market every day".split()


def _corpus(folder, n_train=24, n_dev=6):
    folder.mkdir(parents=True)
    for name, n in (("train.jsonl", n_train), ("dev.jsonl", n_dev)):
        with open(folder / name, "w") as handle:
            for i in range(n):
                text = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(8 + i % 7)) + "."
                handle.write(json.dumps({"id": f"doc{i}", "source": text, "target": text}) + "\n")
    return folder


def test_the_models_settings_are_the_rules(monkeypatch):
    bench = load_benchmark("nugget_cpu_levers")
    from multivec.rules.nugget_zoo import NuggetZoo

    config = bench.load_config([SMOKE])
    model, train = bench.model_settings(config, "ae", "base_r1", steps=None)
    zoo = NuggetZoo(config)
    assert model == zoo.zoo_model_config("ae", "base_r1")
    assert train == {**zoo.zoo_train_config("base_r1"), "threads": 1, "device": "cpu"}
    assert train["max_steps"] == config["nugget_base"]["train"]["max_steps"]
    assert bench.model_settings(config, "ae", "base_r1", steps=3)[1]["max_steps"] == 3


def test_an_eager_and_a_fused_run_write_their_curves_and_figure(tmp_path, capsys):
    bench = load_benchmark("nugget_cpu_levers")
    data = _corpus(tmp_path / "corpus")
    out = tmp_path / "result"
    assert bench.main(["--configfile", SMOKE, "--runs", "fp32", "fp32+fused", "--parallel", "1", "--steps", "4",
                       "--data", str(data), "--out", str(out)]) == 0
    with open(out.with_suffix(".csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_run = {run: [r for r in rows if r["run"] == run] for run in ("fp32", "fp32+fused")}
    assert len(by_run["fp32"]) >= 2 and len(by_run["fp32+fused"]) == len(by_run["fp32"])
    assert {r["levers"] for r in by_run["fp32+fused"]} == {"fused"} and {r["levers"] for r in by_run["fp32"]} == {"none"}
    last = by_run["fp32"][-1]
    assert last["step"] == "4" and int(last["documents_read"]) == 4 * int(last["batch_size"])
    assert all(float(r["dev_loss"]) > 0 for r in rows)
    assert float(last["run_cpu_seconds"]) > 0 and float(last["run_documents_per_cpu_s"]) > 0
    # the same weights before any step: the fused kernel changes only how the update is computed
    first = [float(by_run[run][0]["dev_loss"]) for run in by_run]
    assert by_run["fp32"][0]["step"] == "0" and first[0] == pytest.approx(first[1], rel=1e-6)
    printed = capsys.readouterr().out
    assert "fp32+fused: " in printed
    assert out.with_suffix(".png").stat().st_size > 0
    # the figure and summary redrawn from the CSV alone are the run's
    out.with_suffix(".png").unlink()
    assert bench.main(["--replot", str(out.with_suffix(".csv"))]) == 0
    assert out.with_suffix(".png").stat().st_size > 0
    summary = [line for line in printed.splitlines() if line.startswith("fp32")]
    assert capsys.readouterr().out.splitlines() == summary


def test_replot_refuses_a_csv_of_another_benchmark(tmp_path, capsys):
    bench = load_benchmark("nugget_cpu_levers")
    other = tmp_path / "other.csv"
    other.write_text("precision,step,dev_loss\nfp32,0,8.0\n")  # the columns of the older precision benchmark
    assert bench.main(["--replot", str(other)]) == 2
    assert "not a CSV of this benchmark" in capsys.readouterr().err


@pytest.mark.parametrize("name, expected", [
    ("fp32", ("fp32", [])), ("bf16+fused", ("bf16", ["fused"])), ("fp32+fused+compile", ("fp32", ["fused", "compile"])),
])
def test_a_run_name_is_a_precision_with_levers(name, expected):
    assert load_benchmark("nugget_cpu_levers").parse_run(name) == expected


@pytest.mark.parametrize("name", ["fp8", "fp32+turbo", "fp32+fused+fused", "+fused", ""])
def test_an_unknown_run_name_is_refused(name):
    bench = load_benchmark("nugget_cpu_levers")
    with pytest.raises(bench.BenchmarkError, match="expected a precision"):
        bench.parse_run(name)


def _first_rows(bench, losses):
    return {run: [{"step": 0, "precision": bench.parse_run(run)[0], "dev_loss": loss}] for run, loss in losses.items()}


def test_a_run_that_starts_from_another_loss_is_refused():
    bench = load_benchmark("nugget_cpu_levers")
    bench.check_first_losses(_first_rows(bench, {"fp32": 5.0, "fp32+compile": 5.0 * (1 + 5e-5), "bf16": 5.05}))
    with pytest.raises(bench.BenchmarkError, match="run fp32\\+compile: dev loss .* computes another model"):
        bench.check_first_losses(_first_rows(bench, {"fp32": 5.0, "fp32+compile": 5.01}))
    with pytest.raises(bench.BenchmarkError, match="run bf16"):
        bench.check_first_losses(_first_rows(bench, {"fp32": 5.0, "bf16": 5.5}))


def test_the_summary_compares_each_precision_with_fp32_at_equal_documents_read():
    bench = load_benchmark("nugget_cpu_levers")
    def curve(precision, loss, seconds, steps):
        return [{"precision": precision, "step": s, "documents_read": 16 * s, "dev_loss": loss - s / 100,
                 "elapsed_s": seconds * s, "documents_per_s": 16 / seconds, "run_cpu_seconds": seconds * steps,
                 "run_documents_per_cpu_s": 16 / seconds} for s in range(50, steps + 1, 50)]

    # bf16 stopped at 100 steps, fp32 at 150: the dev losses are compared at 100, the speeds over each run
    lines = bench.summary_lines({"fp32": curve("fp32", 3.0, 6.0, 150), "bf16": curve("bf16", 3.01, 4.0, 100)})
    assert lines[0] == "fp32: 2400 documents in 900 CPU-s (2.67/CPU-s), dev loss 1.5000"
    assert lines[1].endswith("vs fp32: 1.50x documents per CPU-second, dev loss +0.0100 at 1600 documents read")


def test_what_cannot_be_measured_stops_before_training(tmp_path, monkeypatch, capsys):
    bench = load_benchmark("nugget_cpu_levers")
    data = _corpus(tmp_path / "corpus")
    monkeypatch.setattr(distributed, "cpu_bf16_units", lambda: [])  # an AVX2 CPU
    assert bench.main(["--configfile", SMOKE, "--data", str(data), "--out", str(tmp_path / "x")]) == 2
    assert "no bfloat16 units" in capsys.readouterr().err
    assert bench.main(["--precisions", "fp8", "--data", str(data), "--out", str(tmp_path / "x")]) == 2
    assert "run 'fp8': expected a precision (fp32, bf16)" in capsys.readouterr().err
    assert bench.main(["--runs", "fp32", "fp32", "--data", str(data), "--out", str(tmp_path / "x")]) == 2
    assert "each once" in capsys.readouterr().err
    assert bench.main(["--runs", "fp32", "--parallel", "0", "--data", str(data), "--out", str(tmp_path / "x")]) == 2
    assert "--parallel 0: must be >= 1" in capsys.readouterr().err
    assert bench.main(["--precisions", "fp32", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "x")]) == 2
    assert "train.jsonl is missing" in capsys.readouterr().err
    assert bench.main(["--precisions", "fp32", "--data", str(data), "--init", str(tmp_path),
                       "--out", str(tmp_path / "x")]) == 2
    assert "no saved model there" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_an_output_name_with_a_dot_keeps_it(tmp_path):
    bench = load_benchmark("nugget_cpu_levers")
    assert bench.output_path(tmp_path / "zoo_r0.25", ".csv") == tmp_path / "zoo_r0.25.csv"
    assert bench.output_path(tmp_path / "levers.csv", ".png") == tmp_path / "levers.png"
