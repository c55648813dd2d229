"""Adding documents to a corpus: checked, stored under generated names, indexed incrementally,
reported as added / skipped as duplicate / rejected with a reason. Runs on the real seed index."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import rag
from rag import factory
from rag.documents import add_documents
from rag.errors import CorpusError
from rag.ingest.corpus import load_corpus, uploads_dir
from rag.ingest.uploads import (MANIFEST, check_file, check_name, display_name, original_names,
                                stored_name)
from rag.settings import Settings

NOTE = ("# Lattice origami for protein folding\n\n"
        "We introduce lattice origami, a method that folds protein chains on a hexagonal "
        "lattice in $\\mathbb{R}^3$ using origami moves. Lattice origami finds native folds "
        "of small proteins forty times faster than replica-exchange Monte Carlo.\n")
STORED = re.compile(r"^[0-9a-f]{16}-[a-z0-9-]{1,40}\.(md|txt|jsonl|pdf)$")


def write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


@pytest.fixture
def settings(copy_of_seed_home) -> Settings:
    return Settings.load(home=str(copy_of_seed_home), env={})


# -- checks that need no index -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["../../etc/passwd", "../../etc/passwd.md", "/etc/passwd.txt",
                                  "notes/../../x.md", "..\\..\\boot.ini.txt", "C:\\x.md",
                                  ".hidden.md", "..", ""])
def test_names_with_paths_or_tricks_are_refused(name):
    assert check_name(name) is not None


@pytest.mark.parametrize("name", ["notes.md", "My Paper (v2).PDF", "data.jsonl", "a.txt",
                                  "résumé 2024.md"])
def test_plain_names_of_supported_types_are_accepted(name):
    assert check_name(name) is None


@pytest.mark.parametrize("name", ["run.exe", "page.html", "archive.tar.gz", "noext"])
def test_other_file_types_are_refused_with_the_list_of_supported_ones(name):
    assert ".txt, .md, .jsonl, .pdf" in check_name(name)


def test_size_and_content_signature_are_checked(tmp_path):
    assert check_file(write(tmp_path, "e.md", b""), "e.md") == "the file is empty"
    big = write(tmp_path, "big.md", "x" * 2048)
    assert "over the" in check_file(big, "big.md", max_bytes=1024)
    fake_pdf = write(tmp_path, "f.pdf", "just text")
    assert "not a PDF" in check_file(fake_pdf, "f.pdf")
    assert "PDF file named as text" in check_file(write(tmp_path, "p.md", b"%PDF-1.4 ..."),
                                                  "p.md")
    assert check_file(write(tmp_path, "ok.md", NOTE), "ok.md") is None


def test_stored_names_are_generated_and_safe_whatever_the_upload_was_called():
    for name in ["notes.md", "Ünïcode ☃ name.md", "x" * 300 + ".txt", "a;rm -rf.md"]:
        assert STORED.match(stored_name(name, b"data")), name
    assert stored_name("a.md", b"1") != stored_name("a.md", b"2")


def test_display_names_drop_control_characters_and_are_bounded():
    assert display_name("evil\x1b[31mname\n.md") == "evil[31mname.md"
    assert len(display_name("n" * 500)) == 120


# -- adding to the real seed index -------------------------------------------------------------


def test_an_added_markdown_file_is_indexed_and_can_be_cited(settings, tmp_path):
    steps = []
    report = add_documents([(write(tmp_path, "up/x1", NOTE), "Lattice origami.md")], settings,
                           progress=lambda done, total: steps.append((done, total)))
    assert [(a.name, a.title) for a in report.added] == [("Lattice origami.md",
                                                          "Lattice origami for protein folding")]
    assert not report.duplicates and not report.rejected
    assert report.index is not None and report.index.added == 1 and report.index.removed == 0
    assert steps and steps[-1][0] == steps[-1][1] > 0
    titles = [p.title for p in rag.papers("seeds", settings)]
    assert "Lattice origami for protein folding" in titles and len(titles) == 91
    answer = rag.ask("Which method folds proteins on a hexagonal lattice with origami moves?",
                     settings=settings)
    assert not answer.abstained
    assert answer.citations[0].passage.title == "Lattice origami for protein folding"


def test_files_are_stored_under_generated_names_with_the_original_kept_as_metadata(settings,
                                                                                     tmp_path):
    add_documents([(write(tmp_path, "tmp123", NOTE), "Lattice origami.md")], settings)
    folder = uploads_dir(settings, "seeds")
    stored = [p.name for p in folder.iterdir() if not p.name.startswith(".")]
    assert len(stored) == 1 and STORED.match(stored[0])
    assert (folder / stored[0]).read_text(encoding="utf-8") == NOTE
    assert original_names(settings, "seeds") == {stored[0]: "Lattice origami.md"}
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    assert manifest[stored[0]]["papers"] == [report_id(settings)]


def report_id(settings) -> str:
    return next(p.id for p in rag.papers("seeds", settings)
                if p.title == "Lattice origami for protein folding")


def test_path_tricks_are_rejected_and_nothing_is_written_outside_the_uploads_folder(settings,
                                                                                    tmp_path):
    src = write(tmp_path, "src", NOTE)
    report = add_documents([(src, "../../etc/passwd"), (src, "/tmp/evil.md"),
                            (src, "..\\evil.md")], settings)
    assert [r.name for r in report.rejected] == ["../../etc/passwd", "/tmp/evil.md",
                                                 "..\\evil.md"]
    assert all("path" in r.reason for r in report.rejected)
    assert report.index is None and not report.added
    assert not uploads_dir(settings, "seeds").exists()
    assert not (settings.home_path.parent / "etc").exists()


def test_duplicates_of_the_corpus_or_of_the_same_batch_are_skipped(settings, tmp_path):
    seed = load_corpus("seeds").papers[0]
    report = add_documents([(write(tmp_path, "a", NOTE), "note.md"),
                            (write(tmp_path, "b", NOTE), "copy of note.md"),
                            (write(tmp_path, "c", f"{seed.title}\n\n{seed.text}\n"), "seed.txt")],
                           settings)
    assert [a.name for a in report.added] == ["note.md"]
    assert [(d.name, d.reason) for d in report.duplicates] == [
        ("copy of note.md", "the same text is already in the corpus as \u201cLattice origami "
                            "for protein folding\u201d"),
        ("seed.txt", f"the same text is already in the corpus as \u201c{seed.title}\u201d")]
    again = add_documents([(write(tmp_path, "d", NOTE), "note (1).md")], settings)
    assert not again.added and len(again.duplicates) == 1 and again.index is None


def test_bad_files_are_rejected_with_a_reason_and_good_ones_still_added(settings, tmp_path):
    files = [(write(tmp_path, "1", b""), "empty.md"),
             (write(tmp_path, "2", b"\xff\xfe bad bytes"), "latin1.txt"),
             (write(tmp_path, "3", '{"title": "No abstract"}\n'), "papers.jsonl"),
             (write(tmp_path, "4", b"MZ\x90\x00"), "tool.exe"),
             (write(tmp_path, "5", NOTE), "good.md")]
    report = add_documents(files, settings)
    reasons = {r.name: r.reason for r in report.rejected}
    assert reasons["empty.md"] == "the file is empty"
    assert "not UTF-8" in reasons["latin1.txt"] and str(tmp_path) not in reasons["latin1.txt"]
    assert reasons["papers.jsonl"].startswith("papers.jsonl:1: missing field 'abstract'")
    assert "unsupported file type .exe" in reasons["tool.exe"]
    assert [a.name for a in report.added] == ["good.md"]


def test_a_jsonl_upload_keeps_only_its_new_records(settings, tmp_path):
    seed = load_corpus("seeds").papers[3]
    lines = [json.dumps({"id": "my-1", "title": "Sparse sheep counting",
                         "abstract": "We count sheep with sparse sensors in the Highlands.",
                         "authors": ["Ann Lee", "Bo Chen"], "url": "https://example.org/1"}),
             json.dumps({"title": seed.title, "abstract": seed.text})]
    report = add_documents([(write(tmp_path, "j", "\n".join(lines) + "\n"), "mine.jsonl")],
                           settings)
    assert [(a.name, a.title) for a in report.added] == [("mine.jsonl", "Sparse sheep counting")]
    assert [d.name for d in report.duplicates] == [f"mine.jsonl: {seed.title}"]
    stored = [p for p in uploads_dir(settings, "seeds").iterdir() if p.suffix == ".jsonl"]
    assert len(stored) == 1 and stored[0].read_text(encoding="utf-8") == lines[0] + "\n"
    paper = next(p for p in rag.papers("seeds", settings) if p.id == "my-1")
    assert paper.authors == "Ann Lee, Bo Chen" and paper.url == "https://example.org/1"


def test_a_text_pdf_is_added_and_a_one_line_text_gets_its_title_from_the_file_name(settings,
                                                                                  tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(8.5, 11))
    fig.text(0.1, 0.9, "Quantum bee navigation", fontsize=14)
    fig.text(0.1, 0.85, "Honey bees navigate with quantum compasses in their antennae.")
    fig.savefig(tmp_path / "bees.pdf")
    plt.close(fig)
    report = add_documents([(tmp_path / "bees.pdf", "bees.pdf"),
                            (write(tmp_path, "o", "Zebra finches sing in dialects."),
                             "finch notes.txt")], settings)
    assert sorted(a.title for a in report.added) == ["Quantum bee navigation", "finch notes"]
    titles = {p.title for p in rag.papers("seeds", settings)}
    assert {"Quantum bee navigation", "finch notes"} <= titles


def test_a_failed_indexing_run_leaves_no_stored_file_behind(settings, tmp_path, monkeypatch):
    from rag import documents
    from rag.errors import IndexLockedError

    def locked(*a, **kw):
        raise IndexLockedError("another `rag index` is writing")

    monkeypatch.setattr(documents, "reindex", locked)
    with pytest.raises(IndexLockedError):
        add_documents([(write(tmp_path, "n", NOTE), "note.md")], settings)
    folder = uploads_dir(settings, "seeds")
    assert not [p for p in folder.iterdir() if not p.name.startswith(".")]
    factory.forget_index(settings, "seeds")
    assert len(rag.papers("seeds", settings)) == 90


@pytest.mark.parametrize("damage", [b'{"3f2a-notes.md": {"name": "My notes.md"', b"\xff\xfe{}",
                                    b'["not", "an", "object"]'])
def test_a_damaged_manifest_stops_the_upload_and_is_never_overwritten(settings, tmp_path, damage):
    folder = uploads_dir(settings, "seeds")
    manifest = write(folder, MANIFEST, damage)
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(CorpusError) as err:
        add_documents([(write(tmp_path, "up/x1", NOTE), "Lattice origami.md")], settings)
    message = str(err.value)
    assert str(manifest) in message and "is damaged" in message and "\n" not in message
    assert "nothing was added" in message and "move it aside" in message
    assert manifest.read_bytes() == damage, "the original names are still there to recover"
    assert sorted(p.name for p in folder.iterdir()) == before, "no upload stored"
    assert len(rag.papers("seeds", settings)) == 90, "nothing indexed"
    assert original_names(settings, "seeds") == {}, "display falls back to the stored names"


# -- the command line: rag add, rag papers, a folder corpus with bad files ----------------------


def test_rag_add_gives_the_corpus_tabs_report_and_rag_papers_marks_the_upload(
        settings, tmp_path, monkeypatch, capsys):
    from rag.ui.cli import main

    monkeypatch.setenv("RAG_HOME", str(settings.home_path))
    note, empty = write(tmp_path, "Lattice origami.md", NOTE), write(tmp_path, "empty.txt", b"")
    twin = write(tmp_path, "again/Lattice origami.md", NOTE)
    assert main(["add", str(note), str(empty), str(twin)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("added      Lattice origami.md: indexed as \u201cLattice origami "
                               "for protein folding\u201d (")
    assert lines[1].startswith("duplicate  Lattice origami.md: the same text is already in")
    assert lines[2] == "rejected   empty.txt: the file is empty"
    assert lines[3] == ("1 added, 1 skipped as duplicate, 1 rejected; the corpus now holds 91 "
                        "papers")
    assert main(["papers"]) == 0
    marked = [ln for ln in capsys.readouterr().out.splitlines() if ln.endswith("\t(uploaded)")]
    assert len(marked) == 1 and "\tLattice origami for protein folding\t" in marked[0]
    assert main(["add", str(empty)]) == 1  # nothing could be added
    assert capsys.readouterr().out.splitlines()[-1] == "0 added, 0 skipped as duplicate, 1 rejected"


def test_a_folder_corpus_indexes_its_good_files_and_reports_each_bad_one(tmp_path, embedder,
                                                                         monkeypatch, capsys):
    from rag.ui.cli import main

    factory._embedders[("minilm", "")] = embedder
    docs = tmp_path / "docs"
    write(docs, "origami.md", NOTE)
    write(docs, "empty.txt", b"")
    write(docs, "sub/latin.txt", "Caf\u00e9\n\ncr\u00e8me".encode("latin-1"))
    settings = Settings.load(home=str(tmp_path / "home"), env={})
    report = rag.index_corpus(str(docs), settings)
    assert report.papers == 1 and report.rejected[0] == ("empty.txt", "the file is empty")
    assert "\nrejected   sub/latin.txt:1: not UTF-8 text" in report.summary()
    assert [p.title for p in rag.papers(str(docs), settings)] == [
        "Lattice origami for protein folding"]
    monkeypatch.setenv("RAG_HOME", str(tmp_path / "home"))
    assert main(["index", "--corpus", str(docs)]) == 0
    assert "rejected   empty.txt: the file is empty" in capsys.readouterr().out
    (docs / "origami.md").unlink()  # nothing left to index: one line naming every bad file
    assert main(["index", "--corpus", str(docs)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing could be indexed (empty.txt: the file is empty; "\
        "sub/latin.txt:1: not UTF-8 text" in err
