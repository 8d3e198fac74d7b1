"""benchmarks/nugget_precision.py on the smoke configuration: the model's settings are the rules', a real
one-thread training writes the curve the benchmark reads, and what cannot be measured (bf16 without bf16 units,
a missing corpus, an unknown precision) stops with a message before anything trains. Never timing."""

from __future__ import annotations

import csv
import json

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
    bench = load_benchmark("nugget_precision")
    from multivec.rules.nugget_zoo import NuggetZoo

    config = bench.load_config([SMOKE])
    model, train = bench.model_settings(config, "ae", "base_r1", steps=None)
    zoo = NuggetZoo(config)
    assert model == zoo.zoo_model_config("ae", "base_r1")
    assert train == {**zoo.zoo_train_config("base_r1"), "threads": 1, "device": "cpu"}
    assert train["max_steps"] == config["nugget_base"]["train"]["max_steps"]
    assert bench.model_settings(config, "ae", "base_r1", steps=3)[1]["max_steps"] == 3


def test_an_fp32_run_writes_the_curve_and_figure(tmp_path):
    bench = load_benchmark("nugget_precision")
    data = _corpus(tmp_path / "corpus")
    out = tmp_path / "result"
    assert bench.main(["--configfile", SMOKE, "--precisions", "fp32", "--steps", "4", "--data", str(data),
                       "--out", str(out)]) == 0
    with open(out.with_suffix(".csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["precision"] for r in rows] == ["fp32"] * len(rows) and len(rows) >= 2
    assert rows[-1]["step"] == "4" and int(rows[-1]["documents_read"]) == 4 * int(rows[-1]["batch_size"])
    assert all(float(r["dev_loss"]) > 0 for r in rows)
    assert float(rows[0]["run_cpu_seconds"]) > 0 and float(rows[0]["run_documents_per_cpu_s"]) > 0
    assert out.with_suffix(".png").stat().st_size > 0


def test_the_summary_compares_each_precision_with_fp32_at_equal_documents_read():
    bench = load_benchmark("nugget_precision")
    def curve(precision, loss, seconds, steps):
        return [{"precision": precision, "step": s, "documents_read": 16 * s, "dev_loss": loss - s / 100,
                 "elapsed_s": seconds * s, "documents_per_s": 16 / seconds, "run_cpu_seconds": seconds * steps,
                 "run_documents_per_cpu_s": 16 / seconds} for s in range(50, steps + 1, 50)]

    # bf16 stopped at 100 steps, fp32 at 150: the dev losses are compared at 100, the speeds over each run
    lines = bench.summary_lines({"fp32": curve("fp32", 3.0, 6.0, 150), "bf16": curve("bf16", 3.01, 4.0, 100)})
    assert lines[0] == "fp32: 2400 documents in 900 CPU-s (2.67/CPU-s), dev loss 1.5000"
    assert lines[1].endswith("vs fp32: 1.50x documents per CPU-second, dev loss +0.0100 at 1600 documents read")


def test_what_cannot_be_measured_stops_before_training(tmp_path, monkeypatch, capsys):
    bench = load_benchmark("nugget_precision")
    data = _corpus(tmp_path / "corpus")
    monkeypatch.setattr(distributed, "cpu_bf16_units", lambda: [])  # an AVX2 CPU
    assert bench.main(["--configfile", SMOKE, "--data", str(data), "--out", str(tmp_path / "x")]) == 2
    assert "no bfloat16 units" in capsys.readouterr().err
    assert bench.main(["--precisions", "fp8", "--data", str(data), "--out", str(tmp_path / "x")]) == 2
    assert "expected some of ['fp32', 'bf16']" in capsys.readouterr().err
    assert bench.main(["--precisions", "fp32", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "x")]) == 2
    assert "train.jsonl is missing" in capsys.readouterr().err
    assert bench.main(["--precisions", "fp32", "--data", str(data), "--init", str(tmp_path),
                       "--out", str(tmp_path / "x")]) == 2
    assert "no saved model there" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
