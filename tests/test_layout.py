"""The package reads in the order data flows, and stays that way.

`rag/` is grouped by pipeline stage. A stage may import the foundation and the stages before it,
never a later one; the library never imports its edges (the UI, the evals, the benchmarks), which
may import anything. The top-level modules that assemble the stages are ranked too, one rank
each, so none imports one ranked after it; no two modules anywhere import each other, however
indirectly. LINE_LIMIT is a smell test, not a target: modules are cut where an idea ends.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

LINE_LIMIT = 400
# folder -> installed package (pyproject.toml's package-dir)
FOLDERS = {"rag": "rag", "seeds": "rag.seeds", "ui": "rag.ui", "eval": "rag.eval",
           "bench": "rag.bench"}
# Rank of each part of the package; a module may import only ranks up to its own.
FOUNDATION = ("rag.types", "rag.settings", "rag.errors", "rag.text", "rag.lexicon", "rag.progress",
              "rag.registry", "rag.models",
              "rag.seeds")
STAGES = ("rag.ingest", "rag.index", "rag.retrieve", "rag.answer", "rag.check")
# The assembled library, in the order it builds up: each may import only those before it.
TOP = ("rag.engine", "rag.factory", "rag.pipeline", "rag.documents", "rag.llamaindex", "rag")
EDGES = ("rag.ui", "rag.eval", "rag.bench")


def rank(module: str) -> float:
    """0 foundation, 1..5 the stages in data-flow order, 6.x the assembled library (one rank per
    module, in TOP's order), 7 the edges."""
    def under(prefixes):
        return any(module == p or module.startswith(p + ".") for p in prefixes)

    if under(EDGES):
        return 7
    if under(FOUNDATION):
        return 0
    for i, stage in enumerate(STAGES, start=1):
        if under((stage,)):
            return i
    assert module in TOP, f"{module} is in no stage: add it to tests/test_layout.py"
    return 6 + TOP.index(module) / 10


def modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if any(part in ("results", "datasets") for part in path.relative_to(ROOT).parts):
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def _type_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`: names for annotations only (the typed
    `Turn` names the later stages' types), never run, so no dependency at run time."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def imports(module: str, path: Path) -> set[str]:
    """Every project module `module` imports, at the top or inside a function (not those
    under `if TYPE_CHECKING:`)."""
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}
    known = modules()
    return {name for name in found if name in known and name != module}


def test_no_stage_imports_a_later_stage_and_the_library_never_imports_its_edges():
    wrong = []
    for module, path in modules().items():
        for target in imports(module, path) - {"rag"}:  # `from . import x` names the package
            if rank(target) > rank(module):
                wrong.append(f"{module} imports {target}")
    assert not wrong, "imports against the data flow:\n" + "\n".join(sorted(wrong))


def import_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others (Tarjan's
    strongly connected components of more than one module).
    Example: {"a": {"b"}, "b": {"a"}, "c": {"a"}} -> [["a", "b"]]."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                loops.append(sorted(group))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return loops


def test_the_loop_finder_finds_a_loop_through_a_third_module():
    assert import_loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_loops({"a": {"b"}, "b": set()}) == []


def test_no_modules_import_each_other():
    graph = {module: imports(module, path) - {"rag"} for module, path in modules().items()}
    assert import_loops(graph) == []


def test_no_module_is_longer_than_the_limit():
    long = {module: n for module, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > LINE_LIMIT}
    assert not long, f"modules over {LINE_LIMIT} lines: {long}"


def test_the_rule_is_checked_on_the_real_tree():
    found = modules()
    assert {"rag.pipeline", "rag.engine", "rag.index.build", "rag.check.support",
            "rag.ui.cli"} <= set(found)
    assert "rag.check.support" in imports("rag.engine", found["rag.engine"])
    assert rank("rag.models.embedders") < rank("rag.ingest.corpus") < rank("rag.index.store") \
        < rank("rag.retrieve.gate") < rank("rag.answer.local") < rank("rag.check.reply") \
        < rank("rag.engine") < rank("rag.factory") < rank("rag.pipeline") < rank("rag") \
        < rank("rag.ui.cli")


def test_the_library_loads_no_ui_eval_or_bench_module(seed_home, tmp_path):
    code = ("import json, sys, rag\n"
            f"answer = rag.ask('Which kernels avoid mean reversion?', home={str(seed_home)!r})\n"
            "print(json.dumps([answer.generator, sorted(sys.modules)]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "RAG_HOME": str(seed_home)})
    assert out.returncode == 0, out.stderr
    generator, loaded = json.loads(out.stdout.splitlines()[-1])
    assert generator == "extractive" and "rag.pipeline" in loaded
    edges = [m for m in loaded if m.split(".")[:2] in (["rag", "ui"], ["rag", "eval"],
                                                       ["rag", "bench"])
             or m.split(".")[0] in ("ui", "bench")]
    assert edges == []


def _word_list(node: ast.AST) -> bool:
    """Whether a module-level value is a list of words: a string of 6+ words split or
    stemmed, or a set or dict literal of 6+ strings."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and getattr(sub.func, "id", getattr(sub.func, "attr", "")) \
                in ("frozenset", "tokenize", "content_terms", "split"):
            if any(isinstance(s, ast.Constant) and isinstance(s.value, str)
                   and len(s.value.split()) >= 6 for s in ast.walk(sub)):
                return True
        if isinstance(sub, (ast.Set, ast.Dict)):
            items = sub.elts if isinstance(sub, ast.Set) else sub.keys
            if sum(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in items) >= 6:
                return True
    return False


def test_word_lists_live_in_the_lexicon_each_once():
    import rag.lexicon as lexicon

    elsewhere = []
    for module, path in modules().items():
        if module == "rag.lexicon" or rank(module) == 7:  # the edges' lists are not words
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and _word_list(node.value):
                elsewhere.append(f"{module}: {ast.unparse(node.targets[0])}")
    assert elsewhere == [], "word lists outside rag/lexicon.py"
    lists = {name: value for name, value in vars(lexicon).items()
             if name.isupper() and isinstance(value, (frozenset, set, dict, tuple))}
    assert len(lists) >= 20
    values = [repr(sorted(v.items()) if isinstance(v, dict) else sorted(map(str, v)))
              for v in lists.values()]
    assert len(set(values)) == len(values), "two lexicon lists hold the same words"
