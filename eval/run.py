"""`rag eval`: run configurations over a dataset, side by side, and write rows plus a summary.

    rag eval --dataset seeds
    rag eval --dataset scifact --grid retriever=bm25,dense,hybrid
    rag eval --dataset seeds --grid retriever=hybrid,bm25 k=3,5,10 --gate
    rag eval --dataset cells-test       # the table cells benchmark (also lists-dev, ...)

Each run brings the dataset's index up to date first (incremental: unchanged papers are not
re-embedded, so a built index is the cache), then answers every question under every
configuration, reusing cached records (see eval/cache.py), and writes under the results folder
(default eval/results/<timestamp>-<dataset>/): rows.jsonl (one line per question and
configuration), summary.json, summary.md and the PNG plots it embeds. `--gate` exits 1 when the
first configuration falls below eval/thresholds.json.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from rag.progress import ProgressBar
from rag.settings import RETRIEVERS, Settings

from .configs import Config, make_configs, parse_grid
from .datasets import Dataset, Question, load_dataset

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # the repository, in a source checkout (for git_revision)
RESULTS = HERE / "results"


@dataclass
class RunResult:
    dataset: Dataset
    configs: list[Config]
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by config name
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    twins: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # twin rows, by config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", default="seeds",
                        help="seeds (default), icml2024, scifact, or a questions .jsonl file")
    parser.add_argument("--corpus", help="the corpus a questions file is about (default: the "
                        "dataset's own corpus)")
    parser.add_argument("--retriever", choices=RETRIEVERS)
    parser.add_argument("--generator", help="auto, extractive, openai, local, or another "
                        "registered answer writer (`rag backends`)")
    parser.add_argument("-k", type=int, help="passages handed to the generator")
    parser.add_argument("--grid", nargs="+", default=[], metavar="NAME=V1,V2",
                        help="settings to compare, e.g. retriever=bm25,dense,hybrid k=3,5,10")
    parser.add_argument("--no-baselines", action="store_true",
                        help="skip the BM25-only and dense-only baseline rows")
    parser.add_argument("--retrieval-only", action="store_true",
                        help="rank only; do not generate answers")
    parser.add_argument("--types", help="only these question types, comma-separated")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--out", help="results folder (default eval/results/<time>-<dataset>)")
    parser.add_argument("--no-cache", action="store_true", help="recompute every record")
    parser.add_argument("--no-index", action="store_true",
                        help="use the index as it is instead of bringing it up to date")
    parser.add_argument("--judge", action="store_true",
                        help="also grade answers with the configured LLM (optional)")
    parser.add_argument("--gate", action="store_true",
                        help="exit 1 if the first configuration misses eval/thresholds.json")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--no-twins", action="store_true",
                        help="skip the twins (questions asked again without their answer)")


def index_progress(enabled: bool = True) -> ProgressBar | None:
    """A (done, total) callback drawing an embedding progress bar, or None."""
    return ProgressBar("embedding") if enabled else None


def ensure_index(settings: Settings, progress: bool = True):
    """Bring the corpus's index up to date (embedding only what changed); its IndexReport."""
    import rag

    return rag.index_corpus(settings.corpus, settings, progress=index_progress(progress))


def run(dataset: Dataset, configs: Sequence[Config], *, use_cache: bool = True,
        judge: Any = None, progress: bool = True) -> RunResult:
    """Every question under every configuration: rows (record + metrics) and summaries."""
    from rag import factory

    from .cache import RowCache, config_key
    from .observe import observe
    from .summary import summarize

    result = RunResult(dataset, list(configs))
    for config in configs:
        s = config.settings
        gen_name = factory.generator_name(s)
        generation = factory.index(s).generation
        with_answer = config.with_answer and dataset.answers
        judged = bool(judge and with_answer and judge.available)
        key = config_key(s, generation, gen_name, with_answer,
                         judge=judge.model if judged else "")
        cache = RowCache(s.home_path / "eval-cache" if use_cache else None, key)
        rows = []
        bar = ProgressBar(config.name, unit="q", total=len(dataset.questions), enabled=progress,
                          leave=False)
        for q in dataset.questions:
            record = cache.get(q.question)
            cached = record is not None
            if record is None:
                record = observe(q, s, with_answer)
                if judged and q.answerable and not record["abstained"]:
                    record["judge"] = judge(q.question, q.reference_answer, record["answer"])
                cache.put(q.question, record)
            rows.append(_row(q, config, record, cached))
            bar.advance()
        bar.close()
        result.rows[config.name] = rows
        summary = summarize(rows)
        summary.update({"settings": _settings_dict(s), "overrides": config.overrides,
                        "baseline": config.baseline, "generator": gen_name if with_answer else
                        None, "index_generation": generation, "cache_key": key})
        result.summaries[config.name] = summary
    return result


def _row(q: Question, config: Config, record: dict[str, Any], cached: bool) -> dict[str, Any]:
    from .observe import score

    return {"config": config.name, "id": q.id, "type": q.type, "answerable": q.answerable,
            "variant_of": q.variant_of,
            "question": q.question, "gold": list(q.gold), **record, "cached": cached,
            "metrics": score(record, q, config.settings.k)}


def _settings_dict(s: Settings) -> dict[str, Any]:
    import dataclasses

    return {k: v for k, v in dataclasses.asdict(s).items() if not k.startswith("ui_")}


def git_revision(root: Path = ROOT) -> str:
    """The checked-out commit, read from .git without running git ('' when unknown)."""
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        if (git / ref).exists():
            return (git / ref).read_text().strip()
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        pass
    return ""


def corpus_hash(settings: Settings) -> str:
    """A hash of the corpus's papers (ids and texts, uploads included), sorted by id."""
    from rag.ingest.corpus import load_corpus
    from rag.ingest.corpus import uploads_dir

    loaded = load_corpus(settings.corpus, [uploads_dir(settings, settings.corpus)])
    h = hashlib.sha1()
    for p in sorted(loaded.papers, key=lambda p: p.id):
        h.update(f"{p.id}\t{p.title}\t{p.text}\n".encode())
    return h.hexdigest()[:16]


def _select(dataset: Dataset, types: str | None, limit: int | None) -> Dataset:
    questions = dataset.questions
    if types:
        wanted = {t.strip() for t in types.split(",") if t.strip()}
        questions = [q for q in questions if q.type in wanted]
    if limit:
        questions = questions[:limit]
    return Dataset(dataset.name, dataset.corpus, questions, dataset.answers, dataset.notes)


# `rag eval --dataset cells-test` and the like: the table benchmarks (eval/tables.py), scored on
# the whole ICML 2024 index with 95% bootstrap intervals.
TABLE_BENCHMARKS = {f"{kind}-{split}": (kind, split) for kind in ("cells", "lists")
                    for split in ("train", "dev", "test") if (kind, split) != ("cells", "train")}


def _table_benchmark(kind: str, split: str, args: argparse.Namespace) -> int:
    from . import tables

    base = Settings.load(corpus=args.corpus or "icml2024", list_limit=40)
    if not args.no_index:
        ensure_index(base, progress=True)
    report = (tables.cells_report if kind == "cells" else tables.lists_report)(split, base)
    for line in tables.report_lines(report):
        print(line)
    return 0


def main(args: argparse.Namespace) -> int:
    from . import report
    from .gate import check, load_thresholds
    from .judge import Judge
    from .twin_eval import add_baseline, run_twins

    t0 = time.perf_counter()
    bench = TABLE_BENCHMARKS.get(args.dataset)
    if bench is not None:  # the cell and list benchmarks (eval/tables.py)
        return _table_benchmark(*bench, args)
    dataset = _select(load_dataset(args.dataset, args.corpus), args.types, args.limit)
    overrides = {"corpus": dataset.corpus, "retriever": args.retriever,
                 "generator": args.generator, "k": args.k}
    base = Settings.load(**{k: v for k, v in overrides.items() if v is not None})
    configs = make_configs(base, parse_grid(args.grid), baselines=not args.no_baselines,
                           with_answer=not args.retrieval_only)
    progress = sys.stderr.isatty()
    thresholds = load_thresholds(dataset.name) if args.gate else None  # fail before the work
    report_index = None if args.no_index else ensure_index(base, progress=True)
    judge = None
    if args.judge:
        judge = Judge(base)
        if not judge.available:
            print(f"rag eval: the LLM judge is skipped: {judge.reason}", file=sys.stderr)
            judge = None
    result = run(dataset, configs, use_cache=not args.no_cache, judge=judge, progress=progress)
    twins = [] if args.no_twins or args.retrieval_only else run_twins(
        result, base, run, ensure_index, use_cache=not args.no_cache, progress=progress)
    result.meta = {
        "dataset": dataset.name, "questions": len(dataset.questions), "corpus": dataset.corpus,
        "corpus_hash": corpus_hash(base), "git_revision": git_revision(),
        "index": report_index.summary() if report_index else "not updated (--no-index)",
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "notes": list(dataset.notes),
        "judge": (judge.model if judge else None),
        "judge_skipped": (judge.reason if judge and judge.reason else None),
        "seconds": round(time.perf_counter() - t0, 1), "command": sys.argv[1:],
    }
    add_baseline(result, twins)
    out = Path(args.out) if args.out else RESULTS / f"{time.strftime('%Y%m%d-%H%M%S')}-{dataset.name}"
    paths = report.write(out, result, plots=not args.no_plots)
    print(report.table(result))
    print(report.abstention_text(result))
    for note in dataset.notes:
        print(f"note: {note}")
    print(f"\n{len(dataset.questions)} questions" + (f" (+ {len(twins)} twins)" if twins else "")
          + f" x {len(configs)} configurations in {result.meta['seconds']:.1f} s; results in "
          f"{paths['folder']}")
    if thresholds is not None:
        first = next(c for c in configs if not c.baseline)
        failures = check(result.summaries[first.name]["metrics"], thresholds)
        for f in failures:
            print(f"gate: {first.name}: {f}", file=sys.stderr)
        if failures:
            return 1
        print(f"gate: {first.name} meets eval/thresholds.json ({dataset.name})")
    return 0
