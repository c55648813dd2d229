"""The one progress bar (rag/progress.py), as the CLI, the UI launch and the evals use it."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from rag.progress import ProgressBar


def test_nothing_is_drawn_before_the_first_update_and_the_bar_ends_its_line():
    out = io.StringIO()
    bar = ProgressBar("embedding", file=out)
    assert out.getvalue() == ""
    bar(0, 4)
    bar(2, 4)
    bar(4, 4)  # done: closes itself
    text = out.getvalue()
    assert "embedding" in text and "4/4" in text and "chunk" in text
    assert text.endswith("\n"), "the next message starts on a line of its own"
    bar.close()  # closing again is harmless
    assert out.getvalue() == text


def test_an_error_mid_way_closes_the_bar_so_the_message_gets_its_own_line():
    out = io.StringIO()
    with pytest.raises(RuntimeError):
        with ProgressBar("embedding", file=out) as bar:
            bar(1, 10)
            raise RuntimeError("disk full")
    assert "1/10" in out.getvalue() and out.getvalue().endswith("\n")


def test_counting_questions_with_a_known_total():
    out = io.StringIO()
    with ProgressBar("seeds", unit="q", total=3, file=out) as bar:
        for _ in range(3):
            bar.advance()
    assert "seeds: 100%" in out.getvalue() and "3/3" in out.getvalue()
    assert "q/s" in out.getvalue()


def test_a_disabled_bar_draws_nothing(capsys):
    bar = ProgressBar("embedding", enabled=False)
    bar(1, 2)
    bar.advance()
    bar.close()
    assert capsys.readouterr().err == ""


def test_the_default_stream_is_stderr_at_the_time_of_drawing(capsys):
    with ProgressBar("embedding") as bar:
        bar(1, 1)
    captured = capsys.readouterr()
    assert "1/1" in captured.err and captured.out == ""


def test_importing_the_helper_does_not_import_tqdm():
    code = "import sys, rag.progress; print('tqdm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
