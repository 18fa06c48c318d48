"""A memory cgroup per jail, for its programs: what bounds a program's memory where the machine
offers one.

An address-space rlimit bounds what a process maps, not what the kernel holds on its behalf:
socket buffers, pipe buffers, inodes and dentries of the files it makes, page tables. A memory
cgroup charges all of that (and the ``/tmp`` files a program writes) to the cgroup of the process
that caused it, and when the total passes the limit the kernel reclaims or OOM-kills inside the
cgroup, and counts the kill. So each jail gets one cgroup, which every program it runs joins
before its code starts (the supervisor and the zygotes stay outside); the limit is the program's
``memory_mb`` for all its processes together; and the OOM-kill counter, read by the supervisor
before and after each program, is the kernel's evidence for the ``memory`` outcome.

The host opens the cgroup's files and hands the jail their descriptors (``cgroup.procs`` to join,
the limit to set per program, the event counters to read): the jail sees no cgroup file system.
Both cgroup versions work: v1 (a ``memory`` hierarchy, as root) and v2 (a tree whose ``memory``
controller this process may enable below a folder it can write, as root or delegated). Where
neither is writable, :func:`find_parent` says why and the jails bound memory per process with
``RLIMIT_AS`` instead (the ready line and ``run_start`` say which).
"""

from __future__ import annotations

import errno
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass

FOLDER = "skate"  # every jail's cgroup lives in this folder of the hierarchy

_serial = itertools.count(1)  # names jail cgroups within this process


@dataclass(frozen=True)
class Parent:
    """Where jail cgroups can be made: a folder and the cgroup version it belongs to."""

    path: str
    version: int

    def describe(self) -> str:
        return f"cgroup v{self.version} memory ({self.path})"


def _mounts() -> list[tuple[str, str, set[str]]]:
    out = []
    try:
        with open("/proc/self/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                    out.append((parts[1].replace("\\040", " "), parts[2], set(parts[3].split(","))))
    except OSError:
        pass
    return out


def _own_path(version: int) -> str:
    """This process's cgroup in the hierarchy of ``version`` (``/proc/self/cgroup``)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if (version == 2 and controllers == "") or (version == 1 and "memory" in controllers.split(",")):
                    return path
    except (OSError, ValueError):
        pass
    return "/"


def _usable(path: str, version: int) -> str | None:
    """Make the skate folder under ``path``; None if it works, else why not."""
    folder = os.path.join(path, FOLDER)
    try:
        os.makedirs(folder, exist_ok=True)
        if version == 2:
            with open(os.path.join(path, "cgroup.subtree_control"), "w") as f:
                f.write("+memory")
            with open(os.path.join(folder, "cgroup.subtree_control"), "w") as f:
                f.write("+memory")
        probe = Jail.create(Parent(path, version), 64 << 20)
        probe.remove()
    except OSError as exc:
        return f"{folder}: {exc.strerror or exc}"
    return None


def find_parent() -> tuple[Parent | None, str]:
    """Where this process can make memory cgroups, or None and why it cannot."""
    reasons = []
    for mount, kind, options in _mounts():
        if kind == "cgroup" and "memory" in options:
            candidates = [(mount, 1)]
        elif kind == "cgroup2":
            try:
                with open(os.path.join(mount, "cgroup.controllers"), encoding="utf-8") as f:
                    if "memory" not in f.read().split():
                        reasons.append(
                            f"{mount}: the cgroup v2 tree has no memory controller (a cgroup v1 hierarchy holds it)"
                        )
                        continue
            except OSError as exc:
                reasons.append(f"{mount}: {exc.strerror}")
                continue
            own = os.path.join(mount, _own_path(2).lstrip("/"))
            candidates = [(own, 2)] if own.rstrip("/") != mount.rstrip("/") else [(mount, 2)]
        else:
            continue
        for path, version in candidates:
            why = _usable(path, version)
            if why is None:
                _remove_stale(os.path.join(path, FOLDER))
                return Parent(path, version), f"cgroup v{version} memory at {path}"
            reasons.append(why)
    if not reasons:
        reasons.append("no cgroup hierarchy with a memory controller is mounted")
    return None, "; ".join(reasons)


def _remove_stale(folder: str) -> None:
    """Remove jail cgroups left by processes that died without removing them."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        owner = name.split("-", 1)[0]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            _rmdir(os.path.join(folder, name))


def _rmdir(path: str, attempts: int = 50) -> bool:
    for _ in range(attempts):
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return False
            try:  # still has processes (dying ones): kill what is left and wait
                with open(os.path.join(path, "cgroup.procs"), encoding="utf-8") as f:
                    for pid in f.read().split():
                        try:
                            os.kill(int(pid), signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass
            except OSError:
                pass
            time.sleep(0.02)
    return False


class Jail:
    """One jail's memory cgroup: descriptors for the jail, and its removal."""

    def __init__(self, path: str, version: int, fds: list[int]) -> None:
        self.path, self.version, self.fds = path, version, fds

    @classmethod
    def create(cls, parent: Parent, limit_bytes: int) -> Jail:
        name = f"{os.getpid()}-{next(_serial)}"
        path = os.path.join(parent.path, FOLDER, name)
        os.mkdir(path)
        fds: list[int] = []
        try:
            if parent.version == 1:
                limit, events = "memory.limit_in_bytes", "memory.oom_control"
                _write(path, "memory.swappiness", "0")  # a v1 limit without swap accounting
                _write(path, "memory.move_charge_at_immigrate", "0")
            else:
                limit, events = "memory.max", "memory.events"
                _write(path, "memory.swap.max", "0", missing_ok=True)
            _write(path, limit, str(limit_bytes))
            for name_, flags in (("cgroup.procs", os.O_WRONLY), (limit, os.O_WRONLY), (events, os.O_RDONLY)):
                fds.append(os.open(os.path.join(path, name_), flags | os.O_CLOEXEC))
        except BaseException:
            for fd in fds:
                os.close(fd)
            _rmdir(path)
            raise
        return cls(path, parent.version, fds)

    def argument(self) -> str:
        """What the supervisor's argv carries: the descriptors, as the jail will see them."""
        return ",".join(str(fd) for fd in self.fds)

    def remove(self) -> None:
        """Close the descriptors and remove the cgroup (killing anything still in it)."""
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        _rmdir(self.path)


def _write(path: str, name: str, value: str, missing_ok: bool = False) -> None:
    try:
        with open(os.path.join(path, name), "w") as f:
            f.write(value)
    except FileNotFoundError:
        if not missing_ok:
            raise


_found: tuple[Parent | None, str] | None = None
_found_lock = threading.Lock()


def parent() -> tuple[Parent | None, str]:
    """:func:`find_parent`, looked up once per process."""
    global _found
    with _found_lock:
        if _found is None:
            _found = find_parent()
        return _found
