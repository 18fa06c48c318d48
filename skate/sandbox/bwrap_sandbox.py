"""The bubblewrap sandbox (``sandbox=bwrap``): Debian's ``bwrap`` as the jail program of
:class:`~skate.sandbox.jail.JailSandbox`, each jail set up on its command line; as root, the jail's
``/tmp`` is a tmpfs of its own (mounted here through libc), which caps inodes as well as size."""

from __future__ import annotations

import ctypes
import logging
import os
import shutil
from pathlib import Path

import skate.sandbox.cgroup as cgroup
import skate.sandbox.policy as policy
from skate.sandbox.base import SandboxUnavailable
from skate.sandbox.config import BwrapConfig
from skate.sandbox.jail import JailSandbox, system_mounts

log = logging.getLogger(__name__)

MS_NOSUID, MS_NODEV, MS_PRIVATE, MNT_DETACH = 0x2, 0x4, 1 << 18, 0x2


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> int:
    libc = ctypes.CDLL(None, use_errno=True)

    def enc(v: str | None) -> bytes | None:
        return v.encode() if v is not None else None

    return libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data))


def _umount(target: str) -> None:
    ctypes.CDLL(None, use_errno=True).umount2(target.encode(), MNT_DETACH)


class BwrapSandbox(JailSandbox):
    """Bubblewrap (Debian's ``bubblewrap`` package)."""

    schema = BwrapConfig  # registered by import path (skate.sandbox.config)
    settings: BwrapConfig
    name = "bwrap"

    def default_binary(self) -> str:
        found = shutil.which("bwrap")
        if not found or not os.access(found, os.X_OK):
            raise SandboxUnavailable("bwrap not found: install it with `apt-get install bubblewrap`")
        return found

    def command(
        self, uid: int, gid: int, workdir: str, memory: cgroup.Jail | None = None
    ) -> tuple[list[str], list[int]]:
        seccomp_fd = policy.bpf_file()
        argv = [
            self.binary,
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
            "--clearenv",
            "--hostname",
            "sandbox",
        ]
        if uid >= 0:
            # Root: bubblewrap can only map the caller's uid into a user namespace, and host root
            # is exempt from process-count limits. So no user namespace: the supervisor starts as
            # root with just enough capability to drop to the worker's own uid, then drops.
            argv += [
                "--cap-drop",
                "ALL",
                "--cap-add",
                "CAP_SETUID",
                "--cap-add",
                "CAP_SETGID",
                "--cap-add",
                "CAP_CHOWN",
                "--cap-add",
                "CAP_FOWNER",
            ]
        else:
            argv += ["--unshare-user", "--disable-userns"]
        binds, links = system_mounts(self.prefix)
        for d in binds:
            # Folders bubblewrap creates on the way to a mount point would be private to root.
            for parent in reversed(Path(d).parents[:-1]):
                argv += ["--perms", "0755", "--dir", str(parent)]
            argv += ["--ro-bind", d, d]
        for target, link in links:
            argv += ["--symlink", target, link]
        argv += ["--dev", "/dev"]
        tmp = self._host_tmpfs(workdir) if uid >= 0 else None
        if tmp is not None:  # root: a tmpfs of our own, which can cap inodes too
            argv += ["--bind", tmp, "/tmp"]
        else:
            argv += ["--size", str(self.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
        argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--seccomp", str(seccomp_fd), "--chdir", "/tmp", "--"]
        argv += self.supervisor_argv(uid, gid, memory)
        return argv, [seccomp_fd]

    def _host_tmpfs(self, workdir: str) -> str | None:
        """As root: mount a tmpfs capped in size and inodes for the jail's /tmp (bubblewrap's own
        ``--tmpfs`` takes a size only); the jail keeps its bind after :meth:`release` detaches it."""
        path = os.path.join(workdir, "tmp")
        os.mkdir(path, 0o700)
        options = f"size={self.tmp_mb * 1024 * 1024},nr_inodes={self.tmp_inodes},mode=0777"
        if _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
            log.warning(
                "bwrap: could not mount a tmpfs for /tmp (%s); its inodes are not capped",
                os.strerror(ctypes.get_errno()),
            )
            return None
        _mount("none", path, None, MS_PRIVATE, None)  # the host's detach must not reach the jail
        return path

    def release(self, workdir: str) -> None:
        path = os.path.join(workdir, "tmp")
        if os.path.ismount(path):
            _umount(path)
