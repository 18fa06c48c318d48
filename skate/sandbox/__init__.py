"""Isolated execution of untrusted code behind one interface."""

from skate.sandbox.base import ExecResult, Limits, Outcome, Sandbox, SandboxError
from skate.sandbox.subprocess_sandbox import SubprocessSandbox

__all__ = ["ExecResult", "Limits", "Outcome", "Sandbox", "SandboxError", "SubprocessSandbox"]
