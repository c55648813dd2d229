"""The `rag` command: index, ask, papers, similar, map, add, remove, serve, mcp, api, eval.
Errors become one-line messages.

It sits at the edge, beside the UI: it imports the library, and dispatches `serve` to
`rag.ui.app` and `eval` to `rag.eval.run` only when those commands run."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from rag.errors import RagError
from rag.progress import ProgressBar
from rag.settings import RETRIEVERS, Settings


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with where to find help), like every error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _argv_text(text: str) -> str:
    """Undo Python's surrogateescape on argv: bytes that are not UTF-8 become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {k: getattr(args, k, None)
                 for k in ("corpus", "k", "retriever", "generator", "list_limit")}
    return Settings.load(**{k: v for k, v in overrides.items() if v is not None})


def cmd_index(args) -> int:
    import rag

    settings = _settings(args)
    with ProgressBar("embedding") as bar:
        report = rag.index_corpus(settings.corpus, settings, progress=bar, rebuild=args.rebuild)
    print(report.summary())
    return 0


def cmd_ask(args) -> int:
    import rag

    if args.verbose:  # the stages each question visits, with their times, on stderr
        import logging

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        logging.getLogger("rag.engine").addHandler(handler)
        logging.getLogger("rag.engine").setLevel(logging.DEBUG)
    settings = _settings(args)
    question = _argv_text(" ".join(args.question))
    if args.bib:
        from .export import answer_to_bibtex

        print(answer_to_bibtex(rag.ask(question, settings=settings)), end="")
        return 0
    if args.json:
        answer = rag.ask(question, settings=settings)
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=1))
        return 0
    from rag.factory import generator_name

    from rag.types import Draft

    from .export import answer_to_text, evidence_to_text

    # With a language model, the cited evidence (the extractive answer) is shown on stderr at
    # once and the model's tokens follow as they come (it takes seconds); the checked answer,
    # with its citations, then goes to stdout. The extractive answer alone is printed once.
    stream = generator_name(settings) != "extractive"
    answer = None
    for event in rag.ask_stream(question, settings=settings):
        if isinstance(event, Draft):
            print(f"Evidence:\n{evidence_to_text(event.answer)}\n\n"
                  f"Answer ({generator_name(settings)} model):", file=sys.stderr, flush=True)
        elif isinstance(event, str):
            if stream:
                print(event, end="", flush=True, file=sys.stderr)
        else:
            answer = event
    if stream:
        print(file=sys.stderr)

    print(answer_to_text(answer))
    return 0


def cmd_papers(args) -> int:
    import rag

    from rag.documents import uploaded_ids

    settings = _settings(args)
    uploaded = uploaded_ids(settings, settings.corpus)
    for p in rag.papers(settings.corpus, settings):
        print(f"{p.id}\t{p.title}" + ("\t(uploaded)" if p.id in uploaded else ""))
    return 0


def cmd_similar(args) -> int:
    import rag

    settings = _settings(args)
    found = rag.similar(args.paper_id, args.n, settings, settings.corpus)
    if args.json:
        print(json.dumps([{"paper_id": s.paper.id, "title": s.paper.title,
                           "authors": s.paper.authors, "url": s.paper.url,
                           "score": round(s.score, 6)} for s in found],
                         ensure_ascii=False, indent=1))
        return 0
    for s in found:
        print(f"{s.score:.3f}\t{s.paper.id}\t{s.paper.title}")
    return 0


def cmd_map(args) -> int:
    import rag

    settings = _settings(args)
    drawn = rag.paper_map(settings.corpus, settings)
    mine = sum(p.upload for p in drawn.points)
    line = (f"{settings.corpus}: {len(drawn.points) - mine} papers in {len(drawn.clusters)} "
            f"clusters" + (f", {mine} uploaded" if mine else "")
            + (f" (layout drawn in {drawn.seconds:.1f} s)" if drawn.seconds else ""))
    if args.png:
        from .map_png import write_png

        write_png(drawn, args.png, f"{settings.corpus}: {len(drawn.points) - mine:,} papers, "
                  f"{len(drawn.clusters)} clusters")
        line += f"; wrote {args.png}"
    print(line)
    if args.labels:
        for c in drawn.clusters:
            print(f"{c.id}\t{c.size}\t{c.label}")
    return 0


def cmd_add(args) -> int:
    from rag.documents import add_documents, upload_pairs

    settings = _settings(args)
    with ProgressBar("embedding") as bar:
        report = add_documents(upload_pairs(args.files), settings, settings.corpus,
                               progress=bar)
    print("\n".join(report.lines()))
    return 0 if report.added or report.duplicates else 1


def cmd_remove(args) -> int:
    from rag.documents import remove_document

    settings = _settings(args)
    for paper_id in args.ids:
        print(remove_document(paper_id, settings, settings.corpus).summary())
    return 0


def cmd_serve(args) -> int:
    from .app import serve

    return serve(host=args.host, port=args.port, corpus=args.corpus, auth=args.auth,
                 no_auth=args.no_auth)


def cmd_mcp(args) -> int:
    from .mcp_server import serve

    return serve(http=args.http, host=args.host, port=args.port, corpus=args.corpus,
                 auth=args.auth, no_auth=args.no_auth)


def cmd_api(args) -> int:
    from .openai_api import serve

    return serve(host=args.host, port=args.port, corpus=args.corpus, auth=args.auth,
                 no_auth=args.no_auth)


def cmd_eval(args) -> int:
    from rag.eval.run import add_arguments, main as eval_main

    parser = _Parser(prog="rag eval", description="Run the answer-quality evals.")
    add_arguments(parser)
    return eval_main(parser.parse_args(args.eval_args))


def cmd_table(args) -> int:
    import rag

    from .export import answer_to_bibtex, answer_to_text

    settings = _settings(args)
    if args.table_rows is not None:
        settings = settings.replace(table_rows=args.table_rows)
    ids = [i.strip() for i in args.papers.split(",") if i.strip()]
    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    answer = rag.table(_argv_text(" ".join(args.topic)), columns, paper_ids=ids,
                       settings=settings)
    if args.json:
        print(json.dumps(answer.table.to_dict(), ensure_ascii=False, indent=1))
    elif args.csv:
        from rag.answer.table import table_csv

        print(table_csv(answer.table), end="")
    elif args.bib:
        print(answer_to_bibtex(answer), end="")
    elif not answer.table.rows:
        print(f"No paper on {answer.table.topic} in this corpus.")
    else:
        print(answer_to_text(answer))
    return 0


def cmd_backends(args) -> int:
    from rag import registry

    rows = registry.listing()
    if args.json:
        print(json.dumps([{"kind": kind, "name": name, "help": help, "available": why is None,
                           "why_not": why, "options": list(options)}
                          for kind, name, help, why, options in rows], ensure_ascii=False))
        return 0
    for kind, name, help, why, options in rows:
        mark = "yes" if why is None else "no "
        print(f"{kind:16} {name:11} {mark} {help}")
        if why:
            print(f"{'':32}not available: {why}")
        if options:
            print(f"{'':32}options: {', '.join(options)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rag", description="Cited answers from ICML 2024 "
                                     "abstracts, offline.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(p, retrieval: bool = False):
        p.add_argument("--corpus", help="icml2024 (default), seeds, or a path")
        if retrieval:
            p.add_argument("-k", type=int, help="passages to retrieve")
            p.add_argument("--retriever", choices=RETRIEVERS)
            p.add_argument("--generator", help="auto (default), extractive, openai, local, or "
                           "another registered one (`rag backends`)")
            p.add_argument("--list-limit", type=int, dest="list_limit",
                           help="papers a list answer shows (default 5)")

    def binding(p, port: int):
        p.add_argument("--host", help="address to bind (default 127.0.0.1)")
        p.add_argument("--port", type=int, help=f"port (default {port})")
        p.add_argument("--auth", help="user:password, or a file holding such lines")
        p.add_argument("--no-auth", action="store_true",
                       help="allow a non-local --host without a login (not recommended)")

    p = sub.add_parser("index", help="build or update the index of a corpus")
    common(p)
    p.add_argument("--rebuild", action="store_true", help="drop the index and build it anew")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("ask", help="answer a question with citations")
    p.add_argument("question", nargs="+")
    p.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    p.add_argument("--bib", action="store_true", help="print BibTeX for the answer's papers")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show the stages the question visited, with their times, on stderr")
    common(p, retrieval=True)
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("table", help="a table across papers: each cell cited or 'not stated'")
    p.add_argument("topic", nargs="*", help="the papers' topic (or give --papers)")
    p.add_argument("--columns", required=True, help='the attributes, comma-separated: '
                   '"benchmark, speedup"')
    p.add_argument("--papers", default="", help="comma-separated paper ids for the rows "
                   "(instead of the topic's papers)")
    p.add_argument("--rows", type=int, dest="table_rows", help="papers in the table (default 10)")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the table as one JSON object")
    form.add_argument("--csv", action="store_true", help="print the table as CSV")
    form.add_argument("--bib", action="store_true", help="print BibTeX for its papers")
    common(p)
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("papers", help="list the indexed papers")
    common(p)
    p.set_defaults(func=cmd_papers)

    p = sub.add_parser("similar", help="the papers most like one paper (by embedding)")
    p.add_argument("paper_id", metavar="PAPER_ID", help="a paper id `rag papers` lists")
    p.add_argument("-k", type=int, default=10, dest="n", help="how many papers (default 10)")
    p.add_argument("--json", action="store_true", help="print them as one JSON list")
    common(p)
    p.set_defaults(func=cmd_similar)

    p = sub.add_parser("map", help="draw the map of the conference (kept with the index)")
    p.add_argument("--png", metavar="FILE", help="write the whole map with its labels as a PNG")
    p.add_argument("--labels", action="store_true", help="list the clusters and their labels")
    common(p)
    p.set_defaults(func=cmd_map)

    p = sub.add_parser("add", help="add documents (.txt .md .jsonl .pdf) to a corpus")
    p.add_argument("files", nargs="+", metavar="FILE")
    common(p)
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("remove", help="remove uploaded documents from a corpus")
    p.add_argument("ids", nargs="+", metavar="ID", help="a document id `rag papers` lists")
    common(p)
    p.set_defaults(func=cmd_remove)

    p = sub.add_parser("serve", help="start the chat UI")
    common(p)
    binding(p, 7860)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("mcp", help="serve the Model Context Protocol (stdio, or --http)")
    common(p)
    p.add_argument("--http", action="store_true",
                   help="streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    binding(p, 8765)
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("api", help="serve only the OpenAI-compatible API (/v1)")
    common(p)
    binding(p, 8000)
    p.set_defaults(func=cmd_api)

    p = sub.add_parser("backends", help="the registered answer writers, sentence scorers and "
                                        "gates, and whether each is available here")
    p.add_argument("--json", action="store_true", help="print them as one JSON list")
    p.set_defaults(func=cmd_backends)

    # Its arguments (and --help) are rag.eval.run's own, parsed by cmd_eval.
    p = sub.add_parser("eval", help="run the answer-quality evals", add_help=False)
    p.set_defaults(func=cmd_eval)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if args.command == "eval":
        args.eval_args = rest
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        return args.func(args)
    except RagError as exc:
        print(f"rag: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # e.g. a data directory that cannot be created or written
        where = f": {exc.filename}" if exc.filename else ""
        print(f"rag: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rag: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
