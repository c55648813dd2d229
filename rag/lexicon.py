"""The word lists every stage reads, each once: which words ask rather than name, which are
numbers, which say nothing about what a number measures, which set others' work apart, which
are never a person's name. A list lives here when a rule in some stage needs it; the rule
stays in its module and names the list.

Lists of stems (`tokenize`, `content_terms`) are stored as stems, so a rule compares them
with the stems of a text; the others are lowercase words. The question's own patterns (which
words open a list request, which verbs ask for a person's papers) stay regular expressions in
`retrieve/route.py`: they are grammar, not vocabulary.

Example: "twice" in NUMBER_WORDS -> "2"; "papers" in REQUEST_WORDS ("paper" stemmed) -> True.
"""

from __future__ import annotations

from .text import content_terms, tokenize

# -- numbers ---------------------------------------------------------------------------------

# Number words and the digits they stand for ("twice" and "double": 2 times; "half": 1/2).
NUMBER_WORDS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "twice": "2", "double": "2", "half": "2", "triple": "3",
    "thrice": "3",
}
MULTIPLIER_WORDS = frozenset("twice double half triple thrice".split())  # "2 times", not "2"
# Scale words and suffixes, as powers of ten: "7B" and "7 billion" -> 9.
NUMBER_SCALES = {"k": 3, "thousand": 3, "m": 6, "million": 6, "b": 9, "billion": 9, "t": 12,
          "trillion": 12}

# -- what a question asks ------------------------------------------------------------------

# Words that describe the request or the conference, not the topic: they identify nothing.
REQUEST_WORDS = content_terms(
    "paper papers icml 2024 icml2024 conference work works study studies article articles "
    "abstract abstracts author authors publish published present presented propose proposed "
    "research show find list best recent interesting main new novel approach method methods "
    "tell explain describe summarize summarise please about idea main key contribution "
    "finding findings trick goal problem address argue argument overview gist point")

# Question words that say how it asks, not what about.
ASKING_WORDS = frozenset(tokenize(
    "paper papers work study studies abstract abstracts author authors propose proposed "
    "proposes introduce introduced method methods approach approaches model models use used "
    "uses using main key new novel name named called show shows shown result results"))

# -- what a number measures (check/roles.py) -------------------------------------------------

# Stems that say nothing about what a number measures.
ROLE_GENERIC = frozenset(tokenize(
    "we our us you it its which while also can could may has have had from between across all "
    "each new method approach propose use well even still same both other only just least most "
    "about around approximately roughly nearly almost over under than up achieve reach obtain "
    "attain get show yield give provide result lead significantly substantially consistently "
    "compared respectively average total overall estimated value number score size beat "
    "outperform surpass exceed them this that these those they he she"))

# Words that say which way a number goes, not what it measures: never a lead.
DIRECTION_WORDS = frozenset(tokenize(
    "better worse higher lower larger smaller bigger more less fewer greater improvement "
    "improves gain increase decrease reduction reduces boost drop relative absolute top"))

# Stems that name one quantity.
SAME_QUANTITY = {s: group[0] for group in (
    tokenize("speed speedup faster fast acceleration quicker"), tokenize("model llm lm network"))
    for s in group}

# Words passed over while looking for the noun a number leads ("16 of the GPUs").
LEAD_SKIP = frozenset("of the a an its their".split())

# Words between a measure and its number: "a perplexity of 2", "accuracy by 5%".
MEASURE_SKIP = frozenset("of by is was at to about around".split())

COORDINATORS = frozenset("and or to even up".split())  # "90% or even 99% of them"

# Nouns a number counts or measures: a claim's "16 GPUs" needs "GPUs" in the evidence sentence.
MEASURES = frozenset(tokenize(
    "gpu gpus tpu tpus cpu cpus node machine core hour day minute second week layer head "
    "parameter token epoch step iteration qubit bit perplexity accuracy bleu"))

# Words that exclude one another: a number the evidence gives for one is not in role for the
# other ("its training set size only 4000" does not state "the test set size is 4000").
CONTRASTS = tuple(frozenset(tokenize(words)) for words in (
    "train test valid dev", "input output", "encoder decoder", "pretraining finetuning"))

# -- others' work (check/contrast.py) and names (check/names.py) -------------------------------

# Words that set a sentence about others' work apart (`check/contrast.py`).
PRIOR = frozenset(
    "existing current currently prior previous previously traditional conventional classical "
    "classic baseline baselines sota state-of-the-art".split())

COMPARING = frozenset(
    "unlike than compared compare comparing versus vs instead rather outperform outperforms "
    "outperforming outperformed surpass surpasses surpassing beat beats beating".split())

CLAIM_CONTRAST = PRIOR | COMPARING | frozenset(
    "over against relative "
    "improve improves improving improved improvement extend extends extending generalize "
    "generalizes replace replaces avoid avoids avoiding without not no limitation limitations "
    "drawback drawbacks suffer suffers fail fails poor expensive costly alternative "
    "alternatives criticize criticizes challenge challenges tighten tightens tighter "
    "compete competing competitor competitors".split())

FIRST_PERSON = frozenset("we our ours us".split())

CONTRAST_OPENERS = frozenset(
    "however but yet while although though many most some the these such".split())

# Acronyms that are words, not names ("LLMs", "GPU", "SOTA", "SGD"): `check/names.py`.
GENERIC_ACRONYMS = frozenset(
    "sota llm llms gpu gpus cpu cpus tpu tpus ai ml nlp rl cv api apis ood iid dnn dnns cnn cnns "
    "rnn rnns gnn gnns vlm vlms lms lm nn ii iii iv sgd gd mlp mlps rlhf vae vaes gan gans kl mse "
    "pca svm gp gps mcmc".split())

GREEK_LETTERS = frozenset("alpha beta gamma delta epsilon zeta eta theta lambda mu pi rho sigma "
                          "tau phi chi psi omega".split())

# -- follow-ups (answer/rewrite.py) ----------------------------------------------------------

# Words that are never the antecedent of a question's own "its"/"their": pronouns, and the
# nouns that point back at the conversation ("the authors", "the paper", "the results").
NO_ANTECEDENT = frozenset(
    "i you we they it he she them us me one ones paper papers work works study studies author "
    "authors method methods approach approaches result results finding findings".split())

# Words that may follow a noun without being its verb: "the size of its ..." has no subject
# doing anything to "its", "diffusion models learn about their ..." has.
NOT_A_VERB = frozenset(
    "of in on for with from by about at to into over under between than and or as the a an "
    "its their this that these those".split())

# -- people (retrieve/route.py) -------------------------------------------------------------

# Words that are never (part of) a person's name in a question.
NOT_NAME = frozenset(
    "the a an this that these those it they them he she his her their its paper papers work "
    "works authors author method methods model models approach people researchers team group "
    "someone anyone you we i me my our your who what which all any some each other others same "
    "first second last new recent best show list find tell give see about of on me for with "
    "in and or to from by at via without using".split())

# Request words a person pattern may catch before a name: "Show me L. Yin's papers".
NAME_OPENERS = frozenset("show me list find tell give see about of on what are is all".split())

# -- sentences (ingest/chunking.py) ---------------------------------------------------------

# Abbreviations after which a full stop ends no sentence (`ingest/chunking.py`).
ABBREVIATIONS = {
    "e.g", "i.e", "et al", "al", "etc", "vs", "cf", "fig", "figs", "eq", "eqs", "sec", "resp",
    "approx", "no", "dr", "mr", "ms", "prof", "st", "ref", "refs", "viz", "ca",
}

# Words that say nothing about a cluster of papers: a map label made only of them is skipped
# (rag/index/clusters.py).
LABEL_GENERIC = frozenset("""
paper propose proposed proposes method methods approach approaches result results show shows
shown demonstrate novel new existing based work problem problems framework performance
experiments experimental empirical empirically state art significantly significant achieve
achieves improve improves improved various task tasks extensive study use using used propose
learning model models data algorithm algorithms introduce prior previous recent recently key
""".split())

# The question a table column asks of each paper (`retrieve/cells.py`), for the attributes
# researchers compare most; any other column is asked with the fitted template. Keyed by the
# column's words, lower case; a column matches the first key whose words it holds all of.
COLUMN_QUESTIONS = (
    ("code", "Is the code released, and where?"),
    ("method", "What method does this paper propose?"),
    ("approach", "What approach does this paper propose?"),
    ("technique", "What technique does this paper propose?"),
    ("main result", "What is the main result?"),
    ("result", "What does this paper find?"),
    ("finding", "What does this paper find?"),
    ("benchmark", "Which benchmarks is it evaluated on?"),
    ("dataset", "Which datasets is it evaluated on?"),
    ("evaluation data", "Which datasets is it evaluated on?"),
    ("baseline", "Which baselines does it compare against?"),
    ("model size", "How large is the model?"),
    ("parameters", "How many parameters does the model have?"),
    ("models evaluated", "Which models are evaluated?"),
    ("target model", "Which models is it applied to?"),
    ("speedup", "How much faster is it?"),
    ("memory", "How much memory does it save?"),
    ("accuracy", "How accurate is it?"),
    ("task", "Which tasks does it address?"),
    ("guarantee", "What does it guarantee theoretically?"),
    ("convergence", "How fast does it converge?"),
    ("theoretical", "What does it prove?"),
    ("limitation", "What are its limitations?"),
)

# Questions that ask for a table across papers (`retrieve/route.py` `table_request`): "Compare
# the papers on X by A and B", "X methods in terms of A", "a table of X papers with A, B",
# "Which X papers report the largest A?".
TABLE_VERBS = ("compare", "contrast", "tabulate")
TABLE_MAKERS = ("make", "build", "give me", "show me", "create", "draw up")
COLUMN_CONNECTORS = ("in terms of", "with respect to", "on the basis of", "regarding", "by",
                     "across", "on")
TABLE_WITH = ("with columns", "with column", "showing", "with", "by")
PAPER_NOUNS = ("papers", "paper", "works", "work", "methods", "method", "approaches",
               "approach", "studies", "techniques", "models")
SUPERLATIVES = ("largest", "most", "highest", "biggest", "best", "greatest", "lowest",
                "smallest", "strongest", "fastest")
REPORT_VERBS = ("report", "reports", "give", "achieve", "achieves", "have", "has", "show",
                "shows", "claim", "claims", "get")

# A table cell's value cut from its sentence (`answer/table.py`): a quantity, with the words
# that may lead or follow it ("up to 2.6x faster", "1.5B parameters").
QUANTITY_LEADS = ("up to", "over", "about", "around", "nearly", "more than", "less than")
QUANTITY_SCALES = ("billion", "million", "thousand", "times")
QUANTITY_NOUNS = ("parameters", "tokens", "speedup", "faster", "fewer", "less", "more", "lower",
                  "higher", "reduction", "improvement")
CLAUSE_BREAKS = ("while", "whereas", "which")
CODE_COLUMNS = frozenset("code url link repository implementation release github".split())
