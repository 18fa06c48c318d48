"""The zygote: a clean interpreter inside a jail that forks one child per program (``sandbox.warm``).

This file is not imported by the host to run anything: its source text is handed to the jail's
supervisor (``_supervisor.py``), which starts it with ``python -I -S -c SOURCE FD FILTER`` (an empty
environment, its signals at their defaults, fds 0-2 on three empty memfds: the files a program's
stdin, stdout and stderr are, so that the standard streams CPython builds for the zygote at its
start are exactly the ones it would build for a program, and are reused). It imports what
programs commonly use, freezes that state and then only ever forks: it never reads a program, an
input, an environment variable or an output, and never writes to its standard streams. Its one
channel, a ``SOCK_SEQPACKET`` socket on fd ``FD`` shared with the supervisor, carries::

    zygote -> supervisor   b"ready"                                      once, after the imports
    supervisor -> zygote   b"fork ID ID ..."  + 5 or 6 fds (SCM_RIGHTS)  one per program
    zygote -> supervisor   b"pid N"  or  b"error ..."

The fds are memfds made by the supervisor: the request (marshal: the environment and the
rlimits), stdin, stdout, stderr and setup (where the child says why it could not start the
program; closed before the program's code runs, so the program cannot write there); then, when
the host gave the jail a memory cgroup, its ``cgroup.procs``, which the child joins first.
FILTER is the program's own seccomp filter (classic BPF in hex, from the host), which the zygote
installs on itself once it has started (it needs none of what the filter refuses), so that every
child has it from its first instruction. The IDs are the pids a program must not reach (1, the
zygotes). For each ``fork`` the zygote clones a child with ``CLONE_PARENT``, so that the child is
the supervisor's own child (its parent pid is 1, as for a fresh interpreter, and the supervisor
times, reaps and measures it exactly as it does a cold one), and answers with its pid.

The child, before anything of the program runs: starts its own session; points fds 0-2 at the
memfds and closes every other fd (the zygote's socket included); unblocks the signals the
zygote blocks (their dispositions were never changed: a fresh interpreter's); applies the rlimits
(CPU, address space, file size, process count, core); moves into ``/tmp/run``; makes
``os.environ`` the request's environment; sets ``sys.argv``, ``sys.orig_argv``, ``sys.path`` and
a fresh ``__main__`` module as ``python -I -S main.py`` would have them; and installs a seccomp
filter of its own (on top of the jail's) that keeps it and its descendants away from the zygotes
and the supervisor: no signals, pidfds, rlimits, priorities or affinities aimed at them, no
``kill(-1)``, no ``F_SETOWN`` (a signal by proxy), and ``setsid``/``setpgid`` that do nothing,
so that every process the program starts stays in its process group and dies with it. Then it compiles and
runs ``main.py`` as ``__main__`` at this file's top level (one frame below the program's), and
ends the way CPython does: a traceback and status 1 for an uncaught exception, the code of a
``SystemExit``, then non-daemon threads joined, ``atexit`` handlers run, stdout and stderr
flushed (status 120 if that fails), ``__main__``'s globals cleared (so ``__del__`` methods and
unclosed files run and flush), and ``os._exit``.
"""

import gc

gc.disable()  # until the fork: no collections punching holes into pages the children share

import os
import signal
import sys

# Blocked in the zygote (its dispositions stay a fresh interpreter's; a child only unblocks them):
# a belt to the child's seccomp braces, which already keep programs from signalling it.
_SHIELDED = (
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
    signal.SIGIO,
    signal.SIGURG,
    signal.SIGWINCH,
)
_FRESH_PATH = tuple(sys.path)  # what a fresh `python -I -S` has, before anything changes it

# What the zygote itself needs.
import _signal
import _socket
import atexit
import builtins
import ctypes
import marshal
import resource

# What programs commonly import (PyJail's jails: ast, contextlib, io, os, re, unicodedata;
# sandboxed calls: os, sys; short programs: the rest), so that they pay none of it. Kept to
# modules whose import has no lasting effect beyond themselves (no threads, no atexit handlers,
# no files, no environment) and that need no fixing up after a fork: random (it reseeds itself)
# and threading are left to the programs that use them, which pay for them as a cold program does.
PRELOADED = (
    "ast",
    "collections",
    "contextlib",
    "functools",
    "heapq",
    "itertools",
    "json",
    "math",
    "operator",
    "re",
    "string",
    "typing",
    "unicodedata",
)
for _name in PRELOADED:
    __import__(_name)
del _name

# ---------------------------------------------------------------------------------- the kernel
_LIBC = ctypes.CDLL(None, use_errno=True)
_SYSCALL = _LIBC.syscall
_SYSCALL.restype = ctypes.c_long
_PRCTL = _LIBC.prctl
_API = ctypes.pythonapi
PR_SET_DUMPABLE, PR_SET_PDEATHSIG, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 4, 1, 22, 38
SECCOMP_MODE_FILTER = 2
CLONE_PARENT = 0x00008000

# Per architecture: the audit arch seccomp reports, and the numbers of the calls the filter looks
# at (checked against libseccomp's tables by the tests). Elsewhere the zygote refuses to start and
# the jail runs every program cold.
ARCHES = {
    "x86_64": (
        0xC000003E,
        dict(
            clone=56,
            kill=62,
            tkill=200,
            tgkill=234,
            rt_sigqueueinfo=129,
            rt_tgsigqueueinfo=297,
            pidfd_open=434,
            prlimit64=302,
            setpriority=141,
            sched_setaffinity=203,
            sched_setparam=142,
            sched_setscheduler=144,
            sched_setattr=314,
            ioprio_set=251,
            fcntl=72,
            ioctl=16,
            setsid=112,
            setpgid=109,
        ),
    ),
    "aarch64": (
        0xC00000B7,
        dict(
            clone=220,
            kill=129,
            tkill=130,
            tgkill=131,
            rt_sigqueueinfo=138,
            rt_tgsigqueueinfo=240,
            pidfd_open=434,
            prlimit64=261,
            setpriority=140,
            sched_setaffinity=122,
            sched_setparam=118,
            sched_setscheduler=119,
            sched_setattr=274,
            ioprio_set=30,
            fcntl=25,
            ioctl=29,
            setsid=157,
            setpgid=154,
        ),
    ),
}
_X32_BIT = 0x40000000
F_SETOWN, F_SETOWN_EX = 8, 15
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902
PRIO_USER, IOPRIO_WHO_USER = 2, 3

RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
EPERM, ENOSYS = 1, 38


def _u32(n):
    return n & 0xFFFFFFFF


def filter_program(machine, protected):
    """The child's seccomp filter as classic-BPF instructions ``(code, jt, jf, k)``.

    ``protected`` are the pids (1 and the zygotes) whose process a program may not signal,
    re-limit, renice, re-pin or take a pidfd of. Arguments are compared on their low 32 bits,
    which is all the kernel reads of a pid.
    """
    audit_arch, nr = ARCHES[machine]
    ids = sorted({_u32(p) for p in protected})
    kill_targets = sorted(set(ids) | {_u32(-p) for p in protected if p > 1} | {_u32(-1)})
    # syscall -> [(argument, values, errno)]: the first match decides.
    rules = {
        "kill": [(0, kill_targets, EPERM)],
        "tkill": [(0, ids, EPERM)],
        "tgkill": [(0, ids, EPERM)],
        "rt_sigqueueinfo": [(0, ids, EPERM)],
        "rt_tgsigqueueinfo": [(0, ids, EPERM)],
        "pidfd_open": [(0, ids, EPERM)],
        "sched_setaffinity": [(0, ids, EPERM)],
        "sched_setparam": [(0, ids, EPERM)],
        "sched_setscheduler": [(0, ids, EPERM)],
        "sched_setattr": [(0, ids, EPERM)],
        "setpriority": [(0, [PRIO_USER], EPERM), (1, ids, EPERM)],
        "ioprio_set": [(0, [IOPRIO_WHO_USER], EPERM), (1, ids, EPERM)],
        "fcntl": [(1, [F_SETOWN, F_SETOWN_EX], EPERM)],
        "ioctl": [(1, [FIOSETOWN, SIOCSPGRP], EPERM)],
    }
    # Instructions with symbolic jump targets, resolved below.
    prog = [("ld", 4), ("jeq", audit_arch, None, "enosys"), ("ld", 0)]
    if machine == "x86_64":
        prog.append(("jge", _X32_BIT, "enosys", None))
    prog.append(("jeq", nr["setsid"], "ok", None))
    prog.append(("jeq", nr["setpgid"], "ok", None))
    prog.append(("jeq", nr["prlimit64"], "prlimit", None))
    for name in rules:
        prog.append(("jeq", nr[name], name, None))
    prog.append(("ret", RET_ALLOW))
    labels = {}

    def label(name):
        labels[name] = len(prog)

    label("prlimit")  # only the caller's own limits (pid 0)
    prog += [("ld", 16), ("jeq", 0, None, "eperm"), ("ret", RET_ALLOW)]
    for name, checks in rules.items():
        label(name)
        for arg, values, errno in checks:
            prog.append(("ld", 16 + 8 * arg))
            for v in values:
                prog.append(("jeq", v, "eperm" if errno == EPERM else "enosys", None))
        prog.append(("ret", RET_ALLOW))
    label("eperm")
    prog.append(("ret", RET_ERRNO | EPERM))
    label("enosys")
    prog.append(("ret", RET_ERRNO | ENOSYS))
    label("ok")
    prog.append(("ret", RET_ERRNO | 0))  # "succeeds" without doing anything

    out = []
    for i, ins in enumerate(prog):
        if ins[0] == "ld":
            out.append((0x20, 0, 0, ins[1]))  # BPF_LD | BPF_W | BPF_ABS
        elif ins[0] == "ret":
            out.append((0x06, 0, 0, ins[1]))  # BPF_RET | BPF_K
        else:
            jt, jf = (labels[t] - i - 1 if t else 0 for t in ins[2:4])
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError("seccomp filter too long for its jumps")
            out.append((0x15 if ins[0] == "jeq" else 0x35, jt, jf, ins[1]))  # BPF_JMP|JEQ/JGE|K
    return out


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _compiled(machine, protected):
    """The arguments of the ``prctl`` that installs the filter (which they keep alive)."""
    ins = filter_program(machine, protected)
    array = (_SockFilter * len(ins))(*[_SockFilter(*i) for i in ins])
    prog = _SockFprog(len(ins), array)
    prog.keep = array
    return (
        ctypes.c_int(PR_SET_SECCOMP),
        ctypes.c_ulong(SECCOMP_MODE_FILTER),
        ctypes.pointer(prog),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    )


_DUMPABLE = (ctypes.c_int(PR_SET_DUMPABLE), ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


def _prctl(option, arg):
    if _PRCTL(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")


def _clone_sibling(nr_clone):
    """fork(), except that the child's parent is ours (the supervisor): CLONE_PARENT."""
    _API.PyOS_BeforeFork()
    pid = _SYSCALL(
        ctypes.c_long(nr_clone),
        ctypes.c_long(CLONE_PARENT | signal.SIGCHLD),
        ctypes.c_long(0),
        ctypes.c_long(0),
        ctypes.c_long(0),
        ctypes.c_long(0),
    )
    if pid == 0:
        _API.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    _API.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone: {os.strerror(err)}")
    return pid


# ------------------------------------------------------------------------------------- zygote
def _from_hex(hex_text):
    """The ``prctl`` arguments that install a classic-BPF program given in hex (or None)."""
    if hex_text in ("", "-"):
        return None
    data = bytes.fromhex(hex_text)
    array = (_SockFilter * (len(data) // 8)).from_buffer_copy(data)
    prog = _SockFprog(len(array), array)
    prog.keep = array
    return (
        ctypes.c_int(PR_SET_SECCOMP),
        ctypes.c_ulong(SECCOMP_MODE_FILTER),
        ctypes.pointer(prog),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    )


def _serve(fd, program_fprog=None):
    """Answer fork requests until the supervisor hangs up; return only in a child.

    ``program_fprog``, the program's own filter, is installed here, once, on the zygote itself
    (which needs none of what it refuses), so that every child inherits it already compiled."""
    machine = os.uname().machine
    if machine not in ARCHES:
        raise SystemExit(f"zygote: no seccomp table for {machine}")
    nr_clone = ARCHES[machine][1]["clone"]
    os.setsid()  # a process group of its own: no program's killpg reaches it
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_DUMPABLE, 0)  # no ptrace, no process_vm_*: not even by the same uid
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if program_fprog is not None and _PRCTL(*program_fprog) != 0:
        raise OSError(ctypes.get_errno(), "seccomp (the program's filter)")
    signal.pthread_sigmask(signal.SIG_BLOCK, _SHIELDED)
    sock = _socket.socket(fileno=fd)
    filters = {}
    gc.collect()
    gc.freeze()
    sock.send(b"ready")
    while True:
        try:
            msg, anc, flags, _ = sock.recvmsg(256, _socket.CMSG_SPACE(4 * 8))
        except InterruptedError:
            continue
        fds = []
        for level, kind, data in anc:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                fds += memoryview(data[: len(data) - len(data) % 4]).cast("i").tolist()
        if not msg:
            os._exit(0)  # the supervisor is gone
        pid, reply = None, b""
        try:
            words = msg.split()
            if words[0] != b"fork" or len(fds) not in (5, 6) or flags & _socket.MSG_CTRUNC:
                raise ValueError(f"bad request {msg[:60]!r} with {len(fds)} fds")
            protected = tuple(sorted({int(w) for w in words[1:]}))
            if protected not in filters:
                filters[protected] = _compiled(machine, protected)
            gc.freeze()
            pid = _clone_sibling(nr_clone)
        except Exception as exc:  # noqa: BLE001 - reported; the supervisor decides
            reply = f"error {type(exc).__name__}: {exc}".encode()[:200]
        if pid == 0:
            sock.detach()  # its fd is closed in the child with every other, never twice
            return fds, filters[protected]
        for f in fds:
            os.close(f)
        sock.send(reply if pid is None else b"pid %d" % pid)  # None: the error in reply


# -------------------------------------------------------------------------------------- child
RUN = "/tmp/run"
FILE = RUN + "/main.py"  # as `python -I -S main.py` run in RUN names it (__file__, tracebacks)
_SOURCE_LOADER = sys.modules["_frozen_importlib_external"].SourceFileLoader
_MODULE = type(sys)
_DEFAULT_EXCEPTHOOK = sys.__excepthook__
_run_exitfuncs = atexit._run_exitfuncs
_collect, _gc_enabled = gc.collect, gc.isenabled
_os_exit, _write, _kill, _getpid = os._exit, os.write, os.kill, os.getpid
_set_handler, _SIGINT, _SIG_DFL = signal.signal, signal.SIGINT, signal.SIG_DFL
_getattr, _isinstance, _int, _str, _type, _list = getattr, isinstance, int, str, type, list
_BaseException, _SystemExit, _KeyboardInterrupt = BaseException, SystemExit, KeyboardInterrupt


def _unraisable_args_type():
    """The type of what ``sys.unraisablehook`` receives (not importable; caught once here)."""
    seen: list[object] = []
    hook, sys.unraisablehook = sys.unraisablehook, seen.append

    class Probe:
        def __del__(self):
            raise RuntimeError

    try:
        Probe()
    finally:
        sys.unraisablehook = hook
    return type(seen[0])


_UnraisableHookArgs = _unraisable_args_type()


def _child_setup(fds, fprog):
    """Make this fresh child of the zygote what ``python -I -S main.py`` would be in its place;
    the setup memfd stays open (the caller closes it) so that a failure can still be reported."""
    req_fd, in_fd, out_fd, err_fd, setup_fd = fds[:5]
    os.setsid()
    if len(fds) > 5:
        os.write(fds[5], b"0")  # join the program's memory cgroup before touching anything
    os.dup2(in_fd, 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    req = marshal.loads(os.pread(req_fd, os.fstat(req_fd).st_size, 0))
    os.closerange(3, setup_fd)  # the zygote's socket and the other memfds included
    os.closerange(setup_fd + 1, 1 << 16)
    _signal.pthread_sigmask(signal.SIG_SETMASK, ())  # (signal's own wraps the answer in enums)
    cpu, mem, fsize, nproc = req["cpu"], req["mem"], req["fsize"], req["nproc"]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if mem >= 0:  # -1: the memory cgroup bounds the program instead
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.chdir(RUN)
    env = req["env"]
    environ = os.environ
    for key in list(environ):
        del environ[key]  # unsetenv too: what the program's own subprocesses inherit
    for key, value in env.items():
        environ[key] = value
    if "LC_ALL" not in env and "LC_CTYPE" not in env and "LANG" not in env:
        environ["LC_CTYPE"] = "C.UTF-8"  # what CPython's C-locale coercion adds (PEP 538)
    # sys.stdin/stdout/stderr: the zygote's own, built by CPython on memfds like these, unused.
    sys.argv = ["main.py"]
    if hasattr(sys, "orig_argv"):  # 3.10 on
        sys.orig_argv = [sys.executable, "-I", "-S", "main.py"]
    sys.path = list(_FRESH_PATH)
    main = _MODULE("__main__")
    d = main.__dict__
    d["__annotations__"] = {}
    d["__builtins__"] = builtins
    d["__file__"] = FILE
    d["__cached__"] = None
    d["__loader__"] = _SOURCE_LOADER("__main__", FILE)
    sys.modules["__main__"] = main
    fd = os.open(FILE, os.O_RDONLY | os.O_CLOEXEC)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    os.close(fd)
    if _PRCTL(*_DUMPABLE) != 0:  # as after an exec
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")
    gc.enable()
    if _PRCTL(*fprog) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")
    return main, b"".join(chunks), setup_fd


def _compile(source):
    nul = source.find(b"\0")
    if nul >= 0:  # CPython's file reader says so in its own words, at the line
        start = source.rfind(b"\n", 0, nul) + 1
        text = source[start:nul].decode("utf-8", "replace")
        raise SyntaxError("source code cannot contain null bytes", (FILE, source.count(b"\n", 0, nul) + 1, None, text))
    return compile(source, FILE, "exec", dont_inherit=True)


def _stderr_write(text):
    err = _getattr(sys, "stderr", None)
    if err is not None:
        err.write(text)
    else:
        _write(2, text.encode("utf-8", "backslashreplace"))


def _exit_status(exc):
    """What CPython exits with for an uncaught ``SystemExit`` (``_Py_HandleSystemExit``)."""
    code = _getattr(exc, "code", exc)
    if code is None:
        return 0
    if _isinstance(code, _int):
        return (code if -(1 << 63) <= code < 1 << 63 else -1) & 0xFF
    try:
        _stderr_write(_str(code))
        _stderr_write("\n")
    except _BaseException:  # as CPython: the status stands
        pass
    return 1


def _uncaught(exc, tb):
    """Report an exception that ended the program as ``PyErr_Print`` does; its exit status."""
    if _isinstance(exc, _SystemExit):
        return _exit_status(exc)
    exc.__traceback__ = tb
    sys.last_exc, sys.last_type, sys.last_value, sys.last_traceback = exc, _type(exc), exc, tb
    hook = _getattr(sys, "excepthook", None)
    if hook is None:
        _stderr_write("sys.excepthook is missing\n")
        _DEFAULT_EXCEPTHOOK(_type(exc), exc, tb)
    else:
        try:
            hook(_type(exc), exc, tb)
        except _SystemExit as stop:
            return _exit_status(stop)
        except _BaseException as exc2:
            tb2 = exc2.__traceback__ and exc2.__traceback__.tb_next  # from the hook down, without this frame
            exc2.__traceback__ = tb2
            _stderr_write("Error in sys.excepthook:\n")
            _DEFAULT_EXCEPTHOOK(_type(exc2), exc2, tb2)
            _stderr_write("\nOriginal exception was:\n")
            _DEFAULT_EXCEPTHOOK(_type(exc), exc, tb)
    return None if _isinstance(exc, _KeyboardInterrupt) else 1


def _flush_std(report=True):
    """Flush ``sys.stdout`` and ``sys.stderr`` as ``Py_FinalizeEx`` does; False if that failed.
    A failure of stdout is reported (as unraisable) the first time only, as CPython's is."""
    ok = True
    for name in ("stdout", "stderr"):
        stream = _getattr(sys, name, None)
        if stream is None:
            continue
        try:
            if _getattr(stream, "closed", False):
                continue
        except _BaseException:
            pass
        try:
            stream.flush()
        except _BaseException as exc:
            ok = False
            if name == "stdout" and report:
                hook = _getattr(sys, "unraisablehook", None)
                if hook is not None:
                    try:
                        hook(_UnraisableHookArgs((_type(exc), exc, None, None, stream)))
                    except _BaseException:
                        pass
    return ok


def _clear_module(d):
    """``_PyModule_ClearDict``: single-underscore names first, then all but ``__builtins__``."""
    for key in _list(d):
        if _isinstance(key, _str) and key[:1] == "_" and key[1:2] != "_" and d.get(key) is not None:
            d[key] = None
    for key in _list(d):
        if _isinstance(key, _str) and key != "__builtins__" and d.get(key) is not None:
            d[key] = None


def _finish(status, main):
    """What ``Py_FinalizeEx`` does that a program can observe, then exit."""
    try:
        threading_module = sys.modules.get("threading")
        if threading_module is not None:
            try:
                threading_module._shutdown()  # join the non-daemon threads
            except _BaseException as exc:
                _stderr_write(f"Exception ignored on threading shutdown: {exc!r}\n")
        _run_exitfuncs()
        if not _flush_std():
            status = 120
        if _gc_enabled():
            _collect()
        _clear_module(main.__dict__)
        if _gc_enabled():
            _collect()
        if not _flush_std(report=False):
            status = 120
        if status is None:  # an uncaught KeyboardInterrupt: die of SIGINT, as CPython does
            _set_handler(_SIGINT, _SIG_DFL)
            _kill(_getpid(), _SIGINT)
            status = 130
    except _BaseException:  # whatever happens here, the process ends now
        pass
    _os_exit(1 if status is None else status)


if __name__ == "__main__":
    _fds, _fprog = _serve(int(sys.argv[1]), _from_hex(sys.argv[2] if len(sys.argv) > 2 else ""))
    # -- from here on, a child: one program, then exit
    try:
        _main, _source, _setup = _child_setup(_fds, _fprog)
        os.close(_setup)  # from here on, what goes wrong is the program's
    except BaseException as _exc:  # noqa: BLE001 - a child that cannot start says why to its host, then exits
        try:
            os.write(_fds[4], f"could not start the program: {_exc!r}".encode("utf-8", "replace"))
        finally:
            os._exit(125)
    del _fds, _fprog, _setup
    _error = None
    try:
        _code = _compile(_source)
    except BaseException as _exc:  # noqa: BLE001 - a program that does not compile: reported with no frames
        _error, _tb = _exc, None
    else:
        del _source
        try:
            exec(_code, _main.__dict__)
        except BaseException as _exc:  # noqa: BLE001 - whatever the program raises is its result, reported below
            _error, _tb = _exc, _exc.__traceback__ and _exc.__traceback__.tb_next  # without this frame
    # Reported here, outside the handlers, so that nothing is "being handled" meanwhile (as in
    # CPython's PyErr_Print): an excepthook sees no sys.exc_info(), what it raises no context.
    if _error is None:
        _status = 0
        _main.__dict__.pop("__file__", None)
        _main.__dict__.pop("__cached__", None)
    else:
        _status = _uncaught(_error, _tb)
        if not isinstance(_error, SystemExit):  # CPython exits before it drops them then
            _main.__dict__.pop("__file__", None)
            _main.__dict__.pop("__cached__", None)
    del _error
    _finish(_status, _main)
