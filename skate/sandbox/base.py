"""The sandbox interface: run untrusted Python source and say what happened.

Every implementation returns an :class:`ExecResult` whose :class:`Outcome` separates the
code's own failures (exception, time limit, memory limit, output too large, a jail it broke) from
a failure of the sandbox itself (``SANDBOX_ERROR``), which is an infrastructure problem and never
the player's fault.
"""

from __future__ import annotations

import enum
import math
import os
import re
import signal
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from skate.registry import Component
from skate.sandbox.config import Limits, SandboxConfig


class Outcome(enum.StrEnum):
    OK = "ok"  # exited 0 within every limit
    ERROR = "error"  # exception or non-zero exit status
    TIMEOUT = "timeout"  # wall-clock or CPU limit
    MEMORY = "memory"  # memory limit
    OUTPUT_LIMIT = "output_limit"  # printed more than the output cap
    BROKE_JAIL = "broke_jail"  # its jail failed while it ran, and a fresh one runs a known-good program
    SANDBOX_ERROR = "sandbox_error"  # the sandbox failed a health check: not the code's fault


@dataclass(frozen=True)
class ExecResult:
    outcome: Outcome
    stdout: str
    stderr: str
    returncode: int | None
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK

    def summary(self, max_chars: int = 300) -> str:
        """One short human-readable line about what went wrong (or right)."""
        if self.outcome is Outcome.OK:
            return "ran fine"
        tail = self.stderr.strip().splitlines()[-1:] if self.stderr.strip() else []
        detail = f": {tail[0][:max_chars]}" if tail else ""
        return f"{self.outcome.value}{detail}"


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_STDIN_BYTES = 1 << 20


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of ``text`` whatever it holds: surrogate escapes (``\udc80``-``\udcff``)
    become the bytes they stand for, and any other lone surrogate (valid in a JSON string) its
    UTF-8-like encoding, so that a program given one fails on its own, not the sandbox."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def check_io(stdin: str, env: Mapping[str, str] | None) -> dict[str, str]:
    """Validate what an execution is given besides its code; the environment as a plain dict.

    Raises ``ValueError`` (a caller's bug, not the program's doing) for a variable name that is
    not an identifier, a value or input with a NUL byte, or an input over 1 MiB.
    """
    env = dict(env or {})
    for name, value in env.items():
        if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
            raise ValueError(f"environment variable name {name!r} is not an identifier")
        if not isinstance(value, str) or "\0" in value:
            raise ValueError(f"environment variable {name} must be a string without NUL bytes")
    if not isinstance(stdin, str):
        raise ValueError(f"stdin must be a string, not {type(stdin).__name__}")
    if len(encode_text(stdin)) > MAX_STDIN_BYTES:
        raise ValueError(f"stdin is over {MAX_STDIN_BYTES} bytes")
    return env


class SandboxError(RuntimeError):
    """The sandbox could not run the code at all (an infrastructure failure)."""


class SandboxUnavailable(SandboxError):
    """This kind of sandbox cannot run on this machine (missing binary, no namespaces, ...)."""


def interpreter(python: str = "") -> tuple[str, str]:
    """The real interpreter binary and the installation prefix that has to be visible in the jail."""
    exe = os.path.realpath(python or sys.executable)
    if not os.access(exe, os.X_OK):
        raise SandboxUnavailable(f"sandbox.python={python!r}: {exe} is not an executable interpreter")
    if not python or os.path.realpath(sys.executable) == exe:
        prefix = os.path.realpath(sys.base_prefix)
    else:
        prefix = os.path.dirname(os.path.dirname(exe))
    return exe, prefix


class Sandbox(Component[SandboxConfig], ABC):
    """Runs Python source under isolation and resource limits.

    Built from its settings (:class:`~skate.registry.Component`: an instance of its schema, or
    the schema's keys as keywords, ``SubprocessSandbox(workers=1)``). Implementations must be safe
    to call from several threads at once.
    """

    schema = SandboxConfig  # each registered sandbox declares its own (skate.sandbox.config)
    name: str = "abstract"
    isolated: bool = False  # a security boundary for hostile code?

    def __init__(self, settings: SandboxConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        self.limits: Limits = self.settings.limits
        workers = self.settings.workers
        self.workers = workers if workers > 0 else (os.cpu_count() or 1)
        # Bounds executions in flight across every thread that shares this sandbox.
        self._slots = threading.BoundedSemaphore(self.workers)
        self._count_lock = threading.Lock()
        self.executions = 0  # programs run so far (for throughput figures)

    def run(
        self, code: str, limits: Limits | None = None, *, stdin: str = "", env: Mapping[str, str] | None = None
    ) -> ExecResult:
        """Run one program; never raises for anything the program does.

        ``stdin`` is what the program reads from standard input (end-of-file after it);
        ``env`` holds the only environment variables it sees besides the sandbox's own
        (none of the host's). Both live for this one execution only.
        """
        env = check_io(stdin, env)
        with self._count_lock:
            self.executions += 1
        with self._slots:
            return self._execute(code, limits or self.limits, stdin, env)

    @abstractmethod
    def _execute(self, code: str, limits: Limits, stdin: str = "", env: Mapping[str, str] | None = None) -> ExecResult:
        """Run one program under ``limits`` (called with an execution slot held)."""

    def run_many(self, programs: Sequence[str], limits: Limits | None = None) -> list[ExecResult]:
        """Run several programs concurrently (up to ``workers``), results in input order."""
        if len(programs) <= 1 or self.workers == 1:
            return [self.run(p, limits) for p in programs]
        with ThreadPoolExecutor(max_workers=min(self.workers, len(programs))) as pool:
            return list(pool.map(lambda p: self.run(p, limits), programs))

    def describe(self) -> str:
        return f"{self.name}, {self.workers} workers"

    @property
    def bounds(self) -> dict[str, str]:
        """What bounds a program here, in words (``run_start.sandbox_bounds``)."""
        return {"memory": "address-space rlimit per process", "tmp": "none of its own", "system_calls": "all allowed"}

    def close(self) -> None:  # optional hook
        """Release long-lived resources (workers, temp folders)."""


class NoSandbox(Sandbox):
    """What a game that runs no program plays with (``Game.runs_programs`` False): no jail is
    started; asked to run a program anyway, it raises :class:`SandboxError`."""

    name = "none"

    def __init__(self) -> None:
        super().__init__(workers=1)

    def _execute(self, code: str, limits: Limits, stdin: str = "", env: Mapping[str, str] | None = None) -> ExecResult:
        raise SandboxError("this game runs no program, so its run has no sandbox")

    def describe(self) -> str:
        return "none (the game runs no program)"

    @property
    def bounds(self) -> dict[str, str]:
        return {"memory": "no program runs", "tmp": "no program runs", "system_calls": "no program runs"}


def cpu_seconds(lim: Limits) -> int:
    """RLIMIT_CPU counts whole seconds: round up, and never below one."""
    return max(1, math.ceil(lim.cpu_s))


def classify(
    rc: int | None,
    timed_out: bool,
    too_much_output: bool,
    stderr: str,
    cpu_used: float | None = None,
    cpu_limit: float | None = None,
    out_of_memory: bool | None = None,
) -> Outcome:
    """Map how a program ended to an :class:`Outcome` (shared by every implementation).

    A SIGKILL is the CPU limit's hard stop, unless the CPU time the program used says otherwise
    (when the implementation knows it): then the program killed itself, which is an error.
    ``out_of_memory`` is the kernel's word (an OOM kill counted in the program's memory cgroup);
    given (True or False), it alone decides ``MEMORY``. Only where nobody can say (None: the
    subprocess sandbox, which is no security boundary) is a last stderr line ``MemoryError``,
    which a program can print itself, taken for it.
    """
    if out_of_memory:
        return Outcome.MEMORY
    if timed_out or rc == -signal.SIGXCPU:
        return Outcome.TIMEOUT
    if rc == -signal.SIGKILL:
        if cpu_used is None or cpu_limit is None or cpu_used >= 0.9 * cpu_limit:
            return Outcome.TIMEOUT
        return Outcome.ERROR
    if too_much_output or rc == -signal.SIGXFSZ:
        return Outcome.OUTPUT_LIMIT
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if out_of_memory is None and (last.startswith("MemoryError") or "Cannot allocate memory" in last):
        return Outcome.MEMORY
    if rc == 0:
        return Outcome.OK
    return Outcome.ERROR
