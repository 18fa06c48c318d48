"""Templates for ``strings`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- a chain of string method calls
- building a string character by character with conditions
- character codes with ord and chr
- f-string alignment, padding and number formats
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from skate.games.cop.programs.kit import _LOOPS, _TEXTS, _WORDS, _Ctx, _one_of, _variant, _Writer


@dataclass(frozen=True)
class _StrStep:
    """A string transformation: source template and the same operation in Python."""

    template: str
    apply: Callable[[str], str]


def _string_steps(ctx: _Ctx, current: str) -> list[_StrStep]:
    letters = sorted({c for c in current if c.isalpha()})
    c1 = ctx.pick(letters) if letters else "a"
    c2 = ctx.pick("aeiou*-_#0123456789xyz")
    sep = ctx.pick(("-", "_", "", "/", ".", "+"))
    k = ctx.randint(1, 3)
    width = len(current) + ctx.randint(2, 5)
    fill = ctx.pick("*-=.#")
    steps = [
        _StrStep("{v} = {v}.upper()", str.upper),
        _StrStep("{v} = {v}.lower()", str.lower),
        _StrStep("{v} = {v}.title()", str.title),
        _StrStep("{v} = {v}.strip()", str.strip),
        _StrStep(f"{{v}} = {{v}}.replace({c1!r}, {c2!r})", lambda s: s.replace(c1, c2)),
        _StrStep(f"{{v}} = {sep!r}.join({{v}}.split())", lambda s: sep.join(s.split())),
        _StrStep(f"{{v}} = {{v}} + str({{v}}.count({c1!r}))", lambda s: s + str(s.count(c1))),
    ]
    if ctx.d >= 0.3:
        steps += [
            _StrStep("{v} = {v}.swapcase()", str.swapcase),
            _StrStep("{v} = {v}.capitalize()", str.capitalize),
            _StrStep(f"{{v}} = {{v}}.replace({c1!r}, {c2!r}, {k})", lambda s: s.replace(c1, c2, k)),
            _StrStep(f"{{v}} = {{v}}.center({width}, {fill!r})", lambda s: s.center(width, fill)),
            _StrStep("{v} = ' '.join(reversed({v}.split()))", lambda s: " ".join(reversed(s.split()))),
            _StrStep(
                f"{{v}} = {{v}}.partition({c1!r})[2] + {{v}}.partition({c1!r})[0]",
                lambda s: s.partition(c1)[2] + s.partition(c1)[0],
            ),
        ]
    if ctx.d >= 0.6:
        steps += [
            _StrStep(f"{{v}} = {{v}}.rstrip({c1!r}).lstrip({fill!r})", lambda s: s.rstrip(c1).lstrip(fill)),
            _StrStep(f"{{v}} = {{v}}[{k}:] + {{v}}[:{k}]", lambda s: s[k:] + s[:k]),
            _StrStep(f"{{v}} = {{v}}.split({c1!r}, 1)[-1]", lambda s: s.split(c1, 1)[-1]),
            _StrStep(f"{{v}} = str({{v}}.find({c1!r})) + {{v}}", lambda s: str(s.find(c1)) + s),
            _StrStep("{v} = ''.join(sorted(set({v}.lower())))", lambda s: "".join(sorted(set(s.lower())))),
        ]
    return steps


@_variant("strings", "a chain of string method calls")
def _strings_methods(ctx: _Ctx, w: _Writer) -> str:
    v = ctx.name(_TEXTS)
    words = ctx.words(ctx.scaled(2, 4))
    if ctx.hard(0.5):
        words = [word.capitalize() if ctx.chance(0.5) else word for word in words]
    value = " ".join(words)
    if ctx.hard(0.5):
        value = " " * ctx.randint(1, 3) + value + " " * ctx.randint(1, 3)
    w(f"{v} = {value!r}")
    for _ in range(ctx.scaled(1, 6)):
        for _attempt in range(10):
            step = ctx.pick(_string_steps(ctx, value))
            new = step.apply(value)
            if 0 < len(new) <= 48 and new != value:
                break
        else:
            continue
        w(step.template.format(v=v))
        value = new
    return _one_of(ctx, v, f"len({v}), {v}", f"{v}.split()")


def _char_action(ctx: _Ctx, out: str, ch: str, i: str | None) -> str:
    options = [f"{out} += {ch}", f"{out} = {ch} + {out}", f"{out} += {ch}.upper()", f"{out} += {ch} * 2"]
    if i is not None:
        options += [f"{out} += str({i})", f"{out} += {ch} * ({i} % 3)"]
    if ctx.d >= 0.5:
        options += [
            f"{out} += chr(ord({ch}) + 1)",
            f"{out} = {out}[1:] + {ch}",
            f"{out} = {out}[:{ctx.randint(1, 3)}] + {ch}.upper()",
        ]
    return ctx.pick(options)


def _char_cond(ctx: _Ctx, out: str, ch: str, i: str | None) -> str:
    options = [
        f'{ch} in "aeiou"',
        f'{ch} < "{ctx.pick("fhkmpt")}"',
        f'{ch} not in "{"".join(ctx.sample("rstlnbcdg", 3))}"',
    ]
    if i is not None:
        k = ctx.randint(2, 4)
        options += [f"{i} % {k} == {ctx.randint(0, k - 1)}", f"{i} > {ctx.randint(1, 4)}"]
    if ctx.d >= 0.5:
        options += [f"len({out}) > {ctx.randint(2, 6)}", f"{ch} == {out}[-1:]", f"{out}.count({ch}) == 0"]
    return ctx.pick(options)


@_variant("strings", "building a string character by character with conditions")
def _strings_build(ctx: _Ctx, w: _Writer) -> str:
    out = ctx.name(("out", "res", "acc", "built", "buf", "path"))
    ch = ctx.name(("ch", "c", "letter", "sym", "glyph"))
    use_index = ctx.chance(0.3 + 0.5 * ctx.d)
    i = ctx.name(_LOOPS) if use_index else None
    many = ctx.hard(0.6)
    word_var = ctx.name(_TEXTS)
    if many:
        ws = ctx.name(("words", "names", "tokens", "pieces"))
        w(f"{ws} = {ctx.words(ctx.randint(2, 3))!r}")
    else:
        w(f"{word_var} = {ctx.pick(_WORDS) + ctx.pick(_WORDS)!r}")
    w(f"{out} = ''")
    header = f"for {i}, {ch} in enumerate({word_var}):" if i else f"for {ch} in {word_var}:"

    def body() -> None:
        with w.block(header):
            branches = ctx.scaled(0, 3)
            if branches == 0:
                w(_char_action(ctx, out, ch, i))
            for b in range(branches):
                with w.block(f"{'if' if b == 0 else 'elif'} {_char_cond(ctx, out, ch, i)}:"):
                    if ctx.hard(0.3):
                        w(ctx.pick(("continue", "break")) if b > 0 else _char_action(ctx, out, ch, i))
                    else:
                        w(_char_action(ctx, out, ch, i))
            if branches and ctx.chance(0.7):
                with w.block("else:"):
                    w(_char_action(ctx, out, ch, i))

    if many:
        with w.block(f"for {word_var} in {ws}:"):
            body()
            w(f"{out} += {ctx.pick('|-/.')!r}")
    else:
        body()
    return _one_of(ctx, out, f"{out}, len({out})")


@_variant("strings", "character codes with ord and chr")
def _strings_codes(ctx: _Ctx, w: _Writer) -> str:
    msg, ch = ctx.name(_TEXTS), ctx.name(("ch", "c", "letter", "sym"))
    word = ctx.pick(_WORDS) + (ctx.pick(_WORDS) if ctx.hard(0.5) else "")
    w(f"{msg} = {word!r}")
    shift = ctx.randint(1, 25)
    if ctx.d < 0.25:
        return _one_of(
            ctx,
            f"ord({msg}[{ctx.randint(0, 2)}]) - ord('a')",
            f"chr(ord({msg}[0]) + {shift % 5 + 1})",
            f"sum(ord({ch}) for {ch} in {msg}) % {ctx.randint(10, 99)}",
        )
    out = ctx.name(("enc", "coded", "shifted", "secret", "cipher"))
    key = ctx.name(("shift", "key", "offset", "rot"))
    w(f"{key} = {shift}")
    expr = f"chr((ord({ch}) - 97 + {key}) % 26 + 97)"
    if ctx.hard(0.8):
        i = ctx.name(_LOOPS)
        w(f"{out} = ''")
        with w.block(f"for {i}, {ch} in enumerate({msg}):"):
            with w.block(f"if {ch} in 'aeiou':" if ctx.chance(0.5) else f"if {i} % 2 == 0:"):
                w(f"{out} += {expr}")
            with w.block("else:"):
                if ctx.chance(0.5):
                    w(f"{out} += chr((ord({ch}) - 97 - {i} * {key}) % 26 + 97)")
                else:
                    w(f"{out} += {ch}.upper()")
    else:
        w(f"{out} = ''.join({expr} for {ch} in {msg})")
    tail = ctx.pick(
        (
            out,
            f"{out}[::-1]",
            f"{out}, sum(map(ord, {out})) % {ctx.randint(50, 500)}",
            f"{out}.count({ctx.pick('aeiou')!r}), {out}",
        )
    )
    return tail


@_variant("strings", "f-string alignment, padding and number formats")
def _strings_format(ctx: _Ctx, w: _Writer) -> str:
    rows = ctx.name(("rows", "records", "stock", "entries", "menu"))
    name = ctx.name(("item", "label", "name", "what"))
    qty = ctx.name(("qty", "n", "amount", "units"))
    parts = ctx.name(("parts", "cells", "lines", "bits"))
    records = [(ctx.pick(_WORDS), ctx.randint(0, 250)) for _ in range(ctx.scaled(1, 4))]
    w(f"{rows} = {records!r}")
    specs = [":>6", ":<5", ":^7", ""]
    nspecs = [":03d", ":>4", ""]
    if ctx.d >= 0.4:
        specs += [":*^8", ":.3", ":-<6"]
        nspecs += [":x", ":b", ":+d", ":,", ":#o", ":05.1f"]
    fmt = f"{{{name}{ctx.pick(specs)}}}{ctx.pick('|:;/')}{{{qty}{ctx.pick(nspecs)}}}"
    w(f"{parts} = []")
    with w.block(f"for {name}, {qty} in {rows}:"):
        if ctx.hard(0.7):
            with w.block(f"if {qty} % {ctx.randint(2, 4)} == 0:"):
                w(f"{name} = {name}.upper()")
            if ctx.hard(0.5):
                with w.block(f"elif len({name}) > {ctx.randint(3, 5)}:"):
                    w(f"{qty} = {qty} * {ctx.randint(2, 9)}")
        w(f'{parts}.append(f"{fmt}")')
    return _one_of(ctx, f"{ctx.pick(['/', ' ', ';', ','])!r}.join({parts})", parts)
