"""Jail infrastructure: choosing a sandbox, start-up failures, broken workers, uids, the CLI."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from skate.sandbox import AutoSandbox, BwrapSandbox, NsjailSandbox, Outcome, SandboxUnavailable, auto
from skate.sandbox.jail import UidSlots
from tests.conftest import TEST_LIMITS

REPO = Path(__file__).resolve().parents[2]


def test_auto_prefers_the_first_jail_that_works(built, caplog):
    if any(isinstance(built[n], str) for n in ("nsjail", "bwrap")):
        pytest.skip("needs both jails")
    caplog.set_level("INFO")
    for prefer in (["nsjail", "bwrap"], ["bwrap", "nsjail"]):
        sb = AutoSandbox(limits=TEST_LIMITS, workers=1, prefer=prefer)
        try:
            assert sb.name == prefer[0] and sb.isolated
        finally:
            sb.close()
    assert "sandbox=auto chose bwrap" in caplog.text


def test_auto_passes_over_a_jail_that_cannot_start(built, monkeypatch, caplog):
    if isinstance(built["bwrap"], str):
        pytest.skip("needs bwrap")
    caplog.set_level("INFO")
    monkeypatch.setitem(auto.JAILS, "nsjail", functools.partial(NsjailSandbox, binary="/bin/false"))
    sb = AutoSandbox(limits=TEST_LIMITS, workers=1)
    try:
        assert sb.name == "bwrap"
    finally:
        sb.close()
    assert "passed over: nsjail" in caplog.text


def test_auto_never_falls_back_to_the_unisolated_sandbox(monkeypatch):
    monkeypatch.setitem(auto.JAILS, "nsjail", functools.partial(NsjailSandbox, binary="/bin/false"))
    monkeypatch.setitem(auto.JAILS, "bwrap", functools.partial(BwrapSandbox, binary="/bin/false"))
    with pytest.raises(SandboxUnavailable) as err:
        AutoSandbox(limits=TEST_LIMITS, workers=1)
    msg = str(err.value)
    assert "nsjail:" in msg and "bwrap:" in msg
    assert "apt-get install bubblewrap" in msg and "sandbox=subprocess" in msg
    with pytest.raises(ValueError, match="never chosen automatically"):
        AutoSandbox(limits=TEST_LIMITS, prefer=["subprocess"])


def test_a_missing_or_broken_jail_binary_says_what_to_do():
    with pytest.raises(SandboxUnavailable, match="not executable"):
        NsjailSandbox(limits=TEST_LIMITS, binary="/nonexistent/nsjail")
    sb = NsjailSandbox(limits=TEST_LIMITS, workers=1, binary="/bin/false")
    with pytest.raises(SandboxUnavailable, match="did not start"):
        sb.start()
    # At run time the same failure is an infrastructure outcome, never the program's fault.
    assert sb.run("print(1)").outcome is Outcome.SANDBOX_ERROR
    sb.close()


def test_a_jail_killed_mid_run_is_a_sandbox_error_and_is_replaced(jail):
    jail.start()  # every worker's jail is up, so the run below does not start a new one
    result = {}
    runner = threading.Thread(target=lambda: result.update(r=jail.run("import time\ntime.sleep(1.5)\nprint(1)")))
    before = set(jail.jail_pids())
    runner.start()
    time.sleep(0.4)
    jail.kill_workers()  # every jail: the busy one is among them
    runner.join()
    assert result["r"].outcome is Outcome.SANDBOX_ERROR
    assert "sandbox failed" in result["r"].stderr
    after = jail.run("print('replaced')")
    assert after.ok and after.stdout == "replaced\n"
    assert not set(jail.jail_pids()) & before
    for pid in before:  # the old jails are gone, not orphaned
        assert not os.path.exists(f"/proc/{pid}") or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_a_jail_outlives_the_thread_that_needed_it(jail):
    """A jail is started from the sandbox's own threads: bubblewrap's --die-with-parent follows
    the thread that started it, and callers' threads (a run_many pool's) end."""
    sb = type(jail)(limits=TEST_LIMITS, workers=1)
    try:
        runner = threading.Thread(target=lambda: sb.run("print(1)"))
        runner.start()
        runner.join()
        time.sleep(0.3)
        pids = sb.jail_pids()
        assert len(pids) == 1 and sb.run("print(2)").stdout == "2\n" and sb.jail_pids() == pids
    finally:
        sb.close()


def test_closing_leaves_no_jail_behind(built):
    name = next((n for n in ("bwrap", "nsjail") if not isinstance(built[n], str)), None)
    if name is None:
        pytest.skip("needs a jail")
    sb = type(built[name])(limits=TEST_LIMITS, workers=2)
    sb.start()
    uids = [w.host_uid for w in sb._all]
    sb.close()
    if os.geteuid() == 0:
        alive = [p for p in os.listdir("/proc") if p.isdigit() and _safe_uid(p) in uids]
        assert alive == []


def _safe_uid(pid):
    from skate.sandbox.jail import _real_uid

    try:
        return _real_uid(pid)
    except OSError:
        return -1


def test_uid_slots_are_exclusive_across_processes(tmp_path):
    slots = UidSlots(base=900_000, count=3, folder=str(tmp_path))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(30)",
            str(slots.folder / "0.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    slots.folder.mkdir(exist_ok=True)
    try:
        assert holder.stdout.readline() == "held\n"
        uid_a, fd_a = slots.acquire()
        uid_b, fd_b = slots.acquire()
        assert (uid_a, uid_b) == (900_001, 900_002)  # slot 0 belongs to the other process
        with pytest.raises(SandboxUnavailable, match="in use"):
            slots.acquire()
        os.close(fd_a)
        assert slots.acquire()[0] == 900_001  # given back
    finally:
        holder.kill()
        holder.wait()


def test_another_interpreter_can_be_named(tmp_path):
    other = "/usr/bin/python3"
    if not os.path.exists(other) or os.path.realpath(other) == os.path.realpath(sys.executable):
        pytest.skip("no second interpreter here")
    want = subprocess.run(
        [other, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
    ).stdout
    sb = NsjailSandbox(limits=TEST_LIMITS, workers=1, python=other)
    try:
        res = sb.run("import sys; print(sys.version_info[:2])")
    except SandboxUnavailable as exc:
        pytest.skip(f"nsjail does not work here: {exc}")
    finally:
        sb.close()
    assert res.ok and res.stdout == want


def run_cli(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "skate", "sandbox", *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=REPO,
        timeout=120,
    )


def test_cli_runs_a_file_and_reports(tmp_path, built):
    prog = tmp_path / "prog.py"
    prog.write_text("import sys\nprint('hello', 6 * 7)\nprint('to stderr', file=sys.stderr)\n")
    names = [n for n in ("nsjail", "bwrap") if not isinstance(built[n], str)] or ["subprocess"]
    for name in names:
        out = run_cli(str(prog), f"sandbox={name}")
        assert out.returncode == 0, out.stderr
        assert out.stdout == "hello 42\n"
        assert "to stderr" in out.stderr
        assert "-- ok in " in out.stderr and f"(sandbox {name}," in out.stderr


def test_cli_outcomes_and_exit_status(tmp_path):
    looped = run_cli("-", "sandbox.limits.timeout_s=0.5", "--json", stdin="while True: pass\n")
    assert looped.returncode == 1
    report = json.loads(looped.stdout)
    assert report["outcome"] == "timeout" and report["duration_s"] < 5
    crashed = run_cli("-", stdin="1/0\n")
    assert crashed.returncode == 1 and "ZeroDivisionError" in crashed.stderr
    assert "-- error in" in crashed.stderr


def test_cli_bad_input_says_what_to_fix(tmp_path, capsys, monkeypatch):
    import io

    from skate.cli.sandbox import main

    missing = run_cli(str(tmp_path / "nope.py"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr

    def bad(*args):  # the same main() in this process, the program on stdin: (exit status, stderr)
        monkeypatch.setattr("sys.stdin", io.StringIO("print(1)\n"))
        capsys.readouterr()
        return main(["-", *args]), capsys.readouterr().err

    status, err = bad("sandbox.limits.memory_gb=1")
    assert status == 2 and "memory_gb" in err
    status, err = bad("sandbox.limits.timeout_s=-1")
    assert status == 2 and "sandbox.limits.timeout_s" in err
    status, err = bad("sandbox=docker")
    assert status == 2 and "docker" in err
