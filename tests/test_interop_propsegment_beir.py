"""PropSegment's atomic-fact retrieval as BEIR folders and MTEB tasks (multivec.interop.propsegment_beir,
multivec.interop.mteb_tasks): on a hand-made retrieval set, each proposition's text is its tokens as the sentence
joins them, the qrels are the TREC export's, each protocol's candidates leave out what the project's protocol
removes, and all-MiniLM-L6-v2 through ``mteb.evaluate`` gives the P@1 and R@5 of the project's own ranking of the
same vectors; on the real dev set, MTEB's P@1 against Table 1's token_subset row (the test's docstring)."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest

from multivec.interop.propsegment_beir import proposition_text, write_propsegment_beir
from multivec.subencoder.evaluation.retrieval_set import Proposition, RetrievalSet

MTEB_ROUNDING = 1e-5  # MTEB writes its scores on a 0-1 scale rounded to 5 decimals
PROTOCOLS = ("authors", "own_sentence_excluded")

# (document, sentence index) -> text; PropSegment-like tokens: words, "'s", single punctuation marks
SENTENCES = {
    ("d1", 0): "Marie Curie, who was born in Warsaw, won two Nobel Prizes.",
    ("d1", 1): "Her husband's name was Pierre (a physicist).",
    ("d2", 0): "Curie, a Polish-born physicist, received the Nobel Prize twice.",
    ("d2", 1): "She was born in Warsaw in 1867.",
    ("d3", 0): "Pierre Curie was a French physicist who married Marie in 1895.",
    ("d3", 1): "Warsaw is the capital of Poland.",
}
# Candidates, in the retrieval set's order (document, sentence, reference segmentation): (key, token indices)
CANDIDATES = [
    (("d1", 0), (0, 1, 4, 5, 6, 7)),  # Marie Curie was born in Warsaw
    (("d1", 0), (0, 1, 9, 10, 11, 12, 13)),  # Marie Curie won two Nobel Prizes.
    (("d1", 1), (0, 1, 2, 3, 4, 5)),  # Her husband's name was Pierre
    (("d1", 1), (5, 6, 7, 8, 9)),  # Pierre (a physicist)
    (("d2", 0), (0, 2, 3, 4, 5, 6)),  # Curie a Polish-born physicist
    (("d2", 0), (0, 8, 9, 10, 11, 12, 13)),  # Curie received the Nobel Prize twice.
    (("d2", 1), (0, 1, 2, 3, 4)),  # She was born in Warsaw
    (("d2", 1), (0, 1, 2, 5, 6)),  # She was born in 1867
    (("d3", 0), (0, 1, 2, 3, 4, 5)),  # Pierre Curie was a French physicist
    (("d3", 0), (0, 1, 7, 8, 9, 10, 11)),  # Pierre Curie married Marie in 1895.
    (("d3", 1), (0, 1, 2, 3, 4, 5, 6)),  # Warsaw is the capital of Poland.
]
# Queries: (key, token indices, gold candidate indices); three are candidates, one (the last) is not.
QUERIES = [
    (("d1", 0), (0, 1, 4, 5, 6, 7), {6}),
    (("d1", 0), (0, 1, 9, 10, 11, 12, 13), {5}),
    (("d1", 1), (5, 6, 7, 8, 9), {8, 4}),
    (("d3", 0), (0, 1, 7, 8), {2}),  # Pierre Curie married Marie
]
TEXTS = ["Marie Curie was born in Warsaw", "Marie Curie won two Nobel Prizes.", "Her husband's name was Pierre",
         "Pierre (a physicist)", "Curie a Polish-born physicist", "Curie received the Nobel Prize twice.",
         "She was born in Warsaw", "She was born in 1867", "Pierre Curie was a French physicist",
         "Pierre Curie married Marie in 1895.", "Warsaw is the capital of Poland."]


def tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"'s|\w+|[^\w\s]", text)]


def hand_made_set() -> RetrievalSet:
    candidates = [Proposition(key[0], key[1], indices) for key, indices in CANDIDATES]
    queries = [Proposition(key[0], key[1], indices) for key, indices, _ in QUERIES]
    return RetrievalSet(sentences=dict(SENTENCES), token_spans={key: tokens(text) for key, text in SENTENCES.items()},
                        candidates=candidates, queries=queries, gold=[set(gold) for *_, gold in QUERIES],
                        query_index=[candidates.index(q) if q in candidates else None for q in queries])


def written_folders(rs: RetrievalSet, root) -> dict:
    from multivec.interop.mteb_tasks import read_beir

    folders = {protocol: root / f"propsegment_{protocol}" for protocol in PROTOCOLS}
    for protocol, folder in folders.items():
        write_propsegment_beir(rs, folder, protocol)
    return {protocol: (folder, read_beir(folder)) for protocol, folder in folders.items()}


def test_a_propositions_text_joins_its_tokens_as_the_sentence_does():
    sentence = "Her husband's name was Pierre (a physicist)."
    spans = tokens(sentence)
    assert proposition_text(sentence, spans, (5, 6, 7, 8, 9)) == "Pierre (a physicist)"  # touching: no space
    assert proposition_text(sentence, spans, (1, 2, 5)) == "husband's Pierre"  # "'s" touches "husband"
    assert proposition_text(sentence, spans, (0, 3)) == "Her name"  # tokens left out between: one space
    # neighbours that touch but are not both selected are kept apart (no word the sentence does not have)
    assert proposition_text("state-of-the-art", tokens("state-of-the-art"), (0, 2, 4)) == "state of the"
    assert proposition_text("state-of-the-art", tokens("state-of-the-art"), (0, 1, 2)) == "state-of"


def test_the_beir_folders_hold_the_texts_the_trec_qrels_and_each_protocols_candidates(tmp_path):
    from multivec.interop.propsegment_formats import trec_id, write_propsegment_trec
    from multivec.interop.ranking_formats import read_qrels, read_run
    from multivec.subencoder.evaluation.retrieval import evaluate_lexical, proposition_id, query_unit_id

    rs = hand_made_set()
    folders = written_folders(rs, tmp_path)
    rows: list[dict] = []
    evaluate_lexical(rs, rankings=rows)  # any scores: the TREC export's ids and qrels do not depend on them
    rankings = tmp_path / "lexical.rankings.jsonl"
    rankings.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    candidate_ids = [proposition_id(c) for c in rs.candidates]
    query_ids = [query_unit_id(rs, row) for row in range(len(rs.queries))]
    for protocol, (_, data) in folders.items():
        assert [d["id"] for d in data["corpus"]] == candidate_ids and [d["text"] for d in data["corpus"]] == TEXTS
        assert [q["id"] for q in data["queries"]] == query_ids
        assert [q["text"] for q in data["queries"]] == [TEXTS[0], TEXTS[1], TEXTS[3], "Pierre Curie married Marie"]
        trec = write_propsegment_trec(rankings, tmp_path / f"{protocol}.run", tmp_path / f"{protocol}.qrels", protocol)
        assert data["relevant_docs"] == read_qrels(trec["qrels"])  # the TREC export's qrels, id for id
        assert set(read_run(trec["run"])) == set(data["top_ranked"]) == set(map(trec_id, query_ids))
        for row, query in enumerate(rs.queries):
            listed = data["top_ranked"][query_ids[row]]
            left_out = [i for i in candidate_ids if i not in listed]
            if protocol == "authors":  # the query itself, when it is a candidate
                assert left_out == ([] if rs.query_index[row] is None else [candidate_ids[rs.query_index[row]]])
            else:  # every candidate of the query's sentence
                assert left_out == [candidate_ids[i] for i, c in enumerate(rs.candidates)
                                    if c.sentence_key == query.sentence_key]
            assert listed == [i for i in candidate_ids if i not in left_out]  # candidate order
            ranked = next(r for r in rows if r["ranking"] == protocol and r["query"] == query_ids[row])["ranked"]
            assert set(ranked) == set(listed)  # the project ranked the same pool (all of it: fewer than 20 here)
    with pytest.raises(ValueError, match="unknown evaluation protocol"):
        write_propsegment_beir(rs, tmp_path / "other", "nope")


def _mteb_scores(result_file) -> dict[str, float]:
    scores = json.loads(result_file.read_text(encoding="utf-8"))["scores"]["test"][0]
    return {"main_score": scores["main_score"], "p@1": scores["precision_at_1"], "r@5": scores["recall_at_5"]}


def test_minilm_through_mteb_gives_the_projects_p1_and_r5_of_the_same_texts(tmp_path, monkeypatch):
    """MTEB encodes each text with the sentence-transformers folder and ranks by cosine; the project encodes the
    same texts with its mean pooling (``encode_mean_pooled``: the folder's pooling) and ranks with its own
    functions (``evaluate_scores``: cosine, stable sort, ``precision_recall_at``). The candidates' texts differ,
    so no score ties and the two agree exactly (to MTEB's rounding)."""
    pytest.importorskip("mteb")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    from multivec.baselines.base_encoder import encode_mean_pooled
    from multivec.interop.mteb_tasks import PROPSEGMENT_TASKS, evaluate_into, main_score, reranking_task
    from multivec.io.resources import minilm_path
    from multivec.metrics.maxsim import cosine_matrix
    from multivec.subencoder.evaluation.retrieval import evaluate_scores

    import torch

    rs = hand_made_set()
    folders = written_folders(rs, tmp_path)
    data = folders["authors"][1]
    texts = [d["text"] for d in data["corpus"]]
    assert len(set(texts)) == len(texts)
    vectors = encode_mean_pooled(minilm_path(), texts + [q["text"] for q in data["queries"]], show_progress=False)
    vectors = torch.from_numpy(vectors)
    project = evaluate_scores(rs, cosine_matrix(vectors[len(texts):], vectors[:len(texts)]), range(len(rs.queries)))
    model = SentenceTransformer(minilm_path(), device="cpu")
    model.model_card_data.model_name = "sentence-transformers/all-MiniLM-L6-v2"
    tasks = [reranking_task(folder, f"propsegment_{protocol}") for protocol, (folder, _) in folders.items()]
    assert [t.metadata.name for t in tasks] == ["MultivecPropSegment", "MultivecPropSegmentOwnSentenceExcluded"]
    assert {t.metadata.main_score for t in tasks} == {"precision_at_1"}
    written = {path.stem: path for path in evaluate_into(model, tasks, tmp_path / "mteb")}
    for protocol in PROTOCOLS:
        got = _mteb_scores(written[PROPSEGMENT_TASKS[f"propsegment_{protocol}"][0]])
        expected = project["protocols"][protocol]
        print(f"\n{protocol}: project P@1 {expected['p@1']:.2f} R@5 {expected['r@5']:.2f}; "
              f"MTEB precision_at_1 {100 * got['p@1']:.2f} recall_at_5 {100 * got['r@5']:.2f}")
        assert got["main_score"] == got["p@1"] == main_score(written[PROPSEGMENT_TASKS[f"propsegment_{protocol}"][0]])
        assert got["p@1"] == pytest.approx(expected["p@1"] / 100, abs=MTEB_ROUNDING)
        assert got["r@5"] == pytest.approx(expected["r@5"] / 100, abs=MTEB_ROUNDING)


def _table1_row(row: str) -> dict[str, str] | None:
    from rules_configs import REPO

    path = REPO / "results" / "subencoder_table1.csv"
    if not path.is_file():
        return None
    with path.open(encoding="utf-8", newline="") as handle:
        return next((r for r in csv.DictReader(handle) if r["row"] == row), None)


def test_minilm_through_mteb_on_the_dev_set_against_table1s_token_subset_row(mirror, tmp_path, monkeypatch):
    """The real dev set (349 queries, 1,607 candidates), authors' protocol, about 40 s on one core.

    Measured (MiniLM-L6-v2, CPU): MTEB P@1 35.82, R@5 68.62; Table 1's "minilm (untrained, token_subset)
    [authors]" row: P@1 37.25, R@5 71.20, so MTEB is 1.43 (P@1) and 2.58 (R@5) points lower. The input is the same:
    every proposition's text tokenises to exactly the subwords the project's token_subset encodes (checked here).
    Two things differ, each worth part of the gap:

    - pooling: the sentence-transformers folder mean-pools over [CLS] and [SEP] too, the project's token_subset over
      the proposition's subwords only. Ranked by the project (ties in candidate order), MTEB's scores give P@1
      36.68, R@5 69.05 (checked here): -0.57 and -2.15 points (measured by hand, pooling the project's subwords
      both ways, 37.25 -> 36.68 and 71.20 -> 69.05);
    - ties: the 1,607 candidates have 1,575 distinct texts, and equal texts score equally; MTEB (pytrec_eval) puts
      the larger document id first, the project the earlier candidate: -0.86 (P@1) and -0.43 (R@5) points, the
      whole rest of the gap (MTEB's numbers are the project's metrics on MTEB's scores in pytrec_eval's order,
      checked here)."""
    pytest.importorskip("mteb")
    folder = mirror / "propsegment" / "v1"
    if not (folder / "relationships.dev.json").is_file():
        pytest.skip(f"no PropSegment dev files in {folder}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    from multivec.interop.mteb_tasks import evaluate_into, read_beir, reranking_task
    from multivec.io.resources import minilm_path
    from multivec.metrics.ranking import precision_recall_at
    from multivec.subencoder.evaluation.retrieval_set import build_retrieval_set
    from multivec.subencoder.masks import spans_to_token_mask

    rs = build_retrieval_set(folder)
    write_propsegment_beir(rs, tmp_path / "beir", "authors")
    model = SentenceTransformer(minilm_path(), device="cpu")
    model.model_card_data.model_name = "sentence-transformers/all-MiniLM-L6-v2"
    tokenizer = model.tokenizer
    for prop in [*rs.candidates, *rs.queries]:  # the text's subwords are token_subset's
        sentence = rs.sentences[prop.sentence_key]
        encoded = tokenizer(sentence, return_offsets_mapping=True, return_special_tokens_mask=True)
        mask = spans_to_token_mask(encoded["offset_mapping"], rs.char_spans(prop), encoded["special_tokens_mask"])
        text = proposition_text(sentence, rs.token_spans[prop.sentence_key], prop.token_indices)
        assert tokenizer(text, add_special_tokens=False)["input_ids"] == \
            [t for t, keep in zip(encoded["input_ids"], mask) if keep], (prop, text)
    task = reranking_task(tmp_path / "beir", "propsegment_authors")
    written = evaluate_into(model, [task], tmp_path / "mteb", prediction_folder=tmp_path / "predictions")
    got = {k: 100 * v for k, v in _mteb_scores(written[0]).items()}
    predictions = json.loads((tmp_path / "predictions" / "MultivecPropSegment_predictions.json").read_text())
    predictions = predictions["default"]["test"]
    data = read_beir(tmp_path / "beir")
    position = {doc["id"]: i for i, doc in enumerate(data["corpus"])}
    orders = {"project": lambda scores: sorted(scores, key=lambda d: (-scores[d], position[d])),
              "pytrec_eval": lambda scores: sorted(scores, key=lambda d: (-scores[d], [-ord(ch) for ch in d]))}
    ours = {}
    for name, order in orders.items():
        values = [precision_recall_at([position[d] for d in order(scores)],
                                      {position[d] for d in data["relevant_docs"][qid]}, (5,))
                  for qid, scores in predictions.items()]
        ours[name] = {k: 100 * float(np.mean([v[k] for v in values])) for k in ("p@1", "r@5")}
    table1 = _table1_row("minilm (untrained, token_subset) [authors]")
    print(f"\nMTEB P@1 {got['p@1']:.2f} R@5 {got['r@5']:.2f}; its scores ranked by the project "
          f"{ours['project']['p@1']:.2f} / {ours['project']['r@5']:.2f}; Table 1's token_subset row "
          f"{table1 and table1['P@1']} / {table1 and table1['R@5']}")
    assert len(predictions) == 349
    assert got["p@1"] == pytest.approx(ours["pytrec_eval"]["p@1"], abs=100 * MTEB_ROUNDING)
    assert got["r@5"] == pytest.approx(ours["pytrec_eval"]["r@5"], abs=100 * MTEB_ROUNDING)
    # Within one query of the measured values, which are quoted to 2 decimals (half a unit of rounding on top: a
    # bound of exactly 100/349 failed a run one query away, 35.53 against the quoted 35.82 for 125/349 = 35.817).
    # Candidates with equal texts tie up to last-bit differences of their scores, which can differ between
    # machines, so one query may move.
    one_query = 100 / 349 + 0.005
    assert got["p@1"] == pytest.approx(35.82, abs=one_query) and got["r@5"] == pytest.approx(68.62, abs=one_query)
    assert ours["project"]["p@1"] == pytest.approx(36.68, abs=one_query)
    if table1 is not None:
        assert float(table1["P@1"]) - got["p@1"] == pytest.approx(1.43, abs=one_query + 0.005)


def test_the_mteb_propsegment_tasks_are_exactly_the_retrieval_protocols():
    """``mteb_tasks.PROPSEGMENT_TASKS`` spells out each protocol beside its MTEB name and description; it names
    exactly the protocols Table 1 evaluates (``retrieval.PROTOCOLS``), each under its BEIR folder's name, so a
    protocol added or renamed there cannot be left without its MTEB task (or keep a stale one)."""
    from multivec.interop.mteb_tasks import PROPSEGMENT_TASKS, RERANKING_TASKS
    from multivec.interop.propsegment_beir import FOLDER
    from multivec.subencoder.evaluation.retrieval import PROTOCOLS as TABLE1_PROTOCOLS

    assert sorted(PROPSEGMENT_TASKS) == sorted(FOLDER.format(protocol=protocol) for protocol in TABLE1_PROTOCOLS)
    names = [name for name, _ in {**RERANKING_TASKS, **PROPSEGMENT_TASKS}.values()]
    assert len(set(names)) == len(names), names  # one MTEB task name per task


def test_a_text_encoder_scores_propsegment_on_the_documents_of_the_retrieval_set():
    """retrieval_set_documents + propsegment_units (the distillation models on PropSegment): one
    document per query and candidate with its text, and the per-query P@1 and R@5 are the project's ranking of
    those vectors under the authors' protocol, on the sub-sentence encoder's query unit ids."""
    from multivec.interop.propsegment_beir import propsegment_units
    from multivec.interop.propsegment_beir import retrieval_set_documents
    from multivec.metrics.maxsim import cosine_matrix
    from multivec.subencoder.evaluation.retrieval import evaluate_scores
    import torch

    rs = hand_made_set()
    documents = retrieval_set_documents(rs)
    assert [d["text"] for d in documents[len(QUERIES):]] == TEXTS
    assert documents[0]["id"].startswith("query:q0:") and documents[len(QUERIES)]["id"].startswith("candidate:d1:0:")
    assert len({d["id"] for d in documents}) == len(documents)  # a query that is also a candidate keeps two ids
    rng = np.random.default_rng(2)
    vectors = {d["id"]: rng.normal(size=8) for d in documents}
    # Each query's vector equals its first gold candidate's: P@1 = 100 for every query.
    for row, (_, _, gold) in enumerate(QUERIES):
        vectors[documents[row]["id"]] = vectors[documents[len(QUERIES) + min(gold)]["id"]]
    units = propsegment_units(rs, vectors)
    assert units["P@1"].values.tolist() == [100.0] * len(QUERIES)
    direct = evaluate_scores(rs, cosine_matrix(torch.as_tensor(np.stack([vectors[d["id"]] for d in documents[:4]])),
                                               torch.as_tensor(np.stack([vectors[d["id"]]
                                                                         for d in documents[4:]]))), range(4))
    assert units["R@5"].units == direct["per_query"]["units"]
    assert units["R@5"].values.tolist() == direct["per_query"]["protocols"]["authors"]["r@5"]
    del vectors[documents[-1]["id"]]
    with pytest.raises(KeyError, match="lack 1"):
        propsegment_units(rs, vectors)
