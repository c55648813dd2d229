"""Names in an answer sentence: each must be one the cited evidence states (issue 17, item 6).

A name is a word written as one: mixed case ("ImageNet", "LLaMA"), capitals ("DARE", "SFT"),
letters with digits ("GPT-4", "WikiText-103", "ResNet-18"), or a capitalised word inside the
sentence ("Atari", "Heisenberg"; the sentence's first word and titles do not count). Common
acronyms (`GENERIC_ACRONYMS`: "LLMs", "GPU", "SOTA", "SGD") are words, not names. A name is backed
when the evidence writes it too, case, hyphens and a plural "s" aside; one without digits may
also be written in parts ("DeiT-Tiny" as "DeiT Tiny"; "LLM-based" needs no "based"); one with
digits must match whole. An acronym may also stand for words of the evidence ("GLM" for
"generalized linear model").

Example: "It beats GPT-4 on ImageNet [1]." citing an abstract on GPT-3 and ImageNet -> ['GPT-4'].
Example: "It is tested on Llama-7B [1]." citing "... for Llama 7B and Falcon 7B" -> [].
Example: "FUSH^2 has 16 regions [1]." citing "FUSH$^2$ ..." -> [] (LaTeX is read as text).
"""

from __future__ import annotations

import functools
import re

from ..lexicon import GENERIC_ACRONYMS, GREEK_LETTERS
from ..text import tokenize

_CHUNK = r"[A-Za-z0-9][\w\-'’.]*"
_NON_ALNUM = re.compile(r"[^a-z0-9]")


def clean(text: str) -> str:
    """LaTeX and markdown out: "$2.1\\times$" -> "2.1×", "9\\%" -> "9%", "$L_1$" -> "L1",
    "$d^2$" -> "d2" (an exponent is no number), "$\\frac{1}{T}$" -> "1/T", "$\\Delta$-IRIS" ->
    "Delta-IRIS", "CTCNet's" -> "CTCNet"."""
    text = re.sub(r"\s?\\times\b", "×", text).replace("\\%", "%")
    text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", text)
    text = re.sub(r"\\infty\b", "inf", text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: m.group(1) if m.group(1).lower() in GREEK_LETTERS else " ",
                  text)
    text = re.sub(r"(\w)['’]s\b", r"\1", text)
    text = re.sub(r"(?<=[A-Za-z])\$?\^\{?(\d+)\}?", r"\1", text)  # "d^2" -> "d2": no number
    return re.sub(r"[${}\\_*]", "", text).replace("^", " ")


def is_name(word: str, initial: bool) -> bool:
    """Whether `word` is written as a name; `initial`: it starts its sentence or clause."""
    letters = re.sub(r"[^A-Za-z]", "", word)
    if len(letters) < 2 and not re.search(r"\d", word) or not re.search(r"[A-Z]", word):
        return False
    if re.sub(r"[^a-z0-9]", "", word.lower()).rstrip("s") in GENERIC_ACRONYMS:
        return False
    inner_caps = re.search(r"[A-Z]", word[1:]) is not None
    return inner_caps or bool(re.search(r"\d", word)) or not initial


def _title_case(sentence: str) -> bool:
    words = re.findall(r"[A-Za-z]{4,}", sentence)
    return len(words) >= 2 and sum(w[0].isupper() for w in words) > 0.6 * len(words)


def name_stems(sentences: list[str]) -> set[str]:
    """Stems of the words written as names in these sentences (titles skipped)."""
    stems = set()
    for sentence in sentences:
        if _title_case(sentence):
            continue
        for i, m in enumerate(re.finditer(r"[A-Za-z][A-Za-z0-9]*", sentence)):
            if is_name(m.group(0), i == 0 or sentence[:m.start()].rstrip()[-1:] in ":;(-\"'"):
                stems.update(tokenize(m.group(0)))
    return stems


def name_form(name: str) -> str:
    """How a name is compared: lowercase, letters and digits only, no plural "s"."""
    return _NON_ALNUM.sub("", name.lower()).rstrip("s")


@functools.lru_cache(maxsize=256)
def name_forms(text: str) -> frozenset[str]:
    """Normalised spellings a name may take in the text: its words, their alphanumeric runs and
    each two runs in a row ("GPT 4" and "GPT-4" for "GPT4")."""
    text = clean(text)
    runs = re.findall(r"[A-Za-z0-9]+", text)
    forms = {name_form(c) for c in re.findall(_CHUNK, text)} | {name_form(r) for r in runs}
    return frozenset(forms | {name_form(a + b) for a, b in zip(runs, runs[1:])})


@functools.lru_cache(maxsize=256)
def _initials(text: str) -> frozenset[str]:
    """The acronyms of 2 to 5 words in a row: "generalized linear model" -> "glm"."""
    words = [w[0].lower() for w in re.findall(r"[A-Za-z]+", clean(text))]
    return frozenset("".join(words[i:i + n]) for n in range(2, 6)
                     for i in range(len(words) - n + 1))


def claim_names(claim: str) -> list[str]:
    """The names a sentence states: "Spider beats GPT-4 on ImageNet" -> ['GPT-4', 'ImageNet']."""
    claim = clean(claim)
    names = []
    for m in re.finditer(_CHUNK, claim):
        word = re.sub(r"['’]s$", "", m.group(0).rstrip(".'’-"))
        before = claim[:m.start()].rstrip()
        initial = not before or before[-1] in ".:;([\"'!?-" or before.endswith("]")
        if is_name(word, initial) and re.match(r"[A-Za-z]", word):
            names.append(word)
    return names


def names_unbacked(claim: str, evidence: list[str]) -> list[str]:
    """The names of `claim` that no evidence text writes (module doc)."""
    names = claim_names(claim)
    forms = frozenset().union(*(name_forms(t) for t in evidence)) if names else frozenset()
    wrong = []
    for name in names:
        parts = [p for p in re.findall(r"[A-Za-z0-9]+", name) if is_name(p, False)]
        if name_form(name) in forms or not re.search(r"\d", name) and all(
                name_form(p) in forms for p in parts):
            continue
        core = name[:-1] if name.endswith("s") else name  # "GLMs"
        if core.isalpha() and core.isupper() and any(
                core.lower() in _initials(t) for t in evidence):
            continue  # an acronym of the evidence's words
        wrong.append(name)
    return wrong
