"""Stage 2, index: chunks embedded into Chroma, with the BM25 side and chunk table beside it."""
