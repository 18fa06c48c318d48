"""Calibrating an embedder's uniqueness threshold (``skate calibrate``; the command line is
:mod:`skate.cli.calibrate`).

The paper set 0.336 for text-embedding-3-small from the distributions of distances between
near-duplicate and distinct tasks (its Figs. 7-8). This does the same for any embedder:

- **near-duplicate pairs**: a CRUXEval program (as a COP task shows it: the function and a
  ``print`` of its call) beside a copy of itself with its identifiers renamed, reformatted
  (``ast.unparse`` and two-space indents), its constants changed (numbers and string letters),
  and combinations of these. Every copy is checked to parse.
- **distinct pairs**: two different CRUXEval programs; and two different tasks of a finished run
  (``--runs RUN_DIR ...``; the tasks a run accepted, so they passed that run's uniqueness test).

For each embedder the distance is 1 - cosine. A pair is *rejected* as a duplicate when its
distance is at most the threshold (the engine accepts a task only above it). The threshold at a
false-rejection rate ``--frr`` is the one that rejects that fraction of the distinct pairs; the
*catch rate* is the fraction of near-duplicate pairs it rejects. The ROC plots the catch rate
against the false-rejection rate over every threshold, with its area (AUC).

Outputs in ``--out``: ``distances.png`` (histograms per embedder with the thresholds marked),
``roc.png``, ``pairs.csv`` (every pair's distance per embedder), ``roc.csv`` and
``calibration.json``; a table on stdout.
"""

from __future__ import annotations

import ast
import csv
import importlib.resources
import io
import json
import keyword
import random
import time
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from skate.embedders.base import build_embedder
from skate.runlog.events import TaskSet, read_run

# It composes the project's config to build each embedder as a game would.
from skate.settings.options import section

NEAR_KINDS = ("renamed", "reformatted", "constants", "renamed+constants", "renamed+reformatted+constants")
_NEW_NAMES = (
    "data",
    "items",
    "value",
    "result",
    "text",
    "count",
    "index",
    "acc",
    "buf",
    "temp",
    "key",
    "seq",
    "total",
    "parts",
    "out",
    "word",
    "num",
    "elem",
    "chars",
    "mapping",
    "step",
    "left",
    "right",
    "cur",
    "prev",
    "flag",
    "limit",
    "target",
    "source",
    "extra",
    "pos",
    "size",
    "head",
    "tail",
    "pair",
)
_NEW_FUNCS = ("solve", "process", "transform", "compute", "helper", "run", "calc", "apply", "handle", "work")


# ------------------------------------------------------------------------- task texts
def load_cruxeval(path: str | Path | None = None) -> list[dict[str, str]]:
    """CRUXEval records (``code``, ``input``, ``id``); the copy shipped with skate by default."""
    if path is None:
        text = (importlib.resources.files("skate") / "games" / "cop" / "data" / "cruxeval.jsonl").read_text()
    else:
        text = Path(path).read_text()
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not records or not all("code" in r and "input" in r for r in records):
        raise ValueError(
            f"{path or 'skate/games/cop/data/cruxeval.jsonl'}: expected JSON lines with 'code' and 'input'"
        )
    return records


def task_text(record: dict[str, str]) -> str:
    """A CRUXEval record as a COP task: the program, then a print of its call."""
    return f"{record['code'].rstrip()}\nprint(f({record['input']}))\n"


def _edit_tokens(src: str, edit: Callable[[tokenize.TokenInfo, tokenize.TokenInfo | None], str | None]) -> str:
    """``src`` with some tokens replaced: ``edit(token, previous significant token)`` returns
    the new text of a token, or None to keep it. Layout and comments stay as they were."""
    starts = [0]
    for line in src.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    prev: tokenize.TokenInfo | None = None
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        new = edit(tok, prev)
        if new is not None and new != tok.string:
            edits.append((starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1], new))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            prev = tok
    for a, b, new in sorted(edits, reverse=True):
        src = src[:a] + new + src[b:]
    return src


def _bound_names(tree: ast.AST) -> list[str]:
    """Names the program itself binds (functions, arguments, assigned variables), in order."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.arg):
            names.append(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
    return list(dict.fromkeys(n for n in names if not keyword.iskeyword(n)))


def rename(src: str, rng: random.Random) -> str:
    """Every name the program binds gets another, unused name; attributes stay."""
    tree = ast.parse(src)
    taken = {t.string for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type == tokenize.NAME}
    mapping: dict[str, str] = {}
    for name in _bound_names(tree):
        pool = [n for n in (_NEW_FUNCS if name == "f" else _NEW_NAMES) if n not in taken]
        new = rng.choice(pool) if pool else f"{name}_{len(mapping)}"
        mapping[name] = new
        taken.add(new)

    def edit(tok: tokenize.TokenInfo, prev: tokenize.TokenInfo | None) -> str | None:
        if tok.type != tokenize.NAME or (prev is not None and prev.string == "."):
            return None
        return mapping.get(tok.string)

    return _edit_tokens(src, edit)


def reformat(src: str) -> str:
    """The same program as ``ast.unparse`` writes it (quotes, spacing, parentheses), indented by two."""
    lines = []
    for line in ast.unparse(ast.parse(src)).splitlines():
        body = line.lstrip(" ")
        lines.append("  " * ((len(line) - len(body)) // 4) + body)
    return "\n".join(lines) + "\n"


def change_constants(src: str, rng: random.Random) -> str:
    """Numbers shifted and the letters of string literals redrawn (lengths kept)."""
    letters = "abcdefghijklmnopqrstuvwxyz"

    def edit(tok: tokenize.TokenInfo, prev: tokenize.TokenInfo | None) -> str | None:
        if tok.type == tokenize.NUMBER and tok.string.isdigit():
            return str(int(tok.string) + rng.randint(1, 9))
        if tok.type == tokenize.STRING and tok.string[:1] in "'\"":
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                return None
            if not isinstance(value, str):
                return None
            new = "".join(
                (rng.choice(letters) if c.islower() else rng.choice(letters).upper() if c.isupper() else c)
                for c in value
            )
            return repr(new)
        return None

    return _edit_tokens(src, edit)


def near_duplicates(src: str, rng: random.Random) -> dict[str, str]:
    """The program's near-duplicate copies by kind (kinds whose copy would not parse, or equal
    the original, are left out)."""
    makers: dict[str, Callable[[str], str]] = {
        "renamed": lambda s: rename(s, rng),
        "reformatted": reformat,
        "constants": lambda s: change_constants(s, rng),
        "renamed+constants": lambda s: change_constants(rename(s, rng), rng),
        "renamed+reformatted+constants": lambda s: reformat(change_constants(rename(s, rng), rng)),
    }
    out = {}
    for kind, make in makers.items():
        try:
            copy = make(src)
            ast.parse(copy)
        except (SyntaxError, ValueError, tokenize.TokenError):
            continue
        if copy.strip() != src.strip():
            out[kind] = copy
    return out


def run_tasks(run_dirs: Sequence[str | Path]) -> list[tuple[str, str]]:
    """(id, text) of every task the given finished runs set."""
    out = []
    for run_dir in run_dirs:
        log = read_run(Path(run_dir), keep_updates=0)
        out += [(f"{Path(run_dir).name}:{t.task_id}", t.prompt) for t in log.of(TaskSet) if t.prompt.strip()]
    return out


@dataclass
class Pair:
    a: int  # index into the texts
    b: int
    near: bool  # True: a near-duplicate pair; False: two distinct tasks
    kind: str  # a NEAR_KINDS value, or "cruxeval" / "run" for distinct pairs
    a_id: str
    b_id: str


def build_pairs(
    records: list[dict[str, str]],
    programs: int,
    distinct: int,
    seed: int,
    runs: Sequence[tuple[str, str]] = (),
    run_pairs: int = 500,
) -> tuple[list[str], list[Pair]]:
    """The texts to embed and the labelled pairs over them."""
    rng = random.Random(seed)
    picked = rng.sample(range(len(records)), min(programs, len(records)))
    texts: list[str] = []
    pairs: list[Pair] = []
    originals: list[tuple[int, str]] = []
    for i in picked:
        rid = str(records[i].get("id", i))
        src = task_text(records[i])
        try:
            ast.parse(src)
        except SyntaxError:
            continue
        base = len(texts)
        texts.append(src)
        originals.append((base, rid))
        for kind, copy in near_duplicates(src, random.Random(f"{seed}:{rid}")).items():
            texts.append(copy)
            pairs.append(Pair(base, len(texts) - 1, True, kind, rid, f"{rid}~{kind}"))
    seen: set[tuple[int, int]] = set()
    n = len(originals)
    tries = 0
    while n > 1 and len(seen) < min(distinct, n * (n - 1) // 2) and tries < 50 * distinct:
        tries += 1
        x, y = sorted(rng.sample(range(n), 2))
        if (x, y) in seen or texts[originals[x][0]].strip() == texts[originals[y][0]].strip():
            continue
        seen.add((x, y))
        (a, a_id), (b, b_id) = originals[x], originals[y]
        pairs.append(Pair(a, b, False, "cruxeval", a_id, b_id))
    if len(runs) > 1:
        base = len(texts)
        texts += [t for _, t in runs]
        m, tries = len(runs), 0
        got: set[tuple[int, int]] = set()
        while len(got) < min(run_pairs, m * (m - 1) // 2) and tries < 50 * run_pairs:
            tries += 1
            x, y = sorted(rng.sample(range(m), 2))
            if (x, y) in got or runs[x][1].strip() == runs[y][1].strip():
                continue
            got.add((x, y))
            pairs.append(Pair(base + x, base + y, False, "run", runs[x][0], runs[y][0]))
    return texts, pairs


# ------------------------------------------------------------------------- measuring
def roc(near: np.ndarray, distinct: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Over every threshold t (a pair is rejected when its distance <= t): the thresholds, the
    false-rejection rate (distinct pairs rejected) and the catch rate (near-duplicates
    rejected), from t below every distance to t at the largest; and the area under the curve."""
    cuts = np.unique(np.concatenate([near, distinct]))
    frr = np.searchsorted(np.sort(distinct), cuts, side="right") / max(len(distinct), 1)
    catch = np.searchsorted(np.sort(near), cuts, side="right") / max(len(near), 1)
    thresholds = np.concatenate([[cuts[0] - 1e-9 if len(cuts) else 0.0], cuts])
    frr, catch = np.concatenate([[0.0], frr]), np.concatenate([[0.0], catch])
    auc = float(np.sum(np.diff(frr) * (catch[1:] + catch[:-1]) / 2))
    return thresholds, frr, catch, auc


def threshold_at(distinct: np.ndarray, frr: float) -> float:
    """The largest threshold that rejects at most ``frr`` of the distinct pairs: halfway between
    the distinct distances on either side of the cut, rounded down to 3 decimals."""
    d = np.sort(distinct)
    k = int(np.floor(frr * len(d)))  # distinct pairs that may be rejected
    if k >= len(d):
        return float(np.floor(d[-1] * 1000) / 1000)
    upper = d[k]
    lower = d[k - 1] if k > 0 else 0.0
    t = float(np.floor((lower + upper) / 2 * 1000) / 1000)
    return t if t < upper else float(np.nextafter(upper, 0))


def summarise(
    name: str, dist: np.ndarray, pairs: list[Pair], frr: float, default: float, seconds: float, texts: int
) -> dict[str, Any]:
    near_mask = np.array([p.near for p in pairs])
    near, distinct = dist[near_mask], dist[~near_mask]
    _, _, _, auc = roc(near, distinct)
    t = threshold_at(distinct, frr)

    def rates(th: float) -> dict[str, float]:
        return {"frr": round(float(np.mean(distinct <= th)), 4), "catch": round(float(np.mean(near <= th)), 4)}

    by_kind = {}
    for kind in [*NEAR_KINDS, "cruxeval", "run"]:
        sel = dist[np.array([p.kind == kind for p in pairs])]
        if len(sel):
            by_kind[kind] = {
                "pairs": int(len(sel)),
                "median": round(float(np.median(sel)), 4),
                "p05": round(float(np.quantile(sel, 0.05)), 4),
                "p95": round(float(np.quantile(sel, 0.95)), 4),
                "caught": round(float(np.mean(sel <= t)), 4),
            }
    return {
        "embedder": name,
        "near_pairs": int(len(near)),
        "distinct_pairs": int(len(distinct)),
        "auc": round(auc, 4),
        "frr_target": frr,
        "threshold": t,
        **{f"at_threshold_{k}": v for k, v in rates(t).items()},
        "default_threshold": default,
        **{f"at_default_{k}": v for k, v in rates(default).items()},
        "by_kind": by_kind,
        "texts_embedded": texts,
        "embed_seconds": round(seconds, 2),
    }


def plot(results: dict[str, dict[str, Any]], dists: dict[str, np.ndarray], pairs: list[Pair], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    near_mask = np.array([p.near for p in pairs])
    names = list(results)
    fig, axes = plt.subplots(len(names), 1, figsize=(7.5, 2.8 * len(names)), squeeze=False)
    for ax, name in zip(axes[:, 0], names, strict=False):
        d, r = dists[name], results[name]
        bins = np.linspace(0, max(1.0, float(d.max())), 61)
        ax.hist(d[~near_mask], bins=bins, alpha=0.6, density=True, label=f"distinct ({r['distinct_pairs']})")
        ax.hist(d[near_mask], bins=bins, alpha=0.6, density=True, label=f"near-duplicate ({r['near_pairs']})")
        ax.axvline(
            r["threshold"],
            color="k",
            lw=1.5,
            label=f"threshold {r['threshold']:.3f} (FRR {r['at_threshold_frr']:.1%}, "
            f"catch {r['at_threshold_catch']:.1%})",
        )
        if abs(r["default_threshold"] - r["threshold"]) > 1e-9:
            ax.axvline(r["default_threshold"], color="k", ls="--", lw=1, label=f"config {r['default_threshold']:.3f}")
        ax.set_title(f"{name}: distance 1 - cos (AUC {r['auc']:.3f})", fontsize=10)
        ax.set_ylabel("density")
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("1 - cosine similarity")
    fig.tight_layout()
    fig.savefig(out / "distances.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(4.8, 4.5))
    for name in names:
        _, frr, catch, auc = roc(dists[name][near_mask], dists[name][~near_mask])
        ax.plot(frr, catch, label=f"{name} (AUC {auc:.3f})")
        ax.plot([results[name]["at_threshold_frr"]], [results[name]["at_threshold_catch"]], "o", color="k", ms=4)
    ax.plot([0, 1], [0, 1], ":", color="grey", lw=1)
    ax.set_xlabel("false-rejection rate (distinct pairs rejected)")
    ax.set_ylabel("near-duplicates caught")
    ax.set_title("ROC of the uniqueness test", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "roc.png", dpi=120)
    plt.close(fig)


def write_tables(
    results: dict[str, dict[str, Any]], dists: dict[str, np.ndarray], pairs: list[Pair], out: Path
) -> None:
    names = list(results)
    with (out / "pairs.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["label", "kind", "a", "b", *names])
        for i, p in enumerate(pairs):
            w.writerow(
                ["near" if p.near else "distinct", p.kind, p.a_id, p.b_id, *(f"{dists[n][i]:.6f}" for n in names)]
            )
    near_mask = np.array([p.near for p in pairs])
    with (out / "roc.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["embedder", "threshold", "false_rejection_rate", "catch_rate"])
        for n in names:
            th, frr, catch, _ = roc(dists[n][near_mask], dists[n][~near_mask])
            for row in zip(th, frr, catch, strict=False):
                w.writerow([n, *(f"{x:.6f}" for x in row)])


def table(results: dict[str, dict[str, Any]]) -> str:
    head = (
        f"{'embedder':<10} {'AUC':>6} {'FRR target':>10} {'threshold':>9} {'FRR':>6} {'caught':>7}"
        f" {'config':>7} {'FRR':>6} {'caught':>7} {'s':>6}"
    )
    lines = [head, "-" * len(head)]
    for r in results.values():
        lines.append(
            f"{r['embedder']:<10} {r['auc']:>6.3f} {r['frr_target']:>10.1%} {r['threshold']:>9.3f} "
            f"{r['at_threshold_frr']:>6.1%} {r['at_threshold_catch']:>7.1%} {r['default_threshold']:>7.3f} "
            f"{r['at_default_frr']:>6.1%} {r['at_default_catch']:>7.1%} {r['embed_seconds']:>6.1f}"
        )
    kinds = [k for k in [*NEAR_KINDS, "cruxeval", "run"] if any(k in r["by_kind"] for r in results.values())]
    lines += [
        "",
        "median distance by pair kind (share caught at the calibrated threshold):",
        f"{'kind':<30} " + " ".join(f"{n:>18}" for n in results),
    ]
    for k in kinds:
        cells = []
        for r in results.values():
            b = r["by_kind"].get(k)
            cells.append(f"{b['median']:>9.3f} ({b['caught']:>5.1%})" if b else f"{'-':>18}")
        lines.append(f"{k:<30} " + " ".join(f"{c:>18}" for c in cells))
    return "\n".join(lines)


# ------------------------------------------------------------------------- the command
def build(name: str, values: Mapping[str, Any] | None = None) -> Any:
    """The embedder ``embedder=name`` of the project's config, with ``values`` (its keys) set over it."""
    embedder = section("embedder", values, embedder=name)  # a bad name or key: one line naming it
    return build_embedder(embedder), float(embedder.threshold)


@dataclass(frozen=True)
class Calibration:
    """What to calibrate: which embedders (``conf/embedder/NAME.yaml``, with ``values`` for each by
    name, such as ``{"openai": {"api_base": ...}}``), at which false-rejection rate, on how many CRUXEval programs and
    distinct pairs, plus distinct pairs from finished ``runs``; outputs to ``out``."""

    embedders: Sequence[str] = ("hashing",)
    frr: float = 0.05
    programs: int = 200
    distinct: int = 2000
    runs: Sequence[str | Path] = ()
    run_pairs: int = 500
    data: str | Path | None = None
    seed: int = 0
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    out: str | Path = "calibration"
    command: str | None = None  # the command line, recorded in calibration.json


def calibrate(spec: Calibration) -> dict[str, dict[str, Any]]:
    """Embed the pairs with each embedder, write the plots, tables and ``calibration.json`` to
    ``spec.out``, and return each embedder's summary."""
    records = load_cruxeval(spec.data)
    runs = run_tasks(spec.runs) if spec.runs else []
    texts, pairs = build_pairs(records, spec.programs, spec.distinct, spec.seed, runs, spec.run_pairs)
    if not any(p.near for p in pairs) or all(p.near for p in pairs):
        raise ValueError("too few programs to make both near-duplicate and distinct pairs: raise --programs")
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    dists: dict[str, np.ndarray] = {}
    for name in spec.embedders:
        embedder, default = build(name, spec.values.get(name))
        start = time.perf_counter()
        vectors = embedder.embed(texts)
        seconds = time.perf_counter() - start
        if hasattr(embedder, "close"):
            embedder.close()
        a = vectors[[p.a for p in pairs]]
        b = vectors[[p.b for p in pairs]]
        dists[name] = 1.0 - np.einsum("ij,ij->i", a, b)
        results[name] = summarise(name, dists[name], pairs, spec.frr, default, seconds, len(texts))
    plot(results, dists, pairs, out)
    write_tables(results, dists, pairs, out)
    summary = {
        "command": spec.command,
        "programs": spec.programs,
        "distinct": spec.distinct,
        "seed": spec.seed,
        "frr": spec.frr,
        "runs": [str(r) for r in spec.runs],
        "texts": len(texts),
        "pairs": len(pairs),
        "embedders": results,
    }
    (out / "calibration.json").write_text(json.dumps(summary, indent=2) + "\n")
    return results
