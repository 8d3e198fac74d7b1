"""App. A.3 alignment speed (Chen et al. 2023): batched ``align_batch`` against per-pair ``align_pair``.

Pairs: every PropSegment human proposition of the given splits, written as text (its tokens
in order), against its sentence -- the shape of the LLM's claims the paper aligns. The
per-pair path normalises every word of every pair and runs ``scipy.signal.convolve2d`` per
pair; the batched path tokenises each distinct word-chunk shape once (NLTK on a probe, exact),
normalises each distinct word once and scores blocks of pairs as one padded integer array. Both run the same Hungarian matching per pair; the masks must be
identical (checked, the script fails otherwise). Each path runs ``--repeat`` times, alternating; the
CSV gives the median. The batched path starts from empty caches each run. Also: subword masks
through MiniLM's offsets. Timings are of the default mode (``authors``); the CSV also counts, per
mode, the pairs with no aligned word, and how many masks the ``authors`` mode changes against
``keep_period`` (the project's first version: the trailing ``"."`` kept, one-word texts aligned).
Pairs are aligned twice: as the human proposition's words (``as words``) and as a claim the way an
LLM writes it, with a final period (``as claim``), where the two modes differ.

    python benchmarks/subencoder_alignment.py [--splits dev test] [--repeat 3] \
        [--out results/benchmarks/subencoder_alignment.csv]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from multivec.io import write_csv
from multivec.io.resources import data_mirror, load_tokenizer
from multivec.subencoder.data.alignment import ALIGNMENT_MODES, align_batch, align_pair, normalise
from multivec.subencoder.masks import batch_token_masks
from multivec.subencoder.data.propsegment import load_split


def proposition_pairs(folder: str, splits) -> list[tuple[str, str]]:
    pairs = []
    for split in splits:
        for cluster in load_split(folder, split):
            for sentence in (s for d in cluster.documents.values() for s in d if s.propositions):
                for prop in sentence.propositions:
                    text = " ".join(sentence.text[a:b] for i, (a, b) in enumerate(sentence.token_spans) if i in prop)
                    pairs.append((sentence.text, text))
    return pairs


def runs(seconds) -> str:
    return " ".join(f"{s:.3f}" for s in seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["dev", "test"])
    parser.add_argument("--limit", type=int, default=0, help="first N pairs only (0: all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each path; the median is reported")
    parser.add_argument("--out", default="results/benchmarks/subencoder_alignment.csv")
    args = parser.parse_args()
    mirror = data_mirror()
    if mirror is None:
        raise SystemExit("set $MULTIVEC_DATA_MIRROR (PropSegment v1 is read from <mirror>/propsegment/v1)")
    pairs = proposition_pairs(os.path.join(mirror, "propsegment", "v1"), args.splits)
    if args.limit:
        pairs = pairs[:args.limit]
    normalise("warm")  # load WordNet before timing either path

    if args.repeat < 1:
        raise SystemExit(f"--repeat must be >= 1, got {args.repeat}")
    loop_runs, batch_runs = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        reference = [align_pair(s, p) for s, p in pairs]
        loop_runs.append(time.perf_counter() - start)
        start = time.perf_counter()
        batched = align_batch(pairs)
        batch_runs.append(time.perf_counter() - start)
        if batched != reference:
            bad = sum(a != b for a, b in zip(batched, reference))
            raise SystemExit(f"batched alignment differs from the per-pair one on {bad} of {len(pairs)} pairs")
    loop_s, batch_s = statistics.median(loop_runs), statistics.median(batch_runs)

    tokenizer = load_tokenizer("minilm")
    start = time.perf_counter()
    masks = batch_token_masks(tokenizer, [s for s, _ in pairs], [[spans] for spans in batched])
    mask_s = time.perf_counter() - start
    empty = sum(1 for spans in batched if not spans)
    counts = {}
    for shape, texts in (("as words", pairs), ("as claim", [(s, p.rstrip(" .") + ".") for s, p in pairs])):
        by_mode = {mode: align_batch(texts, mode=mode) for mode in ALIGNMENT_MODES}
        counts[shape] = {f"unaligned_{mode}": sum(not spans for spans in masks_) for mode, masks_ in by_mode.items()}
        counts[shape]["changed_vs_keep_period"] = sum(a != b for a, b in zip(by_mode["authors"], by_mode["keep_period"]))
    rows = [{"what": "per-pair align_pair (convolve2d)", "pairs": len(pairs), "seconds": round(loop_s, 3),
             "pairs_per_s": round(len(pairs) / loop_s, 1), "speedup": 1.0, "identical": True,
             "runs_s": runs(loop_runs)},
            {"what": "batched align_batch", "pairs": len(pairs), "seconds": round(batch_s, 3),
             "pairs_per_s": round(len(pairs) / batch_s, 1), "speedup": round(loop_s / batch_s, 2), "identical": True,
             "runs_s": runs(batch_runs)},
            {"what": "char spans -> MiniLM subword masks (batch)", "pairs": len(masks), "seconds": round(mask_s, 3),
             "pairs_per_s": round(len(masks) / mask_s, 1), "speedup": None, "identical": None, "runs_s": runs([mask_s])}]
    rows += [{"what": f"masks of the propositions {shape}: authors vs keep_period", "pairs": len(pairs),
              **values} for shape, values in counts.items()]
    columns = list(dict.fromkeys(k for row in rows for k in row))
    rows = [{k: row.get(k) for k in columns} for row in rows]
    write_csv(args.out, rows)
    for row in rows:
        print(row)
    print(f"{len(pairs)} pairs ({empty} with no aligned word, mode authors); batched is {loop_s / batch_s:.1f}x the per-pair loop "
          f"(median of {args.repeat})")


if __name__ == "__main__":
    main()
