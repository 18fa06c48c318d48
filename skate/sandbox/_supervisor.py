"""The supervisor that runs as PID 1 inside a jail and executes one program at a time.

This file is not imported by the host: its source text is passed to ``python -I -S -c`` as the
jail's command (only the standard library is available inside). It reads one JSON request per
line on stdin and writes one JSON reply per line on stdout:

    request: {"code": str, "stdin": str, "env": {name: value}, "timeout": s, "cpu": s, "mem": bytes, "fsize": bytes, "nproc": n}
    reply:   {"rc": int | null, "timed_out": bool, "cpu_s": float, "out": str, "out_bytes": int, "err": str,
              "clean": bool}   or   {"ready": true, ...} once at start, {"fatal": str} on a bug.

For each program it makes a fresh working folder, forks a child that applies the rlimits, points
stdin at an in-memory file holding the request's input, stdout/stderr at in-memory files, and
execs a fresh ``python -I -S main.py`` with only the request's environment variables. Afterwards it kills every process left in the jail (as the
namespace's init it can, and the kernel shields it from its children's signals), reaps them,
and wipes the temporary folder. The jail's ``argv``: ``PYTHON UID GID`` (UID/GID -1 = keep).
"""

import json
import os
import resource
import select
import shutil
import signal
import sys
import time

TMP = "/tmp"
RUN = "/tmp/run"


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
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2,
                signal.SIGQUIT, signal.SIGALRM, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
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


def _child(python, req, out_fd, err_fd, stdin_fd):
    try:
        os.setsid()
        os.dup2(stdin_fd, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.closerange(3, 1 << 16)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2,
                    signal.SIGQUIT, signal.SIGALRM, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU,
                    signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        cpu, mem, fsize, nproc = req["cpu"], req["mem"], req["fsize"], req["nproc"]
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.chdir(RUN)
        os.execve(python, [python, "-I", "-S", "main.py"], req.get("env") or {})
    except BaseException as exc:  # noqa: BLE001 - report and die without unwinding into the loop
        try:
            os.write(2, f"sandbox: could not start the program: {exc!r}\n".encode())
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


def _wipe_tmp():
    """Empty /tmp, even of folders a program made unreadable; True when it is empty."""
    for root, dirs, _files in os.walk(TMP):  # top-down: unlock each folder before entering it
        for d in dirs:
            path = os.path.join(root, d)
            try:
                if not os.path.islink(path):
                    os.chmod(path, 0o700)
            except OSError:
                pass
    for entry in os.scandir(TMP):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
    return not os.listdir(TMP)


def _read_back(fd, cap):
    size = os.fstat(fd).st_size
    data = os.pread(fd, cap, 0) if size else b""
    os.close(fd)
    return data, size


def _run_one(python, req):
    os.mkdir(RUN, 0o700)
    with open(os.path.join(RUN, "main.py"), "w", encoding="utf-8") as f:
        f.write(req["code"])
    out_fd, err_fd = _anon_file("stdout"), _anon_file("stderr")
    stdin_r = _anon_file("stdin")
    given = req.get("stdin") or ""
    if given:
        os.write(stdin_r, given.encode("utf-8", "surrogateescape"))
        os.lseek(stdin_r, 0, os.SEEK_SET)
    pid = os.fork()
    if pid == 0:
        _child(python, req, out_fd, err_fd, stdin_r)
    os.close(stdin_r)
    pidfd = os.pidfd_open(pid)
    deadline = time.monotonic() + req["timeout"]
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
    rc = os.waitstatus_to_exitcode(status)
    cpu_used = usage.ru_utime + usage.ru_stime
    _reap_all()
    cap = req["fsize"]
    out, out_bytes = _read_back(out_fd, cap)
    err, _ = _read_back(err_fd, cap)
    clean = _wipe_tmp()
    return {"rc": rc, "timed_out": timed_out, "cpu_s": cpu_used, "out": out.decode("utf-8", "replace"),
            "out_bytes": out_bytes, "err": err.decode("utf-8", "replace"), "clean": clean}


def main():
    python, uid, gid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    _drop_privileges(uid, gid)
    _shield_self()
    os.umask(0o077)
    _wipe_tmp()
    reply = sys.stdout
    reply.write(json.dumps({"ready": True, "uid": os.getuid(), "pid": os.getpid(),
                            "python": python}) + "\n")
    reply.flush()
    for line in sys.stdin:
        try:
            result = _run_one(python, json.loads(line))
        except Exception as exc:  # noqa: BLE001 - the host classifies this as a sandbox error
            _reap_all()
            result = {"fatal": f"{type(exc).__name__}: {exc}"}
            reply.write(json.dumps(result) + "\n")
            reply.flush()
            return 3
        reply.write(json.dumps(result) + "\n")
        reply.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
