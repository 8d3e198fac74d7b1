"""Two families of bad configuration input, each closed by one rule of the config layer and held here by one
parametrised test per member kind; every case stops before any job, with a message naming the file (and line) or
the config key path.

Family 1, config files that merge silently wrong or cost without bound (multivec.config.yaml_files):
- ``--configfile`` given twice: Snakemake 9's flag (``nargs="+"``, a store action) applies only the last one's
  files, while the workflow profile's check read every file as applied; now refused in one line, and what is
  checked is what Snakemake applies (compared with Snakemake's own argument parser);
- YAML aliases that expand without bound (billion laughs, by sequences, mappings or merge keys), an alias
  inside its own anchor, nesting past ``MAX_DEPTH`` (libyaml's composer crashes the process at ~50,000 levels):
  refused while loading, at ``file:line:column``, in milliseconds;
- a ``--configfile`` that is a directory, a pipe or a device: one line naming it (a pipe is never opened).

Family 2, names that become path components (config/schema.yaml ``$defs/plain_name``): Table 2's rows, the
SubEncoder's backbones and baseline encoders, the distillation teachers' models, variants and the teacher each
names must be plain names (no ``.``/``..``, no ``/``, no leading ``-``, no whitespace or control characters, at
most 64 characters); the message names the key path.
"""

import copy
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from snakemake.common.configfile import load_configfile
from snakemake.utils import update_config

from multivec.config.checks import check_config
from multivec.config.dataclass_config import ConfigError
from multivec.config.schema import SCHEMA, load_schema
from multivec.config.yaml_files import (MAX_ALIAS_NODES, MAX_DEPTH, check_config_files, check_yaml_files,
                                        configfile_arguments, configfile_flag_problem, read_config_file)
from doubles import schema_nodes

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
SMOKE, PAPER, GPU = "config/smoke.yaml", "config/paper.yaml", "config/gpu.yaml"


def _hook(argv, capsys, one_line=True) -> str:
    """The workflow profile's call (profiles/default/config.yaml) on ``argv``: it must exit 1 (with one line)."""
    with pytest.raises(SystemExit) as info:
        check_yaml_files(argv, exit_on_error=True)
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("ConfigError: ") and (err.count("\n") == 1 or not one_line), err
    return err


# -- family 1a: --configfile given twice ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def snakemake_parser():
    from snakemake.cli import get_argument_parser

    return get_argument_parser()


def _applied(parser, argv) -> list[str]:
    """The config files Snakemake 9 applies for ``argv``: its own argument parser's ``configfile``."""
    return [str(p) for p in parser.parse_args(argv).configfile]


GIVEN_TWICE = {
    "twice_in_words": ["-n", "--configfile", SMOKE, "--configfile", PAPER],
    "both_spellings": ["--configfile", SMOKE, "--configfiles", PAPER, "-n"],
    "equals_then_words": ["results/table2.csv", "--configfile=" + SMOKE, "--configfile", PAPER, GPU],
    "words_then_equals": ["--configfiles", SMOKE, GPU, "--cores", "1", "--configfile=" + PAPER],
    "options_between": ["--configfile", SMOKE, "-n", "--cores", "2", "nugget", "--configfile", GPU],
    "three_times": ["--configfile", SMOKE, "--configfile", GPU, "--configfile", PAPER],
    "same_file_twice": ["--configfile", SMOKE, "--configfile", SMOKE],
}


@pytest.mark.parametrize("case", list(GIVEN_TWICE))
def test_configfile_given_twice_stops_in_one_line(case, snakemake_parser, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    argv = GIVEN_TWICE[case]
    applied = _applied(snakemake_parser, argv)
    named = [a.partition("=")[2] or a for a in argv if a.endswith(".yaml")]
    assert len(named) > len(applied)  # what this guards against: some file named is not applied
    assert configfile_arguments(argv) == applied  # what is checked is what Snakemake applies
    err = _hook(argv, capsys)
    assert "--configfile is given" in err and "Snakemake applies only the last one's files" in err, err
    assert "give every file after one --configfile" in err and f"--configfile {' '.join(named)}" in err, err
    assert configfile_flag_problem(argv) in err


GIVEN_ONCE = {
    "one_file": ["-n", "--configfile", SMOKE],
    "two_files": ["-n", "--configfile", SMOKE, GPU, "--cores", "1", "all"],
    "plural_spelling": ["--configfiles", SMOKE, GPU],
    "equals": ["--configfile=" + SMOKE, "results/table2.csv"],
    "double_dash_ends_options": ["--configfile", SMOKE, "--", "--configfile"],
    "none": ["-n", "all"],
}


@pytest.mark.parametrize("case", list(GIVEN_ONCE))
def test_configfile_given_once_is_read_as_snakemake_reads_it(case, snakemake_parser, monkeypatch):
    monkeypatch.chdir(REPO)
    argv = GIVEN_ONCE[case]
    assert configfile_arguments(argv) == _applied(snakemake_parser, argv)
    assert configfile_flag_problem(argv) is None
    check_yaml_files(argv, exit_on_error=True)  # valid files: nothing to say


# -- family 1b: aliases and nesting without bound ---------------------------------------------------------------

def _laughs(levels: int, width: int = 10, key: str = "lol") -> str:
    lines = [f"{key}0: &{key}0 [" + ", ".join(["ha"] * width) + "]"]
    lines += [f"{key}{i}: &{key}{i} [" + ", ".join([f"*{key}{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _mapping_laughs(levels: int, width: int = 10) -> str:
    lines = ["m0: &m0 {" + ", ".join(f"k{j}: ha" for j in range(width)) + "}"]
    lines += [f"m{i}: &m{i} {{" + ", ".join(f"k{j}: *m{i - 1}" for j in range(width)) + "}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _merge_laughs(levels: int, width: int = 10) -> str:
    """Merge keys (``<<: [*a, ...]``) flatten their mappings into another: a mapping bomb by merges."""
    lines = ["g0: &g0 {" + ", ".join(f"k{j}: ha" for j in range(width)) + "}"]
    for i in range(1, levels):
        lines.append(f"g{i}: &g{i} {{" + ", ".join(f"p{j}: {{<<: *g{i - 1}}}" for j in range(width)) + "}")
    return "\n".join(lines) + "\n"


# text, (line, column) of the alias or collection refused, strings the message must contain
UNBOUNDED = {
    "billion_laughs": (_laughs(10), (4, 63), ["YAML aliases repeat more than 10,000 nodes", "*lol2"]),
    "billion_laughs_in_a_config_key": (
        "statistics:\n  skip_claims:\n    x: &a [" + ", ".join(["ha"] * 50) + "]\n"
        "    y: &b [" + ", ".join(["*a"] * 50) + "]\n    z: [" + ", ".join(["*b"] * 50) + "]\n",
        (5, 17), ["YAML aliases repeat", "*b alone repeats 2,551"]),
    "mapping_laughs": (_mapping_laughs(9), (4, 41), ["YAML aliases repeat", "*m2"]),
    "merge_key_laughs": (_merge_laughs(9), (4, 64), ["YAML aliases repeat", "*g2"]),
    "one_anchor_repeated_wide": ("a: &a {x: 1, y: 2}\nb: [" + ", ".join(["*a"] * 5000) + "]\n", (2, 8005),
                                 ["YAML aliases repeat", "*a alone repeats 5"]),
    "recursive_sequence": ("table2: &t\n  rows: [*t]\n", (2, 10), ["*t is inside its own anchor &t"]),
    "recursive_mapping": ("train: &t {lr: 1.0e-4, again: *t}\n", (1, 31), ["*t is inside its own anchor &t"]),
    "recursive_through_a_merge": ("a: &a\n  b:\n    <<: *a\n", (3, 9), ["*a is inside its own anchor &a"]),
    "deep_flow_nesting": ("seed: " + "[" * 100_000 + "]" * 100_000 + "\n", (1, 6 + MAX_DEPTH),
                          [f"nested deeper than {MAX_DEPTH} levels"]),
    "deep_block_nesting": ("".join(f"{'  ' * i}k{i}:\n" for i in range(MAX_DEPTH + 5)) + "  " * (MAX_DEPTH + 5)
                           + "v: 1\n", (MAX_DEPTH + 1, 2 * MAX_DEPTH + 1), ["nested deeper than"]),
    "deep_through_an_alias": ("a: &a " + "[" * 40 + "]" * 40 + "\nb: " + "[" * 30 + "*a" + "]" * 30 + "\n",
                              (2, 34), [f"*a nests collections deeper than {MAX_DEPTH} levels"]),
}


@pytest.mark.parametrize("case", list(UNBOUNDED))
def test_unbounded_aliases_and_nesting_stop_at_their_line(tmp_path, case, capsys):
    text, (line, column), expected = UNBOUNDED[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    if case == "deep_flow_nesting":  # before the bound, libyaml's composer crashed the process: run it apart
        code = ("import sys; from multivec.config.yaml_files import read_config_file as r\n"
                "try: r(sys.argv[1])\nexcept Exception as e: print(e)\n")
        result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, result.stderr  # -11 was the crash
        message = result.stdout.strip()
    else:
        start = time.perf_counter()
        with pytest.raises(ConfigError) as info:
            read_config_file(path)
        assert time.perf_counter() - start < 2.0  # the walks of the expanded tree took minutes and gigabytes
        message = str(info.value)
    assert message.startswith(f"{path}:{line}:{column}: "), message
    for part in expected:
        assert part in message, message
    # The Snakefile's check and the workflow profile's say the same, before Snakemake loads the file.
    with pytest.raises(ConfigError, match="invalid config file"):
        check_config_files([path])
    assert message in _hook(["-n", "--configfile", str(path)], capsys, one_line=False)


def test_small_anchors_aliases_and_merge_keys_still_load(tmp_path):
    """Legitimate reuse stays: a shared block, merge keys overridden, a scalar alias, and repeats up to the bound."""
    text = ("resources:\n  train: &r {threads: 1, mem_mb: 1000, runtime: 10}\n  encode: *r\n  build:\n"
            "    <<: *r\n    threads: 2\nstatistics:\n  skip_claims: {A: &why not at this scale, B: *why}\n"
            "wide: [" + ", ".join(["*r"] * (MAX_ALIAS_NODES // 8)) + "]\n")
    path = tmp_path / "anchors.yaml"
    path.write_text(text)
    data = read_config_file(path)
    assert data["resources"] == {"train": {"threads": 1, "mem_mb": 1000, "runtime": 10},
                                 "encode": {"threads": 1, "mem_mb": 1000, "runtime": 10},
                                 "build": {"threads": 2, "mem_mb": 1000, "runtime": 10}}
    assert data["statistics"]["skip_claims"] == {"A": "not at this scale", "B": "not at this scale"}
    assert len(data["wide"]) == MAX_ALIAS_NODES // 8


SHIPPED = sorted([*REPO.glob("config/*.yaml"), *REPO.glob("tests/fixtures/**/*.yaml")])


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_yaml_reads_as_before(path):
    """The bounds change no shipped file: the strict loader gives what Snakemake's own loader gives."""
    assert read_config_file(path) == load_configfile(str(path))


@pytest.mark.parametrize("overlays", [[], ["smoke.yaml"], ["paper.yaml"], ["paper.yaml", "rehearsal.yaml"], ["gpu.yaml"],
                                      ["smoke.yaml", "../tests/fixtures/smoke_two_claim_seeds.yaml"]],
                         ids=["demo", "smoke", "paper", "rehearsal", "gpu", "smoke_two_claim_seeds"])
def test_the_shipped_configs_still_validate_unchanged(overlays):
    merged = copy.deepcopy(load_configfile(str(REPO / "config" / "config.yaml")))
    ours = read_config_file(REPO / "config" / "config.yaml")
    for name in overlays:
        update_config(merged, load_configfile(str(REPO / "config" / name)))
        update_config(ours, read_config_file(REPO / "config" / name))
    assert ours == merged
    before = copy.deepcopy(merged)
    check_config(merged, sources="off")
    assert merged == before


# -- family 1c: a --configfile that is not a file ---------------------------------------------------------------

def _not_a_file(kind, tmp_path) -> str:
    if kind == "directory":
        return "config"
    if kind == "directory_with_slash":
        return "config/"
    if kind == "empty_tmp_directory":
        (tmp_path / "overlays").mkdir()
        return str(tmp_path / "overlays")
    if kind == "device":
        return "/dev/null"
    if kind == "named_pipe":  # `--configfile <(...)` is one: opening it would wait for a writer
        os.mkfifo(tmp_path / "pipe.yaml")
        return str(tmp_path / "pipe.yaml")
    raise AssertionError(kind)


NOT_A_FILE = {"directory": "a directory", "directory_with_slash": "a directory",
              "empty_tmp_directory": "a directory", "device": "a device", "named_pipe": "a named pipe"}


@pytest.fixture
def alarm():
    """Fail, rather than hang, if a check opens a named pipe (it would wait for a writer forever)."""
    def expired(*_):
        raise TimeoutError("the check opened a named pipe")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("kind", list(NOT_A_FILE))
def test_a_configfile_that_is_not_a_file_is_one_line(kind, tmp_path, capsys, monkeypatch, alarm):
    monkeypatch.chdir(REPO)
    given = _not_a_file(kind, tmp_path)
    err = _hook(["-n", "all", "--configfile", SMOKE, given], capsys)
    assert err.startswith(f"ConfigError: --configfile {given} is {NOT_A_FILE[kind]}"), err
    assert "config/smoke.yaml" in err and "config/paper.yaml" in err  # the files it could have meant
    # The Snakefile's check (and every other reader of config files) names it too.
    with pytest.raises(ConfigError) as info:
        read_config_file(given)
    assert str(info.value).startswith(f"{given}: {NOT_A_FILE[kind]}"), info.value


def _snakemake(*args, cwd):
    env = dict(os.environ, HF_HUB_OFFLINE="1", MULTIVEC_DATA_MIRROR="")
    return subprocess.run([SNAKEMAKE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args", [["--configfile", SMOKE, "--configfile", GPU], ["--configfile", "config"]],
                         ids=["given_twice", "directory"])
def test_the_profile_stops_a_real_run_in_one_line(args, tmp_path):
    """End to end: `snakemake` reads the workflow profile and stops before loading the files (no DAG, no job);
    a directory was Snakemake's full usage text and a template error."""
    result = _snakemake("-n", *args, "--directory", str(tmp_path), "results/table2.csv", cwd=REPO)
    lines = [line for line in result.stderr.splitlines() if not line.startswith("Using workflow specific profile")]
    assert result.returncode == 1 and len(lines) == 1, result.stdout + result.stderr
    assert lines[0].startswith("ConfigError: --configfile "), lines[0]
    assert "usage:" not in result.stderr and "Job stats" not in result.stdout + result.stderr
    assert not any(tmp_path.iterdir())


# -- family 2: names that become path components ----------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_config():
    return read_config_file(REPO / "config" / "config.yaml")


# Where a config name becomes a path component (rules/*.smk), as a key path in the demo config; the test below
# holds that the schema's plain_name is used exactly at these places.
NAME_PLACES = {
    "table2.rows[0].name": ("table2", "rows", 0, "name"),  # results/table2/<row>/..., models/<row>/seed<s>
    "subencoder.model.backbones[0].name": ("subencoder", "model", "backbones", 0, "name"),  # models/subencoder/<b>_<dim>
    "subencoder.evaluation.baseline_encoders[0].name": ("subencoder", "evaluation", "baseline_encoders", 0, "name"),
    "distill.structural_teacher.models[0]": ("distill", "structural_teacher", "models", 0),  # teachers/sbert_<m>
    "distill.structural_teacher.teacher": ("distill", "structural_teacher", "teacher"),
    "distill.contextual_teacher.variants[0].name": ("distill", "contextual_teacher", "variants", 0, "name"),
    "distill.contextual_teacher.teacher": ("distill", "contextual_teacher", "teacher"),  # teachers/pv_<v>
}
PLAIN_NAME_SCHEMA_PLACES = {
    "#/properties/table2/properties/rows/items/properties/name",
    "#/properties/subencoder/properties/model/properties/backbones/items/properties/name",
    "#/properties/subencoder/properties/evaluation/properties/baseline_encoders/items/properties/name",
    "#/properties/distill/properties/structural_teacher/properties/models/items",
    "#/properties/distill/properties/structural_teacher/properties/teacher",
    "#/properties/distill/properties/contextual_teacher/properties/variants/items/properties/name",
    "#/properties/distill/properties/contextual_teacher/properties/teacher",
}
# Enumerated names (already plain: the schema lists them) and seeds (integers >= 0) need no rule of their own.
ENUM_NAME_PLACES = {
    "nugget_lm.rows[0].name": ("nugget_lm", "rows", 0, "name"),
    "nugget_ablation.rows[0]": ("nugget_ablation", "rows", 0),
    "statistics.seeds.tables[0]": ("statistics", "seeds", "tables", 0),
}

BAD_NAMES = {
    "dot_dot": "..",
    "dot": ".",
    "parent_path": "../pi",
    "slash": "a/b",
    "absolute": "/tmp/x",
    "leading_dash": "-rf",
    "leading_dot": ".hidden",
    "space": "row one",
    "tab": "row\tone",
    "trailing_newline": "row\n",  # passed the old pattern: Python's $ matches before a final newline
    "carriage_return": "row\r",
    "escape_sequence": "\x1b[31mred",
    "nul": "row\x00",
    "empty": "",
    "too_long": "r" * 65,
}


# Entries for lists the demo config leaves empty (subencoder.evaluation.baseline_encoders: []).
EXAMPLE_ENTRIES = {("subencoder", "evaluation", "baseline_encoders"): {"name": "x", "encoder": "minilm"}}


def _config_with(demo_config, path, name):
    config = copy.deepcopy(demo_config)
    node = config
    for i, part in enumerate(path[:-1]):
        if isinstance(part, int) and isinstance(node, list) and part >= len(node):
            node.append(copy.deepcopy(EXAMPLE_ENTRIES[tuple(path[:i])]))
        node = node[part]
    node[path[-1]] = name
    return config


@pytest.mark.parametrize("name", list(BAD_NAMES.values()), ids=list(BAD_NAMES))
@pytest.mark.parametrize("where", list(NAME_PLACES))
def test_a_name_that_is_not_a_plain_path_component_stops_at_its_key(demo_config, where, name):
    config = _config_with(demo_config, NAME_PLACES[where], name)
    with pytest.raises(ConfigError) as info:
        check_config(config, sources="off")
    message = str(info.value)
    assert f"{where}: {name[:20]!r}" in message, message
    assert "a plain name, because files and folders are named after it" in message, message
    assert message.count("\n") == 1, message  # this one problem, not a cascade


@pytest.mark.parametrize("name", ["..", "a/b", "-rf", "row\n"], ids=["dot_dot", "slash", "leading_dash", "newline"])
@pytest.mark.parametrize("where", list(ENUM_NAME_PLACES))
def test_enumerated_names_and_seeds_refuse_them_too(demo_config, where, name):
    config = _config_with(demo_config, ENUM_NAME_PLACES[where], name)
    with pytest.raises(ConfigError, match=r"invalid configuration") as info:
        check_config(config, sources="off")
    assert f"{where}: {name!r}" in str(info.value), info.value


@pytest.mark.parametrize("name", ["my_row_r0.1", "dm9_stem_dbow9_none", "st5_base2", "0", "_x", "a-b.c", "r" * 64])
@pytest.mark.parametrize("where", list(NAME_PLACES))
def test_plain_names_pass(demo_config, where, name):
    config = _config_with(demo_config, NAME_PLACES[where], name)
    if where.startswith("distill.structural_teacher"):  # the teacher is one of the models
        config["distill"]["structural_teacher"]["models"][0] = config["distill"]["structural_teacher"]["teacher"] \
            = name
    if where.startswith("distill.contextual_teacher"):  # ... one of the variants
        config["distill"]["contextual_teacher"]["variants"][0]["name"] = name
        config["distill"]["contextual_teacher"]["teacher"] = name
    if where.startswith("table2"):  # statistics.comparisons refer to rows by name
        config["statistics"]["comparisons"].pop("table2", None)
    check_config(config, sources="off")


def test_one_schema_rule_holds_every_name_that_becomes_a_path():
    """Every name of the schema is the one plain_name rule or an enum, and no other pattern stands in for it:
    a new named list (or a new teacher key) joins NAME_PLACES with its rule."""
    schema = load_schema(SCHEMA)
    refs = {where for where, node in schema_nodes(schema) if node.get("$ref") == "#/$defs/plain_name"}
    assert refs == PLAIN_NAME_SCHEMA_PLACES
    patterns = [where for where, node in schema_nodes(schema) if "pattern" in node]
    assert patterns == ["#/$defs/plain_name"], patterns
    for where, node in schema_nodes(schema):
        name = node.get("properties", {}).get("name")
        if name is not None:
            assert name.get("$ref") == "#/$defs/plain_name" or "enum" in name, f"{where}/properties/name"
