"""The guard in conftest.py: a test that uses a DAG-building or SLURM fixture without the e2e mark stops the
collection, so `-m "not e2e"` never builds the smoke DAG."""

from types import SimpleNamespace

import pytest
from conftest import unmarked_end_to_end_tests


def _item(nodeid, fixtures, marked):
    return SimpleNamespace(nodeid=nodeid, fixturenames=fixtures,
                           get_closest_marker=lambda name: pytest.mark.e2e if marked and name == "e2e" else None)


def test_unmarked_end_to_end_tests_are_named_marked_ones_and_unit_tests_pass():
    items = [_item("t::builds", ["tmp_path", "smoke_all"], marked=False),
             _item("t::builds_marked", ["copy_of_smoke_all"], marked=True),
             _item("t::slurm", ["local_slurm"], marked=False),
             _item("t::unit", ["tmp_path", "mirror"], marked=False)]
    assert unmarked_end_to_end_tests(items) == ["t::builds", "t::slurm"]
