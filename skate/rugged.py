"""``python -m skate.rugged SCORES.csv [--private-run RUN_DIR] [--out rs.csv]``: Rugged Scores
(ArxivRoll, eq. 1-2).

How far do public benchmarks overestimate a model compared with private ones? SCORES.csv has
one row per (model, benchmark) with the columns ``model, benchmark, kind, domain, score``:
``kind`` is ``public`` or ``private`` and ``score`` is an accuracy in [0, 1].

Per model, the benchmarks of one kind in one domain are first averaged into one value. A
domain that then has both a public and a private value is a *matched* domain; the remaining
public-only and private-only domains are *unmatched*. With d(a, b) = (a - b) / (a + b):

    RS_I = (2 / N_p) * sum over the N_p matched domains of d(pub, pri)
           + 2 * d(mean of unmatched public values, mean of unmatched private values)

The first term is 0 when there is no matched domain, the second is 0 when either unmatched
side is empty. d(0, 0) is taken as 0 (no gap between two zero accuracies). Positive means
the model looks better on public benchmarks than on private ones.

* ``rs1_abs``: RS_I on the accuracies.
* ``rs1_rel``: RS_I on ranks. Each benchmark ranks the models that have it from the bottom
  (worst = 1, best = number of such models, ties share their average rank, as
  ``scipy.stats.rankdata(method="average")``), so larger is better as with accuracy. Ranks
  are taken per benchmark, before the per-domain averaging.
* ``rs2``: sample standard deviation (divisor n - 1) of the model's per-benchmark private
  accuracies -- every private benchmark counts once, the domain averages are NOT used here;
  NaN with fewer than two private benchmarks. ``rs2_norm`` = ``rs2`` / mean of those same
  accuracies (NaN when that mean is 0).

Sources. ArxivRoll's rugged scores have two sources that do not always agree: the paper
(section 2.3, eq. 1-2; "the paper" below) and the authors' code (``rs.py`` in
github.com/liangzid/ArxivRoll, read at commit 012a4a0; "rs.py" below). Where they differ, each
choice here names the source it follows and says what the other does. None of rs.py's own
choices is offered as an option here (yet): the numbers are the ones described above.

* Pairing per domain: a domain's benchmarks of one kind are averaged first and N_p counts
  matched domains. Follows rs.py, which averages each domain's public benchmarks and its
  private (SCP) benchmarks into one pair per domain; the paper pairs single benchmarks (N_p
  benchmark pairs). Unlike rs.py, a domain with no public score is unmatched here (rs.py still
  pairs it, with 0 as its public value), and a benchmark has one domain (rs.py lists one public
  benchmark under two domains).
* Unmatched term: the means of the unmatched per-domain values. Follows neither: the paper and
  rs.py average unmatched benchmarks one by one (and rs.py's own script leaves both unmatched
  lists empty: it fills the public one, then replaces it with empty lists, so its published
  scores have no unmatched term). With one benchmark per domain all three agree.
* Degenerate cases, all this module's own: the second term is 0 when either unmatched side is
  empty (the paper leaves 0/0 undefined; rs.py sets that term to 0 only when the unmatched
  private mean is 0, so unmatched private benchmarks without unmatched public ones give it -2);
  the first term is 0 without a matched domain and d(0, 0) is 0 (both undefined in the paper;
  rs.py fails there with a division by zero).
* The 2/N_p factor and the factor 2 on the unmatched term: the paper's, and rs.py's (it
  averages doubled gaps).
* ``rs1_rel``: ranks per benchmark, worst = 1, ties averaged, larger = better, then averaged
  per domain. The paper lets the metric be a model's rank among all models on a benchmark,
  which the per-benchmark ranks follow; it does not say which way ranks run, so the direction
  is this module's (the one accuracy has). rs.py works on the per-domain averages and computes
  no ranks: for each domain's averaged values it takes the argsort over models (row i then holds
  1 + the index of the model in the i-th lowest place, not model i's rank), reverses the order
  of the domains rather than of the models (apparently meant to put the best first), and
  credits row i to model i, ties in argsort's order. Its relative RS-I is therefore not a
  function of a model's own ranks, and ``rs1_rel`` does not reproduce it.
* ``rs2`` over every private benchmark. Follows the paper (eq. 2 sums over the private
  benchmarks); rs.py takes the standard deviation of the per-domain private means (with any
  unmatched private benchmarks one by one). Divisor n - 1: follows rs.py (``ddof=1``); the
  paper's text calls RS_II a "standard variance" and eq. 2 is the square root of the summed
  squared deviations with no divisor, its mean written as a plain sum (evidently a typo).
* ``rs2_norm`` = ``rs2`` / the mean of the same values: the paper's RS_II / mean. rs.py's
  normalised RS-II differs: its two RS-II functions append the paired private values to the
  same per-model lists, so the normalised one (run second in its script) sees every paired
  value twice; the mean is unchanged but the deviation with divisor n - 1 is not, so its
  normalised score is not its RS-II over its mean.

The private side from an SCP run (``--private-run RUN_DIR``, :func:`private_from_run`): a
finished ``game=scp`` run folder gives one private benchmark per question type and domain,
named ``scp-<type>/<domain>`` (e.g. ``scp-cloze/typing``; the domain is also its ``domain``),
scored for each player by its mean p(correct) over that group's tasks, void estimates left out
(a player with only void estimates in a group has no score there). These are the accuracies of
the run's report section "Accuracy by type and domain" (``accuracy_by_group.csv``, key
``type×domain``). SCORES.csv then holds the public side; its own private rows, if any, are kept
and count like the run's (a benchmark name the run also gives is refused as a duplicate).
Model names must match the run's player names: a model of SCORES.csv that is not a player and
has no private row there is refused, naming the players; a player absent from SCORES.csv has
only private benchmarks, so its RS_I terms are 0 and only ``rs2``/``rs2_norm`` say something.
The run must be finished (its log ends with ``run_end``) and its tasks must carry ``type`` and
``domain`` groups, else it is bad input.

Exit status: 0 done; 2 bad input (one line ``skate.rugged: <message>`` on stderr).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from skate.games.scp import SCPGame
from skate.report.data import group_accuracy, load_run

COLUMNS = ("model", "benchmark", "kind", "domain", "score")
KINDS = ("public", "private")
OUTPUT_COLUMNS = ("model", "rs1_abs", "rs1_rel", "rs2", "rs2_norm")


def _few(items, limit: int = 5) -> str:
    items = [str(x) for x in items]
    more = f" (and {len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def validate(df: pd.DataFrame, require_private: bool = True) -> pd.DataFrame:
    """A cleaned copy of a scores table (text stripped, ``kind`` lower-cased, ``score`` a float),
    or ``ValueError`` saying what to fix. ``require_private=False`` checks one side of a table
    whose private rows come from elsewhere: then neither an empty table nor a model without a
    private benchmark is an error."""
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"missing column(s) {_few(missing)}; the header must name "
                         f"{', '.join(COLUMNS)}")
    df = df.loc[:, list(COLUMNS)].copy()
    if df.empty:
        if not require_private:
            return df.astype({"score": float}).reset_index(drop=True)
        raise ValueError("no score rows; add one row per (model, benchmark)")
    for col in ("model", "benchmark", "kind", "domain"):
        df[col] = df[col].astype("string").str.strip()
        blank = df[col].isna() | (df[col] == "")
        if blank.any():
            raise ValueError(f"empty {col} in {int(blank.sum())} row(s); fill it in")
    df["kind"] = df["kind"].str.lower()
    bad_kind = sorted(set(df.loc[~df["kind"].isin(KINDS), "kind"]))
    if bad_kind:
        raise ValueError(f"kind must be 'public' or 'private', got {_few(repr(k) for k in bad_kind)}")
    raw = df["score"]
    df["score"] = pd.to_numeric(raw, errors="coerce").astype(float)
    nonnum = df["score"].isna()
    if nonnum.any():
        where = [f"({m}, {b}): {s!r}" for m, b, s in
                 zip(df.loc[nonnum, "model"], df.loc[nonnum, "benchmark"], raw[nonnum])]
        raise ValueError(f"missing or non-numeric score for {_few(where)}; give an accuracy in [0, 1]")
    out_of_range = (df["score"] < 0) | (df["score"] > 1)
    if out_of_range.any():
        where = [f"({m}, {b}): {s:g}" for m, b, s in
                 zip(df.loc[out_of_range, "model"], df.loc[out_of_range, "benchmark"],
                     df.loc[out_of_range, "score"])]
        raise ValueError(f"score outside [0, 1] for {_few(where)}; give accuracies as fractions "
                         f"(e.g. 0.73, not 73)")
    dup = df.duplicated(["model", "benchmark"], keep=False)
    if dup.any():
        pairs = sorted(set(zip(df.loc[dup, "model"], df.loc[dup, "benchmark"])))
        raise ValueError(f"duplicated (model, benchmark) rows: {_few(f'({m}, {b})' for m, b in pairs)}; "
                         f"keep one score per pair")
    for col in ("kind", "domain"):
        mixed = df.groupby("benchmark")[col].nunique()
        mixed = sorted(mixed[mixed > 1].index)
        if mixed:
            raise ValueError(f"benchmark(s) {_few(mixed)} have more than one {col} across models; "
                             f"each benchmark must have a single {col}")
    has_private = df.loc[df["kind"] == "private", "model"].unique()
    no_private = [m for m in df["model"].unique() if m not in set(has_private)]
    if no_private and require_private:
        raise ValueError(f"model(s) {_few(no_private)} have no private benchmark; add at least "
                         f"one private score per model or drop the model")
    return df.reset_index(drop=True)


def read_scores(path: str | Path, require_private: bool = True) -> pd.DataFrame:
    """Read and validate SCORES.csv (see :func:`validate` for ``require_private``);
    ``ValueError`` says what to fix."""
    path = Path(path)
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError, IsADirectoryError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a readable CSV ({first})") from None
    df.columns = [str(c).strip() for c in df.columns]
    try:
        return validate(df, require_private)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


GAME = SCPGame.spec.name
GROUP_KEYS = SCPGame.spec.groups  # the task groups an SCP run's tasks carry: question type, document domain


def private_from_run(run_dir: str | Path) -> pd.DataFrame:
    """The private rows of a finished SCP run folder, columns as SCORES.csv: one per player and
    question type × domain with a non-void estimate, ``model`` the player, ``benchmark``
    ``scp-<type>/<domain>``, ``kind`` ``private``, ``domain`` the domain and ``score`` the
    player's mean p(correct) over that group's tasks (void estimates left out). Players in
    roster order, then groups sorted by type and domain. ``ValueError`` when the folder is not a
    finished run or its tasks carry no type and domain groups (not an SCP run)."""
    run_dir = Path(run_dir)
    what = "give the folder of a finished SCP run (game=scp)"
    if not (run_dir / "events.jsonl").is_file():
        raise ValueError(f"{run_dir} has no events.jsonl: {what}")
    try:
        d = load_run(run_dir)
    except ValueError as exc:  # ReportError (a RunLogError, a ValueError)
        raise ValueError(f"{exc}; {what}") from None
    if not d.finished:
        raise ValueError(f"{run_dir} is not a finished run (its event log has no run_end); {what}")
    missing = [k for k in GROUP_KEYS if k not in d.group_keys]
    if missing:
        raise ValueError(f"{run_dir}: its tasks carry no {' and '.join(missing)} group(s), so it is "
                         f"not an SCP run; {what}")
    acc = group_accuracy(d, GROUP_KEYS).dropna(subset=["accuracy"])
    if acc.empty:
        raise ValueError(f"{run_dir}: no task with type and domain has a non-void estimate; {what}")
    return pd.DataFrame({"model": acc["player"].astype(str),
                         "benchmark": f"{GAME}-" + acc[list(GROUP_KEYS)].astype(str).agg("/".join, axis=1),
                         "kind": "private", "domain": acc["domain"].astype(str),
                         "score": acc["accuracy"].astype(float)}, columns=list(COLUMNS)).reset_index(drop=True)


def scores_with_run(scores: str | Path, run_dir: str | Path) -> pd.DataFrame:
    """SCORES.csv (the public side, and any private rows of its own) with the private rows of
    an SCP run folder (:func:`private_from_run`), validated together; ``ValueError`` says what
    to fix."""
    table = read_scores(scores, require_private=False)
    private = private_from_run(run_dir)
    with_private = set(private["model"]) | set(table.loc[table["kind"] == "private", "model"])
    strangers = [m for m in table["model"].unique() if m not in with_private]
    if strangers:
        players = list(dict.fromkeys(private["model"]))
        raise ValueError(f"{scores}: model(s) {_few(strangers)} are not players of the run {run_dir} and "
                         f"have no private score of their own; model names must match the run's "
                         f"players ({_few(players, 10)})")
    try:
        return validate(pd.concat([table, private], ignore_index=True))
    except ValueError as exc:
        raise ValueError(f"{scores} with the private rows of {run_dir}: {exc}") from None


def _gap(pub: float, pri: float) -> float:
    total = pub + pri
    return 0.0 if total == 0 else (pub - pri) / total


def _rs1(rows: pd.DataFrame, value: str) -> float:
    """RS_I for one model's rows, taking the metric from column ``value``."""
    by_domain = rows.groupby(["kind", "domain"])[value].mean()
    pub = by_domain["public"] if "public" in by_domain.index.get_level_values(0) else pd.Series(dtype=float)
    pri = by_domain["private"] if "private" in by_domain.index.get_level_values(0) else pd.Series(dtype=float)
    matched = pub.index.intersection(pri.index)
    paired = 2.0 * float(np.mean([_gap(pub[d], pri[d]) for d in matched])) if len(matched) else 0.0
    pub_only, pri_only = pub.drop(matched), pri.drop(matched)
    unmatched = (2.0 * _gap(float(pub_only.mean()), float(pri_only.mean()))
                 if len(pub_only) and len(pri_only) else 0.0)
    return paired + unmatched


def rugged_scores(df: pd.DataFrame) -> pd.DataFrame:
    """Per model (in order of first appearance): ``model, rs1_abs, rs1_rel, rs2, rs2_norm``.
    See the module docstring for the formulas."""
    from scipy.stats import rankdata  # slow import, kept off the bad-input path

    df = validate(df)
    df["rank"] = df.groupby("benchmark")["score"].transform(
        lambda s: rankdata(s.to_numpy(), method="average"))
    out = []
    for model, rows in df.groupby("model", sort=False):
        private = rows.loc[rows["kind"] == "private", "score"].to_numpy()
        rs2 = float(np.std(private, ddof=1)) if len(private) >= 2 else math.nan
        mean = float(private.mean())
        rs2_norm = rs2 / mean if mean > 0 and not math.isnan(rs2) else math.nan
        out.append({"model": model, "rs1_abs": _rs1(rows, "score"), "rs1_rel": _rs1(rows, "rank"),
                    "rs2": rs2, "rs2_norm": rs2_norm})
    return pd.DataFrame(out, columns=list(OUTPUT_COLUMNS))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m skate.rugged", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scores", type=Path, help="CSV: model, benchmark, kind, domain, score")
    ap.add_argument("--private-run", type=Path, metavar="RUN_DIR",
                    help="a finished game=scp run folder giving the private side (one benchmark per "
                         "question type and domain); SCORES.csv then holds the public side")
    ap.add_argument("--out", type=Path, help="also write the table to this CSV")
    args = ap.parse_args(argv)
    try:
        scores = (read_scores(args.scores) if args.private_run is None
                  else scores_with_run(args.scores, args.private_run))
        table = rugged_scores(scores)
    except ValueError as exc:
        print(f"skate.rugged: {exc}", file=sys.stderr)
        return 2
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    if args.out is not None:
        try:
            table.to_csv(args.out, index=False)
        except OSError as exc:
            print(f"skate.rugged: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"\nsaved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
