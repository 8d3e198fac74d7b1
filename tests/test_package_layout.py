"""The package's layout: nothing loose at the package root, imports that run down the layers (``LAYERS``), and
no import cycles in ``src/multivec`` (``data.corpora`` <-> ``data.translation_corpus`` <->
``data.documents`` was one). Read from the source (``ast``), so an import inside a function counts as much as
one at the top: a cycle through a lazy import still ties the modules into one unit that cannot be read,
tested or reused alone."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

def modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / "multivec").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph(found: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the multivec modules it imports (anywhere in its file). ``from pkg import name`` counts
    ``pkg.name`` when that is a module, else ``pkg``; a module's own ancestor packages are left out (Python
    initialises them first whoever imports what)."""

    def resolve(name: str) -> str | None:
        while name and name not in found:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as err:
            pytest.fail(f"{path}:{err.lineno}: cannot parse ({err.msg})")
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    targets.add(full if full in found else base)
        edges = {resolve(t) for t in targets if t.split(".")[0] == "multivec"}
        ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        graph[name] = {e for e in edges if e and e != name and e not in ancestors}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_reader_sees_lazy_imports_and_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [frozenset("abc")]
    found = modules()
    g = import_graph(found)
    assert "multivec.data.wikitext" in g["multivec.tasks.passage_reranking"]  # a top-level import
    assert "multivec.data.news_commentary" in g["multivec.data.corpora"]
    assert "multivec.data.nltk_resources" in g["multivec.data.corpora"]  # english_sentence_splitter's lazy import


def test_no_import_cycles_in_multivec():
    # the last two (io <-> data.language; subencoder.tables <-> table_units <-> segmentation_quality) were
    # broken by passing the language check into read_docs_tsv and moving Table 7's table code to tables.py
    found = cycles(import_graph(modules()))
    assert not found, f"import cycles: {[sorted(c) for c in found]}"


def test_no_data_module_is_in_a_cycle_of_its_own_package():
    for cycle in cycles(import_graph(modules())):
        inside = [m for m in cycle if m.startswith("multivec.data.")]
        assert len(inside) < 2, f"multivec.data modules import each other in a circle: {sorted(cycle)}"


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


# The shared training engine and the other works' models and trainers: none may reach NUGGET's modules. They
# used to, for three generic helpers (``_from_dict``, ``epoch_batches``, ``pad_sequences``), and so every
# sub-encoder, distillation and base-encoder job loaded NUGGET's model and transformers' mBART code.
INDEPENDENT_OF_NUGGET = ("multivec.training", "multivec.training.engine", "multivec.training.batching",
                         "multivec.config.dataclass_config", "multivec.baselines.base_encoder",
                         "multivec.subencoder.model", "multivec.subencoder.training",
                         "multivec.distill.student", "multivec.distill.training")


@pytest.mark.parametrize("module", INDEPENDENT_OF_NUGGET)
def test_shared_layers_and_other_works_do_not_import_nugget(module):
    graph = import_graph(modules())
    assert module in graph, f"{module} is not a module of src/multivec any more: update INDEPENDENT_OF_NUGGET"
    nugget = sorted(m for m in reachable(graph, module) if m == "multivec.nugget" or m.startswith("multivec.nugget."))
    assert not nugget, f"{module} reaches NUGGET's modules {nugget}"


# -- the package's layout -----------------------------------------------------------------------------------

# At the package root only the package itself and its command line; everything else lives in a subpackage
# named for what it is (docs/architecture.md has the map).
ROOT_MODULES = {"__init__.py", "__main__.py"}

# Low to high: a module may import its own layer and the layers below it, never one above. Shared code sits
# below the three works, so a work can be read and changed without the others; the entry points sit on top.
LAYERS = (
    ("io",),  # checked files, safe loading, resource resolution
    ("config", "inspection"),  # the configuration layer; the inspector registry
    ("pipeline",),  # workflow, cluster and report support
    ("data", "encodings", "metrics", "retrieval", "statistics", "training"),  # shared building blocks
    ("tasks", "baselines", "evaluation"),  # shared ranking tasks, baseline encoders, ranking evaluation
    ("nugget", "subencoder", "distill"),  # the three works, each in its package
    ("rules", "interop"),  # what the rule files name, bound to the config there; exports to other libraries
    ("rehearsal", "__main__"),  # the rehearsal scale's fixtures; the command line
)
WORKS = ("nugget", "subencoder", "distill")

# Imports that still run against the layers, each with its reason. The test fails when one of these goes
# away too, so the list shrinks as the code moves to where it belongs and never hides a new one.
KNOWN_BACKWARD_IMPORTS = {
    # the config layer builds every NuggetConfig the rules build, to report an error at the key that set it
    ("multivec.config.merged_settings", "multivec.nugget.configuration"),
    # Table 4's rows checked against the zoo's models before any job, built as the rules build them
    ("multivec.config.cross_checks", "multivec.nugget.configuration"),
    ("multivec.config.cross_checks", "multivec.nugget.zoo"),
    # NUGGET's training corpus builder, which sizes documents with NUGGET's source tokenizer
    ("multivec.data.documents", "multivec.nugget.processing"),
    # the overlap audit reads every work's corpora against every evaluation task
    ("multivec.data.overlap", "multivec.subencoder.data.propsegment"),
    ("multivec.data.overlap", "multivec.tasks.ranking_task"),
    # the student's model-folder inspector reuses NUGGET's
    ("multivec.distill.student_inspector", "multivec.nugget.inspector"),
    # the check before any job that the data a config reads can be obtained here: which files a config reads
    # and how each is obtained is the data layer's knowledge
    ("multivec.config.sources_check", "multivec.data.availability"),
}


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(module: str) -> int | None:
    package = package_of(module)
    return next((i for i, names in enumerate(LAYERS) if package in names), None)


def backward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer, imported) where the imported module sits in a higher layer, or in another work."""
    found = set()
    for module, targets in graph.items():
        for target in targets:
            here, there = layer_of(module), layer_of(target)
            if here is None or there is None:
                continue
            other_work = package_of(module) in WORKS and package_of(target) in WORKS and \
                package_of(module) != package_of(target)
            if there > here or other_work:
                found.add((module, target))
    return found


def test_nothing_but_the_package_and_its_command_line_at_the_root():
    loose = sorted(p.name for p in (SRC / "multivec").glob("*.py") if p.name not in ROOT_MODULES)
    assert not loose, (f"modules at the package root: {loose}; put each in the subpackage of what it is "
                       "(docs/architecture.md)")


def test_every_package_has_a_layer():
    packages = {package_of(m) for m in modules()} - {"__init__"}
    unplaced = sorted(p for p in packages if layer_of(f"multivec.{p}") is None)
    assert not unplaced, f"packages in no layer of LAYERS: {unplaced}"


def test_the_layer_check_sees_a_backward_import():
    graph = {"multivec.io.checked_files": {"multivec.nugget.modeling"},
             "multivec.nugget.modeling": {"multivec.io.checked_files"},
             "multivec.distill.student": {"multivec.subencoder.model"}}
    assert backward_imports(graph) == {("multivec.io.checked_files", "multivec.nugget.modeling"),
                                       ("multivec.distill.student", "multivec.subencoder.model")}


def test_imports_run_down_the_layers():
    found = backward_imports(import_graph(modules()))
    new = sorted(found - KNOWN_BACKWARD_IMPORTS)
    assert not new, f"imports up the layers (or from one work into another): {new}; see LAYERS"
    gone = sorted(KNOWN_BACKWARD_IMPORTS - found)
    assert not gone, f"no longer imported, remove from KNOWN_BACKWARD_IMPORTS: {gone}"


def test_the_architecture_map_names_modules_that_exist():
    """docs/architecture.md maps the papers to modules: in its tables every path (relative to src/multivec) must
    exist, and every package of src/multivec must appear in its package map."""
    import re

    text = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    root = SRC / "multivec"
    rows = [line for line in text.splitlines() if line.startswith("|")]
    named = [cell for line in rows for cell in re.findall(r"`([^`]+)`", line)
             if re.fullmatch(r"[\w/]+\.py|[\w]+/([\w/]*)", cell)]
    assert len(named) > 50, "the map names hardly any module: is the table format still read right?"
    missing = sorted(c for c in named if not (root / c).exists())
    assert not missing, f"docs/architecture.md names modules that do not exist (paths from src/multivec): {missing}"
    packages = {p.name for p in root.iterdir() if (p / "__init__.py").exists()}
    unmapped = sorted(p for p in packages if f"`multivec.{p}`" not in text)
    assert not unmapped, f"packages missing from docs/architecture.md's map: {unmapped}"


def test_no_code_names_a_checkout_or_machine_path():
    """Code runs from any clone: no source, benchmark, script or rule names this machine's checkout
    (a benchmark once defaulted to /work/main/data/...); paths are relative to the repository."""
    import re

    repo = SRC.parent
    pattern = re.compile(r"(?<![\w.])/(?:work|home|root|Users)/\w")
    files = [p for folder in ("src", "benchmarks", "scripts", "rules", "workflow") for p in (repo / folder).rglob("*")
             if p.is_file() and p.suffix in {".py", ".sh", ".smk", ".yaml", ".rst"}] + [repo / "Snakefile"]
    found = [f"{p.relative_to(repo)}:{n}" for p in files
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1) if pattern.search(line)]
    assert not found, found
