"""No artifact a rule reads can execute code when loaded.

For every loader type of the project, ``LOADERS`` builds a small valid artifact with the project's own writer,
checks the project's loader reads it, then plants a pickle whose ``__reduce__`` would create a marker file
(``builtins.open``; no shell command) in place of one file, calls the loader again, and asserts that it
raises a clear error (naming the file where the project words the message) and that the marker does not
exist. A new loader type is one more ``Loader`` in ``LOADERS``; ``test_no_unsafe_loading_call_in_the_code``
fails for a new pickle-based call anywhere in ``src/`` or ``workflow/scripts/``.
"""

from __future__ import annotations

import json
import pickle
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


class _Planted:
    """Unpickling this creates ``marker`` (an unsafe loader would run it)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def plant_pickle(path: Path, marker: Path) -> None:
    """``path`` becomes a plain pickle (gensim ``.model``, a file renamed ``.safetensors``/``.json``)."""
    path.unlink(missing_ok=True)
    with open(path, "wb") as handle:
        pickle.dump({"weights": _Planted(marker)}, handle)


def plant_torch(path: Path, marker: Path) -> None:
    """``path`` becomes a ``torch.save`` pickle (``.pt``, ``pytorch_model.bin``)."""
    path.unlink(missing_ok=True)
    torch.save({"state": _Planted(marker)}, path)


# ---------------------------------------------------------------- builders: a small valid artifact each

def _pv_folder(out: Path) -> Path:
    from multivec.distill.teachers.paragraph_vector import PVVariant, save_models, train_part

    texts = [f"the cat {i % 7} sat on the mat of house {i % 5} ." for i in range(24)]
    variant = PVVariant.from_config({"name": "v", "parts": [
        {"architecture": "dm", "vector_size": 4, "min_count": 1, "preprocessing": "lowercase"}]}, epochs=1, seed=1)
    save_models(out, variant, [train_part(variant.parts[0], texts, 1, 1)])
    return out


def _checkpoint_file(name: str) -> Callable[[Path], Path]:
    def build(out: Path) -> Path:
        from multivec.training.checkpoint import rng_state

        out.mkdir(parents=True)
        torch.save(rng_state() if name == "rng.pt" else {"optimizer": {"state": {}}, "step": 3}, out / name)
        return out / name
    return build


def _nugget(out: Path) -> Path:
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.modeling import NuggetModel

    config = NuggetConfig(encoder="tiny-random-bert", ratio=0.25, scorer_layer=2, decoder_heads=2, decoder_ffn=64,
                          target_tokenizer="source", max_source_tokens=16, max_target_tokens=16)
    NuggetModel.from_backbone(config).save_pretrained(out)
    return out


def _subencoder(out: Path) -> Path:
    from multivec.subencoder.model import SubEncoder, SubEncoderConfig

    SubEncoder.from_backbone(SubEncoderConfig(encoder="tiny-random-bert", output_dim=8)).save_pretrained(out)
    return out


def _segmenter(out: Path) -> Path:
    """A tiny T5 in the layout the segmenter training writes (config, tokenizer, model.safetensors)."""
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    from multivec.io.resources import minilm_path

    torch.manual_seed(0)
    config = T5Config(vocab_size=30522, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_heads=2,
                      decoder_start_token_id=0, pad_token_id=0, eos_token_id=102)
    T5ForConditionalGeneration(config).save_pretrained(out)
    AutoTokenizer.from_pretrained(minilm_path()).save_pretrained(out)
    return out


def _student(out: Path) -> Path:
    from safetensors.torch import save_file

    from multivec.distill.configuration import LossConfig, StudentConfig
    from multivec.distill.training import CONFIG_FILE, DistillModel
    from multivec.io import write_json

    student, loss = StudentConfig(backbone="tiny-random-bert", max_tokens=16, chunk_tokens=8, contextual_head=[4],
                                  teacher_head=[4]), LossConfig()
    model = DistillModel(student, loss, 8, 4)
    out.mkdir(parents=True)
    write_json(out / CONFIG_FILE, {"model": {"student": student.to_dict(), "loss": loss.to_dict()},
                                   "derived": {"structural_dim": 8, "contextual_dim": 4}})
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(out / "model.safetensors"))
    return out


def _structural_teacher(out: Path) -> Path:
    """MiniLM's sentence-transformers folder (the weights linked, not copied)."""
    from multivec.io.resources import minilm_path

    source = Path(minilm_path())
    shutil.copytree(source, out, ignore=shutil.ignore_patterns("model.safetensors"))
    (out / "model.safetensors").symlink_to(source / "model.safetensors")
    return out


def _distill_embeddings(out: Path) -> Path:
    from multivec.distill.embeddings import write_embeddings

    return Path(write_embeddings(out, ["d0", "d1"], np.ones((2, 3), np.float32), {"model": "m"}))


def _encodings(out: Path) -> Path:
    from multivec.encodings import write_encodings

    write_encodings(out, ["d0", "d1"], [np.ones((2, 3)), np.ones((1, 3))])
    return out


def _frozen_bottom(out: Path) -> Path:
    from safetensors.torch import save_file

    from multivec.io import write_json
    from multivec.nugget.frozen_bottom import INFO_FILE, STATES_FILE

    out.mkdir(parents=True)
    save_file({"states": torch.zeros(3, 4), "offsets": torch.tensor([0, 2, 3])}, str(out / STATES_FILE))
    write_json(out / INFO_FILE, {"documents": 2})
    return out


def _probability_gains(out: Path) -> Path:
    from safetensors.numpy import save_file

    out.mkdir(parents=True)
    path = out / "gains.safetensors"
    save_file({"gains": np.zeros((2, 3, 5), np.float32), "positions": np.zeros((2, 3), np.int64),
               "source_indices": np.zeros((2, 3), np.int64), "target_ids": np.zeros((2, 5), np.int64)},
              str(path), metadata={"length": "5", "doc_ids": json.dumps(["a", "b"])})
    return path


def _unit_scores(out: Path) -> Path:
    from multivec.statistics import Measurement, write_units

    out.mkdir(parents=True)
    write_units(out / "units.parquet", [Measurement("r", "PI", "mean", ["q0", "q1"], [50.0, 100.0])])
    return out / "units.parquet"


def _target_tokenizer(out: Path) -> Path:
    from multivec.nugget.target_tokenizer import TargetTokenizer

    TargetTokenizer.train_bpe(["a small corpus of words .", "words and more words ."] * 5, 60).save(out)
    return out


# ---------------------------------------------------------------- loaders: the project's own readers

def _load_pv(path):
    from multivec.distill.teachers.paragraph_vector import load_models

    return load_models(path)


def _load_checkpoint_file(path):
    from multivec.training.checkpoint import safe_load

    return safe_load(path, map_location="cpu")


def _load_rng(path):
    from multivec.training.checkpoint import safe_load, set_rng_state

    state = torch.get_rng_state()
    try:
        set_rng_state(safe_load(path, map_location="cpu"))
    finally:
        torch.set_rng_state(state)


def _load_nugget(path):
    from multivec.nugget.modeling import NuggetModel

    return NuggetModel.from_pretrained(path)


def _load_subencoder(path):
    from multivec.subencoder.model import SubEncoder

    return SubEncoder.load(path)


def _load_segmenter(path):
    from multivec.subencoder.data.segmentation import Seq2SeqSegmenter

    return Seq2SeqSegmenter(str(path), max_new_tokens=2).segment(["A dog barks."])


def _load_student(path):
    from multivec.distill.training import load_trained

    return load_trained(path)


def _load_structural_teacher(path):
    from multivec.distill.teachers.sbert import load_teacher

    return load_teacher(str(path))


def _load_distill_embeddings(path):
    from multivec.distill.embeddings import read_embeddings

    return read_embeddings(path)


def _load_encodings(path):
    from multivec.encodings import read_encodings

    return read_encodings(path)


def _load_frozen_bottom(path):
    from multivec.nugget.frozen_bottom import read_bottom_states

    return read_bottom_states(path)


def _load_gains(path):
    from multivec.nugget.analysis.gain_tables import load_gains

    return load_gains(path)


def _load_units(path):
    from multivec.statistics import read_units

    return read_units(path)


def _load_target_tokenizer(path):
    from multivec.nugget.target_tokenizer import TargetTokenizer

    return TargetTokenizer.load(path)


@dataclass(frozen=True)
class Loader:
    """One loader type: ``build(dir)`` writes a valid artifact and returns the path ``load`` takes; ``planted``
    (relative to that path; "" = the path itself) is replaced by a pickle (``torch_format``: ``torch.save``),
    after removing ``remove``; ``load`` must then raise ``error`` matching ``match`` (and naming the file)."""

    name: str
    build: Callable[[Path], Path]
    load: Callable[[Path], Any]
    planted: str
    error: type | tuple[type, ...]
    match: str
    remove: tuple[str, ...] = ()
    torch_format: bool = False


SAFETENSORS_ERROR = "not a readable safetensors file"
LOADERS = (
    # Paragraph Vector (models/paragraph_vector/<variant>): the old gensim pickle is refused unread
    Loader("pv gensim pickle instead of the safe files", _pv_folder, _load_pv, "part0.model",
           ValueError, r"part0\.model: refused to load: a gensim pickle",
           remove=("part0.safetensors", "part0.json")),
    Loader("pv gensim pickle beside the safe files", _pv_folder, _load_pv, "part0.model",
           ValueError, r"part0\.model: refused to load"),
    Loader("pv arrays", _pv_folder, _load_pv, "part0.safetensors", ValueError,
           rf"part0\.safetensors: {SAFETENSORS_ERROR}"),
    Loader("pv vocabulary and hyper-parameters", _pv_folder, _load_pv, "part0.json", ValueError, r"part0\.json"),
    Loader("pv variant.json", _pv_folder, _load_pv, "variant.json", ValueError, r"variant\.json"),
    # training checkpoints (<out>/checkpoint/step_*/): optimizer and RNG state
    Loader("checkpoint optimizer.pt", _checkpoint_file("optimizer.pt"), _load_checkpoint_file, "", RuntimeError,
           r"optimizer\.pt: refused to load", torch_format=True),
    Loader("checkpoint RNG state rng.pt", _checkpoint_file("rng.pt"), _load_rng, "", RuntimeError,
           r"rng\.pt: refused to load", torch_format=True),
    # Hugging Face-format model folders the DAG writes
    Loader("NUGGET model weights", _nugget, _load_nugget, "model.safetensors", ValueError,
           rf"model\.safetensors: {SAFETENSORS_ERROR}"),
    Loader("NUGGET model with only a pytorch_model.bin", _nugget, _load_nugget, "pytorch_model.bin",
           FileNotFoundError, r"model\.safetensors: missing", remove=("model.safetensors",), torch_format=True),
    Loader("SubEncoder weights", _subencoder, _load_subencoder, "model.safetensors", ValueError,
           rf"model\.safetensors: {SAFETENSORS_ERROR}"),
    Loader("SubEncoder with only a pytorch_model.bin", _subencoder, _load_subencoder, "pytorch_model.bin",
           FileNotFoundError, r"model\.safetensors is missing", remove=("model.safetensors",), torch_format=True),
    Loader("segmenter weights", _segmenter, _load_segmenter, "model.safetensors", ValueError,
           rf"model\.safetensors: {SAFETENSORS_ERROR}"),
    Loader("segmenter with only a pytorch_model.bin", _segmenter, _load_segmenter, "pytorch_model.bin",
           FileNotFoundError, r"model\.safetensors: missing", remove=("model.safetensors",), torch_format=True),
    Loader("distillation student weights", _student, _load_student, "model.safetensors", ValueError,
           rf"model\.safetensors: {SAFETENSORS_ERROR}"),
    Loader("structural teacher weights", _structural_teacher, _load_structural_teacher, "model.safetensors",
           ValueError, rf"model\.safetensors: {SAFETENSORS_ERROR}"),
    Loader("structural teacher with only a pytorch_model.bin", _structural_teacher, _load_structural_teacher,
           "pytorch_model.bin", OSError, r"no file named model\.safetensors", remove=("model.safetensors",),
           torch_format=True),
    Loader("NUGGET target tokenizer", _target_tokenizer, _load_target_tokenizer, "tokenizer.json", ValueError,
           r"tokenizer\.json: not a readable tokenizer file"),
    # vectors, states and scores between rules
    Loader("distillation embeddings", _distill_embeddings, _load_distill_embeddings, "embeddings.safetensors",
           ValueError, rf"embeddings\.safetensors: {SAFETENSORS_ERROR}"),
    Loader("encodings", _encodings, _load_encodings, "vectors.safetensors", ValueError,
           rf"vectors\.safetensors: {SAFETENSORS_ERROR}"),
    Loader("frozen-bottom states", _frozen_bottom, _load_frozen_bottom, "states.safetensors", ValueError,
           rf"states\.safetensors: {SAFETENSORS_ERROR}"),
    Loader("probability gains", _probability_gains, _load_gains, "", ValueError, SAFETENSORS_ERROR),
    Loader("unit scores (parquet)", _unit_scores, _load_units, "", Exception, r"Parquet magic bytes not found"),
    # .npy / .npz: the project reads none (test_no_unsafe_loading_call_in_the_code holds np.load to
    # allow_pickle=False should one appear).
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One valid artifact per builder, built once; each test gets a copy of it."""
    cache: dict[Callable, tuple[Path, Path]] = {}

    def get(build: Callable[[Path], Path], into: Path) -> Path:
        if build not in cache:
            root = tmp_path_factory.mktemp("built")
            cache[build] = root, build(root / "artifact")
        root, path = cache[build]
        shutil.copytree(root, into / "copy", symlinks=True)
        return into / "copy" / path.relative_to(root)
    return get


@pytest.mark.parametrize("loader", LOADERS, ids=lambda entry: entry.name)
def test_a_planted_pickle_is_refused_without_running(loader, built, tmp_path):
    path = built(loader.build, tmp_path)
    loader.load(path)  # the intact artifact loads: the error below is the plant's
    for name in loader.remove:
        (path / name).unlink()
    target = path / loader.planted if loader.planted else path
    marker = tmp_path / "code_ran"
    (plant_torch if loader.torch_format else plant_pickle)(target, marker)
    with pytest.raises(loader.error, match=loader.match or None) as raised:
        loader.load(path)
    # Every loader's message names the planted file (or, for a missing one, the folder it belongs in).
    assert str(path) in str(raised.value), str(raised.value)
    assert not marker.exists(), f"{loader.name}: loading {target} ran the planted code"


@pytest.mark.parametrize("plant", [plant_pickle, plant_torch])
def test_the_planted_file_does_run_code_when_unpickled(plant, tmp_path):
    """The test's pickles are real: an unsafe load (pickle.load, torch.load(weights_only=False)) creates the
    marker, so the marker's absence above means the loader never unpickled them."""
    marker, path = tmp_path / "code_ran", tmp_path / "planted"
    plant(path, marker)
    if plant is plant_pickle:
        with open(path, "rb") as handle:
            pickle.load(handle)
    else:
        torch.load(path, weights_only=False)
    assert marker.exists()


# Calls that unpickle or may unpickle: (regex of the call, None = never allowed, or the arguments one of which
# makes it safe).
UNSAFE_CALLS = (
    (r"\bpickle\.loads?\(", None),
    (r"\bjoblib\.load\(", None),
    (r"\b(?:cloudpickle|dill|marshal|shelve)\.(?:loads?|open)\(", None),
    (r"\bread_pickle\(", None),
    (r"\b(?:Doc2Vec|Word2Vec|FastText|KeyedVectors|SaveLoad)\.load\(", None),
    (r"\btorch\.load\(", ("weights_only=True",)),
    (r"\b(?:np|numpy)\.load\(", ("allow_pickle=False",)),
    # multivec.io.yaml_safe_loader() and config.yaml_files._strict_loader() construct only plain YAML types
    # (test_the_config_yaml_loaders_are_safe_loaders)
    (r"\byaml\.(?:load|unsafe_load|full_load)\(", ("Loader=yaml.SafeLoader", "Loader=_strict_loader()",
                                                    "Loader=yaml_safe_loader()")),
)


def _calls(text: str, start: int) -> str:
    """The text of the call whose name ends at ``start`` (up to its closing parenthesis)."""
    depth, i = 0, start
    while i < len(text):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0 and text[i] == ")":
            return text[start:i + 1]
        i += 1
    return text[start:]


def test_no_unsafe_loading_call_in_the_code():
    found = []
    files = [*sorted((ROOT / "src").rglob("*.py")), *sorted((ROOT / "workflow" / "scripts").glob("*.py"))]
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        for pattern, required in UNSAFE_CALLS:
            for match in re.finditer(pattern, text):
                line_start = text.rfind("\n", 0, match.start()) + 1
                if text[line_start:match.start()].lstrip().startswith("#"):
                    continue
                call = _calls(text, match.end() - 1)
                if required is None or not any(safe in call for safe in required):
                    line = text.count("\n", 0, match.start()) + 1
                    found.append(f"{path.relative_to(ROOT)}:{line}: {call[:80]}")
    assert not found, "calls that can unpickle a file:\n" + "\n".join(found)


def test_the_config_yaml_loaders_are_safe_loaders():
    """libyaml's CSafeLoader is not a subclass of yaml.SafeLoader, but has its constructor: only plain types."""
    import yaml

    from multivec.config.yaml_files import _strict_loader
    from multivec.io import yaml_safe_loader

    for loader in (yaml_safe_loader(), _strict_loader()):
        assert issubclass(loader, yaml.constructor.SafeConstructor), loader
        assert not issubclass(loader, yaml.constructor.FullConstructor), loader  # Full and Unsafe build objects
        with pytest.raises(yaml.constructor.ConstructorError, match="could not determine a constructor"):
            yaml.load("!!python/object/apply:os.getcwd []", Loader=loader)


def test_pv_round_trip_refuses_a_model_from_another_gensim(built, tmp_path):
    from multivec.distill.teachers.paragraph_vector import load_models

    path = built(_pv_folder, tmp_path)
    record = json.loads((path / "part0.json").read_text(encoding="utf-8"))
    record["gensim"] = "0.1"
    (path / "part0.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match=r"part0\.json: written with gensim 0\.1"):
        load_models(path)
