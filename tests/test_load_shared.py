"""`make load LOAD_ARGS=--shared` in miniature: a real `chroma run` server, two `rag serve`
processes with their own data directories sharing it, 4 clients sending 40 questions over both,
while a writer process adds, re-indexes and removes documents; then nothing is lost (every paper
exactly once, uploads present, removed ones gone, BM25 agreeing with Chroma in every process)
and every process was stopped."""

from __future__ import annotations

import os

import pytest

from chroma_server import CHROMA

pytestmark = pytest.mark.server


def test_two_servers_on_one_chroma_answer_everything_while_a_writer_works(tmp_path):
    if not CHROMA.exists():
        pytest.skip(f"{CHROMA} is missing: run `make install`")
    from rag.bench import load, load_shared

    args = load.parse(["--shared", "--clients", "4", "--questions", "40", "--timeout", "900",
                       "--request-timeout", "300"])
    result = load_shared.run(args, load.workload(args.questions), work=tmp_path / "work")
    out = load_shared.report(result, args)
    assert (out["answered"], out["errors"], out["cross_talk"]) == (40, 0, 0), out
    writer, store = out["writer"], out["store"]
    assert writer["cycles"] >= 2 and writer["failed"] == [], writer  # added, removed
    assert store["lost"] == [], store["lost"]
    assert (store["corpus_papers"], len(store["uploads"])) == (90, load_shared.DOCS)
    assert store["server_snapshots_checked"] == 2  # both servers' BM25 side was compared
    assert all(m["before"] > 0 and m["after"] > 0 for m in out["rss_mb"].values())
    for pid in result["pids"]:  # the servers and chroma were stopped (and reaped)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not (tmp_path / "work").exists()
