"""Decoding text from nuggets: greedy search and beam search (paper §4: reconstruction and MT).

The decoder cross-attends to the nuggets with the same additive bias as in training (the residual
connection, eq. 5). Sequences start with the decoder start token (the target eos, as in mBART)
followed by the tokenizer's forced prefix (``<s>``, ``[CLS]`` or the target language code) and end
at eos. A hypothesis's score is its summed log-probability (eos included when it ends there) divided
by length**length_penalty, the length counting that eos (``hypothesis_scores`` recomputes it by teacher
forcing). Beam search stops a document as soon as it has ``num_beams`` finished hypotheses, so
``num_beams=1`` reproduces greedy search. A plain beam can lose the greedy path (its prefix may fall
out of the beam and the survivors end worse), so for ``num_beams > 1`` the greedy hypothesis joins the
candidates: beam search never returns a lower-scored hypothesis than greedy search (§5.1 decodes with
beam 5).
"""

from __future__ import annotations

from typing import Sequence

import torch

from multivec.nugget.modeling import NuggetModel, Nuggets


def _start_ids(model: NuggetModel, rows: int) -> torch.Tensor:
    tok = model.processor.target_tokenizer
    start = torch.tensor([tok.eos_id] + list(tok.prefix_ids), dtype=torch.long, device=model.device)
    return start.unsqueeze(0).expand(rows, -1).contiguous()


def _next_log_probs(model: NuggetModel, step_ids, memory, bias, cache):
    hidden, cache = model.decoder(step_ids, memory, bias, past_key_values=cache, use_cache=True)
    return torch.log_softmax(model.decoder.logits(hidden[:, -1]).float(), dim=-1), cache


def _greedy(model: NuggetModel, nuggets: Nuggets, max_new_tokens: int,
            length_penalty: float = 1.0) -> tuple[list[list[int]], list[float]]:
    """Greedy hypotheses (without prefix and eos) and their scores (see the module docstring)."""
    eos = model.processor.target_tokenizer.eos_id
    memory, bias = model.decoder_memory(nuggets), model.memory_bias(nuggets)
    rows = memory.shape[0]
    step_ids, cache = _start_ids(model, rows), None
    outputs: list[list[int]] = [[] for _ in range(rows)]
    totals = [0.0] * rows
    finished = [False] * rows
    for _ in range(max_new_tokens):
        log_probs, cache = _next_log_probs(model, step_ids, memory, bias, cache)
        best, chosen = log_probs.max(dim=-1)
        for row, (token, log_prob) in enumerate(zip(chosen.tolist(), best.tolist())):
            if finished[row]:
                continue
            totals[row] += log_prob
            if token == eos:
                finished[row] = True
            else:
                outputs[row].append(token)
        if all(finished):
            break
        step_ids = chosen.unsqueeze(1)
    lengths = [len(out) + int(done) for out, done in zip(outputs, finished)]
    return outputs, [total / max(n, 1) ** length_penalty for total, n in zip(totals, lengths)]


@torch.inference_mode()
def greedy_decode(model: NuggetModel, nuggets: Nuggets, max_new_tokens: int) -> list[list[int]]:
    """Generated token ids per document (without prefix and eos)."""
    return _greedy(model, nuggets, max_new_tokens)[0]


@torch.inference_mode()
def hypothesis_scores(model: NuggetModel, nuggets: Nuggets, hypotheses: Sequence[Sequence[int]],
                      max_new_tokens: int, length_penalty: float = 1.0) -> list[float]:
    """Each hypothesis's score by teacher forcing: summed log-probabilities / length**length_penalty.

    A hypothesis shorter than ``max_new_tokens`` ended at eos (its log-probability and one position
    count); one of ``max_new_tokens`` tokens was cut by the length limit (no eos), as the decoders do.
    """
    tok = model.processor.target_tokenizer
    start = [tok.eos_id] + list(tok.prefix_ids)
    memory, bias = model.decoder_memory(nuggets), model.memory_bias(nuggets)
    scores = []
    for row, hyp in enumerate(hypotheses):
        targets = list(hyp) + ([tok.eos_id] if len(hyp) < max_new_tokens else [])
        inputs = torch.tensor([start + list(hyp)], dtype=torch.long, device=model.device)
        hidden, _ = model.decoder(inputs, memory[row:row + 1], bias[row:row + 1])
        log_probs = torch.log_softmax(model.decoder.logits(hidden[0, len(start) - 1:]).float(), dim=-1)
        total = float(log_probs[torch.arange(len(targets)), torch.tensor(targets, device=model.device)].sum())
        scores.append(total / max(len(targets), 1) ** length_penalty)
    return scores


@torch.inference_mode()
def beam_search(model: NuggetModel, nuggets: Nuggets, max_new_tokens: int, num_beams: int = 5,
                length_penalty: float = 1.0) -> list[list[int]]:
    """Best hypothesis per document (token ids without prefix and eos)."""
    eos = model.processor.target_tokenizer.eos_id
    batch, beams = nuggets.vectors.shape[0], num_beams
    memory = model.decoder_memory(nuggets).repeat_interleave(beams, dim=0)
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
    if beams > 1:  # the greedy path competes too (see the module docstring)
        greedy, greedy_scores = _greedy(model, nuggets, max_new_tokens, length_penalty)
        for b in range(batch):
            finished[b].append((greedy_scores[b], greedy[b]))
    return [max(hyps, key=lambda h: h[0])[1] if hyps else [] for hyps in finished]


@torch.inference_mode()
def generate(model: NuggetModel, texts: Sequence[str], num_beams: int = 5, max_new_tokens: int | None = None,
             batch_size: int = 16, max_source_tokens: int | None = None) -> list[tuple[str, int]]:
    """Encode each text to nuggets and decode it back (AE) or into the target language (MT).

    Returns, per text, the decoded text and the number of vectors it was decoded from.
    """
    model.eval()
    max_new_tokens = max_new_tokens or model.config.max_target_tokens
    sources = model.processor.tokenize_sources(texts, max_source_tokens)
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))  # length-sorted: little padding
    results: list[tuple[str, int]] = [("", 0)] * len(sources)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        ids, mask = model.processor.collate_sources([sources[i] for i in chunk], model.device)
        nuggets = model.encode(ids, mask)
        if num_beams == 1:
            outputs = greedy_decode(model, nuggets, max_new_tokens)
        else:
            outputs = beam_search(model, nuggets, max_new_tokens, num_beams)
        counts = nuggets.mask.sum(dim=1).tolist()
        for i, out, count in zip(chunk, outputs, counts):
            results[i] = (model.processor.target_tokenizer.decode(out), int(count))
    return results


def generate_texts(model: NuggetModel, texts: Sequence[str], num_beams: int = 5, max_new_tokens: int | None = None,
                   batch_size: int = 16, max_source_tokens: int | None = None) -> list[str]:
    """``generate``'s texts only."""
    return [text for text, _ in generate(model, texts, num_beams, max_new_tokens, batch_size, max_source_tokens)]
