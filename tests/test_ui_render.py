"""Rendering an Answer for the chat is a pure function: text in, HTML/Markdown out."""

from __future__ import annotations

import re

import pytest

from rag.answer.prompts import CANNOT_ANSWER
from rag.types import Answer, AnswerSentence, Citation, Paper, Passage
from rag.documents import Added, Skipped, UploadReport
from rag.ui import live, markup, render
from rag.ui.corpus_view import search_papers

ABSTRACT = ("We study embeddings in $\\mathbb{R}^d$. Our method, *FastMap*, is **twice** as fast. "
            "It uses a_b_c identifiers and costs $5 and $10 to run.")


def passage(pid="icml2024-poster-1", title="Fast maps in $\\mathbb{R}^d$", text=ABSTRACT,
            start=0, rank=1, authors="Ann Lee, Bo Chen, Cy Dee, Di Eve",
            url="https://icml.cc/virtual/2024/poster/1") -> Passage:
    return Passage(chunk_id=f"{pid}#0", paper_id=pid, title=title, text=text, score=0.9,
                   start=start, end=start + len(text), authors=authors, url=url, rank=rank)


def answer(**kw) -> Answer:
    p1, p2 = passage(), passage("icml2024-poster-2", "Slow maps", "Slow maps are slow.", rank=2,
                                authors="Zed Zee", url="")
    base = dict(question="How fast is FastMap?",
                text="FastMap is twice as fast [1]. Slow maps are slow [2].",
                citations=[Citation(1, p1, "Our method, *FastMap*, is **twice** as fast.",
                                    ((37, 81),)),
                           Citation(2, p2, "Slow maps are slow.", ((0, 19),))],
                passages=[p1, p2], abstained=False, generator="extractive",
                timings_ms={"retrieve": 12.0, "generate": 1500.0, "total": 1512.0},
                sentences=[AnswerSentence("FastMap is twice as fast [1].", (1,)),
                           AnswerSentence("Slow maps are slow [2].", (2,))],
                query="How fast is FastMap?")
    base.update(kw)
    return Answer(**base)


# -- inline text -------------------------------------------------------------------------------


def test_latex_is_left_intact_for_katex_and_html_is_escaped():
    out = markup.inline("Maps into $\\mathbb{R}^d$ for x < y & <script>alert(1)</script>")
    assert "$\\mathbb{R}^d$" in out
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "x &lt; y &amp;" in out


def test_latex_content_is_escaped_but_not_emphasised():
    out = markup.inline("Let $a_i < b_i$ and $x*y*z$ hold")
    assert "$a_i &lt; b_i$" in out and "$x*y*z$" in out
    assert "<em>" not in out


def test_markdown_emphasis_becomes_tags():
    out = markup.inline("We propose *FastMap*, **twice** as fast, ***very*** _robust_ `code`.")
    assert "<em>FastMap</em>" in out and "<strong>twice</strong>" in out
    assert "<strong><em>very</em></strong>" in out and "<em>robust</em>" in out
    assert "<code>code</code>" in out


def test_intraword_bold_acronyms_render():
    out = markup.inline("**Di**sentangled **N**orm")
    assert out == "<strong>Di</strong>sentangled <strong>N</strong>orm"


def test_snake_case_and_lone_dollars_stay_text():
    out = markup.inline("a_b_c costs $5 and $10")
    assert "<em>" not in out
    # a lone dollar is split from its neighbour so KaTeX cannot pair them into math
    assert out.count("<span>$</span>") == 2


def test_citation_markers_become_links_through_the_callback():
    out = markup.inline("Fast [1][2].", cite=lambda n: f"<a>{n}</a>")
    assert out == "Fast <a>1</a><a>2</a>."


def test_list_lines_become_a_list_and_paragraphs_stay_paragraphs():
    out = markup.blocks("Two papers:\n- First: does A [1].\n- Second: does B [2].\n\nDone.")
    assert out.startswith("<p>Two papers:</p><ul><li>First")
    assert out.count("<li>") == 2 and out.endswith("<p>Done.</p>")


# -- a whole answer ----------------------------------------------------------------------------


def test_answer_citations_link_to_their_source_in_this_turn():
    html = render.answer_html(answer(), turn=3)
    links = re.findall(r'<a class="rag-cite" href="#rag:c/3/(\d+)"', html)
    assert links == ["1", "2"]
    assert 'title="Fast maps in $\\mathbb{R}^d$"' in html


def test_answer_has_a_source_card_per_citation_with_title_and_short_authors():
    html = render.answer_html(answer(), turn=0)
    cards = re.findall(r'<a class="rag-card" href="#rag:c/0/(\d)">', html)
    assert cards == ["1", "2"]
    assert "Ann Lee, Bo Chen, Cy Dee et al." in html and "Zed Zee" in html


def test_answer_footer_shows_timings_generator_and_the_query():
    html = render.answer_html(answer(), turn=0)
    assert "retrieve 12 ms" in html and "generate 1.5 s" in html
    assert '<span class="rag-gen">extractive</span>' in html
    assert "Searched as</summary><code>How fast is FastMap?</code>" in html


def test_a_rewritten_follow_up_query_is_labelled_as_such():
    html = render.answer_html(answer(question="And how slow?", query="How fast is FastMap? "
                                     "And how slow?"), turn=1)
    assert "Searched as (follow-up rewritten)" in html
    assert "<code>How fast is FastMap? And how slow?</code>" in html


def test_unsupported_sentences_are_marked():
    a = answer(sentences=[AnswerSentence("FastMap is twice as fast [1].", (1,), supported=False,
                                         support=0.1),
                          AnswerSentence("Slow maps are slow [2].", (2,))])
    html = render.answer_html(a, turn=0)
    assert re.search(r'<span class="rag-unsupported"[^>]*>FastMap is twice as fast', html)
    assert html.count("rag-unsupported") == 1


def test_notices_are_shown():
    html = render.answer_html(answer(notices=["The openai generator failed (timeout)."]), 0)
    assert '<div class="rag-notice">The openai generator failed (timeout).</div>' in html


def test_abstention_says_so_and_offers_the_closest_papers():
    a = answer(text=CANNOT_ANSWER, citations=[], abstained=True, sentences=[])
    html = render.answer_html(a, turn=2)
    assert CANNOT_ANSWER.replace("'", "&#x27;") in html
    assert "You may be looking for" in html
    assert re.findall(r'href="#rag:p/2/(\d)"', html) == ["0", "1"]
    assert "rag-cite" not in html and "Export" not in html


def test_streaming_text_shows_pending_markers_without_links():
    html = live.streaming_html("Partial answer [1")
    assert "rag-caret" in html and "href" not in html
    html = live.streaming_html("Partial answer [1].")
    assert '<span class="rag-cite rag-cite-pending">1</span>.<span class="rag-caret"></span></p>' \
        in html  # the caret follows the text, on its line
    assert "rag-caret" in live.streaming_html("")


def test_the_evidence_is_shown_while_the_model_writes_below_it():
    draft = answer()
    waiting = live.draft_html(draft, "", "local")
    assert "Evidence from the abstracts" in waiting and "reading the evidence" in waiting
    assert "href" not in waiting, "no links until the answer is a turn of the chat"
    assert draft.citations[0].passage.title.split("$")[0].strip() in waiting
    writing = live.draft_html(draft, "Fast maps need [1", "local")
    assert "Answer from the local model" in writing and "rag-caret" in writing
    assert writing.index("Evidence") < writing.index("Fast maps need")
    assert "rag-streaming" in writing, "the finished answer replaces it"


def test_errors_are_friendly_sentences():
    html = render.error_html("the question is empty; type a question")
    assert "The question is empty; type a question." in html
    assert "Traceback" not in html


# -- sources, corpus, uploads, export ----------------------------------------------------------


def test_source_highlights_exactly_the_cited_span():
    html = render.source_html("T", ABSTRACT, [(37, 81)], authors="A B", url="https://x/1",
                              badge="1")
    marked = re.findall(r'<mark class="rag-hl">(.*?)</mark>', html)
    assert marked == [markup.inline(ABSTRACT[37:81])]
    assert 'href="https://x/1"' in html and "ICML 2024 page" in html


def test_source_spans_are_relative_to_the_paper_when_a_passage_starts_later():
    p = passage(text="Second sentence here. Third one.", start=100)
    html = render.passage_source_html(p, spans=[(122, 132)], badge="2")
    assert re.findall(r'<mark class="rag-hl">(.*?)</mark>', html) == ["Third one."]
    assert "Only the retrieved part" in html  # no full paper was given


def test_a_full_paper_is_preferred_to_the_passage():
    p = passage(text="Third one.", start=22)
    paper = Paper(id=p.paper_id, title="Whole", text="First. Second sentence. Third one.")
    html = render.passage_source_html(p, spans=[(24, 34)], paper=paper)
    assert re.findall(r'<mark class="rag-hl">(.*?)</mark>', html) == ["Third one."]
    assert "Whole" in html and "Only the retrieved part" not in html


def test_paper_search_needs_every_word_and_ranks_title_hits_first():
    papers = [Paper("a", "Graph clustering", "About graphs and clusters."),
              Paper("b", "Kernels", "Graph kernels for clustering."),
              Paper("c", "Other", "Nothing here.")]
    hits, total = search_papers(papers, "graph clustering")
    assert [p.id for p in hits] == ["a", "b"] and total == 2
    assert search_papers(papers, "")[1] == 3


def test_paper_list_links_each_paper_and_tags_uploads():
    papers = [Paper("doc-1", "My <b>notes</b>", "x", source="abc-notes.md"),
              Paper("p2", "Paper two", "y", authors="A, B")]
    html = render.paper_list_html(papers, 2, "", {"abc-notes.md": "notes.md"})
    assert 'href="#rag:d/doc-1"' in html and 'href="#rag:d/p2"' in html
    assert "My &lt;b&gt;notes&lt;/b&gt;" in html
    assert '<span class="rag-tag">notes.md</span>' in html and html.count("rag-tag") == 1


def test_upload_report_lists_added_duplicate_and_rejected_with_reasons():
    report = UploadReport("seeds", added=[Added("notes.md", "Notes", "doc-1")],
                          duplicates=[Skipped("copy.md", "already in the corpus")],
                          rejected=[Skipped("../x.md", "the name contains a path")])
    html = render.upload_report_html(report)
    for label, name, why in [("Added", "notes.md", "Notes"),
                             ("Skipped (duplicate)", "copy.md", "already in the corpus"),
                             ("Rejected", "../x.md", "the name contains a path")]:
        assert re.search(rf">{re.escape(label)}</span></td><td[^>]*>{re.escape(name)}</td>"
                         rf"<td>[^<]*{re.escape(why)}", html)


def test_export_markdown_has_the_answer_and_numbered_references_with_urls():
    md = render.export_markdown(answer())
    assert md.startswith("**Q:** How fast is FastMap?")
    assert "[1] Fast maps in $\\mathbb{R}^d$. Ann Lee, Bo Chen, Cy Dee, Di Eve. ICML 2024. " \
           "<https://icml.cc/virtual/2024/poster/1>" in md
    assert "[2] Slow maps. Zed Zee. ICML 2024." in md
    assert "[1] \u201cOur method, *FastMap*, is **twice** as fast.\u201d" in md


def test_export_bibtex_has_title_authors_and_url_per_cited_paper():
    bib = render.export_bibtex(answer())
    assert bib.count("@inproceedings{") == 2
    assert "author = {Ann Lee and Bo Chen and Cy Dee and Di Eve}" in bib
    assert "url = {https://icml.cc/virtual/2024/poster/1}" in bib
    assert "title = {Slow maps}" in bib


@pytest.mark.parametrize("a", [answer(), answer(text=CANNOT_ANSWER, citations=[],
                                                abstained=True)])
def test_export_file_holds_markdown_then_bibtex(a):
    text = render.export_file_text(a)
    assert text.startswith("**Q:**")
    assert ("```bibtex\n@inproceedings" in text) == bool(a.citations)


def test_numbered_lines_become_an_ordered_list():
    assert markup.blocks("1. First [1].\n2. Second.") == \
        "<ol><li>First [1].</li><li>Second.</li></ol>"
