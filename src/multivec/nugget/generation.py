"""Decoding text from nuggets: greedy search and beam search (paper §4: reconstruction and MT).

The decoder cross-attends to the nuggets with the same additive bias as in training (the residual
connection, eq. 5). Sequences start with the decoder start token (the target eos, as in mBART)
followed by the tokenizer's forced prefix (``<s>``, ``[CLS]`` or the target language code) and end
at eos. Beam search stops a document as soon as it has ``num_beams`` finished hypotheses and ranks
them by log-probability / length**length_penalty, so ``num_beams=1`` reproduces greedy search.
"""

from __future__ import annotations

from typing import Sequence

import torch

from multivec.nugget.modeling import NuggetModel, Nuggets


def _start_ids(model: NuggetModel, rows: int) -> torch.Tensor:
    tok = model.target_tokenizer
    start = torch.tensor([tok.eos_id] + list(tok.prefix_ids), dtype=torch.long, device=model.device)
    return start.unsqueeze(0).expand(rows, -1).contiguous()


def _next_log_probs(model: NuggetModel, step_ids, memory, bias, cache):
    hidden, cache = model.decoder(step_ids, memory, bias, past_key_values=cache, use_cache=True)
    return torch.log_softmax(model.decoder.logits(hidden[:, -1]).float(), dim=-1), cache


@torch.inference_mode()
def greedy_decode(model: NuggetModel, nuggets: Nuggets, max_new_tokens: int) -> list[list[int]]:
    """Generated token ids per document (without prefix and eos)."""
    eos = model.target_tokenizer.eos_id
    memory, bias = nuggets.vectors, model.memory_bias(nuggets)
    rows = memory.shape[0]
    step_ids, cache = _start_ids(model, rows), None
    outputs: list[list[int]] = [[] for _ in range(rows)]
    finished = [False] * rows
    for _ in range(max_new_tokens):
        log_probs, cache = _next_log_probs(model, step_ids, memory, bias, cache)
        chosen = log_probs.argmax(dim=-1)
        for row, token in enumerate(chosen.tolist()):
            if finished[row]:
                continue
            if token == eos:
                finished[row] = True
            else:
                outputs[row].append(token)
        if all(finished):
            break
        step_ids = chosen.unsqueeze(1)
    return outputs


@torch.inference_mode()
def beam_search(model: NuggetModel, nuggets: Nuggets, max_new_tokens: int, num_beams: int = 5,
                length_penalty: float = 1.0) -> list[list[int]]:
    """Best hypothesis per document (token ids without prefix and eos)."""
    eos = model.target_tokenizer.eos_id
    batch, beams = nuggets.vectors.shape[0], num_beams
    memory = nuggets.vectors.repeat_interleave(beams, dim=0)
    bias = model.memory_bias(nuggets).repeat_interleave(beams, dim=0)
    beam_scores = torch.zeros(batch, beams, device=memory.device)
    beam_scores[:, 1:] = float("-inf")  # all beams start identical: expand only the first
    tokens = torch.zeros(batch * beams, 0, dtype=torch.long, device=memory.device)
    finished: list[list[tuple[float, list[int]]]] = [[] for _ in range(batch)]
    done = [False] * batch
    step_ids, cache = _start_ids(model, batch * beams), None

    for _ in range(max_new_tokens):
        log_probs, cache = _next_log_probs(model, step_ids, memory, bias, cache)
        vocab = log_probs.shape[-1]
        totals = (beam_scores.view(-1, 1) + log_probs).view(batch, beams * vocab)
        top_scores, top_ids = totals.topk(2 * beams, dim=1)
        source_beam, token_of = top_ids // vocab, top_ids % vocab
        new_scores = torch.full((batch, beams), float("-inf"), device=memory.device)
        new_source = torch.zeros(batch, beams, dtype=torch.long, device=memory.device)
        new_token = torch.full((batch, beams), eos, dtype=torch.long, device=memory.device)
        length = tokens.shape[1] + 1
        for b in range(batch):
            if done[b]:
                continue
            kept = 0
            for rank in range(2 * beams):
                score, src, tok = float(top_scores[b, rank]), int(source_beam[b, rank]), int(token_of[b, rank])
                if tok == eos:
                    if rank < beams:  # an eos outside the top beams would not have survived anyway
                        finished[b].append((score / length ** length_penalty, tokens[b * beams + src].tolist()))
                    continue
                new_scores[b, kept], new_source[b, kept], new_token[b, kept] = score, src, tok
                kept += 1
                if kept == beams:
                    break
            done[b] = len(finished[b]) >= beams
        if all(done):
            break
        flat_source = (torch.arange(batch, device=memory.device).unsqueeze(1) * beams + new_source).view(-1)
        tokens = torch.cat([tokens[flat_source], new_token.view(-1, 1)], dim=1)
        cache.reorder_cache(flat_source)
        beam_scores = new_scores
        step_ids = new_token.view(-1, 1)
    else:
        # Length limit reached: unfinished beams compete with the finished ones.
        length = tokens.shape[1]
        for b in range(batch):
            if not done[b]:
                for k in range(beams):
                    score = float(beam_scores[b, k])
                    if score > float("-inf"):
                        finished[b].append((score / max(length, 1) ** length_penalty, tokens[b * beams + k].tolist()))
    return [max(hyps, key=lambda h: h[0])[1] if hyps else [] for hyps in finished]


@torch.inference_mode()
def generate_texts(model: NuggetModel, texts: Sequence[str], num_beams: int = 5, max_new_tokens: int | None = None,
                   batch_size: int = 16, max_source_tokens: int | None = None) -> list[str]:
    """Encode each text to nuggets and decode it back (AE) or into the target language (MT)."""
    model.eval()
    max_new_tokens = max_new_tokens or model.config.max_target_tokens
    sources = model.tokenize_sources(texts, max_source_tokens)
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))  # length-sorted: little padding
    results: list[str] = [""] * len(sources)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        ids, mask = model.collate_sources([sources[i] for i in chunk])
        nuggets = model.encode(ids, mask)
        if num_beams == 1:
            outputs = greedy_decode(model, nuggets, max_new_tokens)
        else:
            outputs = beam_search(model, nuggets, max_new_tokens, num_beams)
        for i, out in zip(chunk, outputs):
            results[i] = model.target_tokenizer.decode(out)
    return results
