"""Numbers and words of a sentence, for the role check (`roles.py`).

A number token carries its values and unit: "2–5 times" -> ({"2", "5"}, "x"); "7B" ->
({"7000000000"}, ""); "34-72%" -> ({"34", "72"}, "%"); "a factor of 2" -> ({"2"}, "x"); "12ms" ->
({"12"}, "ms"). A number glued to a word by a hyphen ("GPT-4", "ResNet-18") is part of a name,
not a number. Values are normalised as `support.numbers` does ("1,000" -> "1000", "2.50" -> "2.5").
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal, InvalidOperation

from ..lexicon import MULTIPLIER_WORDS, NUMBER_SCALES, NUMBER_WORDS

from ..text import tokenize

_NUM = r"\d+(?:[.,]\d+)*"
_UNIT = (r"(?:\s?(?:%|×|percent(?:age points?)?\b|times\b|-?fold\b)|[\s-]?(?:billion|million"
         r"|thousand|trillion)\b|[a-zA-Z]+\b)")
_DASH = r"(?:\s?[–—‒−]\s?|-)"
_TOKEN = re.compile(
    rf"(?P<num>(?<![\w.])(?<![A-Za-z]-){_NUM})(?P<u1>{_UNIT})?"
    rf"(?:{_DASH}(?P<num2>{_NUM})(?P<u2>{_UNIT})?)?"
    rf"|(?P<wnum>\b(?:{'|'.join(NUMBER_WORDS)})\b)(?P<wu>\s(?:times|fold)\b|-fold\b)?"
    r"|(?P<word>[A-Za-z][A-Za-z0-9]*)|(?P<punct>[,;:()\[\]])", re.I)
_TIMES = ("x", "×", "times", "fold", "-fold")


def _unit(raw: str | None, value: str) -> tuple[str, str]:
    """(value, unit) with a scale folded into the value: ("7", "B") -> ("7000000000", "")."""
    unit = (raw or "").strip(" -").lower()
    if unit in NUMBER_SCALES:
        try:
            scaled = Decimal(value) * (Decimal(10) ** NUMBER_SCALES[unit])
            return format(scaled.normalize(), "f"), ""
        except InvalidOperation:
            return value, ""
    if unit in _TIMES or unit.endswith("fold"):
        return value, "x"
    if unit.startswith("percent") or unit == "%":
        return value, "%"
    return value, unit


def _norm(raw: str) -> str:
    """As `support.numbers` normalises: "1,000" -> "1000", "2.50" -> "2.5"."""
    value = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", raw) else raw
    return value.rstrip("0").rstrip(".") if "." in value else value


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str | None:
    stems = tokenize(word)
    return stems[0] if stems else None


def sentence_tokens(sentence: str, number_words: bool = True) -> list[tuple]:
    """("num", {values}, unit) and ("word", stem or None, original word), in order; number
    words ("two", "twice") count as numbers only with `number_words` (in evidence)."""
    out = []
    for m in _TOKEN.finditer(sentence):
        if m.group("wnum") and not number_words:
            continue
        if m.group("punct"):
            out.append(("punct", None, m.group("punct")))
        elif m.group("word"):
            out.append(("word", _stem(m.group("word")), m.group("word")))
        elif m.group("wnum"):
            value = NUMBER_WORDS[m.group("wnum").lower()]
            times = m.group("wu") or m.group("wnum").lower() in MULTIPLIER_WORDS
            out.append(("num", {value}, "x" if times else ""))
        else:
            u1, u2 = m.group("u1"), m.group("u2")
            v1, unit = _unit(u1 or u2, _norm(m.group("num")))
            values = {v1}
            if m.group("num2"):
                v2, unit2 = _unit(u2 or u1, _norm(m.group("num2")))
                values.add(v2)
                unit = unit or unit2
            if not unit and [t[2].lower() for t in out[-2:]] == ["factor", "of"]:
                unit = "x"  # "a factor of 2"
            out.append(("num", values, unit))
    return out
