"""Making PyJail jails: the rules for a kind and strength, sound jails and flawed ones.

:func:`make_jail` picks the rules of a jail of some kind and strength, has
:class:`~skate.games.pyjail.jails.writer._Writer` write them and checks that
:func:`~skate.games.pyjail.jails.reader.read_jail` reads the same rules back; :func:`flawed_jail`
writes jails that are wrong on purpose (they do not parse, define no jail, cannot be broken, or
hang).
"""

from __future__ import annotations

import ast

import numpy as np

from skate.games.pyjail.jails.model import FLAWS, KINDS, LEVELS, Rules
from skate.games.pyjail.jails.reader import read_jail
from skate.games.pyjail.jails.spelling import _indent
from skate.games.pyjail.jails.wording import _sample
from skate.games.pyjail.jails.writer import _Writer

# ---------------------------------------------------------------------------
# Sound jails: their rules, written and read back
# ---------------------------------------------------------------------------

# Harmless extras a stronger jail bans besides its main defence.
_EXTRA_WORDS = ("exec", "open", "system", "subprocess", "compile", "breakpoint", "popen", "spawn", "pty", "shutil")
_MINOR_CHARS = (";", "`", "$", "!", "&", "|", "~", "?")
_MINOR_NODES = ("Lambda", "NamedExpr", "Await", "Yield", "YieldFrom", "Starred", "SetComp", "JoinedStr")
_SAFE_POOL = ("abs", "len", "min", "max", "sorted", "str", "int", "print", "range", "sum", "repr", "round")


def _rules_for(kind: str, level: int, strength: float, rng: np.random.Generator) -> Rules:
    """The rules of a jail of ``kind`` at ``level`` (0..4), extras growing with ``strength``."""
    extra = 2 + round(strength * 3)
    words: list[str]
    if kind == "names":
        words = _sample(rng, _EXTRA_WORDS, extra)
        ignore = bool(rng.random() < 0.5)
        flag = "flag" if ignore else "FLAG"
        censor = 0
        if level >= 1:
            words += ["os", flag]
        if level >= 2:
            words += ["import", "environ", "eval", "getenv"]
            censor = int(rng.integers(0, 2))
        if level >= 3:
            words += ["getattr", "vars", "builtins", "__", "globals", "exec", "print", "chr"]
            censor = 1
        if level >= 4:
            words += ["sys", "stdout"]
            censor = 4
        words = list(dict.fromkeys(words))
        rng.shuffle(words)
        return Rules(banned_words=tuple(words), ignore_case=ignore, censor=censor)
    if kind == "characters":
        chars = _sample(rng, _MINOR_CHARS, extra)
        builtins: tuple[str, ...] | None = None
        words = []
        if level in (1, 2, 3):
            chars.append(".")
        if level in (2, 3):
            chars += ["'", '"']
        if level == 3:
            chars.append("_")
            words = ["getattr"]
            if rng.random() < 0.5:
                chars.append("+")
        if level == 4:
            chars += ["+", "\\", rng.choice(["'", '"'])]
            builtins = ()
        return Rules(banned_chars="".join(dict.fromkeys(chars)), banned_words=tuple(words), builtins=builtins)
    if kind == "length":
        if level == 0:
            return Rules(max_len=int(rng.integers(34, 49)))
        if level == 1:
            return Rules(max_len=int(rng.integers(24, 31)))
        if level == 2:
            scope = ("os",) if rng.random() < 0.5 else ("os", "user_input")
            return Rules(max_len=int(rng.integers(23, 27)), scope=scope, censor=3)
        return Rules(
            max_len=int(rng.integers(22, 31)), truncate=True, scope=("user_input",), censor=3 if level == 3 else 4
        )
    if kind == "ast":
        nodes = _sample(rng, _MINOR_NODES, extra)
        if level == 0:
            return Rules(banned_nodes=tuple(nodes))
        if level == 1:
            return Rules(banned_nodes=tuple(nodes + ["Attribute"]))
        if level == 2:
            more = ["Subscript"] if rng.random() < 0.5 else []
            return Rules(banned_nodes=tuple(nodes + ["Attribute"] + more), no_strings=True)
        if level == 3:
            names = [
                "__import__",
                "eval",
                "exec",
                "compile",
                "getattr",
                "vars",
                "globals",
                "locals",
                "open",
                "breakpoint",
                "__builtins__",
                "input",
                "help",
            ]
            nodes = [n for n in nodes if n not in ("Lambda",)]
            return Rules(banned_nodes=tuple(nodes), banned_names=tuple(names), censor=1)
        nodes = [n for n in nodes if n not in ("Lambda",)]
        return Rules(mode="exec", banned_nodes=tuple(["Call", "Import", "ImportFrom"] + nodes))
    if kind == "rewrite":
        mode = "exec" if level >= 1 and rng.random() < 0.4 else "eval"
        censor = (1, 2, 3, 4, 4)[level]
        builtins = None
        if level == 4:
            builtins = () if rng.random() < 0.5 else tuple(_sample(rng, _SAFE_POOL, 6))
        return Rules(mode=mode, censor=censor, builtins=builtins)
    raise ValueError(f"unknown jail kind {kind!r}; known: {KINDS}")


def _level_of(strength: float) -> int:
    return int(min(max(strength, 0.0), 1.0) * (LEVELS - 1) + 0.5)


def _write_jail(kind: str, strength: float, rng: np.random.Generator) -> tuple[Rules, str, frozenset[str]]:
    """The rules, the source and the forms the writer chose (``kind:choice`` labels) of the jail
    :func:`make_jail` returns for the same arguments and rng state, without reading it back."""
    rules = _rules_for(kind, _level_of(strength), strength, rng)
    writer = _Writer(kind, rules, rng)
    source = writer.source()
    return rules, source, frozenset(writer.traits)


def make_jail(kind: str, strength: float, rng: np.random.Generator) -> str:
    """Source of a breakable jail whose main defence is ``kind``, stricter as ``strength`` grows.

    ``strength`` in [0, 1] is rounded to one of five levels per kind (see :mod:`skate.games.pyjail.generator`
    for the difficulty each level has); within a level, a higher strength adds harmless extra
    banned words, characters or nodes.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown jail kind {kind!r}; known: {KINDS}")
    rules, source, _ = _write_jail(kind, strength, rng)
    info = read_jail(source)
    if info is None or info.rules != rules or info.kind != kind:  # pragma: no cover - a bug
        raise RuntimeError(f"wrote a {kind} jail that does not read back: {rules}")
    return source


# ---------------------------------------------------------------------------
# Flawed jails
# ---------------------------------------------------------------------------


def flawed_jail(flaw: str, kind: str, strength: float, rng: np.random.Generator) -> str:
    """A jail of ``kind`` that is wrong in the way ``flaw`` names (see :data:`FLAWS`).

    ``syntax``: does not parse. ``no_jail``: parses but defines no top-level ``jail``.
    ``unbreakable``: no input reaches the flag (the input is only ever echoed, evaluated as a
    literal, or evaluated as arithmetic over digits). ``hangs``: loops forever on every input.
    """
    if flaw not in FLAWS:
        raise ValueError(f"unknown flaw {flaw!r}; known: {FLAWS}")
    if kind not in KINDS:
        raise ValueError(f"unknown jail kind {kind!r}; known: {KINDS}")
    rules = _rules_for(kind, _level_of(strength), strength, rng)
    writer = _Writer(kind, rules, rng)
    if flaw == "hangs":
        # a clean-up loop whose counter is never advanced
        counter = writer.pick(("tries", "rounds", "attempt_no", "i"))
        old, new = writer.pick((("__", "_"), ("  ", " "), ("\t", " ")))
        loop = [
            f"{counter} = 0",
            f"while {counter} < {int(rng.integers(2, 6))}:",
            f"    user_input = user_input.replace({old!r}, {new!r})",
        ]
        return writer.source(body_prefix=loop)
    if flaw == "unbreakable":
        return _unbreakable(writer)
    source = writer.source()
    if flaw == "no_jail":
        other = writer.pick(("run", "sandbox", "challenge", "check", "jail_input", "evaluate"))
        if rng.random() < 0.5:
            return source.replace("def jail(user_input", f"def {other}(user_input")
        lines = source.split("\n")
        start = lines.index(next(line for line in lines if line.startswith("def jail(")))
        body = lines[start:]
        return "\n".join(
            lines[:start]
            + [f"class {other.title().replace('_', '')}:"]
            + ["    " + line if line else line for line in body]
        )
    # syntax
    lines = source.split("\n")
    options = []
    for i, line in enumerate(lines):
        if line.startswith("def jail(") and line.endswith(":"):
            options.append((i, line[:-1]))
        if line.strip().startswith("return ") and line.rstrip().endswith(")"):
            options.append((i, line.rstrip()[:-1]))
        if line.strip().startswith(("for ", "if ")) and line.endswith(":"):
            options.append((i, line[:-1]))
    i, broken = options[int(rng.integers(len(options)))]
    lines[i] = broken
    out = "\n".join(lines)
    try:
        ast.parse(out)
    except SyntaxError:
        return out
    lines[options[0][0]] = options[0][1]  # pragma: no cover - the def line always breaks it
    return "\n".join(lines)


def _unbreakable(writer: _Writer) -> str:
    """A jail with the kind's checks whose evaluation can never reach anything useful."""
    code = writer.names["code"]
    style = writer.pick(("calculator", "literal", "echo"))
    imports = {"import re"} if style == "calculator" else set()
    if style == "literal" or writer.rules.has_ast:
        imports.add("import ast")
    consts = writer.constants()
    if style == "calculator":
        consts.append('ARITHMETIC = re.compile(r"[0-9+*/%() .-]*")')
    body = [f"{code} = user_input[:{writer.names['len']}]" if writer.rules.truncate else f"{code} = user_input"]
    body += writer.checks_inline(code)
    if style == "calculator":
        body += [
            f"if not ARITHMETIC.fullmatch({code}):",
            "    return 'digits and operators only'",
            f'return str(eval({code}, {{"__builtins__": {{}}}}, {{}}))',
        ]
    elif style == "literal":
        body += [
            "try:",
            f"    return repr(ast.literal_eval({code}))",
            "except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):",
            "    return 'only literals'",
        ]
    else:
        body += [f"return 'You said: ' + {code}"]
    lines = writer.docstring(state_rules=False)
    if imports:
        lines += [""] + sorted(imports)
    if consts:
        lines += [""] + consts
    lines += ["", "", "def jail(user_input: str) -> str:"] + _indent(body)
    return "\n".join(lines) + "\n"
