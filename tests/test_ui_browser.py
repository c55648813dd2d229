"""The chat UI in a real browser: headless Chromium (Debian's) driven by Playwright, against the
app served in-process on a free port over a copy of the seed index. Each step saves a
screenshot under test-artifacts/ui/ for a person to look at.

A Gradio page never reaches `networkidle` (its queue stays connected): every wait is on a
selector. Expected answers are computed with `rag.ask` on the same index, so the page is checked
against the pipeline rather than against hard-coded text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import rag
from conftest import copy_home, free_port
from rag.answer.prompts import CANNOT_ANSWER
from rag.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "ui"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
WAIT = 180_000  # ms; answers are quick, but CI machines are shared
LATEX_QUESTION = ("Which libraries does the PhiFlow differentiable simulation toolkit "
                  "integrate with?")
KERNELS = "Which kernels avoid mean reversion in Gaussian process regression?"
OFF_TOPIC = "What is the best recipe for chocolate chip cookies?"

pytestmark = pytest.mark.browser

DOC = ("# Lattice origami for protein folding\n\n"
       "We introduce lattice origami, a method that folds protein chains on a hexagonal lattice "
       "using *origami moves*. Lattice origami finds native folds of small proteins forty times "
       "faster than replica-exchange Monte Carlo.\n")
DOC_TITLE = "Lattice origami for protein folding"




@pytest.fixture(scope="module")
def app_settings(seed_home, tmp_path_factory) -> Settings:
    home = tmp_path_factory.mktemp("ui-browser") / "home"
    copy_home(seed_home, home)
    return Settings.load(home=str(home), env={})


@pytest.fixture(scope="module")
def server(app_settings):
    from rag.ui.app import build_app, launch_app

    demo = build_app(app_settings)
    _, url = launch_app(demo, app_settings, "127.0.0.1", free_port(), block=False, quiet=True)
    yield url
    demo.close()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`")
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
    yield b
    b.close()
    pw.stop()


@pytest.fixture
def page(browser, server):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 950})
    pg = context.new_page()
    pg.set_default_timeout(WAIT)
    hosts, errors = set(), []
    pg.on("request", lambda r: hosts.add(re.sub(r"^[a-z]+://([^/]+).*$", r"\1", r.url)))
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server)
    pg.wait_for_selector("#rag-chat")
    pg.wait_for_selector("#rag-question textarea")
    yield pg
    context.close()
    port = server.rstrip("/").rsplit(":", 1)[1]
    assert hosts <= {f"127.0.0.1:{port}"}, f"the page contacted other hosts: {hosts}"
    assert not errors, errors


def shot(pg, name: str) -> None:
    pg.wait_for_timeout(400)  # let transitions settle so the picture shows the final state
    pg.screenshot(path=str(ARTIFACTS / name))


def answers(pg):
    return pg.locator("#rag-chat .rag-answer:not(.rag-streaming)")


def ask(pg, question: str):
    """Type a question, send it, wait for its finished message; returns that message."""
    before = answers(pg).count()
    pg.fill("#rag-question textarea", question)
    pg.click("#rag-send")
    pg.wait_for_function(
        f"document.querySelectorAll('#rag-chat .rag-answer:not(.rag-streaming)').length > {before}")
    return answers(pg).last


def text_without_math(locator) -> str:
    """The element's text with typeset formulas removed, whitespace collapsed."""
    text = locator.evaluate("el => { const c = el.cloneNode(true); "
                            "c.querySelectorAll('.katex').forEach(k => k.remove()); "
                            "return c.textContent; }")
    return " ".join(text.split())


def no_math(text: str) -> str:
    return " ".join(re.sub(r"\$[^$]+\$", "", text).split())


def plain(text: str) -> str:
    """Comparable text: markdown emphasis and math dropped, whitespace collapsed."""
    return " ".join(re.sub(r"[*_`]", "", no_math(text)).split())


# -- the steps ---------------------------------------------------------------------------------


def test_the_page_loads_offline_with_example_questions(page):
    from rag.ui.app import EXAMPLES

    assert page.title() == "ICML 2024 Abstracts \u00b7 Ask"
    for q in EXAMPLES:
        assert page.locator("#rag-chat button", has_text=q).is_visible()
    assert "Click a citation" in page.inner_text("#rag-source")
    shot(page, "01-home.png")


def test_an_example_question_gets_a_cited_answer_whose_citation_opens_the_paper(page,
                                                                                app_settings):
    want = rag.ask(LATEX_QUESTION, settings=app_settings)
    assert want.citations and "$" in want.text
    page.locator("#rag-chat button", has_text=LATEX_QUESTION).click()
    msg = answers(page).last
    msg.wait_for()
    assert msg.locator("a.rag-cite").count() >= 1
    assert msg.locator(".rag-text .katex").count() >= 1  # $\Phi_\textrm{Flow}$ is typeset
    assert "$" not in text_without_math(msg.locator(".rag-text"))
    assert plain(want.citations[0].passage.title) in text_without_math(msg.locator(".rag-card"
                                                                                   ).first)
    shot(page, "02-answer.png")

    msg.locator("a.rag-cite").first.click()
    cited = want.citations[0]
    title = page.locator("#rag-source .rag-src-title")
    title.filter(has_text=plain(cited.passage.title)).wait_for()
    marks = page.locator("#rag-source mark.rag-hl")
    assert marks.count() == len(cited.spans)
    highlighted = " ".join(text_without_math(marks.nth(i)) for i in range(marks.count()))
    assert plain(highlighted) == plain(cited.quote)
    assert page.locator("#rag-source a.rag-src-link").get_attribute("href") == cited.passage.url
    shot(page, "03-source-panel.png")


def test_a_source_card_opens_its_paper_too(page, app_settings):
    want = rag.ask("Which papers are about federated learning?", settings=app_settings)
    assert len(want.citations) >= 2
    msg = ask(page, "Which papers are about federated learning?")
    assert msg.locator(".rag-card").count() == len(want.citations)
    msg.locator(".rag-card").last.click()
    last = want.citations[-1]
    page.locator("#rag-source .rag-src-title", has_text=plain(last.passage.title)).wait_for()
    assert page.locator("#rag-source mark.rag-hl").count() == len(last.spans)


def test_an_off_topic_question_abstains_and_offers_the_closest_papers(page, app_settings):
    want = rag.ask(OFF_TOPIC, settings=app_settings)
    assert want.abstained
    msg = ask(page, OFF_TOPIC)
    assert "rag-abstained" in msg.get_attribute("class")
    assert CANNOT_ANSWER in msg.inner_text()
    assert "you may be looking for" in msg.inner_text().lower()  # the label is upper-cased
    assert msg.locator("a.rag-cite").count() == 0
    cards = msg.locator(".rag-card")
    assert cards.count() == min(3, len(want.passages))
    cards.first.click()
    page.locator("#rag-source .rag-src-title",
                 has_text=plain(want.passages[0].title)).wait_for()
    assert page.locator("#rag-source mark").count() == 0
    shot(page, "04-abstention.png")


def test_a_follow_up_uses_the_conversation_and_shows_the_rewritten_query(page, app_settings):
    first = rag.ask(KERNELS, settings=app_settings)
    follow = "What pathologies do they solve?"
    want = rag.ask(follow, history=[(KERNELS, first.text)], settings=app_settings)
    assert want.query != follow and not want.abstained
    ask(page, KERNELS)
    msg = ask(page, follow)
    summary = msg.locator(".rag-query summary")
    assert summary.inner_text() == "Searched as (follow-up rewritten)"
    assert not msg.locator(".rag-query code").is_visible()  # on demand only
    summary.click()
    assert msg.locator(".rag-query code").inner_text() == want.query
    assert plain(want.citations[0].passage.title) in text_without_math(msg.locator(".rag-card")
                                                                       .first)
    shot(page, "05-follow-up.png")


def test_an_empty_question_gets_a_friendly_message_and_the_chat_goes_on(page):
    before = page.locator("#rag-chat .rag-error").count()
    page.fill("#rag-question textarea", "   ")
    page.press("#rag-question textarea", "Enter")
    page.wait_for_function(f"document.querySelectorAll('#rag-chat .rag-error').length > {before}")
    err = page.locator("#rag-chat .rag-error").last
    assert "Nothing to answer yet" in err.inner_text()
    assert "question" in err.inner_text().lower()
    assert "Traceback" not in page.inner_text("#rag-chat")
    shot(page, "06-empty-question.png")
    msg = ask(page, KERNELS)
    assert msg.locator("a.rag-cite").count() >= 1


def test_an_unindexed_corpus_gives_a_friendly_error_and_switching_back_works(page):
    page.click("#rag-settings .label-wrap")
    page.locator("#rag-corpus label", has_text="Full ICML 2024").click()
    page.locator("#rag-build").wait_for()  # offered because icml2024 has no index here
    msg = ask(page, KERNELS)
    assert "rag-error" in msg.get_attribute("class")
    assert "no index yet" in msg.inner_text() and "Build index" in msg.inner_text()
    assert "Traceback" not in msg.inner_text()
    shot(page, "07-error-no-index.png")
    page.locator("#rag-corpus label", has_text="Seeds").click()
    page.locator("#rag-build").wait_for(state="hidden")
    msg = ask(page, KERNELS)
    assert msg.locator("a.rag-cite").count() >= 1


def test_settings_show_unavailable_generators_and_apply_to_the_next_question(page,
                                                                             app_settings):
    question = "Which papers are about federated learning?"  # a list: list_limit papers
    assert len(rag.ask(question, settings=app_settings).citations) >= 2
    assert len(rag.ask(question, settings=app_settings, list_limit=1).citations) == 1
    page.click("#rag-settings .label-wrap")
    openai = page.locator("#rag-generator input[value=openai]")
    openai.wait_for()
    page.wait_for_function("document.querySelector('#rag-generator input[value=openai]')"
                           ".disabled === true")
    assert "OPENAI_BASE_URL" in page.inner_text("#rag-gen-status")
    assert page.locator("#rag-generator input[value=extractive]").is_enabled()
    msg = ask(page, question)
    assert msg.locator(".rag-card").count() >= 2
    limit_box = page.locator("#rag-list-limit input[type=number]")
    limit_box.fill("1")
    limit_box.press("Enter")
    page.wait_for_timeout(500)
    shot(page, "08-settings.png")
    msg = ask(page, question)
    assert msg.locator(".rag-card").count() == 1


def test_an_answer_exports_as_markdown_and_bibtex(page, app_settings):
    want = rag.ask(KERNELS, settings=app_settings)
    msg = ask(page, KERNELS)
    msg.locator("a.rag-act", has_text="Export").click()
    md = page.locator("#rag-export-md .cm-content")
    md.filter(has_text="**Q:**").wait_for()
    text = md.inner_text()
    assert f"**Q:** {KERNELS}" in text
    c = want.citations[0].passage
    assert f"[1] {c.title}." in text and c.url in text
    bib = page.locator("#rag-export-bib .cm-content").inner_text()
    assert "@inproceedings{icml2024_34936" in bib and f"title = {{{c.title}}}" in bib
    assert f"url = {{{c.url}}}" in bib
    page.locator("#rag-export").scroll_into_view_if_needed()
    shot(page, "09-export.png")


def test_clear_chat_empties_the_conversation(page):
    ask(page, KERNELS)
    page.locator("#rag-chat a.rag-cite").first.click()
    page.locator("#rag-source mark.rag-hl").first.wait_for()
    page.click("#rag-clear")
    page.locator("#rag-chat .rag-answer").first.wait_for(state="detached")
    assert page.locator("#rag-chat button", has_text=KERNELS).is_visible()  # examples again
    assert "Click a citation" in page.inner_text("#rag-source")


def test_an_uploaded_document_is_browsable_and_gets_cited(page, tmp_path, app_settings):
    page.click("#rag-corpus-tab-button")
    page.locator("#rag-papers .rag-row").first.wait_for()
    assert "of 90 papers" in page.inner_text("#rag-papers .rag-count")
    files = tmp_path / "files"
    files.mkdir()
    (files / "lattice-origami.md").write_text(DOC, encoding="utf-8")
    (files / "copy of it.md").write_text(DOC, encoding="utf-8")
    (files / "empty.md").write_text("", encoding="utf-8")
    page.set_input_files("#rag-files input[type=file]",
                         [str(files / n) for n in ("lattice-origami.md", "copy of it.md",
                                                   "empty.md")])
    page.locator('#rag-files td.filename[aria-label="empty.md"]').wait_for()
    page.click("#rag-add")
    report = page.locator("#rag-upload-report .rag-upload-report")
    report.wait_for()
    rows = {r.locator(".rag-up-name").inner_text(): r.inner_text()
            for r in report.locator("tr").all()}
    assert rows.keys() == {"lattice-origami.md", "copy of it.md", "empty.md"}
    assert "Added" in rows["lattice-origami.md"] and DOC_TITLE in rows["lattice-origami.md"]
    assert "Skipped (duplicate)" in rows["copy of it.md"]
    assert "Rejected" in rows["empty.md"] and "the file is empty" in rows["empty.md"]
    page.locator("#rag-papers .rag-count", has_text="of 91 papers").wait_for()
    shot(page, "10-upload-report.png")

    page.fill("#rag-search input, #rag-search textarea", "lattice origami")
    row = page.locator("#rag-papers .rag-row", has_text=DOC_TITLE)
    row.wait_for()
    assert "lattice-origami.md" in row.inner_text()  # tagged with the name it was uploaded as
    row.click()
    page.locator("#rag-paper-detail .rag-src-title", has_text=DOC_TITLE).wait_for()
    assert "origami moves" in page.inner_text("#rag-paper-detail")
    assert page.locator("#rag-paper-detail em", has_text="origami moves").count() == 1
    shot(page, "11-corpus-tab.png")

    page.click("#rag-chat-tab-button")
    msg = ask(page, "Which method folds protein chains on a hexagonal lattice?")
    assert DOC_TITLE in msg.locator(".rag-card").first.inner_text()
    msg.locator("a.rag-cite").first.click()
    page.locator("#rag-source .rag-src-title", has_text=DOC_TITLE).wait_for()
    assert page.locator("#rag-source mark.rag-hl").count() >= 1
    assert "lattice-origami.md" in page.inner_text("#rag-source")
    shot(page, "12-upload-cited.png")


def test_a_table_answer_shows_cited_cells_with_their_quote_on_hover_and_downloads_as_csv(
        page, app_settings, tmp_path):
    question = "Compare the papers on Gaussian processes by kernel and dataset"
    want = rag.ask(question, settings=app_settings)
    assert want.table is not None and want.citations
    msg = ask(page, question)
    table = msg.locator("table.rag-table")
    table.wait_for()
    assert [h.strip() for h in table.locator("th").all_inner_texts()] == ["Paper", "kernel",
                                                                          "dataset"]
    assert table.locator("tbody tr").count() == len(want.table.rows)
    missing = sum(not c.stated for r in want.table.rows for c in r.cells.values())
    assert table.locator("td.rag-cell-missing").count() == missing
    stated = table.locator("td.rag-cell[title]").first
    cell = next(c for r in want.table.rows for c in r.cells.values() if c.stated)
    assert stated.get_attribute("title") == cell.quote
    quote = stated.locator(".rag-cell-quote")
    assert not quote.is_visible()
    stated.locator("a.rag-cite").hover()
    quote.wait_for(state="visible")
    assert plain(quote.inner_text()).strip("\u201c\u201d") == plain(cell.quote)
    shot(page, "12-table-hover.png")
    msg.locator("a.rag-act", has_text="Export").click()
    button = page.locator("#rag-export-csv")
    button.wait_for(state="visible")
    with page.expect_download() as got:
        button.click()
    path = tmp_path / "table.csv"
    got.value.save_as(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "paper_id,title,url,kernel,kernel (quote),dataset,dataset (quote)"
    assert [line.split(",")[0] for line in lines[1:]] == [r.paper_id for r in want.table.rows]
    page.locator("#rag-export").scroll_into_view_if_needed()
    shot(page, "13-table-csv.png")
