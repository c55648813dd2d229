"""The `rag` command: index, ask, papers, serve, eval. Errors become one-line messages."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from .errors import RagError
from .settings import GENERATORS, RETRIEVERS, Settings


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {k: getattr(args, k, None) for k in ("corpus", "k", "retriever", "generator")}
    return Settings.load(**{k: v for k, v in overrides.items() if v is not None})


def _progress_bar(desc: str):
    from tqdm import tqdm

    bar = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=desc, unit="chunk", file=sys.stderr, dynamic_ncols=True)
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return update


def cmd_index(args) -> int:
    import rag

    settings = _settings(args)
    report = rag.index(settings.corpus, settings, progress=_progress_bar("embedding"),
                       rebuild=args.rebuild)
    print(report.summary())
    return 0


def cmd_ask(args) -> int:
    import rag

    settings = _settings(args)
    question = " ".join(args.question)
    if args.json:
        answer = rag.ask(question, settings=settings)
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=1))
        return 0
    answer = None
    for event in rag.ask_stream(question, settings=settings):
        if isinstance(event, str):
            if settings.generator != "extractive":
                print(event, end="", flush=True, file=sys.stderr)
        else:
            answer = event
    if settings.generator != "extractive":
        print(file=sys.stderr)
    from .render import answer_to_text

    print(answer_to_text(answer))
    return 0


def cmd_papers(args) -> int:
    import rag

    settings = _settings(args)
    for p in rag.papers(settings.corpus, settings):
        print(f"{p.id}\t{p.title}")
    return 0


def cmd_serve(args) -> int:
    from ui.app import serve

    return serve(host=args.host, port=args.port, corpus=args.corpus, auth=args.auth,
                 no_auth=args.no_auth)


def cmd_eval(args) -> int:
    from eval.run import main as eval_main

    return eval_main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rag", description="Cited answers from ICML 2024 "
                                     "abstracts, offline.")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p, retrieval: bool = False):
        p.add_argument("--corpus", help="seeds (default), icml2024, or a path")
        if retrieval:
            p.add_argument("-k", type=int, help="passages to retrieve")
            p.add_argument("--retriever", choices=RETRIEVERS)
            p.add_argument("--generator", choices=GENERATORS)

    p = sub.add_parser("index", help="build or update the index of a corpus")
    common(p)
    p.add_argument("--rebuild", action="store_true", help="drop the index and build it anew")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("ask", help="answer a question with citations")
    p.add_argument("question", nargs="+")
    p.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    common(p, retrieval=True)
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("papers", help="list the indexed papers")
    common(p)
    p.set_defaults(func=cmd_papers)

    p = sub.add_parser("serve", help="start the chat UI")
    common(p)
    p.add_argument("--host", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 7860)")
    p.add_argument("--auth", help="user:password, or a file holding such lines")
    p.add_argument("--no-auth", action="store_true",
                   help="allow a non-local --host without a login (not recommended)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("eval", help="run the answer-quality evals")
    try:
        from eval.run import add_arguments
    except ImportError:
        add_arguments = None
    if add_arguments:
        add_arguments(p)
    p.set_defaults(func=cmd_eval)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except RagError as exc:
        print(f"rag: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rag: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
