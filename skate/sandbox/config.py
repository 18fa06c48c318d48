"""The sandbox's config schemas (``conf/sandbox/*.yaml``), each checking itself (``check``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skate.errors import Problem, Settings, raise_first, require
from skate.registry import Registry

MEMORY_BOUNDS = ("auto", "cgroup", "rlimit")


@dataclass
class SandboxConfig(metaclass=Settings):
    _target_: str = "skate.sandbox.SubprocessSandbox"
    workers: int = 0  # concurrent executions; 0 = number of CPU cores
    python: str = ""  # interpreter that runs the programs; "" = the one running skate
    limits: dict[str, Any] = field(
        default_factory=lambda: {
            "timeout_s": 5.0,
            "cpu_s": 5,
            "memory_mb": 512,
            "max_output_bytes": 65536,
            "max_processes": 8,
        }
    )

    def check(self) -> list[Problem]:
        """What types cannot say is wrong with these settings (keys within ``sandbox``)."""
        problems = require(self.workers >= 0, "workers", self.workers, "must be >= 0 (0 = one per CPU core)")
        for key, value in self.limits.items():
            problems += require(
                isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0,
                f"limits.{key}",
                value,
                "must be a positive number",
            )
        return problems


@dataclass
class JailSettingsConfig(SandboxConfig):
    """What every hardened sandbox takes, whether named or chosen by ``auto``."""

    tmp_mb: int = 64  # size of each jail's private /tmp
    tmp_inodes: int = 8192  # files and folders it can hold at once (bounds a flood and its cleanup)
    memory_bound: str = "auto"  # auto: a memory cgroup per jail where possible, else rlimit; cgroup; rlimit
    uid_base: int = 700_000  # as root, workers run as otherwise unused uids from here
    startup_timeout_s: float = 20.0
    warm: bool = True  # fork each program from a clean interpreter kept in the jail; false: exec one

    def check(self) -> list[Problem]:
        return [
            *super().check(),
            *require(self.tmp_mb >= 1, "tmp_mb", self.tmp_mb, "must be >= 1"),
            *require(self.tmp_inodes >= 16, "tmp_inodes", self.tmp_inodes, "must be >= 16"),
            *require(
                self.memory_bound in MEMORY_BOUNDS,
                "memory_bound",
                self.memory_bound,
                "must be auto (a memory cgroup where the machine allows, else rlimit), cgroup or rlimit",
            ),
        ]


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
# themselves are imported when one is built (sandbox.build(settings)), each built from its settings.
sandbox: Registry[type] = Registry("sandbox", __name__)
sandbox.register("subprocess", SandboxConfig, "skate.sandbox.subprocess_sandbox:SubprocessSandbox")
sandbox.register("nsjail", NsjailConfig, "skate.sandbox.nsjail_sandbox:NsjailSandbox")
sandbox.register("bwrap", BwrapConfig, "skate.sandbox.bwrap_sandbox:BwrapSandbox")
sandbox.register("auto", AutoSandboxConfig, "skate.sandbox.auto:AutoSandbox")


def validate_sandbox(s: SandboxConfig) -> None:
    """Raise :class:`~skate.errors.ConfigError` on the first problem of the sandbox's settings (a
    schema instance: a composed section is typed first, :func:`skate.settings.options.to_settings`)."""
    raise_first(s.check(), "sandbox")
