"""The page's components and their places; no behaviour (that is in events.py).

`build_layout(settings)` must run inside a `gr.Blocks` context; it returns every component the
events need, by name. Chat tab: the conversation (left) and the source panel (right, sticky),
under the conversation the input, Settings and Export. Corpus tab: searchable paper list (left),
the chosen paper (with a Remove button when it is an upload) and the upload form (right). Map
tab: a highlight box over the map of the conference (map_view.py). Hidden textboxes are the
"bridges" that static/app.js writes to when a `#rag:` link inside rendered HTML, or a point of
the map, is clicked.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gradio as gr

from rag.settings import RETRIEVERS, Settings
from rag.ingest.uploads import ALLOWED_SUFFIXES, MAX_UPLOAD_BYTES

from . import availability, markup, render

EXAMPLES = [
    "Which libraries does the PhiFlow differentiable simulation toolkit integrate with?",
    "Which kernels avoid mean reversion in Gaussian process regression?",
    "Which papers are about federated learning?",
    "How many multiple-choice questions does the WMDP benchmark contain?",
]
CORPORA = [("Seeds \u2014 90 ICML 2024 abstracts", "seeds"),
           ("Full ICML 2024 \u2014 2,634 abstracts", "icml2024")]
GENERATOR_LABELS = {"auto": "Auto", "extractive": "Extractive (no LLM)", "local": "Local LLM",
                    "openai": "OpenAI-compatible"}  # another registered writer shows its name


def generators() -> list[tuple[str, str]]:
    """(label, name) of every registered answer writer (`rag.registry.WRITERS`)."""
    from rag.registry import WRITERS

    order = list(GENERATOR_LABELS)
    names = sorted(WRITERS.names(), key=lambda n: (order.index(n) if n in order else 99, n))
    return [(GENERATOR_LABELS.get(n, n), n) for n in names]
RETRIEVER_LABELS = {"hybrid": "Hybrid (dense + BM25)", "dense": "Dense", "bm25": "BM25"}
LATEX = [{"left": "$$", "right": "$$", "display": True},
         {"left": "$", "right": "$", "display": False},
         {"left": "\\(", "right": "\\)", "display": False},
         {"left": "\\[", "right": "\\]", "display": True}]
HEADER = ('<div class="rag-header"><div class="rag-logo">\u2726</div><div>'
          '<div class="rag-title">ICML 2024 Abstracts</div><div class="rag-subtitle">'
          'Ask a question \u2014 answers quote the abstracts and cite them. Runs offline.'
          '</div></div></div>')
WELCOME = ('<div class="rag-welcome"><b>Ask about the indexed papers</b><br>Every claim is '
           'cited to an abstract; click a number to read it.</div>')
EXPORT_HINT = '<div class="rag-hint">Ask a question, then export its answer with references.</div>'


def status_html() -> str:
    """The generator availability list; an unavailable entry carries the id the page's script
    uses to disable its radio button (`rag-off-<name>`)."""
    rows = []
    for name, status in availability.generator_status().items():
        mark = "\u2713" if status.available else "\u2715"
        off = "" if status.available else f' id="rag-off-{name}"'
        cls = "rag-ok" if status.available else "rag-no"
        rows.append(f'<li class="{cls}"><span class="rag-mark">{mark}</span><b>{name}</b>'
                    f'<span{off}>{markup.esc(status.reason)}</span></li>')
    return f'<ul class="rag-status">{"".join(rows)}</ul>'


def corpus_status(settings: Settings) -> tuple[str, bool]:
    """(note html, whether to offer the "Build index" button) for the session's corpus."""
    name = markup.esc(settings.corpus)
    if availability.corpus_indexed(settings, settings.corpus):
        return f'<div class="rag-hint">Index of <b>{name}</b> is ready.</div>', False
    return (f'<div class="rag-notice">The corpus <b>{name}</b> has no index yet. Build it once '
            f'(embedding takes a few minutes on a laptop CPU).</div>', True)


def prefs_of(settings: Settings) -> dict[str, Any]:
    return {"corpus": settings.corpus, "retriever": settings.retriever, "k": settings.k,
            "list_limit": settings.list_limit,
            "generator": settings.generator}


def build_layout(base: Settings) -> SimpleNamespace:
    corpora = CORPORA + ([] if base.corpus in {v for _, v in CORPORA}
                         else [(base.corpus, base.corpus)])
    note, offer_build = corpus_status(base)
    ui = SimpleNamespace(turns=gr.State([]), prefs=gr.State(prefs_of(base)))
    gr.HTML(HEADER, elem_id="rag-header")
    with gr.Tabs(elem_id="rag-tabs") as ui.tabs:
        with gr.Tab("Chat", id="chat", elem_id="rag-chat-tab"):
            with gr.Row(equal_height=False):
                with gr.Column(scale=7, min_width=420):
                    ui.chatbot = gr.Chatbot(
                        elem_id="rag-chat", show_label=False, height="66vh",
                        latex_delimiters=LATEX, buttons=[], feedback_options=None,
                        layout="bubble", group_consecutive_messages=False,
                        placeholder=WELCOME, examples=[{"text": q} for q in EXAMPLES])
                    with gr.Row(elem_id="rag-input-row"):
                        ui.question = gr.Textbox(
                            elem_id="rag-question", show_label=False, scale=8, lines=1,
                            max_lines=6, autofocus=True, container=False,
                            placeholder="Ask a question about the papers\u2026")
                        ui.send = gr.Button("Ask", variant="primary", scale=1, min_width=80,
                                            elem_id="rag-send")
                    with gr.Row(elem_id="rag-actions"):
                        ui.clear = gr.Button("Clear chat", size="sm", variant="secondary",
                                             elem_id="rag-clear")
                    _settings_panel(ui, base, corpora, note, offer_build)
                    _export_panel(ui)
                with gr.Column(scale=5, min_width=320, elem_id="rag-side"):
                    ui.source = gr.Markdown(render.empty_source_html(), elem_id="rag-source",
                                            latex_delimiters=LATEX)
            ui.bridge = gr.Textbox(visible="hidden", elem_id="rag-bridge")
        with gr.Tab("Corpus", id="corpus", elem_id="rag-corpus-tab"):
            _corpus_tab(ui)
        with gr.Tab("Map", id="map", elem_id="rag-map-tab") as ui.map_tab:
            _map_tab(ui)
    # Outside the tabs: a tab's components exist on the page only once it was opened, and an
    # answer's "Show on map" link is clicked before the Map tab ever was.
    ui.map_bridge = gr.Textbox(visible="hidden", elem_id="rag-map-bridge")
    return ui


def _settings_panel(ui, base: Settings, corpora, note: str, offer_build: bool) -> None:
    with gr.Accordion("Settings", open=False, elem_id="rag-settings"):
        with gr.Row():
            with gr.Column():
                ui.corpus_in = gr.Radio(corpora, value=base.corpus, label="Corpus",
                                        elem_id="rag-corpus")
                ui.corpus_note = gr.HTML(note)
                ui.build = gr.Button("Build index", size="sm", variant="primary",
                                     visible=offer_build, elem_id="rag-build")
                ui.retriever_in = gr.Radio([(RETRIEVER_LABELS[r], r) for r in RETRIEVERS],
                                           value=base.retriever, label="Retriever",
                                           elem_id="rag-retriever")
                ui.k_in = gr.Slider(1, 20, value=base.k, step=1, label="Passages (k)",
                                    elem_id="rag-k")
                ui.list_in = gr.Slider(1, 40, value=base.list_limit, step=1,
                                       label="Papers in a list answer", elem_id="rag-list-limit")
            with gr.Column():
                ui.generator_in = gr.Radio(generators(), value=base.generator, label="Generator",
                                           elem_id="rag-generator")
                gr.HTML(status_html(), elem_id="rag-gen-status")
                gr.HTML('<div class="rag-hint">Changes apply to your next question; no '
                        'restart needed.</div>')


def _export_panel(ui) -> None:
    with gr.Accordion("Export an answer", open=False, elem_id="rag-export") as ui.export_box:
        ui.export_title = gr.HTML(EXPORT_HINT)
        with gr.Row():
            ui.export_md = gr.Code(label="Markdown", language="markdown", interactive=False,
                                   lines=8, wrap_lines=True, elem_id="rag-export-md")
            ui.export_bib = gr.Code(label="BibTeX", interactive=False, lines=8,
                                    wrap_lines=True, elem_id="rag-export-bib")
        with gr.Row():
            ui.export_file = gr.DownloadButton("Download .md", size="sm", visible=False,
                                               elem_id="rag-export-file")
            ui.export_csv = gr.DownloadButton("Download table .csv", size="sm", visible=False,
                                              elem_id="rag-export-csv")


def _corpus_tab(ui) -> None:
    with gr.Row(equal_height=False):
        with gr.Column(scale=6, min_width=380):
            ui.search = gr.Textbox(placeholder="Search titles, authors, abstracts\u2026",
                                   show_label=False, elem_id="rag-search", container=False)
            ui.paper_list = gr.Markdown(elem_id="rag-papers", latex_delimiters=LATEX)
        with gr.Column(scale=5, min_width=320):
            ui.paper_detail = gr.Markdown('<div class="rag-src rag-src-empty"><p>Pick a paper '
                                          'to read its abstract.</p></div>',
                                          elem_id="rag-paper-detail", latex_delimiters=LATEX)
            # Offered for uploaded documents only; `shown` is the paper the detail view holds.
            ui.shown = gr.State("")
            ui.remove = gr.Button("Remove this document from the corpus", size="sm",
                                  variant="stop", visible=False, elem_id="rag-remove")
            with gr.Column(elem_id="rag-upload"):
                gr.HTML('<div class="rag-upload-head"><b>Add your documents</b><span>'
                        f'{", ".join(ALLOWED_SUFFIXES)} \u00b7 up to '
                        f'{MAX_UPLOAD_BYTES // 2**20} MB each. They join the current corpus '
                        'and can be cited like the abstracts.</span></div>')
                ui.files = gr.File(file_count="multiple", file_types=list(ALLOWED_SUFFIXES),
                                   type="filepath", show_label=False, height=150,
                                   elem_id="rag-files")
                ui.add = gr.Button("Add to corpus", variant="primary", elem_id="rag-add")
            ui.upload_report = gr.HTML('<div class="rag-hint">What happens to each file is '
                                       'reported here.</div>', elem_id="rag-upload-report")
    ui.paper_bridge = gr.Textbox(visible="hidden", elem_id="rag-paper-bridge")


def _map_tab(ui) -> None:
    ui.map_query = gr.Textbox(placeholder="Highlight papers: a topic, a title word, an "
                              "author\u2026", show_label=False, elem_id="rag-map-search",
                              container=False)
    ui.map_note = gr.HTML('<div class="rag-hint">Drawing the map\u2026</div>',
                          elem_id="rag-map-status")
    ui.map_plot = gr.Plot(show_label=False, elem_id="rag-map")
