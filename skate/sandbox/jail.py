"""Hardened sandboxes: long-lived jails (nsjail or bubblewrap) each running a tiny supervisor.

This module holds what both jails share (:class:`JailSandbox`: the pool of workers, each one jail
and its supervisor); each jail program's own set-up is in :mod:`skate.sandbox.nsjail_sandbox` and
:mod:`skate.sandbox.bwrap_sandbox`.

A jail costs tens of milliseconds to build, more than the program it runs, so each worker builds
its jail once and then runs programs one after another inside it. The supervisor
(``_supervisor.py``, PID 1 of the jail) starts a fresh ``python -I -S`` for every program, so a
program's cost stays that of a bare interpreter start while every program still gets:

- no network at all: a new network namespace with no interface but its own loopback;
- a read-only view of the system folders and the interpreter, nothing of home or the project, and
  a private ``/tmp`` (a tmpfs capped in size and in inodes) wiped after every program;
- an unprivileged user: as root, each worker gets its own otherwise unused host uid (so per-user
  process limits never couple two workers); otherwise the caller's own uid in a user namespace;
- no capabilities, ``no_new_privs``, the jail's seccomp filter and the program's own on top
  (:mod:`skate.sandbox.policy`);
- memory bounded by a memory cgroup per jail where the machine offers one
  (:mod:`skate.sandbox.cgroup`: every process of the program, the kernel memory they pin and the
  files they write, together), else by an address-space rlimit per process;
- an empty environment, stdin at end-of-file, rlimits on CPU time, file size (the output cap),
  process count and core dumps, and a wall-clock limit;
- every process it started killed and reaped before the next program.

A worker that dies, hangs, answers nonsense or cannot empty its ``/tmp`` is replaced. Who is to
blame is then settled by evidence the program cannot forge: a known-good program is run on a
fresh jail (the health check). If that fails, the sandbox is broken and the execution is
``SANDBOX_ERROR``; if it runs fine, the program broke its own jail: ``BROKE_JAIL``, the
program's outcome.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import skate.sandbox.cgroup as cgroup
import skate.sandbox.policy as policy
from skate.sandbox.base import (
    ExecResult,
    Limits,
    Outcome,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    classify,
    cpu_seconds,
    interpreter,
)
from skate.sandbox.config import MEMORY_BOUNDS, JailConfig

log = logging.getLogger(__name__)

SUPERVISOR = (Path(__file__).with_name("_supervisor.py")).read_text(encoding="utf-8")
ZYGOTE = (Path(__file__).with_name("_zygote.py")).read_text(encoding="utf-8")
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
REPLY_GRACE_S = 10.0  # how long past the program's own time limit the supervisor may take to reply
HEALTH_CHECK = "print(6 * 7)"  # the known-good program that tells a broken sandbox from a broken jail


class _WorkerFailed(Exception):
    """The worker broke while it ran a request (``started``: after the program had started, or
    nobody can tell)."""

    def __init__(self, message: str, started: bool = True) -> None:
        super().__init__(message)
        self.started = started


# ------------------------------------------------------------------------------------ helpers
def system_mounts(prefix: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Folders to bind read-only, and symlinks to recreate (merged-/usr systems)."""
    binds: list[str] = []
    links: list[tuple[str, str]] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            links.append((os.readlink(d), d))
        elif os.path.isdir(d):
            binds.append(d)
    if not any(prefix == d or prefix.startswith(d + "/") for d in binds):
        binds.append(prefix)
    return binds, links


class UidSlots:
    """Hands out host uids nobody else uses, one per worker, across processes on the machine.

    A slot is an exclusive ``flock`` on a file in a shared folder; the kernel drops it when the
    holder exits, so crashed runs never leak slots.
    """

    def __init__(self, base: int, count: int = 4096, folder: str | None = None) -> None:
        self.base, self.count = base, count
        self.folder = Path(folder or tempfile.gettempdir()) / "skate-sandbox-uids"

    def acquire(self) -> tuple[int, int]:
        """Return ``(uid, fd)``; close ``fd`` to give the uid back."""
        self.folder.mkdir(mode=0o700, exist_ok=True)
        for slot in range(self.count):
            fd = os.open(self.folder / f"{slot}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return self.base + slot, fd
        raise SandboxUnavailable(f"all {self.count} sandbox uids from {self.base} are in use")


def _real_uid(pid: str) -> int:
    # /proc/PID is owned by root for non-dumpable processes (the supervisor), so read Uid:.
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"State:") and line.split()[1] in (b"Z", b"X"):
                return -1  # already dead, waiting for its parent
            if line.startswith(b"Uid:"):
                return int(line.split()[1])
    return -1


def kill_uid(uid: int, attempts: int = 100) -> None:
    """SIGKILL every process whose real uid is ``uid`` until none is left."""
    for _ in range(attempts):
        found = False
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                if _real_uid(pid) == uid:  # zombies (no Uid to kill any more) read as -1
                    os.kill(int(pid), 9)
                    found = True
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                continue
        if not found:
            return
        time.sleep(0.01)


# ------------------------------------------------------------------------------------- worker
class _Worker:
    """One jail with its supervisor, spoken to over a pair of pipes, one JSON line each way."""

    def __init__(
        self,
        argv: list[str],
        pass_fds: Sequence[int],
        startup_timeout: float,
        host_uid: int = -1,
        memory: cgroup.Jail | None = None,
    ) -> None:
        self.host_uid = host_uid  # the worker's own host uid (root mode), swept at close
        self.memory = memory  # the jail's memory cgroup, removed at close
        # Set before the jail is killed: a reply that still arrives (its supervisor reporting the
        # program the kill took down) is the infrastructure's failure, not the program's.
        self.killed = False
        self._log = tempfile.TemporaryFile(prefix="skate-jail-")
        self._on_close: list[int] = []  # fds to close with the worker (its uid slot lock)
        self._buf = b""
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                pass_fds=tuple(pass_fds),
                bufsize=0,
                start_new_session=True,
                env={},
            )
        except OSError as exc:
            self.close()
            raise SandboxUnavailable(f"could not start {argv[0]}: {exc}") from exc
        try:
            hello = self._read_reply(time.monotonic() + startup_timeout)
        except _WorkerFailed as exc:
            self.close()
            raise SandboxUnavailable(f"{Path(argv[0]).name} did not start: {exc}") from exc
        if not hello.get("ready"):
            self.close()
            raise SandboxUnavailable(f"{Path(argv[0]).name} did not start: {hello}")
        self.uid = hello.get("uid")
        self.warm = bool(hello.get("warm"))  # programs are forked from zygotes (sandbox.warm)
        self.warm_error = hello.get("warm_error")
        self.bounds = hello.get("bounds") or {}  # what bounds a program, as seen from inside

    def stderr_tail(self, n: int = 600) -> str:
        try:
            self._log.seek(0)
            text = self._log.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [ln for ln in text.splitlines() if "no version information available" not in ln]
        return "\n".join(lines)[-n:]

    def _read_reply(self, deadline: float) -> dict:
        replies = self.proc.stdout
        assert replies is not None, "the jail's stdout is a pipe (stdout=PIPE)"
        fd = replies.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _WorkerFailed("no reply from the jail in time")
            if not select.select([fd], [], [], left)[0]:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self.proc.wait(timeout=5)
                raise _WorkerFailed(
                    f"the jail exited (status {self.proc.returncode}): {self.stderr_tail() or 'no message'}"
                )
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            reply = json.loads(line)
        except ValueError as exc:
            raise _WorkerFailed(f"unreadable reply from the jail: {line[:200]!r}") from exc
        if not isinstance(reply, dict):
            raise _WorkerFailed(f"unexpected reply from the jail: {line[:200]!r}")
        return reply

    def execute(self, code: str, lim: Limits, stdin: str = "", env: Mapping[str, str] | None = None) -> dict:
        request = {
            "code": code,
            "stdin": stdin,
            "env": dict(env or {}),
            "timeout": lim.timeout_s,
            "cpu": cpu_seconds(lim),
            "mem": int(lim.memory_mb) * 1024 * 1024,
            "fsize": lim.max_output_bytes + 1,
            "nproc": int(lim.max_processes) + 1,
        }  # + the supervisor, which shares the uid
        requests = self.proc.stdin
        assert requests is not None, "the jail's stdin is a pipe (stdin=PIPE)"
        try:
            requests.write(json.dumps(request).encode() + b"\n")
        except (BrokenPipeError, OSError) as exc:
            raise _WorkerFailed(f"the jail is gone: {self.stderr_tail() or exc}") from exc
        reply = self._read_reply(time.monotonic() + lim.timeout_s + REPLY_GRACE_S)
        if "fatal" in reply:
            raise _WorkerFailed(f"the supervisor failed: {reply['fatal']}", started=reply.get("started", True))
        missing = {"rc", "timed_out", "out", "out_bytes", "err", "clean", "setup_error", "oom"} - set(reply)
        if missing:
            raise _WorkerFailed(f"incomplete reply from the jail (missing {sorted(missing)})")
        return reply

    def kill(self) -> None:
        """Kill the jail and everything in it at once.

        Killing the jail program does not always take the jail with it (a parent-death signal
        from a process without privileges over the new uid is dropped), but every process with
        the worker's own uid belongs to this worker.
        """
        self.killed = True
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
        if self.host_uid > 0:
            kill_uid(self.host_uid)

    def close(self) -> None:
        """Let the supervisor end on end-of-input; then kill whatever is left."""
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            try:
                proc.stdin.close()
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        if proc is not None:
            proc.wait()
        for stream in (getattr(proc, "stdin", None), getattr(proc, "stdout", None)):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        for fd in self._on_close:
            try:
                os.close(fd)
            except OSError:
                pass
        self._on_close = []
        if self.memory is not None:
            self.memory.remove()
            self.memory = None
        self._log.close()


# ------------------------------------------------------------------------------------ sandbox
class JailSandbox(Sandbox):
    """Common machinery of the hardened sandboxes: a pool of long-lived jailed supervisors."""

    isolated = True
    schema = JailConfig  # each jail's own: NsjailConfig, BwrapConfig
    settings: JailConfig

    def __init__(self, settings: JailConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        s = self.settings
        self.python, self.prefix = interpreter(s.python)
        self.tmp_mb, self.tmp_inodes = int(s.tmp_mb), int(s.tmp_inodes)
        self.warm = bool(s.warm)
        memory_bound = s.memory_bound
        if memory_bound not in MEMORY_BOUNDS:
            raise ValueError(f"sandbox.memory_bound={memory_bound!r}: choose from {list(MEMORY_BOUNDS)}")
        self.cgroup_parent: cgroup.Parent | None = None
        self.cgroup_note = "not asked for (sandbox.memory_bound=rlimit)"
        if memory_bound != "rlimit":
            self.cgroup_parent, self.cgroup_note = cgroup.parent()
            if self.cgroup_parent is None and memory_bound == "cgroup":
                raise SandboxUnavailable(
                    f"sandbox.memory_bound=cgroup, but no memory cgroup can be made here: {self.cgroup_note}"
                )
        self.program_filter = policy.program_bpf().hex()
        self.observed: dict = {}  # the bounds the last jail's supervisor reported
        self._warned_cold = False
        self.startup_timeout_s = s.startup_timeout_s
        self._uids = UidSlots(s.uid_base) if os.geteuid() == 0 else None
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.binary = self.find_binary(s.binary)
        # Every jail is started from one of these threads, which live as long as the sandbox: a
        # jail program may die with the thread that started it (bubblewrap's --die-with-parent is
        # a parent-death signal, and those follow the thread), so not from a caller's thread,
        # which may be a pool's that ends after one batch.
        self._spawner = ThreadPoolExecutor(max(1, self.workers), thread_name_prefix=f"{self.name}-spawn")

    def find_binary(self, setting: str = "") -> str:
        """The jail program: ``sandbox.binary`` when given, else the implementation's own."""
        if setting:
            if not os.access(setting, os.X_OK):
                raise SandboxUnavailable(f"sandbox.binary={setting!r} is not executable")
            return setting
        return self.default_binary()

    # -- for subclasses
    @abstractmethod
    def default_binary(self) -> str:
        """Path of the jail program; raise SandboxUnavailable with an install hint if missing."""

    @abstractmethod
    def command(
        self, uid: int, gid: int, workdir: str, memory: cgroup.Jail | None = None
    ) -> tuple[list[str], list[int]]:
        """argv that starts one jailed supervisor, and the fds it must inherit (besides the
        memory cgroup's, which ``memory`` holds and the caller passes too)."""

    def release(self, workdir: str) -> None:
        """Undo what :meth:`command` set up in ``workdir`` once the jail has started (or failed)."""

    def supervisor_argv(self, uid: int, gid: int, memory: cgroup.Jail | None = None) -> list[str]:
        argv = [
            self.python,
            "-I",
            "-S",
            "-c",
            SUPERVISOR,
            self.python,
            str(uid),
            str(gid),
            self.program_filter,
            memory.argument() if memory is not None else "-",
        ]
        return argv + [ZYGOTE] if self.warm else argv

    @property
    def bounds(self) -> dict:
        """What bounds a program here (for ``run_start`` and the log)."""
        memory = (
            f"{self.cgroup_parent.describe()}: all of a program's processes, the kernel memory "
            "they pin and the /tmp files they write, together under memory_mb"
            if self.cgroup_parent is not None
            else f"address-space rlimit per process (memory_mb each, up to max_processes of them; "
            f"kernel memory is bounded by the system-call policy only); no memory cgroup: "
            f"{self.cgroup_note}"
        )
        seen = self.observed  # what the jail's supervisor saw of its /tmp
        tmp = (
            f"tmpfs of {seen['tmp_bytes'] >> 20} MiB and {seen['tmp_inodes']} inodes"
            if seen
            else f"tmpfs of {self.tmp_mb} MiB and {self.tmp_inodes} inodes (asked for; no jail started yet)"
        )
        return {
            "memory": memory,
            "tmp": tmp,
            "system_calls": "no sockets, socketpairs, memfds, io_uring, inotify, fanotify, file locks "
            "or page-cache probes (skate/sandbox/policy.py)",
        }

    # -- pool
    def _spawn(self) -> _Worker:
        keep: list[int] = []
        uid = gid = -1
        if self._uids is not None:
            uid, slot_fd = self._uids.acquire()
            gid = uid
            keep.append(slot_fd)
        workdir = tempfile.mkdtemp(prefix="skate-jail-")
        fds: list[int] = []
        memory = None
        try:
            if self.cgroup_parent is not None:
                try:
                    memory = cgroup.Jail.create(self.cgroup_parent, int(self.limits.memory_mb) << 20)
                except OSError as exc:
                    raise SandboxError(f"could not make the jail's memory cgroup: {exc}") from exc
            argv, fds = self.command(uid, gid, workdir, memory)
            worker = _Worker(
                argv, fds + (memory.fds if memory else []), self.startup_timeout_s, host_uid=uid, memory=memory
            )
            worker._on_close = keep
        except BaseException:
            for fd in keep:
                os.close(fd)
            if memory is not None:
                memory.remove()
            raise
        finally:
            self.release(workdir)
            shutil.rmtree(workdir, ignore_errors=True)
            for fd in fds:  # read by the jail at start-up
                os.close(fd)
        self.observed = worker.bounds
        if self.warm and not worker.warm and not self._warned_cold:
            self._warned_cold = True
            log.warning(
                "%s: sandbox.warm is on but this jail runs every program cold: %s", self.name, worker.warm_error
            )
        with self._lock:
            closed = self._closed
            if not closed:
                self._all.add(worker)
        if closed:  # closed while this jail was being built: nobody would ever close it
            worker.close()
            raise SandboxError(f"the {self.name} sandbox is closed")
        return worker

    def _checkout(self) -> _Worker:
        while True:
            with self._lock:
                if self._closed:
                    raise SandboxError(f"the {self.name} sandbox is closed")
                if not self._idle:
                    break
                worker = self._idle.pop()
            if worker.proc.poll() is None:
                return worker
            self._retire(worker)  # died while idle
        try:
            spawning = self._spawner.submit(self._spawn)
        except RuntimeError as exc:  # shut down: the sandbox closed meanwhile
            raise SandboxError(f"the {self.name} sandbox is closed") from exc
        return spawning.result()

    def _retire(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)
        worker.close()

    def _give_back(self, worker: _Worker, usable: bool = True) -> None:
        """After a run: back to the idle pool if it is ``usable`` and its jail program still runs
        (and the sandbox is open); otherwise retired, to be replaced."""
        if usable and worker.proc.poll() is None:
            with self._lock:
                if not self._closed:
                    self._idle.append(worker)
                    return
        self._retire(worker)

    def start(self) -> None:
        """Build every worker's jail now rather than on first use (raises if the jail cannot run).
        The jails are built side by side: most of a jail's start is its interpreters' imports."""
        with ThreadPoolExecutor(self.workers) as pool:
            futures = [pool.submit(self._checkout) for _ in range(self.workers)]
            wait(futures)
        workers = [f.result() for f in futures if f.exception() is None]
        with self._lock:
            self._idle.extend(workers)
        for f in futures:
            f.result()  # the first jail that could not start raises its error here

    def _execute(self, code: str, lim: Limits, stdin: str = "", env: Mapping[str, str] | None = None) -> ExecResult:
        start = time.perf_counter()
        for attempt in (1, 2):
            try:
                worker = self._checkout()
            except SandboxError as exc:
                return ExecResult(
                    Outcome.SANDBOX_ERROR, "", f"sandbox failed: {exc}", None, time.perf_counter() - start
                )
            failure, started, reply = None, True, None  # failure: the supervisor's word, never the program's
            try:
                reply = worker.execute(code, lim, stdin, env)
            except _WorkerFailed as exc:
                failure, started = str(exc), exc.started
            if worker.killed:  # the host killed the jail while the program ran: whatever the reply says
                self._retire(worker)
                return ExecResult(
                    Outcome.SANDBOX_ERROR,
                    "",
                    "sandbox failed: the jail was killed while the program ran",
                    None,
                    time.perf_counter() - start,
                )
            if reply is not None and reply["setup_error"]:
                failure, started = f"the jail {reply['setup_error']}", False
            elif reply is not None and not reply["clean"]:
                failure = "the jail could not kill the program's processes or empty its /tmp in time"
            self._give_back(worker, usable=failure is None)
            if failure is None:
                break
            if started or attempt == 2:
                return self._blame(failure, reply, start)
            # Nothing of the program ran: run it again, on a fresh jail.
            log.warning(
                "%s: a jail failed before the program started; running it on a fresh one: %s", self.name, failure
            )
        assert reply is not None, "the loop ends with a reply (failure is None) or returns"
        duration = time.perf_counter() - start
        rc, stderr = reply["rc"], reply["err"]
        too_much = reply["out_bytes"] > lim.max_output_bytes
        outcome = classify(
            rc,
            reply["timed_out"],
            too_much,
            stderr,
            cpu_used=reply.get("cpu_s"),
            cpu_limit=cpu_seconds(lim),
            out_of_memory=reply["oom"] is True,
        )
        stdout = reply["out"]
        if too_much:
            stdout = stdout.encode("utf-8", "replace")[: lim.max_output_bytes].decode("utf-8", "replace")
        return ExecResult(outcome, stdout, stderr[: lim.max_output_bytes], rc, duration)

    def _blame(self, failure: str, reply: dict | None, start: float) -> ExecResult:
        """A jail failed while it ran a program: the sandbox's fault if a fresh jail then fails a
        known-good program too (``SANDBOX_ERROR``), else the program's (``BROKE_JAIL``)."""
        log.warning("%s: a jail failed and was replaced: %s", self.name, failure)
        healthy = self.health_check()
        duration = time.perf_counter() - start
        out = (reply or {}).get("out", "")
        if healthy is not None:
            return ExecResult(
                Outcome.SANDBOX_ERROR,
                "",
                f"sandbox failed: {failure}; and a known-good program then failed on a fresh jail too: {healthy}",
                None,
                duration,
            )
        return ExecResult(
            Outcome.BROKE_JAIL, out, f"the program broke its jail: {failure}", (reply or {}).get("rc"), duration
        )

    def health_check(self) -> str | None:
        """Build a fresh jail and run a known-good program in it (the jail then joins the pool,
        in place of the one just retired); None if it ran as it must, else what went wrong."""
        try:
            worker = self._spawner.submit(self._spawn).result()
        except RuntimeError as exc:  # the spawner is shut down: the sandbox closed meanwhile
            return f"the sandbox is closed: {exc}"
        except SandboxError as exc:
            return f"no jail could start: {exc}"
        try:
            reply = worker.execute(HEALTH_CHECK, self.limits)
        except _WorkerFailed as exc:
            self._retire(worker)
            return str(exc)
        healthy = reply["rc"] == 0 and reply["out"] == "42\n" and not reply["setup_error"] and reply["clean"]
        self._give_back(worker, usable=healthy)
        return None if healthy else (f"it gave status {reply['rc']}, {reply['setup_error'] or reply['err'][-200:]!r}")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers, self._all, self._idle = list(self._all), set(), []
        for w in workers:
            w.close()
        self._spawner.shutdown(wait=False)

    def jail_pids(self) -> list[int]:
        """Host pids of the running jails (one per started worker)."""
        with self._lock:
            return [w.proc.pid for w in self._all if w.proc.poll() is None]

    def kill_workers(self) -> None:
        """Kill every jail now (an emergency stop): runs in flight end as SANDBOX_ERROR, and
        later runs get new jails."""
        with self._lock:
            workers = list(self._all)
        for w in workers:
            w.kill()

    def describe(self) -> str:
        start = "warm" if self.warm else "cold"
        memory = "memory cgroup" if self.cgroup_parent is not None else "memory rlimit per process"
        return f"{self.name} ({self.binary}), {self.workers} workers, python {self.python}, {start} start, {memory}"
