"""Loading corpora: the seed format, JSONL, folders of documents; ids, duplicates, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rag.ingest import corpus
from rag.errors import CorpusError


def test_seeds_hold_93_paragraphs_but_90_distinct_papers():
    report = corpus.load_corpus("seeds")
    assert len(report.papers) == 90
    assert len(report.duplicates) == 3
    assert len({p.id for p in report.papers}) == 90


def test_every_seed_paper_has_its_poster_id_title_authors_and_link():
    papers = corpus.load_corpus("seeds").papers
    assert all(p.id.startswith("icml2024-poster-") for p in papers)
    assert all(p.title and p.authors and p.url.startswith("https://icml.cc/") for p in papers)
    gp = next(p for p in papers if p.id == "icml2024-poster-34936")
    assert "mean revers" in gp.title.lower()


def test_the_full_icml_corpus_is_built_in():
    report = corpus.load_corpus("icml2024")
    assert len(report.papers) == 2634


def test_jsonl_keeps_extra_fields_as_metadata_and_joins_author_lists(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "x1", "title": "T", "authors": ["A", "B"],
                                "abstract": "We study X.", "url": "u", "venue": "V"}) + "\n")
    (paper,) = corpus.load_corpus(str(path)).papers
    assert (paper.id, paper.authors, paper.meta) == ("x1", "A, B", {"venue": "V"})


def test_a_paper_without_id_gets_a_stable_hash_of_its_normalised_text(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps({"abstract": "We study X, deeply."}) + "\n")
    b.write_text(json.dumps({"abstract": "we study x deeply"}) + "\n")
    pa, pb = corpus.load_corpus(str(a)).papers[0], corpus.load_corpus(str(b)).papers[0]
    assert pa.id == pb.id and pa.id.startswith("doc-")


def test_a_folder_of_text_files_gives_one_paper_per_file_titled_by_its_heading(tmp_path):
    (tmp_path / "one.md").write_text("# My title\n\nBody of the first document.\n")
    (tmp_path / "two.txt").write_text("Second title\nBody of the second.\n")
    (tmp_path / "ignored.bin").write_bytes(b"\x00\x01")
    papers = corpus.load_corpus(str(tmp_path)).papers
    assert sorted(p.title for p in papers) == ["My title", "Second title"]


def test_duplicate_texts_are_skipped_and_reported(tmp_path):
    rows = [{"id": "a", "abstract": "Same text."}, {"id": "b", "abstract": "same  TEXT"}]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    report = corpus.load_corpus(str(path))
    assert [p.id for p in report.papers] == ["a"]
    assert report.duplicates == ["d.jsonl:2 (b)"]


@pytest.mark.parametrize("content, message", [
    (b'{"id": "a", "abstract": "ok"}\n{"id": "b", "abstract": \n', "bad.jsonl:2: not valid JSON"),
    (b'{"id": "a"}\n', "bad.jsonl:1: missing field 'abstract'"),
    (b'[1, 2]\n', "bad.jsonl:1: expected a JSON object"),
    (b'{"abstract": "caf\xe9"}\n', "bad.jsonl:1: not UTF-8"),
    (b"", "the file is empty"),
    (b"\n\n  \n", "only whitespace"),
])
def test_malformed_jsonl_names_the_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(CorpusError, match=message.replace("(", r"\(")):
        corpus.load_corpus(str(path))


def test_a_binary_file_renamed_txt_is_rejected(tmp_path):
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(CorpusError, match="binary"):
        corpus.load_corpus(str(path))


def test_an_empty_folder_is_an_empty_corpus(tmp_path):
    with pytest.raises(CorpusError, match="empty"):
        corpus.load_corpus(str(tmp_path))


def test_an_unknown_corpus_name_says_what_is_accepted():
    with pytest.raises(CorpusError, match="unknown corpus 'nope'.*seeds, icml2024"):
        corpus.load_corpus("nope")


# -- a folder with metadata.jsonl (the seed format) ---------------------------------------------

SEED_FILE = ("Header line of the seed file\n"
             "Kernels that avoid mean reversion in Gaussian process regression.\n\n"
             "A second abstract, about protein folding with diffusion models.\n")
GOOD = '{"file": "001.txt", "paragraph": 1, "id": "p-1", "title": "Kernels", "url": "u"}\n'


def seed_folder(tmp_path, metadata: bytes):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "001.txt").write_text(SEED_FILE, encoding="utf-8")
    (folder / "metadata.jsonl").write_bytes(metadata)
    return folder


def test_a_seed_folder_takes_ids_and_titles_from_its_metadata(tmp_path):
    folder = seed_folder(tmp_path, GOOD.encode())
    first, second = corpus.load_corpus(str(folder)).papers
    assert (first.id, first.title, first.url) == ("p-1", "Kernels", "u")
    assert second.id.startswith("doc-")


@pytest.mark.parametrize("line, message", [
    ('{"file": "001.txt", "paragraph": 2, "title": ', "metadata.jsonl:2: not valid JSON"),
    ('["001.txt", 2]', "metadata.jsonl:2: expected a JSON object, got list"),
    ('{"paragraph": 2, "title": "T"}', "metadata.jsonl:2: missing field 'file'"),
    ('{"file": "001.txt", "paragraph": "2"}', "metadata.jsonl:2: 'paragraph' must be a "
                                              "paragraph number"),
    ('{"file": "001.txt", "paragraph": 2, "title": ["T"]}', "metadata.jsonl:2: 'title' must "
                                                              "be text, got list"),
    ('{"file": "001.txt", "paragraph": 1, "id": "p-9"}', "metadata.jsonl:2: a second record "
                                                          "for 001.txt paragraph 1"),
])
def test_a_malformed_metadata_line_names_the_file_and_line(tmp_path, line, message):
    folder = seed_folder(tmp_path, (GOOD + line + "\n").encode())
    with pytest.raises(CorpusError) as err:
        corpus.load_corpus(str(folder))
    assert str(folder / "metadata.jsonl") in str(err.value) and message in str(err.value)


def test_rag_index_of_a_folder_with_bad_metadata_is_a_one_line_error(tmp_path):
    folder = seed_folder(tmp_path, (GOOD + '{"file": "001.txt", "paragraph": 2,\n').encode())
    home = tmp_path / "home"
    proc = subprocess.run([sys.executable, "-m", "rag.ui.cli", "index", "--corpus", str(folder)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "RAG_HOME": str(home)})
    assert proc.returncode == 1, proc.stdout
    assert "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert line.startswith("rag: error: ") and f"{folder / 'metadata.jsonl'}:2: not valid JSON" \
        in line, line
    assert not home.exists(), "nothing was written"
