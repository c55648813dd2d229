"""`python -m rag.eval.reader COMMAND`: the reader model's data and recipe, step by step.

    papers   write the training papers, numbered sentence by sentence, in batches (work/)
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.eval.reader")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("papers", help="write the training papers in batches under work/")
    p.add_argument("--batches", type=int, default=40, help="papers per batch (40)")
    args = parser.parse_args(argv)
    if args.command == "papers":
        from .papers import eligible, held_out, write_batches

        paths = write_batches(args.batches)
        print(f"{len(eligible())} training papers ({len(held_out())} held out) in "
              f"{len(paths)} batches under {paths[0].parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
