"""The CI gate: a summary's headline metrics against the committed `eval/thresholds.json`.

The file holds, per dataset, `{"metric": {"min": x}}` or `{"metric": {"max": x}}` plus the
values measured when the thresholds were set (documentation, not checked). A metric missing
from the summary fails the gate too: a gate that silently skips is not a gate.

Example: check({"recall@5": 0.9}, {"recall@5": {"min": 0.95}}) ->
    ["recall@5 = 0.900 is below its threshold 0.950"]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from rag.errors import ConfigError

THRESHOLDS = Path(__file__).resolve().parent / "thresholds.json"


def load_thresholds(dataset: str, path: Path | None = None) -> dict[str, dict[str, float]]:
    """The thresholds of `dataset`; ConfigError when the file or the dataset is missing."""
    path = path or THRESHOLDS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the thresholds ({exc})") from None
    if dataset not in data.get("datasets", {}):
        raise ConfigError(f"{path} has no thresholds for dataset {dataset!r}")
    return data["datasets"][dataset]["thresholds"]


def check(metrics: Mapping[str, Any], thresholds: Mapping[str, Mapping[str, float]]
          ) -> list[str]:
    """One message per failed threshold; [] when the gate passes."""
    failures = []
    for name, bound in thresholds.items():
        value = metrics.get(name)
        if value is None:
            failures.append(f"{name} was not measured (the gate needs it)")
            continue
        if "min" in bound and value < bound["min"]:
            failures.append(f"{name} = {value:.3f} is below its threshold {bound['min']:.3f}")
        if "max" in bound and value > bound["max"]:
            failures.append(f"{name} = {value:.3f} is above its threshold {bound['max']:.3f}")
    return failures
