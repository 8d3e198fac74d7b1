"""The training engine (multivec.training) with a toy plug-in: a linear regression trained on CPU in
seconds. Exact resumption, accumulation, best-by-dev, precision checks, the time safety net, safe loading
and two-rank DDP (gloo) through torchrun."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, load_model, save_model
from torch import nn

from multivec.io import read_json, write_json
from multivec.training import TrainConfig, Trainer, TrainingTask, TrainingTimeLimitError, seeded_generator
from multivec.training.checkpoint import UnsafeCheckpointError, latest_checkpoint, safe_load
from multivec.training.engine import _Interrupted, lr_factor, make_optimizer

TIMING = ("examples_per_s", "elapsed_s")  # the machine-dependent columns of metrics.csv


class LinearTask(TrainingTask):
    """y = x·w on random x. The dev targets use w/2, so the dev loss falls and then rises while the
    weights (zero at the start) move towards w: the best dev step lies inside the run."""

    name = "linear"
    dev_metrics = ("dev_loss", "dev_score")
    throughput_unit = "examples"

    def __init__(self, cfg, *, dropout=0.0, input_noise=0.0, selection=("dev_loss", "min"), n=96, dim=6):
        self.cfg, self.dropout, self.input_noise = cfg, dropout, input_noise
        self.selection_metric, self.selection_mode = selection
        data = torch.Generator().manual_seed(1)
        self.x = torch.randn(n, dim, generator=data)
        w = torch.randn(dim, 1, generator=data)
        self.y = self.x @ w
        self.dev_x = torch.randn(32, dim, generator=data)
        self.dev_y = self.dev_x @ (w / 2)
        self.snapshots = []  # weights at each evaluation, in order

    def setup(self, out_dir, runtime, resuming):
        self.model = nn.Sequential(nn.Dropout(self.dropout), nn.Linear(self.x.shape[1], 1))
        nn.init.zeros_(self.model[1].weight)
        nn.init.zeros_(self.model[1].bias)
        self.device = runtime.device

    def run_config(self):
        return {"model": {"dropout": self.dropout, "input_noise": self.input_noise, "n": len(self.x)},
                "derived": {"parameters": sum(p.numel() for p in self.model.parameters())}}

    def epoch_batches(self, epoch):
        order = torch.randperm(len(self.x), generator=seeded_generator(self.cfg.seed, "epoch", epoch)).tolist()
        return [order[i:i + self.cfg.batch_size] for i in range(0, len(order), self.cfg.batch_size)]

    def make_batch(self, spec, generator):
        x = self.x[spec]
        if self.input_noise:
            x = x + self.input_noise * torch.randn(x.shape, generator=generator)
        return x.to(self.device), self.y[spec].to(self.device)

    def loss(self, module, batch):
        x, y = batch
        return nn.functional.mse_loss(module(x), y), len(x)

    def evaluate(self, runtime):
        self.model.eval()
        with torch.no_grad():
            loss = float(nn.functional.mse_loss(self.model(self.dev_x.to(self.device)), self.dev_y.to(self.device)))
        self.model.train()
        self.snapshots.append({k: v.detach().clone() for k, v in self.model.state_dict().items()})
        return {"dev_loss": loss, "dev_score": -loss}

    def save_weights(self, path):
        tmp = Path(str(path) + ".tmp")
        save_model(self.model, str(tmp))
        os.replace(tmp, path)

    def load_weights(self, path):
        load_model(self.model, str(path))

    def save_metadata(self, out_dir, run_config):
        write_json(Path(out_dir) / "config.json", run_config)


def config(**changes):
    return TrainConfig(**{**dict(max_steps=20, batch_size=8, lr=0.05, eval_every=4, checkpoint_every=3, seed=5,
                                 device="cpu", threads=1, schedule="cosine", warmup_steps=3), **changes})


def fit(out, cfg=None, interrupt=None, **task_options):
    cfg = cfg or config()
    task = LinearTask(cfg, **task_options)
    return Trainer(task, cfg, out).fit(_interrupt_after=interrupt), task


def metrics(out, drop=TIMING):
    with open(out / "metrics.csv") as handle:
        return [{k: v for k, v in row.items() if k not in drop} for row in csv.DictReader(handle)]


NOISY = dict(dropout=0.2, input_noise=0.1)  # dropout (torch RNG) and per-step noise: both must resume exactly


def test_interrupted_and_resumed_run_is_byte_identical(tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    fit(whole, **NOISY)
    with pytest.raises(_Interrupted):
        fit(split, interrupt=8, **NOISY)  # last checkpoint at step 6: steps 7-8 are redone
    assert latest_checkpoint(split).name == "step_00000006"
    for output in ("model.safetensors", "config.json", "metrics.csv"):  # what Snakemake deletes
        (split / output).unlink()
    summary, _ = fit(split, **NOISY)
    assert summary["train_steps"] == 20
    assert (whole / "model.safetensors").read_bytes() == (split / "model.safetensors").read_bytes()
    last = Path("checkpoint") / "step_00000020"
    assert (whole / last / "model.safetensors").read_bytes() == (split / last / "model.safetensors").read_bytes()
    assert metrics(whole) == metrics(split) and len(metrics(whole)) == 5
    assert read_json(whole / "training_summary.json")["best_step"] == summary["best_step"]
    whole_optimizer = safe_load(whole / last / "optimizer.pt")["optimizer"]["state"]
    split_optimizer = safe_load(split / last / "optimizer.pt")["optimizer"]["state"]
    for key, value in whole_optimizer.items():
        assert torch.equal(value["exp_avg_sq"], split_optimizer[key]["exp_avg_sq"])
    # the noise matters: without it the run ends elsewhere
    fit(tmp_path / "clean")
    assert (tmp_path / "clean" / "model.safetensors").read_bytes() != (whole / "model.safetensors").read_bytes()


def test_gradient_accumulation_equals_one_large_batch(tmp_path):
    accumulated, _ = fit(tmp_path / "a", config(batch_size=4, grad_accumulation=2, max_steps=6, eval_every=6))
    large, _ = fit(tmp_path / "b", config(batch_size=8, max_steps=6, eval_every=6))
    a = load_file(tmp_path / "a" / "model.safetensors")
    b = load_file(tmp_path / "b" / "model.safetensors")
    assert a["1.weight"].abs().sum() > 0.1  # it trained
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=1e-6, rtol=1e-5)
    assert float(metrics(tmp_path / "a")[0]["train_loss"]) == pytest.approx(
        float(metrics(tmp_path / "b")[0]["train_loss"]), rel=1e-5)
    # one step of 2 micro-batches consumes 2 batches of the shared order: epochs line up
    assert read_json(latest_checkpoint(tmp_path / "a") / "state.json")["position"] == \
        2 * read_json(latest_checkpoint(tmp_path / "b") / "state.json")["position"]


@pytest.mark.parametrize("selection", [("dev_loss", "min"), ("dev_score", "max")])
def test_best_by_dev_keeps_the_best_steps_weights(tmp_path, selection):
    summary, task = fit(tmp_path, config(eval_every=2, max_steps=30), selection=selection)
    rows = metrics(tmp_path)
    losses = [float(r["dev_loss"]) for r in rows]
    best = losses.index(min(losses))
    assert 0 < best < len(rows) - 1, "the toy run must have its best dev step inside the run"
    assert summary["best_step"] == int(rows[best]["step"])
    assert summary[f"best_{selection[0]}"] == pytest.approx(float(rows[best][selection[0]]), abs=1e-6)
    saved = load_file(tmp_path / "model.safetensors")
    for name, value in task.snapshots[best].items():
        assert torch.equal(saved[name], value)
    assert not torch.equal(saved["1.weight"], task.snapshots[-1]["1.weight"])
    # the checkpoint keeps a copy of the best weights (Snakemake may delete model.safetensors)
    assert (latest_checkpoint(tmp_path) / "best.safetensors").read_bytes() == \
        (tmp_path / "model.safetensors").read_bytes()


@pytest.mark.parametrize("precision, message", [
    ("fp16", "precision='fp16' needs a CUDA device.*fp32"),
    ("bf16", "precision='bf16' on a CPU needs bfloat16 units.*this one has none.*set train.precision: fp32")])
def test_mixed_precision_is_refused_on_a_cpu_that_cannot_run_it(tmp_path, monkeypatch, precision, message):
    from multivec.training import distributed

    monkeypatch.setattr(distributed, "cpu_bf16_units", lambda: [])  # a CPU without bf16 units (an AVX2 one)
    with pytest.raises(ValueError, match=message):
        fit(tmp_path, config(precision=precision))
    assert not any(tmp_path.iterdir())
    with pytest.raises(ValueError, match="TrainConfig.precision='fp8'"):
        config(precision="fp8")


def test_bf16_trains_on_a_cpu_with_bf16_units(tmp_path, monkeypatch):
    """Opt-in CPU bf16: on a CPU that has the units (taken as present here, so the test runs anywhere; a CPU
    without them emulates bf16, slowly but correctly) the forward pass runs under bf16 autocast and trains."""
    from multivec.training import distributed

    monkeypatch.setattr(distributed, "cpu_bf16_units", lambda: ["avx512_bf16"])
    cfg = config(precision="bf16", max_steps=8)
    trainer = Trainer(LinearTask(cfg), cfg, tmp_path)
    with trainer.runtime.autocast():
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    trainer.fit()
    losses = [float(r["train_loss"]) for r in metrics(tmp_path) if r.get("train_loss")]
    assert len(losses) >= 2 and all(loss == loss for loss in losses) and losses[-1] < losses[0]
    assert (tmp_path / "model.safetensors").exists()


def test_cpu_bf16_units_are_read_from_cpuinfo():
    from multivec.training.distributed import cpu_bf16_units

    x86 = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\n"
    assert cpu_bf16_units(x86) == ["avx512_bf16"]
    assert cpu_bf16_units("flags\t: fpu avx2 amx_bf16 amx_tile avx512_bf16\n") == ["avx512_bf16", "amx_bf16"]
    assert cpu_bf16_units("flags\t: fpu sse2 avx2 fma\n") == []  # an AVX2 CPU: no units
    assert cpu_bf16_units("Features\t: fp asimd bf16 i8mm\n") == ["bf16"]  # Arm
    assert cpu_bf16_units("") == []


def test_time_limit_fails_without_a_model_and_resumes_exactly(tmp_path):
    with pytest.raises(TrainingTimeLimitError, match=r"max_minutes=1e-07.*raise train\.max_minutes"):
        fit(tmp_path / "capped", config(max_minutes=1e-7), **NOISY)
    capped = tmp_path / "capped"
    assert not (capped / "model.safetensors").exists() and not (capped / "training_summary.json").exists()
    assert latest_checkpoint(capped).name == "step_00000001"
    summary, _ = fit(capped, config(max_minutes=None), **NOISY)  # max_minutes may change on resumption
    fit(tmp_path / "whole", **NOISY)
    assert summary["train_steps"] == 20
    assert (capped / "model.safetensors").read_bytes() == (tmp_path / "whole" / "model.safetensors").read_bytes()
    assert metrics(capped) == metrics(tmp_path / "whole")


def test_resume_refuses_a_different_train_config(tmp_path):
    with pytest.raises(_Interrupted):
        fit(tmp_path, interrupt=3)
    with pytest.raises(ValueError, match="different run.*train.lr"):
        fit(tmp_path, config(lr=0.1))


def test_damaged_checkpoint_files_are_named(tmp_path):
    with pytest.raises(_Interrupted):
        fit(tmp_path, interrupt=3)
    state = latest_checkpoint(tmp_path) / "state.json"
    state.write_text('{"step": 3}')
    with pytest.raises(ValueError, match=r"state.json: checkpoint file lacks epoch, position"):
        fit(tmp_path)
    state.write_text("{")
    with pytest.raises(ValueError, match=r"state.json: not a readable checkpoint file"):
        fit(tmp_path)


class _Planted:
    """Unpickling this runs ``touch <marker>``."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch '{self.marker}'",)


@pytest.mark.parametrize("name", ["optimizer.pt", "rng.pt"])
def test_planted_pickle_is_refused_and_does_not_run(tmp_path, name):
    out = tmp_path / "run"
    with pytest.raises(_Interrupted):
        fit(out, interrupt=3)
    marker = tmp_path / "code_ran"
    planted = latest_checkpoint(out) / name
    torch.save({"optimizer": _Planted(marker), "torch": _Planted(marker)}, planted)
    with pytest.raises(UnsafeCheckpointError, match=f"{name}: refused to load"):
        fit(out)
    assert not marker.exists()
    torch.load(planted, weights_only=False)  # the planted file is real: an unsafe load runs it
    assert marker.exists()


def test_schedules_and_weight_decay_groups():
    def factors(schedule):
        return [lr_factor(step, schedule=schedule, warmup=4, total=20) for step in range(20)]

    linear, cosine = factors("linear"), factors("cosine")
    assert linear[:4] == cosine[:4] == [0.25, 0.5, 0.75, 1.0]  # warm-up
    assert linear[4] == cosine[4] == 1.0  # decay starts after the warm-up
    assert all(a > b for a, b in zip(linear[4:], linear[5:])) and all(a > b for a, b in zip(cosine[4:], cosine[5:]))
    assert cosine[12] == pytest.approx(0.5) and linear[12] == pytest.approx(0.5)  # half-way through the decay
    assert cosine[5] > linear[5] and cosine[18] < linear[18]
    layer = nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3))
    optimizer = make_optimizer([{"params": list(layer.named_parameters()), "lr": 0.1}], TrainConfig(weight_decay=0.01))
    decayed = [g for g in optimizer.param_groups if g["weight_decay"] == 0.01]
    assert len(decayed) == 1 and decayed[0]["params"] == [layer[0].weight]
    assert sum(len(g["params"]) for g in optimizer.param_groups) == 4


TORCHRUN_SCRIPT = """
import atexit, json, sys, torch
import torch.distributed as dist
sys.path.insert(0, {tests!r})
from test_training_engine import LinearTask, config
from multivec.training import Trainer, all_gather_with_grad
cfg = config(max_steps=6, batch_size=4, eval_every=6, checkpoint_every=3, seed=5)
summary = Trainer(LinearTask(cfg), cfg, {out!r}).fit()
rank = dist.get_rank()
x = torch.full((2,), float(rank + 1), requires_grad=True)
gathered = all_gather_with_grad(x)
(gathered * torch.arange(4.0)).sum().backward()
with open({out!r} + f"/rank{{rank}}.json", "w") as handle:
    json.dump({{"gathered": gathered.tolist(), "grad": x.grad.tolist(), "steps": summary["train_steps"]}}, handle)
atexit._run_exitfuncs()  # what the interpreter runs at exit: the runtime must close its process group
with open({out!r} + f"/rank{{rank}}.exit.json", "w") as handle:
    json.dump({{"group_alive_after_exit_hooks": dist.is_initialized()}}, handle)
"""


def test_two_ranks_under_torchrun_equal_two_accumulated_micro_batches(tmp_path):
    """DDP averages the gradients of rank 0's and rank 1's batches (batches 2i and 2i+1 of the shared order):
    the same update as one process accumulating those two batches."""
    out = tmp_path / "ddp"
    script = tmp_path / "ddp.py"
    script.write_text(TORCHRUN_SCRIPT.format(tests=str(Path(__file__).parent), out=str(out)))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                             str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
    assert all(r["steps"] == 6 and r["gathered"] == [1.0, 1.0, 2.0, 2.0] for r in ranks)
    # a group left alive at exit aborted rank 0 in its destructor (SIGABRT) once in CI after training passed
    assert all(not json.loads((out / f"rank{r}.exit.json").read_text())["group_alive_after_exit_hooks"]
               for r in range(2))
    # every rank's loss covers all four gathered values; each slice's gradient is summed over both ranks
    assert ranks[0]["grad"] == [0.0, 2.0] and ranks[1]["grad"] == [4.0, 6.0]
    fit(tmp_path / "single", config(max_steps=6, batch_size=4, eval_every=6, checkpoint_every=3, grad_accumulation=2))
    ddp, single = load_file(out / "model.safetensors"), load_file(tmp_path / "single" / "model.safetensors")
    for name in single:
        torch.testing.assert_close(ddp[name], single[name], atol=1e-6, rtol=1e-5)
    assert read_json(out / "config.json")["derived"]["world_size"] == 2
    # train_loss is averaged over ranks, as over accumulated micro-batches
    assert float(metrics(out)[0]["train_loss"]) == pytest.approx(float(metrics(tmp_path / "single")[0]["train_loss"]),
                                                                rel=1e-5)


class TermsTask(LinearTask):
    """LinearTask whose loss also reports its parts (metrics.csv shows every loss term)."""

    loss_terms = ("mse", "abs_mean")

    def loss(self, module, batch):
        x, y = batch
        mse = nn.functional.mse_loss(module(x), y)
        terms = {"mse": float(mse.detach())}
        if float(x[0, 0]) > 0:  # some batches only: a term a batch does not report is absent, not 0
            terms["abs_mean"] = float(x.abs().mean())
        return mse, len(x), terms


def test_loss_terms_are_averaged_into_their_own_columns_and_resume_exactly(tmp_path):
    cfg = config(max_steps=8, eval_every=4)
    Trainer(TermsTask(cfg), cfg, tmp_path / "whole").fit()
    rows = metrics(tmp_path / "whole")
    assert list(rows[0])[:4] == ["step", "train_loss", "train_mse", "train_abs_mean"]
    for row in rows:  # the only loss term is the loss: the window means agree
        assert float(row["train_mse"]) == pytest.approx(float(row["train_loss"]), rel=1e-5)
        assert row["train_abs_mean"] == "" or float(row["train_abs_mean"]) > 0
    assert any(row["train_abs_mean"] for row in rows)
    with pytest.raises(_Interrupted):
        Trainer(TermsTask(cfg), cfg, tmp_path / "split").fit(_interrupt_after=5)  # checkpoint at 3: window open
    Trainer(TermsTask(cfg), cfg, tmp_path / "split").fit()
    assert metrics(tmp_path / "split") == rows


def test_an_undeclared_loss_term_is_refused(tmp_path):
    class Undeclared(TermsTask):
        loss_terms = ("mse",)

        def loss(self, module, batch):
            loss, n, terms = super().loss(module, batch)
            return loss, n, {**terms, "abs_mean": 1.0}

    cfg = config(max_steps=2, warmup_steps=1)
    with pytest.raises(KeyError, match="abs_mean"):
        Trainer(Undeclared(cfg), cfg, tmp_path / "out").fit()


def test_eval_at_start_adds_a_step_zero_row_once_and_resumes_exactly(tmp_path):
    """eval_at_start: the starting point's dev metrics are row 0 of metrics.csv, written once, and
    a resumed run neither repeats nor loses it."""
    whole, split = tmp_path / "whole", tmp_path / "split"
    cfg = config(eval_at_start=True)
    fit(whole, cfg)
    rows = metrics(whole)
    assert rows[0]["step"] == "0" and rows[0]["train_loss"] == "" and rows[0]["dev_loss"] != ""
    assert [r["step"] for r in rows] == ["0", "4", "8", "12", "16", "20"]
    with pytest.raises(_Interrupted):
        fit(split, cfg, interrupt=8)
    fit(split, cfg)
    assert metrics(split) == rows
    assert (whole / "model.safetensors").read_bytes() == (split / "model.safetensors").read_bytes()
    fit(tmp_path / "plain")  # off by default: no step-0 row
    assert [r["step"] for r in metrics(tmp_path / "plain")] == ["4", "8", "12", "16", "20"]


def test_the_safety_net_joins_the_settings_only_as_a_resource():
    from multivec.training.safety_net import rule_settings, safety_net_resource

    settings = {"max_steps": 3, "max_minutes": 120}
    assert rule_settings(settings) == {"max_steps": 3} and safety_net_resource(settings) == 120
    assert safety_net_resource({"max_minutes": None}) == 0  # a resource cannot be null: 0 is no limit
    assert TrainConfig.from_rule({"max_steps": 3}, 120).max_minutes == 120
    assert TrainConfig.from_rule({"max_steps": 3}, 0).max_minutes is None
    with pytest.raises(ValueError, match="max_minutes is in the rule's params"):
        TrainConfig.from_rule(settings, 120)
