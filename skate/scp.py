"""``python -m skate.scp``: command line for SCP benchmarks built from fresh documents (issue 12).

Subcommands:

* ``build DOCS_DIR --out bench.jsonl [--seed N] [--per-doc K] [--types T1,T2]`` reads a folder
  of documents (see :mod:`skate.games.scp.corpus`; the word ``shipped`` means the corpus that
  ships with the package), builds up to K questions of each type per document
  (:func:`skate.games.scp.questions.build`), checks every question and writes one JSON object
  per line (UTF-8, the ``Question.to_json()`` records). It prints one summary line: questions
  per type and per domain, and the output path. Same arguments, same file.
* ``stability DOCS_DIR --seeds K`` is NOT available yet: it needs the SCP game's simulated
  players (issue 12, in progress) and exits 2 saying so.

Exit status: 0 done; 2 bad input or unavailable command (one line ``skate.scp: <message>`` on
stderr, no traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from skate.games.scp.corpus import SHIPPED_DIR, load_folder
from skate.games.scp.questions import TYPES, build, check

PROG = "skate.scp"
STABILITY_MISSING = "stability needs the SCP game's simulated players (issue 12, in progress)"


class UsageError(Exception):
    """Bad input; the message says what to fix."""


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one ``skate.scp: ...`` line and exit status 2."""

    def error(self, message: str):
        print(f"{PROG}: {message} (see python -m skate.scp {self._sub_name()}--help)",
              file=sys.stderr)
        sys.exit(2)

    def _sub_name(self) -> str:
        parts = self.prog.split()
        return f"{parts[-1]} " if len(parts) > 3 else ""


def _types(value: str) -> tuple[str, ...]:
    chosen = tuple(t.strip() for t in value.split(",") if t.strip())
    unknown = [t for t in chosen if t not in TYPES]
    if not chosen or unknown:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated subset of {','.join(TYPES)}, got {value!r}")
    return tuple(dict.fromkeys(chosen))


def _folder(docs_dir: str) -> Path:
    return SHIPPED_DIR if docs_dir == "shipped" else Path(docs_dir)


def build_benchmark(docs_dir: str, out: Path, seed: int = 0, per_doc: int = 4,
                    types: tuple[str, ...] = TYPES) -> str:
    """Build, check and write the benchmark; the summary line. Raises :class:`UsageError`."""
    if per_doc < 1:
        raise UsageError(f"--per-doc must be at least 1, got {per_doc}")
    try:
        docs = load_folder(_folder(docs_dir))
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    questions = build(docs, per_doc, seed, types=types)
    if not questions:
        raise UsageError(f"no question could be built from {docs_dir} (documents too short or "
                         "mostly markup?); add longer prose documents")
    failing = [q.id for q in questions if check(q)]
    if failing:
        raise UsageError(f"{len(failing)} of {len(questions)} questions fail their check "
                         f"(first: {failing[0]}); nothing written - please report this bug")
    text = "".join(json.dumps(q.to_json(), ensure_ascii=False) + "\n" for q in questions)
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"cannot write {out}: {parent} is not an existing folder; create it or "
                         "choose another --out")
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}; choose another --out") \
            from exc
    by_type = Counter(q.type for q in questions)
    by_domain = Counter(q.domain for q in questions)
    types_part = ", ".join(f"{t} {by_type[t]}" for t in types)
    domains_part = ", ".join(f"{d} {n}" for d, n in sorted(by_domain.items()))
    return (f"wrote {len(questions)} questions from {len(docs)} documents "
            f"(by type: {types_part}; by domain: {domains_part}) to {out}")


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(prog="python -m skate.scp", description=__doc__,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    b = sub.add_parser("build", help="build a JSONL benchmark from a folder of documents")
    b.add_argument("docs_dir", metavar="DOCS_DIR",
                   help="folder of documents, or 'shipped' for the corpus in the package")
    b.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    b.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    b.add_argument("--per-doc", type=int, default=4,
                   help="questions of each type per document, at most (default 4)")
    b.add_argument("--types", type=_types, default=TYPES,
                   help=f"comma-separated subset of {','.join(TYPES)} (default all)")
    s = sub.add_parser("stability", help="NOT AVAILABLE YET: accuracy spread over seeds")
    s.add_argument("docs_dir", metavar="DOCS_DIR")
    s.add_argument("--seeds", type=int, default=32)
    args = ap.parse_args(argv)
    if args.command == "stability":
        print(f"{PROG}: {STABILITY_MISSING}", file=sys.stderr)
        return 2
    try:
        summary = build_benchmark(args.docs_dir, args.out, seed=args.seed,
                                  per_doc=args.per_doc, types=args.types)
    except UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
