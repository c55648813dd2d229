"""Token counting with tiktoken, offline and deterministic.

tiktoken downloads its BPE files on first use, which fails without internet. llama-index-core
ships the cl100k_base file in `llama_index/core/_static/tiktoken_cache`; we point tiktoken's
cache there before it is first imported, so the same file is used on every machine.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from ..errors import RagError

ENCODING = "cl100k_base"


def _static_cache_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("llama_index.core")
    if spec is None or not spec.submodule_search_locations:
        raise RagError("llama-index-core is not installed; run `make install`")
    return Path(list(spec.submodule_search_locations)[0]) / "_static" / "tiktoken_cache"


@functools.lru_cache(maxsize=1)
def encoding():
    """The tiktoken encoding, loaded from the bundled cache (never from the network)."""
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):
        os.environ["TIKTOKEN_CACHE_DIR"] = str(_static_cache_dir())
    import tiktoken

    try:
        return tiktoken.get_encoding(ENCODING)
    except Exception as exc:  # tiktoken raises plain exceptions when the file is missing
        raise RagError(f"cannot load the {ENCODING} tokenizer offline from "
                       f"{os.environ['TIKTOKEN_CACHE_DIR']}: {exc}") from None


def count(text: str) -> int:
    """Number of tokens in `text` (special-token strings count as ordinary text)."""
    return len(encoding().encode(text, disallowed_special=()))


def truncate(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` with at most `max_tokens` tokens."""
    enc = encoding()
    toks = enc.encode(text, disallowed_special=())
    if len(toks) <= max_tokens:
        return text
    cut = enc.decode(toks[:max_tokens])
    while count(cut) > max_tokens:  # a re-encoded prefix can merge differently
        cut = cut[:-1]
    return cut
