"""Optimizer steps of each work's trainer at the paper's shapes.

The paper-scale path of the training engine (bf16/fp16 autocast, gradient accumulation) had never run on a
GPU. This benchmark runs it: for each work it builds the paper's architecture from a transformers ``*Config``
with RANDOM weights (nothing from a hub), writes them and MiniLM's offline tokenizer into a temporary model
folder, and trains through the work's own ``TrainingTask`` and the one engine (``multivec.training.Trainer``:
its precision handling, accumulation, clipping, AdamW step and checkpoint). The work's own ``setup`` loads the
folder as it would load a pretrained model. What is timed is the engine's step: from the first micro-batch's
``make_batch`` to the end of ``optimizer.step`` (CUDA synchronised), after ``--warmup-steps`` untimed steps.

Works and shapes (the numbers are read from config/config.yaml overlaid with config/paper.yaml, as
``snakemake --configfile config/paper.yaml`` reads them):
- ``nugget``: mBART-large-50 (d 1024, 12+12 layers, 16 heads, FFN 4096, vocabulary 250,054), the first
  NUGGET row of ``table2.rows`` (AE, r = 0.25), ``train.batch_size`` documents of ``nugget.max_source_tokens``
  tokens, the same document as target (AE), the bottom frozen up to ``nugget.scorer_layer``, with the settings
  the workflow's model zoo trains it with (``multivec.nugget.zoo.model_settings``: at paper scale mBART's tied
  output layer). Every step sees new documents, so the frozen-bottom cache misses (the first epoch's cost).
- ``subencoder``: the first ``subencoder.model.backbones`` entry (sentence-t5-base: a T5-base encoder, d 768,
  12 layers, 12 heads, FFN 3072, vocabulary 32,128), ``subencoder.train.batch_size`` sentences (whole pairs)
  of ``subencoder.model.max_tokens`` tokens each (the longest the paper's rows may be), 4 propositions each.
- ``distill``: ``distill.student.backbone`` = Longformer-base-4096 (d 768, 12 layers, 12 heads, FFN 3072,
  window 512, vocabulary 50,265) over ``distill.student.max_tokens`` + 2 tokens, gradient checkpointing as
  configured, ``distill.train.batch_size`` documents x ``distill.train.grad_accumulation`` micro-batches, the
  structural (cosine) + contextual (SoftCCA) loss against random teacher vectors of the teachers' widths.

Reported per work (CSV columns): tokens/s (every token position a transformer stack reads: NUGGET's source
and decoder inputs; the sentences; the documents), seconds per step, peak memory (GPU:
``torch.cuda.max_memory_allocated`` over set-up and steps; CPU: the process's peak RSS, VmHWM reset before
the work), model FLOPs per step, achieved TFLOP/s and model FLOPs utilisation (MFU).

Model FLOPs are COUNTED, not estimated: ``torch.utils.flop_counter.FlopCounterMode`` over the forward and
backward of one micro-batch through the task's own loss (gradient checkpointing switched off for the count,
so recomputation is not counted), times the accumulation steps (the distillation student is counted on 2
documents and scaled to the batch: its cost is per document). For a dense layer that trains this is the
familiar 6 N tokens (2 N forward, 4 N backward); a frozen layer counts 2 N (forward only); NUGGET's
cross-attention projections count per nugget, its output layer per predicted token. Attention products are
the sdpa kernels and the batched matmuls (T5's and Longformer's attention); their share is a column.
MFU = model FLOPs / step seconds / the device's dense bf16 (= fp16) tensor-core peak from the vendor's
datasheet (``PEAK_TFLOPS``; ``--peak-tflops`` for a device not listed). On a CPU, or in fp32, no peak is
assumed: MFU is left empty and ``mfu_note`` says why.

    # on a CUDA GPU (the figures to commit; results/benchmarks/paper_shape_step.{csv,png}):
    python benchmarks/paper_shape_step.py                      # bf16, 1 warm-up + 2 timed steps per work
    python benchmarks/paper_shape_step.py --precision fp16 --works distill
    # anywhere, in about 10 s: every shape scaled down, CPU, fp32 (tests/test_paper_shape_step.py):
    python benchmarks/paper_shape_step.py --tiny --out /tmp/paper_shape_step_tiny

bf16/fp16 without CUDA stops at once with a message and exit status 2 (the engine itself refuses mixed
precision on a CPU).

The training engine's speed levers (``train.fused_optimizer``, ``train.compile``, a larger micro-batch with
less accumulation: the same documents per optimizer step) are flags here, and ``--variants`` runs them side by
side on each work's one model folder, in this order: eager fp32 (the reference), eager in ``--precision``,
+ fused AdamW, + compile, + the whole step in one micro-batch. ``levers`` names each row's; ``loss_vs_reference``
is the largest relative difference of its per-step training losses from those of the reference row that saw
the same micro-batches (the first row of the work with the same micro-batch and accumulation); under compile
the dropout masks come from another generator, so that difference includes dropout noise.
``eval_loss_vs_reference`` compares the loss of the first micro-batch in eval mode (no dropout), on the same
weights before any step: the kernels' and the precision's difference alone (bf16: about 1e-2). The CSV is rewritten
after every row, so a run stopped by ``--budget-seconds`` (no new row starts past it) or killed keeps its
rows. The GPU session's one command is ``benchmarks/gpu_session.sh``.

    python benchmarks/paper_shape_step.py --variants --steps 5 --warmup-steps 2 --budget-seconds 480
    python benchmarks/paper_shape_step.py --tiny --variants --out /tmp/levers_tiny    # CPU, fp32, about a minute
"""

from __future__ import annotations

import argparse
import copy
import csv
import math
import os
import platform
import random
import re
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

OUT = REPO / "results" / "benchmarks" / "paper_shape_step"
WORKS = ("nugget", "subencoder", "distill")

# Architectures of the paper's pretrained models (their released config.json files); only the shapes
# matter here, the weights are random. Special-token ids are set to MiniLM's tokenizer's (see model_folder).
MBART_LARGE_50 = dict(d_model=1024, encoder_layers=12, decoder_layers=12, encoder_attention_heads=16,
                      decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096, vocab_size=250054,
                      max_position_embeddings=1024, scale_embedding=True, activation_function="relu",
                      dropout=0.1, attention_dropout=0.0, activation_dropout=0.0)
T5_BASE = dict(d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_heads=12, vocab_size=32128,
               feed_forward_proj="relu", relative_attention_num_buckets=32, dropout_rate=0.1)
BERT_BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                 vocab_size=30522, max_position_embeddings=512)
LONGFORMER_BASE_4096 = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                            vocab_size=50265, max_position_embeddings=4098, attention_window=512, type_vocab_size=1)
# The paper encoders of config/paper.yaml -> (transformers config class, architecture).
SUBENCODER_ARCHITECTURES = {
    "sentence-transformers/sentence-t5-base": ("T5Config", T5_BASE),
    "sentence-transformers/gtr-t5-base": ("T5Config", T5_BASE),
    "princeton-nlp/sup-simcse-bert-base-uncased": ("BertConfig", BERT_BASE),
}
STUDENT_ARCHITECTURES = {"allenai/longformer-base-4096": ("LongformerConfig", LONGFORMER_BASE_4096)}
STRUCTURAL_TEACHER_DIM = 768  # all-mpnet-base-v2's sentence embedding (the structural teacher)
PROPOSITIONS = 4  # per sub-encoder training sentence

# --tiny: the same architectures, a few layers of a tiny width (the vocabulary stays MiniLM's tokenizer's).
TINY_SIZES = {
    "MBartConfig": dict(d_model=32, encoder_layers=4, decoder_layers=2, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=128),
    "T5Config": dict(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2),
    "BertConfig": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
    "LongformerConfig": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                             max_position_embeddings=66, attention_window=8),
}
TINY_SHAPES = dict(batch_size=4, nugget_tokens=32, subencoder_tokens=24, distill_tokens=62, max_accumulation=2,
                   structural_dim=16, contextual_dim=24, heads=([16, 24, 16], [16]))

# Dense (no sparsity) bf16 = fp16 tensor-core peak, TFLOP/s, from NVIDIA's datasheets; matched in this
# order against torch.cuda.get_device_name().
PEAK_TFLOPS = (
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.5),
    ("H200 NVL", 835.5),
    ("H100", 989.5),  # H100 SXM5 ("NVIDIA H100 80GB HBM3")
    ("H200", 989.5),
    ("A100", 312.0),
)
ATTENTION_OPS = ("attention", "bmm", "baddbmm")  # FlopCounterMode op names counted as attention
COLUMNS = ["work", "architecture", "scale", "device", "precision", "parameters", "trainable_parameters",
           "micro_batch", "sequence_shape", "grad_accumulation", "tokens_per_step", "warmup_steps", "timed_steps",
           "seconds_per_step", "tokens_per_s", "peak_memory_mb", "memory_measure", "model_flops_per_step",
           "attention_flops_share", "achieved_tflops", "peak_tflops", "mfu", "mfu_note", "loss", "torch",
           "levers", "loss_vs_reference", "first_batch_eval_loss", "eval_loss_vs_reference", "graphs_compiled",
           "graph_breaks"]


class BenchmarkError(RuntimeError):
    """A request the benchmark cannot run (the message says what to change)."""


# -- configuration ---------------------------------------------------------------------------------
def merge(base: dict, override: dict) -> dict:
    """Snakemake's update_config: nested mappings merge, anything else replaces."""
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value
    return base


def paper_config() -> dict:
    """config/config.yaml overlaid with config/paper.yaml (what ``--configfile config/paper.yaml`` reads)."""
    import yaml

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    return merge(config, yaml.safe_load((REPO / "config" / "paper.yaml").read_text()))


def check_request(precision: str, device: str) -> None:
    """Mixed precision needs CUDA; say so before anything is built."""
    import torch

    if precision != "fp32" and not torch.cuda.is_available():
        raise BenchmarkError(f"--precision {precision} needs a CUDA GPU and none is visible (this benchmark "
                             "measures the paper's mixed-precision step on a GPU). Run on a GPU machine, or pass "
                             "--tiny (CPU, fp32) for the scaled-down check.")
    if device == "cuda" and not torch.cuda.is_available():
        raise BenchmarkError("--device cuda but no CUDA GPU is visible; use --tiny (CPU, fp32) or a GPU machine")


# -- synthetic data --------------------------------------------------------------------------------
COMMON_WORDS = ("the of and to in was for on is with as by at from his that it an are were which this be or "
                "its has had not but first new after one two their also who all have been other they more when "
                "time city year years most some school may only over him into can would later during about "
                "under between world part three made").split()


def single_token_words(tokenizer) -> list[str]:
    """Words the tokenizer maps to exactly one token: a text of n of them is n tokens long."""
    words = [w for w in COMMON_WORDS if len(tokenizer(w, add_special_tokens=False)["input_ids"]) == 1]
    if len(words) < 10:
        raise BenchmarkError("the tokenizer splits too many common words; cannot build fixed-length texts")
    return words


def text_of(words: list[str], n: int, rng: random.Random) -> str:
    return " ".join(rng.choice(words) for _ in range(n))


# -- model folders: random weights of the paper's architectures ---------------------------------------
def hf_config(class_name: str, sizes: dict, tokenizer, tiny: bool):
    import transformers

    sizes = {**sizes, **(TINY_SIZES[class_name] if tiny else {})}
    # The paper's vocabulary (its embedding and output layer are part of the cost); the ids come from MiniLM's
    # tokenizer, so the vocabulary is at least its size (tiny: exactly its size).
    sizes["vocab_size"] = len(tokenizer) if tiny else max(sizes["vocab_size"], len(tokenizer))
    specials = dict(pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.cls_token_id,
                    eos_token_id=tokenizer.sep_token_id)
    if class_name == "MBartConfig":
        specials["decoder_start_token_id"] = tokenizer.sep_token_id
    if class_name == "T5Config":
        specials = dict(pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id,
                        decoder_start_token_id=tokenizer.pad_token_id)
    return getattr(transformers, class_name)(**sizes, **specials)


def model_folder(folder: Path, model_class: str, config, tokenizer, seed: int) -> Path:
    """Random weights of ``config`` as a local checkpoint folder, with MiniLM's tokenizer (offline). The
    works load it through their own set-up, as they load a pretrained model."""
    import torch
    import transformers

    if (folder / "config.json").exists():  # written by an earlier variant of this work: the same weights
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    getattr(transformers, model_class)(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


# -- the works -------------------------------------------------------------------------------------
@dataclass
class WorkRun:
    """A work's task and training config, ready for the engine."""

    name: str
    architecture: str
    task: Any
    train: Any  # TrainConfig
    count_tokens: Callable[[Any], Any]  # tokens of one batch (every position a transformer stack reads)
    shape: Callable[[Any], str]  # the batch's shape, in words
    flop_rows: int | None = None  # count FLOPs on this many rows of a micro-batch (None: all of it)
    check_eval_loss: bool = False  # --variants: the first micro-batch's loss in eval mode, before the first step


def _train_config(section: dict, seed: int, steps: int, args, tiny: bool, **changes):
    from multivec.training.engine import TrainConfig

    fields = {k: v for k, v in section.items() if k in TrainConfig.__dataclass_fields__}
    accumulation = fields.get("grad_accumulation", 1)
    if tiny:
        fields["batch_size"] = min(fields.get("batch_size", 16), TINY_SHAPES["batch_size"])
        accumulation = min(accumulation, TINY_SHAPES["max_accumulation"])
    batch_size = fields.get("batch_size", 16)
    if args.micro_batch:  # the same documents per optimizer step, in fewer, larger micro-batches
        per_step = batch_size * accumulation
        micro = per_step if args.micro_batch == "step" else int(args.micro_batch)
        if micro < 1 or per_step % micro:
            raise BenchmarkError(f"--micro-batch {args.micro_batch}: a step of {per_step} documents "
                                 f"({batch_size} x {accumulation} accumulation) does not split into micro-batches "
                                 f"of {micro}")
        batch_size, accumulation = micro, per_step // micro
    fields.update(seed=seed, max_steps=steps, eval_every=steps, checkpoint_every=steps, warmup_steps=0,
                  batch_size=batch_size, grad_accumulation=accumulation, device=args.device,
                  precision=args.precision, fused_optimizer=args.fused_adamw, compile=args.compile,
                  threads=args.threads if args.threads else (1 if tiny else fields.get("threads")),
                  max_minutes=None, dev_batch_size=None, **changes)
    return TrainConfig(**fields)


def nugget_settings(config: dict) -> tuple[dict, dict]:
    """The first NUGGET row of ``table2.rows`` and the NuggetConfig fields the workflow trains it with: the
    zoo's (``nugget`` + ``nugget_analysis.model`` + ``.model_by_objective``; at paper scale mBART's tied
    output layer), not the ``nugget`` block alone."""
    from multivec.nugget import zoo

    row = next(r for r in config["table2"]["rows"] if r["kind"] == "nugget")
    nugget = config["nugget"]
    variant = zoo.nugget_variant(row["ratio"], nugget["scorer_layer"], nugget["selector"], nugget["feedback"])
    return row, zoo.model_settings(config, row["objective"], variant, config["seed"])


def nugget_work(config: dict, tokenizer, workdir: Path, args, steps: int) -> WorkRun:
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.training import NuggetTask

    tiny = args.tiny
    row, settings = nugget_settings(config)
    if settings["architecture"] != "mbart":
        raise BenchmarkError(f"nugget.architecture is {settings['architecture']!r} in the paper config; "
                             "this benchmark builds mBART-large-50")
    hf = hf_config("MBartConfig", MBART_LARGE_50, tokenizer, tiny)
    folder = model_folder(workdir / "mbart", "MBartForConditionalGeneration", hf, tokenizer, config["seed"])
    tokens = TINY_SHAPES["nugget_tokens"] if tiny else settings["max_source_tokens"]
    settings.update(encoder=str(folder), max_source_tokens=tokens)
    if tiny:
        settings["max_target_tokens"] = tokens
    model_config = NuggetConfig.from_dict(settings)
    train = _train_config(config["train"], config["seed"], steps, args, tiny)
    rng = random.Random(config["seed"])
    words = single_token_words(tokenizer)
    n_rows = train.batch_size * train.grad_accumulation * steps
    texts = [text_of(words, tokens - 2, rng) for _ in range(n_rows)]  # + [CLS], [SEP]: `tokens` tokens
    rows = [{"id": f"doc{i}", "source": t, "target": t} for i, t in enumerate(texts)]  # AE: target = source
    task = NuggetTask(model_config, train, rows, None)
    return WorkRun(
        "nugget", f"mBART-large-50 (NUGGET {row['objective'].upper()} r={row['ratio']}, frozen bottom "
                  f"l={settings['scorer_layer']})" if not tiny else "mBART (tiny)", task, train,
        count_tokens=lambda b: b[1].sum() + b[2].numel(),
        shape=lambda b: f"{b[0].shape[0]}x{b[0].shape[1]} source, {b[2].shape[0]}x{b[2].shape[1]} target")


def subencoder_work(config: dict, tokenizer, workdir: Path, args, steps: int) -> WorkRun:
    from multivec.subencoder.model import SubEncoderConfig
    from multivec.subencoder.training import DEFAULT_TEMPERATURE, SubEncoderTask

    tiny = args.tiny
    section = config["subencoder"]
    backbone = section["model"]["backbones"][0]
    if backbone["encoder"] not in SUBENCODER_ARCHITECTURES:
        raise BenchmarkError(f"no architecture listed for the sub-sentence encoder backbone {backbone['encoder']!r}; "
                             f"known: {', '.join(SUBENCODER_ARCHITECTURES)}")
    class_name, sizes = SUBENCODER_ARCHITECTURES[backbone["encoder"]]
    hf = hf_config(class_name, sizes, tokenizer, tiny)
    model_class = "T5EncoderModel" if class_name == "T5Config" else "BertModel"
    folder = model_folder(workdir / "subencoder_backbone", model_class, hf, tokenizer, config["seed"])
    tokens = TINY_SHAPES["subencoder_tokens"] if tiny else section["model"]["max_tokens"]
    model_config = SubEncoderConfig(encoder=str(folder), head="mlp", mlp_hidden=section["model"].get("mlp_hidden"),
                                    output_dim=section["model"].get("output_dim"), max_tokens=tokens)
    train_section = {k: v for k, v in section["train"].items() if k != "temperature"}
    train = _train_config({**train_section, "lr": backbone["lr"]}, config["seed"], steps, args, tiny)
    rng = random.Random(config["seed"])
    words = single_token_words(tokenizer)
    n_words, per_prop = tokens - 2, (tokens - 2) // PROPOSITIONS  # propositions of consecutive words
    rows = []
    for pair in range(train.batch_size * train.grad_accumulation * steps // 2):
        for side in range(2):  # the two sentences of a pair share their propositions' labels
            sentence = text_of(words, n_words, rng)
            word_spans = [m.span() for m in re.finditer(r"\S+", sentence)]
            spans = [(word_spans[j * per_prop][0], word_spans[(j + 1) * per_prop - 1][1])
                     for j in range(PROPOSITIONS)]
            rows.append({"id": f"s{pair}_{side}", "sentence": sentence, "pair_id": f"p{pair}",
                         "propositions": [{"text": sentence[a:b], "char_spans": [[a, b]], "label": j}
                                          for j, (a, b) in enumerate(spans)]})
    task = SubEncoderTask(model_config, train, rows, None, section["train"].get("temperature", DEFAULT_TEMPERATURE))
    name = backbone["encoder"].split("/")[-1]
    return WorkRun("subencoder", f"{name} encoder (SubEncoder, MLP head)" if not tiny else f"{name} (tiny)", task,
                   train, count_tokens=lambda b: b[1].sum(),
                   shape=lambda b: f"{b[0].shape[0]}x{b[0].shape[1]} sentences, {b[2].shape[0]} propositions")


def distill_work(config: dict, tokenizer, workdir: Path, args, steps: int) -> WorkRun:
    import numpy as np

    from multivec.distill.configuration import LossConfig, StudentConfig
    from multivec.distill.training import DistillTask

    tiny = args.tiny
    section = config["distill"]
    student = {k: v for k, v in section["student"].items() if k != "embed_batch_size"}
    if student["backbone"] not in STUDENT_ARCHITECTURES:
        raise BenchmarkError(f"no architecture listed for the student {student['backbone']!r}; known: "
                             f"{', '.join(STUDENT_ARCHITECTURES)}")
    class_name, sizes = STUDENT_ARCHITECTURES[student["backbone"]]
    hf = hf_config(class_name, sizes, tokenizer, tiny)
    folder = model_folder(workdir / "student_backbone", "LongformerModel", hf, tokenizer, config["seed"])
    tokens = TINY_SHAPES["distill_tokens"] if tiny else student["max_tokens"]
    student.update(backbone=str(folder), max_tokens=tokens, seed=config["seed"])
    teacher = section["contextual_teacher"]["teacher"]
    variant = next(v for v in section["contextual_teacher"]["variants"] if v["name"] == teacher)
    structural_dim, contextual_dim = STRUCTURAL_TEACHER_DIM, sum(p["vector_size"] for p in variant["parts"])
    if tiny:
        structural_dim, contextual_dim = TINY_SHAPES["structural_dim"], TINY_SHAPES["contextual_dim"]
        student["contextual_head"], student["teacher_head"] = TINY_SHAPES["heads"]
    loss = LossConfig.from_dict({**section["loss"], "mask_tokenizer": str(folder)})
    train = _train_config(section["train"], config["seed"], steps, args, tiny)
    rng = random.Random(config["seed"])
    words = single_token_words(tokenizer)
    n_docs = train.batch_size * train.grad_accumulation * steps
    documents = [{"id": f"doc{i}", "text": text_of(words, tokens, rng)} for i in range(n_docs)]
    vectors = np.random.default_rng(config["seed"])
    task = DistillTask(StudentConfig.from_dict(student), loss, train, documents,
                       vectors.standard_normal((n_docs, structural_dim)).astype(np.float32),
                       vectors.standard_normal((n_docs, contextual_dim)).astype(np.float32))
    return WorkRun("distill", f"Longformer-base-4096 student ({loss.structural} + {loss.contextual}, gradient "
                   f"checkpointing {'on' if student.get('gradient_checkpointing') else 'off'})" if not tiny
                   else "Longformer (tiny)", task, train,
                   count_tokens=lambda b: b[0].attention_mask.sum(),
                   shape=lambda b: f"{b[0].input_ids.shape[0]}x{b[0].input_ids.shape[1]} documents", flop_rows=2)


BUILDERS = {"nugget": nugget_work, "subencoder": subencoder_work, "distill": distill_work}


# -- measuring ---------------------------------------------------------------------------------------
def _synchronize() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def _timed_task_class():
    from multivec.training.engine import TrainingTask

    class TimedTask(TrainingTask):
        """The work's task, passed through unchanged to the engine; records when each step's first micro-batch
        is built, the tokens and losses of every micro-batch, and (through an optimizer hook) when the
        optimizer step ends."""

        def __init__(self, inner, run: WorkRun):
            self.inner, self.run = inner, run
            self.name, self.dev_metrics = inner.name, inner.dev_metrics
            self.selection_metric, self.selection_mode = inner.selection_metric, inner.selection_mode
            self.throughput_unit = inner.throughput_unit
            self.find_unused_parameters = inner.find_unused_parameters
            self.calls, self.starts, self.ends, self.tokens, self.losses, self.shapes = 0, [], [], [], [], []
            self.first_eval_loss = None  # the first micro-batch's loss in eval mode (no dropout), before any step

        @property
        def loss_terms(self):  # the parts of the loss the wrapped task reports (metrics.csv columns)
            return self.inner.loss_terms

        def setup(self, out_dir, runtime, resuming):
            self.runtime = runtime
            self.inner.setup(out_dir, runtime, resuming)
            self.model = self.inner.model
            self.find_unused_parameters = self.inner.find_unused_parameters

        def run_config(self):
            return self.inner.run_config()

        def epoch_batches(self, epoch):
            return self.inner.epoch_batches(epoch)

        def make_batch(self, spec, generator):
            if self.calls % self.run.train.grad_accumulation == 0:  # a new optimizer step begins
                _synchronize()
                self.starts.append(time.perf_counter())
                self.tokens.append([])
                self.losses.append([])
            self.calls += 1
            batch = self.inner.make_batch(spec, generator)
            if self.first_eval_loss is None and self.run.check_eval_loss:
                self.first_eval_loss = self._eval_loss(batch)
                _synchronize()
                self.starts[-1] = time.perf_counter()  # the check is not part of the step
            self.tokens[-1].append(self.run.count_tokens(batch))  # a tensor: read after the run, no sync here
            self.shapes.append(self.run.shape(batch))
            return batch

        def _eval_loss(self, batch) -> float:
            """The loss of ``batch`` without dropout and without a step: what the levers' kernels compute on the
            same weights (a compiled model draws its dropout masks from its own generator, so training losses
            under compile differ from eager ones by the dropout noise; this does not)."""
            import torch

            self.model.eval()
            try:
                with torch.no_grad(), self.runtime.autocast():
                    return float(self.inner.loss(self.model, batch)[0])
            finally:
                self.model.train()

        def loss(self, module, batch):
            value, *rest = self.inner.loss(module, batch)  # (loss, count) or (loss, count, terms)
            self.losses[-1].append(value.detach())  # read after the run: no extra sync inside the step
            return (value, *rest)

        def step_ended(self, *_):
            _synchronize()
            self.ends.append(time.perf_counter())

        def evaluate(self, runtime):
            return self.inner.evaluate(runtime)

        def parameter_groups(self, cfg):
            return self.inner.parameter_groups(cfg)

        def save_weights(self, path):
            self.inner.save_weights(path)

        def load_weights(self, path):
            self.inner.load_weights(path)

        def save_metadata(self, out_dir, run_config):
            self.inner.save_metadata(out_dir, run_config)

    return TimedTask


def _cpu_sdpa_mapping() -> dict:
    """FlopCounterMode knows the CUDA attention kernels; CPU's flash kernel gets the same formula here."""
    import torch
    from torch.utils import flop_counter

    mapping = {}
    forward = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    backward = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu_backward", None)
    if forward is not None:
        mapping[forward] = lambda q, k, v, *a, out_shape=None, **kw: flop_counter.sdpa_flop_count(q, k, v)
    if backward is not None:
        mapping[backward] = (lambda g, q, k, v, *a, out_shape=None, **kw:
                             flop_counter.sdpa_backward_flop_count(g, q, k, v))
    return mapping


def count_flops(task, run: WorkRun, runtime) -> tuple[float, float]:
    """(model FLOPs of one optimizer step, attention share): one micro-batch's forward + backward through the
    task's loss under the run's autocast, without activation recomputation, times the accumulation steps."""
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import PreTrainedModel

    from multivec.training.engine import seeded_generator

    model = task.model
    # transformers 5 renamed gradient checkpointing to activation checkpointing; either name works here.
    renamed = hasattr(PreTrainedModel, "activation_checkpointing_enable")
    enabled = "is_activation_checkpointing" if renamed else "is_gradient_checkpointing"
    checkpointed = [m for m in model.modules() if isinstance(m, PreTrainedModel) and getattr(m, enabled, False)]
    for module in checkpointed:
        (module.activation_checkpointing_disable if renamed else module.gradient_checkpointing_disable)()
    cache = getattr(task, "train_cache", None)
    if cache is not None:  # NUGGET: count the frozen bottom as computed (the timed steps missed the cache too)
        task.train_cache = type(cache)()
    try:
        spec = task.epoch_batches(0)[0]
        rows = spec if run.flop_rows is None else spec[:run.flop_rows]
        batch = task.make_batch(rows, seeded_generator(0, "flops"))
        counter = FlopCounterMode(display=False, custom_mapping=_cpu_sdpa_mapping())
        with counter:
            with runtime.autocast():
                loss = task.loss(model, batch)[0]  # (loss, count[, terms])
            loss.backward()
        model.zero_grad(set_to_none=True)
    finally:
        if cache is not None:
            task.train_cache = cache
        for module in checkpointed:  # as the task switched it on: the library's defaults
            (module.activation_checkpointing_enable if renamed else module.gradient_checkpointing_enable)()
    per_op = {str(op): int(n) for op, n in counter.get_flop_counts().get("Global", {}).items()}
    total = sum(per_op.values())
    attention = sum(n for op, n in per_op.items() if any(key in op for key in ATTENTION_OPS))
    scale = len(spec) / len(rows) * run.train.grad_accumulation
    return total * scale, (attention / total if total else float("nan"))


def peak_tflops(device_name: str, precision: str, override: float | None) -> tuple[float | None, str]:
    """The device's dense peak for ``precision`` and a note; None when there is no honest number."""
    if override:
        return override, "peak from --peak-tflops"
    if not device_name.startswith("cuda"):
        return None, "CPU: no peak FLOP/s is assumed (MFU needs the device's datasheet peak)"
    if precision == "fp32":
        return None, "fp32: PEAK_TFLOPS lists the bf16/fp16 tensor-core peak only"
    name = device_name.split(":", 1)[1].strip()
    for key, value in PEAK_TFLOPS:
        if key in name:
            return value, f"dense bf16/fp16 datasheet peak of {key}"
    return None, f"no datasheet peak listed for {name}; pass --peak-tflops"


def _reset_peak_memory(device) -> None:
    import gc

    import torch

    gc.collect()  # the previous work's model and optimizer
    if device.type == "cuda":
        torch.zeros(1, device=device)  # the caching allocator exists only after a first allocation: before it,
        torch.cuda.empty_cache()  # resetting its statistics raises "Invalid device argument"
        torch.cuda.reset_peak_memory_stats(device.index)  # None = the current device ('cuda' has no index)
        return
    try:  # Linux: writing 5 to clear_refs resets the peak RSS (VmHWM) of this process
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _peak_memory(device) -> tuple[float, str]:
    import torch

    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device.index) / 2**20, "torch.cuda.max_memory_allocated"
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024, "process peak RSS (VmHWM, reset before the work)"
    except OSError:
        pass
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "process peak RSS since start (ru_maxrss; cumulative over works)")


def device_label(device) -> str:
    import torch

    if device.type == "cuda":
        return f"cuda: {torch.cuda.get_device_name(device)}"
    name = platform.processor() or platform.machine()
    try:
        name = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"cpu: {name}, {torch.get_num_threads()} thread(s)"


def levers_label(args) -> str:
    """The row's levers in words: precision, then each lever on."""
    parts = [args.precision, "compile" if args.compile else "eager"]
    if args.fused_adamw:
        parts.append("fused AdamW")
    if args.micro_batch:
        parts.append("whole step in one micro-batch" if args.micro_batch == "step" else f"micro-batch {args.micro_batch}")
    return ", ".join(parts)


def variant_arguments(args) -> list:
    """``--variants``: the argument sets run side by side on each work (module doc), reference first."""
    base = dict(compile=False, fused_adamw=False, micro_batch=None)
    settings = [dict(base, precision="fp32"), dict(base, precision=args.precision),
                dict(base, precision=args.precision, fused_adamw=True),
                dict(base, precision=args.precision, fused_adamw=True, compile=True),
                dict(base, precision=args.precision, fused_adamw=True, compile=True, micro_batch="step")]
    if args.precision == "fp32":  # --tiny: the reference and the eager row are one row
        settings = settings[1:]
    variants = []
    for changes in settings:
        variant = copy.copy(args)
        for key, value in changes.items():
            setattr(variant, key, value)
        variants.append(variant)
    return variants


def _shown(value) -> str:
    return "-" if value == "" else f"{value:.3g}"


def relative_loss_difference(losses: list[float], reference: list[float]) -> float:
    """max over the steps both ran of |loss - reference| / |reference|."""
    pairs = list(zip(losses, reference))
    return max(abs(a - b) / max(abs(b), 1e-12) for a, b in pairs) if pairs else float("nan")


def run_work(name: str, config: dict, tokenizer, workdir: Path, args, run_dir: Path | None = None,
             flops: tuple[float, float] | None = None) -> dict:
    """Build one work at its (paper or tiny) shape, train warm-up + timed steps through the engine, measure.
    ``flops``: the work's (FLOPs per step, attention share) counted by an earlier row of the same documents
    per step (the levers change the kernels, not the model FLOPs); None counts them here (eagerly)."""
    import torch
    from torch._dynamo.utils import counters
    from torch.optim.optimizer import register_optimizer_step_post_hook

    from multivec.training.distributed import resolve_device
    from multivec.training.engine import Trainer

    if flops is None and args.compile:
        raise BenchmarkError("--compile: model FLOPs are counted on an eager run (FlopCounterMode does not see "
                             "inside compiled graphs); use --variants, whose eager rows count them")
    steps = args.warmup_steps + args.steps
    device = resolve_device(args.device)
    run = BUILDERS[name](config, tokenizer, workdir, args, steps)  # writes the random model folder
    run.check_eval_loss = bool(getattr(args, "variants", False))
    _reset_peak_memory(device)  # the peak covers the task's set-up (loading the folder) and the steps
    timed = _timed_task_class()(run.task, run)
    counters.clear()  # dynamo's: graphs compiled and graph breaks of this row
    hook = register_optimizer_step_post_hook(timed.step_ended)
    try:
        trainer = Trainer(timed, run.train, run_dir or workdir / f"{name}_run")
        trainer.fit()
    finally:
        hook.remove()
    peak_mb, memory_measure = _peak_memory(trainer.runtime.device)
    compiled_graphs = int(counters["stats"]["unique_graphs"])
    graph_breaks = int(sum(counters["graph_break"].values()))
    if len(timed.ends) != steps or len(timed.starts) != steps:
        raise BenchmarkError(f"{name}: {len(timed.ends)} optimizer steps ended for {steps} started (an fp16 step "
                             "skipped for inf/NaN gradients?)")
    seconds = [end - start for start, end in zip(timed.starts[args.warmup_steps:], timed.ends[args.warmup_steps:])]
    tokens = [sum(int(n) for n in step) for step in timed.tokens[args.warmup_steps:]]
    per_step = sum(seconds) / len(seconds)
    flops, attention_share = flops or count_flops(run.task, run, trainer.runtime)
    label = device_label(trainer.runtime.device)
    peak, note = peak_tflops(label, run.train.precision, args.peak_tflops)
    achieved = flops / per_step / 1e12
    model = run.task.model
    last_losses = [float(value) for value in timed.losses[-1]]
    step_losses = [sum(float(v) for v in step) / len(step) for step in timed.losses]
    return {
        "work": name, "architecture": run.architecture, "scale": "tiny" if args.tiny else "paper", "device": label,
        "precision": run.train.precision, "parameters": sum(p.numel() for p in model.parameters()),
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "micro_batch": run.train.batch_size, "sequence_shape": timed.shapes[0],
        "grad_accumulation": run.train.grad_accumulation, "tokens_per_step": round(sum(tokens) / len(tokens)),
        "warmup_steps": args.warmup_steps, "timed_steps": args.steps, "seconds_per_step": per_step,
        "tokens_per_s": sum(tokens) / sum(seconds), "peak_memory_mb": peak_mb, "memory_measure": memory_measure,
        "model_flops_per_step": flops, "attention_flops_share": attention_share, "achieved_tflops": achieved,
        "peak_tflops": peak if peak else "", "mfu": achieved / peak if peak else "",
        "mfu_note": note, "loss": sum(last_losses) / len(last_losses), "torch": torch.__version__,
        "levers": levers_label(args), "loss_vs_reference": "",
        "first_batch_eval_loss": timed.first_eval_loss if timed.first_eval_loss is not None else "",
        "eval_loss_vs_reference": "", "graphs_compiled": compiled_graphs, "graph_breaks": graph_breaks,
        "_step_losses": step_losses, "_flops": (flops, attention_share),
    }


# -- output --------------------------------------------------------------------------------------------
def write_csv(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.5g}" if isinstance(v, float) and math.isfinite(v) else v)
                             for k, v in row.items() if not k.startswith("_")})


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    one_setting = len({r["levers"] for r in rows}) == 1
    names = [r["work"] if one_setting else f"{r['work']}: {r['levers']}" for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8) if one_setting else (13, 1.2 + 0.45 * len(rows)),
                                      sharey=not one_setting)  # one set of long row labels, on the left
    bars = left.barh(names, [r["tokens_per_s"] for r in rows], color="tab:blue")
    for bar, row in zip(bars, rows):
        mfu = f", MFU {row['mfu']:.1%}" if row["mfu"] != "" else ""
        left.annotate(f" {row['tokens_per_s']:,.0f}{mfu}", (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                      va="center", fontsize=8)
    left.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v / 1000:g}k"))
    left.set_xlabel("tokens / s (one optimizer step, accumulation included)")
    left.margins(x=0.35)
    bars = right.barh(names, [r["peak_memory_mb"] / 1024 for r in rows], color="tab:orange")
    for bar, row in zip(bars, rows):
        right.annotate(f" {row['peak_memory_mb'] / 1024:.1f}", (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                       va="center", fontsize=8)
    right.set_xlabel(f"peak memory, GiB ({rows[0]['memory_measure'].split(' (')[0]})")
    right.margins(x=0.25)
    precision = rows[0]["precision"] if one_setting else "levers side by side"
    fig.suptitle(f"{rows[0]['scale']} shapes, {precision}, {rows[0]['device']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="every shape scaled down; CPU, fp32 (about 10 s)")
    parser.add_argument("--works", nargs="+", choices=WORKS, default=list(WORKS))
    parser.add_argument("--precision", choices=("fp32", "bf16", "fp16"), default=None,
                        help="default: bf16 (paper shapes), fp32 (--tiny)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None,
                        help="default: cuda (paper shapes), cpu (--tiny)")
    parser.add_argument("--warmup-steps", type=int, default=1, help="untimed optimizer steps first")
    parser.add_argument("--steps", type=int, default=None, help="timed optimizer steps (default 2; 1 with --tiny)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: the config's; 1 --tiny)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the device's dense peak for MFU")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output stem (default {OUT.relative_to(REPO)}; ..._tiny with --tiny)")
    parser.add_argument("--tokenizer", default="minilm",
                        help="tokenizer whose ids the texts use (a folder, or 'minilm': the offline MiniLM package); "
                             "only its files are read, so a GPU machine without that package can take a copy")
    parser.add_argument("--keep", action="store_true", help="keep the model folders and checkpoints (temp dir)")
    parser.add_argument("--fused-adamw", action="store_true", help="train.fused_optimizer: AdamW's fused kernel")
    parser.add_argument("--compile", action="store_true", help="train.compile: torch.compile each repeated block")
    parser.add_argument("--micro-batch", default=None,
                        help="documents per micro-batch, the step's documents unchanged (accumulation adjusts); "
                             "'step': the whole step in one micro-batch")
    parser.add_argument("--variants", action="store_true",
                        help="run the levers side by side on each work (module doc); the flags above are ignored")
    parser.add_argument("--budget-seconds", type=float, default=None,
                        help="start no new row after this many seconds (the rows done are written)")
    args = parser.parse_args(argv)
    args.precision = args.precision or ("fp32" if args.tiny else "bf16")
    args.device = args.device or ("cpu" if args.tiny else "cuda")
    args.steps = args.steps or (1 if args.tiny else 2)
    args.out = args.out or (OUT.with_name(OUT.name + "_tiny") if args.tiny else OUT)
    if args.warmup_steps < 0 or args.steps < 1:
        parser.error("--warmup-steps must be >= 0 and --steps >= 1")
    if args.micro_batch not in (None, "step") and not args.micro_batch.isdigit():
        parser.error("--micro-batch takes a number of documents or 'step'")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        check_request(args.precision, args.device)
    except BenchmarkError as error:
        print(f"paper_shape_step: {error}", file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from multivec.io.resources import load_tokenizer

    config = copy.deepcopy(paper_config())
    tokenizer = load_tokenizer(args.tokenizer)
    rows = []
    csv_path, png_path = args.out.with_suffix(".csv"), args.out.with_suffix(".png")
    workdir = Path(tempfile.mkdtemp(prefix="paper_shape_step_"))
    began = time.perf_counter()
    try:
        for name in args.works:
            # (micro-batch, accumulation) -> the first such row's (per-step losses, eval-mode first-batch loss)
            references: dict[tuple[int, int], tuple[list[float], float]] = {}
            flops = None
            for index, variant in enumerate(variant_arguments(args) if args.variants else [args]):
                if args.budget_seconds is not None and time.perf_counter() - began > args.budget_seconds:
                    print(f"{name}: {levers_label(variant)} not run: past --budget-seconds "
                          f"{args.budget_seconds:g}", flush=True)
                    continue
                started = time.perf_counter()
                row = run_work(name, config, tokenizer, workdir / name, variant, workdir / name / f"run{index}",
                               flops)
                shutil.rmtree(workdir / name / f"run{index}", ignore_errors=True)  # its checkpoint
                flops = row["_flops"]
                key = (row["micro_batch"], row["grad_accumulation"])
                if key in references:
                    losses, eval_loss = references[key]
                    row["loss_vs_reference"] = relative_loss_difference(row["_step_losses"], losses)
                    row["eval_loss_vs_reference"] = relative_loss_difference([row["first_batch_eval_loss"]],
                                                                             [eval_loss])
                else:
                    references[key] = (row["_step_losses"], row["first_batch_eval_loss"])
                rows.append(row)
                write_csv(rows, csv_path)  # after every row: a stopped run keeps what it measured
                print(f"{name} [{row['levers']}]: {row['tokens_per_s']:,.0f} tokens/s, {row['seconds_per_step']:.3g} "
                      f"s/step, peak {row['peak_memory_mb']:,.0f} MB, loss {row['loss']:.4g}, MFU {_shown(row['mfu'])}"
                      f", loss vs reference {_shown(row['loss_vs_reference'])} (eval mode, first micro-batch: "
                      f"{_shown(row['eval_loss_vs_reference'])}), {row['graphs_compiled']} graphs compiled, "
                      f"{row['graph_breaks']} graph breaks ({time.perf_counter() - started:.1f} s in all)", flush=True)
            if not args.keep:
                shutil.rmtree(workdir / name, ignore_errors=True)
    except BenchmarkError as error:
        print(f"paper_shape_step: {error}", file=sys.stderr)
        return 2
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"kept {workdir}")
    if not rows:
        print("paper_shape_step: no row ran inside --budget-seconds", file=sys.stderr)
        return 2
    plot(rows, png_path)
    print(f"wrote {csv_path} and {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
