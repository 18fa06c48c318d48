"""``skate rugged SCORES.csv [--private-run RUN_DIR] [--out rs.csv] [--plot [rs.png]]
[--pairing ...] [--unmatched ...] [--rank ...] [--rs2-over ...] [--rs2-divisor ...] [--rs2-norm ...]``:
Rugged Scores (ArxivRoll, eq. 1-2). docs/rugged.md says the same for readers of the docs.

How far do public benchmarks overestimate a model compared with private ones? SCORES.csv has
one row per (model, benchmark) with the columns ``model, benchmark, kind, domain, score``:
``kind`` is ``public`` or ``private`` and ``score`` is an accuracy in [0, 1].

By default, per model, the benchmarks of one kind in one domain are first averaged into one
value. A domain that then has both a public and a private value is a *matched* domain; the
remaining public-only and private-only domains are *unmatched*. With d(a, b) = (a - b) / (a + b):

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
github.com/liangzid/ArxivRoll, read at commit 012a4a0, where rs.py last changed in b55b920;
"rs.py" below). Where they differ in method, the way the defaults above do not take is an
option, named for the source it follows; the defaults stay as they are, so a run without options
gives the numbers it always gave. Two options, ``--rank argsort`` and ``--rs2-norm twice``, are
what rs.py's code computes rather than what it appears to mean; they are offered so that its
published numbers can be reproduced, and say so. Where rs.py fails or makes a number out of
missing data (a division by zero, an empty list counted as 0), nothing is offered; the list
"Not offered" below says what happens here instead.

* ``--pairing domain|benchmark`` (what RS_I's first term pairs). ``domain``, the default,
  follows rs.py, which averages each domain's public benchmarks and its private (SCP)
  benchmarks into one pair per domain: N_p counts matched domains. ``benchmark`` follows the
  paper, which pairs single benchmarks of one domain: every public benchmark of a matched domain
  is paired with every private benchmark of that domain, N_p counting these pairs. The paper
  does not say how a domain with several benchmarks of one kind is paired; all pairs is this
  module's reading, and with one benchmark of each kind per domain it is the paper's.
* ``--unmatched domains|benchmarks`` (what the unmatched term averages). ``domains``, the
  default, is this module's own: the means of the unmatched per-domain values. ``benchmarks``
  follows the paper and rs.py, which average the unmatched benchmarks one by one. (rs.py's own
  script leaves both unmatched lists empty -- it fills the public one, then replaces it with
  empty lists -- so its published scores have no unmatched term.) With one benchmark per
  unmatched domain both agree.
* ``--rank rank|argsort`` (the metric of ``rs1_rel``). ``rank``, the default: ranks per
  benchmark as above, then paired and averaged as the accuracies are. The paper lets the metric
  be a model's rank among all models on a benchmark, which these follow; it does not say which
  way ranks run, so the direction (the one accuracy has) is this module's. ``argsort`` follows
  rs.py's arithmetic, which computes no ranks although its comment says so. It takes RS_I's
  four inputs (paired public values, paired private values, unmatched public values, unmatched
  private values) as tables with one row per model, in the output's order, and one column per
  pair or unmatched domain (benchmark), in order of first appearance in the table, domain
  averages summed in table order as rs.py sums them (argsort makes a last-bit difference a
  different position); in each column it puts 1 + argsort (the model indices from the lowest
  value up, ties in numpy's order), reverses the order of the columns (apparently meant to put
  the best first), and gives row i to model i. A model's value is then not a function of its
  own standing, so this reproduces rs.py's numbers, not a rank; it needs every model to have the
  same pairs and unmatched columns, as rs.py's table does (else bad input).
* ``--rs2-over benchmarks|domains`` (the values of RS_II). ``benchmarks``, the default,
  follows the paper (eq. 2 sums over the private benchmarks): every private benchmark once.
  ``domains`` follows rs.py: each domain's private average once. (rs.py adds unmatched private
  benchmarks one by one; its own script has none, and with one private benchmark per unmatched
  domain the two agree.)
* ``--rs2-divisor n-1|none`` (RS_II's divisor). ``n-1``, the default, follows rs.py
  (``ddof=1``); NaN below two values. ``none`` is the paper's eq. 2 as printed: the square root
  of the summed squared deviations, with no divisor (0 for one value). The paper's text calls
  RS_II a "standard variance" and writes eq. 2's mean as a plain sum, so the missing divisor may
  be a slip; the mean is always the mean here (the plain sum, evidently a typo, is not offered).
* ``--rs2-norm once|twice`` (what ``rs2_norm`` is over). ``once``, the default, follows the
  paper: RS_II over the mean of the same values. ``twice`` follows rs.py, whose two RS_II
  functions extend the same per-model lists, so the normalised one (run second) sees every
  private value of a matched domain twice and the unmatched ones once; its deviation and its
  mean are both taken over that list. Without unmatched private values the mean is unchanged
  but the deviation with divisor n - 1 is not, so rs.py's normalised score is not its RS_II over
  its mean. ``rs2`` is the same either way.

As rs.py computes them: ``--unmatched benchmarks --rank argsort --rs2-over domains --rs2-norm
twice``; as the paper writes them: ``--pairing benchmark --unmatched benchmarks --rs2-divisor none``.

Not offered (rs.py's behaviour is a fault or a property of its data, not a choice):

* No matched domain, or d(a, b) with a + b = 0: rs.py divides by zero (the paper leaves both
  undefined). Here the first term is 0 without a pair and d(0, 0) is 0.
* An empty unmatched side: rs.py sets the unmatched term to 0 only when the unmatched private
  mean is 0, so unmatched private benchmarks without unmatched public ones give -2 (an empty
  public mean counted as accuracy 0). Here the term is 0 when either side is empty, for every
  choice above, ``--rank argsort`` included.
* A domain with no public score: rs.py still pairs it, with 0 as its public value; here it is
  an unmatched private domain.
* One benchmark under two domains (rs.py lists ``mmlu_pro_math`` under math and stat): a
  benchmark has one domain here; give the other as a second benchmark name.

``--plot [FILE]`` draws the scores (:func:`plot`), one column per model: RS_I bars, RS_II bars
and the model's private accuracies, one point per private benchmark coloured by its domain, with
their range (a grey bar) and the mean of the values RS_II is over (a black line; with
``--rs2-over domains`` those are the domain averages, drawn as diamonds). The file is FILE
(``.png``, ``.pdf`` or ``.svg``) or, given ``--plot`` alone, the ``--out`` CSV's name with
``.png``. Its title names the choices when any differs from the defaults, as does a last line
of the printed output. matplotlib is imported only then.

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

Exit status: 0 done; 2 bad input or a bad option (one line ``skate.rugged: <message>`` on
stderr).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, fields
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
        raise ValueError(f"missing column(s) {_few(missing)}; the header must name {', '.join(COLUMNS)}")
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
        where = [
            f"({m}, {b}): {s!r}"
            for m, b, s in zip(df.loc[nonnum, "model"], df.loc[nonnum, "benchmark"], raw[nonnum], strict=False)
        ]
        raise ValueError(f"missing or non-numeric score for {_few(where)}; give an accuracy in [0, 1]")
    out_of_range = (df["score"] < 0) | (df["score"] > 1)
    if out_of_range.any():
        where = [
            f"({m}, {b}): {s:g}"
            for m, b, s in zip(
                df.loc[out_of_range, "model"],
                df.loc[out_of_range, "benchmark"],
                df.loc[out_of_range, "score"],
                strict=False,
            )
        ]
        raise ValueError(f"score outside [0, 1] for {_few(where)}; give accuracies as fractions (e.g. 0.73, not 73)")
    dup = df.duplicated(["model", "benchmark"], keep=False)
    if dup.any():
        pairs = sorted(set(zip(df.loc[dup, "model"], df.loc[dup, "benchmark"], strict=False)))
        raise ValueError(
            f"duplicated (model, benchmark) rows: {_few(f'({m}, {b})' for m, b in pairs)}; keep one score per pair"
        )
    for col in ("kind", "domain"):
        kinds = df.groupby("benchmark")[col].nunique()
        mixed = sorted(kinds[kinds > 1].index)
        if mixed:
            raise ValueError(
                f"benchmark(s) {_few(mixed)} have more than one {col} across models; "
                f"each benchmark must have a single {col}"
            )
    has_private = df.loc[df["kind"] == "private", "model"].unique()
    no_private = [m for m in df["model"].unique() if m not in set(has_private)]
    if no_private and require_private:
        raise ValueError(
            f"model(s) {_few(no_private)} have no private benchmark; add at least "
            f"one private score per model or drop the model"
        )
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
        raise ValueError(
            f"{run_dir}: its tasks carry no {' and '.join(missing)} group(s), so it is not an SCP run; {what}"
        )
    acc = group_accuracy(d, GROUP_KEYS).dropna(subset=["accuracy"])
    if acc.empty:
        raise ValueError(f"{run_dir}: no task with type and domain has a non-void estimate; {what}")
    return pd.DataFrame(
        {
            "model": acc["player"].astype(str),
            "benchmark": f"{GAME}-" + acc[list(GROUP_KEYS)].astype(str).agg("/".join, axis=1),
            "kind": "private",
            "domain": acc["domain"].astype(str),
            "score": acc["accuracy"].astype(float),
        },
        columns=list(COLUMNS),
    ).reset_index(drop=True)


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
        raise ValueError(
            f"{scores}: model(s) {_few(strangers)} are not players of the run {run_dir} and "
            f"have no private score of their own; model names must match the run's "
            f"players ({_few(players, 10)})"
        )
    try:
        return validate(pd.concat([table, private], ignore_index=True))
    except ValueError as exc:
        raise ValueError(f"{scores} with the private rows of {run_dir}: {exc}") from None


# Each choice: its values, the default (this module's behaviour before the choices existed) first.
CHOICES = {
    "pairing": ("domain", "benchmark"),
    "unmatched": ("domains", "benchmarks"),
    "rank": ("rank", "argsort"),
    "rs2_over": ("benchmarks", "domains"),
    "rs2_divisor": ("n-1", "none"),
    "rs2_norm": ("once", "twice"),
}


@dataclass(frozen=True)
class Choices:
    """How the scores are computed where the paper and rs.py differ (module docstring, Sources).
    A value outside :data:`CHOICES` is a ``ValueError``."""

    pairing: str = "domain"
    unmatched: str = "domains"
    rank: str = "rank"
    rs2_over: str = "benchmarks"
    rs2_divisor: str = "n-1"
    rs2_norm: str = "once"

    def __post_init__(self) -> None:
        for f in fields(self):
            value, allowed = getattr(self, f.name), CHOICES[f.name]
            if value not in allowed:
                raise ValueError(f"{_flag(f.name)} must be {' or '.join(allowed)}, got {value!r}")

    def changed(self) -> dict[str, str]:
        """The choices that differ from the defaults, as {flag: value}."""
        return {_flag(f.name): getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != f.default}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _gap(pub: float, pri: float) -> float:
    total = pub + pri
    return 0.0 if total == 0 else (pub - pri) / total


def _rs1(pairs: list[tuple[float, float]], pub_only: list[float], pri_only: list[float]) -> float:
    """RS_I from its inputs: the paired (public, private) values and the unmatched values."""
    paired = 2.0 * float(np.mean([_gap(a, b) for a, b in pairs])) if pairs else 0.0
    unmatched = (
        2.0 * _gap(float(pd.Series(pub_only, dtype=float).mean()), float(pd.Series(pri_only, dtype=float).mean()))
        if pub_only and pri_only
        else 0.0
    )
    return paired + unmatched


Inputs = tuple[dict, dict, dict]  # RS_I's inputs: {pair: (public, private)}, {unmatched key: value} x 2


def _rs1_inputs(rows: pd.DataFrame, value: str, choices: Choices, plain_sums: bool = False) -> Inputs:
    """One model's RS_I inputs from column ``value``, keyed by domain (domain pairing, unmatched
    domains) or benchmark (a pair of them when pairing benchmarks), keys sorted. ``plain_sums``:
    domain averages summed in table order, as rs.py sums them, so that values tied there are
    tied here (argsort turns a difference in the last bit into a different position)."""
    pub, pri = rows[rows["kind"] == "public"], rows[rows["kind"] == "private"]
    by = rows.groupby(["kind", "domain"])[value]
    means = by.agg(lambda v: sum(v.tolist()) / len(v)) if plain_sums else by.mean()
    kinds = means.index.get_level_values(0)
    pub_mean, pri_mean = (means[kind] if kind in kinds else pd.Series(dtype=float) for kind in KINDS)
    matched = sorted(set(pub_mean.index) & set(pri_mean.index))
    if choices.pairing == "domain":
        pairs = {d: (float(pub_mean[d]), float(pri_mean[d])) for d in matched}
    else:
        pairs = {
            (a.benchmark, b.benchmark): (float(getattr(a, value)), float(getattr(b, value)))
            for d in matched
            for a in pub[pub["domain"] == d].itertuples()
            for b in pri[pri["domain"] == d].itertuples()
        }
        pairs = dict(sorted(pairs.items()))

    def unmatched(side: pd.DataFrame, means: pd.Series) -> dict:
        if choices.unmatched == "domains":
            return {d: float(v) for d, v in means.drop(matched).items()}
        side = side[~side["domain"].isin(matched)].sort_values("benchmark")
        return dict(zip(side["benchmark"], side[value].astype(float), strict=False))

    return pairs, unmatched(pub, pub_mean), unmatched(pri, pri_mean)


def _argsort_positions(values: np.ndarray) -> np.ndarray:
    """rs.py's 'relative' values of a models x columns table: column j of the result holds
    1 + the argsort (model indices, lowest value first) of column (last - j)."""
    out = np.empty(values.shape)
    last = values.shape[1] - 1
    for j in range(values.shape[1]):
        out[:, last - j] = np.argsort(values[:, j]) + 1
    return out


def _rs1_argsort(inputs: dict[str, Inputs], df: pd.DataFrame, choices: Choices) -> dict[str, float]:
    """``rs1_rel`` as rs.py computes it (module docstring, ``--rank argsort``), per model of
    ``inputs`` (model -> :func:`_rs1_inputs`), columns in order of first appearance in ``df``."""
    models = list(inputs)
    seen = {col: {name: i for i, name in enumerate(df[col].unique())} for col in ("domain", "benchmark")}
    by_pairs = seen["domain" if choices.pairing == "domain" else "benchmark"]
    by_unmatched = seen["domain" if choices.unmatched == "domains" else "benchmark"]
    orders = (
        lambda k: tuple(by_pairs[n] for n in k) if isinstance(k, tuple) else by_pairs[k],
        by_unmatched.__getitem__,
        by_unmatched.__getitem__,
    )
    columns = [sorted(part, key=order) for part, order in zip(inputs[models[0]], orders, strict=False)]
    for model in models[1:]:
        odd = [
            name
            for name, part, cols, order in zip(
                ("pairs", "unmatched public", "unmatched private"), inputs[model], columns, orders, strict=False
            )
            if sorted(part, key=order) != cols
        ]
        if odd:
            raise ValueError(
                f"--rank argsort needs every model to have the same pairs and unmatched "
                f"benchmarks (rs.py's table is complete), but {model} and {models[0]} differ "
                f"in their {' and '.join(odd)}; use --rank rank or complete the table"
            )

    def table(part: int, pick=lambda v: v) -> np.ndarray:
        t = np.array([[pick(inputs[m][part][c]) for c in columns[part]] for m in models], dtype=float)
        return _argsort_positions(t.reshape(len(models), len(columns[part])))

    pub, pri = table(0, lambda v: v[0]), table(0, lambda v: v[1])
    pub_only, pri_only = table(1), table(2)
    return {
        m: _rs1(list(zip(pub[i], pri[i], strict=False)), list(pub_only[i]), list(pri_only[i]))
        for i, m in enumerate(models)
    }


def _spread(values: np.ndarray, divisor: str) -> float:
    if divisor == "n-1":
        return float(np.std(values, ddof=1)) if len(values) >= 2 else math.nan
    return math.sqrt(float(np.sum((values - values.mean()) ** 2)))


def _rs2(rows: pd.DataFrame, choices: Choices) -> tuple[float, float]:
    """``rs2`` and ``rs2_norm`` for one model's rows."""
    private = rows[rows["kind"] == "private"]
    matched = set(private["domain"]) & set(rows.loc[rows["kind"] == "public", "domain"])
    if choices.rs2_over == "benchmarks":
        values, domains = private["score"].to_numpy(), private["domain"].to_numpy()
    else:
        means = private.groupby("domain", sort=False)["score"].mean()
        values, domains = means.to_numpy(), means.index.to_numpy()
    rs2 = _spread(values, choices.rs2_divisor)
    if choices.rs2_norm == "twice":
        values = np.concatenate([values, values[[d in matched for d in domains]]])
    spread, mean = _spread(values, choices.rs2_divisor), float(values.mean())
    return rs2, (spread / mean if mean > 0 and not math.isnan(spread) else math.nan)


def rugged_scores(df: pd.DataFrame, choices: Choices | None = None) -> pd.DataFrame:
    """Per model (in order of first appearance): ``model, rs1_abs, rs1_rel, rs2, rs2_norm``.
    See the module docstring for the formulas and ``choices`` (default: :class:`Choices`())."""
    choices = choices or Choices()
    df = validate(df)
    if choices.rank == "rank":
        from scipy.stats import rankdata  # slow import, kept off the bad-input path

        df["rank"] = df.groupby("benchmark")["score"].transform(lambda s: rankdata(s.to_numpy(), method="average"))
    models = {str(model): rows for model, rows in df.groupby("model", sort=False)}
    if choices.rank == "rank":
        rel = {
            m: _rs1(*(list(part.values()) for part in _rs1_inputs(rows, "rank", choices))) for m, rows in models.items()
        }
    else:
        rel = _rs1_argsort(
            {m: _rs1_inputs(rows, "score", choices, plain_sums=True) for m, rows in models.items()}, df, choices
        )
    out = []
    for model, rows in models.items():
        rs2, rs2_norm = _rs2(rows, choices)
        absolute = _rs1(*(list(part.values()) for part in _rs1_inputs(rows, "score", choices)))
        out.append({"model": model, "rs1_abs": absolute, "rs1_rel": rel[model], "rs2": rs2, "rs2_norm": rs2_norm})
    return pd.DataFrame(out, columns=list(OUTPUT_COLUMNS))


PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def plot(table: pd.DataFrame, scores: pd.DataFrame, path: str | Path, choices: Choices | None = None) -> Path:
    """Draw the scores of :func:`rugged_scores` (``table``) over the models, one panel each:
    RS_I (``rs1_abs``, ``rs1_rel``), RS_II (``rs2``, ``rs2_norm``) and the private accuracies of
    ``scores`` that RS_II spreads over (each private benchmark a point coloured by its domain, with
    the range as a grey bar and the mean as a black line; with ``--rs2-over domains`` also each
    domain's average, a diamond). Written to ``path``; returns it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    choices = choices or Choices()
    path = Path(path)
    models = list(table["model"])
    x = np.arange(len(models))
    private = scores[scores["kind"] == "private"]
    domains = list(dict.fromkeys(private["domain"]))
    cmap = plt.get_cmap("tab10" if len(domains) <= 10 else "tab20")
    colour = {d: cmap(i % cmap.N) for i, d in enumerate(domains)}
    fig, axes = plt.subplots(
        3, 1, sharex=True, figsize=(max(6.0, 1.5 + 0.8 * len(models)), 8.5), height_ratios=(1, 1, 1.3)
    )
    for ax, columns, title in (
        (axes[0], ("rs1_abs", "rs1_rel"), "RS_I (> 0: better on public than on private)"),
        (axes[1], ("rs2", "rs2_norm"), "RS_II (spread of the private accuracies)"),
    ):
        for k, column in enumerate(columns):
            values = table[column].to_numpy(dtype=float)
            bars = ax.bar(x + (k - 0.5) * 0.38, np.nan_to_num(values), width=0.36, label=column)
            ax.bar_label(bars, labels=["n/a" if math.isnan(v) else f"{v:.2f}" for v in values], fontsize=7)
        ax.axhline(0, color="black", lw=0.8)
        ax.margins(y=0.15)
        ax.set_title(title, fontsize=10, loc="left")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax = axes[2]
    for i, model in enumerate(models):
        own = private[private["model"] == model]
        if own.empty:
            continue
        ax.bar(
            i,
            own["score"].max() - own["score"].min(),
            bottom=own["score"].min(),
            width=0.5,
            color="lightgrey",
            label="range" if i == 0 else None,
        )
        offsets = np.linspace(-0.18, 0.18, len(own)) if len(own) > 1 else np.zeros(1)
        ax.scatter(
            i + offsets,
            own["score"],
            s=22,
            zorder=3,
            edgecolors="white",
            linewidths=0.5,
            c=[colour[d] for d in own["domain"]],
        )
        spread_over = own["score"]
        if choices.rs2_over == "domains":
            spread_over = own.groupby("domain", sort=False)["score"].mean()
            ax.scatter(
                np.full(len(spread_over), i + 0.32),
                spread_over,
                marker="D",
                s=26,
                zorder=3,
                edgecolors="black",
                linewidths=0.6,
                c=[colour[d] for d in spread_over.index],
                label="domain average" if i == 0 else None,
            )
        ax.hlines(
            spread_over.mean(),
            i - 0.3,
            i + 0.3,
            color="black",
            lw=1.5,
            label="mean (RS_II's values)" if i == 0 else None,
        )
    handles, labels = ax.get_legend_handles_labels()
    for d in domains:
        handles.append(ax.scatter([], [], s=22, color=colour[d]))
        labels.append(d)
    ax.set_ylim(-0.03, 1.03)
    ax.set_ylabel("accuracy")
    ax.set_title("private benchmarks: one point each, coloured by domain", fontsize=10, loc="left")
    ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    tilt = len(models) > 5 or max(len(m) for m in models) > 12
    ax.set_xticks(x, models, rotation=30 if tilt else 0, ha="right" if tilt else "center")
    changed = ", ".join(f"{k} {v}" for k, v in choices.changed().items())
    fig.suptitle("Rugged Scores" + (f" ({changed})" if changed else ""), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line on stderr, as bad input, not argparse's usage block
        raise _UsageError(message)


HELP = {
    "pairing": "what RS_I pairs: each matched domain's averages (domain, rs.py; default) or every "
    "public with every private benchmark of a domain (benchmark, the paper)",
    "unmatched": "the unmatched term's means: of the per-domain averages (domains; default) or of "
    "the benchmarks one by one (benchmarks, the paper and rs.py)",
    "rank": "rs1_rel's metric: ranks per benchmark (rank; default) or rs.py's argsort positions of "
    "its inputs (argsort, not ranks; needs every model to have the same benchmarks)",
    "rs2_over": "RS_II over every private benchmark (benchmarks, the paper; default) or over each "
    "domain's private average (domains, rs.py)",
    "rs2_divisor": "RS_II's divisor: n - 1 (n-1, rs.py; default) or none, the paper's eq. 2 as printed",
    "rs2_norm": "rs2_norm over the same values once (once, the paper; default) or with each matched "
    "domain's private values twice (twice, rs.py's side effect)",
}


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(prog="skate rugged", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scores", type=Path, help="CSV: model, benchmark, kind, domain, score")
    ap.add_argument(
        "--private-run",
        type=Path,
        metavar="RUN_DIR",
        help="a finished game=scp run folder giving the private side (one benchmark per "
        "question type and domain); SCORES.csv then holds the public side",
    )
    ap.add_argument("--out", type=Path, help="also write the table to this CSV")
    ap.add_argument(
        "--plot",
        type=Path,
        nargs="?",
        const=True,
        metavar="FILE",
        help="also draw the scores to FILE (.png, .pdf or .svg); --plot alone: the --out CSV's name with .png",
    )
    for name, allowed in CHOICES.items():
        ap.add_argument(_flag(name), choices=allowed, default=allowed[0], help=HELP[name])
    try:
        args = ap.parse_args(argv)
        choices = Choices(**{name: getattr(args, name) for name in CHOICES})
        if args.plot is True:
            if args.out is None:
                raise _UsageError("--plot without a file name needs --out (the plot goes beside it as .png)")
            args.plot = args.out.with_suffix(".png")
        if args.plot is not None and args.plot.suffix.lower() not in PLOT_SUFFIXES:
            raise _UsageError(f"--plot {args.plot}: the file must end in {', '.join(PLOT_SUFFIXES)}")
    except _UsageError as exc:
        print(f"skate.rugged: {exc} (see --help)", file=sys.stderr)
        return 2
    try:
        scores = (
            read_scores(args.scores) if args.private_run is None else scores_with_run(args.scores, args.private_run)
        )
        table = rugged_scores(scores, choices)
    except ValueError as exc:
        print(f"skate.rugged: {exc}", file=sys.stderr)
        return 2
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    saved = 0
    for path, write in (
        (args.out, lambda p: table.to_csv(p, index=False)),
        (args.plot, lambda p: plot(table, scores, p, choices)),
    ):
        if path is None:
            continue
        try:
            write(path)
        except OSError as exc:
            print(f"skate.rugged: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(("" if saved else "\n") + f"saved {path}")
        saved += 1
    if choices.changed():
        print("\nchoices: " + ", ".join(f"{k} {v}" for k, v in choices.changed().items()))
    return 0
