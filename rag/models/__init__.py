"""What every stage may use to run a model: the MiniLM embedder, the OpenAI-compatible client
(chat and embeddings) and the local GGUF model's weights."""
