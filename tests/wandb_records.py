"""Read an offline W&B run file (``run-*.wandb``) back into protobuf records, for tests.

The file is a LevelDB-style log: a 7-byte header, then 32 KiB blocks of records, each with a
4-byte checksum, a 2-byte little-endian length, a 1-byte type (1 full, 2 first, 3 middle,
4 last) and the payload, which is one serialised ``wandb_internal_pb2.Record``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

BLOCK = 32 * 1024
HEADER = 7


def raw_records(path: Path) -> Iterator[bytes]:
    data = Path(path).read_bytes()
    assert data[:4] == b":W&B", "not a W&B run file"
    pos, pending = HEADER, b""
    while pos + 7 <= len(data):
        room = BLOCK - pos % BLOCK
        if room < 7:  # a block's tail too short for a record header is padding
            pos += room
            continue
        length = int.from_bytes(data[pos + 4 : pos + 6], "little")
        kind = data[pos + 6]
        if pos + 7 + length > len(data):  # the writer is still appending this record
            return
        chunk = data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind == 1:
            yield chunk
        elif kind == 2:
            pending = chunk
        elif kind == 3:
            pending += chunk
        elif kind == 4:
            yield pending + chunk
            pending = b""


def records(path: Path):
    from wandb.proto import wandb_internal_pb2

    for raw in raw_records(path):
        rec = wandb_internal_pb2.Record()
        rec.ParseFromString(raw)
        yield rec


def summarise(run_dir: Path, wait_s: float = 10.0) -> dict:
    """Kinds of records, history keys, summary keys, the run's group/name, and the exit code.

    W&B's writer is a separate process that may still be flushing the last records when
    ``finish()`` returns: wait (up to ``wait_s``) for the exit record before reading.
    """
    import time

    deadline = time.monotonic() + wait_s
    while True:
        out = _summarise(run_dir)
        if out["exit_code"] is not None or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def _summarise(run_dir: Path) -> dict:
    files = sorted(Path(run_dir).glob("wandb/offline-run-*/run-*.wandb"))
    assert files, f"no offline W&B run under {run_dir}"
    out = {
        "kinds": {},
        "history_keys": set(),
        "summary_keys": set(),
        "exit_code": None,
        "group": None,
        "name": None,
        "files": files,
        "rows": [],
    }
    for rec in records(files[-1]):
        kind = rec.WhichOneof("record_type")
        out["kinds"][kind] = out["kinds"].get(kind, 0) + 1
        if kind == "history":
            row = {i.key or "/".join(i.nested_key): i.value_json for i in rec.history.item}
            out["history_keys"] |= set(row)
            out["rows"].append(row)
        elif kind == "summary":
            out["summary_keys"] |= {i.key or "/".join(i.nested_key) for i in rec.summary.update}
        elif kind == "exit":
            out["exit_code"] = rec.exit.exit_code
        elif kind == "run":
            out["group"], out["name"] = rec.run.run_group, rec.run.display_name
    return out
