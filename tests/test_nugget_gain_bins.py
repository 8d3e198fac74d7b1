"""Figs. 7-8's bins of the signed relative index d = i - t_j (multivec.nugget.analysis.gain_bins)."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from multivec.nugget.analysis.gain_bins import (DISTANCE_BINS, document_bin_gains, gain_bins_markdown,
                                                gain_measurements, shared_documents)
from multivec.statistics import Measurement, compute_statistic, stack_seeds

SIGNED = ["gain_before_20plus", "gain_before_5_19", "gain_before_1_4", "gain_d0", "gain_after_1_4",
          "gain_after_5_19", "gain_after_20plus"]


def _bin_of(d: int) -> list[str]:
    return [m for m, (low, high) in DISTANCE_BINS.items()
            if (low is None or d >= low) and (high is None or d <= high)]


def test_bins_are_the_signed_relative_index_in_order_and_cover_every_offset():
    assert list(DISTANCE_BINS) == SIGNED  # the names claim N5 uses; Fig. 8's left-to-right order
    assert all(_bin_of(d) == [expected] for d, expected in
               [(-500, "gain_before_20plus"), (-20, "gain_before_20plus"), (-19, "gain_before_5_19"),
                (-5, "gain_before_5_19"), (-4, "gain_before_1_4"), (-1, "gain_before_1_4"), (0, "gain_d0"),
                (1, "gain_after_1_4"), (4, "gain_after_1_4"), (5, "gain_after_5_19"), (19, "gain_after_5_19"),
                (20, "gain_after_20plus"), (500, "gain_after_20plus")])
    assert all(len(_bin_of(d)) == 1 for d in range(-600, 601))


def _save(path, gains, positions, ids):
    from safetensors.numpy import save_file

    save_file({"gains": gains.astype(np.float32), "positions": positions, "source_indices": positions,
               "target_ids": np.zeros((len(gains), gains.shape[-1]), dtype=np.int64)}, str(path),
              metadata={"length": str(gains.shape[-1]), "doc_ids": json.dumps(ids)})


def test_before_and_after_are_told_apart():
    """Gain only on the tokens preceding the nugget (the paper's reading of Fig. 7): the unsigned bins averaged
    it with the following tokens; the signed ones put it all in the before bins."""
    length = 60
    offset = np.arange(length) - 30
    gains = np.where(offset < 0, 0.1 / -np.minimum(offset, -1), 0.0)[None, None]  # 0.1/|d| before, 0 after
    gains[0, 0, 30] = 0.5
    gains[0, 0, 0] = np.nan  # the target prefix: nothing predicted, in no bin
    per_doc = document_bin_gains(gains, np.array([[30]]))[0]
    got = dict(zip(DISTANCE_BINS, per_doc))
    assert got["gain_d0"] == pytest.approx(0.5)
    assert got["gain_after_1_4"] == got["gain_after_5_19"] == got["gain_after_20plus"] == 0.0
    assert got["gain_before_1_4"] == pytest.approx(np.mean([0.1 / k for k in range(1, 5)]))
    assert got["gain_before_5_19"] == pytest.approx(np.mean([0.1 / k for k in range(5, 20)]))
    assert got["gain_before_20plus"] == pytest.approx(np.mean([0.1 / k for k in range(20, 30)]))  # d = -30 is NaN


def test_pairs_of_every_nugget_pool_into_the_document_mean():
    length = 30
    gains = np.full((1, 3, length), np.nan)
    positions = np.array([[10, 25, -1]])  # a padding slot: ignored
    gains[0, 0] = np.arange(length) - 10.0  # gain = d
    gains[0, 1] = 2 * (np.arange(length) - 25.0)  # gain = 2d
    gains[0, 2] = 99.0
    got = dict(zip(DISTANCE_BINS, document_bin_gains(gains, positions)[0]))
    assert got["gain_d0"] == 0.0
    assert got["gain_before_1_4"] == pytest.approx(np.mean([-1, -2, -3, -4, -2, -4, -6, -8]))
    assert got["gain_after_1_4"] == pytest.approx(np.mean([1, 2, 3, 4, 2, 4, 6, 8]))  # 25 + 4 = 29 is the end
    assert got["gain_after_20plus"] != got["gain_after_20plus"]  # 10 + 20 = 30: past the end, NaN
    assert got["gain_before_20plus"] == pytest.approx(np.mean([2 * d for d in range(-25, -19)]))


def test_units_are_the_documents_with_every_bin_and_the_others_are_counted(tmp_path):
    length = 48
    ids = ["w0", "w1", "w2", "w3"]
    gains = np.full((4, 2, length), np.nan)
    positions = np.full((4, 2), -1, dtype=np.int64)
    rng = np.random.default_rng(0)
    for doc, slots in enumerate([(0, 40), (5, 30), (47, -1), (-1, -1)]):
        for s, t in enumerate(slots):
            if t >= 0:
                positions[doc, s] = t
                gains[doc, s] = rng.normal(0, 0.01, length)
                gains[doc, s, 0] = np.nan
    # w2: one nugget at the document's end, so no token follows it (no "after" pair); w3: no nugget
    path = tmp_path / "len48.safetensors"
    _save(path, gains, positions, ids)
    per_doc = document_bin_gains(gains, positions)
    assert not np.isnan(per_doc[:2]).any()
    assert np.isnan(per_doc[2, 4:]).all() and not np.isnan(per_doc[2, :4]).any() and np.isnan(per_doc[3]).all()
    measurements, dropped = gain_measurements(path, "len48", 13)
    assert dropped == 2 and [m.metric for m in measurements] == SIGNED
    assert all(m.units == ["w0", "w1"] and m.statistic == "mean" and m.seed == 13 for m in measurements)
    assert compute_statistic("mean", measurements[3].values) == pytest.approx(per_doc[:2, 3].mean())
    _save(path, gains[2:3], positions[2:3], ["w2"])
    with pytest.raises(ValueError, match="every bin"):
        gain_measurements(path, "len48", 13)
    # The local rule that calls it reads the gains without the model's libraries (tests/test_workflow.py).
    _save(path, gains, positions, ids)
    code = ("import sys\nfrom multivec.nugget.analysis.gain_bins import gain_measurements\n"
            f"gain_measurements({str(path)!r}, 'len48', 13)\n"
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0 and loaded.stdout.strip() == "[]", (loaded.stdout, loaded.stderr)


def test_seeds_keep_the_documents_every_seed_kept():
    def row(row, seed, units):
        return [Measurement(row, m, "mean", units, np.arange(len(units), dtype=float), seed) for m in SIGNED]

    found = row("len64", 13, ["a", "b", "c"]) + row("len64", 14, ["a", "c"]) + row("len128", 13, ["x"])
    kept, dropped = shared_documents(found)
    assert dropped == {"len64": 1, "len128": 0}
    assert all(m.units == (["x"] if m.row == "len128" else ["a", "c"]) for m in kept)
    assert [float(v) for v in kept[0].values[:, 0]] == [0.0, 2.0]  # b's value left out with it
    stacks = stack_seeds(kept)  # raised before: the seeds of a (row, metric) must share units
    assert stacks[("len64", "gain_d0")].n_seeds == 2
    with pytest.raises(ValueError, match="every seed"):
        shared_documents(row("len64", 13, ["a"]) + row("len64", 14, ["b"]))


def test_markdown_says_what_is_measured():
    cells = {f"{m}{suffix}": value for m in SIGNED for suffix, value in
             (("", -0.007), ("_lo", -0.009), ("_hi", -0.005), ("_sd", float("nan")))}
    df = pd.DataFrame([{"row": "len64", **cells, "gain_d0": 0.0395, "documents": 100}])
    text = gain_bins_markdown(df, ["header"], ["note"])
    assert f"| row | {' | '.join(SIGNED)} | documents |" in text
    assert "| len64 | -0.0070 [-0.0090, -0.0050] " in text and "| 0.0395 [-0.0090, -0.0050] |" in text
    assert text.rstrip().endswith("note") and "| 100 |" in text
    for phrase in ("signed relative index d = i - t_j", "\"before\" (d < 0): tokens preceding",
                   "gain_before_20plus: d <= -20", "gain_before_1_4: -4 <= d <= -1", "gain_d0: d = 0",
                   "gain_after_20plus: d >= 20", "eq. 9", "improve the decoding of its preceding texts"):
        assert phrase in text, phrase
    assert "| documents |" not in gain_bins_markdown(df.drop(columns="documents"), ["header"])
