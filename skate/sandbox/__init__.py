"""Isolated execution of untrusted code behind one interface.

``nsjail`` and ``bwrap`` are hardened (see :mod:`skate.sandbox.jail`); ``auto`` picks the
strongest that works here; ``subprocess`` is an unisolated last resort that warns when built.
"""

from skate.sandbox import auto
from skate.sandbox.auto import AutoSandbox, auto_sandbox, probe
from skate.sandbox.base import ExecResult, Limits, NoSandbox, Outcome, Sandbox, SandboxError
from skate.sandbox.bwrap_sandbox import BwrapSandbox
from skate.sandbox.jail import JailSandbox, SandboxUnavailable
from skate.sandbox.nsjail_sandbox import NsjailSandbox
from skate.sandbox.subprocess_sandbox import SubprocessSandbox, UnsafeSandboxWarning

__all__ = [
    "AutoSandbox",
    "BwrapSandbox",
    "auto",
    "ExecResult",
    "JailSandbox",
    "Limits",
    "NoSandbox",
    "NsjailSandbox",
    "Outcome",
    "Sandbox",
    "SandboxError",
    "SandboxUnavailable",
    "SubprocessSandbox",
    "UnsafeSandboxWarning",
    "auto_sandbox",
    "probe",
]
