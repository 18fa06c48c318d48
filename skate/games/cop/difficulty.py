"""How hard a Python program is to trace by hand, from its syntax tree alone.

:func:`code_difficulty` works on any source text (a generated program or one a model wrote) and
never runs it. Simulated players answer by their skill against this measure, and aim their own
programs at a difficulty on the same scale.
"""

from __future__ import annotations

import ast
import functools
import math
from dataclasses import dataclass, field
from typing import Any

_BIT_OPS = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift, ast.Invert)
_UNKNOWN_ITERATIONS = 6.0  # guess for a loop whose trip count is not a literal range
_WHILE_ITERATIONS = 10.0
_MUTABLE_DEFAULTS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


@dataclass
class _Features:
    """Syntactic facts about a program that make it harder to trace by hand."""

    nodes: int = 0
    max_depth: int = 0
    loops: int = 0
    recursive: int = 0
    operators: set[str] = field(default_factory=set)
    tricky: float = 0.0
    work: float = 0.0  # estimated loop-body executions, nesting multiplied


_COUNTED_CALLS = ("range", "enumerate", "reversed")


def _literal_trip_count(node: ast.expr) -> float:
    """Trip count of ``range(<int literals>)`` or of a literal sequence, else a guess."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return float(max(1, len(node.elts)))
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return float(max(1, len(node.value)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _COUNTED_CALLS:
        if node.func.id != "range":
            return _literal_trip_count(node.args[0]) if node.args else _UNKNOWN_ITERATIONS
        try:
            bounds = [ast.literal_eval(arg) for arg in node.args]
            if 1 <= len(bounds) <= 3 and all(isinstance(b, int) for b in bounds):
                return float(max(1, min(len(range(*bounds)), 10**6)))
        except (ValueError, TypeError, SyntaxError):
            pass
    return _UNKNOWN_ITERATIONS


class _FeatureVisitor(ast.NodeVisitor):
    """Walks a module once, collecting :class:`_Features`."""

    def __init__(self) -> None:
        self.f = _Features()
        self._depth = 0
        self._multiplier = [1.0]
        self._functions: list[str] = []
        self._loop_vars: list[set[str]] = []
        self._calls: dict[str, set[str]] = {}

    # -- helpers ---------------------------------------------------------
    def _nest(self, node: ast.AST, trips: float | None = None) -> None:
        self._depth += 1
        self.f.max_depth = max(self.f.max_depth, self._depth)
        if trips is not None:
            self.f.loops += 1
            self._multiplier.append(self._multiplier[-1] * trips)
            self.f.work += self._multiplier[-1]
        self.generic_visit(node)
        if trips is not None:
            self._multiplier.pop()
        self._depth -= 1

    def _targets(self, target: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}

    def _closure_over_loop(self, node: ast.AST, params: set[str]) -> bool:
        active = set().union(*self._loop_vars) if self._loop_vars else set()
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return bool((used & active) - params)

    # -- generic ---------------------------------------------------------
    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, (ast.stmt, ast.expr)):
            self.f.nodes += 1
        return super().visit(node)

    # -- loops -----------------------------------------------------------
    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._loop_vars.append(self._targets(node.target))
        self._nest(node, _literal_trip_count(node.iter))
        self._loop_vars.pop()
        if node.orelse:
            self.f.tricky += 0.8

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While) -> None:
        self._nest(node, _WHILE_ITERATIONS)
        if node.orelse:
            self.f.tricky += 0.8

    def _visit_comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        trips = 1.0
        names: set[str] = set()
        for gen in node.generators:
            trips *= _literal_trip_count(gen.iter)
            names |= self._targets(gen.target)
            self.f.tricky += 0.3 * len(gen.ifs)
        self.f.tricky += 0.6 * (len(node.generators) - 1)
        if isinstance(node, ast.GeneratorExp):
            self.f.tricky += 0.3
        self._loop_vars.append(names)
        self._nest(node, trips)
        self._loop_vars.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension

    # -- blocks ----------------------------------------------------------
    def visit_If(self, node: ast.If) -> None:
        self._nest(node)

    def visit_With(self, node: ast.With | ast.AsyncWith | ast.Match) -> None:
        self._nest(node)

    visit_AsyncWith = visit_Match = visit_With

    def visit_Try(self, node: ast.Try | ast.TryStar) -> None:
        self.f.tricky += 0.8 + 0.3 * max(0, len(node.handlers) - 1)
        if node.orelse:
            self.f.tricky += 0.6
        if node.finalbody:
            self.f.tricky += 0.8
            jumps = (ast.Return, ast.Break, ast.Continue)
            if any(isinstance(n, jumps) for stmt in node.finalbody for n in ast.walk(stmt)):
                self.f.tricky += 1.0  # a jump in finally overrides the pending return or exception
        self._nest(node)

    visit_TryStar = visit_Try

    def visit_Raise(self, node: ast.Raise) -> None:
        self.f.tricky += 0.3 + (0.3 if node.cause is not None else 0.0)
        self.generic_visit(node)

    # -- functions and classes --------------------------------------------
    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = node.args
        params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        if self._functions:
            self.f.tricky += 0.8  # nested function: a closure over the enclosing scope
        if self._loop_vars and self._closure_over_loop(node, params):
            self.f.tricky += 1.5  # late binding of a loop variable
        defaults = [d for d in args.defaults + args.kw_defaults if d is not None]
        if any(isinstance(d, _MUTABLE_DEFAULTS) for d in defaults):
            self.f.tricky += 1.5
        if args.vararg or args.kwarg:
            self.f.tricky += 0.3
        name = node.name if not isinstance(node, ast.Lambda) else "<lambda>"
        if not isinstance(node, ast.Lambda):
            self.f.tricky += 0.8 * len(node.decorator_list)
            if name.startswith("__") and name.endswith("__") and name != "__init__":
                self.f.tricky += 0.5
        self._functions.append(name)
        self._calls.setdefault(name, set())
        outer_loops, self._loop_vars = self._loop_vars, []
        self._nest(node)
        self._loop_vars = outer_loops
        self._functions.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _visit_function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.f.tricky += 0.5 + 0.8 * len(node.bases) + 0.8 * len(node.decorator_list)
        self._nest(node)

    def visit_Call(self, node: ast.Call) -> None:
        callee = None
        if isinstance(node.func, ast.Name):
            callee = node.func.id
            if callee == "super":
                self.f.tricky += 0.5
        elif isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            is_super = (
                isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super"
            )
            callee = None if is_super else node.func.attr  # super().f() inside f is not recursion
            if node.func.attr == "send":
                self.f.tricky += 0.8
        if callee and self._functions:
            self._calls.setdefault(self._functions[-1], set()).add(callee)
        self.generic_visit(node)

    def visit_Yield(self, node: ast.Yield) -> None:
        self.f.tricky += 0.7
        self.generic_visit(node)

    def visit_YieldFrom(self, node: ast.YieldFrom) -> None:
        self.f.tricky += 1.0
        self.generic_visit(node)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.f.tricky += 1.0

    def visit_Global(self, node: ast.Global) -> None:
        self.f.tricky += 1.0

    # -- operators ---------------------------------------------------------
    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._operator(node.op)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and any(
            isinstance(side, ast.UnaryOp) and isinstance(side.op, ast.USub) for side in (node.left, node.right)
        ):
            self.f.tricky += 0.5  # floor semantics with negative operands
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._operator(node.op)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        self._operator(node.op)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        self._operator(node.op)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for op in node.ops:
            self._operator(op)
        if len(node.ops) > 1:
            self.f.tricky += 0.5
        self.generic_visit(node)

    def _operator(self, op: ast.AST) -> None:
        self.f.operators.add(type(op).__name__)
        if isinstance(op, _BIT_OPS):
            self.f.tricky += 0.25

    # -- other tricky expressions ---------------------------------------------
    def visit_Slice(self, node: ast.Slice) -> None:
        self.f.tricky += 0.2
        if node.step is not None:
            self.f.tricky += 0.5
        if any(isinstance(b, ast.UnaryOp) and isinstance(b.op, ast.USub) for b in (node.lower, node.upper, node.step)):
            self.f.tricky += 0.3
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.f.tricky += 0.7
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.f.tricky += 0.3
        self.generic_visit(node)

    def visit_Starred(self, node: ast.Starred) -> None:
        self.f.tricky += 0.3
        self.generic_visit(node)

    def visit_Break(self, node: ast.Break | ast.Continue) -> None:
        self.f.tricky += 0.3

    visit_Continue = visit_Break

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        specs = sum(1 for v in node.values if isinstance(v, ast.FormattedValue) and v.format_spec is not None)
        self.f.tricky += 0.3 * specs
        self.generic_visit(node)

    # -- result ---------------------------------------------------------------
    def features(self) -> _Features:
        self.f.recursive = sum(1 for name in self._calls if name != "<lambda>" and self._reaches(name, name))
        return self.f

    def _reaches(self, start: str, target: str) -> bool:
        """Whether ``start`` can call ``target`` through known functions (recursion)."""
        seen: set[str] = set()
        frontier = list(self._calls.get(start, ()))
        while frontier:
            name = frontier.pop()
            if name == target:
                return True
            if name not in seen:
                seen.add(name)
                frontier.extend(self._calls.get(name, ()))
        return False


def _raw_difficulty(f: _Features) -> float:
    """Unbounded difficulty score: size dominates, structure and tricks add to it."""
    return (
        1.0 * math.sqrt(f.nodes)
        + 0.5 * f.max_depth
        + 0.35 * min(f.loops, 10)
        + 1.0 * min(f.recursive, 3)
        + 0.25 * len(f.operators)
        + 1.1 * math.sqrt(f.tricky)
        + 0.5 * math.log10(1 + f.work)
    )


# Logistic squash of the raw score: centre (score 0.5) and steepness.
_SQUASH_CENTER = 10.0
_SQUASH_SLOPE = 0.36


def _squash(raw: float) -> float:
    return 1.0 / (1.0 + math.exp(-_SQUASH_SLOPE * (raw - _SQUASH_CENTER)))


@functools.lru_cache(maxsize=2048)
def code_difficulty(code: str) -> float:
    """Estimate how hard it is to predict what a Python program prints.

    Works on any source text and never runs it.  The estimate combines the
    size of the syntax tree, how deeply loops, functions and blocks nest, the
    number of loops and their literal trip counts, recursion, the variety of
    operators and a weighted count of tricky constructs (closures and late
    binding, mutable defaults, generators, exception handling, stepped
    slices, bit operations, chained comparisons, inheritance and dunder
    methods, ...).  The total goes through a logistic squash into ``[0, 1]``:
    a trivial one-line print scores about 0.05-0.1, the generator's easiest
    programs about 0.25, its hardest about 0.85-0.9, and long, nested, tricky
    programs approach 1.  Text that does not parse scores 0.5.  The last 2,048 texts measured are
    remembered (a game measures its drafts, then each task again for every player).
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return 0.5
    visitor = _FeatureVisitor()
    try:
        visitor.visit(tree)
    except RecursionError:
        return 0.5
    return float(min(1.0, max(0.0, _squash(_raw_difficulty(visitor.features())))))
