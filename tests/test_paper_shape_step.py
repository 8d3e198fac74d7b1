"""benchmarks/paper_shape_step.py: one optimizer step of each work's trainer at the paper's shapes. Here at
--tiny scale on the CPU (the GPU figures come from a GPU machine), plus its FLOP counting and its refusal of
mixed precision without CUDA."""

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
from torch import nn

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "paper_shape_step.py"


def _load_benchmark():
    if "paper_shape_step" in sys.modules:
        return sys.modules["paper_shape_step"]
    spec = importlib.util.spec_from_file_location("paper_shape_step", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["paper_shape_step"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _run(*args, timeout=300):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_tiny_run_trains_every_work_through_the_engine(tmp_path):
    result = _run("--tiny", "--out", str(tmp_path / "tiny"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    table = pd.read_csv(tmp_path / "tiny.csv")
    assert list(table["work"]) == ["nugget", "subencoder", "distill"]
    assert (table["tokens_per_s"] > 0).all() and (table["seconds_per_step"] > 0).all()
    assert all(math.isfinite(v) for v in table["loss"])
    assert (table["peak_memory_mb"] > 0).all() and (table["model_flops_per_step"] > 0).all()
    assert table["attention_flops_share"].between(0, 1, inclusive="neither").all()
    assert (table["scale"] == "tiny").all() and (table["precision"] == "fp32").all()
    assert table["device"].str.startswith("cpu").all()
    # No made-up CPU peak: MFU is empty and the note says why.
    assert table["mfu"].isna().all() and table["mfu_note"].str.startswith("CPU").all()
    rows = table.set_index("work")
    # Accumulation runs (the paper's 8 micro-batches, capped at 2 here), and every token is counted.
    assert rows.loc["distill", "grad_accumulation"] == 2
    assert rows.loc["distill", "tokens_per_step"] == 2 * rows.loc["distill", "micro_batch"] * 64
    assert rows.loc["nugget", "sequence_shape"] == "4x32 source, 4x32 target"
    # NUGGET accumulates too at paper scale (App. B.1: 4 GPUs x 16 = 64 documents a step; one GPU accumulates 4).
    assert rows.loc["nugget", "grad_accumulation"] == 2
    assert rows.loc["nugget", "tokens_per_step"] == 2 * 4 * 32 * 2
    # NUGGET's frozen bottom: fewer trainable parameters than parameters; the others train everything.
    assert rows.loc["nugget", "trainable_parameters"] < rows.loc["nugget", "parameters"]
    assert rows.loc["subencoder", "trainable_parameters"] == rows.loc["subencoder", "parameters"]
    assert (tmp_path / "tiny.png").stat().st_size > 0


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
def test_mixed_precision_without_cuda_stops_before_building_anything(tmp_path, monkeypatch):
    for args in (["--tiny", "--precision", "bf16"], ["--tiny", "--precision", "fp16"], []):  # [] = paper, bf16
        result = _run(*args, "--out", str(tmp_path / "x"), timeout=60)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "needs a CUDA GPU" in result.stderr and "--tiny" in result.stderr
        assert not (tmp_path / "x.csv").exists()
    # The engine itself refuses it too on a CPU without bf16 units, naming the key to change.
    from multivec.training import distributed

    monkeypatch.setattr(distributed, "cpu_bf16_units", lambda: [])
    with pytest.raises(ValueError, match=r"train.precision='bf16' on a CPU needs bfloat16 units"):
        distributed.setup_runtime("cpu", "bf16")
    with pytest.raises(ValueError, match=r"train.precision='fp16' needs a CUDA device"):
        distributed.setup_runtime("cpu", "fp16")


class _DenseTask:
    """A frozen Linear, then two trainable ones: the counting convention on a model small enough to do by hand."""

    def __init__(self, rows: int):
        torch.manual_seed(0)
        self.model = nn.Sequential(nn.Linear(8, 16), nn.Linear(16, 16), nn.Linear(16, 4))
        self.model[0].requires_grad_(False)
        self.rows = rows

    def epoch_batches(self, epoch):
        return [list(range(self.rows))]

    def make_batch(self, spec, generator):
        return torch.randn(len(spec), 8, generator=generator)

    def loss(self, module, batch):
        return module(batch).pow(2).mean(), len(batch)


def test_model_flops_are_forward_and_backward_of_what_trains():
    bench = _load_benchmark()
    from multivec.training.distributed import Runtime
    from multivec.training.engine import TrainConfig

    task = _DenseTask(rows=5)
    run = bench.WorkRun("dense", "dense", task, TrainConfig(grad_accumulation=3), count_tokens=len, shape=str)
    flops, attention = bench.count_flops(task, run, Runtime(device=torch.device("cpu")))
    frozen = 2 * 8 * 16 * 5  # forward only
    lowest_trainable = 4 * 16 * 16 * 5  # forward + weight gradient (its input needs no gradient)
    top = 6 * 16 * 4 * 5  # forward + weight and input gradients: 6 N per row
    assert flops == 3 * (frozen + lowest_trainable + top) and attention == 0
    assert all(p.grad is None for p in task.model.parameters())  # counting leaves no gradients behind

    # Counted on part of a micro-batch, scaled to all of it (the distillation student: per-document cost).
    run.flop_rows = 1
    assert bench.count_flops(task, run, Runtime(device=torch.device("cpu")))[0] == flops


def test_cpu_attention_kernel_is_counted():
    bench = _load_benchmark()
    from torch.utils.flop_counter import FlopCounterMode

    q = torch.randn(1, 2, 8, 4, requires_grad=True)
    counter = FlopCounterMode(display=False, custom_mapping=bench._cpu_sdpa_mapping())
    with counter:
        nn.functional.scaled_dot_product_attention(q, q, q).sum().backward()
    assert counter.get_total_flops() >= 2 * (2 * 2 * 8 * 8 * 4)  # at least QK^T and AV of the forward


def test_peak_is_a_datasheet_number_or_nothing():
    bench = _load_benchmark()
    assert bench.peak_tflops("cuda: NVIDIA H100 80GB HBM3", "bf16", None)[0] == 989.5
    assert bench.peak_tflops("cuda: NVIDIA H100 PCIe", "bf16", None)[0] == 756.0
    assert bench.peak_tflops("cuda: NVIDIA H200", "fp16", None)[0] == 989.5
    unknown, note = bench.peak_tflops("cuda: Some Future GPU", "bf16", None)
    assert unknown is None and "--peak-tflops" in note
    assert bench.peak_tflops("cuda: NVIDIA H100 80GB HBM3", "fp32", None)[0] is None
    assert bench.peak_tflops("cpu: AMD EPYC, 1 thread(s)", "fp32", None)[0] is None
    assert bench.peak_tflops("cpu: AMD EPYC, 1 thread(s)", "fp32", 1.5)[0] == 1.5


def test_shapes_come_from_the_paper_config():
    bench = _load_benchmark()
    config = bench.paper_config()
    assert config["nugget"]["encoder"] == "facebook/mbart-large-50-many-to-many-mmt"
    assert config["subencoder"]["model"]["backbones"][0]["encoder"] in bench.SUBENCODER_ARCHITECTURES
    assert config["distill"]["student"]["backbone"] in bench.STUDENT_ARCHITECTURES
    assert config["distill"]["train"]["grad_accumulation"] > 1  # the paper's accumulation is exercised


def test_nugget_is_the_model_the_workflow_trains():
    """The benchmark's NUGGET row takes the zoo's settings, as rules/common.smk does. It used to read the
    ``nugget`` block alone, so it timed an untied 250k x 1024 output layer (1.13 B parameters) that the paper
    scale does not train (``nugget_analysis.model.decoder_output: tied``: mBART's own lm_head)."""
    bench = _load_benchmark()
    config = bench.paper_config()
    row, settings = bench.nugget_settings(config)
    assert row["kind"] == "nugget" and settings["objective"] == row["objective"] and settings["ratio"] == row["ratio"]
    assert settings["decoder_output"] == "tied" and settings["output_bias_init"] == "zero"
    assert settings["bottleneck"] == "nuggets" and settings["seed"] == config["seed"]
    from multivec.nugget.configuration import NuggetConfig

    NuggetConfig.from_dict({**settings, "encoder": "tiny-random-mbart"})  # a valid model config


def test_variants_put_the_engines_levers_side_by_side(tmp_path):
    """--variants at tiny scale on the CPU (fp32): eager, + fused AdamW, + compile, + the whole step in one
    micro-batch, on one model folder per work. The checks the GPU run's rows are read with: the fused kernel and
    the compiled blocks give the eager loss on the same micro-batch without dropout, compile compiled whole
    blocks (no graph break) and the model FLOPs are the eager row's."""
    result = _run("--tiny", "--variants", "--works", "nugget", "subencoder", "--out", str(tmp_path / "levers"),
                  timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    table = pd.read_csv(tmp_path / "levers.csv")
    assert list(table["levers"]) == 2 * ["fp32, eager", "fp32, eager, fused AdamW", "fp32, compile, fused AdamW",
                                         "fp32, compile, fused AdamW, whole step in one micro-batch"]
    for work, rows in table.groupby("work", sort=False):
        first, fused, compiled, whole = (rows.iloc[i] for i in range(4))
        assert math.isnan(first["loss_vs_reference"])  # the reference of its micro-batches
        # fused AdamW: the same updates up to fp32 rounding (equal on an AVX2 CPU; 1.6e-7 apart on an AVX-512
        # one, whose fused kernel vectorises the update differently)
        assert fused["loss_vs_reference"] < 1e-6
        assert compiled["eval_loss_vs_reference"] < 1e-5  # kernels alone, no dropout: fp32 agreement
        assert (rows["graph_breaks"] == 0).all()
        assert rows["model_flops_per_step"].nunique() == 1  # counted once, eagerly
        assert whole["tokens_per_step"] == first["tokens_per_step"]  # the same documents per step
        assert whole["grad_accumulation"] == 1 and whole["micro_batch"] == first["micro_batch"] * first["grad_accumulation"]
    nugget = table[table["work"] == "nugget"]
    assert nugget.iloc[2]["graphs_compiled"] > 0  # its layers compiled (the first compiled row of the run)
    assert (tmp_path / "levers.png").stat().st_size > 0


def test_bad_lever_requests_stop_with_a_message(tmp_path):
    result = _run("--tiny", "--works", "nugget", "--micro-batch", "3", "--out", str(tmp_path / "x"), timeout=120)
    assert result.returncode == 2 and "--micro-batch 3: a step of 8 documents" in result.stderr
    result = _run("--tiny", "--works", "nugget", "--compile", "--out", str(tmp_path / "x"), timeout=120)
    assert result.returncode == 2 and "use --variants" in result.stderr
    result = _run("--tiny", "--micro-batch", "many", "--out", str(tmp_path / "x"), timeout=60)
    assert result.returncode == 2 and "--micro-batch takes a number" in result.stderr
    assert not (tmp_path / "x.csv").exists()


def test_the_gpu_session_script_refuses_without_its_prepared_files(tmp_path):
    """benchmarks/gpu_session.sh runs on the GPU machine from a copy of the tree: without the .device/ folder
    its --prepare writes here (wheels the GPU image lacks, the tokenizer), it stops and says what to run."""
    copy = tmp_path / "tree"
    (copy / "benchmarks").mkdir(parents=True)
    (copy / "benchmarks" / "gpu_session.sh").write_text((REPO / "benchmarks" / "gpu_session.sh").read_text())
    result = subprocess.run(["bash", str(copy / "benchmarks" / "gpu_session.sh")], capture_output=True, text=True,
                            timeout=60, env=dict(os.environ, OUT=str(tmp_path / "out")))
    assert result.returncode == 2 and "--prepare" in result.stderr and not (tmp_path / "out").exists()
    assert "/.device/" in (REPO / ".gitignore").read_text().splitlines()  # what --prepare writes stays untracked
