"""The seed sets and the rows each one holds (multivec.rules.seed_sets)."""

import pytest

from multivec.rules.seed_sets import SeedSets
from rules_configs import REPO, scale_config, seed_sets


@pytest.fixture(scope="module")
def seeds():
    return seed_sets(scale_config("demo"))


def test_model_seeds(seeds):
    assert seeds.model_seeds() == seeds.model_seeds("tables") == [13]
    assert seeds.model_seeds("claims") == [13, 14, 15]


def test_tables_hold_every_row_and_claims_the_claimed_ones_in_table_order(seeds):
    rows = ["bm25", "nugget_mt_r0.25", "colbart", "nugget_mt_r0.1"]
    assert seeds.rows("table2", "tables", rows) == rows
    claimed = seeds.claimed_rows("table2")
    assert {"nugget_mt_r0.1", "nugget_mt_r0.25"} <= claimed
    assert seeds.rows("table2", "claims", rows) == [r for r in rows if r in claimed]
    assert seeds.rows("no_such_table", "claims", rows) == []


def test_claims_are_read_from_the_given_file(tmp_path):
    """Only the claims file given decides: without the claims that name Table 2, its claim seed set is empty."""
    import yaml

    from multivec.statistics.claims_file import references

    source = scale_config("demo")
    document = yaml.safe_load((REPO / source["statistics"]["claims_file"]).read_text(encoding="utf-8"))
    document["claims"] = [c for c in document["claims"]
                          if all(ref.table != "table2" for ref in references(c["rule"], str(c["id"])))]
    claims = tmp_path / "claims.yaml"
    claims.write_text(yaml.safe_dump(document), encoding="utf-8")
    seeds = SeedSets(source["statistics"], str(claims))
    assert seeds.claimed_rows("table2") == set()
    assert seeds.rows("table2", "claims", ["nugget_mt_r0.1"]) == []
    assert seeds.rows("table2", "tables", ["nugget_mt_r0.1"]) == ["nugget_mt_r0.1"]
