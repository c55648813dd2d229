"""In a real browser, with a language model that writes slowly: the cited evidence appears at
once, the model's answer streams in below it, and the finished answer replaces both.

The model is tests/fault_server.py (the OpenAI protocol, one word every 0.3 s), the page the
app served in-process over a copy of the seed index, the browser Debian's Chromium.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import copy_home
from fault_server import MODEL, FaultServer
from rag.settings import Settings
from test_ui_browser import ARTIFACTS, CHROMIUM, FLAGS, KERNELS, WAIT, free_port

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def slow_model():
    srv = FaultServer(delay=0.3).__enter__()
    yield srv
    srv.__exit__()


@pytest.fixture(scope="module")
def url(seed_home, tmp_path_factory, slow_model):
    from rag.ui.app import build_app, launch_app

    home = tmp_path_factory.mktemp("ui-draft") / "home"
    copy_home(seed_home, home)
    settings = Settings.load(home=str(home), env={}, generator="openai", openai_model=MODEL)
    demo = build_app(settings)
    _, address = launch_app(demo, settings, "127.0.0.1", free_port(), block=False, quiet=True)
    yield address
    demo.close()


def test_the_evidence_shows_first_and_the_models_answer_streams_below_it(url, slow_model,
                                                                        monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", slow_model.url)  # conftest clears it for every test
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-draft")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 950})
        pg.set_default_timeout(WAIT)
        pg.goto(url)
        pg.fill("#rag-question textarea", KERNELS)
        pg.click("#rag-send")
        evidence = pg.wait_for_selector("#rag-chat .rag-drafting .rag-evidence")
        shown = evidence.text_content()
        assert "Evidence from the abstracts" in shown and "improper Gaussian processes" in shown
        pg.wait_for_selector("#rag-chat .rag-drafting .rag-caret")  # the model's words arrive
        pg.screenshot(path=str(ARTIFACTS / "draft-01-evidence-then-answer.png"))
        final = pg.wait_for_selector("#rag-chat .rag-answer:not(.rag-streaming)")
        assert pg.query_selector("#rag-chat .rag-drafting") is None, "the answer replaced it"
        assert "openai" in final.inner_text() and final.query_selector("a.rag-cite")
        pg.screenshot(path=str(ARTIFACTS / "draft-02-finished.png"))
        browser.close()
