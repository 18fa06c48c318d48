"""The board as one static HTML page (``skate leaderboard show --html OUT_DIR``).

:func:`write_page` writes ``OUT_DIR/index.html`` from the store's latest snapshots: one file that
loads nothing (its CSS and the few lines of script that sort the tables are inline). It holds

* a table per board, overall first, then each game: rank, model, score, the interval (its bounds
  and a bar drawn on the board's common scale, so that intervals compare by eye) and the number of
  tasks behind the row; a click on a column's header sorts the rows by it, again the other way;
* per model, the tasks it set (the bank's ``tasks`` whose setter it is), each with its prompt and
  every other model's graded samples on it (``responses``);
* when the board was last fitted, and how many models, tasks and responses it holds.

Prompts are written by models, so every text from the store is escaped (jinja2's autoescape), and
the page's content security policy lets only its own script run, whatever a text holds.
"""

from __future__ import annotations

import base64
import hashlib
import math
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from skate.leaderboard.fit import LEVEL
from skate.leaderboard.store import OVERALL, BankedTask, Response, Store, StoreError

PAGE = "index.html"
SHORT = 140  # characters of a prompt shown before the rest is folded away
BAR_W, BAR_H, BAR_PAD = 160, 14, 4  # the interval bar's size in pixels, and its margin at each end

# Sorts a board's rows by the clicked column: numbers (data-type="num") by value, text by
# collation; empty cells last either way; the first click ascends, the next descends.
SCRIPT = """
document.querySelectorAll("table.board").forEach(function (table) {
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  heads.forEach(function (th, col) {
    th.querySelector("button").addEventListener("click", function () {
      var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
      var num = th.dataset.type === "num";
      var body = table.tBodies[0];
      var key = function (row) {
        var v = row.cells[col].dataset.sort;
        return v === "" ? null : (num ? parseFloat(v) : v);
      };
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || y === null) { return (x === null) - (y === null); }
        var c = num ? x - y : x.localeCompare(y);
        return dir === "ascending" ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
      heads.forEach(function (h) { h.setAttribute("aria-sort", h === th ? dir : "none"); });
    });
  });
});
"""
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { padding: .25em .6em; text-align: left; border-bottom: 1px solid #ddd; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
th button { font: inherit; font-weight: bold; background: none; border: 0; padding: 0; cursor: pointer; }
th[aria-sort=ascending] button::after { content: " \\25B2"; }
th[aria-sort=descending] button::after { content: " \\25BC"; }
svg.bar { vertical-align: middle; margin-left: .5em; }
svg.bar .iv { fill: #7aa6d8; } svg.bar .pt { fill: #1d4f91; } svg.bar .zero { stroke: #bbb; }
.meta { color: #555; }
section.model { border-top: 1px solid #ccc; margin-top: 1.5em; }
li.task { margin: .6em 0; } .prompt { white-space: pre-wrap; font-family: ui-monospace, monospace; }
ul.results { list-style: none; padding: 0; margin: .2em 0; display: flex; flex-wrap: wrap; gap: .3em .9em; }
.all { color: #176b2c; } .some { color: #8a5a00; } .none { color: #a11; }
"""

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{{ script_hash }}'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>skate leaderboard</title>
<style>{{ style|safe }}</style>
</head>
<body>
<h1>skate leaderboard</h1>
<p class="meta" id="summary">Last fitted <time datetime="{{ fitted.iso }}">{{ fitted.text }}</time>.
The board holds {{ counts.models }} models, {{ counts.tasks }} tasks of {{ games }} game{{ "" if games == 1 else "s" }}
and {{ counts.responses }} responses.</p>
{% for b in boards %}
<section class="board" id="board-{{ loop.index0 }}" data-game="{{ b.game }}">
<h2>{{ b.title }}</h2>
<p class="meta">{{ b.rows|length }} models over {{ b.tasks }} tasks; fitted {{ b.fitted }} ({{ b.why }}).
Intervals: {{ level }}; the bars share one scale, from {{ b.lo|f2 }} to {{ b.hi|f2 }}.</p>
{% if b.missing %}<p class="meta missing">{{ b.missing }}.</p>{% endif %}
{% if b.placing %}<p class="meta placing">{{ b.placing }}.</p>{% endif %}
<table class="board">
<thead><tr>
<th class="num" data-type="num" aria-sort="ascending"><button type="button">rank</button></th>
<th data-type="text" aria-sort="none"><button type="button">model</button></th>
<th class="num" data-type="num" aria-sort="none"><button type="button">score</button></th>
<th data-type="num" aria-sort="none" title="sorted by width"><button type="button">interval</button></th>
<th class="num" data-type="num" aria-sort="none"><button type="button">tasks</button></th>
</tr></thead>
<tbody>
{% for r in b.rows %}
<tr data-model="{{ r.model }}">
<td class="num rank" data-sort="{{ r.rank if r.rank is not none else '' }}">{{ r.rank if r.rank is not none else "–" }}</td>
<td class="model" data-sort="{{ r.model }}">{% if r.model in anchors %}<a href="#{{ anchors[r.model] }}">{{ r.model }}</a>{% else %}{{ r.model }}{% endif %}</td>
<td class="num score" data-sort="{{ r.score|num }}">{{ r.score|f2 }}</td>
<td class="interval" data-sort="{{ r.width|num }}" data-lo="{{ r.lo|num }}" data-hi="{{ r.hi|num }}">
<span class="bounds">[{{ r.lo|f2 }}, {{ r.hi|f2 }}]</span>{% if r.bar %}<svg class="bar" width="{{ bar_w }}" height="{{ bar_h }}" viewBox="0 0 {{ bar_w }} {{ bar_h }}" role="img" aria-label="{{ r.model }}: {{ r.lo|f2 }} to {{ r.hi|f2 }}, score {{ r.score|f2 }}">
{% if b.zero is not none %}<line class="zero" x1="{{ b.zero }}" x2="{{ b.zero }}" y1="0" y2="{{ bar_h }}"/>{% endif %}
<rect class="iv" x="{{ r.bar.x0 }}" y="4" width="{{ r.bar.w }}" height="{{ bar_h - 8 }}"/>
{% if r.bar.xs is not none %}<circle class="pt" cx="{{ r.bar.xs }}" cy="{{ bar_h / 2 }}" r="3"/>{% endif %}
</svg>{% endif %}</td>
<td class="num tasks" data-sort="{{ r.tasks }}">{{ r.tasks }}</td>
</tr>
{% endfor %}
</tbody>
</table>
</section>
{% endfor %}
<h2>The tasks each model set</h2>
<p class="meta">Hardest first within each game (the fitted difficulty); under each task, every other model's
correct answers of its graded samples, best ranked first.</p>
{% for m in setters %}
<section class="model" id="{{ m.anchor }}" data-model="{{ m.name }}">
<h3>{{ m.name }}</h3>
{% if m.tasks %}
<p class="meta">{{ m.tasks|length }} task{{ "" if m.tasks|length == 1 else "s" }}; the others solved {{ m.solved }}.</p>
<ol class="tasks">
{% for t in m.tasks %}
<li class="task" data-task="{{ t.id }}">
<div class="meta">{{ t.game }}, task {{ t.task_id }}, difficulty {{ t.difficulty|f2 }}; others solved {{ t.solved }}{% if t.viewer %}; <a class="viewer" href="{{ t.viewer }}">in its run's viewer</a>{% endif %}</div>
{% if t.long %}<details><summary class="prompt">{{ t.short }}</summary><div class="prompt full">{{ t.prompt }}</div></details>
{% else %}<div class="prompt full">{{ t.prompt }}</div>{% endif %}
<ul class="results">
{% for r in t.others %}<li class="{{ r.grade }}" data-model="{{ r.model }}"><span class="who">{{ r.model }}</span> <span class="score">{{ r.correct }}/{{ r.samples }}</span></li>
{% else %}<li>no other model answered it</li>{% endfor %}
</ul>
</li>
{% endfor %}
</ol>
{% else %}
<p class="meta">It has set no task on the board.</p>
{% endif %}
</section>
{% endfor %}
<script>{{ script|safe }}</script>
</body>
</html>
"""


def _f2(x: float | None) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.2f}"


def _num(x: float | None) -> str:
    return "" if x is None or not math.isfinite(x) else repr(float(x))


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def _board(store: Store, game: str) -> dict[str, Any] | None:
    """One board's latest snapshot with each row's interval bar on the board's common scale."""
    snap, rows = store.board(game)
    if snap is None:
        return None
    xs = [v for r in rows for v in (r["lo"], r["hi"], r["score"]) if v is not None and math.isfinite(v)]
    lo, hi = (min(xs), max(xs)) if xs else (-1.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 1.0, hi + 1.0

    def x(v: float) -> float:
        return round(BAR_PAD + (v - lo) / (hi - lo) * (BAR_W - 2 * BAR_PAD), 2)

    for r in rows:
        ok = r["lo"] is not None and r["hi"] is not None and math.isfinite(r["lo"]) and math.isfinite(r["hi"])
        r["width"] = r["hi"] - r["lo"] if ok else None
        r["bar"] = (
            {
                "x0": x(r["lo"]),
                "w": round(max(x(r["hi"]) - x(r["lo"]), 1.0), 2),
                "xs": x(r["score"]) if r["score"] is not None and math.isfinite(r["score"]) else None,
            }
            if ok
            else None
        )
    missing = store.not_overall() if game == OVERALL else []  # placed on a game's board since the overall fit
    placing = being_added(store, rows)
    return {
        "game": game,
        "title": game or "overall",
        "rows": rows,
        "lo": lo,
        "hi": hi,
        "missing": not_overall_line(missing) if missing else "",
        "placing": being_added_line(placing) if placing else "",
        "zero": x(0.0) if lo <= 0.0 <= hi else None,
        "tasks": snap["fit"].get("tasks", 0),
        "fitted": _when(snap["at"]),
        "at": snap["at"],
        "why": snap["why"],
    }


def _grade(correct: int, samples: int) -> str:
    return "all" if samples and correct == samples else "none" if correct == 0 else "some"


def _solved(results: list[Response]) -> str:
    k, n = sum(r.correct for r in results), sum(r.samples for r in results)
    return f"{k} of {n} samples" + (f" ({k / n:.0%})" if n else "")


def _setters(store: Store, boards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each model, by its overall rank (then name), with the tasks it set, hardest first within
    each game, and every other model's result on each, by its rank on that game's board."""
    rank = {
        b["game"]: {r["model"]: (r["rank"] if r["rank"] is not None else math.inf) for r in b["rows"]} for b in boards
    }
    results: dict[int, list[Response]] = defaultdict(list)
    for r in store.responses():
        results[r.task].append(r)
    by_setter: dict[str, list[BankedTask]] = defaultdict(list)
    for t in store.tasks():
        by_setter[t.setter].append(t)
    viewers = {run: _viewer_of(path) for run, path in store.run_paths().items()}
    names = [m["name"] for m in store.models()]
    names += sorted(set(by_setter) - set(names))
    overall = rank.get(OVERALL, {})
    names.sort(key=lambda n: (overall.get(n, math.inf), n))
    out = []
    for i, name in enumerate(names):
        tasks, everyone = [], []
        for t in sorted(
            by_setter.get(name, []), key=lambda t: (t.game, t.difficulty is None, -(t.difficulty or 0.0), t.id)
        ):
            game_rank = rank.get(t.game, {})
            others = sorted(
                (r for r in results[t.id] if r.model != name), key=lambda r: (game_rank.get(r.model, math.inf), r.model)
            )
            everyone += others
            prompt = str(t.body.get("prompt", ""))
            viewer = viewers.get(t.run_id)
            tasks.append(
                {
                    "id": t.id,
                    "task_id": t.task_id,
                    "game": t.game,
                    "difficulty": t.difficulty,
                    "viewer": f"{viewer}#task={quote(t.task_id)}" if viewer else None,
                    "prompt": prompt,
                    "long": len(prompt) > SHORT,
                    "short": prompt[:SHORT].rstrip() + "…",
                    "solved": _solved(others),
                    "others": [
                        {
                            "model": r.model,
                            "correct": r.correct,
                            "samples": r.samples,
                            "grade": _grade(r.correct, r.samples),
                        }
                        for r in others
                    ],
                }
            )
        out.append({"name": name, "anchor": f"model-{i}", "tasks": tasks, "solved": _solved(everyone)})
    return out


def _viewer_of(run_dir: str) -> str | None:
    """The address of a banked run's game viewer, where its folder still holds one."""
    page = Path(run_dir) / "viewer" / "index.html"
    return page.as_uri() if page.is_file() else None


def render(store: Store) -> str:
    """The page's HTML (:class:`StoreError` when the store has no board yet)."""
    boards = [b for b in (_board(store, g) for g in [OVERALL, *store.games()]) if b is not None]
    if not boards:
        raise StoreError(f"no board in {store.where} yet: import a finished run with skate leaderboard import RUN_DIR")
    setters = _setters(store, boards)
    fitted = max(b["at"] for b in boards)
    env = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters.update(f2=_f2, num=_num)
    return env.from_string(TEMPLATE).render(
        boards=boards,
        setters=setters,
        anchors={m["name"]: m["anchor"] for m in setters if m["tasks"]},
        counts=store.counts(),
        games=len(store.games()),
        level=f"{LEVEL:.0%}",
        bar_w=BAR_W,
        bar_h=BAR_H,
        fitted={"iso": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(fitted)), "text": _when(fitted)},
        style=STYLE,
        script=SCRIPT,
        script_hash=SCRIPT_HASH,
    )


def not_overall_line(models: list[str]) -> str:
    """What the overall table says of the models it does not hold yet."""
    return (
        f"Not in this table until the next refit: {', '.join(models)} (placed on a game's board since the "
        "overall fit, which pools every game; skate leaderboard refit fits them in)"
    )


def being_added(store: Store, rows: list[dict[str, Any]]) -> list[str]:
    """The models of ``rows`` whose add has not finished: a refit during their add fitted them on
    the answers they had given by then."""
    adding = set(store.being_added())
    return [r["model"] for r in rows if r["model"] in adding]


def being_added_line(models: list[str]) -> str:
    """What a table says of its rows whose add has not finished."""
    return (
        f"Still being added: {', '.join(models)} (a refit during the add fitted the answers given by then; "
        "the add puts its own row here when it finishes, and an add that was stopped finishes when run again)"
    )


def format_board(title: str, rows: list[dict[str, Any]]) -> str:
    """One board as a text table (``skate leaderboard show``)."""
    header = f"{'rank':>4}  {'model':<24} {'score':>7} {'interval':>17} {'tasks':>6}"
    lines = [title, header, "-" * len(header)]
    for r in rows:
        iv = f"[{r['lo']:.2f}, {r['hi']:.2f}]" if r["lo"] is not None and r["hi"] is not None else "-"
        score = f"{r['score']:>7.2f}" if r["score"] is not None else f"{'-':>7}"
        lines.append(
            f"{r['rank'] if r['rank'] is not None else '-':>4}  {r['model']:<24} {score} {iv:>17} {r['tasks']:>6}"
        )
    return "\n".join(lines)


def board_text(store: Store, game: str | None = None, where: str = "the store") -> str:
    """The boards as text: one game's, or the overall board then each game's. A store with no
    board yet (for that game) raises :class:`StoreError` saying how to make one."""
    shown = []
    for g in [game] if game else [OVERALL, *store.games()]:
        snap, rows = store.board(g)
        if snap is not None:
            missing = store.not_overall() if g == OVERALL else []
            placing = being_added(store, rows)
            shown.append(
                format_board(f"{g or 'overall'}: {snap['fit'].get('tasks', 0)} tasks", rows)
                + "\n"
                + (f"{not_overall_line(missing)}\n" if missing else "")
                + (f"{being_added_line(placing)}\n" if placing else "")
            )
    if not shown:
        raise StoreError(
            f"no board in {where} yet"
            + (f" for game {game!r}" if game else "")
            + ": import a finished run with skate leaderboard import RUN_DIR"
        )
    return "\n".join(shown)


def write_page(store: Store, out_dir: str | Path) -> Path:
    """Write the board's page to ``out_dir/index.html`` (the folder made if new); its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / PAGE
    path.write_text(render(store), encoding="utf-8")
    return path
