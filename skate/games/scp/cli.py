"""``python -m skate.scp``: command line for SCP benchmarks built from fresh documents (issue 12).

Subcommands:

* ``build DOCS_DIR --out bench.jsonl [--seed N] [--per-doc K] [--types T1,T2]`` reads a folder
  of documents (see :mod:`skate.games.scp.corpus`; the word ``shipped`` means the corpus that
  ships with the package), builds up to K questions of each type per document
  (:func:`skate.games.scp.questions.build`), checks every question and writes one JSON object
  per line (UTF-8, the ``Question.to_json()`` records). It prints one summary line: questions
  per type and per domain, and the output path. Same arguments, same file.
* ``stability DOCS_DIR --seeds K [--per-doc K] [--players simulated] [--out per_seed.csv]``
  rebuilds the benchmark with seeds 0..K-1 and lets a simulated cohort (a ``conf/players``
  option) answer each question once, as a model answers a benchmark; it prints, per player,
  the mean accuracy over the seeds and its spread (standard deviation, min, max, in accuracy
  points), and the spread of the expected accuracy (the sampling noise of one answer per
  question removed). ArxivRoll reports a standard deviation under 1 point over 32 seeds.
* ``arxiv --category CAT --from YYYY-MM-DD --to YYYY-MM-DD --out DIR [--max N]`` fetches
  recent arXiv papers (their HTML full text) into a documents folder that ``build`` reads
  (:mod:`skate.games.scp.arxiv`); where arXiv cannot be reached it says so and exits 2.

Exit status: 0 done; 2 bad input or arXiv unreachable (one line ``skate.scp: <message>`` on
stderr, no traceback).
"""

# The SCP game's command-line tool; ``skate/scp.py`` keeps its old name, ``python -m skate.scp``.
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from skate.config import compose_config
from skate.errors import ConfigError
from skate.games.scp import arxiv
from skate.games.scp.config import SCPConfig
from skate.games.scp.corpus import docs_folder, load_folder
from skate.games.scp.questions import TYPES, build, check
from skate.games.scp.rules import SCPGame, query_of
from skate.games.scp.simulated import key_of
from skate.players.simulated import build_simulated

PROG = "skate.scp"


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


def build_benchmark(docs_dir: str, out: Path, seed: int = 0, per_doc: int = SCPConfig.per_doc,
                    types: tuple[str, ...] = TYPES) -> str:
    """Build, check and write the benchmark; the summary line. Raises :class:`UsageError`."""
    if per_doc < 1:
        raise UsageError(f"--per-doc must be at least 1, got {per_doc}")
    try:
        docs = load_folder(docs_folder(docs_dir))
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


def stability(docs_dir: str, seeds: int = 32, per_doc: int = SCPConfig.per_doc, players: str = "simulated",
              types: tuple[str, ...] = TYPES, run_seed: int = 0) -> tuple[list[dict], list[dict]]:
    """Rebuild the benchmark with seeds ``0..seeds-1`` and let the simulated cohort answer every
    question once; (one row per player with the spread over seeds, one row per seed and player).

    Accuracies are in points (percent). ``expected`` is the mean over questions of the chance a
    player answers right (``know + (1 - know) / 4``), so its spread is the part that comes from
    which questions were built, without the noise of drawing one answer per question.
    """
    if seeds < 2:
        raise UsageError(f"--seeds must be at least 2 to measure a spread, got {seeds}")
    if per_doc < 1:
        raise UsageError(f"--per-doc must be at least 1, got {per_doc}")
    folder = docs_folder(docs_dir)
    if not folder.is_dir():
        raise UsageError(f"no such folder: {docs_dir} (give a folder of documents, or 'shipped')")
    try:
        cfg = compose_config([f"players={players}"])
    except Exception as exc:  # noqa: BLE001 - Hydra's errors name the missing option
        raise UsageError(f"cannot load the players config {players!r}: {exc}") from None
    roster = list(cfg.players.get("simulated") or [])
    if not roster:
        raise UsageError(f"players={players} has no simulated players; stability needs a simulated cohort")
    try:
        game = SCPGame(mode="player_set", docs=str(folder), types=types, per_doc=per_doc)
    except (ValueError, ConfigError) as exc:
        raise UsageError(str(exc)) from None
    sim = game.simulation(None)
    cohort = build_simulated(roster, sim, run_seed)
    per_seed = []
    for seed in range(seeds):
        questions = build(game.docs, per_doc, seed, types, game.sizes, game.threshold)
        if not questions:
            raise UsageError(f"no question could be built from {docs_dir}")
        for k, player in enumerate(cohort):
            rng = np.random.default_rng([run_seed, seed, k])
            correct, expected = 0, 0.0
            for q in questions:
                query = query_of(q, [int(i) for i in rng.permutation(len(q.options))])
                (reply,) = player.answer([query], rng)
                right = sim.read(query)[3]
                correct += reply == right
                know = player.p_know(sim_key(query)) if right is not None else 0.0
                expected += know + (1 - know) / len(q.options)
            per_seed.append({"seed": seed, "player": player.name, "questions": len(questions),
                             "accuracy": 100 * correct / len(questions),
                             "expected": 100 * expected / len(questions)})
    rows = []
    for player, spec in zip(cohort, roster, strict=True):
        acc = np.array([r["accuracy"] for r in per_seed if r["player"] == player.name])
        exp = np.array([r["expected"] for r in per_seed if r["player"] == player.name])
        rows.append({"player": player.name, "true_skill": float(spec.skill), "mean": float(acc.mean()),
                     "std": float(acc.std(ddof=1)), "min": float(acc.min()), "max": float(acc.max()),
                     "expected_std": float(exp.std(ddof=1))})
    return rows, per_seed


def sim_key(query) -> str:
    return key_of(query)


def format_stability(rows: list[dict], seeds: int) -> str:
    head = f"{'player':<14}{'skill':>6}{'mean %':>9}{'std':>7}{'min':>7}{'max':>7}{'std(expected)':>15}"
    lines = [f"accuracy over {seeds} benchmark seeds (one answer per question; points)", head, "-" * len(head)]
    lines += [f"{r['player']:<14}{r['true_skill']:>6.2f}{r['mean']:>9.1f}{r['std']:>7.2f}{r['min']:>7.1f}"
              f"{r['max']:>7.1f}{r['expected_std']:>15.2f}" for r in rows]
    worst = max(r["std"] for r in rows)
    lines.append(f"largest std: {worst:.2f} points (ArxivRoll reports under 1 point over 32 seeds)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(prog="python -m skate.scp", description=__doc__,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    b = sub.add_parser("build", help="build a JSONL benchmark from a folder of documents")
    b.add_argument("docs_dir", metavar="DOCS_DIR",
                   help="folder of documents, or 'shipped' for the corpus in the package")
    b.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    b.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    b.add_argument("--per-doc", type=int, default=SCPConfig.per_doc,
                   help=f"questions of each type per document, at most (default {SCPConfig.per_doc})")
    b.add_argument("--types", type=_types, default=TYPES,
                   help=f"comma-separated subset of {','.join(TYPES)} (default all)")
    s = sub.add_parser("stability", help="spread of each simulated player's accuracy over benchmark seeds")
    s.add_argument("docs_dir", metavar="DOCS_DIR",
                   help="folder of documents, or 'shipped' for the corpus in the package")
    s.add_argument("--seeds", type=int, default=32, help="benchmark seeds 0..K-1 (default 32)")
    s.add_argument("--per-doc", type=int, default=SCPConfig.per_doc,
                   help=f"questions of each type per document, at most (default {SCPConfig.per_doc})")
    s.add_argument("--types", type=_types, default=TYPES,
                   help=f"comma-separated subset of {','.join(TYPES)} (default all)")
    s.add_argument("--players", default="simulated", help="a conf/players option with simulated players")
    s.add_argument("--out", type=Path, default=None, help="CSV of every seed's accuracies (optional)")
    a = sub.add_parser("arxiv", help="fetch recent arXiv papers (HTML full text) into a documents folder")
    arxiv.add_arguments(a)
    args = ap.parse_args(argv)
    if args.command == "arxiv":
        return arxiv.main_from_args(args)
    if args.command == "stability":
        try:
            rows, per_seed = stability(args.docs_dir, args.seeds, args.per_doc, args.players, args.types)
            if args.out is not None:
                import pandas as pd

                try:
                    pd.DataFrame(per_seed).to_csv(args.out, index=False)
                except OSError as exc:
                    raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from exc
        except UsageError as exc:
            print(f"{PROG}: {exc}", file=sys.stderr)
            return 2
        print(format_stability(rows, args.seeds))
        return 0
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
