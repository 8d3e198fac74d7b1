"""The import graph of ``src/multivec`` has no cycles (issue 18: ``data.corpora`` <-> ``data.translation_corpus``
<-> ``data.documents`` was one). Read from the source (``ast``), so an import inside a function counts as
much as one at the top: a cycle through a lazy import still ties the modules into one unit that cannot
be read, tested or reused alone."""

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
    assert "multivec.resources" in g["multivec.data.corpora"]  # english_sentence_splitter's lazy import


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
                         "multivec.dataclass_config", "multivec.baselines.base_encoder",
                         "multivec.subencoder.model", "multivec.subencoder.training",
                         "multivec.distill.student", "multivec.distill.training")


@pytest.mark.parametrize("module", INDEPENDENT_OF_NUGGET)
def test_shared_layers_and_other_works_do_not_import_nugget(module):
    graph = import_graph(modules())
    assert module in graph, f"{module} is not a module of src/multivec any more: update INDEPENDENT_OF_NUGGET"
    nugget = sorted(m for m in reachable(graph, module) if m == "multivec.nugget" or m.startswith("multivec.nugget."))
    assert not nugget, f"{module} reaches NUGGET's modules {nugget}"
