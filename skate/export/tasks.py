"""Reading a source (a finished run, a game's benchmark file) into the tasks to export, each
rendered as skate's answerer shows it (see :mod:`skate.export`). What differs by game is the
game's to say (:class:`~skate.games.base.GameExport`, registered with it): the settings its tasks
are rendered again with, their provenance, and how a benchmark file of it is read."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skate.answers.exact import normalize_number
from skate.errors import ConfigError
from skate.estimators.base import task_rng
from skate.games import AnswerFormat, Game, GameEnv, load_games
from skate.runlog.events import RunEnded, RunLogError, RunStarted, TaskSet, read_run
from skate.runlog.records import Task
from skate.sandbox import NoSandbox
from skate.settings.build import build_game
from skate.settings.options import preset
from skate.settings.recorded import run_settings

FORMATS = ("jsonl", "lm-eval", "inspect")
DATA_FILE = "tasks.jsonl"
SCHEMA_FILE = "tasks.schema.json"
EXECUTED_NOTE = (
    "left out {n} {game} task(s): its answers are programs run in a sandbox (answer format executed), "
    "which no static harness can check"
)


class UsageError(Exception):
    """Bad input: one line saying what to do (exit status 2, nothing written)."""


@dataclass
class Exported:
    """One exported task (one JSONL record)."""

    id: str
    game: str
    prompt: str
    options: list[str]
    labels: list[str]  # each option's label (A, B, ... or 1, 2, ...); empty for exact-match answers
    answer: str  # the right option's label, or the normalised number
    answer_text: str  # the right option's text, or the answer as the task gives it
    setter: str
    round: int
    provenance: dict[str, Any]
    pattern: str = ""  # the regular expression whose first group is the answer in a reply

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "game": self.game,
            "prompt": self.prompt,
            "options": self.options,
            "labels": self.labels,
            "answer": self.answer,
            "answer_text": self.answer_text,
            "setter": self.setter,
            "round": self.round,
            "pattern": self.pattern,
            "provenance": self.provenance,
        }


@dataclass
class Collected:
    """What a source holds: the exported tasks, their game, what was left out (game -> count)."""

    source: str
    tasks: list[Exported] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)


# ------------------------------------------------------------------ rendering one task
NUMBER_PATTERN = r"(-?\d[\d,]*(?:\.\d+)?)"
RESPOND = (
    "Respond with the corresponding output fields, starting with the field `[[ ## answer ## ]]` "
    "({note}), and then ending with the marker for `[[ ## completed ## ]]`."
)


def render_prompt(instructions: str, fields: dict[str, str], note: str) -> str:
    """The exported prompt: the answerer's instructions, its input fields in DSPy's sections
    (what skate's fake server and a DSPy-trained eye both read), then the line asking for the
    answer alone."""
    body = "".join(f"[[ ## {name} ## ]]\n{value}\n\n" for name, value in fields.items())
    return f"{instructions.strip()}\n\n{body}{RESPOND.format(note=note)}"


class Renderer:
    """Renders one game's tasks as its language-model answerer shows them."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.answerer = game.modules(GameEnv(sandbox=NoSandbox())).answerer  # the answerer runs no program
        sig = self.answerer.predict.signature
        self.instructions = str(sig.instructions)
        out = sig.output_fields["answer"]
        self.answer_desc = str((out.json_schema_extra or {}).get("desc", "the answer"))
        self.choice = game.spec.answer_format == AnswerFormat.multiple_choice

    def render(self, task: Task) -> tuple[str, list[str], list[str], str, str]:
        """prompt, options, labels, answer, pattern: the query drawn from the task alone."""
        query = self.game.make_query(task, task_rng(task))
        fields = {k: str(v) for k, v in self.answerer.inputs(query).items()}
        if self.choice:
            options = list(query.options)
            labels = [str(self.answerer.label(i)["answer"]) for i in range(len(options))]
            answer = labels[options.index(task.answer)]
            note = f"{self.answer_desc}: one of {', '.join(labels)}"
            pattern = r"(?<![A-Za-z0-9])(" + "|".join(labels) + r")(?![A-Za-z0-9])"
            return render_prompt(self.instructions, fields, note), options, labels, answer, pattern
        answer = normalize_number(task.answer) or task.answer.strip()
        return render_prompt(self.instructions, fields, self.answer_desc), [], [], answer, NUMBER_PATTERN


# ------------------------------------------------------------------ reading a source
def executed(game: str) -> bool:
    cls = load_games().get(game)
    return cls is not None and cls.spec.answer_format not in (AnswerFormat.multiple_choice, AnswerFormat.exact_match)


def from_run(run_dir: Path) -> Collected:
    """Every valid task of a finished run."""
    try:
        run = read_run(run_dir)
    except RunLogError as exc:
        raise UsageError(f"{exc}") from None
    if not run.of(RunEnded):
        raise UsageError(
            f"{run_dir} has not finished (no run_end event in its events.jsonl): export it once the game has ended"
        )
    start: RunStarted = run.start
    out = Collected(str(run_dir))
    tasks = run.of(TaskSet)
    if executed(start.game):
        out.left_out[start.game] += len(tasks)
        return out
    # The game's settings for rendering its recorded tasks again (SCP's carry their questions, with
    # no need to build them again), over the run's own.
    hooks = load_games()[start.game].export
    edits = {f"game.{key}": value for key, value in hooks.replay.items()} or None
    try:
        game_settings = run_settings(start, edits=edits, check=False).game
    except ConfigError as exc:
        raise UsageError(f"{run_dir}: {exc}") from None
    game = build_game(game_settings)
    renderer = Renderer(game)
    for t in tasks:
        task = t.task()
        prov: dict[str, Any] = {
            "run": str(Path(run_dir).resolve()),
            "game": start.game,
            "seed": start.seed,
            "task_id": t.task_id,
        }
        if hooks.provenance is not None:
            prov.update(hooks.provenance(task))
        out.tasks.append(_exported(renderer, task, start.game, prov))
    return out


def from_benchmark(path: Path) -> Collected:
    """Every question of a game's benchmark file, as the tasks of one built round (SCP's, from
    ``skate scp build``: ids ``r001-qNNNN``): read by the first game whose
    :attr:`GameExport.benchmark <skate.games.base.GameExport.benchmark>` reads it."""
    why = []
    for name, cls in sorted(load_games().items()):
        hooks = cls.export
        if hooks.benchmark is None:
            continue
        settings = hooks.benchmark(str(path))
        try:
            game = build_game(preset(name, "game", values=settings))  # the game's option with the file's settings
        except (ValueError, OSError) as exc:
            why.append(
                f"not a built {name.upper()} benchmark ({exc}): give the .jsonl file that "
                f"{hooks.benchmark_source or f'game={name}'} wrote"
            )
            continue
        renderer = Renderer(game)
        out = Collected(str(path))
        for task in sorted(game.provided_tasks(1) or [], key=lambda t: t.task_id):  # in the file's order
            prov = {
                "benchmark": str(Path(path).resolve()),
                "game": name,
                "task_id": task.task_id,
                **(hooks.provenance(task) if hooks.provenance is not None else {}),
            }
            out.tasks.append(_exported(renderer, task, name, prov))
        return out
    raise UsageError(f"{path} is {'; nor '.join(why) if why else 'no benchmark file: no game reads one'}")


def _exported(renderer: Renderer, task: Task, game: str, prov: dict[str, Any]) -> Exported:
    prompt, options, labels, answer, pattern = renderer.render(task)
    return Exported(
        id=f"{game}/{task.task_id}",
        game=game,
        prompt=prompt,
        options=options,
        labels=labels,
        answer=answer,
        answer_text=task.answer,
        setter=task.setter,
        round=task.round,
        provenance=prov,
        pattern=pattern,
    )


def collect(source: Path) -> Collected:
    if source.is_dir():
        return from_run(source)
    if source.is_file() and source.suffix == ".jsonl":
        return from_benchmark(source)
    raise UsageError(
        f"{source} is neither a run folder (with events.jsonl) nor a built benchmark (.jsonl): give one of them"
    )
