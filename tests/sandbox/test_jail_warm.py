"""Warm jails (``sandbox.warm``, the default): each program is a fresh child of a clean zygote.

Checked for every jail this machine runs, with one worker so that consecutive programs share a
jail (and, two programs in a row, both of its zygotes): nothing a program does reaches the next
one, not even in memory; programs cannot reach the zygotes or the supervisor; a program behaves
as in the fresh ``python -I -S`` of ``sandbox.warm=false``, save for the few differences
docs/sandbox.md owns up to, which are pinned here too.
"""

from __future__ import annotations

import re

import pytest

from skate.sandbox import Limits, Outcome
from skate.sandbox import jail as jail_module
from tests.conftest import QUICK, TEST_LIMITS
from tests.sandbox.conftest import JAILS, _get


@pytest.fixture(scope="module", params=sorted(JAILS))
def pair(request, built):
    """(warm, cold) sandboxes of one kind, one worker each."""
    _get(built, request.param)
    cls = JAILS[request.param]
    warm, cold = cls(limits=TEST_LIMITS, workers=1), cls(limits=TEST_LIMITS, workers=1, warm=False)
    warm.start()
    cold.start()
    yield warm, cold
    warm.close()
    cold.close()


def only_worker(sb):
    (worker,) = sb._all
    return worker


def test_the_jails_run_warm_or_cold_as_asked(pair):
    warm, cold = pair
    assert only_worker(warm).warm and not only_worker(cold).warm
    probe = "import sys\nprint('json' in sys.modules, sys.orig_argv[1:])"
    assert warm.run(probe).stdout == "True ['-I', '-S', 'main.py']\n"  # preloaded by the zygote
    assert cold.run(probe).stdout == "False ['-I', '-S', 'main.py']\n"
    assert "warm start" in warm.describe() and "cold start" in cold.describe()


# -------------------------------------------------------------------------- nothing survives
MUTATE = r"""
import atexit, builtins, gc, os, random, resource, signal, sys, threading, time, warnings
import json, re
builtins.len = lambda x: 42
builtins.injected = True
del builtins.sorted
sys.modules['json'] = None
sys.modules['evil'] = type(sys)('evil')
re.compile = None
os.environ['LEAK'] = 'x'
os.putenv('LEAK_C', 'y')
os.environ.pop('LC_CTYPE')
signal.signal(signal.SIGTERM, lambda *a: None)
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
fds = [os.open('/dev/null', os.O_RDONLY) for _ in range(5)]
for fd in fds:
    os.set_inheritable(fd, True)
os.dup2(1, 60)
os.chdir('/tmp')
open('/tmp/left-behind', 'w').write('x')
sys.path.insert(0, '/tmp/evil')
random.seed(42)
sys.setrecursionlimit(77)
sys.excepthook = lambda *a: None
atexit.register(os.write, 1, b'ATEXIT-LEAK\n')
os.umask(0)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
os.nice(3)
gc.disable()
warnings.simplefilter('error')
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
sys.settrace(lambda *a: None)
sys._getframe(1).f_globals['PRELOADED'] = ('evil',)  # the zygote's globals, in this child
os.write(1, b'mutated\n')
"""

CHECK = r"""
import builtins, gc, os, resource, signal, subprocess, sys, warnings
import random, threading

def fds():
    out = []
    for fd in range(256):
        try:
            os.fstat(fd)
            out.append(fd)
        except OSError:
            pass
    return out

umask = os.umask(0o077)
env_c = subprocess.run(['/usr/bin/env'], capture_output=True, text=True).stdout.split()
print({
    'builtins': sorted(dir(builtins)), 'len': len([1, 2]),
    'modules': sorted(k for k in sys.modules if k not in ('random', 'subprocess', 'threading')
                      and not k.startswith(('_random', '_sha', 'bisect', 'selectors', 'signal',
                                            'errno', 'fcntl', '_posixsubprocess', 'select',
                                            'locale', 'hashlib', '_hashlib', '_blake2', 'weakref',
                                            '_weakrefset', '_bisect', 'contextlib'))),
    're': callable(__import__('re').compile), 'environ': dict(os.environ), 'environ_c': env_c,
    'signals': {int(s): str(signal.getsignal(s)) for s in signal.valid_signals()
                if s not in (signal.SIGKILL, signal.SIGSTOP)},
    'mask': sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])), 'fds': fds(),
    'cwd': os.getcwd(), 'tmp': sorted(os.listdir('/tmp')), 'here': sorted(os.listdir('.')),
    'path': sys.path, 'seeded': random.random() == random.Random(42).random(),
    'limit': sys.getrecursionlimit(), 'hook': sys.excepthook is sys.__excepthook__,
    'umask': oct(umask), 'nofile': resource.getrlimit(resource.RLIMIT_NOFILE),
    'nice': os.nice(0), 'gc': gc.isenabled(), 'warnings': len(warnings.filters),
    'threads': threading.active_count(), 'trace': sys.gettrace(), 'argv': sys.argv,
    'name': __name__, 'globals': sorted(globals()), 'ppid': os.getppid(),
    'leader': os.getpgrp() == os.getpid() == os.getsid(0),
})
"""


def test_nothing_a_program_does_survives_into_the_next(pair):
    """Builtins, modules, environment, signals, fds, working folder, sys.path, random state,
    limits, threads, hooks and the zygote's own globals, changed by one program, are as
    before in the programs that follow in the same jail (from either zygote)."""
    warm, _ = pair
    roomy = Limits(timeout_s=10, cpu_s=5, max_output_bytes=1 << 16)
    before = [warm.run(CHECK, roomy) for _ in range(2)]
    mutated = [warm.run(MUTATE, roomy) for _ in range(2)]
    after = [warm.run(CHECK, roomy) for _ in range(2)]
    for res in mutated:
        assert res.ok and res.stdout == "mutated\nATEXIT-LEAK\n", res  # its atexit ran, at its end
    for res in before + after:
        assert res.ok and "ATEXIT-LEAK" not in res.stdout, res
    assert before[0].stdout == before[1].stdout == after[0].stdout == after[1].stdout
    seen = eval(after[0].stdout)  # our own program's repr
    assert seen["len"] == 2 and "injected" not in seen["builtins"] and "sorted" in seen["builtins"]
    assert "json" in seen["modules"] and "evil" not in seen["modules"] and seen["re"]
    assert seen["environ"] == {"LC_CTYPE": "C.UTF-8"} and seen["environ_c"] == ["LC_CTYPE=C.UTF-8"]
    assert seen["signals"][2] == str(__import__("signal").default_int_handler)  # SIGINT
    assert seen["signals"][15] == str(__import__("signal").SIG_DFL) and seen["mask"] == []  # SIGTERM
    assert seen["fds"] == [0, 1, 2] and seen["cwd"] == "/tmp/run" and seen["tmp"] == ["run"]
    assert seen["here"] == ["main.py"] and not any("evil" in p for p in seen["path"])
    assert not seen["seeded"] and seen["limit"] == 1000 and seen["hook"]
    assert seen["umask"] == "0o77" and seen["nofile"][0] > 64 and seen["gc"]
    assert seen["threads"] == 1 and seen["trace"] is None and seen["argv"] == ["main.py"]
    assert seen["ppid"] == 1 and seen["leader"]


def test_random_state_differs_between_programs(pair):
    warm, _ = pair
    draws = {warm.run("import random\nprint(random.getrandbits(64))").stdout for _ in range(4)}
    assert len(draws) == 4


# --------------------------------------------------------------------------------- fidelity
FIDELITY = {
    "print": "print(6 * 7, 'naïve → 水')",
    "traceback": "def f():\n    g()\ndef g():\n    try:\n        {}['k']\n    except KeyError as e:\n"
    "        raise ValueError('v') from e\nf()",
    "syntax": "def f(:\n    pass",
    "indent": "if True:\nprint(1)",
    "nul": "x = 1\0\n",
    "exit": "import sys\nprint('a')\nsys.exit()",
    "exit3": "import sys\nsys.exit(3)",
    "exit300": "import sys\nsys.exit(300)",
    "exit-1": "raise SystemExit(-1)",
    "exit-msg": "import sys\nsys.exit('bad input')",
    "exit-true": "import sys\nsys.exit(True)",
    "os-exit": "import os\nprint('x', flush=True)\nos._exit(7)",
    "abort": "import os\nos.abort()",
    "keyboard": "raise KeyboardInterrupt",
    "hook": "import sys\nsys.excepthook = lambda t, v, tb: print('hooked', t.__name__, sys.exc_info())\n1 / 0",
    "hook-raises": "import sys\ndef h(t, v, tb):\n    raise ValueError('in hook')\nsys.excepthook = h\n1 / 0",
    "hook-exits": "import sys\ndef h(t, v, tb):\n    sys.exit(5)\nsys.excepthook = h\n1 / 0",
    "hook-missing": "import sys\ndel sys.excepthook\n1 / 0",
    "atexit": "import atexit\natexit.register(print, 'first')\natexit.register(lambda: 1 / 0)\n"
    "atexit.register(print, 'second')\nprint('main')",
    "atexit-after-error": "import atexit\natexit.register(print, 'cleanup')\nraise RuntimeError('x')",
    "del": "class D:\n    def __del__(self):\n        print('del ran')\nd = D()\nprint('main')",
    "unflushed": "f = open(1, 'w', closefd=False)\nf.write('unflushed')",
    "thread": "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.2), print('thread done')))"
    ".start()\nprint('main done')",
    "atexit-empty": "import atexit, sys\nprint(atexit._ncallbacks(), 'threading' in sys.modules)",
    "daemon": "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.5), print('no')), "
    "daemon=True).start()\nprint('main done')",
    "flush-at-exit-fails": "for _ in range(50):\n    print('x' * 99)",
    "input": "print(input('name? '))\nprint(input())",
    "warn": "import warnings\nwarnings.warn('careful')",
    "memory": "x = bytearray(2 * 1024 ** 3)",
    "main": "import sys\nprint(sorted(globals()), __name__, __loader__.__class__.__name__, __spec__, "
    "__package__, __cached__, __file__, sys.argv, sys.orig_argv[1:], "
    "sys.executable == sys.orig_argv[0], sys.path, sys.flags)",
    "file-gone-at-exit": "import atexit\natexit.register(lambda: print('__file__' in globals()))",
    "environ": "import os, subprocess\nprint(dict(os.environ))\n"
    "print(subprocess.run(['/usr/bin/env'], capture_output=True, text=True).stdout)",
    "stdio": "import sys\nfor s in (sys.stdin, sys.stdout, sys.stderr):\n    print(s.name, s.mode, s.encoding, "
    "s.errors, s.line_buffering, s.write_through, s.seekable(), s.isatty(), s.newlines, "
    "s.buffer.raw.name, type(s.buffer).__name__, s is getattr(sys, '__%s__' % s.name[1:-1]))",
    "signals": "import signal\nprint({int(s): str(signal.getsignal(s)) for s in signal.valid_signals() "
    "if s not in (9, 19)}, signal.pthread_sigmask(signal.SIG_BLOCK, []))",
    "process": "import os, resource\nprint(os.getppid(), os.getpgrp() == os.getpid() == os.getsid(0), "
    "oct(os.umask(0)), os.getcwd(), sorted(os.listdir('.')), [resource.getrlimit(getattr("
    "resource, 'RLIMIT_' + n)) for n in ('CPU', 'AS', 'FSIZE', 'CORE', 'NOFILE')])",
    "fds": "import os\nout = []\nfor fd in range(64):\n    try:\n        os.fstat(fd)\n"
    "        out.append(fd)\n    except OSError:\n        pass\nprint(out)",
    "subprocess": "import subprocess, sys\nprint(subprocess.run([sys.executable, '-c', 'import os; "
    "print(os.getcwd())'], capture_output=True, text=True).stdout.strip())",
}


def normalised(res):
    text = lambda s: re.sub(r"0x[0-9a-f]+", "0x?", s)  # noqa: E731 - object addresses differ
    return res.outcome, text(res.stdout), text(res.stderr), res.returncode


@pytest.mark.parametrize("name", sorted(FIDELITY))
def test_a_program_behaves_as_in_a_fresh_interpreter(pair, name):
    """Output, tracebacks, exit status and what the program sees of its interpreter match the
    cold path's fresh ``python -I -S main.py``."""
    warm, cold = pair
    code = FIDELITY[name]
    kw = {"stdin": "Ada\n", "env": {"FLAG": "skate{f}"}}
    assert normalised(warm.run(code, **kw)) == normalised(cold.run(code, **kw))


def test_what_differs_from_a_fresh_interpreter(pair):
    """The differences docs/sandbox.md owns up to, pinned so that the page stays true."""
    warm, cold = pair
    # One frame (the zygote's) below the program's: what walks the stack sees it, and the
    # recursion limit is reached one call earlier.
    frame = "import sys\nprint(sys._getframe().f_back is None)"
    assert (warm.run(frame).stdout, cold.run(frame).stdout) == ("False\n", "True\n")
    depth = "def f(n):\n    try:\n        return f(n + 1)\n    except RecursionError:\n        return n\nprint(f(0))"
    assert int(warm.run(depth).stdout) == int(cold.run(depth).stdout) - 1
    # setsid/setpgid succeed without effect (the program's processes stay in its group), also
    # where they fail in a fresh interpreter: in the program's process, already a group leader.
    setsid = "import os\ntry:\n    os.setsid()\n    print('ok')\nexcept OSError as e:\n    print(e.errno)"
    assert (warm.run(setsid).stdout, cold.run(setsid).stdout) == ("ok\n", "1\n")
    # RLIMIT_NPROC counts the two zygotes too: the same number of processes for the program.
    nproc = "import resource\nprint(resource.getrlimit(resource.RLIMIT_NPROC)[0])"
    assert int(warm.run(nproc).stdout) == int(cold.run(nproc).stdout) + 2
    # kill(-1) is refused (EPERM): it would reach the zygotes. (In a fresh interpreter it reaches
    # the program's other processes, here none: ESRCH.)
    kill_all = "import os\ntry:\n    os.kill(-1, 0)\n    print('ok')\nexcept OSError as e:\n    print(e.errno)"
    assert (warm.run(kill_all).stdout, cold.run(kill_all).stdout) == ("1\n", "3\n")


def test_hash_seeds_alternate_between_the_two_zygotes(pair):
    """A program run twice in a row in one jail sees two hash seeds (and address layouts): a
    rerun still catches output that depends on them."""
    warm, _ = pair
    outs = [warm.run("print(hash('skate'), id(object()))").stdout for _ in range(4)]
    assert outs[0] != outs[1] and outs[1] != outs[2]


def test_limits_and_outcomes_hold(pair):
    warm, _ = pair
    assert warm.run("while True: pass", QUICK).outcome is Outcome.TIMEOUT
    assert warm.run("x = bytearray(2 * 1024 ** 3)").outcome is Outcome.MEMORY
    assert warm.run("print('a' * 100_000)").outcome is Outcome.OUTPUT_LIMIT
    res = warm.run(
        "import os, time\nfor _ in range(3):\n    if os.fork() == 0:\n        time.sleep(60)\nprint('forked')"
    )
    assert res.ok and warm.run("print(1)").ok  # its sleepers were swept with it


# ----------------------------------------------------------------------------------- hostile
ATTACK = r"""
import ctypes, fcntl, os, resource, signal, socket
me = os.getpid()
libc = ctypes.CDLL(None, use_errno=True)
syscall = libc.syscall
syscall.restype = ctypes.c_long
NR = {'x86_64': dict(tkill=200, tgkill=234, kill=62),
      'aarch64': dict(tkill=130, tgkill=131, kill=129)}[os.uname().machine]
got = []

def attempt(what, call):
    try:
        r = call()
    except OSError:
        return
    if not (isinstance(r, int) and r < 0):
        got.append(what)

L = ctypes.c_long
for p in range(1, 40):
    if p == me:
        continue
    attempt(f'kill {p}', lambda: os.kill(p, signal.SIGKILL) if p != 1 else -1)
    attempt(f'killpg {p}', lambda: os.killpg(p, signal.SIGKILL) if p != 1 else -1)
    attempt(f'pidfd {p}', lambda: os.pidfd_open(p))
    attempt(f'prlimit {p}', lambda: resource.prlimit(p, resource.RLIMIT_NPROC, (0, 0)))
    attempt(f'affinity {p}', lambda: os.sched_setaffinity(p, {0}))
    attempt(f'nice {p}', lambda: os.setpriority(os.PRIO_PROCESS, p, 19))
    attempt(f'nice-group {p}', lambda: os.setpriority(os.PRIO_PGRP, p, 19))
    attempt(f'tkill {p}', lambda: syscall(L(NR['tkill']), L(p), L(signal.SIGKILL)))
    attempt(f'tgkill {p}', lambda: syscall(L(NR['tgkill']), L(p), L(p), L(signal.SIGKILL)))
    attempt(f'kill-high-bits {p}', lambda: syscall(L(NR['kill']), L((1 << 32) | p), L(signal.SIGKILL)))
attempt('kill -1', lambda: os.kill(-1, signal.SIGKILL))
attempt('nice-user', lambda: os.setpriority(os.PRIO_USER, 0, 19))
s, _ = os.pipe()
attempt('F_SETOWN', lambda: fcntl.fcntl(s, fcntl.F_SETOWN, 2))
attempt('FIOSETOWN', lambda: fcntl.ioctl(s, 0x8901, b'\x02\x00\x00\x00'))
attempt('own limits', lambda: resource.prlimit(0, resource.RLIMIT_CORE, (0, 0)))
print(sorted(got))
"""


def test_a_program_cannot_reach_the_zygotes_or_the_supervisor(pair):
    """Signals (in every form), pidfds, rlimits, priorities and affinities aimed at any other
    process of the jail are refused; the jail goes on, unreplaced, at full speed."""
    warm, _ = pair
    jail_pid = warm.jail_pids()
    res = warm.run(ATTACK, Limits(timeout_s=20, cpu_s=20))
    assert res.ok, res
    assert res.stdout == "['own limits']\n"
    probe = "import os\nprint(os.getppid(), sorted(os.sched_getaffinity(0)) == sorted(range(os.cpu_count())))"
    for _ in range(2):
        assert warm.run(probe).stdout == "1 True\n"
    assert warm.jail_pids() == jail_pid


def test_a_zygote_that_dies_costs_nothing_and_the_jail_is_replaced(pair):
    """Killed from outside the jail (nothing inside can): the run it was due to fork fails
    before the program starts, so it runs again on a new jail: no run is lost or blamed."""
    import os
    import signal

    warm, _ = pair
    if os.geteuid() != 0:
        pytest.skip("needs to signal the jail's zygotes from the host (root)")
    before = warm.jail_pids()
    assert warm.run("print(1)").ok
    zygote = None
    for entry in os.listdir("/proc"):
        try:  # python -I -S -c ZYGOTE_SOURCE FD, inside this jail
            argv = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if argv[3:4] == [b"-c"] and argv[4].startswith(b'"""The zygote') and _in_jail(int(entry), before):
            zygote = int(entry)
    assert zygote is not None
    os.kill(zygote, signal.SIGKILL)
    runs = [warm.run("print(2)") for _ in range(2)]  # one of them is its turn
    assert [(r.outcome, r.stdout) for r in runs] == [(Outcome.OK, "2\n")] * 2, runs
    assert warm.run("print(3)").stdout == "3\n" and warm.jail_pids() != before


def _in_jail(pid, jail_pids):
    """Whether ``pid`` descends from one of ``jail_pids``."""
    while pid > 1:
        if pid in jail_pids:
            return True
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return False


SCAN = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
libc.write.restype = ctypes.c_ssize_t
PAGE, SPAN = 4096, 1 << 26
vec = (ctypes.c_ubyte * 1)()
r_end, w_end = os.pipe()
buf = ctypes.create_string_buffer(64)
seen, chunks = set(), []
for anchor in (id(None), id(sys), id(os.environ), ctypes.addressof(buf), id(b'y' * 300000)):
    base = (anchor - SPAN // 2) & ~(PAGE - 1)
    for page in range(max(base, PAGE), base + SPAN, PAGE):
        if page in seen:
            continue
        seen.add(page)
        if libc.write(w_end, page, PAGE) == PAGE:  # the kernel reads it: EFAULT if unmapped, not a crash
            chunks.append(os.read(r_end, PAGE))
memory = b''.join(chunks)
print(len(memory) >> 20, [s for s in sys.stdin.read().split('|') if s.encode() in memory])
"""


def test_no_secret_of_a_program_is_in_the_next_ones_memory(pair):
    """The zygote never holds a program's code, input, environment or output, so a program that
    reads its whole heap finds none of an earlier program's. Controls: it does find its own flag,
    and the zygote's docstrings (memory it inherits)."""
    warm, _ = pair
    secrets = ["skate{flag-Q7ZRW3}", "input-K8VX2M", "code-P4NL9T", "output-H2JD6Y"]
    leak = f"import os, sys\ns = '{secrets[2]}'\nprint('{secrets[3]}', sys.stdin.read(), os.environ['FLAG'], s)"
    first = warm.run(leak, stdin=secrets[1], env={"FLAG": secrets[0]})
    assert first.ok and all(s in first.stdout for s in secrets)
    inherited = "Make this fresh child of the zygote"
    roomy = Limits(timeout_s=20, cpu_s=20, memory_mb=512)
    for _ in range(2):  # both zygotes
        res = warm.run(SCAN, roomy, stdin="|".join(secrets + [inherited]))
        assert res.ok, res
        mib, found = res.stdout.split(" ", 1)
        assert int(mib) >= 10 and found == f"{[inherited]}\n"
    own = warm.run(SCAN, roomy, stdin="skate{own-flag}", env={"FLAG": "skate{own-flag}"})
    assert own.stdout.endswith("['skate{own-flag}']\n")


# ------------------------------------------------------------------------- cold where it must
def test_an_environment_the_interpreter_reads_at_start_runs_cold(pair):
    """A locale or time zone is read when an interpreter starts, so such a program gets one of its
    own; the jail then goes back to its zygotes."""
    warm, cold = pair
    probe = "import os, sys, time\nprint('json' in sys.modules, os.environ.get('LC_CTYPE'), time.tzname)"
    for env in ({"TZ": "Asia/Tokyo"}, {"LANG": "C.UTF-8"}):
        assert warm.run(probe, env=env).stdout == cold.run(probe, env=env).stdout
        assert warm.run(probe, env=env).stdout.startswith("False")
    assert warm.run(probe).stdout.startswith("True")
    assert only_worker(warm).warm


def test_zygotes_that_cannot_start_leave_the_jail_cold_and_it_says_so(built, monkeypatch, caplog):
    name = next((n for n in sorted(JAILS) if not isinstance(built[n], str)), None)
    if name is None:
        pytest.skip("needs a jail")
    monkeypatch.setattr(jail_module, "ZYGOTE", "raise SystemExit('no zygote today')")
    sb = JAILS[name](limits=TEST_LIMITS, workers=1)
    try:
        res = sb.run("import sys\nprint('json' in sys.modules)")
        assert res.ok and res.stdout == "False\n"
        worker = only_worker(sb)
        assert not worker.warm and "no zygote today" in worker.warm_error
    finally:
        sb.close()
    assert "runs every program cold" in caplog.text


def test_the_zygotes_syscall_tables_are_libseccomps():
    import pyseccomp as sc

    from skate.sandbox import _zygote

    arch = sc.system_arch()
    machine = __import__("os").uname().machine
    if machine not in _zygote.ARCHES:
        pytest.skip(f"no zygote table for {machine}: warm jails run cold here")
    _, table = _zygote.ARCHES[machine]
    assert {name: sc.resolve_syscall(arch, name) for name in table} == table


def test_sandbox_warm_is_a_config_key():
    import skate

    assert skate.SkateConfig().sandbox.warm is True
    for choice in ("nsjail", "bwrap", "auto"):
        assert skate.preset(choice, "sandbox", values={"warm": False}).warm is False
