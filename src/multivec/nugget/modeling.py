"""The NUGGET encoder-decoder (Qin & Van Durme, ICML 2023, §3).

Forward pass of ``NuggetModel.encode`` for one batch:
1. embeddings and encoder layers 1..m, the frozen bottom (§3.3 "stabilized training"): no gradient, and
   run in eval mode (no dropout) even while the rest trains; m = l by default (§4, §7.1), -1 for TSDAE;
2. scores s = FFN(X^(l)) (eq. 2, 7) and selection of k = ceil(n·r) tokens (eq. 3), or a rule
   selector (§7.1: chunking, or the real sentence ends passed as ``sentence_end_mask``);
3. nugget feedback (eq. 7-8): X^(l) + e^n at selected positions, + e^o elsewhere, into layer l+1;
4. layers l+1..L; the selected rows of the last layer X, in token order, times W^V give the
   nuggets Z = X'W^V (eq. 4: a linear map, no bias);
5. the decoder cross-attends to Z; s_j/sqrt(d_head) is added to every cross-attention logit of
   nugget j (residual connection, eq. 5), the scorer's only gradient path.
``bottleneck: mean`` replaces 2-4 by one masked mean of the last layer (the TSDAE baseline, §6.1.2);
``bottleneck: tokens`` passes every token state of the last layer (r = 1, no selection): the shared seq2seq
model that ``initialize_from`` starts every demo NUGGET/TSDAE model from, as the paper starts from mBART.

The model only models: its ``processor`` (``processing.py``, ``NuggetProcessor``) owns the source and target
tokenizers and turns text into the ids, masks and target batches read here; ``save_pretrained`` and
``from_pretrained`` write and read it with the model folder.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from multivec.io import read_json, write_json
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.decoder import TargetDecoder, computation_dtype
from multivec.nugget.encoder_adapter import BertEncoderAdapter, EncoderAdapter, MBartEncoderAdapter
from multivec.nugget.losses import sequence_nll
from multivec.nugget.processing import CONFIG_FILE, IGNORE_INDEX, TARGET_TOKENIZER_DIR, NuggetProcessor
from multivec.nugget.selection import NuggetScorer, RuleSelector, cross_attention_bias, select_top_k
from multivec.nugget.target_tokenizer import TargetTokenizer

log = logging.getLogger(__name__)

WEIGHTS_FILE = "model.safetensors"
BACKBONE_DIR = "backbone"
# NuggetConfig fields a model must share with the model ``initialize_from`` starts it from: the encoder and
# decoder structure and the target side (what the stored tensors and the target vocabulary mean).
INIT_MUST_MATCH = ("encoder", "architecture", "objective", "max_target_tokens", "decoder_layers", "decoder_heads",
                   "decoder_ffn", "decoder_init", "decoder_copy_layers", "decoder_cross_attention_init",
                   "decoder_memory_positions", "decoder_output", "target_tokenizer", "target_vocab_size", "src_lang",
                   "tgt_lang")
# Seed of a tiny random "pretrained" encoder (smoke scale): fixed, not the training seed (see _backbone).
TINY_BACKBONE_SEED = 0


@dataclass
class Nuggets:
    """Encoder output for a batch. k varies per document: ``mask`` marks real slots."""

    vectors: torch.Tensor  # B × k_max × d (Z; for the mean bottleneck B × 1 × d)
    mask: torch.Tensor  # B × k_max, bool
    indices: torch.Tensor | None  # B × k_max source positions, ascending (None for the mean bottleneck)
    scores: torch.Tensor | None  # B × k_max scores of the selected tokens (None without a learned scorer)


def _backbone(config: NuggetConfig, hf_config=None):
    """The Hugging Face model that provides the encoder (and, for mBART, the decoder).

    With ``hf_config`` the weights are random (they are loaded afterwards); else pretrained weights
    are loaded, or a tiny random model is built for ``tiny-random-*`` references.
    """
    from transformers import BertModel, MBartForConditionalGeneration

    from multivec.io.resources import is_tiny_random, resolve_model, tiny_random_config

    model_class = MBartForConditionalGeneration if config.architecture == "mbart" else BertModel
    kwargs = {"add_pooling_layer": False} if model_class is BertModel else {}
    if hf_config is None and is_tiny_random(config.encoder):
        # A tiny random encoder stands for a pretrained one: the same weights for every training seed
        # (TINY_BACKBONE_SEED), so models of several seeds share one frozen bottom as pretrained ones do.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(TINY_BACKBONE_SEED)
            hf_config = tiny_random_config(config.encoder)
            hf_config._attn_implementation = "sdpa"
            model = model_class(hf_config, **kwargs)
    elif hf_config is not None:
        hf_config._attn_implementation = "sdpa"
        model = model_class(hf_config, **kwargs)
    else:
        model = model_class.from_pretrained(resolve_model(config.encoder), attn_implementation="sdpa", **kwargs)
    expected = "mbart" if config.architecture == "mbart" else "bert"
    if model.config.model_type != expected:
        raise ValueError(f"encoder {config.encoder!r} is a {model.config.model_type!r} model, but architecture "
                         f"{config.architecture!r} needs a {expected!r} model")
    return model


class NuggetModel(nn.Module):
    def __init__(self, config: NuggetConfig, backbone: nn.Module, processor: NuggetProcessor):
        super().__init__()
        self.config = config
        self.backbone_config = backbone.config
        self.processor = processor
        target_tokenizer = processor.target_tokenizer

        if config.architecture == "mbart":
            encoder = backbone.model.encoder
            # mBART ties encoder and decoder embeddings. The encoder's copy is frozen (frozen bottom),
            # the decoder's stays trainable, so the encoder gets its own copy of the matrix.
            shared = encoder.embed_tokens
            own = type(shared)(shared.num_embeddings, shared.embedding_dim, shared.padding_idx,
                               embed_scale=shared.embed_scale)
            own.weight = nn.Parameter(shared.weight.detach().clone())
            encoder.embed_tokens = own
            self.encoder: EncoderAdapter = MBartEncoderAdapter(encoder)
            if target_tokenizer.vocab_size > backbone.config.vocab_size:
                raise ValueError(f"target vocabulary ({target_tokenizer.vocab_size}) exceeds mBART's "
                                 f"({backbone.config.vocab_size})")
            self.decoder = TargetDecoder(backbone.model.decoder, backbone.final_logits_bias, config.decoder_output)
        else:
            self.encoder = BertEncoderAdapter(backbone)
            if config.decoder_init == "encoder":
                # Warm start (Rothe et al. 2020); ``from_pretrained`` rebuilds it and then loads the weights.
                if target_tokenizer.vocab_size != backbone.config.vocab_size:
                    raise ValueError(f"decoder_init 'encoder' shares the encoder's {backbone.config.vocab_size}-word "
                                     f"embedding, but the target vocabulary has {target_tokenizer.vocab_size}")
                self.decoder = TargetDecoder.from_encoder(backbone, config.decoder_source_layers,
                                                          config.decoder_dropout, config.decoder_output,
                                                          config.decoder_cross_attention_init)
            else:
                self.decoder = TargetDecoder.from_scratch(
                    self.encoder.hidden_size, target_tokenizer.vocab_size, target_tokenizer.pad_id,
                    config.decoder_layers, config.decoder_heads, config.decoder_ffn, config.decoder_dropout,
                    config.decoder_output)

        for key in ("scorer_layer", "frozen_layers"):
            if (getattr(config, key) or 0) > self.encoder.num_layers:
                raise ValueError(f"NuggetConfig.{key}={getattr(config, key)} but the encoder "
                                 f"{config.encoder!r} has {self.encoder.num_layers} layers")
        d = self.encoder.hidden_size
        self.scorer = NuggetScorer(d) if config.learned_scores else None
        self.rule_selector = (RuleSelector(config.selector, config.ratio, processor.source_tokenizer,
                                           config.chunk_punctuation, seed=config.seed)
                              if config.bottleneck == "nuggets" and config.selector != "learned" else None)
        # e^o (row 0) and e^n (row 1); zero at start so an untrained model keeps the pretrained encoder's states.
        self.type_embedding = nn.Embedding(2, d) if config.feedback else None
        if self.type_embedding is not None:
            nn.init.zeros_(self.type_embedding.weight)
        # W^V (eq. 4: Z = X'W^V, no bias), identity at start: an untrained model's nuggets are the
        # pretrained encoder's token states.
        self.value_projection = None
        if config.bottleneck == "nuggets":
            self.value_projection = nn.Linear(d, d, bias=False)
            with torch.no_grad():
                self.value_projection.weight.copy_(torch.eye(d))

        for module in self.frozen_modules():
            module.requires_grad_(False)

    # -- construction ----------------------------------------------------------------------------
    @classmethod
    def from_backbone(cls, config: NuggetConfig, target_tokenizer: TargetTokenizer | None = None) -> "NuggetModel":
        """A new model on the pretrained encoder (and mBART decoder); new parts initialised with ``config.seed``.

        ``target_tokenizer`` is required for ``target_tokenizer: bpe`` (it is trained on the data).
        """
        torch.manual_seed(config.seed)
        processor = NuggetProcessor.from_config(config, target_tokenizer)
        return cls(config, _backbone(config), processor)

    def save_pretrained(self, out_dir: str | os.PathLike, extra_config: dict | None = None,
                        weights_name: str = WEIGHTS_FILE) -> None:
        """Weights (atomically), ``config.json`` (``{"model": ..., **extra_config}``), backbone config, the
        processor's tokenizers."""
        self.save_metadata(out_dir, extra_config)
        self.save_weights(Path(out_dir) / weights_name)

    def save_metadata(self, out_dir: str | os.PathLike, extra_config: dict | None = None) -> None:
        """Everything ``from_pretrained`` needs except the weights."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / CONFIG_FILE, {"model": self.config.to_dict(), **(extra_config or {})})
        self.backbone_config.save_pretrained(str(out / BACKBONE_DIR))
        self.processor.save_pretrained(out)

    def save_weights(self, path: str | os.PathLike) -> None:
        from safetensors.torch import save_model

        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        save_model(self, str(tmp))
        os.replace(tmp, path)  # readers never see a half-written file

    def load_weights(self, path: str | os.PathLike) -> None:
        from multivec.io.safe_loading import load_safetensors_into

        missing, unexpected = load_safetensors_into(self, path, strict=False)
        if missing or unexpected:
            raise ValueError(f"{path}: weights do not match the model (missing {missing}, unexpected {unexpected})")

    @classmethod
    def from_pretrained(cls, out_dir: str | os.PathLike, weights_name: str = WEIGHTS_FILE,
                        device: str | torch.device = "cpu") -> "NuggetModel":
        """Load a model saved by ``save_pretrained`` (or written by ``training.train``), offline."""
        from transformers import AutoConfig

        out = Path(out_dir)
        if not (out / CONFIG_FILE).exists():
            raise FileNotFoundError(f"{out / CONFIG_FILE} is missing: not a saved NUGGET model")
        config = NuggetConfig.from_dict(read_json(out / CONFIG_FILE)["model"])
        hf_config = AutoConfig.from_pretrained(str(out / BACKBONE_DIR))
        model = cls(config, _backbone(config, hf_config), NuggetProcessor.from_pretrained(out, config))
        model.load_weights(out / weights_name)
        model.to(device)
        model.eval()
        return model

    # -- modes -----------------------------------------------------------------------------------
    def frozen_modules(self) -> list[nn.Module]:
        """The frozen bottom: embeddings and encoder layers 1..m, m = ``config.frozen_bottom`` (a plain list,
        not registered twice); empty when nothing is frozen (m = -1)."""
        m = self.config.frozen_bottom
        if m < 0:
            return []
        return self.encoder.embedding_modules() + list(self.encoder.layers[:m])

    def train(self, mode: bool = True) -> "NuggetModel":
        super().train(mode)
        # The frozen bottom always runs as at inference (no dropout): the scorer's features are fixed.
        # The adapters take the embedding dropout's flag from the embedding modules, so this covers it.
        for module in self.frozen_modules():
            module.eval()
        return self

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def new_parameter_names(self) -> set[str]:
        """Parameters that learn a new job (``lr_scratch``): scorer, type embeddings, W^V and the whole demo
        decoder, from scratch or warm-started from encoder layers. A warm-started decoder's copied layers must
        learn causal next-token prediction through a new cross-attention: at the pretrained lr (1e-4) they
        barely moved. What ``initialize_from`` loaded is pretrained and is left out by the caller."""
        prefixes = ("scorer.", "type_embedding.", "value_projection.")
        demo_decoder = self.config.architecture != "mbart"
        return {name for name, _ in self.named_parameters()
                if name.startswith(prefixes) or (demo_decoder and name.startswith("decoder."))}

    def initialize_from(self, folder: str | os.PathLike) -> set[str]:
        """Load the encoder and decoder of a saved model (the shared r = 1 seq2seq model, ``bottleneck: tokens``)
        into this one; returns the loaded parameter names. The parts this model adds (scorer, e^n/e^o, W^V)
        keep their initialisation. Refused, naming the folder and the keys, when the two models' structure or
        target side differ, or when a stored tensor has no place here."""
        from multivec.io.safe_loading import read_safetensors

        folder = Path(folder)
        if not (folder / CONFIG_FILE).exists():
            raise FileNotFoundError(f"{folder / CONFIG_FILE} is missing: not a saved NUGGET model to start from")
        base = read_json(folder / CONFIG_FILE)["model"]
        mine = self.config.to_dict()
        differ = [key for key in INIT_MUST_MATCH if base.get(key) != mine.get(key)]
        if differ:
            details = "; ".join(f"{k}={base.get(k)!r} there, {mine.get(k)!r} here" for k in differ)
            raise ValueError(f"{folder}: cannot start from this model: {details}")
        if self.processor.target_tokenizer.vocab_size != read_json(
                folder / TARGET_TOKENIZER_DIR / "target_tokenizer.json")["vocab_size"]:
            raise ValueError(f"{folder}: its target vocabulary differs from this model's (load its target_tokenizer/)")
        tensors = read_safetensors(folder / WEIGHTS_FILE)
        own = self.state_dict()
        foreign = sorted(name for name in tensors if name not in own)
        if foreign:
            raise ValueError(f"{folder / WEIGHTS_FILE}: tensors with no place in this model: {foreign[:5]}")
        shapes = [name for name, value in tensors.items() if tuple(value.shape) != tuple(own[name].shape)]
        if shapes:
            raise ValueError(f"{folder / WEIGHTS_FILE}: shapes differ from this model's for {shapes[:5]}")
        self.load_state_dict(tensors, strict=False)
        return {name for name, _ in self.named_parameters() if name in tensors}

    # -- the model -------------------------------------------------------------------------------
    def encode_bottom(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The token states the scorer reads: embeddings and layers 1..l (l = ``scorer_layer``)."""
        return self.encoder.run_bottom(input_ids, attention_mask, self.config.scorer_layer)

    @property
    def bottom_is_pretrained(self) -> bool:
        """True when everything below the scorer is frozen, so ``encode_bottom`` equals the pretrained
        encoder's and can be computed once for every model on that encoder (``frozen_bottom.py``)."""
        return self.config.frozen_bottom >= self.config.scorer_layer

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
               sentence_end_mask: torch.Tensor | None = None, bottom_states: torch.Tensor | None = None) -> Nuggets:
        """Nuggets of a right-padded batch. ``sentence_end_mask`` (B × n, 1 at sentence-final tokens, see
        ``NuggetProcessor.sentence_end_masks``) is required by the sentence-boundary selector and ignored
        otherwise.
        ``bottom_states`` (B × n × d): ``encode_bottom``'s output computed elsewhere (a shared cache)."""
        cfg, enc = self.config, self.encoder
        token_mask = attention_mask.bool()
        # The frozen bottom has requires_grad False and no trainable input, so autograd records nothing
        # there; above it (or past the feedback), activations carry gradients to the trainable parts.
        hidden = self.encode_bottom(input_ids, attention_mask) if bottom_states is None else bottom_states
        layer_mask = enc.self_attention_mask(hidden, attention_mask)

        indices = nugget_mask = all_scores = None
        if cfg.bottleneck == "nuggets":
            if self.scorer is not None:
                all_scores = self.scorer(hidden).float()
                indices, nugget_mask = select_top_k(all_scores, token_mask, cfg.ratio)
            else:
                indices, nugget_mask = self.rule_selector(input_ids, token_mask, sentence_end_mask)
            if self.type_embedding is not None:
                # scatter_add, not scatter: padded slots point at position 0 and must not overwrite it.
                hits = torch.zeros_like(input_ids).scatter_add(1, indices, nugget_mask.long())
                hidden = hidden + self.type_embedding((hits > 0).long())

        for i in range(cfg.scorer_layer, enc.num_layers):
            hidden = enc.run_layer(i, hidden, layer_mask)
        hidden = enc.finalize(hidden)

        if cfg.bottleneck == "tokens":  # every token state, in order (r = 1)
            positions = torch.arange(hidden.shape[1], device=hidden.device).expand(hidden.shape[0], -1)
            return Nuggets(hidden, token_mask, positions, None)
        if cfg.bottleneck == "mean":
            weights = token_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1, keepdim=True) / weights.sum(1, keepdim=True).clamp(min=1)
            ones = torch.ones(pooled.shape[:2], dtype=torch.bool, device=pooled.device)
            return Nuggets(pooled, ones, None, None)
        selected = hidden.gather(1, indices.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        scores = all_scores.gather(1, indices) if all_scores is not None else None
        return Nuggets(self.value_projection(selected), nugget_mask, indices, scores)

    def decoder_memory(self, nuggets: Nuggets) -> torch.Tensor:
        """What the decoder cross-attends to: the nugget vectors, plus (``decoder_memory_positions``) the
        decoder's position embedding of each nugget's source position. The mean bottleneck has none."""
        if not self.config.decoder_memory_positions or nuggets.indices is None:
            return nuggets.vectors
        return nuggets.vectors + self.decoder.position_memory(nuggets.indices).to(nuggets.vectors.dtype)

    def memory_bias(self, nuggets: Nuggets) -> torch.Tensor:
        """The decoder's cross-attention mask: padding blocked, plus the residual scores (eq. 5) if enabled."""
        scores = nuggets.scores if self.config.residual else None
        return cross_attention_bias(nuggets.mask, scores, self.decoder.head_dim, computation_dtype(nuggets.vectors))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, decoder_input_ids: torch.Tensor,
                labels: torch.Tensor, sentence_end_mask: torch.Tensor | None = None,
                bottom_states: torch.Tensor | None = None) -> torch.Tensor:
        """Mean token cross-entropy of ``labels`` (IGNORE_INDEX where nothing is predicted).
        ``bottom_states``: ``encode_bottom``'s output from a cache (see ``training.BottomCache``)."""
        nuggets = self.encode(input_ids, attention_mask, sentence_end_mask, bottom_states)
        hidden, _ = self.decoder(decoder_input_ids, self.decoder_memory(nuggets), self.memory_bias(nuggets))
        predicted = labels != IGNORE_INDEX
        # Project only the positions with a label: the output layer is the costliest matrix product.
        logits = self.decoder.logits(hidden[predicted])
        return sequence_nll(logits, labels, predicted)
