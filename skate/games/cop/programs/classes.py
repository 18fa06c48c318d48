"""Templates for ``classes`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- an object whose methods mutate its state
- inheritance, overriding and super()
- dunder methods for arithmetic, comparison and repr
- class attributes shared between instances
"""

from __future__ import annotations

from skate.games.cop.programs.kit import (
    _CLASSES,
    _METHODS,
    _SCALARS,
    _SEQS,
    _SHORT,
    _WORDS,
    _Ctx,
    _one_of,
    _variant,
    _Writer,
)


@_variant("classes", "an object whose methods mutate its state")
def _classes_state(ctx: _Ctx, w: _Writer) -> str:
    cls = ctx.name(_CLASSES)
    attr = ctx.name(_SCALARS)
    meth = ctx.name(_METHODS)
    obj = ctx.name(("obj", "item", "unit", "thing", "me"))
    amount = ctx.name(("amount", "n", "qty", "by"))
    other = ctx.name(_METHODS) if ctx.d >= 0.3 else None
    history = ctx.name(("history", "trail", "past", "log")) if ctx.hard(0.5) else None
    with w.block(f"class {cls}:"):
        with w.block(f"def __init__(self, {attr}={ctx.randint(0, 9)}):"):
            w(f"self.{attr} = {attr}")
            if history:
                w(f"self.{history} = []")
        with w.block(f"def {meth}(self, {amount}):"):
            if ctx.hard(0.7):
                with w.block(f"if {amount} > {ctx.randint(2, 6)}:"):
                    w(f"{amount} //= 2")
            w(f"self.{attr} += {amount}")
            if history:
                w(f"self.{history}.append(self.{attr})")
            w("return self")
        if other:
            with w.block(f"def {other}(self):"):
                w(
                    ctx.pick(
                        (
                            f"self.{attr} = self.{attr} * {ctx.randint(2, 3)} % {ctx.randint(10, 50)}",
                            f"self.{attr} -= {ctx.randint(1, 5)}",
                        )
                    )
                )
                w("return self")
    w(f"{obj} = {cls}({ctx.randint(0, 9)})")
    calls = []
    for _ in range(ctx.scaled(1, 6)):
        calls.append(f".{meth}({ctx.randint(1, 9)})" if not other or ctx.chance(0.6) else f".{other}()")
    if ctx.hard(0.5):
        w(f"{obj}{''.join(calls)}")
    else:
        for call in calls:
            w(f"{obj}{call}")
    tail = f"{obj}.{attr}, {obj}.{history}" if history else f"{obj}.{attr}"
    return tail


@_variant("classes", "inheritance, overriding and super()")
def _classes_inherit(ctx: _Ctx, w: _Writer) -> str:
    base = ctx.name(_CLASSES)
    sub = ctx.name(_CLASSES)
    meth = ctx.name(("area", "cost", "power", "size", "speed", "load"))
    k = ctx.name(("k", "n", "side", "w"))
    with w.block(f"class {base}:"):
        with w.block(f"def __init__(self, {k}):"):
            w(f"self.{k} = {k}")
        with w.block(f"def {meth}(self):"):
            w(f"return self.{k} * {ctx.randint(2, 4)}")
        describes = ctx.d >= 0.4
        if describes:
            with w.block("def describe(self):"):
                w(f"return type(self).__name__[:{ctx.randint(2, 4)}] + str(self.{meth}())")
    with w.block(f"class {sub}({base}):"):
        with w.block(f"def {meth}(self):"):
            w(
                ctx.pick(
                    (
                        f"return super().{meth}() + {ctx.randint(1, 5)}",
                        f"return self.{k} ** 2",
                        f"return super().{meth}() * 2 - self.{k}",
                    )
                )
            )
    classes = [base, sub]
    if ctx.hard(0.7):
        third = ctx.name(_CLASSES)
        with w.block(f"class {third}({sub}):"):
            with w.block(f"def __init__(self, {k}, extra={ctx.randint(1, 4)}):"):
                w(f"super().__init__({k} + extra)")
        classes.append(third)
    objs = ctx.name(("objs", "shapes", "fleet", "things"))
    w(f"{objs} = [{', '.join(f'{ctx.pick(classes)}({ctx.randint(1, 6)})' for _ in range(ctx.scaled(1, 5)))}]")
    o = ctx.name(("o", "s", "it"))
    if describes and ctx.chance(0.6):
        return f"[{o}.describe() for {o} in {objs}]"
    return _one_of(ctx, f"[{o}.{meth}() for {o} in {objs}]", f"sum({o}.{meth}() for {o} in {objs})")


@_variant("classes", "dunder methods for arithmetic, comparison and repr")
def _classes_dunder(ctx: _Ctx, w: _Writer) -> str:
    cls, a, b = ctx.name(_CLASSES), ctx.name(("x", "a", "lo", "w")), ctx.name(("y", "b", "hi", "h"))
    with w.block(f"class {cls}:"):
        with w.block(f"def __init__(self, {a}, {b}):"):
            w(f"self.{a}, self.{b} = {a}, {b}")
        with w.block("def __add__(self, other):"):
            w(f"return {cls}(self.{a} + other.{a}, self.{b} + other.{b})")
        with w.block("def __repr__(self):"):
            w(f"return f'{cls[0]}({{self.{a}}}, {{self.{b}}})'")
        arithmetic = ctx.d >= 0.3
        ordered = ctx.hard(0.8)
        if arithmetic:
            with w.block("def __mul__(self, k):"):
                w(f"return {cls}(self.{a} * k, self.{b} * k)")
            with w.block("def __eq__(self, other):"):
                w(f"return self.{a} + self.{b} == other.{a} + other.{b}")
        if ordered:
            with w.block("def __lt__(self, other):"):
                w(f"return (self.{a}, -self.{b}) < (other.{a}, -other.{b})")
            with w.block("def __len__(self):"):
                w(f"return abs(self.{a}) + abs(self.{b})")
    vs = [f"{cls}({ctx.randint(-3, 6)}, {ctx.randint(-3, 6)})" for _ in range(ctx.scaled(2, 4))]
    p, q = ctx.name(_SHORT), ctx.name(_SHORT)
    w(f"{p} = {vs[0]}", f"{q} = {vs[1]}")
    parts = [ctx.pick((f"{p} + {q}", f"{q} + {p} + {p}"))]
    if arithmetic:
        parts.append(
            ctx.pick(
                (
                    f"{p} * {ctx.randint(2, 4)}",
                    f"({p} + {q}) * {ctx.randint(2, 3)}",
                    f"{p} == {q}",
                    f"{p} * 2 == {q} + {q}",
                )
            )
        )
    if ordered:
        lst = ctx.name(_SEQS)
        w(f"{lst} = [{', '.join(vs)}]")
        parts.append(
            ctx.pick(
                (
                    f"sorted({lst})",
                    f"max({lst})",
                    f"sorted({lst}, key=len)",
                    f"min({lst}), len({lst}[-1])",
                )
            )
        )
    return ", ".join(parts)


@_variant("classes", "class attributes shared between instances")
def _classes_shared(ctx: _Ctx, w: _Writer) -> str:
    cls = ctx.name(_CLASSES)
    shared = ctx.name(("registry", "members", "log", "shelf", "seen"))
    count = ctx.name(("count", "made", "total", "issued"))
    label = ctx.name(("label", "tag", "name", "code"))
    with w.block(f"class {cls}:"):
        w(f"{count} = 0")
        if ctx.d >= 0.3:
            w(f"{shared} = []")
        with w.block(f"def __init__(self, {label}):"):
            w(f"self.{label} = {label}")
            w(f"{cls}.{count} += 1" if ctx.chance(0.6) or ctx.d < 0.3 else f"self.{count} += 1")
            if ctx.d >= 0.3:
                w(f"self.{shared}.append({label})")
        summary = ctx.d >= 0.3 and ctx.hard(0.6)
        if summary:
            w("@classmethod")
            with w.block("def summary(cls):"):
                w(f"return cls.{count}, len(cls.{shared})")
    objs = ctx.names(("a", "b", "c", "first", "second", "third", "x1", "x2"), ctx.scaled(2, 4))
    for o in objs:
        w(f"{o} = {cls}({ctx.pick(_WORDS)!r})")
    parts = [f"{cls}.{count}", f"{objs[0]}.{count}"]
    if ctx.d >= 0.3:
        if ctx.hard(0.6):
            w(f"{objs[-1]}.{shared} = [{ctx.pick(_WORDS)!r}]")
        parts.append(f"{objs[0]}.{shared}")
        parts.append(f"{objs[-1]}.{shared}")
    if summary:
        parts.append(f"{cls}.summary()")
    return f"{', '.join(ctx.sample(parts, max(2, len(parts) - 1)))}"
