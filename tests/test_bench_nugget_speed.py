"""benchmarks/nugget_speed.py's profile case on the demo configuration (one step): it counts the step's FLOPs and
says what share of the time the matrix products take, the figure that bounds every lever but faster products.
Never timing."""

from __future__ import annotations

import re

import torch
from benchmark_scripts import load_benchmark


def test_the_profile_case_counts_flops_and_the_matrix_products_share(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    bench = load_benchmark("nugget_speed")
    threads = torch.get_num_threads()
    try:
        row = bench.worker("profile", steps=1)  # it sets one torch thread, as its own process would
    finally:
        torch.set_num_threads(threads)
    assert row["case"] == "profile" and row["batch_size"] == 16 and row["seconds_per_step"] > 0
    found = re.fullmatch(r"(\d+) GFLOP per step; matrix products \(mm, addmm, bmm\) (\d+)% of the step's time at "
                         r"(\d+) GFLOP/s on one thread, so at most (\d+\.\d+)x from everything else; the optimizer step "
                         r"(\d+\.\d)%", row["note"])
    assert found, row["note"]
    gflop, share, rate, bound = int(found[1]), int(found[2]), int(found[3]), float(found[4])
    # 16 x 128 tokens through 3 trained encoder layers, a 2-layer decoder and an 8k output layer: ~180 GFLOP
    assert 120 <= gflop <= 260
    assert 0 < share < 100 and rate > 0 and bound > 1
    assert 0 < float(found[5]) < 100 - share
