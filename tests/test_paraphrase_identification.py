"""PI (NUGGET §6.1, Appendix A): ParaBank reading, document building, BM25 negatives, task format."""

from pathlib import Path

import numpy as np
import pytest

from multivec.io import MalformedInputError
from multivec.tasks.paraphrase_identification import (ParabankCounts, SentencePair, block_span, build_documents,
                                                      build_paraphrase_identification_task,
                                                      build_paraphrase_identification_task_from_file,
                                                      parse_document_index, read_parabank, sliding_window)
from multivec.tasks.ranking_task import RankingTask

FIXTURE = Path(__file__).parent / "fixtures" / "parabank_v1_sample.tsv"


@pytest.fixture(scope="module")
def pairs():
    return read_parabank(FIXTURE)


def small_task(pairs, seed=0):
    # 32-token documents from the 600-line fixture give ~250 documents; a 64-document window
    # is then much smaller than the collection, so the window bound is really exercised.
    return build_paraphrase_identification_task(pairs, n_queries=60, window=64, max_tokens=32, seed=seed,
                                                show_progress=False)


def test_read_parabank_fixture(pairs):
    assert len(pairs) == 600
    assert pairs[0].reference.startswith("I do n't want to see you")
    assert pairs[0].paraphrase.startswith("me does n't wish to see ye")
    second = read_parabank(FIXTURE, paraphrase_column=1, limit=1)  # line 1 has a second paraphrase
    assert second[0].paraphrase.startswith("I do n't want to see thou")


def test_read_parabank_with_score_column_and_errors(tmp_path):
    scored = tmp_path / "scored.tsv"
    scored.write_text("0.91\tThe cat sat .\tA cat was sitting .\tThe cat sits .\n"
                      "-1.5\tIt rained .\tThere was rain .\n", encoding="utf-8")
    got = read_parabank(scored)
    assert got == [SentencePair("The cat sat .", "A cat was sitting ."), SentencePair("It rained .", "There was rain .")]
    broken = tmp_path / "broken.tsv"
    broken.write_text("The cat sat .\tA cat was sitting .\nno paraphrase here\n", encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"broken.tsv:2"):
        read_parabank(broken)


def test_drop_rate_is_near_0_2_on_each_side_independently():
    n = 20000
    pairs = [SentencePair(f"r{i}", f"p{i}") for i in range(n)]
    documents = build_documents(pairs, np.random.default_rng(1), max_tokens=100, drop_probability=0.2)
    kept_reference = {int(t[1:]) for d in documents for t in d.reference.split()}
    kept_paraphrase = {int(t[1:]) for d in documents for t in d.paraphrase.split()}
    assert 1 - len(kept_reference) / n == pytest.approx(0.2, abs=0.01)
    assert 1 - len(kept_paraphrase) / n == pytest.approx(0.2, abs=0.01)
    both_dropped = n - len(kept_reference | kept_paraphrase)
    assert both_dropped / n == pytest.approx(0.04, abs=0.006)  # independent: 0.2 * 0.2
    assert len(kept_reference ^ kept_paraphrase) > 0.25 * n      # sides differ: ~2 * 0.2 * 0.8


def test_documents_keep_order_and_token_limit():
    pairs = [SentencePair(" ".join([f"r{i}"] * (1 + i % 7)), f"p{i} q{i}") for i in range(500)]
    documents = build_documents(pairs, np.random.default_rng(0), max_tokens=20)
    previous = -1
    for document in documents:
        assert len(document.reference.split()) <= 20 and len(document.paraphrase.split()) <= 20
        order = [int(t[1:]) for t in dict.fromkeys(document.reference.split())]
        assert order == sorted(order) and order[0] > previous
        previous = order[-1]
    # a document closes only when the next pair would overflow one side
    assert np.mean([len(d.reference.split()) for d in documents]) > 12


def test_sliding_window_is_centred_and_clipped():
    assert sliding_window(500, 5000, 1024) == (0, 1024)
    assert sliding_window(2000, 5000, 1024) == (1488, 2512)
    assert sliding_window(4990, 5000, 1024) == (3976, 5000)
    assert sliding_window(3, 10, 1024) == (0, 10)


def test_task_negatives_window_answer_and_distinctness(pairs):
    task = small_task(pairs)
    n_docs = len(build_documents(pairs, np.random.default_rng(0), max_tokens=32))
    assert n_docs > 3 * 64
    assert task.n_queries == 60
    positions = []
    for query in task.queries:
        i = parse_document_index(query.source)
        assert query.source == f"L{i}" and query.answer_id == f"R{i}"
        assert len(query.candidates) == 20 and len(set(query.candidates)) == 20
        negatives = [parse_document_index(c) for k, c in enumerate(query.candidates) if k != query.answer]
        start, stop = sliding_window(i, n_docs, 64)
        assert all(start <= j < stop and j != i for j in negatives)
        assert all(task.documents[f"R{j}"] != task.documents[f"R{i}"] for j in negatives)
        positions.append(query.answer)
    assert len(set(positions)) > 8  # the answer's position is shuffled, not always first


def test_negatives_are_the_bm25_top19_of_the_window(pairs):
    from multivec.retrieval.bm25 import BM25Index

    task = small_task(pairs)
    documents = build_documents(pairs, np.random.default_rng(0), max_tokens=32)
    for query in task.queries[5:60:6]:
        i = parse_document_index(query.source)
        # idf comes from the span that the query's block of 64 documents can reach
        lo, hi = block_span(i // 64, len(documents), 64)
        assert hi - lo <= 2 * 64
        index = BM25Index([d.paraphrase for d in documents[lo:hi]], show_progress=False)
        start, stop = sliding_window(i, len(documents), 64)
        scores = index.score([documents[i].reference], show_progress=False)[0]
        window = [j for j in range(start, stop) if j != i]
        best = sorted(window, key=lambda j: (-scores[j - lo], j))[:19]
        negatives = [parse_document_index(c) for k, c in enumerate(query.candidates) if k != query.answer]
        assert negatives == best
        assert task.documents[query.source] == documents[i].reference


def test_streamed_file_build_equals_in_memory_build_and_holds_two_windows(pairs):
    counts = ParabankCounts()
    streamed = build_paraphrase_identification_task_from_file(FIXTURE, counts=counts, n_queries=60, window=64,
                                                              max_tokens=32, seed=0, show_progress=False)
    in_memory = small_task(pairs)
    assert streamed.queries == in_memory.queries and streamed.documents == in_memory.documents
    n_docs = len(build_documents(pairs, np.random.default_rng(0), max_tokens=32))
    assert counts.lines == counts.sentence_pairs == 600 and counts.documents == n_docs
    assert 0 < counts.max_documents_held <= 2 * 64 < n_docs
    assert counts.windows_indexed == len({parse_document_index(q.source) // 64 for q in streamed.queries})


def test_one_window_uses_idf_of_all_documents(pairs):
    from multivec.retrieval.bm25 import BM25Index

    few = pairs[:200]
    task = build_paraphrase_identification_task(few, n_queries=None, window=1024, max_tokens=32, seed=1,
                                                show_progress=False)
    documents = build_documents(few, np.random.default_rng(1), max_tokens=32)
    index = BM25Index([d.paraphrase for d in documents], show_progress=False)
    query = task.queries[3]
    i = parse_document_index(query.source)
    scores = index.score([documents[i].reference], show_progress=False)[0]
    best = sorted((j for j in range(len(documents)) if j != i), key=lambda j: (-scores[j], j))[:19]
    assert [parse_document_index(c) for k, c in enumerate(query.candidates) if k != query.answer] == best


def test_builder_is_deterministic_given_the_seed(pairs, tmp_path):
    first, again, other = small_task(pairs, seed=3), small_task(pairs, seed=3), small_task(pairs, seed=4)
    assert first.queries == again.queries and first.documents == again.documents
    assert first.queries != other.queries
    first.save(tmp_path / "pi")
    loaded = RankingTask.load(tmp_path / "pi")
    assert loaded.queries == first.queries
    assert all(loaded.documents[i] == " ".join(first.documents[i].split()) for i in loaded.documents)


def test_released_dev_set_loads(mirror):
    task = RankingTask.load(mirror / "nugget-data/paraphrase_identification/dev")
    assert task.n_queries == 1024
    assert all(len(q.candidates) == 20 and q.answer_id == "R" + q.source[1:] for q in task.queries)
    assert task.empty_document_ids == ["L873", "L874"]  # the release has two empty reference documents
    with pytest.raises(MalformedInputError, match="docs.txt:874"):
        RankingTask.load(mirror / "nugget-data/paraphrase_identification/dev", on_empty="error")


def test_load_names_file_and_line_of_bad_rows(tmp_path):
    (tmp_path / "docs.txt").write_text("L0\ta b\nR0\tc d\nR1\te f\n", encoding="utf-8")
    for row, message in [('{"source": "L0", "candidates": ["R0", "R9"], "answer": 0}', "'R9' is not in"),
                         ('{"source": "L0", "candidates": ["R0", "R1"], "answer": 2}', "not an index"),
                         ('{"source": "L0", "candidates": ["R0", "R0"], "answer": 0}', "duplicate candidate")]:
        (tmp_path / "task.jsonl").write_text('{"source": "L0", "candidates": ["R0", "R1"], "answer": 1}\n' + row + "\n",
                                             encoding="utf-8")
        with pytest.raises(MalformedInputError, match=rf"task.jsonl:2: .*{message}"):
            RankingTask.load(tmp_path)
