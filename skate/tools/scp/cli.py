"""``skate scp``: command line for SCP benchmarks built from fresh documents (issue 12).

Subcommands:

* ``build DOCS_DIR --out bench.jsonl [--seed N] [--per-doc K] [--types T1,T2]`` reads a folder
  of documents (see :mod:`skate.games.scp.corpus`; the word ``shipped`` means the corpus that
  ships with the package), builds up to K questions of each type per document
  (:func:`skate.games.scp.questions.build`), checks every question and writes one JSON object
  per line (UTF-8, the ``Question.to_json()`` records, plus the question's document date
  ``doc_date``, where that date came from ``doc_date_source`` and the build date ``built``). It
  prints one summary line: questions per type and per domain, the documents' date range and
  sources, the build date and the output path. Same arguments, same file (on the same day, or
  any day with ``SOURCE_DATE_EPOCH`` set: the build date is that day).
* ``stability DOCS_DIR --seeds K [--per-doc K] [--players COHORT] [--out per_seed.csv] [--runs DIR]
  [KEY=VALUE ...]`` rebuilds the benchmark with seeds 0..K-1 and plays each as ``game=scp``
  plays a built benchmark (:func:`skate.runner.run_game`, ``estimator=greedy``: every player
  answers every question once, language models at temperature 0, as a model answers a
  benchmark). The cohort is any ``conf/players`` option (``simulated``, the default;
  ``fake_local``; ...) or Hydra-style overrides (``players.simulated=[] 'players.llm=[...]'``),
  with any other override after it (``llm.cache_dir=...``). It prints, per player, the mean
  accuracy over the seeds and its spread (standard deviation, min, max, in accuracy points), and
  for simulated players their true skill and the spread of the expected accuracy (the sampling
  noise of one answer per question removed). ArxivRoll reports a standard deviation under 1
  point over 32 seeds. An unknown cohort, or a model whose server cannot be reached (the run's
  preflight check), is one line and exit status 2.
* ``arxiv --category CAT --from YYYY-MM-DD --to YYYY-MM-DD --out DIR [--max N]`` fetches
  recent arXiv papers (their HTML full text) into a documents folder that ``build`` reads
  (:mod:`skate.tools.scp.arxiv`); where arXiv cannot be reached it says so and exits 2.

Exit status: 0 done; 2 bad input, a model or arXiv unreachable (one line ``skate.scp: <message>`` on
stderr, no traceback).
"""

# The SCP game's command-line tool: skate.games.scp registers it as the command ``skate scp``.
from __future__ import annotations

import argparse
import contextlib
import copy
import json
import logging
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from skate.errors import ConfigError
from skate.games.scp.config import SCPConfig
from skate.games.scp.corpus import docs_folder, load_folder
from skate.games.scp.questions import TYPES, build, check
from skate.games.scp.rules import SCPGame, build_date, doc_dates, query_of, question_of_cached
from skate.games.scp.simulated import key_of
from skate.players.simulated import build_simulated
from skate.runner import run_game
from skate.sandbox import SandboxUnavailable
from skate.settings.config import build_settings, compose_config
from skate.tools.scp import arxiv

PROG = "skate.scp"


class UsageError(Exception):
    """Bad input; the message says what to fix."""


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one ``skate.scp: ...`` line and exit status 2."""

    def error(self, message: str):
        print(f"{PROG}: {message} (see skate scp {self._sub_name()}--help)",
              file=sys.stderr)
        sys.exit(2)

    def _sub_name(self) -> str:
        parts = self.prog.split()
        return f"{parts[-1]} " if len(parts) > 2 else ""


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
    built = build_date()
    by_id = {d.id: d for d in docs}
    records = [{**q.to_json(), **doc_dates(by_id.get(q.doc)), "built": built} for q in questions]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
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
    dates = sorted(r["doc_date"] for r in records if r.get("doc_date"))
    sources = Counter(r["doc_date_source"] for r in records if r.get("doc_date"))
    sources_part = ", ".join(f"{k} {n}" for k, n in sorted(sources.items()))
    dated = f"documents dated {dates[0]} to {dates[-1]} ({sources_part}); " if dates else ""
    return (f"wrote {len(questions)} questions from {len(docs)} documents "
            f"(by type: {types_part}; by domain: {domains_part}; {dated}built {built}) to {out}")


# Settings the study owns (the folder, seeds and types come from its own arguments).
_OWNED = ("game", "game.mode", "game.docs", "game.benchmark", "game.build_seed", "game.per_doc", "game.types",
          "game.questions")


def _cohort(players: str | Sequence[str]) -> list[str]:
    """The overrides naming a cohort: a ``conf/players`` option (``simulated``, ``fake_local``) or
    Hydra-style overrides (``players.llm=[...]``, ``players.simulated=[]``), one or several."""
    given = [players] if isinstance(players, str) else list(players)
    out = []
    for item in given:
        item = str(item).strip()
        if not item:
            raise UsageError("--players is empty: give a conf/players option (e.g. simulated, fake_local) or "
                             "overrides such as 'players.llm=[{name: m, model: openai/m, api_base: URL}]'")
        out.append(item if "=" in item else f"players={item}")
    return out


def _compose(players: str | Sequence[str], overrides: Sequence[str], run_seed: int) -> Any:
    """The config of one seed's game: ``game=scp`` built, one round, ArxivRoll's scoring (one
    greedy answer per question and player), Elo ratings (written, not used: the cheapest to
    update), no logger or report; then the cohort and the caller's overrides."""
    for o in overrides:
        key = str(o).split("=", 1)[0].lstrip("+~")
        if key in _OWNED:
            raise UsageError(f"{key} is set by the stability study itself (DOCS_DIR, --seeds, --per-doc, --types): "
                             f"drop the override {o!r}")
        if "=" not in str(o):
            raise UsageError(f"cannot read the override {o!r}: write key=value, e.g. llm.cache_dir=/tmp/cache")
    chosen = _cohort(players)
    try:
        return compose_config(["game=scp", "game.mode=built", "game.rounds=1", "estimator=greedy", "rating=elo",
                               "logger=none", "report=false", f"seed={run_seed}", *chosen, *overrides])
    except Exception as exc:  # noqa: BLE001 - Hydra's errors: one line naming what to write instead
        raise UsageError(f"cannot load the players config {' '.join(chosen)!r}: {_config_error(exc)}") from None


def _config_error(exc: BaseException) -> str:
    """One line for a config Hydra could not compose."""
    missing = getattr(exc, "missing_cfg_file", None)
    if missing and "/" in missing:
        group, _, name = missing.rpartition("/")
        options = sorted(o for o in getattr(exc, "options", None) or [] if not o.endswith("_schema"))
        return f"{group}={name} is not an option of {group}: choose one of {', '.join(options)}"
    cause = exc.__cause__ or exc
    return (str(cause).splitlines() or [type(cause).__name__])[0]


def stability(docs_dir: str, seeds: int = 32, per_doc: int = SCPConfig.per_doc,
              players: str | Sequence[str] = "simulated", types: tuple[str, ...] = TYPES, run_seed: int = 0,
              overrides: Sequence[str] = (), runs_dir: Path | None = None) -> tuple[list[dict], list[dict]]:
    """Rebuild the benchmark with seeds ``0..seeds-1`` and play each one as ``game=scp`` plays a
    built benchmark (:func:`skate.runner.run_game`: the same players, client, cache, preflight and
    estimator), every player answering every question once (``estimator=greedy``, ArxivRoll's
    scoring: one answer at temperature 0); (one row per player with the spread over seeds, one
    row per seed and player).

    ``players`` is a ``conf/players`` option or Hydra-style overrides naming a cohort, simulated,
    language models or both; ``overrides`` are further overrides (``llm.cache_dir=...``,
    ``estimator.n=...`` with ``estimator=fixed_n``). ``runs_dir`` keeps each seed's run folder
    (``seed-000``...); otherwise they go to a temporary folder. Accuracies are in points
    (percent): a seed's accuracy is the mean p(correct) over the questions the player answered
    (void answers, failed calls, left out and counted). For a simulated player ``expected`` is the
    mean over the same questions of its chance of being right (``know + (1 - know) / 4``), so its
    spread is the part that comes from which questions were built, without the noise of one
    answer per question. Raises :class:`UsageError` (one line) for bad input, a cohort that
    cannot be composed or a model that cannot be reached.
    """
    if seeds < 2:
        raise UsageError(f"--seeds must be at least 2 to measure a spread, got {seeds}")
    if per_doc < 1:
        raise UsageError(f"--per-doc must be at least 1, got {per_doc}")
    folder = docs_folder(docs_dir)
    if not folder.is_dir():
        raise UsageError(f"no such folder: {docs_dir} (give a folder of documents, or 'shipped')")
    cfg = _compose(players, overrides, run_seed)
    cfg.game.docs, cfg.game.per_doc, cfg.game.types = str(folder), per_doc, list(types)
    roster = list(cfg.players.get("simulated") or [])
    names = [p.name for p in roster] + [p.name for p in cfg.players.get("llm") or []]
    if not names:
        raise UsageError(f"{' '.join(_cohort(players))} names no players: give a cohort with simulated or "
                         "language-model players")
    sim_cohort = _sim_cohort(folder, types, per_doc, roster, int(cfg.seed)) if roster else {}
    per_seed = []
    with contextlib.ExitStack() as stack:
        base = Path(runs_dir) if runs_dir is not None else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        for seed in range(seeds):
            seed_cfg = copy.deepcopy(cfg)
            seed_cfg.game.build_seed = seed
            try:
                result = run_game(build_settings(seed_cfg), base / f"seed-{seed:03d}")
            except (ConfigError, SandboxUnavailable, ValueError, OSError) as exc:
                raise UsageError(f"seed {seed}: {'; '.join(str(exc).splitlines())}") from None
            per_seed += _seed_rows(seed, names, result.archive, sim_cohort)
    rows = []
    for name in names:
        mine = [r for r in per_seed if r["player"] == name]
        acc = np.array([r["accuracy"] for r in mine])
        row = {"player": name, "true_skill": None, "mean": float(acc.mean()), "std": float(acc.std(ddof=1)),
               "min": float(acc.min()), "max": float(acc.max()), "expected_std": None,
               "void": sum(r["void"] for r in mine)}
        if name in sim_cohort:
            row["true_skill"] = float(sim_cohort[name].skill)
            row["expected_std"] = float(np.std([r["expected"] for r in mine], ddof=1))
        rows.append(row)
    return rows, per_seed


def _sim_cohort(folder: Path, types: tuple[str, ...], per_doc: int, roster: list, seed: int) -> dict[str, Any]:
    """The simulated players as the engine builds them (same specs, simulation and seed), to
    read each one's chance of knowing an answer."""
    try:
        game = SCPGame(mode="player_set", docs=str(folder), types=types, per_doc=per_doc, max_doc_age_days=None)
    except (ValueError, ConfigError) as exc:
        raise UsageError(str(exc)) from None
    return {p.name: p for p in build_simulated(roster, game.simulation(None), seed)}


def _seed_rows(seed: int, names: list[str], archive: list, sim_cohort: dict[str, Any]) -> list[dict]:
    """One row per player of one seed's game: accuracy over the questions it answered."""
    out = []
    for name in names:
        got = [s.p_correct[name] for s in archive if name in s.p_correct]
        if not got:
            raise UsageError(f"seed {seed}: {name} answered no question (every call failed: is its server up?)")
        row = {"seed": seed, "player": name, "questions": len(archive), "void": len(archive) - len(got),
               "accuracy": 100 * float(np.mean(got))}
        player = sim_cohort.get(name)
        if player is not None:
            expected = 0.0
            for s in archive:
                query = query_of(question_of_cached(s.task))
                know = player.p_know(key_of(query)) if player.sim.read(query)[3] is not None else 0.0
                expected += know + (1 - know) / len(query.options)
            row["expected"] = 100 * expected / len(archive)
        out.append(row)
    return out


def format_stability(rows: list[dict], seeds: int) -> str:
    head = f"{'player':<14}{'skill':>6}{'mean %':>9}{'std':>7}{'min':>7}{'max':>7}{'std(expected)':>15}"
    lines = [f"accuracy over {seeds} benchmark seeds (one answer per question; points)", head, "-" * len(head)]
    for r in rows:
        skill = f"{r['true_skill']:>6.2f}" if r.get("true_skill") is not None else f"{'-':>6}"
        expected = f"{r['expected_std']:>15.2f}" if r.get("expected_std") is not None else f"{'-':>15}"
        lines.append(f"{r['player']:<14}{skill}{r['mean']:>9.1f}{r['std']:>7.2f}{r['min']:>7.1f}"
                     f"{r['max']:>7.1f}{expected}")
    void = sum(r.get("void", 0) for r in rows)
    if void:
        lines.append(f"{void} answers were void (failed calls) and left out of the accuracies")
    worst = max(r["std"] for r in rows)
    lines.append(f"largest std: {worst:.2f} points (ArxivRoll reports under 1 point over 32 seeds)")
    return "\n".join(lines)


@contextlib.contextmanager
def _held_warnings(name: str) -> Iterator[list[str]]:
    """The warnings logger ``name`` logs meanwhile, held back (not shown) and listed."""
    held: list[str] = []

    class Hold(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            held.append(record.getMessage())

    logger, handler = logging.getLogger(name), Hold(logging.WARNING)
    propagate, logger.propagate = logger.propagate, False
    logger.addHandler(handler)
    try:
        yield held
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(prog="skate scp", description=__doc__,
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
    s.add_argument("--players", action="append", default=None, metavar="COHORT",
                   help="a conf/players option (simulated, fake_local, ...) or an override such as "
                        "'players.llm=[{name: m, model: openai/m, api_base: URL}]' (repeatable; default simulated)")
    s.add_argument("--out", type=Path, default=None, help="CSV of every seed's accuracies (optional)")
    s.add_argument("--runs", type=Path, default=None, metavar="DIR",
                   help="keep each seed's run folder here (DIR/seed-000, ...); default: a temporary folder")
    s.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="Hydra-style overrides of the game's config, e.g. players=fake_local llm.cache_dir=/tmp/c")
    a = sub.add_parser("arxiv", help="fetch recent arXiv papers (HTML full text) into a documents folder")
    arxiv.add_arguments(a)
    args, extra = ap.parse_known_args(argv)
    if extra:  # overrides after the options: stability's, and only key=value ones
        if args.command != "stability" or any(e.startswith("-") or "=" not in e for e in extra):
            ap.error(f"unrecognized arguments: {' '.join(extra)}")
        args.overrides = [*args.overrides, *extra]
    if args.command == "arxiv":
        return arxiv.main_from_args(args)
    if args.command == "stability":
        # The game's warnings (an old corpus) follow the table; an error stays one line.
        with _held_warnings("skate.games.scp.rules") as warnings:
            try:
                chosen = [o for o in args.overrides if o.split("=", 1)[0] == "players"]
                players = [*(args.players or []), *chosen] or "simulated"
                overrides = [o for o in args.overrides if o not in chosen]
                rows, per_seed = stability(args.docs_dir, args.seeds, args.per_doc, players, args.types,
                                           overrides=overrides, runs_dir=args.runs)
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
        for message in warnings:
            print(f"{PROG}: warning: {message}", file=sys.stderr)
        return 0
    try:
        summary = build_benchmark(args.docs_dir, args.out, seed=args.seed,
                                  per_doc=args.per_doc, types=args.types)
    except UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(summary)
    return 0
