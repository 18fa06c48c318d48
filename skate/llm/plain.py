"""The plain reply format: what a person would write, for the replies small models get wrong.

DSPy's ChatAdapter asks for each output field after a ``[[ ## name ## ]]`` marker and its
JSONAdapter for one JSON object; a task with code in it then becomes a program inside markers or
inside a JSON string. Real small models (Qwen2.5-Coder 1.5B and 0.5B, measured in
``docs/real-models.md``) lose that format: programs inside JSON strings that never call their
function, markers copied as code, the placeholder copied as the answer. Asked the same thing the
way a person would write it (a heading, a fenced program, a numbered list) they write tasks that
run. The plain format is that:

    PROGRAM:
    ```python
    print(sorted({3: "a", 1: "b"}))
    ```

    WRONG ANSWERS:
    1. [3, 1]
    2. ['a', 'b']

Each output field is a heading (its name in capitals, underscores as spaces, then a colon) and
its value in the form its kind asks: ``code`` in a fenced block, ``list`` as a numbered list (one
item a line; a JSON list is read too), ``text`` as lines, ``number`` and ``choice`` on the
heading's own line. The request ends with :data:`REPLY_LINE` and a template of the reply, from
which :func:`template_fields` reads back the fields and kinds asked for (the fake server does).

Reading is lenient (:func:`read_reply`): headings in any case, in bold or as Markdown headings;
a program with no heading is the reply's first fenced block; a reply with none of the headings
gives nothing (the caller then tries the other formats). Nothing here imports DSPy: the fake
server reads and writes the format with these functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

KINDS = ("code", "list", "text", "number", "choice")
REPLY_LINE = "Reply in exactly this form:"
# How a request that wants an option's label alone ends (a label read: skate.llm.choices), e.g.
# "Reply with nothing but the letter of the option you choose: A, B, C or D."
LABEL_LINE = "Reply with nothing but the "
# How a setter's repair turn begins: the user message after its rejected reply
# (skate.llm.modules.SetterModule.messages); the request itself is the user message before.
REPAIR_PREFIX = "That attempt was rejected"
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)
_ITEM = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*•])(?:\s+(.*))?$")


def heading(name: str) -> str:
    """``wrong_answers`` -> ``WRONG ANSWERS``."""
    return name.replace("_", " ").upper()


def field_template(name: str, kind: str, hint: str = "", choices: Sequence[str] = (), count: int = 0) -> str:
    """How one field looks in the reply template (``hint``: what goes there, in a few words;
    ``count``: how many items a list needs, each line of the template numbered, where known)."""
    head = heading(name) + ":"
    hint = hint or name.replace("_", " ")
    if kind == "code":
        return f"{head}\n```python\n<{hint}>\n```"
    if kind == "list":
        if count:
            return head + "\n" + "\n".join(f"{i}. <{hint}>" for i in range(1, count + 1))
        return f"{head}\n1. <{hint}>\n2. <{hint}>\n... (one a line, numbered)"
    if kind == "choice":
        return f"{head} <one of {', '.join(choices)}>"
    if kind == "number":
        return f"{head} <{hint}>"
    return f"{head}\n<{hint}>"


def request_block(fields: Sequence[tuple]) -> str:
    """The end of a request: :data:`REPLY_LINE` and the template of every output field
    (``(name, kind, hint, choices[, count])`` in order)."""
    return REPLY_LINE + "\n\n" + "\n\n".join(field_template(*f) for f in fields)


def _heading_pattern(names: Sequence[str]) -> re.Pattern:
    alts = "|".join(re.escape(heading(n)).replace(r"\ ", r"[ _]") for n in sorted(names, key=len, reverse=True))
    # "PROGRAM:", "**PROGRAM:**", "**Program**:", "## Wrong answers", "WRONG ANSWERS: 1. ..." (a
    # value may follow the colon on the same line); without a colon the heading is the whole line.
    bold = r"(?:\*\*|__)"
    return re.compile(
        rf"^[ \t]*(?:#{{1,6}}[ \t]*)?{bold}?[ \t]*({alts})[ \t]*"
        rf"(?::[ \t]*{bold}|{bold}?[ \t]*:|{bold}?[ \t]*$)[ \t]*(.*)$",
        re.IGNORECASE | re.MULTILINE,
    )


def template_fields(user: str) -> dict[str, str]:
    """The output fields (name -> kind) a plain request asks for, read from its template (the
    text after :data:`REPLY_LINE`); empty when it is no plain request."""
    if REPLY_LINE not in user:
        return {}
    tail = user.rsplit(REPLY_LINE, 1)[1]
    out: dict[str, str] = {}
    blocks = re.split(r"\n\s*\n", tail.strip())
    for block in blocks:
        m = re.match(r"([A-Z][A-Z0-9 ]*):[ \t]*(.*)", block.strip())
        if not m:
            continue
        name = m.group(1).strip().lower().replace(" ", "_")
        rest, body = m.group(2), block.strip()[m.end() :]
        if "```" in body:
            kind = "code"
        elif re.search(r"^\s*1\.", body, re.MULTILINE):
            kind = "list"
        elif rest.startswith("<one of"):
            kind = "choice"
        elif rest:
            kind = "number"
        else:
            kind = "text"
        out[name] = kind
    return out


# Where a plain reply has gone wrong for good: it has begun copying the request's own input sections
# (``[[ ## rules ## ]]``: what Gemma 3 270M did with every COP setter request, to the token limit).
COPYING = "[[ ##"
# Providers take a few stop sequences at most (OpenAI: 4).
MAX_STOPS = 4


def stop_sequences(
    fields: Sequence[tuple[str, str]], counts: Mapping[str, int] | None = None, opening: str = ""
) -> list[str]:
    """Stop sequences for a plain request asking for ``fields`` (``(name, kind)`` in order): where a
    reply begins copying the request (its ``[[ ##`` sections, the ``opening`` words of its
    instructions, a rejection's :data:`REPAIR_PREFIX`: copies Gemma 3 270M wrote to the token
    limit), and, where the last field is a list of a known length ``counts[name]``, the number of
    the item after the last one asked for (``"\n10."`` after nine): a reply that has given every
    field it was asked for stops there. At most :data:`MAX_STOPS`."""
    out = [COPYING, *([opening] if opening else []), REPAIR_PREFIX]
    if fields:
        name, kind = fields[-1]
        count = (counts or {}).get(name, 0)
        if kind == "list" and count:
            out.append(f"\n{count + 1}.")
    return out[:MAX_STOPS]


def label_request(labels: Sequence[str]) -> str:
    """The last line of a request that wants one option's label and nothing else."""
    kind = "number" if all(label.isdigit() for label in labels) else "letter"
    listed = ", ".join(labels[:-1]) + f" or {labels[-1]}" if len(labels) > 1 else "".join(labels)
    return f"{LABEL_LINE}{kind} of the option you choose: {listed}."


def opening_words(text: str, words: int = 8) -> str:
    """The first ``words`` words of ``text`` (a request's instructions), as a stop sequence: a reply
    that starts writing them is copying the request."""
    return " ".join(text.split()[:words]) if len(text.split()) >= words else ""


def render_value(kind: str, value: object) -> str:
    """A field's value as it appears under its heading."""
    if kind == "code":
        text = str(value).strip("\n")
        return f"```python\n{text}\n```"
    if kind == "list":
        items = value
        if isinstance(value, str):
            try:
                items = json.loads(value)
            except ValueError:
                items = [line for line in value.splitlines() if line.strip()]
        if not isinstance(items, (list, tuple)):
            items = [items]
        lines = []
        for i, item in enumerate(items, 1):
            item = str(item)
            # an item of several lines, or one that looks like a list marker, goes in a fence
            if "\n" in item or _ITEM.match(item) or item != item.strip():
                lines.append(f"{i}.\n```\n{item}\n```")
            else:
                lines.append(f"{i}. {item}")
        return "\n".join(lines)
    return str(value)


def render_reply(fields: Sequence[tuple[str, str, object]]) -> str:
    """A whole reply in the plain format: ``(name, kind, value)`` in order."""
    parts = []
    for name, kind, value in fields:
        body = render_value(kind, value)
        inline = kind in ("number", "choice") and "\n" not in body
        parts.append(f"{heading(name)}: {body}" if inline else f"{heading(name)}:\n{body}")
    return "\n\n".join(parts)


def _read_code(body: str) -> tuple[str, bool]:
    """The program under a heading: its first fenced block (and whether the fence was closed), else
    the text as it is."""
    m = _FENCE.search(body)
    if m:
        closed = m.group(0).rstrip().endswith("```")
        return m.group(2).strip("\n"), closed
    return body.strip("\n"), True


def _read_list(body: str) -> list[str]:
    text = body.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
            if isinstance(parsed, list):
                return [str(i) if not isinstance(i, str) else i for i in parsed]
        except ValueError:
            pass
    items: list[str] = []
    lines = text.splitlines()
    i = 0
    joining = False  # the line before belongs to the last item (no blank line since)
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("```") or not line.strip():
            joining = False  # a stray fence or a blank line ends the last item; prose after it is no item
            i += 1
            continue
        m = _ITEM.match(line)
        if m:
            rest = m.group(1) or ""
            if rest.strip().startswith("```") or (
                not rest.strip() and i + 1 < len(lines) and lines[i + 1].strip().startswith("```")
            ):
                # an item in a fence: the lines up to the closing fence
                start = i if rest.strip().startswith("```") else i + 1
                j = start + 1
                block = []
                while j < len(lines) and not lines[j].strip().startswith("```"):
                    block.append(lines[j])
                    j += 1
                items.append("\n".join(block))
                i = j + 1
                joining = False
                continue
            items.append(_unwrap(rest))
            joining = True
        elif joining and not line.startswith(("(", "...")):
            items[-1] += "\n" + line.strip()  # an item that goes on over the next line
        i += 1
    return items


def _unwrap(item: str) -> str:
    """An item as written, without Markdown code ticks around the whole of it."""
    s = item.strip()
    if len(s) >= 2 and s[0] == s[-1] == "`" and "`" not in s[1:-1]:
        return s[1:-1]
    return s


def _headless_program(text: str, first_heading: int) -> re.Match | None:
    """A program written with no heading: the first fenced block tagged python, else the first
    fenced block before any heading."""
    fences = list(_FENCE.finditer(text))
    tagged = [m for m in fences if m.group(1).lower() in ("python", "py", "python3")]
    if tagged:
        return tagged[0]
    return next((m for m in fences if m.start() < first_heading), None)


def read_reply(text: str, fields: Mapping[str, str]) -> tuple[dict[str, object], bool]:
    """The fields (name -> kind) a plain reply holds, each read by its kind (code: the program's
    text; list: a list of strings; text, number, choice: the text), and whether the reply is
    whole (every field there, every program's fence closed). ``({}, False)`` when no heading
    of ``fields`` is there (nor, for a code field, any fenced block)."""
    pattern = _heading_pattern(list(fields))
    marks = list(pattern.finditer(text))
    bodies: dict[str, str] = {}
    for k, m in enumerate(marks):
        name = m.group(1).lower().replace(" ", "_")
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        inline, rest = m.group(2).strip(), text[m.end() : end].strip("\n")
        bodies.setdefault(name, f"{inline}\n{rest}" if inline else rest)
    out: dict[str, object] = {}
    whole = True
    for name, kind in fields.items():
        if name not in bodies:
            if kind == "code" and (program := _headless_program(text, marks[0].start() if marks else len(text))):
                out[name] = program.group(2).strip("\n")
                whole = whole and program.group(0).rstrip().endswith("```")
            continue
        body = bodies[name]
        if kind == "code":
            out[name], closed = _read_code(body)
            whole = whole and closed
        elif kind == "list":
            out[name] = _read_list(body)
        else:
            out[name] = body.strip().strip("*").strip()
    if not out:
        return {}, False
    return out, whole and set(out) == set(fields)
