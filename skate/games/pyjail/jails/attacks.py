"""The attacks on PyJail jails: every way through some rules, and the inputs attackers send.

``_solutions`` enumerates every style's canonical payload that gets through a jail's rules (the
least level among them is the jail's difficulty); :func:`probe`, :func:`breaker` and
:func:`attack_inputs` pick and vary the inputs a simulated attacker tries.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from skate.games.pyjail.jails.model import (
    _SOPH,
    TECHNIQUES,
    JailInfo,
    Rules,
    Technique,
    _channel_ok,
    _has_builtin,
    _level,
    _static_ok,
    _technique,
)
from skate.games.pyjail.jails.payloads import (
    _ATTRS,
    _CHANNELS,
    _FORMS,
    _NAMES,
    _ROUTES,
    _STRINGS,
    _Builder,
    _cat,
    _Frag,
    _Style,
)

# ---------------------------------------------------------------------------
# Enumerating the attacks on some rules
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Solution:
    style: _Style
    text: str
    tricks: frozenset[str]
    level: float
    needs: frozenset[str] = frozenset()
    scope: frozenset[str] = frozenset()


def _styles(rules: Rules, canonical: bool = False) -> list[_Style]:
    """Every style that can work at run time under ``rules`` (before any filter).

    ``canonical``: leave out the spellings that change nothing in a canonical build (split
    strings, escapes and fullwidth letters are only used there to get round a filter).
    """
    styles = []
    channels = [c for c in _CHANNELS if _channel_ok(rules, c)]
    routes = [r for r in _ROUTES if r != "scope" or "os" in rules.scope]
    spellings: tuple[str, ...] = _STRINGS
    name_styles: tuple[str, ...] = _NAMES
    if canonical and not rules.banned_words and not rules.banned_chars:
        spellings, name_styles = ("lit", "chr"), ("plain",)
    for strings in spellings:
        for names in name_styles:
            for attrs in _ATTRS:
                for route in routes:
                    for form in _FORMS:
                        for channel in channels:
                            styles.append(_Style("none", strings, names, attrs, route, form, channel))
            styles.append(_Style("eval_all", strings, names))
            if rules.mode == "exec":
                for route in ("import", "scope"):
                    if route in routes:
                        for form in ("item", "dump"):
                            for channel in channels:
                                styles.append(_Style("decorators", strings, names, "dot", route, form, channel))
    if rules.truncate and "user_input" in rules.scope:
        styles += [_Style("stage2", "lit", names) for names in name_styles]
    return styles


def _runtime_only(rules: Rules) -> Rules:
    return replace(
        rules,
        banned_words=(),
        ignore_case=False,
        banned_chars="",
        max_len=None,
        truncate=False,
        ascii_only=False,
        banned_nodes=(),
        banned_names=(),
        no_strings=False,
    )


@functools.lru_cache(maxsize=256)
def _inner_choices(rules: Rules) -> tuple[_Solution, ...]:
    """Payloads for a nested evaluation: no filter applies, only what is there at run time.

    The least sophisticated unwrapped payloads that can work under ``rules``' run-time
    conditions (builtins, scope, censoring).
    """
    bare = _runtime_only(rules)
    sols: dict[str, _Solution] = {}
    memo: dict = {}
    for style in _styles(bare, canonical=True):
        if style.wrapper != "none":
            continue
        frag = _build(bare, style, None, memo=memo)
        if frag is not None and _valid(bare, frag) and frag.text not in sols:
            sols[frag.text] = _Solution(style, frag.text, frag.tricks, _level(frag.tricks), frag.needs, frag.scope)
    best = min((s.level for s in sols.values()), default=None)
    least = [s for s in sols.values() if s.level == best]
    return tuple(sorted(least, key=lambda s: (len(s.tricks), len(s.text), s.text))[:6])


def _build(
    rules: Rules, style: _Style, rng: np.random.Generator | None, force: bool = False, memo: dict | None = None
) -> _Frag | None:
    b = _Builder(rules, style, rng, force, memo)
    if style.wrapper == "none":
        return b.plain_payload()
    if style.wrapper == "decorators":
        return b.decorated()
    inners = _inner_choices(rules)
    if not inners:
        return None
    inner = inners[int(rng.integers(len(inners)))] if rng is not None else inners[0]
    if inner.style.channel == "return":
        evaluator = b.name("eval")
    else:
        evaluator = b.pick([lambda: b.name("exec"), lambda: b.name("eval")])
    carried = _Frag("", inner.tricks, inner.needs, inner.scope)  # what the inner part relies on
    if style.wrapper == "eval_all":

        def spelled() -> _Frag:
            return b.s(inner.text)

        def as_bytes() -> _Frag:
            codes = ",".join(str(c) for c in inner.text.encode())
            return _cat(b.name("bytes"), "((", codes, ",))", tricks={"chr"})

        source = b.pick([spelled, as_bytes] if style.strings == "chr" else [spelled])
        return _cat(evaluator, "(", source, ")", carried, tricks={"eval_string"})
    # a second stage: the truncated head evaluates the rest of the jail's input variable
    limit = rules.max_len if rules.max_len is not None else 32
    head = _cat(evaluator, "(", replace(b.ident("user_input"), scope=frozenset({"user_input"})), f"[{limit}:])")
    if len(head.text) > limit:
        return None
    head = replace(head, text=head.text.ljust(limit))
    return _cat(head, inner.text, carried, tricks={"second_stage"})


def _valid(rules: Rules, frag: _Frag) -> bool:
    if (
        rules.truncate
        and rules.max_len is not None
        and len(frag.text) > rules.max_len
        and "second_stage" not in frag.tricks
    ):
        return False  # cut short: only a second stage survives the truncation
    if not all(_has_builtin(rules, n) for n in frag.needs):
        return False
    if not frag.scope <= set(rules.scope):
        return False
    return _static_ok(rules, frag.text)


@functools.lru_cache(maxsize=4096)
def _solutions(rules: Rules) -> tuple[_Solution, ...]:
    """Every canonical payload that breaks a jail with these rules, least level first."""
    found: dict[str, _Solution] = {}
    memo: dict = {}
    for style in _styles(rules, canonical=True):
        frag = _build(rules, style, None, memo=memo)
        if frag is not None and _valid(rules, frag) and frag.text not in found:
            found[frag.text] = _Solution(style, frag.text, frag.tricks, _level(frag.tricks), frag.needs, frag.scope)
    return tuple(sorted(found.values(), key=lambda s: s.level))


def _variant(rules: Rules, sol: _Solution, rng: np.random.Generator, max_level: float, tries: int = 4) -> str:
    """A surface variant of a solution (still valid, still within ``max_level``)."""
    for _ in range(tries):
        frag = _build(rules, sol.style, rng)
        if frag is not None and _valid(rules, frag) and _level(frag.tricks) <= max_level:
            return frag.text
    return sol.text


# ---------------------------------------------------------------------------
# Attacks
# ---------------------------------------------------------------------------

_GENERIC_LIMITS = (24, 32, 40)


def _features(tricks: frozenset[str], technique: str) -> bool:
    return technique in tricks or (technique == "direct" and not tricks)


_FORCED = {
    "strings": {"concat": "concat", "chr": "chr", "hexesc": "chr"},
    "names": {"unicode": "unicode"},
    "attrs": {"getattr": "getattr"},
    "route": {"scope": "short", "builtins": "getattr", "graph": "subclasses"},
    "form": {"dump": "short"},
    "channel": {"print": "print", "error": "error_leak", "stderr": "stderr", "rawfd": "raw_fd"},
    "wrapper": {"eval_all": "eval_string", "stage2": "second_stage", "decorators": "decorators"},
}


def _forced_tricks(style: _Style) -> frozenset[str]:
    """The tricks a forced build of ``style`` uses (what each part of the style stands for)."""
    parts = {"wrapper": style.wrapper, "strings": style.strings, "names": style.names}
    if style.wrapper in ("none", "decorators"):
        parts.update(attrs=style.attrs, route=style.route, form=style.form, channel=style.channel)
    if style.wrapper == "stage2":
        parts.pop("strings")
    return frozenset(_FORCED[k][v] for k, v in parts.items() if v in _FORCED[k])


@functools.lru_cache(maxsize=64)
def _generic_styles(technique: str, limit: int) -> tuple[tuple[_Style, Rules, int], ...]:
    """Styles that feature ``technique`` on a jail that filters nothing, for jails whose rules
    are unknown; with the number of other tricks each one brings along."""
    if technique == "second_stage":
        rules_list = [Rules(truncate=True, max_len=limit, scope=("user_input",))]
    else:
        rules_list = [Rules(), Rules(mode="exec")]
        if technique == "short":
            rules_list.append(Rules(scope=("os",)))
    soph = _SOPH[technique]
    out: dict[tuple[_Style, Rules], int] = {}
    for rules in rules_list:
        for style in _styles(rules):
            if rules.mode == "exec" and style.wrapper != "decorators":
                continue  # the same as in eval mode
            tricks = _forced_tricks(style)
            if _features(tricks, technique) and _level(tricks) <= soph:
                out.setdefault((style, rules), len(tricks - {technique}))
    return tuple((style, rules, extra) for (style, rules), extra in out.items())


def _generic_probe(tech: Technique, rng: np.random.Generator) -> str:
    limit = int(rng.choice(_GENERIC_LIMITS)) if tech.name == "second_stage" else 0
    options = _generic_styles(tech.name, limit)
    weights = np.array([1.0 / (1 + extra) ** 2 for _, _, extra in options])
    for _ in range(8):
        style, rules, _ = options[int(rng.choice(len(options), p=weights / weights.sum()))]
        frag = _build(rules, style, rng, force=True)
        if (
            frag is not None
            and _valid(rules, frag)
            and _features(frag.tricks, tech.name)
            and _level(frag.tricks) <= tech.sophistication + 1e-9
        ):
            return frag.text
    fallback = _build(Rules(), _Style(channel="print"), None)  # pragma: no cover - a fallback
    assert fallback is not None, "a plain print payload builds under no rules"  # pragma: no cover
    return fallback.text  # pragma: no cover


def _one_of_simplest(sols: Sequence[_Solution], rng: np.random.Generator, k: int = 6) -> _Solution:
    """One of the ``k`` solutions with the fewest tricks and the shortest text."""
    ranked = sorted(sols, key=lambda s: (len(s.tricks), len(s.text), s.text))[:k]
    return ranked[int(rng.integers(len(ranked)))]


def probe(technique: Technique | str, info: JailInfo | None, rng: np.random.Generator) -> str:
    """An input built with ``technique`` (and any less sophisticated trick it needs).

    With ``info`` the input is fitted to the jail's rules, using only tricks up to the
    technique's sophistication: it captures exactly when that sophistication reaches the jail's
    difficulty. When the tricks do not suffice (or without ``info``) it is the technique's
    generic form, written for a jail that filters nothing.
    """
    tech = _technique(technique)
    if info is not None:
        sols = [s for s in _solutions(info.rules) if s.level <= tech.sophistication + 1e-9]
        if sols:
            featured = [s for s in sols if _features(s.tricks, tech.name)] or sols
            sol = _one_of_simplest(featured, rng)
            return _variant(info.rules, sol, rng, tech.sophistication + 1e-9)
    return _generic_probe(tech, rng)


def breaker(info: JailInfo, rng: np.random.Generator) -> str:
    """An input that captures the flag on the jail ``info`` describes (one of its simplest)."""
    sols = _solutions(info.rules)
    if not sols:
        raise ValueError("these rules leave no way to the flag")
    sol = _one_of_simplest([s for s in sols if s.level <= sols[0].level + 1e-9], rng)
    return _variant(info.rules, sol, rng, sol.level + 1e-9)


_SITUATIONAL = frozenset({"short", "second_stage", "decorators"})
"""Techniques that only work on jails of a particular shape (a scope that holds ``os``, a
truncation, exec mode): tried last by an attacker who cannot see the jail."""


def attack_inputs(
    skill: float, info: JailInfo | None, n: int, rng: np.random.Generator, noise: float = 0.05
) -> list[str]:
    """``n`` distinct inputs an attacker of ``skill`` tries before finding the break.

    The attacker knows the techniques whose sophistication is at most ``skill`` plus a little
    normal noise (sd ``noise``) and tries them most sophisticated first, each fitted to the
    jail's rules when ``info`` is given. Without ``info`` (the source is hidden, or not one of
    the generator's jails) the generic forms are tried, the situational techniques
    (:data:`_SITUATIONAL`) after the others. When the known techniques are exhausted it tries
    further variants of them.
    """
    if n <= 0:
        return []
    known = [t for t in TECHNIQUES if t.sophistication <= skill + float(rng.normal(0.0, noise))]
    known = sorted(known or TECHNIQUES[:1], key=lambda t: -t.sophistication)
    if info is None:
        known = [t for t in known if t.name not in _SITUATIONAL] + [t for t in known if t.name in _SITUATIONAL]
    out: list[str] = []
    for i in range(4 * n):
        text = probe(known[i % len(known)], info, rng)
        if text not in out:
            out.append(text)
            if len(out) == n:
                break
    return out
