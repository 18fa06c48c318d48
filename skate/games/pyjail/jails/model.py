"""The terms PyJail's jails and attacks are described in: kinds, techniques, rules.

:data:`KINDS` names a jail's main defence and :data:`FLAWS` the ways a jail can be wrong;
:data:`TECHNIQUES` is the attack repertoire, each trick with its sophistication (the scale of
jail difficulty); :class:`Rules` is everything a jail checks and how it runs its input, and
:class:`JailInfo` what :func:`~skate.games.pyjail.jails.reader.read_jail` recovers from a jail.
The jail's own input checks are mirrored here (``_static_ok``), so that an attack can be tried
on paper. The model as a whole is described in :mod:`skate.games.pyjail.generator`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

KINDS: tuple[str, ...] = ("names", "characters", "length", "ast", "rewrite")
"""The main defence of a jail: word filter, character filter, length cap, syntax-tree filter,
output rewriting."""

FLAWS: tuple[str, ...] = ("syntax", "no_jail", "unbreakable", "hangs")
"""Ways :func:`flawed_jail` gets a jail wrong."""

LEVELS = 5  # strength is rounded to one of this many levels per kind


# ---------------------------------------------------------------------------
# Techniques
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Technique:
    """One attack trick; ``sophistication`` is on the scale of jail difficulty."""

    name: str
    sophistication: float
    summary: str


TECHNIQUES: tuple[Technique, ...] = (
    Technique("direct", 0.00, "return os.environ['FLAG'] as the value of the expression"),
    Technique("print", 0.10, "print the flag: stdout is not censored, only the return value"),
    Technique("error_leak", 0.15, "raise an uncaught exception whose message holds the flag"),
    Technique(
        "short", 0.20, "compact payloads: dump the whole environment, use names the jail's own scope already holds"
    ),
    Technique("concat", 0.25, "split banned words across concatenated string literals"),
    Technique(
        "getattr",
        0.35,
        "getattr/vars with built names instead of attribute syntax, __import__ fetched from the builtins module",
    ),
    Technique("chr", 0.45, "strings from character codes (chr, bytes, hex escapes): no quotes, no banned words"),
    Technique("eval_string", 0.50, "a nested eval/exec of a built string: the filters never see the real payload"),
    Technique("stderr", 0.55, "leak on standard error: sys.exit(flag), print(..., file=sys.stderr)"),
    Technique("unicode", 0.60, "fullwidth letters in identifiers: Python folds them (NFKC), ASCII filters miss them"),
    Technique(
        "second_stage",
        0.70,
        "a first stage short enough to survive truncation that evaluates the rest of the jail's own input variable",
    ),
    Technique(
        "subclasses",
        0.75,
        "walk the object graph (().__class__.__base__.__subclasses__(), "
        "__self__, __globals__) to reach os without builtins",
    ),
    Technique("raw_fd", 0.85, "os.write to file descriptor 1/2 or sys.__stdout__: under any Python-level redirection"),
    Technique("decorators", 0.95, "call functions without a Call node or parentheses: class decorators in exec mode"),
)
"""The attack repertoire, least sophisticated first."""

_BY_NAME: dict[str, Technique] = {t.name: t for t in TECHNIQUES}
_SOPH: dict[str, float] = {t.name: t.sophistication for t in TECHNIQUES}


def _technique(technique: Technique | str) -> Technique:
    if isinstance(technique, Technique):
        return technique
    try:
        return _BY_NAME[technique]
    except KeyError:
        raise ValueError(f"unknown technique {technique!r}; known: {sorted(_BY_NAME)}") from None


def _level(tricks: Iterable[str]) -> float:
    return max((_SOPH[t] for t in tricks), default=0.0)


# ---------------------------------------------------------------------------
# Rules and info
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rules:
    """What a jail checks and how it runs its input (see :mod:`skate.games.pyjail.generator`)."""

    mode: str = "eval"  # "eval" or "exec"
    builtins: tuple[str, ...] | None = None  # None: all of them; otherwise only these names
    scope: tuple[str, ...] = ()  # names of the jail's own scope the input sees ("os", "user_input")
    banned_words: tuple[str, ...] = ()
    ignore_case: bool = False  # words are looked for in the lower-cased input
    banned_chars: str = ""
    max_len: int | None = None
    truncate: bool = False  # input cut to max_len instead of refused
    ascii_only: bool = False
    banned_nodes: tuple[str, ...] = ()  # ast node class names
    banned_names: tuple[str, ...] = ()  # ast.Name ids
    no_strings: bool = False  # no str constants in the tree
    censor: int = 0  # 0..4, see skate.games.pyjail.generator's docstring

    @property
    def has_ast(self) -> bool:
        return bool(self.banned_nodes or self.banned_names or self.no_strings)


@dataclass(frozen=True)
class JailInfo:
    """What :func:`read_jail` recovers from a jail the generator wrote."""

    kind: str
    difficulty: float  # least sophistication of a technique that breaks it
    technique: str  # that technique
    rules: Rules


def _kind_of_rules(rules: Rules) -> str:
    """The main defence: secondary defences are only ever added below it in this order."""
    if rules.has_ast:
        return "ast"
    if rules.max_len is not None:
        return "length"
    if rules.banned_chars:
        return "characters"
    if rules.banned_words:
        return "names"
    return "rewrite"


# Output channels and what each needs of the censor level (see Rules.censor).
_CHANNEL_MAX_CENSOR = {"return": 0, "print": 1, "error": 2, "stderr": 3, "rawfd": 4}


def _channel_ok(rules: Rules, channel: str) -> bool:
    if channel == "return" and rules.mode != "eval":
        return False
    return rules.censor <= _CHANNEL_MAX_CENSOR[channel]


def _has_builtin(rules: Rules, name: str) -> bool:
    if name == "__builtins__":  # the global name, a module only when every builtin is there
        return rules.builtins is None
    return rules.builtins is None or name in rules.builtins


def _static_ok(rules: Rules, text: str) -> bool:
    """The jail's own input checks, mirrored: does ``text`` get through to the evaluation?"""
    code = text
    if rules.max_len is not None:
        if rules.truncate:
            code = text[: rules.max_len]
        elif len(text) > rules.max_len:
            return False
    if rules.ascii_only and not code.isascii():
        return False
    probe_text = code.lower() if rules.ignore_case else code
    if any(word in probe_text for word in rules.banned_words):
        return False
    if any(ch in code for ch in rules.banned_chars):
        return False
    if rules.has_ast:  # other jails just run it: the builders only write valid syntax
        try:
            tree = ast.parse(code, mode=rules.mode)
        except (SyntaxError, ValueError):
            return False
        banned = tuple(getattr(ast, n) for n in rules.banned_nodes)
        for node in ast.walk(tree):
            if banned and isinstance(node, banned):
                return False
            if isinstance(node, ast.Name) and node.id in rules.banned_names:
                return False
            if rules.no_strings and isinstance(node, ast.Constant) and isinstance(node.value, str):
                return False
    return True
