"""Hostile programs against the jails: how much kernel memory (and shared kernel state) can one
program pin outside its memory limit, and what does cleaning up after it cost?

Each program tries to pin as much kernel memory as it can (socket buffers, TCP buffers, tmpfs
inodes, pipe buffers, memfd pages, inotify watches, io_uring rings, processes holding memory),
builds for at most ~2 s, prints a one-line summary of what it managed (and what stopped it), then
holds it until shortly before the time limit and exits 0 (or exits 1 at once when it could make
nothing at all, e.g. every attempt denied; a kill shows up as its own outcome). While it runs, the
host samples ``/proc/meminfo`` and ``/proc/net/sockstat`` every ~50 ms. Each row gives the largest
drop of MemAvailable; the largest rise of kernel+shmem memory (pages the page allocator handed out,
less page cache and processes' anonymous memory: steadier than MemAvailable when other work shares
the machine, and exact where MemAvailable is not, see ``reading``; the ``idle`` control row shows
how much both wander by themselves) and of Slab; the largest rise of the host's TCP memory pool
(``TCP mem``, pages: one pool for the whole machine, whichever namespace the socket is in); how
long the run took, cleanup included; the time from the program's exit to the sandbox's reply
(``cleanup ms``: the jail kills, reaps and wipes ``/tmp`` before it replies); and how long a
trivial ``print(1)`` then takes on the same sandbox (one worker: the same jail, or its replacement
if the jail was retired). The machine is let settle between programs (MemAvailable and kernel+shmem
back within 20 MiB of where they started, or 3 s).

For comparison the header prints the bound a program is meant to have: memory_mb × max_processes.
Programs stop on their own at ``--cap-mb`` (4096 MiB default; TCP stays under half the host's
``tcp_mem`` low mark, so that the host's own TCP never comes under pressure).

    .venv/bin/python bench/bench_hostile.py                        # nsjail and bwrap, warm and cold
    .venv/bin/python bench/bench_hostile.py --kinds nsjail --starts warm --programs tcp_loopback
    .venv/bin/python bench/bench_hostile.py --memory-mb 128 --json hostile.json
    .venv/bin/python bench/bench_hostile.py --memory-bound rlimit      # no memory cgroup (as without root)
    # another checkout's skate (PYTHONPATH also wins when --repo is not given):
    cd OTHER_CHECKOUT && PYTHONPATH=. /path/to/skate/.venv/bin/python /path/to/skate/bench/bench_hostile.py
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import threading
import time
import warnings
from pathlib import Path

PRELUDE = r'''
import errno, os, resource, sys, time
T0 = time.monotonic()
BUILD_S = __BUILD_S__
HOLD_UNTIL = T0 + __HOLD_S__
CAP = __CAP__


def building():
    return time.monotonic() - T0 < BUILD_S


def ename(n):
    return errno.errorcode.get(n, str(n))


def err(e):
    n = getattr(e, "errno", None)
    if n:
        return f"{type(e).__name__}({ename(n)})"
    return f"{type(e).__name__}({str(e)[:60]})" if str(e) else type(e).__name__


def mib(n):
    return f"{n / 2**20:.0f} MiB"


def raise_nofile():
    """What a hostile program does first: the soft fd limit up to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def report(line, made):
    """Say what was made, hold it until HOLD_UNTIL (nothing to hold: leave at once), exit."""
    print(line, flush=True)
    print(f"@built={time.monotonic():.6f}", flush=True)
    if made:
        time.sleep(max(0.0, HOLD_UNTIL - time.monotonic()))
    print(f"@end={time.monotonic():.6f}", flush=True)
    os._exit(0 if made else 1)
'''

EPILOGUE = r"""
try:
    _line, _made = main()
except BaseException as _e:  # noqa: BLE001
    _line, _made = f"failed: {err(_e)}", False
report(_line, _made)
"""

PROGRAMS: dict[str, str] = {}

PROGRAMS["idle"] = r"""
def main():  # the control: pins nothing, shows how much the machine's readings wander by themselves
    return "held nothing (control)", True
"""

PROGRAMS["unix_socketpair"] = r"""
import socket


def main():
    nofile = raise_nofile()
    buf = memoryview(bytes(1 << 16))  # 64 KiB sends: the fastest way to fill (fewer huge skbs)
    pairs, queued, n_stream, n_dgram, sndbuf, why = [], 0, 0, 0, 0, "deadline"
    try:
        while True:
            if not building():
                break
            if queued >= CAP:
                why = "the bench's cap"
                break
            kind = socket.SOCK_STREAM if len(pairs) % 2 == 0 else socket.SOCK_DGRAM
            a, b = socket.socketpair(socket.AF_UNIX, kind)
            pairs.append((a, b))
            if kind == socket.SOCK_STREAM:
                n_stream += 1
            else:
                n_dgram += 1
            for s in (a, b):
                try:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)  # clipped to wmem_max
                except OSError:
                    pass
                s.setblocking(False)
                sndbuf = s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            for s in (a, b):  # both directions
                chunk = len(buf) if kind == socket.SOCK_STREAM else min(len(buf), max(4096, sndbuf // 4))
                while queued < CAP:
                    try:
                        queued += s.send(buf[:chunk])
                    except BlockingIOError:
                        break
                    except OSError as e:
                        if e.errno == errno.EMSGSIZE and chunk > 4096:
                            chunk //= 2
                            continue
                        raise
    except Exception as e:  # noqa: BLE001
        why = err(e)
    return (f"queued {mib(queued)} in {len(pairs)} pairs ({n_stream} stream, {n_dgram} dgram; "
            f"SO_SNDBUF {sndbuf >> 10} KiB, {nofile} fds); stopped by {why}"), queued > 0
"""

PROGRAMS["tcp_loopback"] = r"""
import socket


def main():
    nofile = raise_nofile()
    buf = memoryview(bytes(1 << 20))
    conns, accepted, why = [], [], "deadline"
    state = {"queued": 0}

    def fill(s):
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
        except OSError:
            pass
        s.setblocking(False)
        while state["queued"] < CAP:
            try:
                state["queued"] += s.send(buf)
            except BlockingIOError:
                return

    try:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", 0))
        srv.listen(65535)  # clipped to somaxconn: connections wait there, never accepted, one fd each
        srv.setblocking(False)
        addr = srv.getsockname()
        while True:
            if not building():
                break
            if state["queued"] >= CAP:
                why = "the bench's cap"
                break
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.settimeout(0.25)
            try:
                c.connect(addr)
            except TimeoutError:  # the accept queue is full: take them (and fill them too)
                c.close()
                while True:
                    try:
                        s, _ = srv.accept()
                    except BlockingIOError:
                        break
                    accepted.append(s)
                    fill(s)
                continue
            conns.append(c)
            fill(c)
    except Exception as e:  # noqa: BLE001
        why = err(e)
    queued = state["queued"]
    return (f"queued {mib(queued)} over {len(conns)} loopback connections ({len(accepted)} accepted, "
            f"{nofile} fds); stopped by {why}"), queued > 0
"""

PROGRAMS["tmp_file_flood"] = r"""
import stat


def main():
    long = "f" * 230
    made, folders, why = 0, 0, "deadline"

    def mk(name):
        os.mknod(name, stat.S_IFREG | 0o600)  # one call per file

    def mk_open(name):
        os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))

    try:
        os.chdir("/tmp")
        try:
            mk("probe")
        except PermissionError:
            mk = mk_open
            mk("probe")
        made += 1
        top = 0
        while building():
            d = f"/tmp/{top:05d}{long[:200]}"
            os.mkdir(d)
            folders += 1
            top += 1
            for sub in range(8):  # nested folders, 1000 files each, long names (external dentry names)
                e = f"{d}/{sub}{long[:200]}"
                os.mkdir(e)
                folders += 1
                os.chdir(e)
                for i in range(1000):
                    mk(f"{i:04d}{long}")
                    made += 1
                if not building():
                    break
    except Exception as e:  # noqa: BLE001
        why = err(e)
    return f"made {made} empty files in {folders} folders; stopped by {why}", made > 0
"""

PROGRAMS["pipes"] = r"""
import fcntl


def main():
    nofile = raise_nofile()
    setsz = getattr(fcntl, "F_SETPIPE_SZ", 1031)
    buf = bytes(1 << 20)
    pipes, held, big, why = [], 0, 0, "deadline"
    try:
        while True:
            if not building():
                break
            if held >= CAP:
                why = "the bench's cap"
                break
            r, w = os.pipe2(os.O_NONBLOCK)
            pipes.append((r, w))
            try:
                fcntl.fcntl(w, setsz, 1 << 20)
                big += 1
            except OSError:
                pass
            while True:
                try:
                    held += os.write(w, buf)
                except BlockingIOError:
                    break
    except Exception as e:  # noqa: BLE001
        why = err(e)
    return (f"held {mib(held)} in {len(pipes)} full pipes ({big} grown to 1 MiB; {nofile} fds); "
            f"stopped by {why}"), held > 0
"""

PROGRAMS["memfd"] = r"""
import ctypes
import signal


def main():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past RLIMIT_FSIZE fail with EFBIG instead
    nofile = raise_nofile()
    fsize = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    per = min(fsize, 1 << 24) if fsize != resource.RLIM_INFINITY else 1 << 24
    data = memoryview(bytes(per))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_long]
    failed = ctypes.c_void_p(-1).value
    fds, mapped, held, why = [], 0, 0, "deadline"

    def fill(fd):
        n = 0
        while n < per:
            try:
                n += os.write(fd, data[n:])
            except OSError as e:
                if e.errno == errno.EFBIG:
                    break
                raise
        return n

    try:
        while True:  # as many memfds as fds allow, each filled up to the file-size cap
            if not building():
                break
            if held >= CAP:
                why = "the bench's cap"
                break
            try:
                fd = os.memfd_create("hold", 0)
            except OSError as e:
                if e.errno != errno.EMFILE or not fds:
                    raise
                why = f"{err(e)}, then"
                break
            fds.append(fd)
            held += fill(fd)
        if why.endswith("then"):  # out of fds: map each one and close it (the mapping holds it)
            while True:
                if not building():
                    why += " deadline"
                    break
                if held >= CAP:
                    why += " the bench's cap"
                    break
                fd = fds.pop()
                addr = libc.mmap(None, per, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
                if addr in (None, failed):
                    why += f" mmap {ename(ctypes.get_errno())}"
                    fds.append(fd)
                    break
                os.close(fd)
                mapped += 1
                fd = os.memfd_create("hold", 0)
                fds.append(fd)
                held += fill(fd)
    except Exception as e:  # noqa: BLE001
        why = (why + " " if why.endswith("then") else "") + err(e)
    return (f"held {mib(held)} in memfds: {len(fds)} open + {mapped} mapped and closed, "
            f"{per >> 10} KiB each ({nofile} fds); stopped by {why}"), held > 0
"""

PROGRAMS["inotify"] = r"""
import ctypes


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    if fd < 0:
        return f"inotify_init1 failed: {ename(ctypes.get_errno())}", False
    mask = 0xFFF | 0x02000000  # IN_ALL_EVENTS | IN_DONT_FOLLOW
    wds, folders, why, refused = set(), 0, "walked all of /usr", {}
    seen = set()
    stack = [b"/usr", b"/usr/lib"]  # /usr/lib first, then the rest of /usr
    try:
        while stack:
            if not building():
                why = "deadline"
                break
            d = stack.pop()
            if d in seen:
                continue
            seen.add(d)
            wd = libc.inotify_add_watch(fd, d, mask)
            if wd < 0:
                e = ctypes.get_errno()
                if e == errno.ENOSPC:
                    why = "ENOSPC (max_user_watches)"
                    break
                refused[ename(e)] = refused.get(ename(e), 0) + 1
                continue
            wds.add(wd)
            folders += 1
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            full = False
            for ent in entries:
                if ent.is_dir(follow_symlinks=False):
                    stack.append(ent.path)
                    continue
                wd = libc.inotify_add_watch(fd, ent.path, mask)
                if wd >= 0:
                    wds.add(wd)
                else:
                    e = ctypes.get_errno()
                    if e == errno.ENOSPC:
                        full = True
                        break
                    refused[ename(e)] = refused.get(ename(e), 0) + 1
            if full:
                why = "ENOSPC (max_user_watches)"
                break
    except Exception as e:  # noqa: BLE001
        why = err(e)
    more = f", refused {refused}" if refused else ""
    return f"{len(wds)} inotify watches ({folders} folders) on /usr/lib and /usr{more}; stopped by {why}", bool(wds)
"""

PROGRAMS["io_uring"] = r"""
import ctypes
import struct


def main():
    nofile = raise_nofile()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    nr = {"x86_64": 425, "aarch64": 425}.get(os.uname().machine)
    if nr is None:
        return f"io_uring_setup: unknown syscall number on {os.uname().machine}", False

    def setup(entries):
        params = ctypes.create_string_buffer(120)  # struct io_uring_params
        fd = libc.syscall(ctypes.c_long(nr), ctypes.c_uint(entries), params)
        return (fd if fd >= 0 else -ctypes.get_errno()), params

    fd, params = setup(4096)
    if fd < 0:
        return f"io_uring_setup(4096) failed: {ename(-fd)}", False
    sq, cq = struct.unpack_from("II", params.raw, 0)
    per = sq * (64 + 4) + cq * 16 + 4096  # SQEs + SQ index array + CQEs + headers
    rings, held, why = [fd], per, "deadline"
    try:
        while True:
            if not building():
                break
            if held >= CAP:
                why = "the bench's cap"
                break
            fd, _ = setup(4096)
            if fd < 0:
                why = ename(-fd)
                break
            rings.append(fd)
            held += per
    except Exception as e:  # noqa: BLE001
        why = err(e)
    return (f"io_uring_setup(4096) -> fd {rings[0]} ({sq} sq / {cq} cq entries); {len(rings)} rings "
            f"~ {mib(held)} ({nofile} fds); stopped by {why}"), True
"""

PROGRAMS["threads_fork"] = r"""
import select
import threading


def main():
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[0]

    def grab():  # as much touched memory as the address-space limit leaves room for
        target = (limit - (96 << 20)) if limit != resource.RLIM_INFINITY else 512 << 20
        target = min(target, CAP // 8)
        while target > (16 << 20):
            try:
                blob = bytearray(target)
                blob[::4096] = b"\x01" * len(range(0, target, 4096))
                return blob
            except MemoryError:
                target -= 32 << 20
        return bytearray()

    r, w = os.pipe()
    kids, why = 0, "deadline"
    while building() and kids < 256:
        try:
            pid = os.fork()
        except OSError as e:
            why = err(e)
            break
        if pid == 0:
            try:
                os.close(r)
                blob = grab()
                os.write(w, f"{len(blob)}\n".encode())
                time.sleep(max(0.0, HOLD_UNTIL + 0.2 - time.monotonic()))
            finally:
                os._exit(0)
        kids += 1
    os.close(w)
    mine = grab()
    threads, terr = 0, "stopped at 256"
    while building() and threads < 256:
        try:
            t = threading.Thread(target=time.sleep, args=(max(0.0, HOLD_UNTIL - time.monotonic()),), daemon=True)
            t.start()
        except Exception as e:  # noqa: BLE001
            terr = err(e)
            break
        threads += 1
    sizes, data = [], b""
    stop = T0 + BUILD_S + 0.8
    while len(sizes) < kids and time.monotonic() < stop:
        if select.select([r], [], [], max(0.0, stop - time.monotonic()))[0]:
            chunk = os.read(r, 4096)
            if not chunk:
                break
            data += chunk
            sizes = [int(x) for x in data.split()]
    total = sum(sizes) + len(mine)
    return (f"{1 + kids} processes holding {mib(total)} (parent {mib(len(mine))}, {kids} children, "
            f"{len(sizes)} reported); fork stopped by {why}; {threads} threads ({terr}); "
            f"RLIMIT_NPROC {nproc}"), total > 0
"""

TRIVIAL = "print(1)\n"


def program_source(name: str, build_s: float, hold_s: float, cap: int) -> str:
    prelude = (
        PRELUDE.replace("__BUILD_S__", repr(build_s)).replace("__HOLD_S__", repr(hold_s)).replace("__CAP__", str(cap))
    )
    return prelude + PROGRAMS[name] + EPILOGUE


# ------------------------------------------------------------------------------- host readings
MEMINFO_KEYS = ("MemAvailable", "Buffers", "Cached", "AnonPages", "Slab", "SUnreclaim", "Shmem")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def net_pages() -> int:
    """Pages the page allocator has handed out less those it took back, since boot."""
    net = 0
    with open("/proc/vmstat", "rb") as f:
        for line in f:
            if line.startswith(b"pgalloc_"):
                net += int(line.split()[1])
            elif line.startswith(b"pgfree "):
                net -= int(line.split()[1])
    return net


def reading() -> dict[str, int]:
    """Lines of /proc/meminfo (KiB), and ``kernel`` (KiB, up to a constant): the pages the page
    allocator has handed out and not taken back (``pgalloc_*`` − ``pgfree`` in /proc/vmstat), less
    page cache (shmem aside) and processes' anonymous memory. What is left is kernel memory (slab,
    socket and pipe buffers, page tables, io_uring rings, ...) plus shmem (memfds, tmpfs files).
    It hardly moves when other processes allocate, free or read files, and unlike MemFree (so
    MemAvailable) it counts every page: on a VM that reports free pages to its host (virtio
    balloon), pages come and go from the free lists by themselves, and a burst of allocations can
    show up as a fraction of itself there. From /proc/net/sockstat: the host's sockets in use (its
    own network namespace only), TCP sockets allocated and TCP memory pages (both machine-wide)."""
    out: dict[str, int] = {}
    before = net_pages()  # read on both sides of /proc/meminfo: pages allocated meanwhile count half
    with open("/proc/meminfo", "rb") as f:
        for line in f:
            key, _, rest = line.partition(b":")
            k = key.decode()
            if k in MEMINFO_KEYS:
                out[k] = int(rest.split()[0])
    allocated = (before + net_pages()) * PAGE_KIB // 2
    out["kernel"] = allocated - out["AnonPages"] - (out["Cached"] - out["Shmem"]) - out["Buffers"]
    with open("/proc/net/sockstat", "rb") as f:
        for line in f:
            parts = line.split()
            if parts[:1] == [b"sockets:"]:
                out["sockets_used"] = int(parts[2])
            elif parts[:1] == [b"TCP:"]:
                fields = dict(zip(parts[1::2], parts[2::2], strict=False))
                out["tcp_mem"] = int(fields.get(b"mem", 0))
                out["tcp_alloc"] = int(fields.get(b"alloc", 0))
    return out


def tcp_mem_low_pages() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/tcp_mem").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 65536


def settle(base: dict[str, int], slack_mib: float = 20.0, max_s: float = 3.0) -> float:
    """Wait until the memory a program pinned is given back: MemAvailable and kernel+shmem within
    ``slack_mib`` of where they were before it (or ``max_s``)."""
    start = time.monotonic()
    while time.monotonic() - start < max_s:
        now = reading()
        if (
            now["MemAvailable"] >= base["MemAvailable"] - slack_mib * 1024
            and now["kernel"] <= base["kernel"] + slack_mib * 1024
        ):
            break
        time.sleep(0.05)
    return time.monotonic() - start


def parse_stdout(stdout: str) -> tuple[str, float | None, float | None]:
    summary, built, end = "", None, None
    for line in stdout.splitlines():
        if line.startswith("@built="):
            built = float(line[7:])
        elif line.startswith("@end="):
            end = float(line[5:])
        elif line.strip() and not summary:
            summary = line.strip()
    return summary, built, end


def measure(sb, name: str, code: str, limits, interval: float) -> dict:
    base = reading()
    box: dict = {}

    def run() -> None:
        try:
            box["res"] = sb.run(code, limits)
        except BaseException as exc:  # noqa: BLE001 - run() should never raise; record it if it does
            box["exc"] = exc
        box["t_end"] = time.monotonic()

    th = threading.Thread(target=run, name=f"hostile-{name}", daemon=True)
    t0 = time.monotonic()
    th.start()
    low = dict(base)
    high = dict(base)
    samples = 0
    while True:
        alive = th.is_alive()
        now = reading()
        samples += 1
        for k, v in now.items():
            low[k] = min(low[k], v)
            high[k] = max(high[k], v)
        if not alive:
            break
        th.join(interval)
    res = box.get("res")
    t_end = box["t_end"]
    row = {
        "program": name,
        "samples": samples,
        "run_s": t_end - t0,
        "mem_available_drop_mib": (base["MemAvailable"] - low["MemAvailable"]) / 1024,
        "kernel_rise_mib": (high["kernel"] - base["kernel"]) / 1024,
        "slab_rise_mib": (high["Slab"] - base["Slab"]) / 1024,
        "sunreclaim_rise_mib": (high["SUnreclaim"] - base["SUnreclaim"]) / 1024,
        "shmem_rise_mib": (high["Shmem"] - base["Shmem"]) / 1024,
        "tcp_mem_rise_pages": high["tcp_mem"] - base["tcp_mem"],
        "tcp_alloc_rise": high["tcp_alloc"] - base["tcp_alloc"],
        "sockets_used_rise": high["sockets_used"] - base["sockets_used"],
        "base": base,
    }
    if res is None:
        row.update(
            outcome="bench_error",
            summary=f"sb.run raised {box.get('exc')!r}",
            returncode=None,
            stderr_tail="",
            cleanup_ms=None,
        )
    else:
        summary, _built, end = parse_stdout(res.stdout)
        if not summary:
            tail = res.stderr.strip().splitlines()[-1:] if res.stderr.strip() else []
            summary = f"(no summary) {tail[0] if tail else ''}".strip()
        cleanup = (t_end - end) * 1000 if end is not None and 0 <= t_end - end < 600 else None
        row.update(
            outcome=res.outcome.value,
            summary=summary,
            returncode=res.returncode,
            duration_s=res.duration_s,
            stderr_tail=res.stderr.strip()[-400:],
            cleanup_ms=cleanup,
        )
    # The next program on the same sandbox: what cleaning up after this one left to pay.
    t = time.perf_counter()
    nxt = sb.run(TRIVIAL, limits)
    row["next_ms"] = (time.perf_counter() - t) * 1000
    row["next_outcome"] = nxt.outcome.value
    row["settle_s"] = settle(base)
    return row


def boot_ticks() -> int:
    """Now, in the clock ticks since boot that /proc/PID/stat gives a process's start time in."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


NUMERIC = (
    "mem_available_drop_mib",
    "kernel_rise_mib",
    "slab_rise_mib",
    "sunreclaim_rise_mib",
    "shmem_rise_mib",
    "tcp_mem_rise_pages",
    "tcp_alloc_rise",
    "sockets_used_rise",
    "run_s",
    "cleanup_ms",
    "next_ms",
    "settle_s",
)


def medians(runs: list[dict]) -> list[dict]:
    """One row per sandbox, start and program: the median of each figure over the repeats; the
    outcome and summary of the last repeat (every distinct outcome when they differ)."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["sandbox"], r["start"], r["program"]), []).append(r)
    rows = []
    for group in groups.values():
        row = {k: v for k, v in group[-1].items() if k not in ("base", "repeat")}
        for key in NUMERIC:
            values = [r[key] for r in group if r.get(key) is not None]
            row[key] = statistics.median(values) if values else None
        outcomes = list(dict.fromkeys(r["outcome"] for r in group))
        row["outcome"] = "/".join(outcomes)
        nexts = list(dict.fromkeys(r["next_outcome"] for r in group))
        row["next_outcome"] = "/".join(nexts)
        row["repeats"] = len(group)
        rows.append(row)
    return rows


def leftovers(uids: dict[int, int]) -> list[str]:
    """Processes still running after every sandbox closed: our own children, and processes of one
    of our jails' uids that started before we let that uid go (``uids``: uid -> boot ticks at our
    close). Other runs on the machine use the same uid range: a process that took a uid after us
    is theirs."""
    found = []
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        try:
            uid = int(fields.get("Uid", "-1").split()[0])
            ppid = int(fields.get("PPid", "-1").strip())
            started = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19])
        except (OSError, ValueError, IndexError):
            continue
        if (uid in uids and started <= uids[uid]) or ppid == me:
            found.append(f"{pid} ({fields.get('Name', '?').strip()}, uid {uid})")
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", default="nsjail,bwrap", help="sandboxes: nsjail, bwrap or both")
    ap.add_argument("--starts", default="warm,cold", help="jail starts: warm, cold or both")
    ap.add_argument("--programs", default=",".join(PROGRAMS), help=f"some of {', '.join(PROGRAMS)}")
    ap.add_argument("--memory-mb", type=int, default=None, help="the limit (default: Limits()'s)")
    ap.add_argument(
        "--memory-bound",
        default="",
        choices=["", "auto", "cgroup", "rlimit"],
        help="sandbox.memory_bound for the jails (default: the sandbox's own default)",
    )
    ap.add_argument("--timeout", type=float, default=4.0, help="each program's wall-clock limit, s")
    ap.add_argument(
        "--cap-mb",
        type=int,
        default=4096,
        help="a program stops pinning at this much (the machine's safety, not the jail's)",
    )
    ap.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="run every program this many times (interleaved); the table gives medians",
    )
    ap.add_argument("--interval", type=float, default=0.05, help="host sampling interval, s")
    ap.add_argument("--width", type=int, default=120, help="summary column width in the table")
    ap.add_argument(
        "--repo",
        type=Path,
        default=None,
        help="import skate from this checkout (default: PYTHONPATH if set, else this script's)",
    )
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    if args.repo is not None:
        sys.path.insert(0, str(args.repo.resolve()))
    elif not os.environ.get("PYTHONPATH"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import skate
    from skate.sandbox import BwrapSandbox, Limits, NsjailSandbox, Outcome, SandboxUnavailable

    classes = {"nsjail": NsjailSandbox, "bwrap": BwrapSandbox}
    kinds = [k for k in args.kinds.split(",") if k]
    starts = [s for s in args.starts.split(",") if s]
    names = [p for p in args.programs.split(",") if p]
    for what, given, known in (
        ("kind", kinds, classes),
        ("start", starts, ("warm", "cold")),
        ("program", names, PROGRAMS),
    ):
        bad = [g for g in given if g not in known]
        if bad:
            ap.error(f"unknown {what}: {', '.join(bad)} (known: {', '.join(known)})")

    defaults = Limits()
    limits = Limits(
        timeout_s=args.timeout,
        cpu_s=defaults.cpu_s,
        memory_mb=args.memory_mb if args.memory_mb is not None else defaults.memory_mb,
        max_output_bytes=defaults.max_output_bytes,
        max_processes=defaults.max_processes,
    )
    hold_s = max(0.5, args.timeout - 0.7)
    build_s = min(2.0, hold_s - 0.3)
    cap = args.cap_mb << 20
    tcp_cap = min(cap, tcp_mem_low_pages() * 4096 // 2)
    bound_mib = limits.memory_mb * limits.max_processes
    skate_at = str(Path(skate.__file__).resolve().parent)

    runs: list[dict] = []  # every measurement; ``rows``: their medians per sandbox, start and program
    jail_uids: dict[int, int] = {}  # host uids our jails ran as (root only) -> boot ticks at close
    t_all = time.monotonic()
    for kind in kinds:
        for start in starts:
            label = f"{kind} ({start})"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    extra = {"memory_bound": args.memory_bound} if args.memory_bound else {}
                    sb = classes[kind](limits, workers=1, warm=start == "warm", **extra)
                t = time.perf_counter()
                sb.start()
                startup_ms = (time.perf_counter() - t) * 1000
            except SandboxUnavailable as exc:
                print(f"skipping {label}: {exc}", file=sys.stderr)
                continue
            used: set[int] = set()
            try:
                if start == "warm" and not all(w.warm for w in sb._all):
                    print(f"{label}: the jail could not start its zygotes and runs cold", file=sys.stderr)
                check = sb.run(TRIVIAL, limits)
                if check.outcome is not Outcome.OK:
                    print(f"{label}: a trivial program fails ({check.summary()}); skipped", file=sys.stderr)
                    continue
                for repeat, name in ((r, n) for r in range(args.repeats) for n in names):
                    used.update(w.host_uid for w in list(sb._all) if w.host_uid > 0)
                    code = program_source(name, build_s, hold_s, tcp_cap if name == "tcp_loopback" else cap)
                    row = measure(sb, name, code, limits, args.interval)
                    row.update(sandbox=kind, start=start, repeat=repeat, startup_ms=startup_ms)
                    runs.append(row)
                    print(
                        f"{label:14} {name:16} {row['outcome']:13} drop {row['mem_available_drop_mib']:7.0f} MiB  "
                        f"kernel +{row['kernel_rise_mib']:6.0f} MiB  "
                        f"tcp +{row['tcp_mem_rise_pages']:6d} p  next {row['next_ms']:6.0f} ms  {row['summary']}",
                        file=sys.stderr,
                        flush=True,
                    )
            finally:
                used.update(w.host_uid for w in list(sb._all) if w.host_uid > 0)
                sb.close()
                jail_uids.update(dict.fromkeys(used, boot_ticks()))
    left = leftovers(jail_uids)
    rows = medians(runs)
    total_s = time.monotonic() - t_all

    print(
        f"skate from {skate_at}; {platform.system()} {platform.release()}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}; {total_s:.0f} s in all\n"
    )
    print(
        f"Limits: timeout {limits.timeout_s:g} s, cpu {limits.cpu_s} s, memory_mb {limits.memory_mb}, "
        f"max_processes {limits.max_processes}, max_output_bytes {limits.max_output_bytes}. "
        f"Bound: memory_mb × max_processes = {limits.memory_mb} × {limits.max_processes} = {bound_mib} MiB. "
        f"Programs build for ≤ {build_s:g} s, hold until {hold_s:g} s, stop at {args.cap_mb} MiB "
        f"(TCP: {tcp_cap >> 20} MiB, half the host's tcp_mem low mark)."
        + (f" Figures: the median of {args.repeats} runs." if args.repeats > 1 else "")
        + "\n"
    )
    print(
        "| sandbox | start | program | outcome | summary | MemAvailable drop MiB | kernel+shmem rise MiB "
        "| Slab rise MiB | TCP mem rise pages | run s | cleanup ms | next-program ms |"
    )
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        summary = r["summary"].replace("|", "/")
        if len(summary) > args.width:
            summary = summary[: args.width - 1] + "…"
        cleanup = f"{r['cleanup_ms']:.0f}" if r.get("cleanup_ms") is not None else "–"
        nxt = f"{r['next_ms']:.0f}" + ("" if r["next_outcome"] == "ok" else f" ({r['next_outcome']})")
        print(
            f"| {r['sandbox']} | {r['start']} | {r['program']} | {r['outcome']} | {summary} "
            f"| {r['mem_available_drop_mib']:.0f} | {r['kernel_rise_mib']:.0f} | {r['slab_rise_mib']:.0f} "
            f"| {r['tcp_mem_rise_pages']:.0f} "
            f"| {r['run_s']:.2f} | {cleanup} | {nxt} |"
        )
    if left:
        print(f"\nWARNING: processes left after every sandbox closed: {', '.join(left)}", file=sys.stderr)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "skate": skate_at,
                    "kernel": platform.release(),
                    "limits": dataclasses.asdict(limits),
                    "bound_mib": bound_mib,
                    "cap_mib": args.cap_mb,
                    "tcp_cap_mib": tcp_cap >> 20,
                    "build_s": build_s,
                    "hold_s": hold_s,
                    "total_s": total_s,
                    "repeats": args.repeats,
                    "leftovers": left,
                    "rows": rows,
                    "runs": runs,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
