"""The chat UI on the whole ICML 2024 corpus (the default), in a real browser: the questions
people ask of a conference get the right answers, each saved as a screenshot under
test-artifacts/ui/ for a person to look at. The corpus is indexed from the shipped embedding
cache into the session's data directory; expected papers come from the corpus metadata."""

from __future__ import annotations

import json

import pytest

from rag.settings import Settings
from test_ui_browser import ARTIFACTS, CHROMIUM, FLAGS, WAIT, answers, ask, free_port, shot

pytestmark = pytest.mark.browser


def _papers() -> list[dict]:
    from rag.ingest.corpus import corpus_path

    return [json.loads(line) for line in corpus_path("icml2024").read_text().splitlines() if line]


@pytest.fixture(scope="module")
def page(full_home):
    from playwright.sync_api import sync_playwright

    from rag.ui.app import build_app, launch_app

    assert Settings().corpus == "icml2024"  # the default corpus
    settings = Settings.load(home=str(full_home), env={}, corpus="icml2024")
    demo = build_app(settings)
    _, url = launch_app(demo, settings, "127.0.0.1", free_port(), block=False, quiet=True)
    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg = browser.new_page(viewport={"width": 1400, "height": 1100})
    pg.set_default_timeout(WAIT)
    pg.goto(url)
    pg.wait_for_selector("#rag-question textarea")
    yield pg
    browser.close()
    pw.stop()
    demo.close()


def test_a_person_question_lists_every_paper_of_that_author_cited(page):
    levine = [p["title"] for p in _papers() if "Sergey Levine" in p["authors"].split(", ")]
    assert len(levine) == 10
    msg = ask(page, "Which papers did Sergey Levine publish at ICML 2024?")
    text = " ".join(msg.inner_text().split())
    shot(page, "conf-01-levine.png")
    for title in levine:
        assert " ".join(title.split())[:40] in text, title
    assert msg.locator("a.rag-cite").count() >= 10


def test_a_paper_named_by_its_short_title_is_answered_from_that_paper(page):
    msg = ask(page, "What is the Genie paper about?")
    shot(page, "conf-02-genie.png")
    assert "Genie: Generative Interactive Environments" in msg.inner_text()
    assert "generative interactive environment" in msg.inner_text().lower()
    assert "rag-abstained" not in (msg.get_attribute("class") or "")


def test_request_and_conference_words_do_not_pull_a_list_off_topic(page):
    msg = ask(page, "What are the best papers on mixture of experts at ICML 2024?")
    shot(page, "conf-03-moe.png")
    text = msg.inner_text().lower()
    lines = [line for line in text.splitlines() if "experts" in line or "moe" in line]
    assert len(lines) >= 3 and "expert-exceeding" not in text
    assert answers(page).count() == 3
