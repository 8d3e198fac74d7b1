"""Tiny randomly initialised models of the paper's architectures, for the rehearsal scale.

``write_models(mirror)`` writes one Hugging Face folder per hub id of ``MODELS`` under
``<mirror>/models/<hub id>/``, where ``multivec.io.resources.resolve_model`` finds it in place of the hub
(``mirrored_model``), so every loader takes the code path it takes at paper scale. Each folder is built
from a configuration of the hub model's own architecture (mBART-50, T5, RoBERTa with an NLI head,
T5 encoders, BERT, Longformer, MPNet in sentence-transformers' layout) with tiny sizes and
seeded random weights, and a tokenizer in that model's own format, trained on the fixture text
(``multivec.rehearsal.fixture_text``):

- mBART-50, T5: a SentencePiece-style Unigram model (``tokenizers``' SentencePieceUnigramTokenizer,
  Metaspace pre-tokenizer) in ``tokenizer.json``, with mBART-50's 52 language codes and T5's ids
  (pad 0, eos 1, unk 2) -- the files the hub ships for the fast tokenizers (the ``sentencepiece`` package,
  which only the slow tokenizers read, is not a project dependency);
- RoBERTa, DistilRoBERTa, Longformer: a byte-level BPE (``vocab.json`` + ``merges.txt``);
- BERT (SimCSE), MPNet: a lower-cased WordPiece ``vocab.txt``.

The NLI model's classifier is biased towards *entailment* (its label order is the hub model's:
entailment, neutral, contradiction), so that random weights still keep proposition pairs and the
rehearsal's sub-sentence training data is not empty. Sizes are in ``SIZES``; weights depend only on
``SEED``, so a mirror written twice is byte-identical.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from multivec.rehearsal.fixture_text import chinese, sentences

SEED = 21
VOCAB_SIZE = 1000  # before special tokens
SIZES = {"hidden": 32, "heads": 2, "ffn": 64, "layers": 2}
MPNET_HUB_ID = "sentence-transformers/all-mpnet-base-v2"
NLI_LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}  # as ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli


def _corpus() -> list[str]:
    english = sentences()
    return english + [chinese(s) for s in english[::4]]


def _unigram(folder: Path, specials: list[str]) -> Path:
    from tokenizers import SentencePieceUnigramTokenizer

    tokenizer = SentencePieceUnigramTokenizer()
    tokenizer.train_from_iterator(_corpus(), vocab_size=VOCAB_SIZE, special_tokens=specials, unk_token="<unk>",
                                  show_progress=False)
    path = folder / "unigram.json"
    tokenizer.save(str(path))
    return path


def _bpe(folder: Path) -> tuple[dict[str, int], list[tuple[str, str]]]:
    from tokenizers import ByteLevelBPETokenizer

    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(_corpus(), vocab_size=VOCAB_SIZE, min_frequency=2, show_progress=False,
                                  special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    vocab, merges = tokenizer.save_model(str(folder))
    with open(vocab, encoding="utf-8") as handle:
        vocab = json.load(handle)
    with open(merges, encoding="utf-8") as handle:
        merges = [tuple(line.split()) for line in handle if line.strip() and not line.startswith("#version")]
    return vocab, merges


def _wordpiece(folder: Path, specials: list[str]) -> dict[str, int]:
    from tokenizers import BertWordPieceTokenizer

    tokenizer = BertWordPieceTokenizer(lowercase=True)
    tokenizer.train_from_iterator(_corpus(), vocab_size=VOCAB_SIZE, special_tokens=specials, show_progress=False)
    with open(tokenizer.save_model(str(folder))[0], encoding="utf-8") as handle:
        return {line.rstrip("\n"): i for i, line in enumerate(handle)}


def _saved(tokenizer, out: Path):
    """Save ``tokenizer`` to ``out`` and load it back as every loader will (``AutoTokenizer``): a reloaded
    tokenizer can count one token more (mBART-50's mask), which the model's vocabulary must cover."""
    from transformers import AutoTokenizer

    tokenizer.save_pretrained(out)
    return AutoTokenizer.from_pretrained(out)


def _vocab_size(tokenizer) -> int:
    return max(len(tokenizer), max(tokenizer.get_vocab().values()) + 1)


def _mbart50(out: Path, work: Path) -> None:
    from transformers import MBart50Tokenizer, MBartConfig, MBartForConditionalGeneration

    tokenizer = MBart50Tokenizer(tokenizer_file=str(_unigram(work, ["<s>", "<pad>", "</s>", "<unk>"])),
                                 src_lang="en_XX", tgt_lang="zh_CN")
    tokenizer = _saved(tokenizer, out)
    # 12 encoder layers as mBART-large: the ablations read layers 0, 3, 6 and 9 (nugget_ablation.layers).
    config = MBartConfig(vocab_size=_vocab_size(tokenizer), d_model=SIZES["hidden"], encoder_layers=12,
                         decoder_layers=SIZES["layers"], encoder_attention_heads=SIZES["heads"],
                         decoder_attention_heads=SIZES["heads"], encoder_ffn_dim=SIZES["ffn"],
                         decoder_ffn_dim=SIZES["ffn"], max_position_embeddings=1024, pad_token_id=1, bos_token_id=0,
                         eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2, scale_embedding=True)
    MBartForConditionalGeneration(config).save_pretrained(out)


def _t5_tokenizer(out: Path, work: Path):
    from transformers import T5Tokenizer

    tokenizer = T5Tokenizer(tokenizer_file=str(_unigram(work, ["<pad>", "</s>", "<unk>"])), extra_ids=100)
    return _saved(tokenizer, out)


def _t5_config(tokenizer, d_model: int = SIZES["hidden"]):
    from transformers import T5Config

    return T5Config(vocab_size=_vocab_size(tokenizer), d_model=d_model, d_kv=SIZES["hidden"] // SIZES["heads"],
                    d_ff=SIZES["ffn"], num_layers=SIZES["layers"], num_decoder_layers=SIZES["layers"],
                    num_heads=SIZES["heads"], pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)


def _t5(out: Path, work: Path) -> None:
    from transformers import T5ForConditionalGeneration

    T5ForConditionalGeneration(_t5_config(_t5_tokenizer(out, work))).save_pretrained(out)


def _t5_encoder(out: Path, work: Path) -> None:
    """ST5/GTR base: d_model 768 as the paper's models (Table 5 names its rows by output dimension, 768 and 64);
    the attention and feed-forward stay tiny (T5's inner sizes are independent of d_model)."""
    from transformers import T5EncoderModel

    T5EncoderModel(_t5_config(_t5_tokenizer(out, work), d_model=768)).save_pretrained(out)


def _roberta_tokenizer(out: Path, work: Path, cls_name: str = "RobertaTokenizer"):
    import transformers

    vocab, merges = _bpe(work)
    return _saved(getattr(transformers, cls_name)(vocab=vocab, merges=merges), out)


def _roberta_config(tokenizer, **extra):
    from transformers import RobertaConfig

    return RobertaConfig(vocab_size=_vocab_size(tokenizer), hidden_size=SIZES["hidden"],
                         num_hidden_layers=SIZES["layers"], num_attention_heads=SIZES["heads"],
                         intermediate_size=SIZES["ffn"], max_position_embeddings=514, pad_token_id=1, bos_token_id=0,
                         eos_token_id=2, type_vocab_size=1, **extra)


def _roberta_nli(out: Path, work: Path) -> None:
    import torch
    from transformers import RobertaForSequenceClassification

    config = _roberta_config(_roberta_tokenizer(out, work), num_labels=3, id2label=NLI_LABELS,
                             label2id={v: k for k, v in NLI_LABELS.items()})
    model = RobertaForSequenceClassification(config)
    with torch.no_grad():  # random weights, but entailment wins (module docstring)
        model.classifier.out_proj.weight.mul_(0.01)
        model.classifier.out_proj.bias.copy_(torch.tensor([2.0, 0.0, 0.0]))
    model.save_pretrained(out)


def _roberta(out: Path, work: Path) -> None:
    from transformers import RobertaModel

    RobertaModel(_roberta_config(_roberta_tokenizer(out, work)), add_pooling_layer=False).save_pretrained(out)


def _longformer(out: Path, work: Path) -> None:
    from transformers import LongformerConfig, LongformerModel

    tokenizer = _roberta_tokenizer(out, work, "LongformerTokenizer")
    config = LongformerConfig(vocab_size=_vocab_size(tokenizer), hidden_size=SIZES["hidden"],
                              num_hidden_layers=SIZES["layers"], num_attention_heads=SIZES["heads"],
                              intermediate_size=SIZES["ffn"], max_position_embeddings=4098, attention_window=16,
                              pad_token_id=1, bos_token_id=0, eos_token_id=2, sep_token_id=2, type_vocab_size=1)
    LongformerModel(config, add_pooling_layer=False).save_pretrained(out)


def _bert(out: Path, work: Path) -> None:
    from transformers import BertConfig, BertModel, BertTokenizer

    tokenizer = BertTokenizer(vocab=_wordpiece(work, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]),
                              do_lower_case=True)
    tokenizer = _saved(tokenizer, out)
    config = BertConfig(vocab_size=_vocab_size(tokenizer), hidden_size=SIZES["hidden"],
                        num_hidden_layers=SIZES["layers"], num_attention_heads=SIZES["heads"],
                        intermediate_size=SIZES["ffn"], max_position_embeddings=512)
    BertModel(config).save_pretrained(out)


def _mpnet_sentence_transformer(out: Path, work: Path) -> None:
    """all-mpnet-base-v2's layout: an MPNet with a WordPiece tokenizer, mean pooling and normalisation
    (sentence-transformers' modules.json), max_seq_length 384."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as st_models
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizer

    backbone = work / "mpnet"
    tokenizer = MPNetTokenizer(vocab=_wordpiece(work, ["<s>", "<pad>", "</s>", "<unk>", "[UNK]", "<mask>"]),
                               do_lower_case=True)
    tokenizer = _saved(tokenizer, backbone)
    config = MPNetConfig(vocab_size=_vocab_size(tokenizer), hidden_size=SIZES["hidden"],
                         num_hidden_layers=SIZES["layers"], num_attention_heads=SIZES["heads"],
                         intermediate_size=SIZES["ffn"], max_position_embeddings=514, pad_token_id=1, bos_token_id=0,
                         eos_token_id=2)
    MPNetModel(config, add_pooling_layer=False).save_pretrained(backbone)
    transformer = st_models.Transformer(str(backbone), max_seq_length=384)
    pooling = st_models.Pooling(SIZES["hidden"], pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling, st_models.Normalize()], device="cpu").save(str(out))


# Every hub model of config/paper.yaml but all-MiniLM-L6-v2 (offline from PyPI at every scale).
MODELS: dict[str, Callable[[Path, Path], None]] = {
    "facebook/mbart-large-50-many-to-many-mmt": _mbart50,
    "t5-large": _t5,
    "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli": _roberta_nli,
    "sentence-transformers/sentence-t5-base": _t5_encoder,
    "sentence-transformers/gtr-t5-base": _t5_encoder,
    "princeton-nlp/sup-simcse-bert-base-uncased": _bert,
    "princeton-nlp/unsup-simcse-bert-base-uncased": _bert,
    "sentence-transformers/all-distilroberta-v1": _roberta,
    "allenai/longformer-base-4096": _longformer,
    MPNET_HUB_ID: _mpnet_sentence_transformer,
}


def write_model(hub_id: str, out: str | os.PathLike) -> Path:
    """Write the tiny model of ``hub_id`` (a key of ``MODELS``) to ``out`` (replaced if present)."""
    import torch

    if hub_id not in MODELS:
        raise KeyError(f"no tiny model for {hub_id!r}; known: {', '.join(MODELS)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".tiny-", dir=out.parent) as tmp:
        work, staged = Path(tmp) / "work", Path(tmp) / "model"
        work.mkdir()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED)
            MODELS[hub_id](staged, work)
        (staged / "rehearsal.json").write_text(json.dumps(
            {"hub_id": hub_id, "what": "tiny random model of the hub model's architecture (rehearsal scale)",
             "sizes": SIZES, "seed": SEED}, indent=1) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        os.replace(staged, out)
    return out


def write_models(mirror: str | os.PathLike) -> dict[str, Path]:
    """Every model of ``MODELS`` under ``<mirror>/models/<hub id>/``."""
    from multivec.io.resources import MODELS_DIR

    return {hub_id: write_model(hub_id, Path(mirror) / MODELS_DIR / hub_id) for hub_id in MODELS}
