"""The supervisor that runs as PID 1 inside a jail and executes one program at a time.

This file is not imported by the host: its source text is passed to ``python -I -S -c`` as the
jail's command (only the standard library is available inside). It reads one JSON request per
line on stdin and writes one JSON reply per line on stdout:

    request: {"code": str, "stdin": str, "env": {name: value}, "timeout": s, "cpu": s, "mem": bytes, "fsize": bytes, "nproc": n}
    reply:   {"rc": int | null, "timed_out": bool, "cpu_s": float, "out": str, "out_bytes": int, "err": str,
              "clean": bool, "setup_error": str | null, "oom": bool | null}
             or   {"ready": true, "bounds": {...}, ...} once at start, {"fatal": str} on a bug.

What the supervisor says about a program comes from what it saw itself, never from what the
program wrote: ``setup_error`` is read from a memory file that only the program's process holds
before its code runs (closed on exec, or just before the code on the warm path), so a program
cannot write there; ``oom`` is the kernel's own count of OOM kills in the program's memory
cgroup, when the host gave one (``CGFDS``).

For each program it makes a fresh working folder, forks a child that applies the rlimits, points
stdin at an in-memory file holding the request's input, stdout/stderr at in-memory files, and
execs a fresh ``python -I -S main.py`` with only the request's environment variables. Afterwards it kills every process left in the jail (as the
namespace's init it can, and the kernel shields it from its children's signals), reaps them,
and wipes the temporary folder. The jail's ``argv``: ``PYTHON UID GID FILTER CGFDS [ZYGOTE]``
(UID/GID -1 = keep; FILTER: the program's own seccomp filter, classic BPF in hex, installed in
every program's process before its code runs; CGFDS: ``PROCS,LIMIT,EVENTS``, descriptors of the
memory cgroup every program joins (its ``cgroup.procs``, its limit and its event counters, opened
by the host), or ``-``: then the memory limit is an address-space rlimit per process).

Warm (``ZYGOTE`` given: the source of ``_zygote.py``): at start it also runs two zygotes, clean
interpreters that have imported what programs commonly use, and a program is then forked from
one of them (alternately, so that a program run twice in a row sees two hash seeds and address
layouts) instead of exec'd: the zygote clones the child as a sibling, so it is still this
supervisor's child, timed, killed and reaped as above. The zygotes stay up, so what is left of a
program is killed by its process group, which its processes cannot leave (the child's seccomp
filter, see ``_zygote.py``), instead of by ``kill(-1)``. A request whose environment names a
variable the interpreter reads at start-up (locale, time zone, dynamic linker, allocator) is run
cold, as is everything if the zygotes cannot start (the ready line says why).
"""

import json
import marshal
import os
import resource
import select
import signal
import socket
import sys
import time

TMP = "/tmp"
RUN = "/tmp/run"
SHIELDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGQUIT,
    signal.SIGALRM,
    signal.SIGTSTP,
    signal.SIGTTIN,
    signal.SIGTTOU,
)
ZYGOTES = 2
ZYGOTE_START_S = 30.0
REPLY_S = 10.0  # how long a zygote may take to fork
SWEEP_S = 10.0  # how long killing a program's leftovers may take before the jail gives up
WIPE_S = 5.0  # how long emptying /tmp may take before the jail gives up (its inodes are capped)
NOFILE = 1024  # open descriptors per process, for the supervisor and every program
SIGPENDING = 1024  # signals queued (and POSIX timers) per uid
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
# Variables the interpreter (or the C library under it) reads once, at start-up: a zygote started
# without them cannot honour them, so a request that sets one runs cold. (The locale it starts in
# comes from LC_ALL, LC_CTYPE and LANG; `time` reads TZ when it is set up; the dynamic linker and
# the allocator read theirs at exec. With -I it reads no PYTHON* variable at all.)
COLD_NAMES = frozenset({"LC_ALL", "LC_CTYPE", "LANG", "TZ"})
COLD_PREFIXES = ("LD_", "MALLOC_", "GLIBC_")


class Filter:
    """The program's own seccomp filter (classic BPF from the host), ready to install."""

    def __init__(self, hex_text):
        import ctypes

        data = bytes.fromhex(hex_text)
        if not data or len(data) % 8:
            raise ValueError("the program filter is not a BPF program")

        class Fprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        self._buf = ctypes.create_string_buffer(data, len(data))
        self._prog = Fprog(len(data) // 8, ctypes.addressof(self._buf))
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl
        self._args = (
            ctypes.c_int(PR_SET_SECCOMP),
            ctypes.c_ulong(SECCOMP_MODE_FILTER),
            ctypes.c_void_p(ctypes.addressof(self._prog)),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )
        self._nnp = (
            ctypes.c_int(PR_SET_NO_NEW_PRIVS),
            ctypes.c_ulong(1),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )
        self._errno = ctypes.get_errno

    def install(self):
        if self._prctl(*self._nnp) != 0 or self._prctl(*self._args) != 0:
            err = self._errno()
            raise OSError(err, f"could not install the program's seccomp filter: {os.strerror(err)}")


class Cgroup:
    """The memory cgroup a program joins, from descriptors the host opened: it bounds the
    program's processes, the kernel memory they pin and the /tmp files they write, together, and
    its OOM-kill counter is the evidence for the ``memory`` outcome."""

    def __init__(self, text):
        self.procs, self.limit, self.events = (int(x) for x in text.split(","))
        self.limit_set = None
        self.seen = self.kills()  # readable, or the jail does not start

    def killed_since(self):
        """Whether the kernel OOM-killed in the cgroup since the last call (only programs are
        ever in it, one at a time, so one read per program is enough)."""
        now = self.kills()
        killed, self.seen = now > self.seen, now
        return killed

    def kills(self):
        for line in os.pread(self.events, 4096, 0).decode().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        raise RuntimeError("the memory cgroup counts no OOM kills (oom_kill)")

    def set_limit(self, nbytes):
        if nbytes != self.limit_set:
            os.pwrite(self.limit, str(nbytes).encode(), 0)
            self.limit_set = nbytes

    def join(self):
        os.write(self.procs, b"0")  # this process; its children follow


FILTER = None  # a Filter once main() has read argv
STARTED = [False]  # whether the current request's program has been started (for a fatal reply)
CGROUP = None  # a Cgroup, or None: memory is then an address-space rlimit per process


def _bounds():
    """What bounds a program here, as observed from inside (the ready line says it)."""
    st = os.statvfs(TMP)
    return {
        "memory": "cgroup" if CGROUP is not None else "rlimit",
        "tmp_bytes": st.f_blocks * st.f_frsize,
        "tmp_inodes": st.f_files,
        "program_filter": FILTER is not None,
    }


def _drop_privileges(uid, gid):
    if uid < 0 or os.getuid() != 0:
        return
    os.chown(TMP, uid, gid)
    os.chmod(TMP, 0o700)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)  # clears every capability


def _shield_self():
    # Signals that have a handler can reach init from inside its namespace; ignore them all.
    for sig in SHIELDED:
        signal.signal(sig, signal.SIG_IGN)
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    # Not dumpable: no ptrace, no /proc/1/fd, no process_vm_* by same-uid children.
    prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    # Die with the jail program outside: dropping privileges cleared any parent-death signal.
    prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _anon_file(name):
    # In memory, not in /tmp: a program that fills /tmp must not also lose its own output.
    # RLIMIT_FSIZE still applies to writes here, which is what caps the output.
    return os.memfd_create(name, os.MFD_CLOEXEC)


def _close_all_but(keep):
    """Close every descriptor from 3 on except ``keep``."""
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)


def _child(python, req, out_fd, err_fd, stdin_fd, setup_fd):
    try:
        os.setsid()
        if CGROUP is not None:
            CGROUP.join()
        os.dup2(stdin_fd, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        _close_all_but(setup_fd)  # close-on-exec: open until the program's interpreter starts
        for sig in (
            signal.SIGINT,
            signal.SIGTERM,
            signal.SIGHUP,
            signal.SIGUSR1,
            signal.SIGUSR2,
            signal.SIGQUIT,
            signal.SIGALRM,
            signal.SIGTSTP,
            signal.SIGTTIN,
            signal.SIGTTOU,
            signal.SIGPIPE,
            signal.SIGXFSZ,
        ):
            signal.signal(sig, signal.SIG_DFL)
        cpu, mem, fsize, nproc = req["cpu"], req["mem"], req["fsize"], req["nproc"]
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if CGROUP is None:
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.chdir(RUN)
        if FILTER is not None:
            FILTER.install()
        os.execve(python, [python, "-I", "-S", "main.py"], req.get("env") or {})
    except BaseException as exc:  # noqa: BLE001 - report and die without unwinding into the loop
        try:
            os.write(setup_fd, f"could not start the program: {exc!r}".encode("utf-8", "replace"))
        finally:
            os._exit(125)


def _reap_all():
    """Kill every process in the jail but ourselves and reap until none is left."""
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _names(dir_fd):
    with os.scandir(dir_fd) as it:
        return [e.name for e in it]


def _flatten(tmp, name, serial):
    """Empty the folder ``name`` in /tmp of its files and move its folders up into /tmp, then
    remove it: a tree of any depth is taken apart level by level, never by recursion or by paths
    (which a deep tree would make too long)."""
    os.chmod(name, 0o700, dir_fd=tmp)  # a folder (unlink said so), not a link
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=tmp)
    try:
        for sub in _names(fd):
            try:
                os.unlink(sub, dir_fd=fd)
                continue
            except IsADirectoryError:
                pass
            os.chmod(sub, 0o700, dir_fd=fd)  # a folder, not a link: moving it rewrites its ".."
            while True:
                serial[0] += 1
                try:
                    os.rename(sub, f".wipe-{serial[0]}", src_dir_fd=fd, dst_dir_fd=tmp)
                    break
                except FileExistsError:
                    continue
                except OSError as exc:
                    if exc.errno not in (39, 20):  # ENOTEMPTY, ENOTDIR: the name is taken
                        raise
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=tmp)


def _wipe_tmp(limit_s=WIPE_S):
    """Empty /tmp whatever a program did to it (permissions, depth, count, names); True when it
    is empty, False if that took more than ``limit_s`` or failed."""
    deadline = time.monotonic() + limit_s
    serial = [0]
    try:
        os.chmod(TMP, 0o700)  # the program's uid owns /tmp, so it may have locked it
        tmp = os.open(TMP, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        while True:
            names = _names(tmp)
            if not names:
                return True
            for name in names:
                if time.monotonic() > deadline:
                    return False
                try:
                    os.unlink(name, dir_fd=tmp)
                except IsADirectoryError:
                    _flatten(tmp, name, serial)
                except FileNotFoundError:
                    pass
    except OSError:
        return False
    finally:
        os.close(tmp)


def _read_back(fd, cap):
    size = os.fstat(fd).st_size
    data = os.pread(fd, cap, 0) if size else b""
    os.close(fd)
    return data, size


def _wait(pid, timeout):
    """Wait for our child ``pid`` at most ``timeout`` seconds, then kill it; (rc, timed out, CPU s)."""
    pidfd = os.pidfd_open(pid)
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        if select.select([pidfd], [], [], left)[0]:
            break
    os.close(pidfd)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), timed_out, usage.ru_utime + usage.ru_stime


def _encode(text):
    # As the host's base.encode_text: surrogate escapes become the bytes they stand for, other lone
    # surrogates (valid in a JSON string) their UTF-8-like form; a program whose source or input
    # holds one gets what CPython makes of those bytes, and the jail goes on.
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _write_main(code):
    os.mkdir(RUN, 0o700)
    fd = os.open(os.path.join(RUN, "main.py"), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        data = _encode(code)
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def _stdin_file(req):
    fd = _anon_file("stdin")
    given = req.get("stdin") or ""
    if given:
        os.write(fd, _encode(given))
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _prepare(req):
    """Before a program: its memory limit."""
    if CGROUP is not None:
        CGROUP.set_limit(req["mem"])


def _finish(req, rc, timed_out, cpu_used, out_fd, err_fd, setup_fd, clean):
    cap = req["fsize"]
    out, out_bytes = _read_back(out_fd, cap)
    err, _ = _read_back(err_fd, cap)
    said, _ = _read_back(setup_fd, 4096)
    return {
        "rc": rc,
        "timed_out": timed_out,
        "cpu_s": cpu_used,
        "out": out.decode("utf-8", "replace"),
        "out_bytes": out_bytes,
        "err": err.decode("utf-8", "replace"),
        "clean": clean,
        "setup_error": said.decode("utf-8", "replace") or None,
        "oom": None if CGROUP is None else CGROUP.killed_since(),
    }


def _run_one(python, req):
    _write_main(req["code"])
    out_fd, err_fd, setup_fd = _anon_file("stdout"), _anon_file("stderr"), _anon_file("setup")
    stdin_r = _stdin_file(req)
    _prepare(req)
    pid = os.fork()
    if pid == 0:
        _child(python, req, out_fd, err_fd, stdin_r, setup_fd)
    STARTED[0] = True
    os.close(stdin_r)
    rc, timed_out, cpu_used = _wait(pid, req["timeout"])
    _reap_all()
    clean = _wipe_tmp()
    return _finish(req, rc, timed_out, cpu_used, out_fd, err_fd, setup_fd, clean)


# --------------------------------------------------------------------------------------- warm
class Zygote:
    """One zygote (``_zygote.py``), spoken to over a SOCK_SEQPACKET socket: started by the
    constructor, ready once ``wait_ready`` returns."""

    def __init__(self, python, source, filter_hex):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Its stdin, stdout and stderr: empty memfds, the files a program's are (it never writes
        # to them; what CPython says if it fails to start is read back from the last).
        stdio = [_anon_file(name) for name in ("stdin", "stdout", "stderr")]
        pid = os.fork()
        if pid == 0:
            try:
                fd = theirs.fileno()
                if fd != 3:
                    os.dup2(fd, 3)
                os.set_inheritable(3, True)
                for target, memfd in enumerate(stdio):
                    os.dup2(memfd, target)
                os.closerange(4, 1 << 16)
                for sig in SHIELDED + (signal.SIGPIPE, signal.SIGXFSZ):
                    signal.signal(sig, signal.SIG_DFL)
                os.execve(python, [python, "-I", "-S", "-c", source, "3", filter_hex], {})
            finally:
                os._exit(127)
        theirs.close()
        os.close(stdio[0])
        os.close(stdio[1])
        self.pid, self.sock, self.stderr = pid, ours, stdio[2]

    def wait_ready(self):
        self.sock.settimeout(ZYGOTE_START_S)
        try:
            hello = self.sock.recv(64)
        except OSError as exc:
            hello = repr(exc).encode()
        said = os.pread(self.stderr, 2000, 0).decode("utf-8", "replace").strip()
        os.close(self.stderr)
        if hello != b"ready":
            raise RuntimeError(f"the zygote did not start ({hello[:100]!r}): {said[-600:]}")
        self.sock.settimeout(REPLY_S)

    def fork(self, fds, protected):
        """A child for one program (the memfds: request, stdin, stdout, stderr, setup; then the
        memory cgroup's ``cgroup.procs`` if there is one); its pid."""
        msg = ("fork " + " ".join(str(p) for p in protected)).encode()
        socket.send_fds(self.sock, [msg], fds)
        reply = self.sock.recv(256)
        if not reply.startswith(b"pid "):
            raise RuntimeError(f"the zygote failed: {reply[:200]!r}")
        return int(reply[4:])

    def close(self):
        """Hang up, and make sure it is gone (and reaped: a zombie still counts in RLIMIT_NPROC)."""
        for close in (self.sock.close, lambda: os.close(self.stderr)):
            try:
                close()
            except OSError:
                pass
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


class Warm:
    """The zygotes of a warm jail."""

    def __init__(self, python, source, filter_hex):
        self.python, self.source, self.filter_hex = python, source, filter_hex
        self.zygotes = []
        self.turn = 0
        self.start()

    def start(self):
        try:
            for _ in range(ZYGOTES):  # all at once: they import side by side
                self.zygotes.append(Zygote(self.python, self.source, self.filter_hex))
            for z in self.zygotes:
                z.wait_ready()
        except BaseException:
            self.stop()
            raise

    def stop(self):
        """Stop the zygotes (before a cold program, which is swept with kill(-1))."""
        for z in self.zygotes:
            z.close()
        self.zygotes = []

    def protected(self):
        return [1] + [z.pid for z in self.zygotes]

    def next(self):
        z = self.zygotes[self.turn % len(self.zygotes)]
        self.turn += 1
        return z


def wants_cold(env):
    return any(name in COLD_NAMES or name.startswith(COLD_PREFIXES) for name in env)


def _sweep(pgid):
    """Kill and reap every process in the program's group (every process it started: they
    cannot leave it); True once none is left, not even a zombie."""
    deadline = time.monotonic() + SWEEP_S
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return True
        try:
            os.waitpid(-pgid, 0)  # orphans come to init, and so to us
        except ChildProcessError:
            time.sleep(0.001)  # a member whose parent is still dying: it comes to us next
    return False


def _clear_run():
    """Empty /tmp in the common case, a program that left nothing but ordinary files in RUN, with
    a few calls rather than a walk; True if it did, False if it is a case for _wipe_tmp."""
    try:
        with os.scandir(TMP) as it:
            if [e.name for e in it] != ["run"]:
                return False
        files = []
        with os.scandir(RUN) as it:
            for e in it:
                if not e.is_file(follow_symlinks=False):
                    return False
                files.append(e.path)
        for path in files:
            os.unlink(path)
        os.rmdir(RUN)
    except OSError:  # a folder it made unreadable, a file it could not lose, ...
        return False
    return True


def _run_warm(warm, req):
    _write_main(req["code"])
    out_fd, err_fd, setup_fd = _anon_file("stdout"), _anon_file("stderr"), _anon_file("setup")
    stdin_fd, req_fd = _stdin_file(req), _anon_file("request")
    # The zygote only passes these on: what is in them is read by the child alone.
    mem = -1 if CGROUP is not None else req["mem"]  # the cgroup bounds memory: no rlimit then
    os.write(
        req_fd,
        marshal.dumps(
            {
                "env": req.get("env") or {},
                "cpu": req["cpu"],
                "mem": mem,
                "fsize": req["fsize"],
                "nproc": req["nproc"] + len(warm.zygotes),
            }
        ),
    )
    _prepare(req)
    fds = [req_fd, stdin_fd, out_fd, err_fd, setup_fd] + ([CGROUP.procs] if CGROUP is not None else [])
    try:
        pid = warm.next().fork(fds, warm.protected())
        STARTED[0] = True
    finally:
        os.close(req_fd)
        os.close(stdin_fd)
    rc, timed_out, cpu_used = _wait(pid, req["timeout"])
    swept = _sweep(pid)
    clean = (_clear_run() or _wipe_tmp()) and swept
    return _finish(req, rc, timed_out, cpu_used, out_fd, err_fd, setup_fd, clean)


def main():
    global FILTER, CGROUP
    python, uid, gid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    filter_hex, cgroup_fds = sys.argv[4], sys.argv[5]
    zygote_source = sys.argv[6] if len(sys.argv) > 6 else ""
    FILTER = Filter(filter_hex) if filter_hex != "-" else None
    CGROUP = Cgroup(cgroup_fds) if cgroup_fds != "-" else None
    _drop_privileges(uid, gid)
    _shield_self()
    os.umask(0o077)
    # Every jail the same (bubblewrap passes the host's own limit on, nsjail sets 1024): kernel
    # objects held through descriptors (pipes above all) scale with it.
    nofile = min(NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    # Queued signals, POSIX timers included, each hold kernel memory (the default is sized to the
    # host's RAM: ~100,000 here).
    resource.setrlimit(resource.RLIMIT_SIGPENDING, (SIGPENDING, SIGPENDING))
    _wipe_tmp()
    warm, warm_error = None, None
    if zygote_source:
        try:
            warm = Warm(python, zygote_source, filter_hex)
        except Exception as exc:  # noqa: BLE001 - this jail runs cold; the host says so
            warm_error = f"{type(exc).__name__}: {exc}"
    reply = sys.stdout
    reply.write(
        json.dumps(
            {
                "ready": True,
                "uid": os.getuid(),
                "pid": os.getpid(),
                "python": python,
                "warm": warm is not None,
                "warm_error": warm_error,
                "bounds": _bounds(),
            }
        )
        + "\n"
    )
    reply.flush()
    for line in sys.stdin:
        STARTED[0] = False
        try:
            req = json.loads(line)
            if warm is None:
                result = _run_one(python, req)
            elif not wants_cold(req.get("env") or {}):
                result = _run_warm(warm, req)
            else:
                warm.stop()
                result = _run_one(python, req)
                warm.start()
        except Exception as exc:  # noqa: BLE001 - the host classifies this as a sandbox error
            _reap_all()
            result = {"fatal": f"{type(exc).__name__}: {exc}", "started": STARTED[0]}
            reply.write(json.dumps(result) + "\n")
            reply.flush()
            return 3
        reply.write(json.dumps(result) + "\n")
        reply.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
