"""The shipped seed corpus (installed as `rag.seeds`): five documents of ICML 2024 abstracts,
their metadata (`metadata.jsonl`) and the ICML 2024 posters (`icml2024.jsonl`), found with
`importlib.resources` by `rag.ingest.corpus`."""
