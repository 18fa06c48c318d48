"""``skate scp``: SCP benchmarks built from fresh documents (issue 12); the work is
:mod:`skate.tools.scp.study`'s.

* ``build DOCS_DIR --out bench.jsonl [--seed N] [--per-doc K] [--types T1,T2]``: up to K checked
  questions of each type per document of the folder (``shipped``: the corpus in the package), one
  JSON object per line with its document's date and the build date; one summary line. Same
  arguments, same file (on the same day, or any day with ``SOURCE_DATE_EPOCH`` set).
* ``stability DOCS_DIR --seeds K [--per-doc K] [--players COHORT] [--out per_seed.csv] [--runs DIR]
  [KEY=VALUE ...]``: the benchmark rebuilt with seeds 0..K-1, each played as ``game=scp`` plays a
  built one (``estimator=greedy``: one answer per question and player, ArxivRoll's scoring) by any
  ``conf/players`` cohort (``simulated``, the default; ``fake_local``) or one given as overrides
  (``players.simulated=[] 'players.llm=[...]'``), other overrides after it (``llm.cache_dir=...``).
  Per player: the mean accuracy over the seeds and its spread in points, and for simulated players
  their true skill and the spread of the expected accuracy. ArxivRoll reports a standard
  deviation under 1 point over 32 seeds.
* ``arxiv --category CAT --from YYYY-MM-DD --to YYYY-MM-DD --out DIR [--max N]``: recent arXiv
  papers (HTML full text) into a documents folder that ``build`` reads.

Exit status: 0 done; 2 bad input, an unknown cohort, a model or arXiv unreachable (one line
``skate.scp: <message>`` on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

from skate.cli import parse_with_overrides
from skate.cli.compose import compose_config, describe_config_error
from skate.errors import ConfigError
from skate.games.scp.config import SCPConfig
from skate.games.scp.questions import TYPES
from skate.settings.config import SkateConfig
from skate.settings.options import to_settings
from skate.tools.scp import arxiv
from skate.tools.scp.study import (
    OWNED,
    STUDY,
    STUDY_VALUES,
    UsageError,
    build_benchmark,
    format_stability,
    held_warnings,
    stability,
    write_per_seed,
)

PROG = "skate.scp"


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one ``skate.scp: ...`` line and exit status 2."""

    def error(self, message: str):
        print(f"{PROG}: {message} (see skate scp {self._sub_name()}--help)", file=sys.stderr)
        sys.exit(2)

    def _sub_name(self) -> str:
        parts = self.prog.split()
        return f"{parts[-1]} " if len(parts) > 2 else ""


def _types(value: str) -> tuple[str, ...]:
    chosen = tuple(t.strip() for t in value.split(",") if t.strip())
    unknown = [t for t in chosen if t not in TYPES]
    if not chosen or unknown:
        raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {','.join(TYPES)}, got {value!r}")
    return tuple(dict.fromkeys(chosen))


def _cohort(players: str | Sequence[str]) -> list[str]:
    """The overrides naming a cohort: a ``conf/players`` option (``simulated``, ``fake_local``) or
    Hydra-style overrides (``players.llm=[...]``, ``players.simulated=[]``), one or several."""
    given = [players] if isinstance(players, str) else list(players)
    out = []
    for item in given:
        item = str(item).strip()
        if not item:
            raise UsageError(
                "--players is empty: give a conf/players option (e.g. simulated, fake_local) or "
                "overrides such as 'players.llm=[{name: m, model: openai/m, api_base: URL}]'"
            )
        out.append(item if "=" in item else f"players={item}")
    return out


def study_settings(players: Sequence[str], overrides: Sequence[str]) -> SkateConfig:
    """The settings each seed's game is played from, as :func:`skate.tools.scp.study.study_settings`
    makes them, with the cohort (``--players``) and the command line's overrides composed over them
    (typed, not yet checked: the study sets the benchmark's folder, seeds and types)."""
    for o in overrides:
        key = str(o).split("=", 1)[0].lstrip("+~")
        if key in OWNED:
            raise UsageError(
                f"{key} is set by the stability study itself (DOCS_DIR, --seeds, --per-doc, --types): "
                f"drop the override {o!r}"
            )
    chosen = _cohort(players)
    study = [f"{k}={v}" for k, v in STUDY.items()] + [
        f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in STUDY_VALUES.items()
    ]
    try:
        return to_settings(compose_config([*study, *chosen, *overrides]))
    except (HydraException, OmegaConfBaseException, ConfigError) as exc:
        raise UsageError(f"cannot load the players config {' '.join(chosen)!r}: {describe_config_error(exc)}") from None


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(prog="skate scp", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    docs = _Parser(add_help=False)  # what build and stability build a benchmark from
    docs.add_argument(
        "docs_dir", metavar="DOCS_DIR", help="folder of documents, or 'shipped' for the corpus in the package"
    )
    docs.add_argument(
        "--per-doc",
        type=int,
        default=SCPConfig.per_doc,
        help=f"questions of each type per document, at most (default {SCPConfig.per_doc})",
    )
    docs.add_argument(
        "--types", type=_types, default=TYPES, help=f"comma-separated subset of {','.join(TYPES)} (default all)"
    )
    b = sub.add_parser("build", parents=[docs], help="build a JSONL benchmark from a folder of documents")
    b.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    b.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    s = sub.add_parser(
        "stability", parents=[docs], help="spread of each simulated player's accuracy over benchmark seeds"
    )
    s.add_argument("--seeds", type=int, default=32, help="benchmark seeds 0..K-1 (default 32)")
    s.add_argument(
        "--players",
        action="append",
        default=None,
        metavar="COHORT",
        help="a conf/players option (simulated, fake_local, ...) or an override such as "
        "'players.llm=[{name: m, model: openai/m, api_base: URL}]' (repeatable; default simulated)",
    )
    s.add_argument("--out", type=Path, default=None, help="CSV of every seed's accuracies (optional)")
    s.add_argument(
        "--runs",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep each seed's run folder here (DIR/seed-000, ...); default: a temporary folder",
    )
    s.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="Hydra-style overrides of the game's config, e.g. players=fake_local llm.cache_dir=/tmp/c",
    )
    a = sub.add_parser("arxiv", help="fetch recent arXiv papers (HTML full text) into a documents folder")
    arxiv.add_arguments(a)
    args = parse_with_overrides(ap, argv)  # stability's overrides may follow its options too
    if args.command == "arxiv":
        return arxiv.main_from_args(args)
    if args.command == "stability":
        # The game's warnings (an old corpus) follow the table; an error stays one line.
        with held_warnings("skate.games.scp.rules") as warnings:
            try:
                chosen = [o for o in args.overrides if o.split("=", 1)[0] == "players"]
                settings = study_settings(
                    [*(args.players or []), *chosen] or ["simulated"], [o for o in args.overrides if o not in chosen]
                )
                rows, per_seed = stability(
                    args.docs_dir, settings, args.seeds, args.per_doc, args.types, runs_dir=args.runs
                )
                if args.out is not None:
                    write_per_seed(per_seed, args.out)
            except UsageError as exc:
                print(f"{PROG}: {exc}", file=sys.stderr)
                return 2
        print(format_stability(rows, args.seeds))
        for message in warnings:
            print(f"{PROG}: warning: {message}", file=sys.stderr)
        return 0
    try:
        summary = build_benchmark(args.docs_dir, args.out, seed=args.seed, per_doc=args.per_doc, types=args.types)
    except UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(summary)
    return 0
