"""Removing an uploaded document from the corpus tab: a Remove button in the paper's detail view,
offered for uploaded documents only, that says what it removed and takes the paper out of the
list and out of `rag papers`. Built-in papers and unknown ids get a one-line error.

The browser part drives Debian's Chromium with Playwright against the app served in-process on
a free port over a copy of the seed index (as test_ui_browser.py does); every wait is on a
selector, never on `networkidle`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import rag
from conftest import copy_home
from rag.settings import Settings
from rag.ui import corpus_view
from rag.ui.cli import main
from test_ui_browser import CHROMIUM, DOC, DOC_TITLE, FLAGS, WAIT, free_port, shot


@pytest.fixture(scope="module")
def app_settings(seed_home, tmp_path_factory) -> Settings:
    home = tmp_path_factory.mktemp("ui-remove") / "home"
    copy_home(seed_home, home)
    return Settings.load(home=str(home), env={})


def listed(settings: Settings, monkeypatch, capsys) -> str:
    """What `rag papers` prints for the settings' data directory."""
    monkeypatch.setenv("RAG_HOME", str(settings.home_path))
    assert main(["papers"]) == 0
    return capsys.readouterr().out


def test_removing_a_built_in_paper_or_an_unknown_id_shows_a_one_line_error(app_settings):
    built_in = rag.papers("seeds", app_settings)[0]
    assert not corpus_view.removable(app_settings, built_in.id)
    for pid, title, words in (
            (built_in.id, "could not be removed", "is a paper of corpus"),
            ("no-such-id", "could not be removed", "No document"),
            ("", "Nothing to remove", "Pick an uploaded document")):
        html = corpus_view.remove(app_settings, pid)
        assert "rag-error" in html and title in html and words in html, html
        assert "Traceback" not in html
    assert len(rag.papers("seeds", app_settings)) == 90


@pytest.mark.browser
def test_an_uploaded_document_is_removed_with_the_button(app_settings, tmp_path, monkeypatch,
                                                         capsys):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`")
    from playwright.sync_api import sync_playwright

    from rag.ui.app import build_app, launch_app

    demo = build_app(app_settings)
    _, url = launch_app(demo, app_settings, "127.0.0.1", free_port(), block=False, quiet=True)
    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 950})
        page.set_default_timeout(WAIT)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.click("#rag-corpus-tab-button")
        page.locator("#rag-papers .rag-count", has_text="of 90 papers").wait_for()

        page.locator("#rag-papers .rag-row").first.click()  # a built-in paper: no Remove
        page.locator("#rag-paper-detail .rag-src-title").wait_for()
        assert page.locator("#rag-remove").count() == 0 or not page.is_visible("#rag-remove")

        doc = tmp_path / "lattice-origami.md"
        doc.write_text(DOC, encoding="utf-8")
        page.set_input_files("#rag-files input[type=file]", [str(doc)])
        page.locator('#rag-files td.filename[aria-label="lattice-origami.md"]').wait_for()
        page.click("#rag-add")
        page.locator("#rag-papers .rag-count", has_text="of 91 papers").wait_for()
        pid = next(p.id for p in rag.papers("seeds", app_settings) if p.title == DOC_TITLE)
        assert f"{pid}\t{DOC_TITLE}\t(uploaded)" in listed(app_settings, monkeypatch, capsys)

        page.fill("#rag-search input, #rag-search textarea", "lattice origami")
        page.locator("#rag-papers .rag-row", has_text=DOC_TITLE).click()
        page.locator("#rag-paper-detail .rag-src-title", has_text=DOC_TITLE).wait_for()
        page.locator("#rag-remove").wait_for(state="visible")
        shot(page, "20-remove-offered.png")
        page.click("#rag-remove")
        done = page.locator("#rag-paper-detail .rag-removed p")
        done.wait_for()
        assert done.inner_text().startswith(f"Removed \u201c{DOC_TITLE}\u201d ({pid}, 1 chunk(s)) "
                                            f"from corpus seeds")
        assert "lattice-origami.md" in done.inner_text()  # its stored file went too
        page.locator("#rag-papers .rag-empty", has_text="No papers matching").wait_for()
        page.locator("#rag-remove").wait_for(state="hidden")
        page.fill("#rag-search input, #rag-search textarea", "")
        page.locator("#rag-papers .rag-count", has_text="of 90 papers").wait_for()
        shot(page, "21-removed.png")
        assert not errors, errors
    finally:
        browser.close()
        pw.stop()
        demo.close()
    assert pid not in listed(app_settings, monkeypatch, capsys)
    assert DOC_TITLE not in {p.title for p in rag.papers("seeds", app_settings)}
