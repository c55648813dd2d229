"""The install is reproducible: every pinned dependency agrees with requirements.lock, and the
package installs every folder of the repository it needs under the one import name `rag`."""

from __future__ import annotations

import re
import tomllib

from conftest import ROOT


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.lower())


def test_pyproject_pins_match_the_lock_file():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lock = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.strip().split("==")
            lock[_norm(name)] = version
    deps = project["dependencies"] + sum(project["optional-dependencies"].values(), [])
    for dep in deps:
        m = re.match(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?==(\S+)", dep)
        assert m, f"{dep} is not pinned with =="
        name = _norm(m.group(1))
        if name in lock:
            assert lock[name] == m.group(3), f"{name}: pyproject {m.group(3)}, lock {lock[name]}"


def test_torch_is_pinned_to_the_cpu_build_on_disk():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "torch==2.13.0" in [d.split("#")[0].strip() for d in project["dependencies"]]


def test_every_package_folder_is_installed_under_the_one_import_name_rag():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {"rag": "rag", **{package: folder for package, folder in tool["package-dir"].items()}}
    listed = set(tool["packages"])
    assert all(p == "rag" or p.startswith("rag.") for p in listed)
    for package, folder in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            assert ".".join([package, *parts]) in listed, f"{init.parent} is not installed"
