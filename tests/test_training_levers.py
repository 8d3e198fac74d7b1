"""The training engine's GPU levers, run on CPU: the fused AdamW kernel (``train.fused_optimizer``), regional
compilation (``train.compile``, ``multivec.training.compilation``) and no host synchronisation inside a step.
Each is off by default, and the default path is unchanged."""

import pytest
import torch
from safetensors.torch import load_file
from torch import nn
from torch._dynamo.utils import counters
from torch.optim.optimizer import register_optimizer_step_post_hook

from multivec.training import Trainer
from multivec.training.compilation import compile_repeated_blocks, repeated_blocks
from multivec.training.engine import RESUMABLE_CHANGES, TrainConfig, make_optimizer

from test_training_engine import LinearTask, config, fit, metrics


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.parts = nn.ModuleList([nn.Linear(dim, dim), nn.Linear(dim, dim)])  # inside a block: not chosen

    def forward(self, x):
        for part in self.parts:
            x = x + part(x)
        return torch.tanh(self.linear(x))


class Stack(nn.Module):
    def __init__(self, dim=6, depth=3):
        super().__init__()
        self.layers = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.mixed = nn.ModuleList([nn.Linear(dim, dim), nn.ReLU()])  # two classes: not a stack
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


class StackTask(LinearTask):
    name = "stack"

    def setup(self, out_dir, runtime, resuming):
        torch.manual_seed(3)
        self.model = Stack(self.x.shape[1])
        self.device = runtime.device


def test_fused_optimizer_is_opt_in_and_trains_to_the_same_weights(tmp_path):
    params = [("w", nn.Parameter(torch.ones(3, 3)))]
    assert make_optimizer([{"params": params, "lr": 0.1}], config()).defaults["fused"] is None  # torch's default
    assert make_optimizer([{"params": params, "lr": 0.1}], config(fused_optimizer=True)).defaults["fused"] is True
    fit(tmp_path / "default")
    fit(tmp_path / "fused", config(fused_optimizer=True))
    a, b = load_file(tmp_path / "default" / "model.safetensors"), load_file(tmp_path / "fused" / "model.safetensors")
    assert a["1.weight"].abs().sum() > 0.1  # it trained
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=1e-5, rtol=1e-4)


def test_the_levers_may_change_when_a_run_resumes():
    assert {"fused_optimizer", "compile"} <= RESUMABLE_CHANGES
    assert TrainConfig().fused_optimizer is False and TrainConfig().compile is False


class Probe:
    """A loss count or term whose conversion to a Python number records how many optimizer steps had ended."""

    steps_ended = 0
    reads: list[int] = []

    def __init__(self, value):
        self.value = value

    def __float__(self):
        Probe.reads.append(Probe.steps_ended)
        return float(self.value)

    def __int__(self):
        Probe.reads.append(Probe.steps_ended)
        return int(self.value)


class ProbedTask(LinearTask):
    loss_terms = ("mse",)

    def loss(self, module, batch):
        x, y = batch
        loss = nn.functional.mse_loss(module(x), y)
        return loss, Probe(len(x)), {"mse": Probe(loss.detach())}


def test_no_loss_count_or_term_is_read_before_the_step_ends(tmp_path):
    cfg = config(max_steps=3, grad_accumulation=2, batch_size=4, eval_every=3, checkpoint_every=3)

    def ended(*_):
        Probe.steps_ended += 1

    Probe.steps_ended, Probe.reads = 0, []
    hook = register_optimizer_step_post_hook(ended)
    try:
        Trainer(ProbedTask(cfg), cfg, tmp_path / "run").fit()
    finally:
        hook.remove()
    # step s (1-based) reads its 2 counts and 2 terms after its optimizer step: s steps had ended
    assert Probe.reads == [s for s in (1, 2, 3) for _ in range(4)]
    rows = metrics(tmp_path / "run")
    assert float(rows[-1]["train_mse"]) == pytest.approx(float(rows[-1]["train_loss"]), rel=1e-6)


def test_repeated_blocks_are_the_outermost_stacks_of_one_class():
    model = Stack()
    assert [name for name, _ in repeated_blocks(model)] == ["layers.0", "layers.1", "layers.2"]
    with pytest.raises(ValueError, match="train.compile: Sequential has no repeated blocks"):
        compile_repeated_blocks(nn.Sequential(nn.Linear(2, 2)))


def test_compiled_blocks_keep_their_names_and_outputs():
    torch.manual_seed(0)
    model, x = Stack(), torch.randn(5, 6)
    expected = model(x)
    keys = list(model.state_dict())
    assert compile_repeated_blocks(model, backend="eager") == ["layers.0", "layers.1", "layers.2"]
    assert list(model.state_dict()) == keys  # in place: no _orig_mod. prefix, checkpoints unchanged
    torch.testing.assert_close(model(x), expected)


def test_a_compiled_run_trains_like_the_eager_one(tmp_path):
    cfg = config(max_steps=6, eval_every=3, checkpoint_every=3)
    Trainer(StackTask(cfg), cfg, tmp_path / "eager").fit()
    compiled = config(max_steps=6, eval_every=3, checkpoint_every=3, compile=True)
    counters.clear()
    summary = Trainer(StackTask(compiled), compiled, tmp_path / "compiled").fit()
    assert summary["train_steps"] == 6
    assert counters["stats"]["unique_graphs"] >= 1 and not counters["graph_break"]  # it did compile, whole blocks
    a = load_file(tmp_path / "eager" / "model.safetensors")
    b = load_file(tmp_path / "compiled" / "model.safetensors")
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=1e-4, rtol=1e-3)
    with pytest.raises(ValueError, match="train.compile"):  # nothing to compile: refused, not ignored
        fit(tmp_path / "linear", config(compile=True))
