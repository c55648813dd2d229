"""Offline answer-quality evals: datasets in, pure metric functions, per-question rows out.

    rag eval --dataset seeds                      # the seed questions on the 90 seed papers
    rag eval --dataset icml2024                   # the same questions among 2,634 papers
    rag eval --dataset scifact --grid retriever=bm25,dense,hybrid

Installed as `rag.eval`: `rag.eval.datasets` loads and validates the question sets,
`rag.eval.metrics` holds one module per metric family (pure functions, no I/O), `rag.eval.run`
runs configurations and caches their rows, `rag.eval.report` writes the JSON/Markdown summary
and plots, `rag.eval.gate` checks a summary against the committed thresholds in
`eval/thresholds.json`, `rag.eval.fit_answerability` fits the answerability gate on the question bank. Nothing here needs a network or an LLM; `--judge` is the one optional exception.
"""
