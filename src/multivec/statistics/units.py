"""Per-unit scores: what every statistic, confidence interval and test is computed from.

A ``Measurement`` is one metric of one table row at one seed, kept per evaluation unit (a query
for MRR/P@1/R@k, a sentence for accuracy, a document for BLEU, a document pair for the Lee
correlations): ``values`` holds each unit's components for its statistic
(``multivec.statistics.statistics``). Untrained, deterministic rows (BM25, an untrained encoder)
have ``seed=None``.

Every table's measurements are written to one long-format Parquet file
(``results/units/<table>.<seedset>.parquet``): one line per (row, metric, seed, unit),
with the unit's components as a list. ``read_units`` gives the measurements back, and
``stack_seeds`` groups them per (row, metric) into a ``SeedStack`` (seeds × units × components)
with the units in one order, which is what the resampling needs.

A ``SeedStack`` may name the ``clusters`` its units fall in (a kind of ``multivec.statistics.clusters``:
``"propsegment_query"``, ``"lm_segment"``, ...; ``None``: independent units): the bootstrap and the tests then
resample whole clusters. ``stack_seeds(measurements, clusters=...)`` sets it, for all stacks or per metric.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from multivec.statistics.statistics import PAIR_STATISTICS, check_statistic

UNIT_COLUMNS = ["row", "metric", "statistic", "seed", "unit", "values"]
NO_SEED = -1  # stored for seed=None (Parquet int column)


@dataclass
class Measurement:
    """One metric of one row at one seed, per evaluation unit.

    ``units``: unit ids (unique; ``"a|b"`` for a pair of documents a and b under a pair
    statistic); ``values``: (n_units,) or (n_units, n_components) floats.
    """

    row: str
    metric: str
    statistic: str
    units: Sequence[str]
    values: np.ndarray
    seed: int | None = None

    def __post_init__(self):
        values = np.asarray(self.values, dtype=np.float64)
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim != 2:
            raise ValueError(f"{self.row}/{self.metric}: values must be (units,) or (units, components), "
                             f"got shape {values.shape}")
        self.units = [str(u) for u in self.units]
        if len(self.units) != values.shape[0]:
            raise ValueError(f"{self.row}/{self.metric}: {len(self.units)} units but {values.shape[0]} value rows")
        if not self.units:
            raise ValueError(f"{self.row}/{self.metric}: no evaluation units")
        if len(set(self.units)) != len(self.units):
            raise ValueError(f"{self.row}/{self.metric}: duplicate unit ids")
        if not np.isfinite(values).all():
            bad = int(np.flatnonzero(~np.isfinite(values).all(axis=1))[0])
            raise ValueError(f"{self.row}/{self.metric}: non-finite value at unit {self.units[bad]!r}")
        check_statistic(self.statistic, values.shape[1])
        if self.statistic in PAIR_STATISTICS and not all(u.count("|") == 1 for u in self.units):
            raise ValueError(f"{self.row}/{self.metric}: a {self.statistic} unit must be a pair 'a|b'")
        if self.seed is not None:
            if isinstance(self.seed, bool) or float(self.seed) != int(self.seed):
                raise ValueError(f"{self.row}/{self.metric}: seed must be an integer, got {self.seed!r}")
            self.seed = int(self.seed)
        self.values = values


def write_units(path: str | os.PathLike, measurements: Iterable[Measurement]) -> int:
    """Write ``measurements`` as one Parquet file; returns the number of lines. A (row, metric, seed)
    given twice, or one metric under two statistics, raises ValueError."""
    records: list[dict] = []
    seen: set[tuple] = set()
    statistic_of: dict[tuple[str, str], str] = {}
    for m in measurements:
        key = (m.row, m.metric, m.seed)
        if key in seen:
            raise ValueError(f"measurement {key} given twice")
        seen.add(key)
        if statistic_of.setdefault((m.row, m.metric), m.statistic) != m.statistic:
            raise ValueError(f"{m.row}/{m.metric}: statistics {statistic_of[(m.row, m.metric)]} and {m.statistic}")
        seed = NO_SEED if m.seed is None else m.seed
        records += [{"row": m.row, "metric": m.metric, "statistic": m.statistic, "seed": seed, "unit": u,
                     "values": v.tolist()} for u, v in zip(m.units, m.values)]
    if not records:
        raise ValueError(f"{path}: no measurements to write")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame.from_records(records, columns=UNIT_COLUMNS).to_parquet(path, index=False)
    return len(records)


def read_units(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> list[Measurement]:
    """The measurements of one or more unit files (in file order)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    measurements = []
    for path in paths:
        frame = pd.read_parquet(path)
        missing = set(UNIT_COLUMNS) - set(frame.columns)
        if missing:
            raise ValueError(f"{path}: not a unit file, missing column(s) {sorted(missing)}")
        for (row, metric, statistic, seed), group in frame.groupby(["row", "metric", "statistic", "seed"],
                                                                   sort=False):
            measurements.append(Measurement(row, metric, statistic, group["unit"].tolist(),
                                            np.stack([np.asarray(v, dtype=np.float64) for v in group["values"]]),
                                            None if int(seed) == NO_SEED else int(seed)))
    return measurements


@dataclass
class SeedStack:
    """All seeds of one (row, metric): ``values`` is (n_seeds, n_units, n_components), units aligned.
    ``clusters``: the cluster kind of the units (``multivec.statistics.clusters``; None: each unit its own)."""

    row: str
    metric: str
    statistic: str
    units: list[str]
    seeds: list[int | None]
    values: np.ndarray
    clusters: str | None = None

    @property
    def has_seed_term(self) -> bool:
        """Whether the row's training seeds vary: two seeds or more (one seed or ``None`` has no seed term)."""
        return sum(s is not None for s in self.seeds) > 1

    @property
    def n_seeds(self) -> int:
        return len(self.seeds)

    def aligned_to(self, units: Sequence[str]) -> np.ndarray:
        """``values`` with the units in the order of ``units`` (ValueError if the sets differ)."""
        if list(units) == self.units:
            return self.values
        position = {u: k for k, u in enumerate(self.units)}
        missing = [u for u in units if u not in position]
        if missing or len(units) != len(self.units):
            extra = sorted(set(self.units) - set(units))
            raise ValueError(f"{self.row}/{self.metric}: evaluation units differ (missing {missing[:3]}, "
                             f"extra {extra[:3]}); a paired comparison needs the same units")
        return self.values[:, [position[u] for u in units]]

    def restricted_to(self, units: Sequence[str]) -> "SeedStack":
        """The same stack on a subset of its units, in the order of ``units`` (ValueError for a unit it lacks):
        e.g. the units several rows share, so that their values are comparable."""
        position = {u: k for k, u in enumerate(self.units)}
        missing = [u for u in units if u not in position]
        if missing:
            raise ValueError(f"{self.row}/{self.metric}: has no unit {missing[:3]}")
        return SeedStack(self.row, self.metric, self.statistic, list(units), list(self.seeds),
                         self.values[:, [position[u] for u in units]], self.clusters)


ClusterSpec = Union[str, None, Mapping[Any, Optional[str]], Callable[[str, str], Optional[str]]]


def _cluster_kind(clusters: ClusterSpec, row: str, metric: str) -> str | None:
    if clusters is None or isinstance(clusters, str):
        return clusters
    if callable(clusters):
        return clusters(row, metric)
    if (row, metric) in clusters:
        return clusters[(row, metric)]
    return clusters.get(metric)


def stack_seeds(measurements: Iterable[Measurement],
                clusters: ClusterSpec = None) -> dict[tuple[str, str], SeedStack]:
    """``{(row, metric): SeedStack}``; every seed of a (row, metric) must have the same units.

    ``clusters``: the cluster kind of the units (``multivec.statistics.clusters.CLUSTER_KINDS``) for every
    stack (a string), per ``metric`` or ``(row, metric)`` (a mapping; absent: None), or a function of
    (row, metric); None: independent units. A pair statistic's stack gets ``"document_pair"`` whatever is given. A kind the unit ids do not fit raises ValueError here."""
    from multivec.statistics.clusters import unit_clusters

    grouped: dict[tuple[str, str], list[Measurement]] = {}
    for m in measurements:
        grouped.setdefault((m.row, m.metric), []).append(m)
    stacks = {}
    for (row, metric), group in grouped.items():
        group.sort(key=lambda m: -math.inf if m.seed is None else m.seed)
        statistics = {m.statistic for m in group}
        if len(statistics) != 1:
            raise ValueError(f"{row}/{metric}: several statistics {sorted(statistics)}")
        if len({m.seed for m in group}) != len(group):
            raise ValueError(f"{row}/{metric}: a seed is given twice")
        units = list(group[0].units)
        arrays = []
        for m in group:
            stack = SeedStack(row, metric, m.statistic, list(m.units), [m.seed], m.values[None])
            try:
                arrays.append(stack.aligned_to(units)[0])
            except ValueError as err:
                raise ValueError(f"seed {m.seed} vs seed {group[0].seed}: {err}") from None
        kind = _cluster_kind(clusters, row, metric)
        if kind is not None and group[0].statistic in PAIR_STATISTICS:
            kind = "document_pair"  # a pair statistic always resamples its documents
        if kind is not None:
            unit_clusters(units, kind)  # the ids must fit the kind
        stacks[(row, metric)] = SeedStack(row, metric, group[0].statistic, units, [m.seed for m in group],
                                          np.stack(arrays), kind)
    return stacks
