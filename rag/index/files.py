"""Small JSON files beside an index, written atomically (a temporary file renamed into place),
so a process reading one never sees it half-written: the manifest, a rebuild's pending
uploads, the corpus background."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any


def write_json(path: Path, data: Any, **dumps: Any) -> None:
    """Write `data` as JSON to `path` atomically; OSError if it cannot be written (the
    temporary file is removed)."""
    tmp = path.with_name(f".{path.name}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, **dumps), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
