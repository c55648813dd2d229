"""The chat UI: a Gradio 6 page over `rag.ask_stream` and the corpus functions, and `serve()`.

A Chat tab (answers streamed in with clickable `[n]` citations and source cards; a source panel
showing the cited paper with the quoted sentence highlighted; settings; export as
Markdown/BibTeX) and a Corpus tab (browse and search the indexed papers; add documents with a
progress bar and a report). The named endpoint `ask` returns `Answer.to_dict()`, the JSON of
`rag ask --json`, so the app doubles as an HTTP service (`gradio_client`).

Offline by construction: fonts ship with gradio, no analytics, no share link, no CDN; the page's
own CSS and script are in ui/static/. Components are in layout.py, behaviour in events.py.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path  # noqa: E402

import gradio as gr  # noqa: E402

from rag.errors import ConfigError  # noqa: E402
from rag.settings import Settings  # noqa: E402
from rag.ingest.uploads import MAX_UPLOAD_BYTES  # noqa: E402

from . import events, launch, openai_api  # noqa: E402
from .layout import EXAMPLES, build_layout  # noqa: E402,F401 - EXAMPLES is part of the page

STATIC = Path(__file__).resolve().parent / "static"
TITLE = "ICML 2024 Abstracts \u00b7 Ask"


def theme() -> gr.themes.Base:
    """A theme whose fonts ship with gradio (no Google Fonts request)."""
    # The SemiBold files bundled with gradio 6.31 are 99-glyph subsets: use only 400 and 700.
    font = gr.themes.LocalFont("IBM Plex Sans", weights=(400, 700))
    mono = gr.themes.LocalFont("IBM Plex Mono", weights=(400, 700))
    return gr.themes.Soft(primary_hue="indigo", secondary_hue="sky", neutral_hue="slate",
                          font=(font, "ui-sans-serif", "system-ui", "sans-serif"),
                          font_mono=(mono, "ui-monospace", "monospace"))


def assets() -> dict[str, str]:
    css = (STATIC / "app.css").read_text(encoding="utf-8")
    js = (STATIC / "app.js").read_text(encoding="utf-8")
    return {"css": css, "head": f"<script>{js}</script>"}


def build_app(settings: Settings | None = None) -> gr.Blocks:
    """The page, bound to `settings` (the server's); each browser session changes its own
    copy of the corpus/retriever/k/generator choices."""
    base = settings or Settings.load()
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        ui = build_layout(base)
        events.wire(demo, ui, base)
    return demo


def launch_app(demo: gr.Blocks, settings: Settings, host: str, port: int,
               logins: list | None = None, block: bool = True, quiet: bool = False):
    """Queue and launch the page, with the OpenAI-compatible API at /v1 (openai_api.py, under
    the same logins); returns (app, local url) once it is up when not `block`."""
    demo.queue(default_concurrency_limit=settings.ui_concurrency, max_size=None,
               api_open=False)
    app, url, _ = demo.launch(
        server_name=host, server_port=port, share=False, auth=logins,
        auth_message="Log in to ask the ICML 2024 abstracts." if logins else None,
        prevent_thread_lock=not block, show_error=False, quiet=quiet, ssr_mode=False,
        footer_links=["api"], max_file_size=MAX_UPLOAD_BYTES, theme=theme(),
        favicon_path=str(STATIC / "favicon.png"), pwa=False, mcp_server=False,
        enable_monitoring=False, app_kwargs={"routes": openai_api.routes(settings, logins)},
        **assets())
    return app, url


def serve(host: str | None = None, port: int | None = None, corpus: str | None = None,
          auth: str | None = None, no_auth: bool = False) -> int:
    """`rag serve`: build the index if missing, then serve the chat UI until interrupted."""
    settings = Settings.load(**({"corpus": corpus} if corpus else {}))
    host = host or settings.ui_host
    port = port or settings.ui_port
    logins = launch.resolve_auth(auth)
    launch.check_exposure(host, logins, no_auth)
    launch.ensure_index(settings)
    launch.warm_up(settings)
    demo = build_app(settings)
    print(f"rag serve: http://{host}:{port} (corpus {settings.corpus}, generator "
          f"{settings.generator}{', login required' if logins else ''}; OpenAI-compatible "
          f"API at http://{host}:{port}/v1)", flush=True)
    try:
        launch_app(demo, settings, host, port, logins, block=True)
    except OSError as exc:  # the port is taken, or the address is not this machine's
        raise ConfigError(f"cannot serve on {host}:{port} ({exc}); choose another with --port "
                          f"or RAG_UI_PORT") from None
    return 0
