"""``skate leaderboard <import|add|refresh|refit|show> ...``: a standing board of models over the tasks
players wrote (:mod:`skate.leaderboard`).

``--store`` (or ``SKATE_LEADERBOARD``) names the board: a file path (SQLite, made on first use;
default ``leaderboard.db``) or a database URL (``postgresql://user@host/db``).

Exit status: 0 done; 2 bad usage or a store or run that cannot be used (one line saying why).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from skate.cli import parse_with_overrides
from skate.cli.compose import edits_of
from skate.errors import ConfigError
from skate.leaderboard.bank import describe_import, import_runs
from skate.leaderboard.fit import refit
from skate.leaderboard.page import board_text, write_page
from skate.leaderboard.place import add, describe_placed
from skate.leaderboard.renew import describe, refresh
from skate.leaderboard.settings import AddSettings, RefreshSettings, settings_of
from skate.leaderboard.store import Store, StoreError
from skate.runlog.files import LogWriteError

DEFAULT_STORE = "leaderboard.db"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="skate leaderboard", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    store = argparse.ArgumentParser(add_help=False)  # every subcommand's
    store.add_argument(
        "--store",
        default=os.environ.get("SKATE_LEADERBOARD", DEFAULT_STORE),
        help=f"the board: a path (SQLite) or a database URL (default: $SKATE_LEADERBOARD or {DEFAULT_STORE})",
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="{import,add,refresh,refit,show}")
    imp = sub.add_parser("import", parents=[store], help="bank the tasks and responses of finished runs, then refit")
    imp.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    imp.add_argument("--no-refit", action="store_true", help="bank only; refit later with skate leaderboard refit")
    placing = sub.add_parser(
        "add",
        parents=[store],
        help="place a new model: banked tasks chosen for it, then tasks of its own",
        description="Place MODEL (provider/model, or simulated:SKILL) on a game's board. "
        "Overrides (key=value) change the game's settings or the model client's "
        "(llm.cache_dir=..., llm.budget_usd=...).",
    )
    placing.add_argument("model")
    placing.add_argument("overrides", nargs="*", help="e.g. llm.cache_dir=cache")
    placing.add_argument("--name", default=None, help="its name on the board (default: the model's last part)")
    placing.add_argument("--api-base", default=None, help="its OpenAI-compatible server, e.g. http://localhost:8000/v1")
    placing.add_argument(
        "--api-key-env", default=None, help="the variable holding its key (default: the provider's usual)"
    )
    placing.add_argument("--game", default=None, help="the game's board (default: the bank's only game)")
    d = AddSettings()
    placing.add_argument("--budget", type=int, default=d.budget, help=f"calls at most (default {d.budget})")
    placing.add_argument(
        "--confidence",
        type=float,
        default=d.confidence,
        help=f"stop once its order against both neighbours is this sure (default {d.confidence})",
    )
    placing.add_argument(
        "--samples",
        type=int,
        default=d.samples,
        help="answer samples per banked task (default: as the game's own estimator draws them)",
    )
    placing.add_argument(
        "--max-placed",
        type=int,
        default=d.max_placed,
        help=f"a banked task is shown to at most this many models being added (default {d.max_placed})",
    )
    placing.add_argument(
        "--set-rounds",
        type=int,
        default=d.set_rounds,
        help=f"rounds in which it sets tasks of its own (default {d.set_rounds}; 0: none)",
    )
    placing.add_argument(
        "--neighbours",
        type=int,
        default=d.neighbours,
        help=f"incumbents nearest it that answer its tasks (default {d.neighbours})",
    )
    placing.add_argument(
        "--set-samples",
        type=int,
        default=d.set_samples,
        help=f"answer samples per player on each of its tasks (default {d.set_samples})",
    )
    placing.add_argument(
        "--runs-dir", type=Path, default=d.runs_dir, help=f"where its setting games go (default {d.runs_dir})"
    )
    placing.add_argument("--seed", type=int, default=d.seed)
    rd = RefreshSettings()
    fresh = sub.add_parser(
        "refresh",
        parents=[store],
        help="retire old or over-exposed tasks; play a short game where the bank runs low",
        description="Retire the game's tasks that are too old or answered by too many models, "
        "then, for each one-logit band of ability with too few tasks left to ask, "
        "play a short game among the incumbents nearest it, bank it and refit. "
        "Overrides (key=value) change the game's settings.",
    )
    fresh.add_argument("overrides", nargs="*")
    fresh.add_argument("--game", default=None, help="the game's bank (default: the bank's only game)")
    fresh.add_argument(
        "--max-age-days",
        type=float,
        default=rd.max_age_days,
        help=f"tasks older than this retire (default {rd.max_age_days:g})",
    )
    fresh.add_argument(
        "--max-exposure",
        type=int,
        default=rd.max_exposure,
        help=f"tasks answered by this many models retire (default {rd.max_exposure})",
    )
    fresh.add_argument(
        "--min-per-band",
        type=int,
        default=rd.min_per_band,
        help=f"a band with fewer tasks left to ask is thin (default {rd.min_per_band})",
    )
    fresh.add_argument(
        "--players",
        type=int,
        default=rd.players,
        help=f"incumbents that play a thin band's game (default {rd.players})",
    )
    fresh.add_argument("--rounds", type=int, default=rd.rounds, help=f"rounds of that game (default {rd.rounds})")
    fresh.add_argument("--runs-dir", type=Path, default=rd.runs_dir, help=f"where its games go (default {rd.runs_dir})")
    fresh.add_argument("--seed", type=int, default=rd.seed)
    sub.add_parser("refit", parents=[store], help="fit every model and task again (anchored to the last board)")
    show = sub.add_parser("show", parents=[store], help="print the board, overall or for one game")
    show.add_argument("--game", default=None, help="one game's board (default: overall, then each game)")
    show.add_argument(
        "--html",
        type=Path,
        default=None,
        metavar="OUT_DIR",
        help="also write the whole board (every game) as one static page, OUT_DIR/index.html",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parse_with_overrides(parser(), argv)
    try:
        with Store.open(args.store, create=args.command == "import") as store:
            if args.command == "import":
                refused = 0
                for got in import_runs(store, args.runs):
                    if isinstance(got, StoreError):  # one line; the other runs are still banked
                        print(f"skate leaderboard: {got}", file=sys.stderr)
                        refused += 1
                    else:
                        print(describe_import(got))
                if store.refit_due() and not args.no_refit:
                    refit(store)
                    print(f"refitted the board in {args.store}")
                if refused:
                    return 2
            elif args.command == "add":
                settings, edits = settings_of(AddSettings, vars(args)), edits_of(args.overrides)
                placed = add(
                    store, args.model, args.name, settings, edits, api_base=args.api_base, api_key_env=args.api_key_env
                )
                print(describe_placed(placed))
            elif args.command == "refresh":
                refreshed = refresh(store, settings_of(RefreshSettings, vars(args)), edits_of(args.overrides))
                print("\n".join(describe(refreshed)))
            elif args.command == "refit":
                refit(store)
                print(f"refitted the board in {args.store}")
            else:
                print(board_text(store, args.game, where=args.store))
                if args.html is not None:
                    print(f"wrote {write_page(store, args.html)}")
    except (StoreError, ConfigError, LogWriteError) as exc:  # LogWriteError: the game an add plays, on a full disk
        again = "; what is stored is kept: free some space there and run the same command again"
        print(f"skate leaderboard: {exc}{again if isinstance(exc, LogWriteError) else ''}", file=sys.stderr)
        return 2
    return 0
