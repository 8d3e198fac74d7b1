"""A killed training resumes to the same bytes, for every trainer of the training engine.

Each trainer runs at smoke scale (tiny random models, 12 steps, a checkpoint every 3, an evaluation every
2) through the entry point its rule calls. One run is uninterrupted; three others are killed for real
(SIGKILL, by the engine's ``MULTIVEC_KILL_AFTER_STEP`` hook) after step 3 (right after its checkpoint),
7 and 11 (one and two steps past the checkpoints of steps 6 and 9, which are redone); their declared
outputs are deleted (as Snakemake does before rerunning a killed job) and they are resumed through the
same entry point. All must end with the same weights (final, best and last checkpoint), optimizer
state, metrics.csv (without its timing columns), summary and metadata as the uninterrupted run. Every
trainer runs more than one epoch, and the resumptions start in different epochs.

Trainers (every ``TrainingTask`` in src/multivec): NUGGET AE (the frozen-bottom cache, whose history-
dependent rounding broke exact resumption) with a scratch and a warm-started tied decoder, NUGGET MT on
mBART, TSDAE (deletion noise, dropout), the NUGGET LM of Table 3, the SubEncoder, the distilled student
(SoftCCA's running state, gradient accumulation) and the seq2seq segmenter. The IMDB head
(``distill.classification_head``) does not use the engine and keeps no checkpoint.

Random states: a checkpoint's ``rng.pt`` holds torch's generator state (compared too); Python's ``random``
and NumPy's global generator are neither saved nor restored, because nothing in training draws from them
(``multivec.training.engine``). Each uninterrupted and each resumed run here, in this process, must leave
both states exactly as it found them: a trainer that started drawing from them fails the test. Checkpoints
written before (with "python" and "numpy" entries in ``rng.pt``) still resume to the same bytes.

The killed runs are children of a multiprocessing fork server (a fresh process that imports the
trainers once), so a kill costs a fork, not a Python start.
"""

from __future__ import annotations

import csv
import multiprocessing
import os
import random
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import torch

from multivec.io import read_json, write_jsonl
from multivec.training.checkpoint import latest_checkpoint, safe_load
from multivec.training.engine import KILL_AFTER_STEP_ENV, TrainConfig

STEPS, CHECKPOINT_EVERY, EVAL_EVERY = 12, 3, 2
KILLS = (3, 7, 11)  # resumed from checkpoints 3, 6 and 9 (steps 7 and 10-11 are redone)
DECLARED_OUTPUTS = ("model.safetensors", "config.json", "metrics.csv", "training_summary.json")
WORDS = "the cat dog sat ran on a mat house red blue small big quickly slowly and but near far tree".split()


def train_config(**changes) -> dict:
    return dict(max_steps=STEPS, checkpoint_every=CHECKPOINT_EVERY, eval_every=EVAL_EVERY, lr=1e-3, seed=5,
                threads=1, device="cpu", **changes)


def sentences(seed: int, n: int, low: int = 4, high: int = 18) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))) + "." for _ in range(n)]


# -- the trainers: inputs under ``root`` and the rule's entry point ---------------------------------------
def nugget_inputs(root: Path) -> None:
    texts = sentences(0, 48)
    rows = [{"id": f"d{i}", "source": t, "target": " ".join(reversed(t.split()))} for i, t in enumerate(texts)]
    write_jsonl(root / "train.jsonl", rows[:40])  # batches of 8: 5 per epoch
    write_jsonl(root / "dev.jsonl", rows[40:])


def nugget_run(settings: dict) -> Callable[[Path, Path], dict]:
    def run(root: Path, out: Path) -> dict:  # workflow/scripts/train_nugget.py
        from multivec.nugget.configuration import NuggetConfig
        from multivec.nugget.training import train

        config = NuggetConfig(**{**dict(encoder="tiny-random-bert", ratio=0.25, scorer_layer=2, decoder_heads=2,
                                        decoder_ffn=64, target_vocab_size=300, max_source_tokens=32,
                                        max_target_tokens=32), **settings})
        return train(config, TrainConfig(**train_config(batch_size=8, lr_scratch=3e-3, warmup_steps=2)),
                     root / "train.jsonl", root / "dev.jsonl", out)
    return run


def lm_inputs(root: Path) -> None:
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.lm_data import Stream, write_streams
    from multivec.nugget.modeling import NuggetModel
    from multivec.nugget.target_tokenizer import TargetTokenizer

    config = NuggetConfig(encoder="tiny-random-bert", ratio=0.3, scorer_layer=2, decoder_heads=2, decoder_ffn=64,
                          target_vocab_size=300, max_source_tokens=32, max_target_tokens=32)
    NuggetModel.from_backbone(config, TargetTokenizer.train_bpe(sentences(1, 40), 300)).save_pretrained(root / "ae")
    for name, seed, n in (("train", 2, 6), ("dev", 3, 2)):
        write_streams([Stream(f"{name}{i}", " ".join(sentences(seed * 10 + i, 6))) for i in range(n)],
                      root / f"{name}.jsonl")


def lm_run(root: Path, out: Path) -> dict:  # workflow/scripts/nugget_lm_train.py
    from multivec.nugget.language_model import LMSettings, train
    from multivec.nugget.lm_data import read_streams

    settings = LMSettings(history="nuggets", segment_tokens=16, train_histories=[1, 2], history_source_tokens=32)
    return train(settings, root / "ae", TrainConfig(**train_config(batch_size=4)), read_streams(root / "train.jsonl"),
                 read_streams(root / "dev.jsonl"), out, max_dev_segments=8, max_train_segments=16)


def subencoder_inputs(root: Path) -> None:
    rows = []
    for p, text in enumerate(sentences(4, 7, low=6, high=10)):  # a pair: the sentence and its words reversed
        for side, sentence in enumerate((text, " ".join(reversed(text.rstrip(".").split())) + ".")):
            words = sentence.rstrip(".").split()
            half = " ".join(words[:len(words) // 2])
            rest = sentence.index(words[len(words) // 2], len(half))
            rows.append({"id": f"p{p}-{side}", "sentence": sentence, "pair_id": f"p{p}", "propositions": [
                {"text": half, "char_spans": [[0, len(half)]], "label": side},
                {"text": sentence[rest:], "char_spans": [[rest, len(sentence)]], "label": 1 - side}]})
    write_jsonl(root / "train.jsonl", rows[:10])  # 5 pairs, batches of 2 pairs: 3 per epoch
    write_jsonl(root / "dev.jsonl", rows[10:])


def subencoder_run(root: Path, out: Path) -> dict:  # workflow/scripts/subencoder_model_train.py
    from multivec.subencoder.model import SubEncoderConfig
    from multivec.subencoder.training import train

    return train(SubEncoderConfig(encoder="tiny-random-bert", output_dim=8), TrainConfig(**train_config(batch_size=4)),
                 root / "train.jsonl", root / "dev.jsonl", out, temperature=0.1)


def distill_inputs(root: Path) -> None:
    from multivec.distill.embeddings import write_embeddings

    texts = sentences(5, 16, low=3, high=40)
    write_jsonl(root / "train.jsonl", [{"id": f"d{i}", "text": t} for i, t in enumerate(texts)])
    rng = np.random.default_rng(0)
    ids = [f"d{i}" for i in range(len(texts))][::-1]
    write_embeddings(root / "structural", ids, rng.normal(size=(len(ids), 16)), {"model": "random"})
    write_embeddings(root / "contextual", ids, rng.normal(size=(len(ids), 10)), {"model": "random"})


def distill_run(root: Path, out: Path) -> dict:  # workflow/scripts/distill_student_train.py
    from multivec.distill.configuration import LossConfig, StudentConfig
    from multivec.distill.training import train

    student = StudentConfig(backbone="tiny-random-bert", max_tokens=40, chunk_tokens=12, structural_head=[],
                            contextual_head=[8], teacher_head=[8])
    cfg = TrainConfig(**train_config(batch_size=4, schedule="cosine", warmup_steps=1, grad_accumulation=2))
    return train(student, LossConfig(structural="cosine", contextual="soft_cca"), cfg, root / "train.jsonl",
                 root / "structural", root / "contextual", out)


def segmenter_inputs(root: Path) -> None:
    from transformers import T5Config, T5ForConditionalGeneration

    from multivec.io.resources import load_tokenizer

    tokenizer = load_tokenizer("minilm")
    config = T5Config(vocab_size=tokenizer.vocab_size, d_model=16, d_kv=8, d_ff=32, num_layers=1,
                      num_decoder_layers=1, num_heads=2, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.sep_token_id, decoder_start_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(root / "t5")
    tokenizer.save_pretrained(root / "t5")
    rows = [{"id": f"s{i}", "sentence": f"Town {i} lies in a valley, which floods.",
             "propositions": [{"text": f"Town {i} lies in a valley"}, {"text": "the valley floods"}]}
            for i in range(10)]
    write_jsonl(root / "seed.jsonl", rows)


def segmenter_run(root: Path, out: Path) -> dict:  # workflow/scripts/subencoder_data_train_segmenter.py
    from multivec.io import read_jsonl
    from multivec.subencoder.data.segmenter_distillation import train_segmenter

    # 8 training examples in batches of 2, 3 epochs: the 12 steps
    return train_segmenter(str(root / "t5"), read_jsonl(root / "seed.jsonl"), out, lr=1e-3, batch_size=2, epochs=3,
                           seed=5, dev_fraction=0.2, device="cpu", threads=1, eval_every=EVAL_EVERY,
                           checkpoint_every=CHECKPOINT_EVERY)


@dataclass(frozen=True)
class Case:
    prepare: Callable[[Path], None]
    run: Callable[[Path, Path], dict]


CASES = {
    "nugget_ae": Case(nugget_inputs, nugget_run(dict(objective="ae"))),  # frozen-bottom cache on
    # nugget_analysis's decoder: warm-started from the encoder, output tied to its word embeddings
    "nugget_ae_warm_decoder": Case(nugget_inputs, nugget_run(dict(objective="ae", decoder_init="encoder",
                                                                 target_tokenizer="source"))),
    "nugget_mt_mbart": Case(nugget_inputs, nugget_run(dict(objective="mt", architecture="mbart",
                                                          encoder="tiny-random-mbart", target_tokenizer="source"))),
    "tsdae": Case(nugget_inputs, nugget_run(dict(bottleneck="mean", residual=False, feedback=False, frozen_layers=-1,
                                                 noise_deletion=0.6))),
    "nugget_lm": Case(lm_inputs, lm_run),
    "subencoder": Case(subencoder_inputs, subencoder_run),
    "distill_student": Case(distill_inputs, distill_run),
    "seq2seq_segmenter": Case(segmenter_inputs, segmenter_run),
}


# -- killing and comparing -----------------------------------------------------------------------------
def killed_run(case: str, root: str, out: str, step: int, log: str) -> None:
    """In a forked child: the entry point with the kill hook set; its output goes to ``log``."""
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.environ[KILL_AFTER_STEP_ENV] = str(step)
    CASES[case].run(Path(root), Path(out))


_FORKS = multiprocessing.get_context("forkserver")
_FORKS.set_forkserver_preload(["torch", "transformers", "multivec.nugget.training", "multivec.nugget.language_model",
                               "multivec.subencoder.training", "multivec.distill.training",
                               "multivec.subencoder.data.segmenter_distillation", Path(__file__).stem])


def kill_after(case: str, root: Path, out: Path, step: int) -> None:
    log = out.with_name(out.name + ".log")
    child = _FORKS.Process(target=killed_run, args=(case, str(root), str(out), step, str(log)))
    child.start()
    child.join(timeout=300)
    if child.is_alive():
        child.kill()
        pytest.fail(f"{case}: the run to be killed after step {step} did not finish in 300 s")
    assert child.exitcode == -signal.SIGKILL, \
        f"{case}: exit code {child.exitcode}, not killed after step {step}:\n{log.read_text()[-3000:]}"


def global_rng_states() -> tuple:
    """Python's ``random`` and NumPy's global generator states, comparable with ``==``."""
    kind, keys, position, has_gauss, cached = np.random.get_state()
    return random.getstate(), (kind, keys.tolist(), position, has_gauss, cached)


def run_leaving_global_rng_alone(case: str, root: Path, out: Path) -> None:
    """The case's entry point, in this process; fails if it drew from (or set) ``random`` or ``np.random``."""
    before = global_rng_states()
    CASES[case].run(root, out)
    after = global_rng_states()
    changed = [name for name, a, b in zip(("python random", "numpy.random"), before, after) if a != b]
    assert not changed, f"{case}: training changed the state of {' and '.join(changed)}: something draws from " \
                        "it (use a seeded generator of its own) or a checkpoint restored it"


def outcome(out: Path) -> dict:
    """Everything a run leaves that must not depend on an interruption (timings excluded)."""
    checkpoint = latest_checkpoint(out)
    rng = safe_load(checkpoint / "rng.pt")
    with open(out / "metrics.csv", newline="") as handle:
        rows = [dict(list(row.items())[:-2]) for row in csv.DictReader(handle)]  # drop <unit>_per_s, elapsed_s
    summary = read_json(out / "training_summary.json")
    summary.pop("train_minutes")
    optimizer = safe_load(checkpoint / "optimizer.pt")["optimizer"]["state"]
    return {"weights": (out / "model.safetensors").read_bytes(), "config": (out / "config.json").read_text(),
            "metrics": rows, "summary": summary, "checkpoint": checkpoint.name,
            "checkpoint_weights": (checkpoint / "model.safetensors").read_bytes(),
            "checkpoint_best": (checkpoint / "best.safetensors").read_bytes(),
            "optimizer": {k: {n: v.tolist() if torch.is_tensor(v) else v for n, v in s.items()}
                          for k, s in optimizer.items()},
            "rng": {"keys": sorted(rng), "torch": rng["torch"].tolist()}}


@pytest.fixture(scope="module")
def whole_runs(tmp_path_factory):
    """Inputs and the uninterrupted run of each case, made when a test first asks for it."""
    made: dict[str, tuple[Path, dict]] = {}

    def get(case: str) -> tuple[Path, dict]:
        if case not in made:
            root = tmp_path_factory.mktemp(case)
            CASES[case].prepare(root)
            run_leaving_global_rng_alone(case, root, root / "whole")
            made[case] = root, outcome(root / "whole")
        return made[case]

    return get


@pytest.mark.parametrize("case", list(CASES))
def test_killed_and_resumed_training_ends_with_the_same_bytes(case, whole_runs):
    root, whole = whole_runs(case)
    assert whole["checkpoint"] == f"step_{STEPS:08d}" and len(whole["metrics"]) == STEPS // EVAL_EVERY
    resumed_epochs = []
    for step in KILLS:
        out = root / f"killed_after_{step}"
        kill_after(case, root, out, step)
        assert not (out / "training_summary.json").exists()
        state = read_json(latest_checkpoint(out) / "state.json")
        assert state["step"] == step - step % CHECKPOINT_EVERY
        resumed_epochs.append(state["epoch"])
        for name in DECLARED_OUTPUTS:  # Snakemake deletes a killed job's outputs before rerunning it
            (out / name).unlink(missing_ok=True)
        run_leaving_global_rng_alone(case, root, out)
        resumed = outcome(out)
        differs = sorted(key for key in whole if resumed[key] != whole[key])
        assert not differs, f"{case} killed after step {step}: {', '.join(differs)} differ from the uninterrupted run"
    # More than one epoch, and resumed in different epochs: a resumed run crosses an epoch boundary.
    assert len(set(resumed_epochs)) > 1, resumed_epochs
    assert whole["rng"]["keys"] == ["torch"]  # on CPU; "cuda" too where CUDA is available


def old_rng_file(torch_state: torch.Tensor) -> dict:
    """``rng.pt`` as checkpoints before held it: Python's and NumPy's states too (here unlike this process's)."""
    python = random.Random(123).getstate()
    numpy = np.random.RandomState(123).get_state()
    return {"python": [python[0], list(python[1]), python[2]],
            "numpy": {"kind": numpy[0], "keys": torch.from_numpy(numpy[1].astype(np.int64)), "pos": int(numpy[2]),
                      "has_gauss": int(numpy[3]), "cached_gaussian": float(numpy[4])},
            "torch": torch_state}


def test_an_old_checkpoint_with_python_and_numpy_states_resumes_to_the_same_bytes(whole_runs):
    case = "subencoder"
    root, whole = whole_runs(case)
    out = root / "old_checkpoint"
    kill_after(case, root, out, 7)
    rng_path = latest_checkpoint(out) / "rng.pt"
    torch.save(old_rng_file(safe_load(rng_path)["torch"]), rng_path)
    for name in DECLARED_OUTPUTS:
        (out / name).unlink(missing_ok=True)
    run_leaving_global_rng_alone(case, root, out)  # loads it; the extra entries are not restored
    resumed = outcome(out)
    differs = sorted(key for key in whole if resumed[key] != whole[key])
    assert not differs, f"resumed from an old rng.pt: {', '.join(differs)} differ from the uninterrupted run"


def test_set_rng_state_restores_torch_and_ignores_old_python_and_numpy_entries(tmp_path):
    from multivec.training.checkpoint import rng_state, set_rng_state

    saved = torch.get_rng_state()
    try:
        torch.manual_seed(11)
        expected = torch.rand(3)
        torch.manual_seed(11)
        path = tmp_path / "rng.pt"
        torch.save(old_rng_file(torch.get_rng_state()), path)
        assert sorted(rng_state()) == (["cuda", "torch"] if torch.cuda.is_available() else ["torch"])
        torch.manual_seed(99)
        before = global_rng_states()
        set_rng_state(safe_load(path))  # weights_only, as a resume loads it
        assert global_rng_states() == before
        assert torch.equal(torch.rand(3), expected)
    finally:
        torch.set_rng_state(saved)


def test_kill_hook_refuses_a_value_that_is_not_a_step(monkeypatch):
    from multivec.training.engine import kill_after_step

    monkeypatch.setenv(KILL_AFTER_STEP_ENV, "ten")
    with pytest.raises(ValueError, match=KILL_AFTER_STEP_ENV):
        kill_after_step()
    monkeypatch.delenv(KILL_AFTER_STEP_ENV)
    assert kill_after_step() is None


# -- the root cause, directly: the frozen-bottom cache gives the same states whatever came before ---------
@pytest.mark.parametrize("bound_documents", [None, 6], ids=["unbounded", "bound"])
def test_bottom_cache_states_do_not_depend_on_earlier_batches(bound_documents):
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.modeling import NuggetModel
    from multivec.nugget.training import BottomCache

    model = NuggetModel.from_backbone(NuggetConfig(encoder="tiny-random-bert", scorer_layer=2, decoder_heads=2,
                                                   decoder_ffn=64, target_tokenizer="source")).train()
    sources = model.processor.tokenize_sources(sentences(6, 16, low=2, high=20))
    lengths = [len(s) for s in sources]
    d = model.encoder.hidden_size
    megabytes = 4096.0 if bound_documents is None else sum(sorted(lengths)[:bound_documents]) * d * 4 / 2 ** 20

    def states(history: list[list[int]], rows: list[int], planned: bool) -> torch.Tensor:
        cache = BottomCache(megabytes)
        if planned:
            cache.plan(lengths, d)
        for batch in history + [rows]:
            ids, mask = model.processor.collate_sources([sources[i] for i in batch], model.device)
            out = cache.batch(model, batch, ids, mask)
        return out

    rows = [0, 3, 5, 8, 11, 14]
    for planned in (True, False):
        fresh = states([], rows, planned)  # a resumed run: nothing cached yet
        after = states([[3, 7, 1, 14], [2, 8, 0, 9, 10]], rows, planned)  # some documents first seen elsewhere
        assert torch.equal(fresh, after), f"planned={planned}"
