"""Stage 3, retrieve: the passages for a query (dense, BM25, hybrid) and the abstention gate."""
