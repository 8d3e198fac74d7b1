"""Sentences -> propositions in natural language (Chen et al. 2023, §3.3 step 1, App. A.1-A.2).

One interface, ``Segmenter.segment(sentences) -> [claims or None]`` (``None``: a malformed or
empty generation, dropped and counted by the caller), three implementations:

- ``LLMSegmenter`` (paper): the App. A.1 one-shot prompt through a cached chat client
  (``llm_client.py``);
- ``Seq2SeqSegmenter`` (paper): the T5 model distilled from the LLM's outputs (App. A.2),
  generating the same numbered-claims text, parsed the same way;
- ``ClauseSegmenter`` (**demo stand-in**, offline): splits a sentence at clause boundaries
  (``;``/``:``, parentheses, and a comma or conjunction followed by a clause marker such as
  *which*, *who*, *while*, *and*; a relative clause ", who ...," is lifted out and the main
  clause joined around it), over NLTK Treebank words. Its claims are the sentence's own words;
  it is far cruder than an LLM and every table that depends on it says so.

And, for the training pairs only, ``OracleSegmenter`` (**demo stand-in**, the demo default):
PropSegment's *human* segmentations of the sentences of the split the pairs come from (TEST),
as the char spans of their tokens, with no alignment step. It segments sentences by id, never
text, and refuses any sentence, document or cluster of the evaluation split (DEV). It has no
Table 7 row: scored against the human segmentations it is 100 by construction, and it cannot
segment a sentence it has no human segmentation for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, Sequence

from multivec.subencoder.data.alignment import word_spans


class Segmenter(Protocol):
    name: str
    stand_in: bool

    def segment(self, sentences: Sequence[str]) -> list[list[str] | None]: ...


# Words that open a new clause after a comma (or after "and"/"but" when a subject follows).
CLAUSE_MARKERS = frozenset(
    "which who whom whose where when while whereas although though because since after before "
    "until unless if as including making becoming born followed known".split())
COORDINATORS = frozenset({"and", "but", "or", "yet", "so"})
SUBJECT_WORDS = frozenset("he she it they we i you this that these those there his her its their the a an".split())
OPENING, CLOSING = "([", ")]"
HARD_BREAKS = frozenset(";:")
RELATIVES = frozenset("which who whom whose where".split())


@dataclass
class ClauseSegmenter:
    """Demo stand-in: rule-based clause splitting (no LLM, no trained model)."""

    min_words: int = 3
    name: str = "clause-splitter (demo stand-in)"
    stand_in: bool = True

    def clause_runs(self, sentence: str) -> list[list[tuple[int, int]]]:
        """Each clause as character spans of its contiguous runs of words.

        A relative clause opened after a comma (", who ...") closes at the next comma, and the
        main clause resumes after it, so "A, who B, did C" gives "A did C" and "who B".
        Parenthesised text lies inside its clause; one of 2+ words is also a clause of its own.
        """
        words = word_spans(sentence)
        texts = [sentence[a:b] for a, b in words]
        clauses: list[list[int]] = [[]]
        aside: list[int] | None = None
        asides: list[list[int]] = []
        resume: int | None = None  # clause to go back to when an embedded relative clause ends
        for i, text in enumerate(texts):
            lower = text.lower()
            if text in OPENING and aside is None:
                aside = []
                clauses[-1].append(i)
                continue
            if aside is not None:
                clauses[-1].append(i)
                if text in CLOSING:
                    asides.append(aside)
                    aside = None
                else:
                    aside.append(i)
                continue
            previous = texts[i - 1] if i else ""
            following = texts[i + 1].lower() if i + 1 < len(texts) else ""
            if text in HARD_BREAKS:
                clauses.append([])
                resume = None
                continue
            if resume is not None and text == "," and following not in CLAUSE_MARKERS | COORDINATORS:
                clauses.append(clauses.pop(resume))  # the main clause goes on after the relative one
                resume = None
                continue
            if lower in CLAUSE_MARKERS and previous == ",":
                if lower in RELATIVES and resume is None:
                    resume = len(clauses) - 1
                clauses.append([])
            elif lower in COORDINATORS and (previous == "," or following in SUBJECT_WORDS):
                clauses.append([])
                resume = None
                continue  # the coordinator belongs to neither clause
            clauses[-1].append(i)
        if aside:
            asides.append(aside)

        def content(clause):
            return [i for i in clause if re.search(r"\w", texts[i])]

        merged: list[list[int]] = []
        for clause in clauses:
            if merged and len(content(clause)) < self.min_words:
                merged[-1] = sorted(merged[-1] + clause)
            elif content(clause):
                merged.append(sorted(clause))
        if len(merged) > 1 and len(content(merged[0])) < self.min_words:
            merged[1] = sorted(merged[0] + merged[1])
            merged.pop(0)
        merged += [a for a in asides if len(content(a)) >= 2]
        runs = []
        for clause in merged:
            kept = list(clause)
            while kept and not re.search(r"\w", texts[kept[-1]]):
                kept.pop()
            while kept and not re.search(r"\w", texts[kept[0]]):
                kept.pop(0)
            if not kept:
                continue
            spans: list[tuple[int, int]] = []
            for k, i in enumerate(kept):
                if k and i == kept[k - 1] + 1:
                    spans[-1] = (spans[-1][0], words[i][1])
                else:
                    spans.append(words[i])
            # a run that is only punctuation (a comma left between two parts) is dropped
            runs.append([(a, b) for a, b in spans if re.search(r"\w", sentence[a:b])])
        return runs

    def segment(self, sentences: Sequence[str]) -> list[list[str] | None]:
        out = []
        for sentence in sentences:
            claims = [" ".join(sentence[a:b].strip(" ,") for a, b in runs) for runs in self.clause_runs(sentence)]
            out.append([c for c in claims if c] or None)
        return out


@dataclass
class LLMSegmenter:
    """Paper: the App. A.1 prompt through ``ChatClient`` (cached; offline replay)."""

    client: "object"
    stand_in: bool = False

    @property
    def name(self) -> str:
        return f"LLM few-shot ({self.client.model})"

    def segment(self, sentences: Sequence[str]) -> list[list[str] | None]:
        return [self.client.segment(s) for s in sentences]


@dataclass
class Seq2SeqSegmenter:
    """Paper: the T5 model fine-tuned on the LLM's claims (App. A.2), greedy decoding."""

    model_dir: str
    batch_size: int = 32
    max_new_tokens: int = 256
    stand_in: bool = False

    @property
    def name(self) -> str:
        return f"seq2seq distilled ({self.model_dir})"

    def segment(self, sentences: Sequence[str]) -> list[list[str] | None]:
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from multivec.io.safe_loading import from_dag_folder
        from multivec.subencoder.data.llm_client import parse_claims

        tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        model = from_dag_folder(AutoModelForSeq2SeqLM, self.model_dir).eval()  # safetensors only
        out: list[list[str] | None] = []
        with torch.no_grad():
            for start in range(0, len(sentences), self.batch_size):
                batch = tokenizer(list(sentences[start:start + self.batch_size]), return_tensors="pt",
                                  padding=True, truncation=True)
                generated = model.generate(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                                           max_new_tokens=self.max_new_tokens)
                for text in tokenizer.batch_decode(generated, skip_special_tokens=True):
                    out.append(parse_claims(claims_as_lines(text)))
        return out


def claims_as_target(claims: Sequence[str]) -> str:
    """The seq2seq target for a list of claims: ``1. a 2. b`` on one line (T5 drops newlines)."""
    return " ".join(f"{i}. {c}" for i, c in enumerate(claims, start=1))


def claims_as_lines(text: str) -> str:
    """Inverse of ``claims_as_target``: one numbered claim a line."""
    return re.sub(r"\s+(?=\d+\.\s)", "\n", text.strip())


@dataclass
class SegmentCounts:
    sentences: int = 0
    segmented: int = 0
    malformed_or_empty: int = 0
    propositions: int = 0
    propositions_unaligned: int = 0  # no word of the claim is in the sentence: dropped


ORACLE_NAME = "oracle segmenter (human segmentations)"


def _token_runs(token_spans: Sequence[tuple[int, int]], indices) -> list[list[int]]:
    """Char spans of the runs of consecutive token indices (a run ``i..j`` is ``[start_i, end_j]``)."""
    runs: list[list[int]] = []
    previous = None
    for i in sorted(indices):
        if previous is not None and i == previous + 1:
            runs[-1][1] = token_spans[i][1]
        else:
            runs.append([token_spans[i][0], token_spans[i][1]])
        previous = i
    return runs


@dataclass
class OracleSegmenter:
    """Demo stand-in: PropSegment's human segmentations of the training split.

    ``sentences``: PropSegment sentences by key (``cluster:document:index``), their human
    segmentation attached (``propositions``, None where no rater gave a usable one); ``source``:
    the propositions file, named in errors. Build it with ``oracle_from_propsegment``.
    """

    sentences: dict
    source: str = "PropSegment propositions"
    name: str = ORACLE_NAME
    stand_in: bool = True

    def segment(self, sentences: Sequence[str]) -> list[list[str] | None]:
        raise TypeError(f"the {ORACLE_NAME} segments sentences by id (segment_and_align), not by text; it has no "
                        "Table 7 row and cannot be subencoder.evaluation.segmenter")

    def rows(self, sentences: dict[str, str]) -> tuple[list[dict], "SegmentCounts"]:
        """``segment_and_align``'s rows and counts, the propositions being the human ones: ``text`` their
        tokens in order, ``char_spans`` the runs of their tokens. A sentence id the oracle does not know,
        or whose text differs from the human-segmented sentence's, stops with a ValueError naming it;
        a known sentence with no usable human segmentation is counted (``malformed_or_empty``)."""
        counts = SegmentCounts(sentences=len(sentences))
        rows = []
        for sentence_id, text in sentences.items():
            human = self.sentences.get(sentence_id)
            if human is None:
                raise ValueError(f"{self.source}: sentence id {sentence_id!r} of the pairs is not a sentence of the "
                                 f"oracle's clusters ({len(self.sentences)} sentences)")
            if human.text != text:
                raise ValueError(f"{self.source}: sentence {sentence_id!r} has another text in the pairs "
                                 f"({text[:60]!r}) than in the clusters ({human.text[:60]!r})")
            if not human.propositions:
                counts.malformed_or_empty += 1
                rows.append({"id": sentence_id, "sentence": text, "propositions": []})
                continue
            counts.segmented += 1
            props = []
            for indices in human.propositions:
                if not indices:
                    counts.propositions_unaligned += 1
                    continue
                props.append({"text": " ".join(text[a:b] for a, b in (human.token_spans[i] for i in sorted(indices))),
                              "char_spans": _token_runs(human.token_spans, indices)})
            counts.propositions += len(props)
            rows.append({"id": sentence_id, "sentence": text, "propositions": props})
        return rows, counts


def oracle_from_propsegment(clusters_path, propositions_path, evaluation_clusters_path) -> OracleSegmenter:
    """The oracle over ``clusters_path`` (the split the training pairs come from) with the human
    segmentations of ``propositions_path``. It stops, naming the overlap, if any cluster id, document
    id or sentence text of those clusters is also in ``evaluation_clusters_path`` (the split the
    tables evaluate on): the oracle must never read an evaluation sentence's human segmentation."""
    from multivec.subencoder.data.propsegment import attach_segmentations, read_clusters

    clusters = read_clusters(clusters_path)
    evaluation = read_clusters(evaluation_clusters_path)
    overlap = {
        "clusters": {c.cluster_id for c in clusters} & {c.cluster_id for c in evaluation},
        "documents": {d for c in clusters for d in c.documents} & {d for c in evaluation for d in c.documents},
        "sentence texts": ({s.text for c in clusters for doc in c.documents.values() for s in doc}
                           & {s.text for c in evaluation for doc in c.documents.values() for s in doc}),
    }
    shared = {what: sorted(ids) for what, ids in overlap.items() if ids}
    if shared:
        raise ValueError(f"oracle segmenter: {clusters_path} shares "
                         + "; ".join(f"{len(ids)} {what} (e.g. {ids[0][:60]!r})" for what, ids in shared.items())
                         + f" with the evaluation split {evaluation_clusters_path}; it must not read them")
    attach_segmentations(clusters, propositions_path)
    sentences = {s.key: s for c in clusters for doc in c.documents.values() for s in doc}
    return OracleSegmenter(sentences, source=str(propositions_path))


def segment_and_align(sentences: dict[str, str], segmenter: Segmenter, alignment: str = "authors",
                      ) -> tuple[list[dict], SegmentCounts]:
    """Each sentence's claims with their App. A.3 char spans (``alignment``: the mode of
    ``alignment.ALIGNMENT_MODES``, config ``subencoder.data.alignment``); rows ``{id, sentence,
    propositions: [{text, char_spans}]}``. Malformed/empty generations and claims with no aligned
    word (``propositions_unaligned``) are counted and dropped, never kept with an empty mask; a
    sentence left with no proposition gets an empty list."""
    from multivec.subencoder.data.alignment import align_batch

    if isinstance(segmenter, OracleSegmenter):  # human token sets: no natural language to align
        return segmenter.rows(sentences)
    ids = list(sentences)
    claims = segmenter.segment([sentences[i] for i in ids])
    if len(claims) != len(ids):
        raise RuntimeError(f"segmenter {segmenter.name!r} returned {len(claims)} results for {len(ids)} sentences")
    counts = SegmentCounts(sentences=len(ids))
    wanted = [(sentences[i], c) for i, cs in zip(ids, claims) for c in (cs or [])]
    spans = iter(align_batch(wanted, mode=alignment))
    rows = []
    for sentence_id, cs in zip(ids, claims):
        if cs is None:
            counts.malformed_or_empty += 1
            rows.append({"id": sentence_id, "sentence": sentences[sentence_id], "propositions": []})
            continue
        counts.segmented += 1
        props = []
        for claim in cs:
            char_spans = next(spans)
            if char_spans:
                props.append({"text": claim, "char_spans": char_spans})
            else:
                counts.propositions_unaligned += 1
        counts.propositions += len(props)
        rows.append({"id": sentence_id, "sentence": sentences[sentence_id], "propositions": props})
    return rows, counts


def segmenter_from_config(kind: str, settings: dict, llm: dict | None = None, model_dir: str | None = None,
                          oracle_files: dict | None = None):
    """``clause`` (demo stand-in), ``llm`` (App. A.1 prompt), ``seq2seq`` (distilled T5) or ``oracle``
    (demo stand-in; ``oracle_files``: ``clusters``, ``propositions`` of the pairs' split and
    ``evaluation_clusters``, as ``oracle_from_propsegment`` takes them)."""
    if kind == "oracle":
        if not oracle_files:
            raise ValueError("segmenter 'oracle' needs the PropSegment files of the pairs' split and the evaluation "
                             "split's clusters")
        return oracle_from_propsegment(oracle_files["clusters"], oracle_files["propositions"],
                                       oracle_files["evaluation_clusters"])
    if kind == "clause":
        return ClauseSegmenter(min_words=int(settings.get("min_words", 3)))
    if kind == "llm":
        from multivec.subencoder.data.llm_client import client_from_config

        return LLMSegmenter(client_from_config(llm or {}))
    if kind == "seq2seq":
        if not model_dir:
            raise ValueError("segmenter 'seq2seq' needs the distilled model's folder")
        return Seq2SeqSegmenter(model_dir)
    raise ValueError(f"subencoder.segmenter kind {kind!r}: expected 'oracle', 'clause', 'llm' or 'seq2seq'")
