"""`python -m rag.eval.reader COMMAND`: the reader model's data and recipe, step by step.

    papers   write the training papers, numbered sentence by sentence, in batches (work/)
    local    let the local model write questions, one sentence at a time (resumable)
    build    check and filter every written row, give each its twin (work/data.jsonl)
    train    build, then train the reader model (weights and manifest in rag/models/reader/)
    settle   measure saved weights again: dev figures, the answer threshold, test figures
    curve    the learning curve: dev figures when trained on fewer questions (into the manifest)
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.eval.reader")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("papers", help="write the training papers in batches under work/")
    p.add_argument("--batches", type=int, default=40, help="papers per batch (40)")
    p = sub.add_parser("local", help="questions written by the local model (resumable)")
    p.add_argument("--per-paper", type=int, default=3, help="sentences asked about per paper")
    p.add_argument("--limit", type=int, default=None, help="stop after this many model calls")
    sub.add_parser("build", help="check, filter and twin the written rows (work/data.jsonl)")
    p = sub.add_parser("train", help="build the data and train the reader model")
    p.add_argument("--limit", type=int, default=None, help="train on this many questions")
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--out", default=None, help="weights folder (default rag/models/reader)")
    p.add_argument("--no-build", action="store_true", help="reuse work/data.jsonl")
    sub.add_parser("settle", help="dev figures, answer threshold and test figures of the weights")
    p = sub.add_parser("curve", help="train on 500, 1000, 2000 ... questions; dev figures")
    p.add_argument("--sizes", default="500,1000,2000,4000", help="comma-separated sizes")
    args = parser.parse_args(argv)
    if args.command == "papers":
        from .papers import eligible, held_out, write_batches

        paths = write_batches(args.batches)
        print(f"{len(eligible())} training papers ({len(held_out())} held out) in "
              f"{len(paths)} batches under {paths[0].parent}")
    if args.command == "local":
        from .local import run

        try:
            kept = run(args.per_paper, args.limit)
        except KeyboardInterrupt:
            print("stopped; run again to go on where it stopped", file=sys.stderr)
            return 130
        print(f"{kept} rows kept this run")
    if args.command == "build":
        from .build import DATA, build

        built = build()
        print(f"{len(built.rows)} rows kept of {sum(built.written.values())} "
              f"({built.written}); dropped: {built.dropped or 'none'} -> {DATA}")
    if args.command == "train":
        from pathlib import Path

        from .train import WEIGHTS, Recipe, train

        recipe = Recipe(**({"limit": args.limit} if args.limit else {}),
                        **({"epochs": args.epochs} if args.epochs else {}))
        manifest = train(recipe, Path(args.out) if args.out else WEIGHTS,
                         rebuild=not args.no_build)
        print(json.dumps({k: manifest[k] for k in ("questions", "pairs", "epoch", "dev",
                                                    "train_seconds")}))
    if args.command == "settle":
        from .train import settle

        manifest = settle()
        print(json.dumps({k: manifest[k] for k in ("dev", "answer_threshold", "test")}))
    if args.command == "curve":
        from .train import curve

        for point in curve([int(n) for n in args.sizes.split(",")]):
            print(json.dumps(point))
    return 0


if __name__ == "__main__":
    sys.exit(main())
