"""The chat UI (Gradio): presentation only. It calls `rag.ask_stream`, `rag.ask` and the corpus
functions and renders their results; `rag.ui.app.serve()` is what `rag serve` runs.

Modules, in the order a request flows: app (the page and `serve`), launch (bind, login, index
at start-up), layout (components), events (handlers), chat (a session's turns, streaming an
answer), corpus_view (the corpus tab), availability (which settings can be chosen), render
(pure HTML/Markdown).
"""
