"""The package reads in the order data flows, and stays that way.

`rag/` is grouped by pipeline stage. A stage may import the foundation and the stages before it,
never a later one; the library never imports its edges (the UI, the evals, the benchmarks), which
may import anything. No module grows past LINE_LIMIT lines.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

LINE_LIMIT = 250
# folder -> installed package (pyproject.toml's package-dir)
FOLDERS = {"rag": "rag", "seeds": "rag.seeds", "ui": "rag.ui", "eval": "rag.eval",
           "bench": "rag.bench"}
# Rank of each part of the package; a module may import only ranks up to its own.
FOUNDATION = ("rag.types", "rag.settings", "rag.errors", "rag.text", "rag.progress", "rag.models",
              "rag.seeds")
STAGES = ("rag.ingest", "rag.index", "rag.retrieve", "rag.answer", "rag.check")
TOP = ("rag", "rag.pipeline", "rag.compose", "rag.factory", "rag.documents", "rag.llamaindex")
EDGES = ("rag.ui", "rag.eval", "rag.bench")


def rank(module: str) -> int:
    """0 foundation, 1..5 the stages in data-flow order, 6 the assembled library, 7 the edges."""
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
    return 6


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


def imports(module: str, path: Path) -> set[str]:
    """Every project module `module` imports, at the top or inside a function."""
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
        for target in imports(module, path):
            if rank(target) > rank(module):
                wrong.append(f"{module} imports {target}")
    assert not wrong, "imports against the data flow:\n" + "\n".join(sorted(wrong))


def test_no_module_is_longer_than_the_limit():
    long = {module: n for module, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > LINE_LIMIT}
    assert not long, f"modules over {LINE_LIMIT} lines: {long}"


def test_the_rule_is_checked_on_the_real_tree():
    found = modules()
    assert {"rag.pipeline", "rag.compose", "rag.index.build", "rag.check.support", "rag.ui.cli"} <= set(found)
    assert "rag.check.support" in imports("rag.compose", found["rag.compose"])
    assert rank("rag.models.embedders") < rank("rag.ingest.corpus") < rank("rag.index.store") \
        < rank("rag.retrieve.gate") < rank("rag.answer.local") < rank("rag.check.reply") \
        < rank("rag.pipeline") < rank("rag.ui.cli")


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
