"""The system-call policies jailed programs run under: the jail's, rendered for nsjail and
bubblewrap, and each program's own, installed on top of it.

Programs keep everything ordinary Python needs. What they lose are the calls that reach past the
jail or widen the kernel's attack surface: tracing other processes, new namespaces (and so new
user namespaces with capabilities in them), mounts, kernel keyrings, BPF, perf, module loading,
and the like; and System V IPC and POSIX message queues, whose objects belong to the jail's IPC
namespace and so would outlive a program, to be read by the next one in its jail. Denied calls
fail with EPERM, so Python raises ``PermissionError`` and the program's outcome is an ordinary
error rather than a mysterious kill. ``clone3`` answers ENOSYS, which makes the C library fall
back to ``clone``, whose flags a filter can inspect.

Two more groups are refused because their only use in these games is an attack:

- calls that pin kernel memory no rlimit counts, or reach a pool the host shares: sockets of
  every family (``socket``: a loopback TCP socket draws on the host's single TCP memory pool),
  ``io_uring``, ``memfd_secret``, and the old asynchronous I/O (``io_setup``: its contexts come
  out of a quota the whole host shares); and, for programs only (the supervisor needs them for itself),
  ``socketpair`` (unix-socket buffers) and ``memfd_create`` (memory files outside the output cap);
- calls that watch the host or signal another jail through it: ``inotify``, ``fanotify`` and
  ``F_NOTIFY`` (file activity on the shared read-only folders), ``sysinfo`` and ``statfs`` (the
  host's free memory, load and process count, its file systems' free space), the page-cache
  oracles and levers (``mincore``, ``cachestat``, ``preadv2`` with ``RWF_NOWAIT``,
  ``fadvise64``, ``readahead``, ``madvise`` cold/pageout, ``process_madvise``) and file locks and
  leases (``flock``, ``fcntl`` lock commands: a lock on a shared read-only file is seen from
  another jail).

The jail's filter (:func:`kafel`, :func:`bpf_file`) holds every process in the jail, the
supervisor included; the program's filter (:func:`program_bpf`) adds the calls the supervisor
itself needs and the checks on arguments, and is installed in each program's process before its
code runs. It also allows only the native system-call convention: a program that calls the
kernel the 32-bit way (``int 0x80``) or through x32 is killed (``SIGSYS``).
"""

from __future__ import annotations

import errno
import os
import tempfile

DENIED = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "syslog",
    "iopl",
    "ioperm",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "vhangup",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "ipc",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    # kernel memory outside the program's limit, and the host's shared network pools
    "socket",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "memfd_secret",
    # asynchronous I/O contexts draw on a host-wide quota (fs.aio-max-nr) every process shares
    "io_setup",
    "io_destroy",
    "io_submit",
    "io_cancel",
    "io_getevents",
    "io_pgetevents",
    # the host's file activity and page cache; locks on shared inodes
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "fanotify_init",
    "fanotify_mark",
    "mincore",
    "cachestat",
    "fadvise64",
    "readahead",
    "process_madvise",
    "flock",
)
PROGRAM_DENIED = (
    "socketpair",
    "memfd_create",  # the supervisor uses both; programs may not
    # the host's free memory, load and process count (sysinfo), and the free space of its file
    # systems (statfs): they move with what the host and other jails do
    "sysinfo",
    "statfs",
    "fstatfs",
)

# Refused by argument, in programs (F_* and MADV_* from the kernel's uapi headers).
F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 5, 6, 7, 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY = 1024, 1025, 1026
FCNTL_DENIED = (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE, F_NOTIFY)
MADV_COLD, MADV_PAGEOUT = 20, 21
RWF_NOWAIT = 0x8

# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)


def syscall_numbers(names: tuple[str, ...] = DENIED) -> list[int]:
    """Numbers of the named calls on this machine's architecture (libseccomp's table)."""
    import pyseccomp as sc

    arch = sc.system_arch()
    return [n for n in (sc.resolve_syscall(arch, name) for name in names) if n >= 0]


def kafel() -> str:
    """The policy in nsjail's Kafel language (by number: Kafel's name table is older)."""
    ns_mask = sum(CLONE_NAMESPACE_FLAGS)
    denied = ", ".join(f"SYSCALL[{n}]" for n in syscall_numbers())
    (clone3,) = syscall_numbers(("clone3",))
    return (
        "POLICY skate {\n"
        f"  ERRNO({errno.EPERM}) {{ {denied} }},\n"
        f"  ERRNO({errno.ENOSYS}) {{ SYSCALL[{clone3}] }},\n"
        f"  ERRNO({errno.EPERM}) {{ clone(flags) {{ (flags & {ns_mask:#x}) != 0 }} }}\n"
        "}\n"
        "USE skate DEFAULT ALLOW\n"
    )


def _filter():
    """An empty libseccomp filter that allows by default and finds a call's rules by binary
    search (every system call of every program passes through it)."""
    import pyseccomp as sc

    flt = sc.SyscallFilter(defaction=sc.ALLOW)
    flt.set_attr(sc.Attr.CTL_OPTIMIZE, 2)
    return flt


def bpf_file() -> int:
    """The policy compiled to a classic-BPF program (via libseccomp), as a readable fd at 0."""
    import pyseccomp as sc

    flt = _filter()
    for number in syscall_numbers():
        flt.add_rule(sc.ERRNO(errno.EPERM), number)
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for flag in CLONE_NAMESPACE_FLAGS:
        flt.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    fd, path = tempfile.mkstemp(prefix="skate-seccomp-")
    os.unlink(path)
    with os.fdopen(os.dup(fd), "wb") as f:
        flt.export_bpf(f)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def program_bpf() -> bytes:
    """Each program's own filter as classic-BPF bytes (installed by the supervisor or the zygote
    in the program's process, on top of the jail's): :data:`PROGRAM_DENIED`, file locks, leases
    and directory notifications (``fcntl``), non-blocking reads that tell what is cached
    (``preadv2`` with ``RWF_NOWAIT``) and page-cache eviction (``madvise``)."""
    import pyseccomp as sc

    flt = _filter()
    for number in syscall_numbers(PROGRAM_DENIED):
        flt.add_rule(sc.ERRNO(errno.EPERM), number)
    low = 0xFFFFFFFF  # the kernel reads these arguments as 32-bit ints: compare only those bits
    for cmd in FCNTL_DENIED:
        flt.add_rule(sc.ERRNO(errno.EPERM), "fcntl", sc.Arg(1, sc.MASKED_EQ, low, cmd))
    for advice in (MADV_COLD, MADV_PAGEOUT):
        flt.add_rule(sc.ERRNO(errno.EPERM), "madvise", sc.Arg(2, sc.MASKED_EQ, low, advice))
    flt.add_rule(sc.ERRNO(errno.EPERM), "preadv2", sc.Arg(5, sc.MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT))
    with tempfile.TemporaryFile() as f:
        flt.export_bpf(f)
        f.seek(0)
        return f.read()
