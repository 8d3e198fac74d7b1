"""NUGGET model configuration (Qin & Van Durme, ICML 2023, §3 and §4 set-up).

One dataclass holds every hyperparameter of the encoder-decoder: which pretrained encoder,
which decoder, the compression ratio r (§3.1, k = ceil(n·r)), the scorer layer l (§3.1),
the frozen bottom (§3.3 "stabilized training", §4, §7.1), nugget feedback (§3.3, eq. 7-8),
the residual connection (§3.2, eq. 5), rule-based selectors used for ablations (§7.1, Table 4),
a random selector (an ablation the paper lacks), the TSDAE-style mean bottleneck baseline (§6.1.2), and the
``tokens`` bottleneck: every token state reaches the decoder (r = 1, no selection), the shared seq2seq
starting point every demo NUGGET/TSDAE model is fine-tuned from, as the paper's start from mBART.

``TABLE4_ABLATIONS`` names each configuration of the paper's Table 4 (§7.1), plus the random selector,
as changes to a base configuration; ``ablation_config`` builds it, mapping the paper's scorer layers
(mBART's 12-layer encoder) to the encoder at hand and replacing r_sb by a measured share.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from multivec.config.dataclass_config import ConfigError, from_dict

ARCHITECTURES = ("bert_decoder", "mbart")
OBJECTIVES = ("ae", "mt")
SELECTORS = ("learned", "chunking", "sentence_boundary", "random")
BOTTLENECKS = ("nuggets", "mean", "tokens")
DECODER_OUTPUTS = ("untied", "tied")
OUTPUT_BIAS_INITS = ("zero", "unigram")
OUTPUT_WEIGHT_INITS = ("embedding", "zero")
TARGET_TOKENIZERS = ("bpe", "source")
DECODER_INITS = ("scratch", "encoder")
CROSS_ATTENTION_INITS = ("random", "self_attention")
# Punctuation the chunking selector may end a chunk at: §7.1 says "comma or period"; "wide" is an option.
CHUNK_PUNCTUATION = ("comma_period", "wide")




@dataclass
class NuggetConfig:
    # Pretrained encoder: "minilm", "tiny-random-bert", "tiny-random-mbart", a folder or a hub id.
    encoder: str = "minilm"
    # "bert_decoder": a BERT-style encoder + a small decoder trained from scratch (demo/smoke scale);
    # "mbart": mBART's own encoder (with NUGGET hooks) and its own pretrained decoder (paper scale).
    architecture: str = "bert_decoder"
    objective: str = "ae"  # "ae": reconstruct the source; "mt": translate it
    ratio: float = 0.1  # r: k = ceil(n·r) nuggets for n real source tokens
    scorer_layer: int = 3  # l: the scorer reads layer l's states (0 = embedding output)
    # The frozen bottom, counted like scorer_layer: m freezes the embeddings and layers 1..m (run in eval
    # mode, no gradient); None = scorer_layer (§3.3, §4: l = 3; §7.1); -1 = nothing frozen (TSDAE, §6.1.2).
    frozen_layers: int | None = None
    feedback: bool = True  # eq. 7-8: type embeddings e^n / e^o added after layer l
    residual: bool = True  # eq. 5: scores added to every cross-attention logit
    selector: str = "learned"  # "learned" | "chunking" | "sentence_boundary" (§7.1) | "random" (not in the paper)
    chunk_punctuation: str = "comma_period"  # chunking selector: "comma_period" (§7.1) | "wide" (+ ; ! ? …)
    # "nuggets" | "mean" (TSDAE baseline: one mean-pooled vector) | "tokens" (every token state: the shared
    # r = 1 seq2seq model the others start from; no scorer, W^V, feedback or residual)
    bottleneck: str = "nuggets"
    noise_deletion: float = 0.0  # probability of deleting each non-special source token while training
    max_source_tokens: int = 128
    max_target_tokens: int = 128
    # Decoder trained from scratch (architecture "bert_decoder"); its width is the encoder's width.
    decoder_layers: int = 2
    decoder_heads: int = 6
    decoder_ffn: int = 1536
    decoder_dropout: float = 0.1
    # Demo decoder initialisation ("bert_decoder" only): "scratch" (random MBartDecoder, decoder_heads and
    # decoder_ffn apply) or "encoder" (warm start from the encoder's own layers, Rothe et al. 2020; needs
    # target_tokenizer "source"; heads and widths are the encoder's). decoder_copy_layers: which encoder
    # layers (0-based) the decoder copies, one per decoder layer; None = the first decoder_layers.
    decoder_init: str = "scratch"
    decoder_copy_layers: list[int] | None = None
    # Cross-attention of a warm-started decoder: "random" (the library's initialisation, Rothe et al. 2020) or
    # "self_attention" (a copy of the same encoder layer's self-attention, whose positional heads can align
    # decoder position t with memory position t + 1 from step 0; docs/nugget.md, "Decisions").
    decoder_cross_attention_init: str = "random"
    # Add to each memory slot the warm-started decoder's own position embedding (through its embedding
    # LayerNorm) of the slot's source position, so that cross-attention can align by position as mBART's
    # position-carrying encoder states let it; MiniLM's contrastively trained top states carry little
    # position (docs/nugget.md, "Decisions"). Retrieval vectors are never changed.
    decoder_memory_positions: bool = False
    # Decoder output layer: "untied" (its own trainable V × d matrix, initialised from the input embedding)
    # or "tied" (the decoder's trainable input embedding, as mBART's lm_head). The output bias always trains.
    decoder_output: str = "untied"
    # Output layer at the start of training (ignored when the model starts from a saved one): the bias is
    # "zero" or "unigram" (the log of the add-one smoothed unigram frequencies of the training targets); the
    # untied output matrix is a copy of the input "embedding" or "zero" (with a unigram bias, step 0 then
    # predicts exactly that unigram model).
    output_bias_init: str = "zero"
    output_weight_init: str = "embedding"
    # Target vocabulary: "bpe" trains a byte-level BPE on the training targets; "source" reuses the
    # encoder's tokenizer (required for "mbart", whose pretrained decoder has that vocabulary).
    target_tokenizer: str = "bpe"
    target_vocab_size: int = 8000
    src_lang: str = "en_XX"  # mBART-50 language codes (ignored by tokenizers without languages)
    tgt_lang: str | None = None  # None: src_lang for "ae", "zh_CN" for "mt"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.tgt_lang is None:
            self.tgt_lang = self.src_lang if self.objective == "ae" else "zh_CN"
        self.validate()

    def validate(self) -> None:
        def check(ok: bool, key: str, message: str) -> None:
            if not ok:
                raise ConfigError(f"NuggetConfig.{key}={getattr(self, key)!r}: {message}")

        check(self.architecture in ARCHITECTURES, "architecture", f"expected one of {ARCHITECTURES}")
        check(self.objective in OBJECTIVES, "objective", f"expected one of {OBJECTIVES}")
        check(self.selector in SELECTORS, "selector", f"expected one of {SELECTORS}")
        check(self.bottleneck in BOTTLENECKS, "bottleneck", f"expected one of {BOTTLENECKS}")
        check(self.target_tokenizer in TARGET_TOKENIZERS, "target_tokenizer", f"expected one of {TARGET_TOKENIZERS}")
        check(0.0 < self.ratio <= 1.0, "ratio", "must be in (0, 1]")
        check(self.scorer_layer >= 0, "scorer_layer", "must be >= 0")
        frozen = self.frozen_layers
        check(frozen is None or (type(frozen) is int and frozen >= -1), "frozen_layers",
              "must be null (= scorer_layer), -1 (nothing frozen) or a layer index >= 0")
        check(self.chunk_punctuation in CHUNK_PUNCTUATION, "chunk_punctuation", f"expected one of {CHUNK_PUNCTUATION}")
        check(0.0 <= self.noise_deletion < 1.0, "noise_deletion", "must be in [0, 1)")
        check(self.max_source_tokens >= 2, "max_source_tokens", "must be >= 2")
        check(2 <= self.max_target_tokens <= 510, "max_target_tokens", "must be in [2, 510] (decoder positions)")
        check(self.target_vocab_size >= 300, "target_vocab_size", "must be >= 300 (256 byte symbols + specials)")
        check(self.decoder_layers >= 1 and self.decoder_heads >= 1 and self.decoder_ffn >= 1,
              "decoder_layers", "decoder sizes must be positive")
        check(self.decoder_init in DECODER_INITS, "decoder_init", f"expected one of {DECODER_INITS}")
        check(self.decoder_output in DECODER_OUTPUTS, "decoder_output", f"expected one of {DECODER_OUTPUTS}")
        check(self.output_bias_init in OUTPUT_BIAS_INITS, "output_bias_init", f"expected one of {OUTPUT_BIAS_INITS}")
        check(self.output_weight_init in OUTPUT_WEIGHT_INITS, "output_weight_init",
              f"expected one of {OUTPUT_WEIGHT_INITS}")
        if self.output_weight_init == "zero":
            check(self.decoder_output == "untied", "output_weight_init",
                  "a tied output layer is the input embedding and cannot start at zero: use 'embedding'")
        if self.decoder_init == "encoder":
            check(self.architecture == "bert_decoder", "decoder_init",
                  "warm start from the encoder is for architecture 'bert_decoder' (mbart has its own decoder)")
            check(self.target_tokenizer == "source", "decoder_init",
                  "a decoder warm-started from the encoder shares its word embeddings: set target_tokenizer: source")
        check(self.decoder_cross_attention_init in CROSS_ATTENTION_INITS, "decoder_cross_attention_init",
              f"expected one of {CROSS_ATTENTION_INITS}")
        if self.decoder_cross_attention_init != "random":
            check(self.decoder_init == "encoder", "decoder_cross_attention_init", "only with decoder_init: encoder")
        check(type(self.decoder_memory_positions) is bool, "decoder_memory_positions", "must be true or false")
        if self.decoder_memory_positions:
            check(self.decoder_init == "encoder", "decoder_memory_positions",
                  "only with decoder_init: encoder (the decoder's BERT position embeddings)")
        copied = self.decoder_copy_layers
        if copied is not None:
            check(self.decoder_init == "encoder", "decoder_copy_layers", "only with decoder_init: encoder")
            check(isinstance(copied, list) and len(copied) == self.decoder_layers
                  and all(type(i) is int and i >= 0 for i in copied), "decoder_copy_layers",
                  "must list decoder_layers encoder layer indices (0-based)")
        if self.architecture == "mbart":
            check(self.target_tokenizer == "source", "target_tokenizer",
                  "architecture 'mbart' keeps its pretrained decoder, so the target vocabulary must be 'source'")
        if self.bottleneck in ("mean", "tokens"):
            check(not self.residual, "residual", f"bottleneck {self.bottleneck!r} has no scores: set residual: false")
            check(not self.feedback, "feedback", f"bottleneck {self.bottleneck!r} selects no nuggets: set feedback: false")
        if self.bottleneck == "tokens":
            check(self.ratio == 1.0, "ratio", "bottleneck 'tokens' passes every token state: set ratio: 1.0")
        elif self.selector != "learned":
            check(not self.residual, "residual",
                  f"selector {self.selector!r} gives no scores, so there is no residual connection: set residual: false")
        if self.bottleneck == "nuggets" and self.selector == "sentence_boundary":
            check(self.noise_deletion == 0.0, "noise_deletion",
                  "selector 'sentence_boundary' reads per-token sentence ends, which deleting tokens would "
                  "shift: set 0")

    @property
    def decoder_source_layers(self) -> list[int]:
        """The encoder layers a warm-started decoder copies (decoder_init: encoder)."""
        return list(self.decoder_copy_layers) if self.decoder_copy_layers is not None else list(range(self.decoder_layers))

    @property
    def frozen_bottom(self) -> int:
        """The highest frozen layer (0 = the embeddings only, -1 = nothing frozen)."""
        return self.scorer_layer if self.frozen_layers is None else self.frozen_layers

    @property
    def learned_scores(self) -> bool:
        """Whether the model has a trainable scorer (learned selector with the nugget bottleneck)."""
        return self.bottleneck == "nuggets" and self.selector == "learned"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "NuggetConfig":
        return from_dict(cls, data, "NuggetConfig")


# Table 4 (§7.1): "By default, we use machine translation as the training objective and use a compression
# ratio r = 0.1 (or r = 0.033 for the 'sentence boundary' experiments)"; l = 3 with the frozen bottom
# following l. Rule selectors give no scores, so they have no residual connection (eq. 5).
# ``scorer_layer`` values are the paper's l (mBART, 12 layers): ``ablation_config(layers=...)`` maps them.
# ``SENTENCE_RATIO`` stands for r_sb, the share of sentence-final tokens, measured on the training corpus
# (``multivec.nugget.sentence_share``); the paper measured 3.3% (``PAPER_SENTENCE_RATIO``).
# "random" is not in the paper: k = ceil(n·r) tokens drawn uniformly (``selection.random_positions``).
SENTENCE_RATIO = "r_sb"
PAPER_SENTENCE_RATIO = 0.033
TABLE4_ABLATIONS: dict[str, dict[str, Any]] = {
    "nugget_l3": {},
    "nugget_l0": {"scorer_layer": 0},
    "nugget_l6": {"scorer_layer": 6},
    "nugget_l9": {"scorer_layer": 9},
    "no_feedback": {"feedback": False},
    "chunking": {"selector": "chunking", "residual": False},
    "nugget_r_sb": {"ratio": SENTENCE_RATIO},
    "sentence_boundary": {"selector": "sentence_boundary", "residual": False, "ratio": SENTENCE_RATIO},
    "random": {"selector": "random", "residual": False},
}
TABLE4_DEFAULTS = {"objective": "mt", "ratio": 0.1, "scorer_layer": 3, "frozen_layers": None, "feedback": True,
                   "residual": True, "selector": "learned", "bottleneck": "nuggets", "noise_deletion": 0.0}


def ablation_settings(name: str, base: dict[str, Any] | None = None, *,
                      layers: dict[int, int] | None = None) -> dict[str, Any]:
    """NuggetConfig fields of Table 4's configuration ``name`` on top of ``base`` (encoder, decoder, lengths...).

    ``layers`` maps the paper's scorer layer l (0, 3, 6, 9 of mBART's 12) to this encoder's (default: the
    same numbers); the frozen bottom follows l. Rows trained at r_sb keep ``ratio`` = ``SENTENCE_RATIO``
    (the measured share is a file the DAG builds: see ``ablation_config``).
    """
    if name not in TABLE4_ABLATIONS:
        raise ConfigError(f"unknown Table 4 ablation {name!r}; known: {', '.join(TABLE4_ABLATIONS)}")
    settings = {**(base or {}), **TABLE4_DEFAULTS, **TABLE4_ABLATIONS[name]}
    if layers is not None:
        if settings["scorer_layer"] not in layers:
            raise ConfigError(f"ablation {name!r}: the paper's scorer layer l={settings['scorer_layer']} has no "
                              f"mapping in layers={layers!r} (nugget_ablation.layers)")
        settings["scorer_layer"] = layers[settings["scorer_layer"]]
    return settings


def resolve_sentence_ratio(settings: dict[str, Any], sentence_ratio: float) -> dict[str, Any]:
    """``settings`` with ratio ``SENTENCE_RATIO`` replaced by the measured r_sb (others unchanged)."""
    if settings.get("ratio") != SENTENCE_RATIO:
        return dict(settings)
    if isinstance(sentence_ratio, bool) or not isinstance(sentence_ratio, (int, float)) or not 0 < sentence_ratio <= 1:
        raise ConfigError(f"sentence_ratio (r_sb)={sentence_ratio!r} must be a number in (0, 1]")
    return {**settings, "ratio": float(sentence_ratio)}


def ablation_config(name: str, base: dict[str, Any] | None = None, *, layers: dict[int, int] | None = None,
                    sentence_ratio: float = PAPER_SENTENCE_RATIO) -> NuggetConfig:
    """The NuggetConfig of ``ablation_settings(name, base, layers=layers)``; ``sentence_ratio``: r_sb, the
    measured share of sentence-final tokens (default: the paper's 0.033), for the rows that use it."""
    return NuggetConfig.from_dict(resolve_sentence_ratio(ablation_settings(name, base, layers=layers), sentence_ratio))
