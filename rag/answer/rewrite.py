"""Follow-up questions: detected by rule, rewritten into a standalone query for retrieval.

A follow-up about one paper keeps its referent. The referent is the paper the conversation was
last about (`referent`): the one the previous question names by title, else the one the
previous answer names (by whole title or short name, and only when it names exactly one),
walking back past earlier follow-ups that name none. The follow-up's referring words become the
paper's name (`resolved`), and the paper is the only one searched and answered from
(`Route.referent`); when its abstract does not state what is asked, the answer says so about
that paper, never quoting another. Example: after "What is the Genie paper about?",
"How many parameters does it have?" is searched as "How many parameters does Genie have?"
(answered from Genie: "At 11B parameters, ..."), and "What GPU was it trained on?" gets "The
abstract of *Genie: Generative Interactive Environments* [1] does not state the GPU."

With no referent, the whole previous question is borrowed: "What data did they use?" after
"Which paper studies X?" is retrieved as "Which paper studies X? What data did they use?", or
as the LLM's own rewrite when an LLM generator is configured (`standalone_query`).

A question is a follow-up only when it leans on the conversation (`leans_on_conversation`):
a pronoun standing for something said before ("they", "it", "their"), a demonstrative without
its noun or with a generic one ("this", "these methods", "that paper"), a definite reference
("the paper", "the authors", "the second one"), or an ellipsis ("and the second one?", "what
about images?", "why?"). A relative "that" ("methods that reduce memory"), a short but complete
question ("Which papers use LoRA?"), an expletive "it" ("is it possible to ...") or a
possessive whose antecedent is the question's own subject ("What do diffusion models learn
about their training data?", `own_possessive`) stand alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from ..errors import GeneratorError
from ..lexicon import NO_ANTECEDENT, NOT_A_VERB
from ..retrieve.catalog import Catalog
from ..retrieve.titles import TitleIndex
from ..text import clean_question, content_terms
from . import Generator, History

_GENERIC = (r"(?:papers?|works?|methods?|approach(?:es)?|models?|ones?|results?|datasets?|"
            r"techniques?|ideas?|algorithms?|frameworks?|stud(?:y|ies)|authors?|findings?|"
            r"benchmarks?|systems?|tasks?|experiments?|claims?)")
_IT = (r"(?<!\bis )\bit\b(?!\s+(?:is|was|be)\s+(?:possible|hard|easy|true|feasible|known|"
       r"necessary|difficult|common|useful)\b)")
_POSSESSIVE = re.compile(r"\b(?:its|their)\b", re.I)
_LEANS = [re.compile(p, re.I) for p in (
    # personal pronouns (an expletive "it is possible/hard/..." excepted); possessives below
    r"\b(?:they|them|theirs|he|she|his|him)\b", _IT,
    # demonstratives with no noun, or with a generic one
    rf"\b(?:this|these|those|such)\s+{_GENERIC}\b",
    r"\bthat\s+(?:paper|method|approach|model|one|dataset|technique|idea|algorithm|framework|"
    r"benchmark|system)\b",
    r"\b(?:this|these|those)\s*(?:[?.!,]|$)",
    r"\b(?:does|do|did|is|was|would|can|could|will)\s+that\b",
    r"\b(?:this|these|those)\s+(?:is|are|was|were|do|does|did|can|could|would|have|has|mean|"
    r"means|work|works|use|uses|compare|differ|scale|handle)\b",
    r"(?:^|\b(?:about|of|for|with|does|do|did|is|was|explain|like)\s+)that\s*[?.!]*$",
    r"^that\b",
    # definite references to something said before
    rf"\bthe\s+(?:(?:first|second|third|fourth|fifth|last|other|former|latter|same|above|"
    rf"previous|mentioned)\s+)?(?:paper|papers|authors|method|approach|work|study|one|ones)\b"
    rf"(?!\s+(?:of|on|about|by|that|which|called|named|titled)\b)",
    r"\b(?:former|latter|aforementioned|previous(?:ly)?|mentioned|above)\b",
    # ellipsis
    r"^(?:and|but|also|so|or|then)\b",
    r"^(?:what|how)\s+about\b",
    r"^(?:why|how|how so|really|what else|which one|examples?|details?|more|any others?)\s*"
    r"[?.!]*$",
    r"\b(?:tell me more|more details|elaborate|say more|explain further|go on)\b")]


def leans_on_conversation(question: str) -> bool:
    """Does the question need the conversation to be understood (module doc)?

    Example: "What data did they use?" -> True; "Which papers propose methods that reduce
    memory?" -> False."""
    text = clean_question(question)
    if not content_terms(text) and re.search(r"[^\W\d_]", text):
        return True  # only function words: "why?", "and then?", "which one?"
    if any(p.search(text) for p in _LEANS):
        return True
    return any(not own_possessive(text, m) for m in _POSSESSIVE.finditer(text))


_AUX = r"(?:do|does|did|can|could|would|will|should|might|may|must|is|are|was|were|has|have|had)"
_BE = re.compile(r"^(?:is|are|was|were|has|have|had)$", re.I)
_CLAUSE = [re.compile(p, re.I) for p in (
    # "What do diffusion models learn about ...", "Can LLMs evaluate ...", "How are X trained"
    rf"^(?:(?:what|which|why|when|where|who|how(?:\s+(?:well|much|often|far))?)\s+)?"
    rf"(?P<aux>{_AUX})\s+(?P<clause>.*)$",
    # "... show how LLM agents update ..."
    rf"\b(?:how|why|whether)\s+(?!(?:well|much|many|often|far|{_AUX})\b)(?P<clause>.*)$")]


def own_possessive(question: str, m: re.Match) -> bool:
    """Is the possessive `m` ("its", "their") the question's own, its antecedent the subject of
    the clause it is in, agreeing in number? Example: "How do LLM agents update their
    beliefs?" -> True ("agents"); "What is their main result?" -> False (no subject);
    "What is the main idea of its paper?" -> False ("idea of" is no subject and verb)."""
    for pattern in _CLAUSE:
        c = pattern.search(question[: m.start()])
        if not c:
            continue
        words = re.findall(r"[\w\-]+", c.group("clause").lower())
        while words and words[0] in ("the", "a", "an"):
            words.pop(0)
        run = []
        for word in words:  # the subject and its verb: the words before a preposition
            if word in NOT_A_VERB:
                break
            run.append(word)
        if len(run) < 2 or any(w in NO_ANTECEDENT for w in run):
            continue
        head, verb = run[-2], run[-1]
        aux = c.groupdict().get("aux") or ""
        if _BE.match(aux) and not re.search(r"(?:ed|en|ing)$", verb):
            continue  # "is the main idea ..." has no verb after its subject
        plural = head.endswith("s") and not head.endswith(("ss", "us", "is"))
        if plural == (m.group(0).lower() == "their"):
            return True
    return False


def is_follow_up(question: str, history: History) -> bool:
    """Does `question` lean on the conversation ('what data did they use?', 'and the second?')."""
    return bool(history) and leans_on_conversation(question)


@dataclass(frozen=True)
class FollowUp:
    """A follow-up resolved against the paper the conversation is about (module doc)."""

    paper_id: str  # the referent
    name: str  # what the follow-up's referring words became: the short name, or the title
    query: str  # the follow-up, standalone


def referent(history: History, titles: TitleIndex) -> str | None:
    """The paper the conversation was last about, or None: the one paper the previous question
    names by title, else the one its answer names by whole title or short name; a turn that
    names none but was itself a follow-up passes the question back to the turn before it.
    Two papers named (a comparison, a list) leave "it" ambiguous: None."""
    for question, answer in reversed(history):
        for text, loose in ((question, True), (answer, False)):
            found = titles.match(text, loose) if text.strip() else []
            if found:
                return found[0] if len(found) == 1 else None
        if not leans_on_conversation(question):
            return None
    return None


_PAPER_NOUN = (r"(?:paper|work|study|article|abstract|method|approach|model|framework|"
               r"technique|algorithm|system)")
_REFERRING = [(re.compile(p, re.I), form) for p, form in (
    (rf"\b(?:this|that|the)\s+{_PAPER_NOUN}['’]s\b", "{}'s"),
    (rf"\b(?:this|that|the)\s+{_PAPER_NOUN}\b(?!\s+(?:of|on|about|by|that|which|called|named|"
     rf"titled)\b)", "{}"),
    (r"\b(?:the|these|those)\s+authors\b", "the authors of {}"),
    (r"\b(?:they|them)\b", "{}"),
    (_IT, "{}"))]


def resolved(question: str, name: str) -> str:
    """`question` with the words referring to the paper replaced by its `name`; the name added
    in brackets when no word refers to it ("Why?"). Example: ("How many parameters does it
    have?", "Genie") -> "How many parameters does Genie have?"."""
    text = clean_question(question)
    out = _POSSESSIVE.sub(lambda m: m.group(0) if own_possessive(text, m) else f"{name}'s", text)
    for pattern, form in _REFERRING:
        out = pattern.sub(lambda m: form.format(name), out)
    return out if out != text else f"{text} ({name})"


def resolve(question: str, history: History, cat: Catalog) -> FollowUp | None:
    """The follow-up `question` resolved against its referent (module doc), or None when it
    is no follow-up or the conversation names no one paper."""
    if not is_follow_up(question, history):
        return None
    paper_id = referent(history, cat.titles)
    if paper_id is None:
        return None
    name = cat.titles.name(paper_id, cat.titles_of.get(paper_id, ""))
    return FollowUp(paper_id, name, resolved(question, name))


def rewrite_query(question: str, history: History) -> str:
    """A standalone query for a follow-up with no referent, by rule: borrow the previous
    question's terms when this one refers back to it ('what data did they use?') or is too
    short to stand alone."""
    if not is_follow_up(question, history):
        return question
    previous = clean_question(str(history[-1][0]))
    return f"{previous} {question}"


def standalone_query(question: str, history: History,
                     llm: Callable[[], Generator] | None = None) -> str:
    """The query retrieval runs on: a follow-up rewritten by the LLM generator `llm()` gives
    (None: no LLM configured), else by rule.

    The LLM is asked only when the rule sees a follow-up, so standalone questions cost no extra
    call; when it fails or answers with something that is not a query, the rule decides (a
    broken backend is reported once, by the generation step's fallback notice)."""
    if not is_follow_up(question, history) or llm is None:
        return rewrite_query(question, history)
    try:
        query = llm().rewrite(question, history)
    except GeneratorError:
        query = None
    return clean_question(query) if query else rewrite_query(question, history)


def normalise_history(history: Sequence | None) -> list[tuple[str, str]]:
    """(question, answer) pairs from pairs or from chat messages ({"role", "content"})."""
    out = []
    for turn in history or ():
        if isinstance(turn, dict):  # {"role": ..., "content": ...} messages
            if turn.get("role") == "user":
                out.append((str(turn.get("content", "")), ""))
            elif out and turn.get("role") == "assistant":
                out[-1] = (out[-1][0], str(turn.get("content", "")))
        else:
            q, a = turn
            out.append((str(q), str(a)))
    return out
