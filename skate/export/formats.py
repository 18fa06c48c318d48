"""The export formats: plain JSONL with its JSON schema, an lm-evaluation-harness task, an
Inspect task. Each writer fills a (temporary) folder and returns lines for the summary; files
that name the folder name its final place (``out``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from skate.export.tasks import DATA_FILE, SCHEMA_FILE, Collected, Exported, executed
from skate.games import load_games

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "skate exported task",
    "description": "One task of a finished skate game or a built SCP benchmark, as a solver sees it. "
    "A reply is right when the first group of `pattern` found in it (commas removed, "
    "for a number) equals `answer`.",
    "type": "object",
    "required": [
        "id",
        "game",
        "prompt",
        "options",
        "labels",
        "answer",
        "answer_text",
        "setter",
        "round",
        "pattern",
        "provenance",
    ],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "description": "<game>/<task id>, unique within the export"},
        "game": {"type": "string", "enum": []},  # filled by schema(): the registry's exportable games
        "prompt": {
            "type": "string",
            "description": "the whole question as a solver sees it: the answerer's "
            "instructions, its input fields in [[ ## name ## ]] sections (options in one fixed order, "
            "drawn from the task alone as estimator=greedy draws it), a line asking for the answer",
        },
        "options": {
            "type": "array",
            "items": {"type": "string"},
            "description": "the options in the order shown; empty for an exact-match (number) answer",
        },
        "labels": {"type": "array", "items": {"type": "string"}, "description": "each option's label"},
        "answer": {"type": "string", "description": "the right option's label, or the normalised number"},
        "answer_text": {"type": "string", "description": "the right option's text, or the task's answer"},
        "setter": {"type": "string", "description": "the player who set the task ('(benchmark)': built)"},
        "round": {"type": "integer", "minimum": 1},
        "pattern": {
            "type": "string",
            "description": "a regular expression; its first group in a reply is "
            "the answer given (the first match for options, the last for a number)",
        },
        "provenance": {
            "type": "object",
            "required": ["game", "task_id"],
            "properties": {
                "run": {"type": "string", "description": "the run folder (exports of a run)"},
                "benchmark": {"type": "string", "description": "the benchmark file (exports of one)"},
                "game": {"type": "string"},
                "seed": {"type": "integer", "description": "the run's seed"},
                "task_id": {"type": "string"},
                "question_id": {"type": ["string", "null"]},
                "doc": {"type": ["string", "null"]},
                "position": {"type": ["integer", "null"]},
                "build_seed": {"type": ["integer", "null"], "description": "the SCP benchmark's build seed"},
                "domain": {"type": ["string", "null"]},
                "type": {"type": ["string", "null"]},
                "doc_date": {
                    "type": ["string", "null"],
                    "description": "SCP: the source document's date "
                    "(ISO); a benchmark expires as its documents age (game.max_doc_age_days)",
                },
                "doc_date_source": {
                    "type": ["string", "null"],
                    "description": "where that date came from (index, the document's header, the file's mtime)",
                },
                "built": {"type": ["string", "null"], "description": "SCP: the date the benchmark was built"},
            },
        },
    },
}


def exportable_games() -> list[str]:
    """The registered games whose tasks export: every one whose answer is read from a reply
    (not one whose sample runs code, as PyJail's flag capture does)."""
    return sorted(name for name in load_games() if not executed(name))


def schema() -> dict:
    """The JSON schema of an exported task, its ``game`` enum from the game registry."""
    out = json.loads(json.dumps(SCHEMA))
    out["properties"]["game"]["enum"] = exportable_games()
    return out


def write_jsonl(tasks: list[Exported], folder: Path) -> None:
    with open(folder / DATA_FILE, "w", encoding="utf-8") as fh:
        for t in tasks:
            fh.write(json.dumps(t.record(), ensure_ascii=False) + "\n")


def task_name(got: Collected) -> str:
    games = sorted({t.game for t in got.tasks})
    stem = Path(got.source.rstrip("/")).name.removesuffix(".jsonl")
    return "skate_" + "_".join(games) + "_" + re.sub(r"[^A-Za-z0-9]+", "_", stem).strip("_").lower()


def write_plain(got: Collected, folder: Path, out: Path) -> list[str]:
    write_jsonl(got.tasks, folder)
    (folder / SCHEMA_FILE).write_text(json.dumps(schema(), indent=2) + "\n", encoding="utf-8")
    return [f"records: {out / DATA_FILE} (schema: {out / SCHEMA_FILE})"]


# ------------------------------------------------------------------ lm-evaluation-harness
LM_EVAL_UTILS = '''"""Loads the exported tasks beside this file (written by skate export)."""

import json
from pathlib import Path

import datasets


def load(**kwargs):
    rows = [json.loads(line) for line in (Path(__file__).parent / "{data}").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    for row in rows:
        row["provenance"] = json.dumps(row["provenance"])
    return {{"test": datasets.Dataset.from_list(rows)}}
'''


def _yaml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


def write_lm_eval(got: Collected, folder: Path, out: Path) -> list[str]:
    games = {t.game for t in got.tasks}
    patterns = {t.pattern for t in got.tasks}
    if len(patterns) != 1:
        raise ValueError("one export holds one game's tasks with one answer format")
    pattern = patterns.pop()
    number = not got.tasks[0].labels
    name = task_name(got)
    write_jsonl(got.tasks, folder)
    (folder / "utils.py").write_text(LM_EVAL_UTILS.format(data=DATA_FILE), encoding="utf-8")
    ignore = '    regexes_to_ignore: [","]\n' if number else ""
    yaml = (
        f"# An lm-evaluation-harness task exported by skate export ({', '.join(sorted(games))}).\n"
        f"# lm_eval --model local-chat-completions --model_args model=NAME,base_url=URL/v1/chat/completions,"
        f"tokenized_requests=False --tasks {name} --include_path DIR --apply_chat_template\n"
        f"task: {name}\n"
        "custom_dataset: !function utils.load\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        'doc_to_text: "{{prompt}}"\n'
        'doc_to_target: "{{answer}}"\n'
        "generation_kwargs:\n"
        '  until: ["[[ ## completed ## ]]"]\n'
        "  do_sample: false\n"
        "  temperature: 0.0\n"
        "  max_gen_toks: 256\n"
        "filter_list:\n"
        "  - name: answer\n"
        "    filter:\n"
        "      - function: regex\n"
        f"        regex_pattern: {_yaml_str(pattern)}\n"
        f"        group_select: {-1 if number else 0}\n"
        "      - function: take_first\n"
        "metric_list:\n"
        "  - metric: exact_match\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n"
        f"{ignore}"
        "metadata:\n"
        "  version: 1.0\n"
    )
    (folder / f"{name}.yaml").write_text(yaml, encoding="utf-8")
    return [
        f"lm-eval task {name}: lm_eval --model local-chat-completions --model_args "
        f"model=NAME,base_url=URL/v1/chat/completions,tokenized_requests=False --tasks {name} "
        f"--include_path {out} --apply_chat_template"
    ]


# ------------------------------------------------------------------ Inspect
INSPECT_TASK = '''"""An Inspect task exported by skate export: {games} tasks from {source}.

    inspect eval {file} --model openai-api/local/NAME   (LOCAL_BASE_URL=http://HOST:PORT/v1, LOCAL_API_KEY)
    inspect eval {file} --model openai/NAME             (OPENAI_BASE_URL; inspect-ai sends no temperature
                                                        for a model name it does not know)

Each sample is one task's prompt, asked once at temperature 0; a reply is right when the first
group of the task's pattern found in it ({which} match; commas removed for a number) equals the
answer ({kind}).
"""

import json
import re
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

DATA = Path(__file__).parent / "{data}"
NUMBER = {number}


def samples():
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Sample(input=r["prompt"], target=r["answer"], id=r["id"],
                   metadata={{"pattern": r["pattern"], "options": r["options"], "labels": r["labels"],
                             "setter": r["setter"], "round": r["round"], "provenance": r["provenance"]}})
            for r in rows]


def given(pattern, text):
    found = re.findall(pattern, text or "")
    if not found:
        return None
    got = found[-1] if NUMBER else found[0]
    return got.replace(",", "") if NUMBER else got


@scorer(metrics=[accuracy(), stderr()])
def {scorer}():
    async def score(state: TaskState, target: Target) -> Score:
        got = given(state.metadata["pattern"], state.output.completion)
        return Score(value=CORRECT if got is not None and got == target.text else INCORRECT,
                     answer=got or "", explanation=state.output.completion)

    return score


@task
def {name}():
    return Task(dataset=MemoryDataset(samples(), name="{name}"), solver=generate(temperature=0.0, max_tokens=256),
                scorer={scorer}(), config=GenerateConfig(temperature=0.0, max_tokens=256))
'''


def write_inspect(got: Collected, folder: Path, out: Path) -> list[str]:
    name = task_name(got)
    number = not got.tasks[0].labels
    if any((not t.labels) != number for t in got.tasks):
        raise ValueError("one export holds one game's tasks with one answer format")
    write_jsonl(got.tasks, folder)
    file = f"{name}.py"
    text = INSPECT_TASK.format(
        games=", ".join(sorted({t.game for t in got.tasks})),
        source=got.source,
        file=file,
        data=DATA_FILE,
        number=number,
        name=name,
        scorer="number_match" if number else "choice_match",
        which="the last" if number else "the first",
        kind="the normalised number" if number else "the right option's label",
    )
    (folder / file).write_text(text, encoding="utf-8")
    return [
        f"Inspect task {name}: inspect eval {out / file} --model openai-api/local/NAME "
        "(LOCAL_BASE_URL=URL/v1, LOCAL_API_KEY=KEY; or --model openai/NAME with OPENAI_BASE_URL)"
    ]


WRITERS: dict[str, Callable[[Collected, Path, Path], list[str]]] = {
    "jsonl": write_plain,
    "lm-eval": write_lm_eval,
    "inspect": write_inspect,
}
