"""The load benchmarks' clients: threads sending numbered questions to `rag serve`'s `ask`
endpoint and recording, per question, its latency, any error and whether the answer echoes the
question it was sent with. Used by `load.py` (one server) and `load_shared.py` (two servers
sharing a Chroma run while a writer writes).
"""

from __future__ import annotations

import queue
import threading
import time


def run_clients(ask, sent: list[str], clients: int, deadline: float, request_timeout: float
                ) -> tuple[list[dict], float]:
    """Send every question from `clients` threads; one record per question."""
    from rag.text import clean_question

    todo: queue.Queue = queue.Queue()
    for i, q in enumerate(sent):
        todo.put((i, q))
    records: list[dict] = [{} for _ in sent]

    def worker(w: int) -> None:
        try:
            call = ask(w)
        except Exception as exc:  # a client that cannot connect fails its share
            call, error = None, f"{type(exc).__name__}: {exc}"
        while time.monotonic() < deadline:
            try:
                i, q = todo.get_nowait()
            except queue.Empty:
                return
            t = time.perf_counter()
            try:
                if call is None:
                    raise RuntimeError(error)
                answer = call(q, request_timeout)
                ok = answer.get("question") == clean_question(q)  # the question as echoed
                records[i] = {"ms": (time.perf_counter() - t) * 1000, "error": "",
                              "match": ok, "abstained": answer.get("abstained"),
                              "got": "" if ok else str(answer.get("question"))[:120]}
            except Exception as exc:
                records[i] = {"ms": (time.perf_counter() - t) * 1000, "match": False,
                              "error": f"{type(exc).__name__}: {str(exc)[:200]}"}

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(max(0.0, deadline - time.monotonic()) + 5)
    return records, time.perf_counter() - t0


def server_ask(port: int):
    from gradio_client import Client

    def make(_w: int):
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)

        def call(q: str, timeout: float) -> dict:
            return client.submit(q, api_name="/ask").result(timeout=timeout)
        return call
    return make
