"""Build `metadata.jsonl`: questions answered from the corpus metadata (authors, titles) and
list questions with their noisy "conference" phrasing, for `rag eval` (issue 13's targets).

    python eval/datasets/bank/build_metadata.py      # rewrites bank/metadata.jsonl

Gold sets come from the metadata itself, not from the pipeline:
- author: every paper whose author list holds that exact name (the corpus's own spelling);
  a topic-restricted author question keeps those of them whose title or abstract matches the
  topic's pattern; names that are in no author list are unanswerable ("no paper by X").
- title: the one paper with that title (named exactly, by its short name before the colon,
  or loosely: lower case, no punctuation).
- list: every paper whose title or abstract matches a topic pattern (topics with 4-20 such
  papers only, so recall@10 is meaningful); each plain question ("Which papers use mixture of
  experts?") has noisy variants with request words ("What are the best papers on ... at ICML
  2024?") that carry `variant_of` = the plain question's id.
Deterministic (random.Random(13)); re-running gives the same file.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[2] / "seeds" / "icml2024.jsonl"
OUT = HERE / "metadata.jsonl"

AUTHOR_TEMPLATES = [
    "Which papers did {name} publish at ICML 2024?",
    "papers by {name}",
    "What did {name} present at ICML?",
    "Show me {name}'s papers",
    "list the work of {name} at ICML 2024",
    "what has {name} got at icml 2024",
    "Which ICML 2024 papers is {name} an author of?",
]
TOPIC_AUTHOR_TEMPLATES = ["{name}'s work on {topic}", "papers by {name} about {topic}"]
UNKNOWN_AUTHORS = ["Geoffrey Hinton", "Demis Hassabis", "Ian Goodfellow", "Oriol Vinyals",
                   "Andrej Karpathy", "Daphne Koller", "Zoubin Ghahramani", "Timnit Gebru"]
TITLE_TEMPLATES = [
    "What is the {short} paper about?",
    "what does {short} do",
    "Tell me about the paper \"{title}\"",
    "summarize {loose}",
    "What problem does \"{title}\" address?",
]
# (topic words used in questions, regex over title + abstract)
TOPICS = [
    ("mixture of experts", r"mixture of experts|mixture-of-experts"),
    ("speculative decoding", r"speculative decoding"),
    ("watermarking", r"watermark"),
    ("machine unlearning", r"unlearning"),
    ("conformal prediction", r"conformal prediction"),
    ("neural operators", r"neural operator"),
    ("knowledge distillation", r"knowledge distillation"),
    ("causal discovery", r"causal discovery"),
    ("spiking neural networks", r"spiking neural"),
    ("hyperbolic embeddings", r"hyperbolic"),
    ("music", r"\bmusic"),
    ("jailbreaking LLMs", r"jailbreak"),
    ("test-time adaptation", r"test-time adaptation"),
    ("state space models", r"state space model|\bmamba"),
    ("model merging", r"model merging|merging models"),
    ("membership inference", r"membership inference"),
    ("coresets and data pruning", r"data pruning|coreset"),
    ("world models", r"world model"),
    ("long-context language models", r"long context|long-context"),
    ("tokenization", r"tokeniz"),
]
PLAIN = ["Which papers study {topic}?", "Which papers use {topic}?", "papers about {topic}"]
NOISY = [
    "What are the best papers on {topic} at ICML 2024?",
    "any recent work on {topic} at icml?",
    "Show me some ICML 2024 papers about {topic}",
    "I'm looking for the most interesting {topic} papers from ICML 2024",
]


def main() -> None:
    rng = random.Random(13)
    papers = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]
    by_author: dict[str, list[str]] = defaultdict(list)
    for p in papers:
        for name in p["authors"].split(", "):
            by_author[name.strip()].append(p["id"])
    text = {p["id"]: f"{p['title']} {p['abstract']}" for p in papers}
    # The corpus spells some people in several cases ("Yixuan Zhang", "YIXUAN ZHANG"): a name
    # asked about means all of them.
    same_person: dict[str, set[str]] = defaultdict(set)
    for name, ids in by_author.items():
        same_person[name.casefold()].update(ids)
    out: list[dict] = []

    def add(kind: str, question: str, gold: list[str], **extra) -> str:
        qid = f"meta-{kind}-{len([q for q in out if q['type'] == kind]) + 1:03d}"
        out.append({"id": qid, "question": question, "type": kind, "gold": sorted(gold),
                    "answerable": bool(gold), "reference_answer": "", "key_facts": [],
                    "near_paper": None, **extra})
        return qid

    surnames: dict[str, set[str]] = defaultdict(set)
    initials: dict[str, set[str]] = defaultdict(set)
    for name in by_author:
        surnames[name.split()[-1].lower()].add(name)
        initials[f"{name[0]}. {name.split()[-1]}".lower()].add(name)
    prolific = sorted(n for n, ids in by_author.items() if 3 <= len(ids) <= 10 and
                      re.fullmatch(r"[A-Z][a-z]+( [A-Z][a-z]+)+", n))
    for name in rng.sample(prolific, 30):
        first, last = name.split()[0], name.split()[-1]
        variants = [name, name.lower()]
        if len(initials[f"{first[0]}. {last}".lower()]) == 1:  # only an unambiguous initial
            variants.append(f"{first[0]}. {last}")
        if len(surnames[last.lower()]) == 1:
            variants.append(last)
        add("author", rng.choice(AUTHOR_TEMPLATES).format(name=rng.choice(variants)),
            sorted(same_person[name.casefold()]), person=name)
    for name in ["Sergey Levine", "Chelsea Finn", "Yoshua Bengio", "Jürgen Schmidhuber",
                 "Bernhard Schölkopf", "Michael Jordan"]:
        spelled = {"Jürgen Schmidhuber": "Jurgen Schmidhuber",
                   "Bernhard Schölkopf": "Bernhard Scholkopf"}.get(name, name)
        add("author", rng.choice(AUTHOR_TEMPLATES).format(name=spelled), by_author[name],
            person=name)
    for name, topic, pattern in [("Sergey Levine", "offline reinforcement learning",
                                  r"offline"),
                                 ("Volkan Cevher", "robustness", r"robust"),
                                 ("Furong Huang", "watermarks", r"watermark")]:
        gold = [pid for pid in by_author[name] if re.search(pattern, text[pid], re.I)]
        if gold:
            add("author", rng.choice(TOPIC_AUTHOR_TEMPLATES).format(name=name, topic=topic),
                gold, person=name, topic=topic)
    for name in UNKNOWN_AUTHORS:  # checked accent- and case-insensitively ("Ré" is "Re")
        plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().casefold()
        assert not any(plain == unicodedata.normalize("NFKD", n).encode("ascii", "ignore")
                       .decode().casefold() for n in by_author), name
        add("author", rng.choice(AUTHOR_TEMPLATES).format(name=name), [], person=name)

    titled = [p for p in papers if ":" in p["title"] and 3 <= len(p["title"].split(":")[0]) <= 30
              and "$" not in p["title"]]
    for p in rng.sample(titled, 25):
        short = p["title"].split(":")[0].strip()
        loose = re.sub(r"[^a-z0-9 ]+", " ", p["title"].lower())
        loose = re.sub(r"\s+", " ", loose).strip()
        add("title", rng.choice(TITLE_TEMPLATES).format(short=short, title=p["title"],
                                                       loose=loose), [p["id"]])
    untitled = [p for p in papers if ":" not in p["title"] and "$" not in p["title"]]
    for p in rng.sample(untitled, 10):
        add("title", f"What is the paper \"{p['title']}\" about?", [p["id"]])

    for topic, pattern in TOPICS:
        gold = [pid for pid, t in text.items() if re.search(pattern, t, re.I)]
        if not 4 <= len(gold) <= 20:
            continue
        plain = add("list", rng.choice(PLAIN).format(topic=topic), gold, topic=topic)
        for template in rng.sample(NOISY, 2):
            add("list", template.format(topic=topic), gold, topic=topic, variant_of=plain)

    OUT.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in out),
                   encoding="utf-8")
    counts = defaultdict(int)
    for q in out:
        counts[q["type"]] += 1
    print(f"{len(out)} questions -> {OUT}: {dict(counts)}")


if __name__ == "__main__":
    main()
