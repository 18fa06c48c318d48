"""The sandbox's config schemas (``conf/sandbox/*.yaml``), each checking itself (``check``)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from skate.errors import Problem, Settings, raise_first, require
from skate.registry import Registry

MEMORY_BOUNDS = ("auto", "cgroup", "rlimit")


@dataclass
class Limits:
    """Resource limits applied to one execution (``sandbox.limits``; CPU seconds are rounded up
    to whole seconds)."""

    timeout_s: float = 5.0  # wall clock
    cpu_s: int = 5
    memory_mb: int = 512
    max_output_bytes: int = 64 * 1024
    max_processes: int = 8  # at once, itself included
    # memory_mb bounds all of a program's processes together (and the kernel memory they pin) in a
    # jail with a memory cgroup; elsewhere each process's address space (so up to max_processes ×)


@dataclass
class SandboxConfig(metaclass=Settings):
    _target_: str = "skate.sandbox.SubprocessSandbox"
    workers: int = 0  # concurrent executions; 0 = number of CPU cores
    python: str = ""  # interpreter that runs the programs; "" = the one running skate
    limits: Limits = field(default_factory=Limits)  # of each program run

    def check(self) -> list[Problem]:
        """What types cannot say is wrong with these settings (keys within ``sandbox``)."""
        problems = require(self.workers >= 0, "workers", self.workers, "must be >= 0 (0 = one per CPU core)")
        for f in fields(self.limits):
            value = getattr(self.limits, f.name)
            problems += require(value > 0, f"limits.{f.name}", value, "must be a positive number")
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
