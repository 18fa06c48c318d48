"""The SCP game's tools behind ``skate scp`` (its command line: :mod:`skate.cli.scp`): a benchmark
built from a folder of fresh documents and written as JSON lines (:func:`build_benchmark`), and
the spread of each player's accuracy over the seeds the benchmark is built with
(:func:`stability`, ArxivRoll's stability study, every seed's rows written by :func:`write_per_seed`),
from typed settings (:func:`study_settings`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from skate.errors import ConfigError
from skate.games.base import GameEnv
from skate.games.scp.config import SCPConfig
from skate.games.scp.corpus import docs_folder, load_folder
from skate.games.scp.questions import TYPES, build, check
from skate.games.scp.rules import SCPGame, build_date, doc_dates, query_of, question_of_cached
from skate.games.scp.simulated import key_of
from skate.players.simulated import build_simulated
from skate.runner import run_game
from skate.sandbox import NoSandbox, SandboxUnavailable
from skate.settings.config import SkateConfig
from skate.settings.options import composed, settle, to_settings


class UsageError(Exception):
    """Bad input; the message says what to fix."""


def build_benchmark(
    docs_dir: str, out: Path, seed: int = 0, per_doc: int = SCPConfig.per_doc, types: tuple[str, ...] = TYPES
) -> str:
    """Build, check and write the benchmark; the summary line. Raises :class:`UsageError`."""
    if per_doc < 1:
        raise UsageError(f"--per-doc must be at least 1, got {per_doc}")
    try:
        docs = load_folder(docs_folder(docs_dir))
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    questions = build(docs, per_doc, seed, types=types)
    if not questions:
        raise UsageError(
            f"no question could be built from {docs_dir} (documents too short or "
            "mostly markup?); add longer prose documents"
        )
    failing = [q.id for q in questions if check(q)]
    if failing:
        raise UsageError(
            f"{len(failing)} of {len(questions)} questions fail their check "
            f"(first: {failing[0]}); nothing written - please report this bug"
        )
    built = build_date()
    by_id = {d.id: d for d in docs}
    records = [{**q.to_json(), **doc_dates(by_id.get(q.doc)), "built": built} for q in questions]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"cannot write {out}: {parent} is not an existing folder; create it or choose another --out")
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}; choose another --out") from exc
    by_type = Counter(q.type for q in questions)
    by_domain = Counter(q.domain for q in questions)
    types_part = ", ".join(f"{t} {by_type[t]}" for t in types)
    domains_part = ", ".join(f"{d} {n}" for d, n in sorted(by_domain.items()))
    dates = sorted(r["doc_date"] for r in records if r.get("doc_date"))
    sources = Counter(r["doc_date_source"] for r in records if r.get("doc_date"))
    sources_part = ", ".join(f"{k} {n}" for k, n in sorted(sources.items()))
    dated = f"documents dated {dates[0]} to {dates[-1]} ({sources_part}); " if dates else ""
    return (
        f"wrote {len(questions)} questions from {len(docs)} documents "
        f"(by type: {types_part}; by domain: {domains_part}; {dated}built {built}) to {out}"
    )


# What the study plays: one round of the built benchmark, ArxivRoll's scoring (one greedy answer per
# question and player), Elo ratings (written, not used: the cheapest to update), no logger or report.
STUDY = {"game": "scp", "estimator": "greedy", "rating": "elo", "logger": "none"}
STUDY_VALUES = {"game.mode": "built", "game.rounds": 1, "report": False}
# The game's settings the study sets itself: the game and its mode above, what :func:`stability`
# sets from its own arguments (the documents' folder, the per-document count, the types, the build
# seed), and what would change the questions each seed builds (a benchmark file played instead, a
# sample of the questions): the command line refuses overrides of them.
OWNED = (
    "game",
    "game.mode",
    "game.docs",
    "game.benchmark",
    "game.build_seed",
    "game.per_doc",
    "game.types",
    "game.questions",
)


def study_settings(players: str = "simulated", values: Mapping[str, Any] | None = None) -> SkateConfig:
    """The settings the stability study plays from, typed and not yet checked (the benchmark's
    folder, seeds and types are :func:`stability`'s to set): :data:`STUDY` with the cohort
    ``players`` (a ``conf/players`` option) and ``values`` (``{"llm.cache_dir": ...}``) over it.
    The command line (``skate scp stability``) composes the same from its overrides."""
    return to_settings(composed({**STUDY_VALUES, **(values or {})}, **STUDY, players=players))


def stability(
    docs_dir: str,
    settings: SkateConfig | None = None,
    seeds: int = 32,
    per_doc: int = SCPConfig.per_doc,
    types: tuple[str, ...] = TYPES,
    runs_dir: Path | None = None,
) -> tuple[list[dict], list[dict]]:
    """Rebuild the benchmark with seeds ``0..seeds-1`` and play each one as ``game=scp`` plays a
    built benchmark (:func:`skate.runner.run_game`: the same players, client, cache, preflight and
    estimator), every player answering every question once (``estimator=greedy``, ArxivRoll's
    scoring: one answer at temperature 0); (one row per player with the spread over seeds, one
    row per seed and player).

    ``settings``: what each seed's game is played from (:func:`study_settings`, the simulated
    cohort, by default), its game's documents, per-document count, types and build seed set here.
    ``runs_dir`` keeps each seed's run folder (``seed-000``...); otherwise they go to a temporary
    folder. Accuracies are in points (percent): a seed's accuracy is the mean p(correct) over the
    questions the player answered (void answers, failed calls, left out and counted). For a
    simulated player ``expected`` is the mean over the same questions of its chance of being right
    (``know + (1 - know) / 4``), so its spread is the part that comes from which questions were
    built, without the noise of one answer per question. Raises :class:`UsageError` (one line) for
    bad input, settings that do not check or a model that cannot be reached.
    """
    if seeds < 2:
        raise UsageError(f"--seeds must be at least 2 to measure a spread, got {seeds}")
    if per_doc < 1:
        raise UsageError(f"--per-doc must be at least 1, got {per_doc}")
    folder = docs_folder(docs_dir)
    if not folder.is_dir():
        raise UsageError(f"no such folder: {docs_dir} (give a folder of documents, or 'shipped')")
    settings = study_settings() if settings is None else settings
    if not isinstance(settings.game, SCPConfig):
        raise UsageError(f"the stability study plays game=scp, not game={settings.game.name}")
    game = dataclasses.replace(settings.game, docs=str(folder), per_doc=per_doc, types=list(types))
    roster = list(settings.players.simulated or [])
    names = [p.name for p in roster] + [p.name for p in settings.players.llm or []]
    if not names:
        raise UsageError("the cohort names no players: give one with simulated or language-model players")
    sim_cohort = _sim_cohort(folder, types, per_doc, roster, int(settings.seed)) if roster else {}
    per_seed = []
    with contextlib.ExitStack() as stack:
        base = Path(runs_dir) if runs_dir is not None else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        for seed in range(seeds):
            try:
                played = settle(dataclasses.replace(settings, game=dataclasses.replace(game, build_seed=seed)))
                result = run_game(played, base / f"seed-{seed:03d}")
            except (ConfigError, SandboxUnavailable, ValueError, OSError) as exc:
                raise UsageError(f"seed {seed}: {'; '.join(str(exc).splitlines())}") from None
            per_seed += _seed_rows(seed, names, result.archive, sim_cohort)
    rows = []
    for name in names:
        mine = [r for r in per_seed if r["player"] == name]
        acc = np.array([r["accuracy"] for r in mine])
        row = {
            "player": name,
            "true_skill": None,
            "mean": float(acc.mean()),
            "std": float(acc.std(ddof=1)),
            "min": float(acc.min()),
            "max": float(acc.max()),
            "expected_std": None,
            "void": sum(r["void"] for r in mine),
        }
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
    return {p.name: p for p in build_simulated(roster, game.simulation(GameEnv(sandbox=NoSandbox())), seed)}


def _seed_rows(seed: int, names: list[str], archive: list, sim_cohort: dict[str, Any]) -> list[dict]:
    """One row per player of one seed's game: accuracy over the questions it answered."""
    out = []
    for name in names:
        got = [s.p_correct[name] for s in archive if name in s.p_correct]
        if not got:
            raise UsageError(f"seed {seed}: {name} answered no question (every call failed: is its server up?)")
        row = {
            "seed": seed,
            "player": name,
            "questions": len(archive),
            "void": len(archive) - len(got),
            "accuracy": 100 * float(np.mean(got)),
        }
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


def write_per_seed(per_seed: list[dict], out: Path) -> None:
    """Every seed's row of :func:`stability` (seed, player, questions, void, accuracy, and
    expected for a simulated player) as a CSV file. Raises :class:`UsageError` (one line) where
    ``out`` cannot be written."""
    import pandas as pd  # only when asked for the file

    try:
        pd.DataFrame(per_seed).to_csv(out, index=False)
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from exc


def format_stability(rows: list[dict], seeds: int) -> str:
    head = f"{'player':<14}{'skill':>6}{'mean %':>9}{'std':>7}{'min':>7}{'max':>7}{'std(expected)':>15}"
    lines = [f"accuracy over {seeds} benchmark seeds (one answer per question; points)", head, "-" * len(head)]
    for r in rows:
        skill = f"{r['true_skill']:>6.2f}" if r.get("true_skill") is not None else f"{'-':>6}"
        expected = f"{r['expected_std']:>15.2f}" if r.get("expected_std") is not None else f"{'-':>15}"
        lines.append(
            f"{r['player']:<14}{skill}{r['mean']:>9.1f}{r['std']:>7.2f}{r['min']:>7.1f}{r['max']:>7.1f}{expected}"
        )
    void = sum(r.get("void", 0) for r in rows)
    if void:
        lines.append(f"{void} answers were void (failed calls) and left out of the accuracies")
    worst = max(r["std"] for r in rows)
    lines.append(f"largest std: {worst:.2f} points (ArxivRoll reports under 1 point over 32 seeds)")
    return "\n".join(lines)


@contextlib.contextmanager
def held_warnings(name: str) -> Iterator[list[str]]:
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
