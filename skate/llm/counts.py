"""What each model's calls cost in earlier runs, kept beside the response cache for estimates of
later ones (:mod:`skate.tools.estimate`).

Every run with language-model players adds one line per model to ``token_counts.jsonl`` in the
folder that holds the response cache (``llm.cache_dir``'s parent, ``~/.cache/skate`` by default):
the game, the estimator, the rounds played and players, and the model's calls, samples and
tokens (prompt, completion, thinking) by purpose (``set``: its setting attempts, ``answer``: its
answer samples, ``read``: its log-probability reads), with the valid tasks of the game. Only calls
sent to the model count (replies from the response cache cost nothing and say nothing of a
model's price). A line is a few hundred bytes; a file that cannot be written or read is skipped
with one line, never a stop of the run.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

COUNTS_FILE = "token_counts.jsonl"
PURPOSES = ("set", "answer", "read")
FIELDS = ("calls", "samples", "cached", "prompt_tokens", "completion_tokens", "thinking_tokens", "refused")
_lock = threading.Lock()


def counts_path(cache_dir: str | Path) -> Path:
    """Where the counts are kept for a response cache folder: beside it."""
    return Path(cache_dir).expanduser().parent / COUNTS_FILE


def record(path: Path, entries: Sequence[Mapping[str, Any]]) -> None:
    """Append ``entries`` (one per model of a run) to the counts file."""
    if not entries:
        return
    lines = "".join(json.dumps(dict(e), ensure_ascii=False, sort_keys=True) + "\n" for e in entries)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _lock, open(path, "a", encoding="utf-8") as fh:
            fh.write(lines)
    except OSError as exc:
        log.warning(
            "cannot keep the models' token counts in %s (%s): later estimates will not know them",
            path,
            exc.strerror or exc,
        )


def entries(path: Path) -> Iterator[dict[str, Any]]:
    """Every entry of a counts file (none when there is no file; a torn line is skipped)."""
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError:
        return
    except OSError as exc:
        log.warning("cannot read the models' token counts in %s (%s)", path, exc.strerror or exc)
        return
    with fh:
        for line in fh:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("model"), str):
                yield entry


def purpose_counts(usage: Mapping[str, Any]) -> dict[str, int]:
    """The fields of one purpose's usage (``Usage.as_dict``) that an entry keeps."""
    return {k: int(usage.get(k) or 0) for k in FIELDS}
