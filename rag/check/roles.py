"""The role check: a number in an answer sentence counts only where a cited evidence sentence
states it in the same role, not merely somewhere (issue 17, item 6); names: `names.py`.

A number's role is what stands around it (LaTeX read as text: "$2.1\\times$" is "2.1×"):
  - its unit: "%" (percent), "x" (x, ×, times, -fold, twice); "B", "M", "K" scale the value
    ("7B" is "7 billion"); a range ("2–5", "2-5", "1.75-2.39×") states both ends;
  - its role words: the stemmed content words (`text.tokenize`) within `WINDOW` words before it
    and after it up to a comma, without generic words ("achieves", "up", "our") and, in the
    claim, without names ("FastMap reaches 2.0" and "FastMap achieves 2x" share only the
    subject) but the one right before it; evidence windows are wider (`EVIDENCE_WINDOW`) and
    keep names, and the words before a sentence's first number are role words of all its
    numbers ("Averaging the endpoint error ..., it beats the explicit baselines by 11-27%, the
    GAN baseline by 47%");
  - its lead: the nouns right after it ("8 GPUs", "7% of its MACs"; "1.4x and 1.6x speedups":
    both), and its measure: a `MEASURES` noun right before it ("a perplexity of 2").
A number of the claim is in role when one evidence sentence states the same value and (a bare
number with none of these is in role wherever its value is)
  1. the units agree: "%" only with "%"; "x" with "x", or with a bare number that counts no noun;
  2. a number right after a name is in role next to the same name ("Atari 100K", "Llama 2");
  3. the claim's measure is near the evidence's number too;
  4. both leads, when there are two, share a noun, or the claim's noun is near the evidence's
     number (and is not another number's noun), or the evidence's noun is before the claim's
     number ("preferred ... 75% of the time" / "a 75% preference"), not merely after it ("2
     participants in the online experiments" is not "two online experiments");
  5. a `MEASURES` noun of the claim's lead is in the sentence when the evidence's number has no
     lead ("99% of the SFT delta parameters" for "... delta parameter ... 99% of them");
  6. they share a role word or lead noun, unless the claim's number has neither;
and never where the evidence counts the claim's lead nouns with another number and nowhere with
this one ("16 production models" / "a testbed of 369 production models, for k in {2, ..., 16}").
List markers ("2. ...", "(1)") are no numbers; number words ("twice") count in the evidence.

Example: "PolySketchFormer reaches a perplexity of 2.0." citing "our model achieves 2x speedup
in training" -> ['2'] (its measure, perplexity, is nowhere near the 2x).
Example: "HyperDistill was trained on 6–14 hours of robot data." citing "reduces model size by
6-14 times" -> ['6–14'] ("hours" is counted, "times" a ratio).
Example: "Its models are 6–14x smaller." citing the same -> [] ("model" shared).
Example: "The heads lower perplexity by 6.7%." citing "reducing the perplexity of 340M-parameter
Transformers by up to 1.14 points (6.7%)" -> [].
Example: "APT reaches 40% accuracy." citing "with 40% parameters left" -> ['40%'].
Example: "SIFT trains the model on 12 GPUs." citing "a 110M parameter 12 layer BERT" -> ['12'].
Example: "About 100x." citing "up to 100 times faster" -> [].
Example: "The test set size is 4000." citing "its default training set size only 4000" ->
['4000'] (`CONTRASTS`: train / test, input / output, encoder / decoder, pretraining /
finetuning).
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple, Sequence

from ..lexicon import (CONTRASTS, COORDINATORS, DIRECTION_WORDS, LEAD_SKIP, MEASURE_SKIP,
                       MEASURES, ROLE_GENERIC, SAME_QUANTITY)
from ..ingest.chunking import split_sentences
from .contrast import set_against
from .names import clean, name_stems, names_unbacked
from .quantities import sentence_tokens

WINDOW = 3  # content words on each side of a number in the claim
EVIDENCE_WINDOW = 6  # and in the evidence ("lifts it to 45.5%" against "... to 45.5%")

_AND = frozenset(("and", "or"))


def _contrasted(window: set[str], evidence: set[str], sentence: set[str]) -> bool:
    """The claim's role words hold one side of a `CONTRASTS` pair, the evidence's role words
    another, and the evidence sentence nowhere the claim's side."""
    return any(window & group and evidence & group and not window & group & sentence
               for group in CONTRASTS)

def _lead(tokens: list[tuple], i: int) -> list[int]:
    """Positions of up to 3 nouns right after the number at `i`: "8 GPUs", "7% of its MACs",
    "8 LLM benchmarking tasks", "40,000 software and model repositories"."""
    lead: list[int] = []
    for j in range(i + 1, len(tokens)):
        word = tokens[j][2].lower() if tokens[j][0] == "word" else ""
        if word in (_AND if lead else LEAD_SKIP):
            continue
        if len(lead) == 3 or not word or not tokens[j][1] or tokens[j][1] in ROLE_GENERIC | DIRECTION_WORDS:
            break
        lead.append(j)
    return lead


class Occurrence(NamedTuple):
    """A number in a sentence with what stands around it (`_occurrences`)."""
    values: set[str]
    unit: str
    window: set[str]  # role words; own: those not past another number nor in its lead
    own: set[str]
    lead: set[str]
    sentence: set[str]  # all the sentence's stems; head: those before its first number
    head: set[str]
    name: str | None  # the name right before it
    measure: str | None


def _measure(tokens: list[tuple], i: int) -> str | None:
    """The measure a number is given as, right before it: "a perplexity of 2", "accuracy by 5%"."""
    for j in range(i - 1, -1, -1):
        if tokens[j][0] == "word" and tokens[j][2].lower() in MEASURE_SKIP:
            continue
        stem = tokens[j][1] if tokens[j][0] == "word" else None
        return stem if stem in MEASURES else None
    return None


def _occurrences(tokens: list[tuple], names: set[str], wide: int = WINDOW):
    """Each number of the sentence (module doc). Names are role words in the evidence (`wide` >
    `WINDOW`), and in the claim only right before a number ("Llama 2", "Bourgain '85")."""
    stem = {i: SAME_QUANTITY.get(t[1], t[1]) for i, t in enumerate(tokens)
            if t[0] == "word" and t[1] and t[1] not in ROLE_GENERIC}
    nums = [i for i, t in enumerate(tokens) if t[0] == "num"]
    leads = {i: _lead(tokens, i) for i in nums}
    for i, n in reversed(list(zip(nums, nums[1:]))):  # "1.4x and 1.6x speedups": both speedups
        between = tokens[i + 1:n]
        if not leads[i] and len(between) <= 3 and all(
                t[0] == "word" and t[2].lower() in COORDINATORS for t in between):
            leads[i] = leads[n]
    stops = [i for i, t in enumerate(tokens) if t[0] == "punct"] + [len(tokens)]
    for k, i in enumerate(nums):
        lo, hi = nums[k - 1] if k else -1, nums[k + 1] if k + 1 < len(nums) else len(tokens)
        end = min(j for j in stops if j > i)
        words = [j for j in stem if wide > WINDOW or stem[j] not in names]
        near = [j for j in words if j < i][-wide:] + [j for j in words if i < j < end][:wide]
        prev = next((j for j in range(i - 1, -1, -1) if tokens[j][0] == "word"), None)
        if prev in stem and stem[prev] in names:
            near.append(prev)
        others = {j for n, lead in leads.items() if n != i for j in lead}
        own = {stem[j] for j in near if lo < j < hi and j not in others}
        yield Occurrence(tokens[i][1], tokens[i][2], {stem[j] for j in near}, own,
                         {stem[j] for j in leads[i] if j in stem}, set(stem.values()),
                         {s for j, s in stem.items() if j < nums[0]},
                         stem[prev] if prev in stem and stem[prev] in names else None,
                         _measure(tokens, i))


def _in_role(claim: Occurrence, evidence: list[Occurrence]) -> bool:
    """Whether one evidence occurrence states the claim's number in its role (module doc)."""
    values, unit, window, own, lead, _, head, name, measure = claim
    if lead and not name and any(lead <= o.lead and not values & o.values for o in evidence) \
            and not any(lead & o.lead and values & o.values for o in evidence):
        return False  # "16 production models" / "369 production models, for k = 16 stages"
    for e_values, e_unit, e_window, e_own, e_lead, e_sentence, e_head, e_name, _ in evidence:
        if not values & e_values:
            continue
        if not (unit or window or lead or measure):
            return True  # a bare "80" states no role to be wrong about
        if unit != e_unit and ("%" in (unit, e_unit) or (unit and e_unit)
                               or (e_lead if unit else lead)):  # "2-5 hours" / "2-5 times"
            continue
        if name and name == e_name:  # part of a name: "Atari 100K", "Llama 2"
            return True
        if measure and measure not in e_window:
            continue  # "a perplexity of 2 in training" / "a 2x speedup in training"
        if _contrasted(window | lead, e_window | e_lead, e_sentence):
            continue  # "the test set size is 4000" / "its training set size only 4000"
        if lead and e_lead and not lead & e_lead and not (lead & e_own or e_lead & head):
            continue  # "8 GPUs" / "8-layer MLP"
        if lead & MEASURES and not e_lead:  # "16 GPUs" / "(16, 32)-bit"; "99% of them"
            if lead & MEASURES & e_sentence:
                return True
            continue
        if lead & e_lead or not window or window & (e_window | e_head):
            return True
    return False


# List markers are no facts: "2. Efficient planning", "(1) it ..."
_ENUMERATOR = re.compile(r"^\s*\d{1,2}[.)](?=\s)|\(\d\)(?=\s)")


@functools.lru_cache(maxsize=256)
def _evidence(text: str) -> tuple[frozenset[str], tuple[Occurrence, ...]]:
    """The name stems and the numbers of an evidence text, once per text."""
    cleaned = clean(text)
    sentences = [_ENUMERATOR.sub(" ", cleaned[s:e]) for s, e in split_sentences(cleaned)]
    names = frozenset(name_stems(sentences))
    return names, tuple(o for sentence in sentences
                        for o in _occurrences(sentence_tokens(sentence), names, EVIDENCE_WINDOW))


def roles_unbacked(claim: str, evidence: list[str], records: Sequence[str] = (),
                   asked: str = "") -> list[str]:
    """The numbers and names of `claim` that no evidence sentence states in the same role
    (module doc); [] when all are backed. Numbers the evidence lacks altogether are listed too,
    and names the evidence only sets against (`contrast.py`; never those the question `asked`
    names). `records` (the cited papers' author lists) may back names, not numbers."""
    claim = _ENUMERATOR.sub(" ", clean(claim))
    seen = [_evidence(text) for text in evidence]
    names = name_stems([claim]).union(*(names for names, _ in seen))
    occurrences = [o for _, found in seen for o in found]
    wrong = []
    for occurrence in _occurrences(sentence_tokens(claim, False), names):
        if not _in_role(occurrence, occurrences):
            wrong.append("–".join(sorted(occurrence.values, key=float)) + occurrence.unit)
    return wrong + names_unbacked(claim, [*evidence, *records]) + set_against(claim, evidence,
                                                                              asked)
