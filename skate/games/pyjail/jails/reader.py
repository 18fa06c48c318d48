"""Reading PyJail jails back: their rules, kind and difficulty from the source alone.

:func:`read_jail` parses a jail the generator wrote (anything else gives ``None``) and rates it
with the attack model of :mod:`~skate.games.pyjail.jails.attacks`; :func:`guess_difficulty` is a
heuristic for every other jail.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import replace
from typing import Any

from skate.games.pyjail.jails.attacks import _solutions
from skate.games.pyjail.jails.model import _SOPH, JailInfo, Rules, _kind_of_rules
from skate.games.pyjail.jails.wording import (
    _BANNER_FUNCS,
    _CHARS_CONST,
    _CHECK_FUNCS,
    _EXC_CLASSES,
    _GUARD_CLASSES,
    _HELPERS,
    _LEN_CONST,
    _NAMES_CONST,
    _NODES_CONST,
    _REFUSE_FUNCS,
    _RUN_FUNCS,
    _SAFE_CONST,
    _STRS_CONST,
    _VALIDATORS,
    _WORDS_CONST,
)

# ---------------------------------------------------------------------------
# Reading jails back
# ---------------------------------------------------------------------------

_CONST_ROLE = {
    **{c: "words" for c in _WORDS_CONST},
    **{c: "chars" for c in _CHARS_CONST},
    **{c: "len" for c in _LEN_CONST},
    **{c: "nodes" for c in _NODES_CONST},
    **{c: "bnames" for c in _NAMES_CONST},
    **{c: "strs" for c in _STRS_CONST},
    **{c: "safe" for c in _SAFE_CONST},
}
_IMPORTS = {"ast", "builtins", "contextlib", "io", "os"}
_FROM_IMPORTS = {"contextlib": {"redirect_stdout", "redirect_stderr"}, "io": {"StringIO"}}
_TOP_FUNCS = frozenset(
    _HELPERS
    + _REFUSE_FUNCS
    + _BANNER_FUNCS
    + _VALIDATORS
    + _RUN_FUNCS
    + tuple(name for pool in _CHECK_FUNCS.values() for name in pool)
)
_TOP_CLASSES = frozenset(_GUARD_CLASSES + _EXC_CLASSES)
_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


class _NotOurs(Exception):
    pass


def _elements(node: ast.expr) -> list[ast.expr]:
    """The items of a constant collection: a list, tuple or set display, one of these passed to
    frozenset/set/tuple/list, or ``"a b c".split()``."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("frozenset", "set", "tuple", "list") and len(node.args) == 1:
            return _elements(node.args[0])
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "split"
            and not node.args
            and isinstance(func.value, ast.Constant)
            and isinstance(func.value.value, str)
        ):
            return [ast.Constant(word) for word in func.value.value.split()]
    raise _NotOurs


def _str_tuple(node: ast.expr) -> tuple[str, ...]:
    elts = _elements(node)
    out = tuple(e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    if len(out) < len(elts):
        raise _NotOurs
    return out


def _chars(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    chars = _str_tuple(node)
    if not all(len(c) == 1 for c in chars):
        raise _NotOurs
    return "".join(chars)


def _node_names(node: ast.expr) -> tuple[str, ...]:
    """Banned node classes, written as ``ast.Call`` or as ``"Call"``."""
    names = []
    for elt in _elements(node):
        if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) and elt.value.id == "ast":
            name = elt.attr
        elif isinstance(elt, ast.Constant) and isinstance(elt.value, str):
            name = elt.value
        else:
            raise _NotOurs
        if not isinstance(getattr(ast, name, None), type):
            raise _NotOurs
        names.append(name)
    return tuple(names)


def _is_main_guard(stmt: ast.stmt) -> bool:
    test = getattr(stmt, "test", None)
    return (
        isinstance(stmt, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
        and not stmt.orelse
    )


def _known_statement(stmt: ast.stmt) -> bool:
    """A helper function or class of one of the names jails use, or a ``__main__`` block."""
    if isinstance(stmt, ast.FunctionDef):
        return stmt.name in _TOP_FUNCS
    if isinstance(stmt, ast.ClassDef):
        return stmt.name in _TOP_CLASSES
    return _is_main_guard(stmt)


def _own_nodes(fn: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of ``fn``'s own scope (not those of the functions, classes, lambdas and
    comprehensions inside it)."""
    out, todo = [], list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _namespace(node: ast.expr, assigns: dict[str, list[ast.expr]]) -> ast.expr:
    """The namespace expression, through a local variable it may have been put in."""
    if isinstance(node, ast.Name):
        values = assigns.get(node.id, [])
        if len(values) != 1:
            raise _NotOurs
        return values[0]
    return node


def _builtins_entry(ns: ast.expr) -> ast.expr:
    """The value of ``__builtins__`` in ``{"__builtins__": ...}`` or ``dict(__builtins__=...)``."""
    if (
        isinstance(ns, ast.Dict)
        and len(ns.keys) == 1
        and isinstance(ns.keys[0], ast.Constant)
        and ns.keys[0].value == "__builtins__"
    ):
        return ns.values[0]
    if (
        isinstance(ns, ast.Call)
        and isinstance(ns.func, ast.Name)
        and ns.func.id == "dict"
        and not ns.args
        and len(ns.keywords) == 1
        and ns.keywords[0].arg == "__builtins__"
    ):
        return ns.keywords[0].value
    raise _NotOurs


def _parse_rules(source: str) -> Rules:
    tree = ast.parse(source)
    consts: dict[str, Any] = {}
    imported: set[str] = set()
    jail_fn = None
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and i == 0:
            continue
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name not in _IMPORTS or alias.asname:
                    raise _NotOurs
                imported.add(alias.name)
        elif isinstance(stmt, ast.ImportFrom):
            allowed = _FROM_IMPORTS.get(stmt.module or "", set())
            if stmt.level or not all(a.name in allowed and not a.asname for a in stmt.names):
                raise _NotOurs
        elif (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id in _CONST_ROLE
        ):
            role = _CONST_ROLE[stmt.targets[0].id]
            if role in consts:
                raise _NotOurs
            if role in ("words", "bnames", "safe"):
                consts[role] = _str_tuple(stmt.value)
            elif role == "nodes":
                consts[role] = _node_names(stmt.value)
            elif role == "chars":
                consts[role] = _chars(stmt.value)
            else:
                consts[role] = ast.literal_eval(stmt.value)
        elif isinstance(stmt, ast.FunctionDef) and stmt.name == "jail" and jail_fn is None:
            jail_fn = stmt
        elif not _known_statement(stmt):
            raise _NotOurs
    if jail_fn is None or [a.arg for a in jail_fn.args.args] != ["user_input"]:
        raise _NotOurs
    walked = list(ast.walk(tree))
    if any(isinstance(node, (ast.While, ast.AsyncFunctionDef, ast.Global, ast.Nonlocal)) for node in walked):
        raise _NotOurs
    calls = [node for node in walked if isinstance(node, ast.Call)]
    runners = [(c, c.func.id) for c in calls if isinstance(c.func, ast.Name) and c.func.id in ("eval", "exec")]
    if len(runners) != 1:
        raise _NotOurs
    runner, mode = runners[0]
    attrs = {node.attr for node in walked if isinstance(node, ast.Attribute)}
    used = attrs | {node.id for node in walked if isinstance(node, ast.Name)}
    assigns: dict[str, list[ast.expr]] = {}
    for node in walked:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigns.setdefault(node.targets[0].id, []).append(node.value)
    # builtins and scope from the namespace argument
    builtins: tuple[str, ...] | None = None
    scope: list[str] = []
    if len(runner.args) == 1 and not runner.keywords:
        if not any(node is runner for node in _own_nodes(jail_fn)):
            raise _NotOurs  # the default namespace is the jail's own only in its own body
        scope.append("user_input")
        if "os" in imported:
            scope.append("os")
    elif len(runner.args) == 2 and not runner.keywords:
        ns = _namespace(runner.args[1], assigns)
        if isinstance(ns, ast.Call) and isinstance(ns.func, ast.Name) and ns.func.id == "globals" and not ns.args:
            if "os" in imported:
                scope.append("os")
        else:
            value = _builtins_entry(ns)
            if isinstance(value, ast.Name) and value.id == "builtins" and "builtins" in imported:
                builtins = None
            elif (isinstance(value, ast.Dict) and not value.keys) or (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "dict"
                and not value.args
                and not value.keywords
            ):
                builtins = ()
            elif (
                isinstance(value, ast.DictComp)
                and "safe" in consts
                and isinstance(value.generators[0].iter, ast.Name)
                and _CONST_ROLE.get(value.generators[0].iter.id) == "safe"
            ):
                builtins = consts["safe"]
            else:
                raise _NotOurs
    else:
        raise _NotOurs
    handlers = {h.type.id for h in walked if isinstance(h, ast.ExceptHandler) and isinstance(h.type, ast.Name)}
    helpers = {node.name for node in walked if isinstance(node, ast.FunctionDef) and node.name in _HELPERS}
    helper_called = any(isinstance(c.func, ast.Name) and c.func.id in helpers for c in calls)
    if "redirect_stderr" in used and "BaseException" in handlers:
        censor = 4
    elif "redirect_stdout" in used and "Exception" in handlers:
        censor = 3
    elif "redirect_stdout" in used:
        censor = 2
    elif helper_called:
        censor = 1
    else:
        censor = 0
    truncate = False
    for node in walked:
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Slice)
            and isinstance(node.slice.upper, ast.Name)
            and _CONST_ROLE.get(node.slice.upper.id) == "len"
        ):
            truncate = True
    chars = consts.get("chars", "")
    max_len = consts.get("len")
    if not isinstance(chars, str) or (max_len is not None and not isinstance(max_len, int)):
        raise _NotOurs
    return Rules(
        mode=mode,
        builtins=builtins,
        scope=tuple(sorted(scope)),
        banned_words=consts.get("words", ()),
        ignore_case="lower" in attrs,
        banned_chars=chars,
        max_len=max_len,
        truncate=truncate,
        ascii_only="isascii" in attrs,
        banned_nodes=consts.get("nodes", ()),
        banned_names=consts.get("bnames", ()),
        no_strings=consts.get("strs") is False,
        censor=censor,
    )


@functools.lru_cache(maxsize=4096)
def read_jail(source: str) -> JailInfo | None:
    """The info of a jail :func:`make_jail` wrote; None for any other source."""
    try:
        rules = _parse_rules(source)
    except (_NotOurs, SyntaxError, ValueError, TypeError, RecursionError):
        return None
    rules = replace(rules, scope=tuple(sorted(rules.scope)))
    sols = _solutions(rules)
    if not sols:
        return None
    best = sols[0]
    top = max(best.tricks, key=lambda t: _SOPH[t], default="direct")
    return JailInfo(kind=_kind_of_rules(rules), difficulty=best.level, technique=top, rules=rules)


def kind_of(source: str) -> str | None:
    """The kind of a jail the generator wrote; None for any other source."""
    info = read_jail(source)
    return info.kind if info is not None else None


def difficulty(source: str) -> float:
    """The difficulty of a jail: exact for the generator's jails, :func:`guess_difficulty` otherwise."""
    info = read_jail(source)
    return info.difficulty if info is not None else guess_difficulty(source)


def guess_difficulty(source: str) -> float:
    """A rough difficulty for a jail the generator did not write, from the defences it visibly has.

    Every visible defence adds to a base of 0.1: a list of banned words (0.15; 0.1 more if it
    bans ``__`` or ``getattr``), of banned single characters (0.15), a length comparison (0.1),
    an :mod:`ast` inspection (0.2), builtins taken away (0.2), a rewrite of the output (0.1),
    stdout captured (0.1), stderr captured (0.15), ``BaseException`` caught (0.05), an ASCII or
    Unicode-normalisation check (0.1). The sum is clipped to [0, 1]; a jail that never calls
    ``eval`` or ``exec`` gets 0.9 (it may well be unbreakable); unparsable source gets 1.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return 1.0
    nodes = list(ast.walk(tree))
    names = {n.id for n in nodes if isinstance(n, ast.Name)}
    attrs = {n.attr for n in nodes if isinstance(n, ast.Attribute)}
    if not ({"eval", "exec"} & names):
        return 0.9
    score = 0.1
    seqs = [n for n in nodes if isinstance(n, (ast.List, ast.Tuple, ast.Set))]
    strs = [[e.value for e in s.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)] for s in seqs]
    words = [w for s in strs if len(s) >= 2 and any(len(x) > 1 for x in s) for w in s]
    if words:
        score += 0.15 + (0.1 if {"__", "getattr"} & set(words) else 0.0)
    single = [s for s in strs if len(s) >= 2 and all(len(x) == 1 for x in s)]
    char_strings = [
        n
        for n in nodes
        if isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Constant)
        and isinstance(n.value.value, str)
        and "char" in ast.dump(n.targets[0]).lower()
    ]
    if single or char_strings:
        score += 0.15
    if any(
        isinstance(n, ast.Compare)
        and any(
            isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "len"
            for c in [n.left, *n.comparators]
        )
        for n in nodes
    ):
        score += 0.1
    if "walk" in attrs or "NodeVisitor" in attrs or "parse" in attrs:
        score += 0.2
    if any(
        isinstance(n, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "__builtins__" for k in n.keys)
        for n in nodes
    ):
        score += 0.2
    if {"replace", "sub"} & attrs:
        score += 0.1
    if "redirect_stdout" in attrs or "redirect_stdout" in names:
        score += 0.1
    if "redirect_stderr" in attrs or "redirect_stderr" in names:
        score += 0.15
    if "BaseException" in names:
        score += 0.05
    if {"isascii", "normalize"} & attrs:
        score += 0.1
    return float(min(1.0, max(0.0, score)))
