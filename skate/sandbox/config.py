"""The sandbox's config schemas (``conf/sandbox/*.yaml``) and their checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


from skate.errors import check as _check
from skate.registry import Registry


@dataclass
class SandboxConfig:
    _target_: str = "skate.sandbox.SubprocessSandbox"
    workers: int = 0  # concurrent executions; 0 = number of CPU cores
    python: str = ""  # interpreter that runs the programs; "" = the one running skate
    limits: dict[str, Any] = field(
        default_factory=lambda: {"timeout_s": 5.0, "cpu_s": 5, "memory_mb": 512,
                                 "max_output_bytes": 65536, "max_processes": 8}
    )


@dataclass
class JailSettingsConfig(SandboxConfig):
    """What every hardened sandbox takes, whether named or chosen by ``auto``."""

    tmp_mb: int = 64  # size of each jail's private /tmp
    tmp_inodes: int = 8192  # files and folders it can hold at once (bounds a flood and its cleanup)
    memory_bound: str = "auto"  # auto: a memory cgroup per jail where possible, else rlimit; cgroup; rlimit
    uid_base: int = 700_000  # as root, workers run as otherwise unused uids from here
    startup_timeout_s: float = 20.0
    warm: bool = True  # fork each program from a clean interpreter kept in the jail; false: exec one


@dataclass
class JailConfig(JailSettingsConfig):
    _target_: str = "skate.sandbox.NsjailSandbox"
    binary: str = ""  # path of the jail program; "" = find it


@dataclass
class NsjailConfig(JailConfig):
    _target_: str = "skate.sandbox.NsjailSandbox"


@dataclass
class BwrapConfig(JailConfig):
    _target_: str = "skate.sandbox.BwrapSandbox"


@dataclass
class AutoSandboxConfig(JailSettingsConfig):
    _target_: str = "skate.sandbox.auto_sandbox"
    prefer: list[str] = field(default_factory=lambda: ["nsjail", "bwrap"])


# The sandbox group's registry (conf/sandbox/<name>.yaml extends /schema/sandbox/<name>); the sandboxes
# themselves are imported when one is built.
sandbox: Registry[type] = Registry("sandbox", __name__)
sandbox.register("subprocess", SandboxConfig, "skate.sandbox.subprocess_sandbox:SubprocessSandbox")
sandbox.register("nsjail", NsjailConfig, "skate.sandbox.jail:NsjailSandbox")
sandbox.register("bwrap", BwrapConfig, "skate.sandbox.jail:BwrapSandbox")
sandbox.register("auto", AutoSandboxConfig, "skate.sandbox.auto:auto_sandbox")


def validate_sandbox(s: Any) -> None:
    _check(s.workers >= 0, "sandbox.workers", s.workers, "must be >= 0 (0 = one per CPU core)")
    for key, value in s.limits.items():
        _check(isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0,
               f"sandbox.limits.{key}", value, "must be a positive number")
    if hasattr(s, "tmp_mb"):
        _check(s.tmp_mb >= 1, "sandbox.tmp_mb", s.tmp_mb, "must be >= 1")
    if hasattr(s, "tmp_inodes"):
        _check(s.tmp_inodes >= 16, "sandbox.tmp_inodes", s.tmp_inodes, "must be >= 16")
    if hasattr(s, "memory_bound"):
        _check(s.memory_bound in ("auto", "cgroup", "rlimit"), "sandbox.memory_bound", s.memory_bound,
               "must be auto (a memory cgroup where the machine allows, else rlimit), cgroup or rlimit")
