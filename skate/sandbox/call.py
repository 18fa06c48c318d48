"""Call one function of untrusted source in a sandbox: its argument on stdin, its printed output
and its return value back.

:func:`call_function` builds a small program that reads the argument from standard input,
executes the source (as a module named ``__sandboxed__``, so a ``__main__`` block in it does not
run), calls the named function with the argument and writes the return value after a marker
drawn fresh for this execution. Everything runs in the sandbox's process for this one
execution: the source, the argument and whatever they do there. The environment variables given
(for PyJail, the flag) exist in that execution only.

The return value is ``str(value)`` for a string and ``repr(value)`` otherwise; ``None`` means
the function never returned (it raised, the program was killed, or it exited on its own).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from skate.sandbox.base import ExecResult, Limits, Outcome, Sandbox

_PROGRAM = """\
import sys as _sys, os as _os
_arg = _sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
_ns = {{"__name__": "__sandboxed__", "__builtins__": __builtins__}}
exec(compile({source!r}, "<submitted>", "exec"), _ns)
_fn = _ns.get({function!r})
if not callable(_fn):
    raise SystemExit("the source defines no function named {function}")
_value = _fn(_arg)
_text = _value if isinstance(_value, str) else repr(_value)
_sys.stdout.flush()
_os.write(1, ("\\n" + {marker!r} + _text).encode("utf-8", "surrogateescape"))
"""


@dataclass(frozen=True)
class CallResult:
    """What one sandboxed call did."""

    run: ExecResult  # how the execution ended (outcome, raw streams, time)
    output: str  # what the program printed on stdout (the return value's record removed)
    value: str | None  # the return value as text; None if the function did not return

    @property
    def outcome(self) -> Outcome:
        return self.run.outcome

    @property
    def stderr(self) -> str:
        return self.run.stderr

    def shows(self, secret: str) -> bool:
        """Whether ``secret`` appears in anything the call produced: stdout, stderr or the value."""
        return bool(secret) and (
            secret in self.output or secret in self.run.stderr or (self.value is not None and secret in self.value)
        )


def call_function(
    sandbox: Sandbox,
    source: str,
    function: str,
    argument: str,
    env: Mapping[str, str] | None = None,
    limits: Limits | None = None,
) -> CallResult:
    """Run ``function(argument)`` from ``source`` in ``sandbox`` (see the module docstring)."""
    if not function.isidentifier():
        raise ValueError(f"function name {function!r} is not an identifier")
    marker = f"<<return:{secrets.token_hex(8)}>>"
    program = _PROGRAM.format(source=source, function=function, marker=marker)
    res = sandbox.run(program, limits, stdin=argument, env=env)
    head, sep, tail = res.stdout.rpartition("\n" + marker)
    if sep and res.outcome is Outcome.OK:
        return CallResult(res, head, tail)
    return CallResult(res, res.stdout, None)
