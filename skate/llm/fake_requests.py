"""How the fake server (:mod:`skate.llm.fake_server`) reads a chat request (its input fields and
the output fields it asks for) and writes a reply in the format asked for: ChatAdapter's
sections, one JSON object under a schema, or the plain format; and what it answers the DSPy
requests no game claims (an optimiser's own)."""

from __future__ import annotations

import ast
import json
import random
import re
from typing import Any

from skate.games import seeded_random
from skate.llm import plain
from skate.llm.sections import MARKER, sections

_RESPOND = "Respond with the corresponding output fields"
_RESPOND_JSON = "Respond with a JSON object in the following order of fields:"


def read_request(user: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """A DSPy chat request's input fields (name -> text) and the output fields it asks for
    (ChatAdapter's ``[[ ## name ## ]]`` list, JSONAdapter's list of `name` s, the plain
    format's template: :mod:`skate.llm.plain`, or ``answer`` for a request that wants an option's
    label alone)."""
    if plain.LABEL_LINE in user and _RESPOND not in user:
        return sections(user.rsplit(plain.LABEL_LINE, 1)[0]), ("answer",)
    if plain.REPLY_LINE in user and _RESPOND not in user:
        head = user.rsplit(plain.REPLY_LINE, 1)[0]
        return sections(head), tuple(plain.template_fields(user))
    if _RESPOND not in user and _RESPOND_JSON in user:
        head, _, tail = user.partition(_RESPOND_JSON)
        return sections(head), tuple(re.findall(r"`(\w+)`", tail.split("\n", 1)[0]))
    head, _, tail = user.partition(_RESPOND)
    return sections(head), tuple(name for name in MARKER.findall(tail) if name != "completed")


# ------------------------------------------------------------------------- structured output
def response_schema(response_format: Any) -> dict[str, Any] | None:
    """The JSON schema a ``response_format`` asks for (OpenAI's or llama-cpp-python's form), or
    None (no schema: plain JSON mode, text, or none)."""
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
    else:
        schema = response_format.get("schema")
    return schema if isinstance(schema, dict) else None


def _typed(value: str, prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    try:
        if kind == "array" or kind == "object":
            return json.loads(value)
        if kind == "integer":
            return int(value.strip())
        if kind == "number":
            return float(value.strip())
        if kind == "boolean":
            return value.strip().lower() == "true"
    except ValueError:
        pass
    return value


def as_json_reply(text: str, schema: dict[str, Any] | None) -> str:
    """A reply in ChatAdapter's sections as the one JSON object a server enforcing ``schema``
    returns: its properties in order, each from its section (typed by the schema); without a
    schema, every section but ``completed``. A reply with no sections (a fault's prose) is
    returned as it is."""
    found = sections(text)
    if not found:
        return text
    props = (schema or {}).get("properties")
    if isinstance(props, dict):
        obj = {
            name: _typed(found.get(name, ""), prop if isinstance(prop, dict) else {}) for name, prop in props.items()
        }
    else:
        obj = {k: v for k, v in found.items() if k != "completed"}
    return json.dumps(obj, ensure_ascii=False)


def as_plain_reply(text: str, kinds: dict[str, str]) -> str:
    """A reply in ChatAdapter's sections as a model asked for the plain format writes it (each
    field under its heading, a program fenced, a list numbered: :mod:`skate.llm.plain`). A reply
    with no sections (a fault's prose) is returned as it is."""
    found = sections(text)
    if not found:
        return text
    return plain.render_reply(
        [
            (name, kind, _unfenced(found[name]) if kind == "code" else found[name])
            for name, kind in kinds.items()
            if name in found
        ]
    )


_FENCED = re.compile(r"\A\s*```[\w+-]*[ \t]*\n(.*?)\n?```\s*\Z", re.DOTALL)


def _unfenced(value: str) -> str:
    """A program already in a fenced block (a game's fake writes its sections so), without it."""
    m = _FENCED.match(value)
    return m.group(1) if m else value


def _last_user(messages: list[dict[str, Any]]) -> int | None:
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)


# ------------------------------------------------------------------ unclaimed DSPy requests
_TYPE_NOTE = re.compile(
    r"`\[\[ ## (\w+) ## \]\]`(?: \(must be formatted as a valid Python (.*?)\))?(?=, then |, and then |$)"
)

_OPENERS = (
    "Read the input carefully",
    "Take a moment to understand what is asked",
    "Work through the task step by step",
    "Check every detail of the input",
    "Think about what the task really asks",
    "Consider the input as an expert would",
)
_ENDINGS = (
    "and answer with exactly what the output fields ask for.",
    "then give a precise, concise answer.",
    "and double-check the answer before you give it.",
    "and answer with a single, unambiguous value.",
    "keeping track of every quantity, and answer only when you are sure.",
    "then answer in the requested format and nothing more.",
)
_SUBJECTS = (
    "The examples are short, self-contained tasks",
    "Each data point is a small reasoning problem",
    "The dataset holds compact question-and-answer items",
    "The samples are exercises of varying difficulty",
)
_DETAILS = (
    "each with one correct answer that can be checked exactly.",
    "written in plain English with the numbers or code needed to solve them.",
    "whose answers are short and follow a fixed format.",
    "that reward careful, step-by-step reading over guessing.",
)
_PLAIN = (
    "A short, direct response to the {field} asked for.",
    "The {field}, stated briefly and plainly.",
    "A concise {field} based on the inputs given.",
)


def _value_for(field_name: str, type_name: str | None, inputs: dict[str, str], rng: random.Random) -> str:
    """A short text for one output field, of the type its "Respond with" note names (if any)."""
    if type_name:
        t = type_name.strip()
        if t == "bool":
            return rng.choice(("True", "False"))
        if t == "int":
            return str(rng.randint(1, 9))
        if t == "float":
            return f"{rng.random():.2f}"
        if t.startswith("Literal["):
            try:
                node = ast.parse(t, mode="eval").body
                if not isinstance(node, ast.Subscript):
                    raise ValueError(t)
                args = node.slice
                values = [ast.literal_eval(a) for a in (args.elts if isinstance(args, ast.Tuple) else [args])]
                return str(rng.choice(values))
            except (SyntaxError, ValueError, AttributeError):
                pass
        if t.startswith(("list[", "tuple[", "set[")) or t == "list":
            return "[]"
        if t.startswith("dict[") or t == "dict":
            return "{}"
    name = field_name.lower()
    if "instruction" in name:
        sentence = f"{rng.choice(_OPENERS)}, {rng.choice(_ENDINGS)}"
        basic = " ".join(inputs.get("basic_instruction", "").split())
        return f"{basic} {sentence}" if basic and basic != "Not provided" else sentence
    if any(word in name for word in ("observation", "summary", "description")):
        return f"{rng.choice(_SUBJECTS)}, {rng.choice(_DETAILS)}"
    if "reasoning" in name or "rationale" in name:
        return "I read the inputs and worked through them step by step."
    return rng.choice(_PLAIN).format(field=field_name.replace("_", " "))


def unclaimed_reply(model: str, user: str, seed: int, index: int) -> str:
    """The reply to a DSPy request no game claims, in ChatAdapter's layout: every output field
    the request asks for, in its order, as ``[[ ## name ## ]]\nvalue\n\n``, then
    ``[[ ## completed ## ]]``. Each value is a short text drawn from the model, the seed, the
    choice index, the field and the inputs (so the same request gives the same reply); a field
    whose "Respond with" line names a type (bool, int, float, a Literal, a list or dict) gets a
    value of that type. "I do not understand the request." when the message asks for no output
    field (no DSPy request)."""
    inputs, outputs = read_request(user)
    if not outputs:
        return "I do not understand the request."
    types = dict(_TYPE_NOTE.findall(user.partition(_RESPOND)[2]))
    parts = []
    for name in outputs:
        rng = seeded_random("unclaimed", model, seed, index, name, sorted(inputs.items()))
        parts.append(f"[[ ## {name} ## ]]\n{_value_for(name, types.get(name) or None, inputs, rng)}")
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


def greedy_draw(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """The seed and choice index a request at temperature 0 is played with: drawn from the input
    fields of its last user message alone (its text, when it has none), not from the request's
    ``seed``, its choice index or the rest of the prompt (system message, instructions, the line
    asking for the answer). So greedy decoding answers a question the same way whoever asks it:
    skate's own answerer (``estimator=greedy``) and an exported task (:mod:`skate.export`) run by
    another harness, whose prompt holds the same fields, get the same reply."""
    last = _last_user(messages)
    user = str(messages[last].get("content", "")) if last is not None else ""
    inputs, _ = read_request(user)
    key: Any = sorted(inputs.items()) if inputs else user
    return seeded_random("greedy", key).getrandbits(31), 0
