"""Text to safe inline HTML: escaping, Markdown emphasis, math kept for KaTeX, citation markers.

All text is HTML-escaped; the only markup produced is our own. LaTeX (`$...$`, `$$...$$`,
`\\(...\\)`) is left intact for the page's KaTeX to typeset, Markdown emphasis (`**b**`, `*i*`,
`_i_`, `` `c` ``) becomes tags, and `[n]` markers become whatever `cite(n)` returns.

Example: inline("We map to $\\mathbb{R}^d$ *fast* [1]", cite=lambda n: f"<a>{n}</a>")
    -> 'We map to $\\mathbb{R}^d$ <em>fast</em> <a>1</a>'
"""

from __future__ import annotations

import html
import re
from typing import Callable, Iterable, Sequence

# Pandoc's rule for inline math: no space just inside the dollars, no digit right after the
# closing one (so "costs $5 and $10" stays text).
_MATH = re.compile(r"\$\$.+?\$\$|\\\(.+?\\\)|\\\[.+?\\\]|\$(?=[^\s$])[^$\n]*?(?<=[^\s\\])\$(?!\d)",
                   re.S)
_CODE = re.compile(r"`([^`\n]+)`")
_STRONG_EM = re.compile(r"\*\*\*(?=\S)(.+?)(?<=\S)\*\*\*")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EM = re.compile(r"(?<![*\\])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?!\*)")
_EM_UNDERSCORE = re.compile(r"(?<![\w\\])_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)")
_CITE = re.compile(r"\[(\d{1,3})\]")
_SLOT = re.compile("\x00(\\d+)\x00")
_LIST_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d{1,2}[.)])\s+")
_NUMBERED = re.compile(r"^\s*\d{1,2}[.)]\s+")

Cite = Callable[[int], str]


def esc(text: str) -> str:
    return html.escape(str(text), quote=True)


def inline(text: str, cite: Cite | None = None) -> str:
    """One run of text as inline HTML: escaped, emphasis rendered, math kept for KaTeX, `[n]`
    replaced by `cite(n)` (left as text when `cite` is None)."""
    slots: list[str] = []

    def keep(fragment: str) -> str:
        slots.append(fragment)
        return f"\x00{len(slots) - 1}\x00"

    out = _MATH.sub(lambda m: keep(esc(m.group(0))), str(text))
    out = _CODE.sub(lambda m: keep(f"<code>{esc(m.group(1))}</code>"), out)
    out = esc(out).replace("$", "<span>$</span>")  # a lone dollar must not open math
    out = _STRONG_EM.sub(r"<strong><em>\1</em></strong>", out)
    out = _STRONG.sub(r"<strong>\1</strong>", out)
    out = _EM.sub(r"<em>\1</em>", out)
    out = _EM_UNDERSCORE.sub(r"<em>\1</em>", out)
    if cite is not None:
        out = _CITE.sub(lambda m: cite(int(m.group(1))), out)
    return _SLOT.sub(lambda m: slots[int(m.group(1))], out)


def blocks(text: str, cite: Cite | None = None, mark: Iterable[str] = ()) -> str:
    """Multi-line text as paragraphs and lists; sentences in `mark` get a warning underline."""
    marked = [m for m in mark if m.strip()]
    out: list[str] = []
    items: list[str] = []
    para: list[str] = []
    numbered = [True]

    def flush() -> None:
        if para:
            out.append(f"<p>{'<br>'.join(_marked(x, marked, cite) for x in para)}</p>")
            para.clear()
        if items:
            tag = "ol" if numbered[0] else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{_marked(x, marked, cite)}</li>"
                                             for x in items) + f"</{tag}>")
            items.clear()
        numbered[0] = True

    for line in str(text).split("\n"):
        if not line.strip():
            flush()
        elif _LIST_ITEM.match(line):
            if para:
                flush()
            numbered[0] = numbered[0] and bool(_NUMBERED.match(line))
            items.append(_LIST_ITEM.sub("", line, count=1))
        else:
            if items:
                flush()
            para.append(line.strip())
    flush()
    return "".join(out)


def _marked(line: str, marked: Sequence[str], cite: Cite | None) -> str:
    for sentence in marked:
        core = sentence.strip().lstrip("-*\u2022 ").strip()
        at = line.find(core) if core else -1
        if at >= 0:
            before, after = line[:at], line[at + len(core):]
            return (_marked(before, marked, cite) + '<span class="rag-unsupported" title="Not '
                    'supported by the abstract it cites">' + inline(core, cite) + "</span>"
                    + _marked(after, marked, cite))
    return inline(line, cite)


def highlighted(text: str, spans: Iterable[tuple[int, int]], offset: int = 0) -> str:
    """`text` with the character spans (relative to `offset`) wrapped in <mark>."""
    cuts = sorted((max(s - offset, 0), min(e - offset, len(text))) for s, e in spans)
    out, pos = [], 0
    for s, e in cuts:
        if e <= pos or s >= len(text):
            continue
        s = max(s, pos)
        out.append(inline(text[pos:s]))
        out.append(f'<mark class="rag-hl">{inline(text[s:e])}</mark>')
        pos = e
    out.append(inline(text[pos:]))
    return "".join(out)
