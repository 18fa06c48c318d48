"""skate's command line: ``skate [overrides...]`` plays a game; ``skate <command> ...`` runs a tool.

Every tool is one module of this package and one entry of :data:`TOOLS`; a game's own tools
(``skate scp``, ``skate rugged``) are the commands it registers with the game
(:func:`skate.games.register`, ``commands=``), read from the game registry by :func:`commands`.
``skate --help`` lists them all.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Iterator, Sequence

# skate's own tools: name -> (where its main is, "module:function"; what it does, in one line). The
# function takes the command's arguments (argv without the command) and returns an exit status.
TOOLS: dict[str, tuple[str, str]] = {
    "play": ("skate.cli.play:main", "play a game (Hydra overrides; resume=RUN_DIR continues a stopped run)"),
    "rate": ("skate.cli.rate:main", "rate a finished run again, another way, with no model call"),
    "report": ("skate.cli.report:main", "plots, tables and an HTML page for a run or a sweep"),
    "view": ("skate.cli.view:main", "every task, answer, rejected attempt and reply of a run, in the browser"),
    "export": ("skate.cli.export:main", "a run's tasks (or a built SCP benchmark) for lm-eval, Inspect or JSONL"),
    "sensitivity": ("skate.cli.sensitivity:main", "how much p(correct) hangs on the options shown and their order"),
    "optimize": ("skate.cli.optimize:main", "DSPy prompt optimisation of a cohort's models, with no game"),
    "local": ("skate.cli.local:main", "fetch, serve and play small local models (llama.cpp) on loopback"),
    "sandbox": ("skate.cli.sandbox:main", "run one program through the configured sandbox"),
    "leaderboard": ("skate.cli.leaderboard:main", "a standing board: bank finished runs' tasks, refit, show the table"),
    "calibrate": ("skate.cli.calibrate:main", "calibrate an embedder's uniqueness threshold"),
    "fake-server": ("skate.llm.fake_server:main", "an OpenAI-compatible server of fake players, for trying skate"),
}


def commands() -> dict[str, tuple[str, str]]:
    """Every command: skate's own tools, then each registered game's (``Game.commands``, games in
    name order). Reading the games' commands imports every game, so only a word that is no tool of
    skate's own asks for them; a game's command named like another command is an error naming both."""
    from skate.games import load_games  # every game package: only when a game's command is asked for

    out = dict(TOOLS)
    owner = dict.fromkeys(TOOLS, "skate")
    for game, cls in sorted(load_games().items()):
        for name, entry in cls.commands.items():
            if name in out:
                raise ValueError(
                    f"game={game} registers the command {name!r}, which {owner[name]} already has: "
                    "rename it in the game's register(..., commands=...)"
                )
            out[name], owner[name] = entry, f"game={game}"
    return out


def usage() -> str:
    every = commands()
    width = max(len(n) for n in every)
    lines = [
        "usage: skate [overrides...]            play a game (e.g. skate game=cop rating=trueskill aug=hist_perf)",
        "       skate <command> [arguments...]  run a tool; skate <command> --help for its arguments",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {summary}" for name, (_, summary) in every.items()]
    lines += ["", "skate play --help shows the game's config groups and Hydra's options."]
    return "\n".join(lines)


def command_of(argv: Sequence[str]) -> tuple[str, list[str]]:
    """The command ``argv`` asks for and its arguments: a first word that names no command (an
    override such as ``game=cop``, a Hydra flag, nothing) plays a game."""
    if argv and (argv[0] in TOOLS or ("=" not in argv[0] and not argv[0].startswith("-") and argv[0] in commands())):
        return argv[0], list(argv[1:])
    return "play", list(argv)


def run(name: str, args: list[str]) -> int:
    """Run the command ``name`` on its arguments; its exit status. Every command is
    ``main(argv: list[str]) -> int`` (the Hydra apps, play and optimize, show Hydra their
    arguments themselves)."""
    module, _, function = (TOOLS[name] if name in TOOLS else commands()[name])[0].partition(":")
    return int(getattr(importlib.import_module(module), function)(args) or 0)


@contextlib.contextmanager
def hydra_argv(prog: str, argv: Sequence[str]) -> Iterator[None]:
    """A Hydra app reads its arguments from ``sys.argv``: the command's own, for the app's time
    only (the process's are put back however the app ends: a return, ``--help``'s exit, an error)."""
    saved = sys.argv
    sys.argv = [prog, *argv]
    try:
        yield
    finally:
        sys.argv = saved


def take_overrides(args: argparse.Namespace, extra: Sequence[str]) -> list[str]:
    """Hydra-style overrides (``key=value``, ``+key=value``, ``~key``) among ``extra``, the words
    ``parse_known_args`` left, join ``args.overrides`` in the order given, where the command takes
    overrides (argparse takes a positional list in one run only, so those that follow an option
    come back unparsed); the words left over are returned."""
    if not hasattr(args, "overrides"):
        return list(extra)
    overrides = [e for e in extra if not e.startswith("-") and ("=" in e or e.startswith("~"))]
    args.overrides = [*(args.overrides or []), *overrides]
    return [e for e in extra if e not in overrides]


def parse_with_overrides(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the arguments of a command that takes overrides anywhere among its options
    (:func:`take_overrides`); anything else it does not know is refused, one line, as argparse
    refuses it."""
    args, extra = parser.parse_known_args(argv)
    unknown = take_overrides(args, extra)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


# What starts a game rather than a command: Hydra's own flags.
_HYDRA_FLAGS = (
    "-m",
    "--multirun",
    "-c",
    "--cfg",
    "--info",
    "--resolve",
    "-p",
    "--package",
    "--config-dir",
    "-cd",
    "--config-name",
    "-cn",
    "--config-path",
    "-cp",
    "--hydra-help",
    "--run",
    "-r",
    "--shell-completion",
    "-sc",
    "--experimental-rerun",
)


def main(argv: Sequence[str] | None = None) -> int:
    """``skate [command] [arguments...]`` (the console script; ``python -m skate``): the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--help"], ["-h"], ["help"]):
        print(usage())
        return 0
    name, args = command_of(argv)
    if name == "play" and argv[:1] != ["play"] and args:  # no command named: the words must be overrides
        first = args[0]
        if "=" not in first and not first.startswith(_HYDRA_FLAGS) and first != "--estimate":
            what = "an option" if first.startswith("-") else "a command"
            print(f"skate: {first!r} is not {what} (nor an override key=value)\n\n{usage()}", file=sys.stderr)
            return 2
    return run(name, args)
