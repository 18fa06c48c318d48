"""The last-resort sandbox: a fresh interpreter subprocess with rlimits, and no isolation.

Only ever used when chosen explicitly (``sandbox=subprocess``), and it warns loudly when built.
Isolation here is modest: a new ``python -I -S`` process per program, an environment with only the variables the caller passes,
stdin from a file (empty unless given), a private temporary working folder, rlimits on CPU time, address space, file
size (which caps the output, since stdout goes to a file) and process count, and a wall-clock
timeout that kills the whole process group. It does not isolate the network or the file
system; the hardened implementations (nsjail, bubblewrap) live behind the same interface.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import subprocess
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skate.sandbox.base import ExecResult, Limits, Outcome, Sandbox, classify, cpu_seconds, encode_text, interpreter
from skate.sandbox.config import SandboxConfig

# Runs inside the child: apply limits, then execute the program file as __main__.
# Kept tiny because it is paid on every execution.
_BOOTSTRAP = r"""
import resource as r, sys
cpu, mem, fsize, nproc = (int(a) for a in sys.argv[2:6])
r.setrlimit(r.RLIMIT_CPU, (cpu, cpu + 1))
r.setrlimit(r.RLIMIT_AS, (mem, mem))
r.setrlimit(r.RLIMIT_FSIZE, (fsize, fsize))
r.setrlimit(r.RLIMIT_NPROC, (nproc, nproc))
r.setrlimit(r.RLIMIT_CORE, (0, 0))
path = sys.argv[1]
sys.argv = [path]
with open(path, encoding="utf-8") as f:
    src = f.read()
del r, cpu, mem, fsize, nproc, f
exec(compile(src, "<task>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
"""


log = logging.getLogger(__name__)

UNSAFE_MESSAGE = (
    "sandbox=subprocess is NOT a security boundary: programs run as your user with the network, "
    "your files and your other processes in reach. Use it only for code you trust (such as the "
    "simulated cohort's); for model-written code use sandbox=auto, nsjail or bwrap."
)


class UnsafeSandboxWarning(UserWarning):
    """The unisolated subprocess sandbox is in use."""


# The only variable a program sees. Interpreters it starts itself would otherwise write bytecode
# caches next to whatever they import, truncated by the file-size rlimit.
_CHILD_ENV = {"PYTHONDONTWRITEBYTECODE": "1"}


class SubprocessSandbox(Sandbox):
    """Plain subprocess with rlimits: the weakest isolation, but runs everywhere."""

    schema = SandboxConfig  # registered by import path (skate.sandbox.config)
    name = "subprocess"

    def __init__(self, settings: SandboxConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        # The real interpreter, not a virtualenv's link to it: with -I -S the environment's
        # packages are out of reach anyway, and starting through the link costs a lookup.
        self.python = self.settings.python or interpreter()[0]
        log.warning("!" * 20 + " %s " + "!" * 20, UNSAFE_MESSAGE)
        warnings.warn(UNSAFE_MESSAGE, UnsafeSandboxWarning, stacklevel=2)

    def describe(self) -> str:
        return f"subprocess (NOT isolated), {self.workers} workers, python {self.python}"

    def _execute(self, code: str, lim: Limits, stdin: str = "", env: Mapping[str, str] | None = None) -> ExecResult:
        start = time.perf_counter()
        try:
            with tempfile.TemporaryDirectory(prefix="skate-sbx-") as tmp:
                return self._run_in(Path(tmp), code, lim, start, stdin, env or {})
        except OSError as exc:  # could not create the folder, spawn the interpreter, ...
            return ExecResult(Outcome.SANDBOX_ERROR, "", f"sandbox failed: {exc}", None, time.perf_counter() - start)

    def _run_in(
        self, tmp: Path, code: str, lim: Limits, start: float, stdin: str, env: Mapping[str, str]
    ) -> ExecResult:
        prog = tmp / "main.py"
        prog.write_text(code, encoding="utf-8")
        in_path = tmp / "stdin"
        in_path.write_bytes(encode_text(stdin))
        out_path, err_path = tmp / "stdout", tmp / "stderr"
        # stdout goes to a file capped by RLIMIT_FSIZE (cap + 1 byte so "exactly at the cap" is legal
        # and one byte more is detectable); stderr is capped the same way.
        fsize = lim.max_output_bytes + 1
        args = [
            self.python,
            "-I",
            "-S",
            "-c",
            _BOOTSTRAP,
            str(prog),
            str(cpu_seconds(lim)),
            str(lim.memory_mb * 1024 * 1024),
            str(fsize),
            str(lim.max_processes),
        ]
        with open(out_path, "wb") as out, open(err_path, "wb") as err, open(in_path, "rb") as given:
            proc = subprocess.Popen(
                args, stdin=given, stdout=out, stderr=err, cwd=tmp, env={**env, **_CHILD_ENV}, start_new_session=True
            )
            try:
                timed_out = not _wait_exit(proc, lim.timeout_s)
            finally:
                _kill_group(proc.pid)
                proc.wait()
        duration = time.perf_counter() - start
        raw_out = out_path.read_bytes()
        stderr = err_path.read_bytes()[: lim.max_output_bytes].decode("utf-8", "replace")
        stdout = raw_out[: lim.max_output_bytes].decode("utf-8", "replace")
        rc = proc.returncode
        outcome = classify(rc, timed_out, len(raw_out) > lim.max_output_bytes, stderr)
        return ExecResult(outcome, stdout, stderr, rc, duration)


def _wait_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait for the process to exit, at most ``timeout`` seconds; True if it exited.

    A pidfd wakes us the moment it exits; ``Popen.wait(timeout)`` polls with growing sleeps,
    which costs milliseconds on every short program.
    """
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no pidfd here: fall back to polling
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        return bool(select.select([pidfd], [], [], timeout)[0])
    finally:
        os.close(pidfd)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
