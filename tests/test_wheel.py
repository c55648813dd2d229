"""The built wheel works on its own: installed into a fresh venv, used from a directory that is
not the repository, `rag index`, `rag ask --json` and the UI's `ask` API answer from it.

The fresh venv reuses the project venv's dependencies through a .pth line (a path line adds the
folder to sys.path without running the project's editable-install hook), so only the wheel
itself is new, and it must bring its own data: the seeds, the UI's static files, the evals'
datasets."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from test_ui_api import QUESTION, free_port, stop, wait_up

GP_PAPER = "icml2024-poster-34936"
pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    out = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                          "--outdir", str(dist), str(ROOT)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return next(dist.glob("icml_rag-*.whl"))


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("wheel-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True,
                   timeout=120)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "project-dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n")
    out = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                          "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return where


@pytest.fixture
def run(venv, tmp_path):
    """Run a command of the installed wheel from a temporary directory (not the repository)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(RAG_HOME=str(tmp_path / "home"), RAG_CORPUS="seeds", HF_HUB_OFFLINE="1",
               GRADIO_ANALYTICS_ENABLED="False", PYTHONUNBUFFERED="1")
    work = tmp_path / "elsewhere"
    work.mkdir()

    def run(*args, timeout=900, **kw):
        return subprocess.run([str(venv / "bin" / args[0]), *args[1:]], cwd=work, env=env,
                              capture_output=True, text=True, timeout=timeout, **kw)

    run.env, run.cwd = env, work
    return run


def test_the_wheel_installs_one_import_name_with_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"rag", next(t for t in tops if t.endswith(".dist-info"))}  # no ui, eval, ...
    for data in ("rag/seeds/icml2024.jsonl", "rag/seeds/metadata.jsonl", "rag/ui/static/app.css",
                 "rag/ui/static/app.js", "rag/eval/datasets/seeds.jsonl",
                 "rag/eval/thresholds.json", "rag/ui/cli.py", "rag/eval/run.py"):
        assert data in names, data


def test_the_installed_wheel_indexes_answers_and_serves_from_another_directory(run, venv):
    where = run("python", "-c", "import rag, rag.ui.app; print(rag.__file__)")
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    indexed = run("rag", "index")
    assert indexed.returncode == 0, indexed.stderr
    assert indexed.stdout.startswith("seeds: 90 papers")

    asked = run("rag", "ask", "--json", QUESTION)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert not answer["abstained"] and answer["citations"][0]["paper_id"] == GP_PAPER

    from gradio_client import Client

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    log = run.cwd / "serve.log"
    proc = subprocess.Popen([str(venv / "bin" / "rag"), "serve", "--port", str(port)],
                            cwd=run.cwd, env=run.env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)
    try:
        wait_up(proc, url, log, limit=300)
        got = Client(url, verbose=False).predict(QUESTION, api_name="/ask")
    finally:
        stop(proc)
    assert got["citations"][0]["paper_id"] == GP_PAPER
    assert got["answer"] == answer["answer"]
