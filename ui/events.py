"""What the page does: every event handler, wired to the components of layout.py.

Handlers are thin: they read the session's state (turns, settings chosen in the panel), call
chat.py / corpus_view.py, and return rendered HTML. Answering shares one concurrency group
("answer", `settings.ui_concurrency` at once) with the `ask` API endpoint; indexing (uploads,
"Build index") runs one at a time. Every UI event is private: only `ask` is in the API.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import gradio as gr

import rag
from rag.errors import RagError
from rag.settings import Settings
from rag.documents import reindex

from . import availability, chat, corpus_view, layout, live, map_view, markup, render

PRIVATE = {"api_visibility": "private"}
EXPORTS = Path(tempfile.gettempdir()) / "icml-rag-exports"


def wire(demo: gr.Blocks, ui, base: Settings) -> None:
    _chat(ui, base)
    _settings(ui, base)
    _corpus(demo, ui, base)
    _map(ui, base)
    _api(base)


# -- chat ------------------------------------------------------------------------------------


def _chat(ui, base: Settings) -> None:
    skip5 = (gr.skip(),) * 5

    def answer(text: str, msgs: list, turns: list, prefs: dict):
        msgs, turns, text = list(msgs or []), list(turns or []), (text or "").strip()
        if not text:
            msgs.append({"role": "assistant", "content": render.error_html(
                "type a question about the indexed papers first \u2014 or pick an example",
                "Nothing to answer yet")})
            yield ("", msgs, turns, *skip5)
            return
        try:
            settings = chat.settings_for(base, prefs)
        except RagError as exc:
            msgs.append({"role": "assistant", "content": render.error_html(str(exc))})
            yield ("", msgs, turns, *skip5)
            return
        msgs += [{"role": "user", "content": render.user_html(text)},
                 {"role": "assistant", "content": live.pending_html()}]
        for html, turn in chat.respond(text, turns, settings):
            msgs[-1] = {"role": "assistant", "content": html}
            if turn is None:
                yield ("", msgs, turns, *skip5)
            else:
                turns = turns + [turn]
                yield ("", msgs, turns, *export(turns, len(turns) - 1))

    def pick_example(evt: gr.SelectData, msgs, turns, prefs):
        yield from answer((evt.value or {}).get("text", ""), msgs, turns, prefs)

    outputs = [ui.question, ui.chatbot, ui.turns, ui.export_title, ui.export_md, ui.export_bib,
               ui.export_file, ui.export_csv]
    queued = {"concurrency_limit": base.ui_concurrency, "concurrency_id": "answer",
              "show_progress": "hidden", **PRIVATE}
    for trigger in (ui.question.submit, ui.send.click):
        trigger(answer, [ui.question, ui.chatbot, ui.turns, ui.prefs], outputs, **queued)
    ui.chatbot.example_select(pick_example, [ui.chatbot, ui.turns, ui.prefs], outputs, **queued)

    def clear():
        return ([], [], render.empty_source_html(), *export([], -1))

    cleared = [ui.chatbot, ui.turns, ui.source, ui.export_title, ui.export_md, ui.export_bib,
               ui.export_file, ui.export_csv]
    ui.clear.click(clear, None, cleared, **PRIVATE)
    ui.chatbot.clear(clear, None, cleared, **PRIVATE)

    def follow_link(value: str, turns: list, prefs: dict):
        link = chat.parse_link(value)
        if link is None:
            return (gr.skip(),) * 7
        kind, turn, n = link
        if kind == "x":
            return (gr.skip(), gr.update(open=True), *export(turns, turn))
        try:
            settings = chat.settings_for(base, prefs)
            html = chat.source_for(turns, kind, turn, n, settings,
                                   corpus_view.catalog(settings).names)
        except RagError as exc:
            html = render.error_html(str(exc), "The source cannot be shown")
        if html is None:
            html = render.error_html("that answer is no longer in this chat", "Source not found")
        return (html, gr.skip(), *export(turns, turn))

    ui.bridge.change(follow_link, [ui.bridge, ui.turns, ui.prefs],
                     [ui.source, ui.export_box, ui.export_title, ui.export_md, ui.export_bib,
                      ui.export_file, ui.export_csv], concurrency_limit=None, show_progress="hidden", **PRIVATE)


def _saved(text: str, name: str) -> str:
    """One file per distinct export (not per click), named `name` for the download."""
    path = EXPORTS / hashlib.sha1(text.encode()).hexdigest()[:16] / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return str(path)


def export(turns: list, turn: int):
    """(title html, markdown, bibtex, .md download update, .csv download update) for one
    answer of the chat; the CSV only for a table."""
    hidden = gr.update(visible=False, value=None)
    if not 0 <= turn < len(turns):
        return layout.EXPORT_HINT, "", "", hidden, hidden
    a = turns[turn].answer
    path = _saved(render.export_file_text(a), "answer.md")
    csv = (gr.update(visible=True, value=_saved(render.export_csv(a), "table.csv"))
           if a.table is not None and a.table.rows else hidden)
    title = (f'<div class="rag-hint">Answer to \u201c{markup.esc(a.question)}\u201d'
             f'{"" if a.citations else " (no references: it abstained)"}</div>')
    return (title, render.export_markdown(a), render.export_bibtex(a),
            gr.update(visible=True, value=path), csv)


# -- settings --------------------------------------------------------------------------------


def _settings(ui, base: Settings) -> None:
    def set_pref(key: str):
        return lambda value, prefs: {**(prefs or {}), key: value}

    ui.retriever_in.change(set_pref("retriever"), [ui.retriever_in, ui.prefs], ui.prefs,
                           **PRIVATE)
    ui.k_in.change(set_pref("k"), [ui.k_in, ui.prefs], ui.prefs, **PRIVATE)
    ui.list_in.change(set_pref("list_limit"), [ui.list_in, ui.prefs], ui.prefs, **PRIVATE)

    def set_generator(value, prefs):
        status = availability.generator_status().get(value)
        if status is not None and not status.available:
            gr.Warning(f"The {value} generator is unavailable: {status.reason}")
            return gr.update(value=(prefs or {}).get("generator", "auto")), prefs
        return gr.skip(), {**(prefs or {}), "generator": value}

    ui.generator_in.input(set_generator, [ui.generator_in, ui.prefs],
                          [ui.generator_in, ui.prefs], **PRIVATE)

    def set_corpus(value, query, prefs):
        prefs = {**(prefs or {}), "corpus": value}
        settings = chat.settings_for(base, prefs)
        note, offer = layout.corpus_status(settings)
        return prefs, note, gr.update(visible=offer), corpus_view.list_html(settings, query)

    ui.corpus_in.change(set_corpus, [ui.corpus_in, ui.search, ui.prefs],
                        [ui.prefs, ui.corpus_note, ui.build, ui.paper_list], **PRIVATE)

    def build_index(query, prefs, progress=gr.Progress()):
        settings = chat.settings_for(base, prefs)
        progress(0, desc="Loading the corpus\u2026")
        try:
            reindex(settings, settings.corpus,
                    progress=lambda d, t: progress((d, t), desc="Embedding", unit="chunks"))
        except RagError as exc:
            return (render.error_html(str(exc), "The index could not be built"),
                    gr.update(visible=True), gr.skip())
        note, offer = layout.corpus_status(settings)
        return note, gr.update(visible=offer), corpus_view.list_html(settings, query)

    ui.build.click(build_index, [ui.search, ui.prefs], [ui.corpus_note, ui.build, ui.paper_list],
                   concurrency_limit=1, concurrency_id="index", show_progress_on=[ui.corpus_note],
                   **PRIVATE)


# -- corpus tab ------------------------------------------------------------------------------


def _corpus(demo: gr.Blocks, ui, base: Settings) -> None:
    def show_list(query: str, prefs: dict):
        return corpus_view.list_html(chat.settings_for(base, prefs), query)

    ui.search.change(show_list, [ui.search, ui.prefs], ui.paper_list, show_progress="hidden",
                     trigger_mode="always_last", **PRIVATE)
    demo.load(show_list, [ui.search, ui.prefs], ui.paper_list, **PRIVATE)

    def show_paper(value: str, prefs: dict):
        link = str(value or "").split(":", 1)[0]
        if not link.startswith("d/"):
            return gr.skip(), gr.skip(), gr.skip()
        settings, pid = chat.settings_for(base, prefs), link[2:]
        return (corpus_view.detail_html(settings, pid),
                gr.update(visible=corpus_view.removable(settings, pid)), pid)

    ui.paper_bridge.change(show_paper, [ui.paper_bridge, ui.prefs],
                           [ui.paper_detail, ui.remove, ui.shown], concurrency_limit=None,
                           show_progress="hidden", **PRIVATE)

    def remove_document(paper_id: str, query: str, prefs: dict):
        settings = chat.settings_for(base, prefs)
        report = corpus_view.remove(settings, paper_id)
        return report, gr.update(visible=False), "", corpus_view.list_html(settings, query)

    ui.remove.click(remove_document, [ui.shown, ui.search, ui.prefs],
                    [ui.paper_detail, ui.remove, ui.shown, ui.paper_list], concurrency_limit=1,
                    concurrency_id="index", show_progress_on=[ui.paper_detail], **PRIVATE)

    def add_documents(paths, query, prefs, progress=gr.Progress()):
        settings = chat.settings_for(base, prefs)
        progress(0, desc="Checking the files\u2026")
        report = corpus_view.add_files(
            list(paths or []), settings,
            progress=lambda d, t: progress((d, t), desc="Indexing", unit="chunks"))
        return report, None, corpus_view.list_html(settings, query)

    ui.add.click(add_documents, [ui.files, ui.search, ui.prefs],
                 [ui.upload_report, ui.files, ui.paper_list], concurrency_limit=1,
                 concurrency_id="index", show_progress_on=[ui.upload_report], **PRIVATE)


# -- map tab ---------------------------------------------------------------------------------


def _map(ui, base: Settings) -> None:
    def draw(query: str, turns: list, prefs: dict):
        fig, note = map_view.map_view(chat.settings_for(base, prefs), query, turns)
        return (gr.skip() if fig is None else fig), note

    shown = [ui.map_plot, ui.map_note]
    ui.map_tab.select(draw, [ui.map_query, ui.turns, ui.prefs], shown, show_progress="minimal",
                      **PRIVATE)
    ui.map_query.change(draw, [ui.map_query, ui.turns, ui.prefs], shown, show_progress="hidden",
                        trigger_mode="always_last", **PRIVATE)

    def follow(value: str, query: str, turns: list, prefs: dict):
        """A point clicked ("d/<paper id>": open it in the Corpus tab) or an answer's "Show on
        map" link ("m/<turn>": the map, zoomed on that answer's cited papers)."""
        link = str(value or "").split(":", 1)[0]
        settings = chat.settings_for(base, prefs)
        if link.startswith("d/"):
            pid = link[2:]
            return (gr.Tabs(selected="corpus"), gr.skip(), gr.skip(),
                    corpus_view.detail_html(settings, pid),
                    gr.update(visible=corpus_view.removable(settings, pid)), pid)
        if link.startswith("m/") and link[2:].isdigit():
            fig, note = map_view.map_view(settings, query, turns, int(link[2:]))
            return (gr.Tabs(selected="map"), gr.skip() if fig is None else fig, note,
                    gr.skip(), gr.skip(), gr.skip())
        return (gr.skip(),) * 6

    ui.map_bridge.change(follow, [ui.map_bridge, ui.map_query, ui.turns, ui.prefs],
                         [ui.tabs, ui.map_plot, ui.map_note, ui.paper_detail, ui.remove,
                          ui.shown], concurrency_limit=None, show_progress="hidden", **PRIVATE)


# -- the HTTP API: the JSON of `rag ask --json` ----------------------------------------------


def _api(base: Settings) -> None:
    def ask(question: str, k: int = 0, retriever: str = "", generator: str = "",
            corpus: str = "") -> dict:
        """Answer a question from the indexed abstracts with checked [n] citations.

        Returns the JSON of `rag ask --json`: question, answer, abstained, generator,
        citations, passages, timings_ms. k/retriever/generator/corpus: optional overrides.
        """
        try:
            settings = chat.settings_for(base, {"k": k or None, "retriever": retriever,
                                                "generator": generator, "corpus": corpus})
            return rag.ask(question, settings=settings).to_dict()
        except RagError as exc:
            raise gr.Error(chat.friendly(exc)) from None

    gr.api(ask, api_name="ask", concurrency_limit=base.ui_concurrency, concurrency_id="answer")
