"""skate's command line: ``skate [overrides...]`` plays a game; ``skate <command> ...`` runs a tool.

Every tool is one module of this package (or, for a game's own tools, of its game's package), and
one entry of :data:`COMMANDS`; ``skate --help`` lists them. ``python -m skate.<tool>`` keeps
working where users already type it: those modules are thin aliases of the commands here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

# name -> (where its main is, "module:function"; what it does, in one line). The function takes
# the command's arguments (argv without the command) and returns an exit status.
COMMANDS: dict[str, tuple[str, str]] = {
    "play": ("skate.cli.play:main", "play a game (Hydra overrides; resume=RUN_DIR continues a stopped run)"),
    "rate": ("skate.cli.rate:main", "rate a finished run again, another way, with no model call"),
    "report": ("skate.cli.report:main", "plots, tables and an HTML page for a run or a sweep"),
    "export": ("skate.cli.export:main", "a run's tasks (or a built SCP benchmark) for lm-eval, Inspect or JSONL"),
    "sensitivity": ("skate.cli.sensitivity:main", "how much p(correct) hangs on the options shown and their order"),
    "optimize": ("skate.cli.optimize:main", "DSPy prompt optimisation of a cohort's models, with no game"),
    "local": ("skate.cli.local:main", "fetch, serve and play small local models (llama.cpp) on loopback"),
    "sandbox": ("skate.cli.sandbox:main", "run one program through the configured sandbox"),
    "leaderboard": ("skate.cli.leaderboard:main", "a standing board: bank finished runs' tasks, refit, show the table"),
    "calibrate": ("skate.cli.calibrate:main", "calibrate an embedder's uniqueness threshold"),
    "scp": ("skate.games.scp.cli:main", "the SCP game's tools: build a benchmark, its stability, arXiv sources"),
    "rugged": ("skate.games.scp.rugged:main", "Rugged Scores (ArxivRoll) from public and private accuracies"),
    "fake-server": ("skate.llm.fake_server:main", "an OpenAI-compatible server of fake players, for trying skate"),
}

# What starts a game rather than a command: Hydra's own flags.
_HYDRA_FLAGS = ("-m", "--multirun", "-c", "--cfg", "--info", "--resolve", "-p", "--package", "--config-dir",
                "-cd", "--config-name", "-cn", "--config-path", "-cp", "--hydra-help", "--run", "-r",
                "--shell-completion", "-sc", "--experimental-rerun")


def usage() -> str:
    width = max(len(n) for n in COMMANDS)
    lines = ["usage: skate [overrides...]            play a game (e.g. skate game=cop rating=trueskill aug=hist_perf)",
             "       skate <command> [arguments...]  run a tool; skate <command> --help for its arguments",
             "", "commands:"]
    lines += [f"  {name:<{width}}  {summary}" for name, (_, summary) in COMMANDS.items()]
    lines += ["", "skate play --help shows the game's config groups and Hydra's options."]
    return "\n".join(lines)


def command_of(argv: Sequence[str]) -> tuple[str, list[str]]:
    """The command ``argv`` asks for and its arguments: a first word that names no command (an
    override such as ``game=cop``, a Hydra flag, nothing) plays a game."""
    if argv and argv[0] in COMMANDS:
        return argv[0], list(argv[1:])
    return "play", list(argv)


def run(name: str, args: list[str]) -> int:
    """Run the command ``name`` on its arguments; its exit status. Every command is
    ``main(argv: list[str]) -> int`` (the Hydra apps, play and optimize, show Hydra their
    arguments themselves)."""
    module, _, function = COMMANDS[name][0].partition(":")
    return int(getattr(importlib.import_module(module), function)(args) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """``skate [command] [arguments...]`` (the console script; ``python -m skate``): the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--help"], ["-h"], ["help"]):
        print(usage())
        return 0
    name, args = command_of(argv)
    if name == "play" and argv[:1] != ["play"] and args:  # no command named: the words must be overrides
        first = args[0]
        if "=" not in first and not first.startswith(_HYDRA_FLAGS):
            what = "an option" if first.startswith("-") else "a command"
            print(f"skate: {first!r} is not {what} (nor an override key=value)\n\n{usage()}", file=sys.stderr)
            return 2
    return run(name, args)
