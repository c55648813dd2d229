"""The Map tab in a real browser (headless Debian Chromium, Playwright), served in-process over
a copy of the seed index: the map is drawn, a hovered point shows its paper's title and
authors, a clicked point opens the paper (with the papers like it) in the Corpus tab, the
search box highlights matches, and an answer's cited papers are highlighted and reachable
through its "Show on map" link. Screenshots go to test-artifacts/ui/map-*.png.

Expected titles and cited papers come from `rag.paper_map` and `rag.ask` on the same index.
"""

from __future__ import annotations

import pytest

import rag
from test_ui_browser import (ARTIFACTS, app_settings, ask, browser, page,  # noqa: F401 - fixtures
                             server, shot)

pytestmark = pytest.mark.browser
KERNELS = "Which kernels avoid mean reversion in Gaussian process regression?"
POINTS = "#rag-map .scatterlayer .trace:first-child path.point"


def open_map(pg):
    pg.get_by_role("tab", name="Map").click()
    pg.wait_for_selector(POINTS)
    pg.wait_for_selector("#rag-map-note")


def legend(pg) -> list[str]:
    return pg.locator("#rag-map .legendtext").all_text_contents()


def test_the_map_tab_draws_every_paper_with_cluster_labels(page, app_settings):
    pmap = rag.paper_map(settings=app_settings)
    open_map(page)
    assert page.locator(POINTS).count() == len(pmap.points) == 90
    labels = page.locator("#rag-map .annotation-text").all_text_contents()
    assert sorted(labels) == sorted(c.label for c in pmap.clusters) and len(labels) >= 2
    assert f"90 papers in {len(pmap.clusters)} clusters" in page.inner_text("#rag-map-note")
    shot(page, "map-tab.png")


def test_hovering_a_point_shows_its_title_and_authors(page, app_settings):
    open_map(page)
    point = page.locator(POINTS).nth(10)
    point.hover(force=True)
    tip = page.locator("#rag-map .hoverlayer .hovertext")
    tip.wait_for()
    text = tip.text_content()  # SVG text: no innerText
    # the point's own paper: the one whose position the figure drew there
    pid = page.evaluate("() => document.querySelector('#rag-map .js-plotly-plot')"
                        ".data[0].customdata[10][0]")
    paper = next(p for p in rag.papers(settings=app_settings) if p.id == pid)
    assert paper.title[:40] in text
    assert paper.authors.split(",")[0].strip() in text
    shot(page, "map-hover.png")


def test_clicking_a_point_opens_the_paper_and_papers_like_it(page, app_settings):
    open_map(page)
    pid = page.evaluate("() => document.querySelector('#rag-map .js-plotly-plot')"
                        ".data[0].customdata[20][0]")
    paper = next(p for p in rag.papers(settings=app_settings) if p.id == pid)
    page.locator(POINTS).nth(20).hover(force=True)
    page.locator("#rag-map .hoverlayer .hovertext").wait_for()
    box = page.locator(POINTS).nth(20).bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    detail = page.locator("#rag-paper-detail")
    detail.locator(".rag-src-title").filter(has_text=paper.title[:30]).wait_for()
    assert page.get_by_role("tab", name="Corpus").get_attribute("aria-selected") == "true"
    like = [s.paper.title for s in rag.similar(pid, 5, app_settings)]
    cards = detail.locator(".rag-similar .rag-card-title").all_inner_texts()
    assert [c[:30] for c in cards] == [t[:30] for t in like]
    shot(page, "map-click-detail.png")


def test_the_search_box_highlights_matching_papers(page, app_settings):
    open_map(page)
    page.fill("#rag-map-search textarea, #rag-map-search input", "diffusion")
    page.wait_for_function("() => [...document.querySelectorAll('#rag-map .legendtext')]"
                           ".some(e => e.textContent.startsWith('Matches'))")
    expected = sum("diffusion" in f"{p.title} {p.authors} {p.text}".lower()
                   for p in rag.papers("seeds", app_settings))
    assert f"Matches ({expected})" in legend(page) and expected > 0
    assert f"{expected} matching" in page.inner_text("#rag-map-note")
    shot(page, "map-search.png")


def test_an_answers_cited_papers_are_highlighted_on_the_map(page, app_settings):
    answer = rag.ask(KERNELS, settings=app_settings)
    cited = list(dict.fromkeys(c.paper_id for c in answer.citations))
    assert cited
    message = ask(page, KERNELS)
    message.locator("a.rag-on-map").click()  # "Show on map" under the answer
    page.wait_for_function("() => [...document.querySelectorAll('#rag-map .legendtext')]"
                           ".some(e => e.textContent.startsWith('Cited in the answer'))")
    assert page.get_by_role("tab", name="Map").get_attribute("aria-selected") == "true"
    assert f"Cited in the answer ({len(cited)})" in legend(page)
    drawn = page.evaluate("() => document.querySelector('#rag-map .js-plotly-plot').data"
                          ".find(t => t.name.startsWith('Cited')).customdata.map(c => c[0])")
    assert drawn == cited
    shot(page, "map-cited.png")
