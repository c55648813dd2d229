"""The error hierarchy. Every error says what went wrong and what to do next.

The CLI and the UI turn a `RagError` into a one-line message; nothing in between swallows them.
"""

from __future__ import annotations


class RagError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigError(RagError):
    """A setting has an unknown name or a value out of range."""


class InputError(RagError):
    """A question or a document the user gave cannot be used as it is."""


class PaperNotFoundError(InputError):
    """A paper id names no paper of the index."""


class CorpusError(InputError):
    """A corpus file is malformed; the message names the file and, where known, the line."""


class IndexNotFoundError(RagError):
    """No index exists yet for the corpus and embedder asked for."""


class IndexCorruptError(RagError):
    """The data directory exists but cannot be read back."""


class EmbedderMismatchError(RagError):
    """An index was built with another embedder (or dimension) than the one configured."""


class IndexLockedError(RagError):
    """Another process is writing the same index."""


class StoreUnavailableError(RagError):
    """The vector store (for example a Chroma server) cannot be reached."""


class GeneratorError(RagError):
    """A language-model backend failed: unreachable, refused the key, unknown model, bad output."""


class GeneratorUnavailableError(GeneratorError):
    """A generator cannot run on this machine (missing extra, missing configuration)."""
