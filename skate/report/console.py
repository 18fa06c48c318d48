"""What ``skate play`` prints once a game is over, read from the run's typed summary: the ratings
table and the run's counts (:func:`summary_text`), and where a stopped run stopped and how to
resume it (:func:`stopped_text`); :func:`print_summary` prints both and gives the exit status."""

from __future__ import annotations

import sys
from pathlib import Path

from skate.loop import GameResult, Summary
from skate.optimize.config import format_results
from skate.runlog import events as ev
from skate.runlog.files import format_table


def summary_text(result: GameResult, out_dir: Path) -> str:
    """The ratings table (with the tasks each player set), the counts, the sandbox's and the
    models' usage, the prompt optimisation, and where the results are."""
    s = result.summary
    unrated = [r["player"] for r in result.table if r.get("no_data")]
    if result.table and len(unrated) == len(result.table):
        lines = [f"no ranking: nobody was rated ({s.tasks} valid tasks from {s.attempts} attempts)"]
    else:
        lines = [format_table(result.table, s.tasks_by_setter)]
        if unrated:
            lines.append(f"never rated: {', '.join(unrated)} (no rated game: not placed, whatever its prior score)")
    reads = f"{s.read_estimates} answers read from the models' probabilities, " if s.read_estimates else ""
    lines.append(
        f"\n{s.tasks} valid tasks from {s.attempts} attempts, {reads}{s.samples} answer samples, "
        f"{s.updates} rating updates in {s.elapsed_s:.1f}s"
    )
    lines += game_text(s)
    if s.sandbox_executions:
        rate = s.sandbox_executions / max(s.elapsed_s, 1e-9)
        lines.append(f"sandbox executions: {s.sandbox_executions} ({rate:.1f} per second)")
    if s.usage is not None:
        u = s.usage["total"]
        lines.append(
            f"model calls: {u['calls']} for {u['samples']} samples ({u['cached']} from the cache, "
            f"{u['void']} void, {u['retries']} retries); tokens {u['prompt_tokens']} in"
            + (
                f" ({u['cached_prompt_tokens']} from the server's prompt cache)"
                if u.get("cached_prompt_tokens")
                else ""
            )
            + f", {u['completion_tokens']} out"
            + (f" ({u['thinking_tokens']} of them thinking)" if u.get("thinking_tokens") else "")
            + f"; cost ${u['cost_usd']:.4f}"
        )
        if u.get("cut_thinking"):
            who = [p for p, x in s.usage["players"].items() if x.get("cut_thinking")]
            lines.append(
                f"replies cut at max_tokens while the model was still thinking: {u['cut_thinking']} "
                f"({', '.join(who)}): no answer each; raise max_tokens, or lower reasoning_effort or "
                "thinking_budget, for these players (players.llm)"
            )
        if u.get("refused"):
            lines.append(
                f"requests refused for a parameter a model does not take, sent again without it: "
                f"{u['refused']} (events.jsonl: llm_adjusted)"
            )
    if s.optimization:
        lines.append("\nprompt optimisation before the game:")
        lines.append(format_results([ev.Optimized(**dict(r)) for r in s.optimization]))
    if s.prompt_optimization:
        lines.append("\nrating change from optimised prompts (optimised - default, 95% interval):")
        lines += [
            f"  {r['model']:<20} {r['gain']:+8.2f}  [{r['lo']:+.2f}, {r['hi']:+.2f}]  "
            f"(optimised {r['optimized']:.2f}, default {r['default']:.2f})"
            for r in s.prompt_optimization
        ]
    lines.append(f"results: {out_dir}")
    return "\n".join(lines)


def game_text(s: Summary) -> list[str]:
    """What the tasks told: the share that separated the players, players who answered at or below
    a guess, and, for a game that set few valid tasks (or none, or none from some setter), its
    rejections by reason with what to try for each."""
    lines = []
    if s.separating is not None and s.tasks:
        lines.append(
            f"{s.separating} of {s.tasks} valid tasks separated the players ({100 * s.separating / s.tasks:.0f} %: "
            "some two players' p(correct) more than 0.05 apart)"
        )
    if s.at_guess:
        lines.append(
            f"at or below a guess on every task: {', '.join(s.at_guess)}; ordered by nothing but failures "
            "to answer, not by what it knows"
        )
    rejected = s.rejections or {}
    short = [n for n, k in s.tasks_by_setter.items() if k == 0 and n in rejected]
    if rejected and (not s.tasks or short or s.tasks < 0.5 * max(1, s.attempts)):
        by_reason: dict[str, dict[str, int]] = {}
        for setter, reasons in rejected.items():
            for reason, n in reasons.items():
                by_reason.setdefault(reason, {})[setter] = n
        lines.append("rejected attempts by reason:" + ("" if s.tasks else " (no valid task was set)"))
        for reason, who in sorted(by_reason.items(), key=lambda kv: -sum(kv[1].values())):
            setters = ", ".join(f"{p} {n}" for p, n in sorted(who.items(), key=lambda kv: -kv[1]))
            hint = (s.hints or {}).get(reason)
            lines.append(f"  {reason} {sum(who.values())} ({setters})" + (f": {hint}" if hint else ""))
    return lines


# The exit status of a run stopped because a model did not answer within llm.outage_wait_s:
# sysexits.h's EX_TEMPFAIL ("a temporary failure: try again later"), so that a script can tell it
# from a finished run (0) and resume it later.
OUTAGE_STATUS = 75
_OUTAGE = "ModelUnreachable: "


def stopped_text(summary: Summary, out_dir: Path) -> str | None:
    """One line for a run that stopped before its end (a signal, its budget, a model that did not
    answer): the round, the tasks rated, and the command that resumes it; None for a run that
    played to its end."""
    if not summary.stopped:
        return None
    extra = (
        " llm.budget_usd=<more>"
        if "Budget" in summary.stopped
        else " once it answers"
        if summary.stopped.startswith(_OUTAGE)
        else ""
    )
    why = summary.stopped.removeprefix("Interrupted: ").removeprefix(_OUTAGE)
    return (
        f"skate: {why} in round {summary.stopped_round or 0}; "
        f"{summary.tasks} tasks rated. Resume with: skate resume={out_dir}{extra}"
    )


def print_summary(result: GameResult, out_dir: Path, print_table: bool) -> int:
    """The summary on standard output (with ``print_table``), the stopped run's line on standard
    error; the exit status (:data:`OUTAGE_STATUS` for a run stopped by a model that did not answer,
    else 0)."""
    if print_table:
        print(summary_text(result, out_dir))
    stopped = stopped_text(result.summary, out_dir)
    if stopped:
        print(stopped, file=sys.stderr)
    return OUTAGE_STATUS if (result.summary.stopped or "").startswith(_OUTAGE) else 0
