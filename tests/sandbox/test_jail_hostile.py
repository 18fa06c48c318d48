"""Hostile programs against the hardened sandboxes: each is contained and classified, and the
host (this test process, its files, its network listeners, its other sandboxed programs) is
unaffected. The subprocess fallback is not a security boundary and is not tested here."""

from __future__ import annotations

import ast
import dataclasses
import os
import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from skate.sandbox import Limits, Outcome
from tests.conftest import QUICK

REPO = Path(__file__).resolve().parents[2]


def host_processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def still_works(sb) -> bool:
    res = sb.run("print('still here')")
    return res.ok and res.stdout == "still here\n"


def test_fork_bomb_is_contained(jail):
    marker = f"bomb-{uuid.uuid4().hex}"
    code = (
        "import os, sys\n"
        f"sys.argv.append({marker!r})\n"
        "while True:\n"
        "    try:\n"
        "        os.fork()\n"
        "    except OSError:\n"
        "        pass\n"
    )
    start = time.perf_counter()
    res = jail.run(code, QUICK)
    assert res.outcome is Outcome.TIMEOUT
    assert time.perf_counter() - start < QUICK.timeout_s + 5
    assert still_works(jail)


def test_process_count_is_limited(jail):
    code = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    for _ in range(200):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "except OSError:\n"
        "    pass\n"
        "print(n, flush=True)\n"
        "os._exit(0)\n"
    )
    res = jail.run(code)
    assert res.ok, res
    assert 1 <= int(res.stdout) < jail.limits.max_processes
    assert still_works(jail)


@pytest.mark.parametrize(
    "code",
    [
        "x = bytearray(8 * 1024 ** 3)",
        "chunks = []\nwhile True:\n    chunks.append(bytearray(10 ** 7))",
        "x = 'a' * (4 * 1024 ** 3)",
    ],
)
def test_memory_bomb_is_a_memory_outcome(jail, code):
    res = jail.run(code)
    assert res.outcome is Outcome.MEMORY, res
    assert still_works(jail)


def test_infinite_loop_is_a_timeout_on_time(jail):
    limits = dataclasses.replace(QUICK, timeout_s=0.8)  # the wall clock, before the CPU limit's 2 s
    start = time.perf_counter()
    res = jail.run("while True: pass", limits)
    elapsed = time.perf_counter() - start
    assert res.outcome is Outcome.TIMEOUT
    assert limits.timeout_s * 0.9 < elapsed < limits.timeout_s + 3


def test_sleeping_forever_is_a_timeout(jail):
    res = jail.run("import threading; threading.Event().wait()", Limits(timeout_s=0.5))
    assert res.outcome is Outcome.TIMEOUT


def test_huge_output_is_capped(jail):
    res = jail.run("import sys\nsys.stdout.write('x' * 50_000_000)")
    assert res.outcome is Outcome.OUTPUT_LIMIT
    assert len(res.stdout) == jail.limits.max_output_bytes
    flood = jail.run("import sys\nsys.stderr.write('e' * 50_000_000)\nprint('after')")
    assert len(flood.stderr) <= jail.limits.max_output_bytes


def test_host_environment_is_invisible(jail, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value")
    res = jail.run("import os\nprint(dict(os.environ))\nprint(os.environ.get('OPENAI_API_KEY'))")
    assert res.ok and "sk-test-secret-value" not in res.stdout
    assert res.stdout.splitlines()[-1] == "None"


def test_home_folder_is_unreadable(jail):
    home = Path.home()
    secret = home / f".skate-test-secret-{uuid.uuid4().hex}"
    secret.write_text("home-secret-content")
    try:
        res = jail.run(
            "import os, sys\n"
            f"try:\n    print(open({str(secret)!r}).read())\nexcept OSError as e:\n    print('denied', type(e).__name__)\n"
            f"try:\n    print(os.listdir({str(home)!r}))\nexcept OSError as e:\n    print('denied', type(e).__name__)\n"
        )
        assert res.ok
        assert "home-secret-content" not in res.stdout and secret.name not in res.stdout
        assert res.stdout.startswith("denied")
    finally:
        secret.unlink()


def test_project_folder_is_unreadable(jail):
    target = REPO / "pyproject.toml"
    res = jail.run(
        "import os\n"
        f"print(os.path.exists({str(target)!r}), os.path.exists({str(REPO)!r}))\n"
        f"print(open({str(target)!r}).read())\n"
    )
    assert res.outcome is Outcome.ERROR
    assert res.stdout == "False False\n" and "FileNotFoundError" in res.stderr


def test_writing_outside_the_temporary_folder_fails(jail):
    name = f"skate-hostile-{uuid.uuid4().hex}"
    targets = [
        f"/{name}",
        f"/usr/{name}",
        f"/usr/lib/{name}",
        f"/dev/{name}",
        f"/dev/shm/{name}",
        f"/var/tmp/{name}",
        f"{Path.home()}/{name}",
        f"{REPO}/{name}",
        f"{REPO}/skate/{name}",
        f"/etc/{name}",
    ]
    code = (
        "import os\n"
        f"targets = {targets!r}\n"
        "wrote = []\n"
        "for t in targets:\n"
        "    try:\n"
        "        os.makedirs(os.path.dirname(t), exist_ok=True)\n"
        "        with open(t, 'w') as f:\n"
        "            f.write('pwned')\n"
        "        wrote.append(t)\n"
        "    except OSError:\n"
        "        pass\n"
        "print(wrote)\n"
        "open('/tmp/allowed.txt', 'w').write('ok')\n"
        "print(open('/tmp/allowed.txt').read())\n"
    )
    res = jail.run(code)
    assert res.ok, res
    wrote, allowed = res.stdout.splitlines()
    # A path under /tmp on the host (a clone in /tmp, say) names the jail's own private /tmp.
    assert [t for t in ast.literal_eval(wrote) if not t.startswith("/tmp/")] == []
    assert allowed == "ok"
    for t in targets:
        assert not os.path.exists(t), t  # nothing reached the host


def test_no_network_not_even_the_hosts_loopback(jail):
    """No socket of any family can even be made (the jail's filter), so nothing reaches the
    host's listener; and the jail's network namespace has no interface but its loopback."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        res = jail.run(
            "import socket\n"
            "for family in ('AF_INET', 'AF_INET6', 'AF_UNIX', 'AF_NETLINK', 'AF_PACKET', 'AF_VSOCK'):\n"
            "    try:\n"
            "        socket.socket(getattr(socket, family), socket.SOCK_DGRAM if family == 'AF_NETLINK' else 0)\n"
            "        print(family, 'made')\n"
            "    except OSError as e:\n"
            "        print(family, type(e).__name__)\n"
            f"for addr in [('127.0.0.1', {port}), ('10.0.0.1', 80), ('1.1.1.1', 53)]:\n"
            "    try:\n"
            "        s = socket.create_connection(addr, timeout=0.5)\n"
            "        print('connected', addr)\n"
            "    except OSError as e:\n"
            "        print('refused', type(e).__name__)\n"
        )
        assert res.ok, res
        lines = res.stdout.splitlines()
        assert lines[:6] == [
            f"{f} PermissionError" for f in ("AF_INET", "AF_INET6", "AF_UNIX", "AF_NETLINK", "AF_PACKET", "AF_VSOCK")
        ], res.stdout
        assert "connected" not in res.stdout
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever reached the host's listener
    finally:
        listener.close()


def test_signalling_or_killing_the_parent_harms_nothing(jail):
    """Killing the parent, init and every process it can see leaves the host, the jail's
    supervisor and a program running next to it untouched."""
    code = (
        "import os, signal\n"
        "for target in (os.getppid(), 1, -1):\n"
        "    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):\n"
        "        try:\n"
        "            os.kill(target, sig)\n"
        "        except OSError:\n"
        "            pass\n"
        "try:\n"
        "    os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n"
        "except OSError:\n"
        "    pass\n"
        "print('survived')\n"
    )
    with ThreadPoolExecutor(2) as pool:
        neighbour = pool.submit(jail.run, "import time\ntime.sleep(1.0)\nprint('neighbour done')")
        time.sleep(0.2)
        res = pool.submit(jail.run, code).result()
        assert neighbour.result().stdout == "neighbour done\n"
    assert res.ok and res.stdout == "survived\n", res
    assert still_works(jail)


def test_tracing_and_new_namespaces_are_refused(jail):
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.ptrace(16, 1, 0, 0), ctypes.get_errno())\n"  # PTRACE_ATTACH to init
        "for flag in (os.CLONE_NEWUSER, os.CLONE_NEWNET, os.CLONE_NEWNS):\n"
        "    try:\n"
        "        os.unshare(flag)\n"
        "        print('unshared', flag)\n"
        "    except OSError as e:\n"
        "        print('refused', e.errno)\n"
    )
    res = jail.run(code)
    assert res.ok, res
    lines = res.stdout.splitlines()
    assert lines[0] == "-1 1"  # EPERM
    assert lines[1:] == ["refused 1"] * 3


def test_runs_as_an_unprivileged_user(jail):
    res = jail.run(
        "import os\nprint(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())\n"
        "print(open('/proc/self/status').read() if os.path.exists('/proc/self/status') else 'no proc')"
    )
    assert res.ok
    uid, euid, gid, *_ = res.stdout.split()
    assert int(uid) != 0 and int(euid) != 0 and int(gid) != 0
    if os.geteuid() == 0:
        assert int(uid) >= 700_000  # its own otherwise unused host uid


def test_reading_stdin_gets_end_of_file(jail):
    res = jail.run("import sys\nprint(repr(sys.stdin.read()))")
    assert res.ok and res.stdout == "''\n"
    assert jail.run("input('name? ')").outcome is Outcome.ERROR


@pytest.mark.parametrize(
    ("code", "outcome", "out"),
    [
        ("import sys\nprint('a')\nsys.exit()", Outcome.OK, "a\n"),
        ("import sys\nprint('a')\nsys.exit(4)", Outcome.ERROR, "a\n"),
        ("raise SystemExit('bye')", Outcome.ERROR, ""),
        ("import os\nprint('a', flush=True)\nos.abort()", Outcome.ERROR, "a\n"),
        # Killing itself is the program's own doing, not the CPU limit's hard stop.
        ("import os, signal\nprint('a', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)", Outcome.ERROR, "a\n"),
    ],
)
def test_exits_are_classified(jail, code, outcome, out):
    res = jail.run(code)
    assert res.outcome is outcome and res.stdout == out, res


@pytest.mark.parametrize(
    "code, unbounded",
    [
        ("def f(n):\n    return f(n + 1)\nf(0)", False),
        ("import sys\nsys.setrecursionlimit(10 ** 7)\ndef f(n):\n    return f(n + 1) + 1\nf(0)", True),
    ],
)
def test_deep_recursion_is_an_error(jail, code, unbounded):
    # Unwinding a million frames takes a while on a loaded machine: time is not what is tested.
    res = jail.run(code, Limits(timeout_s=15, cpu_s=15, max_output_bytes=4096))
    # Frames without a recursion limit fill the memory: under a memory cgroup the kernel kills the
    # program and says so (memory); under an rlimit it raises MemoryError, which proves nothing.
    memory = unbounded and getattr(jail, "cgroup_parent", None) is not None
    assert res.outcome is (Outcome.MEMORY if memory else Outcome.ERROR), res
    assert still_works(jail)


def test_no_process_outlives_its_program(jail):
    """A daemon that escapes its session is still killed when the program ends."""
    marker = f"straggler-{uuid.uuid4().hex}"
    code = (
        "import os, subprocess, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', {marker!r}],\n"
        "                     start_new_session=True)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "print('spawned')\n"
    )
    res = jail.run(code)
    assert res.ok and res.stdout == "spawned\n", res
    deadline = time.monotonic() + 5
    while host_processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert host_processes_with(marker) == []


def test_ipc_objects_are_refused_they_would_outlive_the_program(jail):
    """System V shared memory, message queues and semaphores, and POSIX message queues live in
    the jail's IPC namespace, past the program that made them: refused, so that no program can
    leave its flag there for the next."""
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "NR_MQ_OPEN = {'x86_64': 240, 'aarch64': 180}[os.uname().machine]\n"
        "calls = [lambda: libc.shmget(0x5ca7e, 4096, 0o1000 | 0o600),\n"
        "         lambda: libc.msgget(0x5ca7e, 0o1000 | 0o600),\n"
        "         lambda: libc.semget(0x5ca7e, 1, 0o1000 | 0o600),\n"
        "         lambda: libc.syscall(NR_MQ_OPEN, b'skateq', 0o100 | 2, 0o600, None)]\n"
        "for call in calls:\n"
        "    print(call(), ctypes.get_errno())\n"
    )
    res = jail.run(code)
    assert res.ok and res.stdout == "-1 1\n" * 4, res  # EPERM


def test_files_left_in_tmp_do_not_reach_the_next_program(jail):
    first = jail.run(
        "import os\nos.makedirs('/tmp/a/b', exist_ok=True)\nopen('/tmp/a/b/f', 'w').write('x')\n"
        "os.chmod('/tmp/a/b', 0)\nos.chmod('/tmp/a', 0)\nprint('ok')"
    )
    assert first.ok
    second = jail.run("import os\nprint(sorted(os.listdir('/tmp')))")
    assert second.ok and second.stdout == "['run']\n"


def test_filling_the_temporary_folder_stops_at_its_size(jail):
    code = (
        "with open('/tmp/fill', 'wb') as f:\n"
        "    for _ in range(1000):\n"
        "        f.write(b'x' * 1_000_000)\n"
        "        f.flush()\n"
    )
    # Lift the file-size cap so that the size of the private /tmp is what stops it.
    res = jail.run(code, Limits(max_output_bytes=1 << 30, timeout_s=10))
    assert res.outcome is Outcome.ERROR and "No space left on device" in res.stderr, res
    assert still_works(jail)
