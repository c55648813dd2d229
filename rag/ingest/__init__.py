"""Stage 1, ingest: corpora and uploaded files become `Paper`s, papers become `Chunk`s."""
