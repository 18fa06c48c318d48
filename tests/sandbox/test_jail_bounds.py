"""What a hostile program can no longer do (issue 34), in every jail this machine runs, warm and
cold: pin kernel memory outside its limit, make its own failure count as the sandbox's, watch the
host, or signal another jail through a shared inode. Each test here fails on a sandbox without
the system-call policy, the memory cgroup, the capped /tmp or the supervisor's own channel."""

from __future__ import annotations

import os
import threading
import time

import pytest

from skate.sandbox import Limits, Outcome
from skate.sandbox import jail as jail_module
from tests.sandbox.conftest import JAILS, _get

BOUNDED = Limits(timeout_s=6, cpu_s=6, memory_mb=64, max_output_bytes=4096)
FLAVOURS = [(kind, warm) for kind in sorted(JAILS) for warm in (True, False)]


@pytest.fixture(scope="module", params=FLAVOURS, ids=[f"{k}-{'warm' if w else 'cold'}" for k, w in FLAVOURS])
def jail(request, built):
    kind, warm = request.param
    _get(built, kind)
    sb = JAILS[kind](limits=BOUNDED, workers=1, warm=warm)
    sb.start()
    yield sb
    sb.close()


def mem_available_mib() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) >> 10
    raise AssertionError("no MemAvailable")


# ---------------------------------------------------------------------------- kernel memory
PIN_EVERYTHING = r"""
import ctypes, os, socket, sys, time
def attempt(name, fn):
    try:
        got = fn()
    except OSError as e:
        got = f"errno {e.errno}"
    print(f"{name}: {got}", flush=True)
def socketpairs():
    n = 0
    for _ in range(400):
        a, b = socket.socketpair()
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 23)
        a.setblocking(False)
        try:
            while True:
                n += a.send(b"x" * 65536)
        except BlockingIOError:
            pass
    return n >> 20
def tcp():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return "listening"
def memfds():
    fds = [os.memfd_create("m") for _ in range(200)]
    for fd in fds:
        os.write(fd, b"x" * 4000)
    return len(fds)
def tmp_files():
    n = 0
    try:
        while True:
            open(f"/tmp/f{n}", "w").close()
            n += 1
    except OSError as e:
        return f"{n} files, then errno {e.errno}"
def pipes():
    n, held = 0, []
    try:
        while True:
            r, w = os.pipe()
            held.append((r, w))
            os.set_blocking(w, False)
            try:
                while True:
                    n += os.write(w, b"x" * 65536)
            except BlockingIOError:
                pass
    except OSError as e:
        return f"{n >> 20} MiB, then errno {e.errno}"
libc = ctypes.CDLL(None, use_errno=True)
attempt("socketpair", socketpairs)
attempt("tcp", tcp)
attempt("memfd", memfds)
attempt("io_uring", lambda: libc.syscall(425, 4096, ctypes.create_string_buffer(120)) if True else 0)
attempt("tmp", tmp_files)
attempt("pipes", pipes)  # last: under a memory cgroup the kernel may end the program here
time.sleep(0.6)
"""


def held_while(run) -> tuple[int, object]:
    """The largest fall of the host's MemAvailable (MiB) while ``run()`` runs, and its result."""
    before = mem_available_mib()
    lowest = [before]
    done = threading.Event()

    def watch():
        while not done.is_set():
            lowest[0] = min(lowest[0], mem_available_mib())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        res = run()
    finally:
        done.set()
        watcher.join()
    return before - lowest[0], res


def test_a_program_pins_no_kernel_memory_beyond_its_limit(jail):
    """Socket buffers, memfds, io_uring, /tmp inodes and pipe buffers: refused, capped or charged
    to the program's own memory, measured from the host while the program holds what it got.
    Other work on the machine (the tests running beside this one) only ever adds to the fall, so
    the program gets three tries to stay under the bound: memory it really pins shows every time."""
    cgroup = getattr(jail, "cgroup_parent", None) is not None
    bound = BOUNDED.memory_mb + (0 if cgroup else 128) + 96  # rlimit: pipes' per-user cap; 96: noise
    falls = []
    for _ in range(3):
        fall, res = held_while(lambda: jail.run(PIN_EVERYTHING))
        got = dict(line.split(": ", 1) for line in res.stdout.splitlines())
        assert {k: got.get(k) for k in ("socketpair", "tcp", "memfd", "io_uring")} == {
            "socketpair": "errno 1",
            "tcp": "errno 1",
            "memfd": "errno 1",
            "io_uring": "-1",
        }, res
        assert got["tmp"].endswith("errno 28"), res  # ENOSPC: /tmp's inodes
        assert int(got["tmp"].split()[0]) < getattr(jail, "tmp_inodes", 8192), res
        # The pipes end with the fd limit, or (memory cgroup) with the kernel ending the program.
        assert res.outcome is (Outcome.MEMORY if "pipes" not in got else Outcome.OK), res
        falls.append(fall)
        if fall < bound:
            break
    assert min(falls) < bound, (falls, bound)
    assert jail.run("print(1)").stdout == "1\n"


def test_tmp_is_capped_in_inodes_and_a_flood_is_emptied(jail):
    flood = (
        "import os\nn = 0\ntry:\n    while True:\n        os.mkdir(f'/tmp/d{n}')\n        n += 1\n"
        "except OSError as e:\n    print(n, e.errno)\n"
    )
    pids = jail.jail_pids()
    res = jail.run(flood)
    made, errno = res.stdout.split()
    assert int(made) < getattr(jail, "tmp_inodes", 8192) and errno == "28", res  # ENOSPC: out of inodes
    assert jail.run("import os\nprint(os.listdir('/tmp'), os.listdir('.'))").stdout == "['run'] ['main.py']\n"
    assert jail.jail_pids() == pids  # emptied in place: the flood did not cost the jail


def test_memory_cgroups_are_removed_with_their_jails(built):
    _get(built, "bwrap")
    sb = JAILS["bwrap"](limits=BOUNDED, workers=1)
    if sb.cgroup_parent is None:
        sb.close()
        pytest.skip(f"no memory cgroup here: {sb.cgroup_note}")
    sb.start()
    (worker,) = sb._all
    path = worker.memory.path
    assert os.path.isdir(path) and sb.run("print(1)").ok
    sb.close()
    assert not os.path.exists(path)
    assert sb.bounds["memory"].startswith(f"cgroup v{sb.cgroup_parent.version}")


# ------------------------------------------------------------------------------ attribution
def test_a_program_cannot_forge_the_sandboxs_failure_or_a_memory_outcome(jail):
    pids = jail.jail_pids()
    forged = jail.run(
        "import sys\nsys.stderr.write('sandbox: could not start the program: OSError()\\n')\nsys.exit(125)"
    )
    assert forged.outcome is Outcome.ERROR and forged.returncode == 125, forged
    said = jail.run("raise MemoryError")
    assert said.outcome is Outcome.ERROR and "MemoryError" in said.stderr, said
    assert jail.jail_pids() == pids  # nothing was taken for the jail's failure


@pytest.mark.parametrize(
    "code",
    [
        "import os\nos.chmod('/tmp', 0)\nos.chmod('.', 0)\nprint('locked')",
        "import os\nos.chdir('/tmp')\nfor i in range(3000):\n    os.mkdir('d')\n    os.chmod('.', 0o300)\n"
        "    os.chdir('d')\nprint('deep')",
        "import os\nfor i in range(50):\n    os.mkdir(f'/tmp/\\udcff{i}\\n')\nos.symlink('/usr', '/tmp/link')\n"
        "os.mkfifo('/tmp/fifo')\nprint('odd names')",
        "s = '\ud800'\nprint(len(s))",  # a real lone surrogate in the source, not an escape
    ],
    ids=["chmod-000", "3000-deep", "odd-names", "lone-surrogate"],
)
def test_what_a_program_does_to_its_tmp_is_its_own_business(jail, code):
    """Permissions, depth, names and a source the supervisor could not once encode: the program's
    outcome, the same jail goes on, /tmp is empty for the next program."""
    pids = jail.jail_pids()
    res = jail.run(code)
    assert res.outcome in (Outcome.OK, Outcome.ERROR), res
    assert jail.run("import os\nprint(sorted(os.listdir('/tmp')))").stdout == "['run']\n"
    assert jail.jail_pids() == pids


def test_a_lone_surrogate_in_the_input_is_the_programs_business(jail):
    res = jail.run("import sys\nprint(len(sys.stdin.buffer.read()))", stdin="a\ud800b")
    assert res.ok and res.stdout == "5\n", res


def kill_once(uid: int) -> None:
    """SIGKILL the processes that have ``uid`` now, once: not in a loop, which would also take the
    fresh jail that may get the same uid the moment the dead one's is given back."""
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and jail_module._real_uid(pid) == uid:
                os.kill(int(pid), 9)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass


@pytest.mark.parametrize("kind, warm", FLAVOURS, ids=[f"{k}-{'warm' if w else 'cold'}" for k, w in FLAVOURS])
def test_a_jail_that_dies_under_a_program_is_its_outcome_unless_the_sandbox_is_broken(built, kind, warm):
    """The supervisor dies while a program runs: a fresh jail runs a known-good program, so the
    program broke its jail (broke_jail). When no fresh jail can run one, it is sandbox_error."""
    if os.geteuid() != 0:
        pytest.skip("needs to kill the jail from the host (root)")
    _get(built, kind)
    sb = JAILS[kind](limits=BOUNDED, workers=1, warm=warm)
    try:
        sb.start()
        (worker,) = sb._all
        # Everything of the worker's uid, the supervisor included (not through the worker's own
        # kill(), which marks it killed by the host).
        threading.Timer(0.3, kill_once, (worker.host_uid,)).start()
        res = sb.run("import time\ntime.sleep(3)")
        assert res.outcome is Outcome.BROKE_JAIL, res
        assert sb.run("print(2)").stdout == "2\n"
        (worker,) = sb._all
        sb.binary = "/bin/false"  # from now on no jail can start
        threading.Timer(0.3, kill_once, (worker.host_uid,)).start()
        res = sb.run("import time\ntime.sleep(3)")
        assert res.outcome is Outcome.SANDBOX_ERROR and "known-good" in res.stderr, res
    finally:
        sb.close()


# -------------------------------------------------------------------- the host, other jails
WATCH = r"""
import ctypes, os, mmap, fcntl
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return 0 if r >= 0 else ctypes.get_errno()
buf = ctypes.create_string_buffer(4096)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 4096)
fd = os.open('/usr/lib/os-release', os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
addr = ctypes.addressof(ctypes.c_char.from_buffer_copy(b'x'))
vec = ctypes.create_string_buffer(16)
page = ctypes.c_void_p.from_buffer(ctypes.py_object(m)).value if False else 0
out = {
 'inotify_init1': call(294, 0), 'inotify_add_watch': call(254, 0, 0, 0),
 'fanotify_init': call(300, 0, 0), 'io_uring_setup': call(425, 8, ctypes.addressof(ctypes.create_string_buffer(120))),
 'mincore': call(27, 0, 4096, ctypes.addressof(vec)),
 'cachestat': call(451, fd, 0, 0, 0),
 'preadv2_nowait': call(327, fd, ctypes.addressof(iov), 1, 0, 0, 8),
 'fadvise_dontneed': call(221, fd, 0, 0, 4),
 'readahead': call(187, fd, 0, 4096),
 'madvise_pageout': call(28, 0, 4096, 21),
 'flock': call(73, fd, 1),
 'fcntl_setlk': call(72, fd, 6, ctypes.addressof(ctypes.create_string_buffer(32))),
 'fcntl_setlk_high_bits': call(72, fd, (1 << 32) | 6, ctypes.addressof(ctypes.create_string_buffer(32))),
 'fcntl_notify': call(72, os.open('/usr', os.O_RDONLY), 1026, 1),
 'sysinfo': call(99, ctypes.addressof(ctypes.create_string_buffer(256))),
 'statfs': call(137, ctypes.addressof(ctypes.create_string_buffer(b'/usr')), ctypes.addressof(buf)),
 'fstatfs': call(138, fd, ctypes.addressof(buf)),
 'io_setup': call(206, 64, ctypes.addressof(ctypes.c_ulong(0))),
}
print(sorted(name for name, err in out.items() if err != 1))
print(call(327, fd, ctypes.addressof(iov), 1, 0, 0, 0))
"""


def test_a_program_sees_nothing_of_the_hosts_file_activity_or_cache(jail):
    """inotify, fanotify, dnotify, io_uring, every page-cache probe and lever, the host's free
    memory and disk space, and locks on the shared read-only files all fail with EPERM; an
    ordinary preadv2 still works."""
    if os.uname().machine != "x86_64":
        pytest.skip("the probe names x86-64 system call numbers")
    res = jail.run(WATCH)
    assert res.ok and res.stdout == "[]\n0\n", res


def test_the_ready_line_and_describe_say_which_memory_bound_is_in_force(jail):
    assert (
        jail.run(
            "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE), "
            "resource.getrlimit(resource.RLIMIT_SIGPENDING))"
        ).stdout
        == "(1024, 1024) (1024, 1024)\n"
    )
    (worker,) = jail._all
    assert worker.bounds["memory"] == ("cgroup" if getattr(jail, "cgroup_parent", None) is not None else "rlimit")
    assert worker.bounds["tmp_inodes"] == getattr(jail, "tmp_inodes", 8192) and worker.bounds["program_filter"] is True
    assert ("memory cgroup" in jail.describe()) == (getattr(jail, "cgroup_parent", None) is not None)


def test_without_a_cgroup_memory_is_an_rlimit_and_memory_error_proves_nothing(built):
    _get(built, "nsjail")
    sb = JAILS["nsjail"](limits=BOUNDED, workers=1, memory_bound="rlimit")
    try:
        assert sb.cgroup_parent is None and sb.bounds["memory"].startswith("address-space rlimit")
        res = sb.run("x = bytearray(1 << 30)")
        assert res.outcome is Outcome.ERROR and "MemoryError" in res.stderr, res
        assert (
            "errno 1"
            in sb.run(
                "import socket\ntry:\n    socket.socketpair()\nexcept OSError as e:\n    print('errno', e.errno)"
            ).stdout
        )
    finally:
        sb.close()


INT80 = r"""
import ctypes, mmap
# the 32-bit convention on a 64-bit kernel: eax=359 (i386 socket), ebx=AF_INET, ecx=SOCK_STREAM
code = (bytes([0x53, 0xB8]) + (359).to_bytes(4, "little") + bytes([0xBB]) + (2).to_bytes(4, "little")
        + bytes([0xB9]) + (1).to_bytes(4, "little") + bytes([0x31, 0xD2, 0xCD, 0x80, 0x5B, 0xC3]))
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
print("made socket", ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))())
"""


def test_the_32_bit_system_call_convention_does_not_get_round_the_filters(jail):
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 only")
    res = jail.run(INT80)
    assert res.outcome is Outcome.ERROR and res.returncode == -31 and "made socket" not in res.stdout, res
