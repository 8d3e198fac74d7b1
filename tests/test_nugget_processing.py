"""NuggetProcessor (nugget/processing.py): the ids, masks and batches it makes, and the model folder's tokenizer
files, are exactly those NuggetModel made before the processor was split from it (expected values captured from
that code on a tiny random BERT)."""

from pathlib import Path

import pytest
import torch

from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.encoding import describe_encoder
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.processing import IGNORE_INDEX, NuggetProcessor
from multivec.nugget.target_tokenizer import TargetTokenizer

TEXTS = ["The cat sat on the mat. It was happy.", "Dogs bark!", "A short one"]
ENDS = [[23, 37], [10], [11]]  # character offsets where the sentences end

SOURCE_IDS = [[101, 1996, 4937, 2938, 2006, 1996, 13523, 1012, 2009, 2001, 3407, 1012, 102],
              [101, 6077, 11286, 999, 102], [101, 1037, 2460, 2028, 102]]
SOURCE_IDS_6 = [[101, 1996, 4937, 2938, 2006, 102], [101, 6077, 11286, 999, 102], [101, 1037, 2460, 2028, 102]]
END_MASKS = [[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 1, 0]]
END_MASKS_6 = [[0, 0, 0, 0, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 1, 0]]
PAD = [0] * 8
BPE_DECODER_INPUTS = [[2, 1, 284, 286, 291, 264, 289, 288, 17, 283, 290, 296, 17], [2, 1, 294, 295, 4] + PAD,
                      [2, 1, 281, 297, 293] + PAD]
BPE_LABELS = [[-100, 284, 286, 291, 264, 289, 288, 17, 283, 290, 296, 17, 2], [-100, 294, 295, 4, 2] + [-100] * 8,
              [-100, 281, 297, 293, 2] + [-100] * 8]
SOURCE_DECODER_INPUTS = [[102] + SOURCE_IDS[0][:-1], [102] + SOURCE_IDS[1][:-1] + PAD,
                         [102] + SOURCE_IDS[2][:-1] + PAD]
SOURCE_LABELS = [[-100] + SOURCE_IDS[0][1:], [-100] + SOURCE_IDS[1][1:] + [-100] * 8,
                 [-100] + SOURCE_IDS[2][1:] + [-100] * 8]
FILES = {"backbone/config.json", "config.json", "model.safetensors", "source_tokenizer/tokenizer.json",
         "source_tokenizer/tokenizer_config.json", "target_tokenizer/target_tokenizer.json",
         "target_tokenizer/tokenizer.json"}


def make(architecture: str) -> NuggetModel:
    mbart = architecture == "mbart"
    cfg = NuggetConfig(encoder="tiny-random-mbart" if mbart else "tiny-random-bert", architecture=architecture,
                       ratio=0.3, scorer_layer=2, decoder_heads=2, decoder_ffn=64, target_vocab_size=300,
                       target_tokenizer="source" if mbart else "bpe", max_source_tokens=32, max_target_tokens=16)
    return NuggetModel.from_backbone(cfg, None if mbart else TargetTokenizer.train_bpe(TEXTS * 3, 300))


@pytest.fixture(scope="module")
def bert():
    return make("bert_decoder")


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_sources_and_sentence_end_masks_are_the_old_ids(bert):
    processor = bert.processor
    assert processor.tokenize_sources(TEXTS) == SOURCE_IDS
    assert processor.tokenize_sources(TEXTS, 6) == SOURCE_IDS_6
    assert processor.sentence_end_masks(TEXTS, ENDS) == END_MASKS
    assert processor.sentence_end_masks(TEXTS, ENDS, 6) == END_MASKS_6
    ids, mask = processor.collate_sources(SOURCE_IDS, bert.device)
    assert ids.tolist() == [row + [0] * (13 - len(row)) for row in SOURCE_IDS]
    assert mask.tolist() == [[1] * len(row) + [0] * (13 - len(row)) for row in SOURCE_IDS]
    assert ids.dtype == mask.dtype == torch.long and ids.device == bert.device


@pytest.mark.parametrize("architecture, inputs, labels", [("bert_decoder", BPE_DECODER_INPUTS, BPE_LABELS),
                                                         ("mbart", SOURCE_DECODER_INPUTS, SOURCE_LABELS)])
def test_target_batches_are_the_old_ids(bert, architecture, inputs, labels):
    model = bert if architecture == "bert_decoder" else make(architecture)
    targets = model.processor.target_tokenizer.encode(TEXTS, 16)
    decoder_input_ids, label_ids = model.processor.target_batch(targets, model.device)
    assert decoder_input_ids.tolist() == inputs and label_ids.tolist() == labels
    assert IGNORE_INDEX == -100


def test_describe_encoder_is_the_old_description(bert):
    assert describe_encoder(bert) == {"encoder": "nugget", "nugget_config": bert.config.to_dict(), "dimension": 32}


@pytest.mark.parametrize("architecture", ["bert_decoder", "mbart"])
def test_model_folder_saves_loads_and_saves_the_same_bytes(tmp_path, architecture):
    model = make(architecture)
    model.save_pretrained(tmp_path / "first", {"extra": 1})
    first = files(tmp_path / "first")
    expected = FILES | ({"target_tokenizer/tokenizer_config.json"} if architecture == "mbart" else set())
    assert set(first) == expected
    loaded = NuggetModel.from_pretrained(tmp_path / "first")
    loaded.save_pretrained(tmp_path / "second", {"extra": 1})
    assert files(tmp_path / "second") == first
    # The processor alone reads and writes the folder's tokenizers (saved before it tokenizes: a fast tokenizer
    # saves the truncation of its last call, as it always did) and makes the same ids as the model's own.
    processor = NuggetProcessor.from_pretrained(tmp_path / "first")
    processor.save_pretrained(tmp_path / "third")
    assert files(tmp_path / "third") == {name: data for name, data in first.items()
                                         if name.startswith(("source_tokenizer/", "target_tokenizer/"))}
    assert processor.max_source_tokens == model.config.max_source_tokens
    assert processor.tokenize_sources(TEXTS) == model.processor.tokenize_sources(TEXTS) == SOURCE_IDS


def test_processor_from_pretrained_names_a_folder_that_is_not_a_model(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json is missing"):
        NuggetProcessor.from_pretrained(tmp_path)
