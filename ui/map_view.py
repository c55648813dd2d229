"""The Map tab: the conference's papers as an interactive plotly figure (`rag.paper_map`).

Every paper is a point coloured by its cluster, with the clusters' labels written on the map;
hovering shows a paper's title and authors, and clicking one opens it in the Corpus tab (the
page's script sends the point's paper id, `customdata[0]`, through a hidden textbox). On top:
the papers that match a search (a query or an author), the papers the last answer cited (or
the answer whose "Show on map" link was clicked, zoomed on them), and the user's uploaded
documents, drawn as stars. plotly is imported here only; gradio shows the figure in a gr.Plot.

Example: figure(paper_map, matches={"p1"}, cited=["p2"]) -> a go.Figure whose traces are
"papers", "Your documents", "Matches (1)", "Cited in the answer (1)" (empty ones left out).
"""

from __future__ import annotations

import html
from typing import Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative

from rag.errors import RagError
from rag.settings import Settings
from rag.types import PaperMap

from . import corpus_view, markup, render
from .export import papers_of

PALETTE = qualitative.Dark24 + qualitative.Alphabet + qualitative.Light24
MATCH_COLOR, CITED_COLOR, UPLOAD_COLOR = "#f59e0b", "#dc2626", "#111827"
HEIGHT = 720
SEP = " \u00b7 "


def _hover(title: str, authors: str) -> str:
    """Hover text for plotly, which reads a subset of HTML: the user's text escaped."""
    head = html.escape(title if len(title) <= 90 else title[:89] + "\u2026")
    return f"<b>{head}</b><br>{html.escape(render.short_authors(authors))}"


def _trace(points, name: str, marker: dict, **extra) -> go.Scatter:
    return go.Scatter(
        x=[p.x for p in points], y=[p.y for p in points], mode=extra.pop("mode", "markers"),
        name=name, marker=marker, customdata=[[p.paper_id, _hover(p.title, p.authors)]
                                              for p in points],
        hovertemplate="%{customdata[1]}<extra></extra>", **extra)


def figure(pmap: PaperMap, matches: set[str] = frozenset(), cited: Sequence[str] = (),
           focus: bool = False) -> go.Figure:
    """The map, with `matches` and `cited` (in citation order) drawn over it; `focus` zooms
    on the cited papers."""
    base = [p for p in pmap.points if not p.upload]
    mine = [p for p in pmap.points if p.upload]
    dim = bool(matches or cited)
    colors = [PALETTE[p.cluster % len(PALETTE)] for p in base]
    traces = [_trace(base, "papers", {"size": 6, "color": colors, "opacity": 0.3 if dim else 0.8,
                                      "line": {"width": 0}}, showlegend=False)]
    if mine:
        traces.append(_trace(mine, "Your documents", {"size": 15, "symbol": "star",
                                                      "color": UPLOAD_COLOR,
                                                      "line": {"width": 1, "color": "white"}}))
    found = [p for p in pmap.points if p.paper_id in matches]
    if found:
        traces.append(_trace(found, f"Matches ({len(found)})",
                             {"size": 10, "color": MATCH_COLOR,
                              "line": {"width": 1, "color": "#78350f"}}))
    by_id = {p.paper_id: p for p in pmap.points}
    shown = [by_id[pid] for pid in dict.fromkeys(cited) if pid in by_id]
    if shown:
        traces.append(_trace(shown, f"Cited in the answer ({len(shown)})",
                             {"size": 14, "symbol": "diamond", "color": CITED_COLOR,
                              "line": {"width": 1.5, "color": "white"}},
                             mode="markers+text", text=[str(i + 1) for i in range(len(shown))],
                             textposition="top center",
                             textfont={"color": CITED_COLOR, "size": 12}))
    fig = go.Figure(traces)
    for c in pmap.clusters:
        fig.add_annotation(x=c.x, y=c.y, text=html.escape(c.label), showarrow=False,
                           font={"size": 11, "color": "#1f2937"},
                           bgcolor="rgba(255,255,255,0.75)", borderpad=2)
    axis = {"visible": False, "showgrid": False, "zeroline": False}
    fig.update_layout(height=HEIGHT, margin={"l": 4, "r": 4, "t": 30, "b": 4},
                      plot_bgcolor="white", paper_bgcolor="white", hovermode="closest",
                      showlegend=len(traces) > 1,
                      xaxis=axis, yaxis={**axis, "scaleanchor": "x"}, dragmode="pan",
                      legend={"orientation": "h", "y": 1.02, "x": 0, "yanchor": "bottom"})
    if focus and shown:
        xs, ys = [p.x for p in shown], [p.y for p in shown]
        pad = max(max(xs) - min(xs), max(ys) - min(ys), 10.0) * 0.4
        fig.update_layout(xaxis={**axis, "range": [min(xs) - pad, max(xs) + pad]},
                          yaxis={**axis, "range": [min(ys) - pad, max(ys) + pad]})
    return fig


def cited_papers(turns: Sequence, turn: int | None = None) -> list[str]:
    """The paper ids of an answer of the chat (the last answer's when `turn` is None): those
    it cited, or a table's rows (`export.papers_of`)."""
    if not turns:
        return []
    t = turns[-1] if turn is None else (turns[turn] if 0 <= turn < len(turns) else None)
    return [] if t is None else [p.paper_id for p in papers_of(t.answer)]


def matching(settings: Settings, query: str) -> set[str]:
    """Ids of the papers whose title, authors or abstract hold every word of `query`."""
    if not (query or "").strip():
        return set()
    cat = corpus_view.catalog(settings)
    hits, _ = corpus_view.search_papers(cat.papers, query, limit=len(cat.papers))
    return {p.id for p in hits}


def map_view(settings: Settings, query: str = "", turns: Sequence = (),
             turn: int | None = None) -> tuple[go.Figure | None, str]:
    """(figure, note html) for the session's corpus; (None, an error) without an index."""
    import rag

    query = query or ""  # None before the Map tab was first opened
    try:
        pmap = rag.paper_map(settings.corpus, settings)
        matches = matching(settings, query)
    except RagError as exc:
        return None, render.error_html(str(exc), "The map cannot be drawn")
    cited = cited_papers(turns, turn)
    fig = figure(pmap, matches, cited, focus=turn is not None)
    return fig, note_html(pmap, query, len(matches), len(cited))


def note_html(pmap: PaperMap, query: str, matches: int, cited: int) -> str:
    papers = sum(not p.upload for p in pmap.points)
    mine = len(pmap.points) - papers
    bits = [f"{papers:,} papers in {len(pmap.clusters)} clusters"]
    if mine:
        bits.append(f"{mine} of your documents (\u2605)")
    if query.strip():
        bits.append(f"{matches} matching \u201c{markup.esc(query.strip())}\u201d")
    if cited:
        bits.append(f"{cited} cited in the answer (\u25c6, numbered)")
    return (f'<div class="rag-hint" id="rag-map-note">{SEP.join(bits)}. Hover a point for its '
            f'title, click it to open the paper.</div>')
