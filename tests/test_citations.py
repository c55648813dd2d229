"""The shared citation check: valid, compact, one number per paper, quotes that point back."""

from __future__ import annotations

from rag.check.citations import answer_sentences, check_citations
from rag.types import Passage


def _p(i, paper=None, text=None):
    text = text or f"Paper {i} studies topic{i}. It reports result{i} on data{i}."
    return Passage(chunk_id=f"c{i}", paper_id=paper or f"p{i}", title=f"T{i}", text=text,
                   score=1.0, start=100, end=100 + len(text),
                   sentences=((100, 100 + text.index(".") + 1),
                              (100 + text.index(".") + 2, 100 + len(text))))


def test_numbers_are_compacted_in_order_of_first_use():
    checked = check_citations("Result3 holds [3]. Topic1 too [1][3].", [_p(1), _p(2), _p(3)])
    assert checked.text == "Result3 holds [1]. Topic1 too [2][1]."
    assert [(c.n, c.paper_id) for c in checked.citations] == [(1, "p3"), (2, "p1")]


def test_unknown_numbers_are_removed():
    checked = check_citations("A claim [7]. Another [0] [2].", [_p(1), _p(2), _p(3)])
    assert checked.text == "A claim. Another [1]."
    assert checked.removed == [7, 0]


def test_two_passages_of_one_paper_share_one_number():
    passages = [_p(1, paper="same"), _p(2), _p(3, paper="same")]
    checked = check_citations("X [1]. Y [3]. Z [2].", passages)
    assert checked.text == "X [1]. Y [1]. Z [2]."
    assert len(checked.citations) == 2


def test_grouped_markers_repeats_and_markers_after_the_period_are_normalised():
    checked = check_citations("A [1, 2]. B [2][2]. C. [1] D.", [_p(1), _p(2)])
    assert checked.text == "A [1][2]. B [2]. C [1]. D."


def test_each_citation_quotes_the_sentence_it_rests_on_with_its_span():
    passage = _p(1)
    checked = check_citations("It reports result1 on data1 [1].", [passage])
    (c,) = checked.citations
    assert c.quote == "It reports result1 on data1."
    (s, e), = c.spans
    assert passage.text[s - passage.start : e - passage.start] == c.quote


def test_answer_sentences_carry_their_markers_even_when_split_off():
    sents = answer_sentences("First claim. [1] Second claim [2].\n- Title: line [3]")
    assert [(s.text, s.citations) for s in sents] == [
        ("First claim [1].", (1,)), ("Second claim [2].", (2,)), ("- Title: line [3]", (3,))]


def test_a_list_item_is_one_sentence_even_when_its_title_has_a_question_mark():
    sents = answer_sentences("- Is X Harder? A Theory: we show X [1].\n- Y: claim [2].")
    assert [s.citations for s in sents] == [(1,), (2,)]
