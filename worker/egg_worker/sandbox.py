"""sandbox.py: confine a candidate's process.

A candidate is forked from the worker (which has imported torch and Triton,
so that a candidate starts in a fraction of a second) and confines itself
before it reads a byte of the kernel. What confine() builds, layer by layer,
each one recorded in the facts it returns (and shown by `egg doctor`):

1. namespaces: PID, mount, IPC, UTS and network; as root directly, as an
   ordinary user inside a user namespace of its own (uid mapped to itself);
2. PID: the process forks once more and the candidate runs as PID 1 of the
   new namespace: it sees no other process, and when it ends the kernel ends
   everything it started;
3. a fresh /proc for that namespace; the root file system read-only; empty
   tmpfs over the home folders, /tmp, /var/tmp, /run/user and the paths egg
   names (its store and caches), with the Python installation bound back
   read-only where it lives under them; a minimal /dev (null, zero, random,
   the NVIDIA devices) and a private /dev/shm; only its scratch folder, /tmp,
   /dev/shm and its own /proc (which the CUDA driver writes to; /proc/sys
   and the other machine-wide files in it stay read-only) are writable;
4. no capabilities, no new privileges, nobody's uid where egg runs as root
   and the Python installation is readable by nobody;
5. a seccomp filter (libseccomp) that denies ptrace, process_vm_readv/writev,
   mount and the other namespace and kernel-keyring calls, kernel modules,
   clock setting and io_uring;
6. resource limits (file size, descriptors, core dumps, address space).

Why not bubblewrap: it starts a program with exec, which would cost every
candidate the 3-4 s import of torch and Triton that forking avoids, and GPU
machines do not always have it installed. The same kernel interfaces are
used here directly; each layer that the kernel refuses is reported, not
silently skipped.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import glob
import os
import resource
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACES = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
MOUNT_ATTR_RDONLY = 0x1
SYS_MOUNT_SETATTR = 442  # the same number on x86_64 and aarch64

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 36, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
NOBODY = 65534

SECRET_MARKS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")

# System calls a candidate never needs: reading or writing other processes,
# changing mounts or namespaces, kernel keyrings, modules, clocks, io_uring
# (which bypasses this filter for the work it queues).
DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns",
    "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "bpf", "userfaultfd", "open_by_handle_at", "name_to_handle_at", "perf_event_open",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "swapon", "swapoff", "reboot", "acct", "quotactl", "syslog", "lookup_dcookie",
)

DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/sysvipc")

_libc = ctypes.CDLL(None, use_errno=True)


class SandboxError(Exception):
    pass


def _check(rc: int, what: str) -> None:
    if rc != 0:
        e = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(e)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(src.encode() if src else None, dst.encode(), fstype.encode() if fstype else None,
                       ctypes.c_ulong(flags), data.encode() if data else None), f"mount {dst}")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _mount_setattr(path: str, set_: int, clear: int, recursive: bool) -> None:
    attr = _MountAttr(set_, clear, 0, 0)
    rc = _libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode(),
                       ctypes.c_uint(AT_RECURSIVE if recursive else 0), ctypes.byref(attr),
                       ctypes.c_size_t(ctypes.sizeof(attr)))
    _check(rc, f"mount_setattr {path}")


# ---- small process-wide settings, also used by the trusted side ----

def give_to_nobody(folder: str, parent: str) -> None:
    """Hands `folder` and everything in it to nobody (the candidate's user
    once privileges are dropped), and lets nobody pass through `parent`
    (searchable, not listable) to reach it."""
    for root, dirs, files in os.walk(folder):
        for n in dirs + files:
            os.chown(os.path.join(root, n), NOBODY, NOBODY)
    os.chown(folder, NOBODY, NOBODY)
    os.chmod(parent, 0o711)


def scrub_environment() -> None:
    """Remove every variable that looks like a credential."""
    for name in list(os.environ):
        if any(mark in name.upper() for mark in SECRET_MARKS):
            del os.environ[name]


def only_gpu(job: dict) -> None:
    """Make the job's GPU the only one this process can see, as cuda:0
    (job["device"] is rewritten in this process's copy of the job). Triton
    launches on the current device and CUDA events and synchronisation
    follow it too, so a job for cuda:1 in a process whose current device is
    cuda:0 would launch on the wrong GPU and time nothing; and a candidate
    must not reach, or disturb the timing on, another GPU. Works only before
    CUDA is initialised in the process (the worker never initialises it; its
    children are forked from it)."""
    dev = job["device"]
    if not dev.startswith("cuda:"):
        return
    index = int(dev.split(":", 1)[1])
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    if visible and index >= len(visible):
        raise RuntimeError(f"device {dev} is not among CUDA_VISIBLE_DEVICES={','.join(visible)}")
    os.environ["CUDA_VISIBLE_DEVICES"] = visible[index] if visible else str(index)
    job["device"] = "cuda:0"


def set_dumpable(flag: bool) -> None:
    """A non-dumpable process cannot be read through /proc/PID/mem by peers."""
    _libc.prctl(PR_SET_DUMPABLE, 1 if flag else 0, 0, 0, 0)


def become_subreaper() -> None:
    """Orphaned descendants (daemonised candidates) get re-parented to us."""
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def die_with_parent(sig: int = 9) -> None:
    _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def limit_resources(file_bytes: int, nofile: int, address_space: int | None) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    cap = min(nofile, hard) if hard != resource.RLIM_INFINITY else nofile
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(cap, max(soft, 256)), cap))
    if address_space:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))


# ---- the layers ----

def _enter_namespaces(facts: dict) -> int:
    """unshare() the namespaces; returns the flags obtained (0: none)."""
    uid, gid = os.getuid(), os.getgid()
    if uid == 0 and _libc.unshare(NAMESPACES) == 0:
        facts["user_namespace"] = False
        return NAMESPACES
    first = os.strerror(ctypes.get_errno())
    # The worker is not dumpable, and a process that is not dumpable does not
    # own its /proc/self files: it could not write its own uid_map. The
    # candidate's memory holds nothing to protect.
    set_dumpable(True)
    if _libc.unshare(CLONE_NEWUSER | NAMESPACES) == 0:
        try:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        except OSError as e:
            # In the new namespaces, but without a uid: only the empty
            # network namespace is worth anything.
            facts["namespace_error"] = f"user namespace mapping failed: {e}"
            return CLONE_NEWNET
        facts["user_namespace"] = True
        return NAMESPACES
    second = os.strerror(ctypes.get_errno())
    # The network alone, as a last resort (older kernels, locked-down containers).
    if _libc.unshare(CLONE_NEWNET) == 0 or (_libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 and _map_self(uid, gid)):
        facts["namespace_error"] = f"unshare: {first}; with a user namespace: {second}; only the network is isolated"
        return CLONE_NEWNET
    facts["namespace_error"] = f"unshare: {first}; with a user namespace: {second}"
    return 0


def _map_self(uid: int, gid: int) -> bool:
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
        return True
    except OSError:
        return False


def _become_pid1() -> None:
    """Fork: the child, PID 1 of the new namespace, returns; this process
    waits for it and ends the same way it did."""
    pid = os.fork()
    if pid == 0:
        die_with_parent(signal.SIGKILL)
        return
    os.closerange(3, 1 << 16)  # channels and logs stay with the child only
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _bind_from_fd(fd: int, target: str, is_dir: bool) -> None:
    if is_dir:
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "w").close()
    _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)


def _build_mounts(spec: dict, facts: dict) -> None:
    """The file system view described in the module's docstring."""
    hide = sorted({os.path.realpath(p) for p in spec.get("hide", []) if os.path.isdir(p)}, key=len)
    hide = [h for h in hide if h != "/" and not any(_under(h, o) and h != o for o in hide)]
    writable = [os.path.realpath(p) for p in spec.get("writable", [])]
    keep = [os.path.realpath(p) for p in spec.get("keep", []) if os.path.exists(p)]
    rebind = [(p, True) for p in writable] + [(p, False) for p in keep]
    rebind = [(p, w) for p, w in rebind if any(_under(p, h) for h in hide)]
    # A path inside another one that is bound back comes back with it.
    rebind = [(p, w) for p, w in rebind if not any(_under(p, q) and p != q for q, _ in rebind)]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    fds = {p: os.open(p, os.O_PATH | os.O_CLOEXEC) for p, _ in rebind}
    devs = [f"/dev/{d}" for d in DEVICES] + sorted(glob.glob("/dev/nvidia*"))
    dev_fds = {}
    for d in devs:
        try:
            dev_fds[d] = os.open(d, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            pass
    try:
        if spec.get("proc", True):
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            facts["private_proc"] = True
            # The CUDA driver writes under /proc/self, so /proc stays
            # writable (it shows only this namespace's processes); the
            # machine-wide files in it are bound read-only, as container
            # runtimes do.
            for sub in PROC_READ_ONLY:
                if os.path.exists(sub):
                    _mount(sub, sub, None, MS_BIND | MS_REC)
    except SandboxError as e:
        facts["private_proc"] = False
        facts["proc_error"] = str(e)
    for h in hide:
        mode = "1777" if h in ("/tmp", "/var/tmp") else "0755"
        _mount("tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size=268435456")
    facts["hidden"] = hide
    for p, _ in sorted(rebind, key=lambda x: len(x[0])):
        _bind_from_fd(fds[p], p, os.path.isdir(f"/proc/self/fd/{fds[p]}"))
    if spec.get("dev", True):
        _minimal_dev(dev_fds)
    for fd in list(fds.values()) + list(dev_fds.values()):
        os.close(fd)
    if spec.get("read_only", True):
        _mount_setattr("/", MOUNT_ATTR_RDONLY, 0, recursive=True)
        facts["read_only_root"] = True
        open_for_writing = (["/dev/shm"] if spec.get("dev", True) else []) + writable + \
            (["/tmp"] if "/tmp" in hide else []) + (["/proc"] if facts["private_proc"] else [])
        for p in open_for_writing + list(spec.get("also_writable", [])):
            _mount_setattr(p, 0, MOUNT_ATTR_RDONLY, recursive=False)
        facts["writable"] = open_for_writing


def _minimal_dev(dev_fds: dict) -> None:
    """A tmpfs /dev holding only the devices in dev_fds (bound from the real
    ones), a private /dev/shm and the usual links."""
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1048576")
    for d, fd in dev_fds.items():
        try:
            _bind_from_fd(fd, d, os.path.isdir(f"/proc/self/fd/{fd}"))
        except (SandboxError, OSError):
            pass
    os.makedirs("/dev/shm")
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=268435456")
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"/dev/{name}")


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 40


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_privileges(to_nobody: bool, last_cap: int, facts: dict) -> None:
    for cap in range(last_cap + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if to_nobody and os.getuid() == 0:
        try:
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            # Changing uid makes a process non-dumpable, and its /proc/self
            # files root's: the CUDA driver could not write them.
            set_dumpable(True)
        except OSError as e:
            facts["privileges_error"] = f"cannot drop root: {e}"
    data = (_CapData * 2)()
    _libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), data)
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    facts["uid"] = os.getuid()
    facts["capabilities"] = _effective_caps()


def _effective_caps() -> str:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return "none" if int(line.split()[1], 16) == 0 else line.split()[1]
    except OSError:
        pass
    return "unknown"


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_MASKED_EQ = 7


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


def _seccomp(facts: dict) -> None:
    """Deny DENIED_SYSCALLS (EPERM), clone() with namespace flags (EPERM),
    and clone3 (ENOSYS, so that the C library falls back to clone, whose
    flags the filter can read)."""
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        facts["seccomp"] = False
        facts["seccomp_error"] = "libseccomp is not installed"
        return
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        facts["seccomp"] = False
        facts["seccomp_error"] = "seccomp_init failed"
        return
    try:
        eperm = _errno_action(errno.EPERM)
        denied = 0
        for call in DENIED_SYSCALLS:
            nr = lib.seccomp_syscall_resolve_name(call.encode())
            if nr >= 0 and lib.seccomp_rule_add_array(ctx, eperm, nr, 0, None) == 0:
                denied += 1
        clone = lib.seccomp_syscall_resolve_name(b"clone")
        for flag in (CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
                     CLONE_NEWNET):
            cmp = (_ArgCmp * 1)(_ArgCmp(0, SCMP_CMP_MASKED_EQ, flag, flag))
            lib.seccomp_rule_add_array(ctx, eperm, clone, 1, cmp)
        clone3 = lib.seccomp_syscall_resolve_name(b"clone3")
        if clone3 >= 0:
            lib.seccomp_rule_add_array(ctx, _errno_action(errno.ENOSYS), clone3, 0, None)
        rc = lib.seccomp_load(ctx)
        facts["seccomp"] = rc == 0
        if rc != 0:
            facts["seccomp_error"] = f"seccomp_load: {os.strerror(-rc)}"
        else:
            facts["seccomp_denied"] = denied
    finally:
        lib.seccomp_release(ctx)


def confine(spec: dict) -> dict:
    """Confine this (single-threaded, freshly forked) process as the module
    docstring describes. spec: writable (folders), hide (folders), keep
    (paths to leave readable under hidden folders), drop_to_nobody,
    file_limit, memory_limit; namespaces, drop_capabilities and seccomp
    (each on unless false); mounts, proc, dev and read_only switch the file
    system layers one by one (bench/sandbox_layers.py uses them to find
    which layer a device driver needs changed). With a PID namespace this
    forks: the caller goes on as PID 1 of the new namespace and the process
    that called it never returns from here. Returns the facts."""
    facts: dict = {"pid_namespace": False, "mount_namespace": False, "network_isolated": False,
                   "private_proc": False, "read_only_root": False, "hidden": [], "writable": [],
                   "seccomp": False, "capabilities": _effective_caps(), "uid": os.getuid()}
    last_cap = _last_cap()
    got = _enter_namespaces(facts) if spec.get("namespaces", True) else 0
    facts["network_isolated"] = bool(got & CLONE_NEWNET)
    if got & CLONE_NEWPID:
        _become_pid1()
        facts["pid_namespace"] = os.getpid() == 1
    if got & CLONE_NEWNS:
        facts["mount_namespace"] = True
        try:
            if spec.get("mounts", True):
                _build_mounts(spec, facts)
        except (SandboxError, OSError) as e:
            facts["mount_error"] = str(e)
    if spec.get("drop_capabilities", True):
        _drop_privileges(bool(spec.get("drop_to_nobody")), last_cap, facts)
    limit_resources(file_bytes=spec.get("file_limit", 2 << 30), nofile=4096,
                    address_space=spec.get("memory_limit"))
    if spec.get("seccomp", True):
        _seccomp(facts)
    return facts


def probe(spec: dict) -> dict:
    """What confine(spec) achieves here, tried in a throwaway child."""
    import json

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            facts = confine(spec)
            try:
                with open("/proc/1/cmdline", "rb") as f:
                    facts["sees_pid1"] = f.read().split(b"\0")[0].decode(errors="replace")
            except OSError:
                pass
            facts["other_processes"] = sum(1 for p in os.listdir("/proc") if p.isdigit()) - 1
            os.write(w, json.dumps(facts).encode())
        except BaseException as e:  # report, never raise in the child
            os.write(w, json.dumps({"error": f"{type(e).__name__}: {e}"}).encode())
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    try:
        return json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        return {"error": "the probe child said nothing"}


def can_drop_privileges(paths: list[str], writable: str) -> str | None:
    """Whether a process dropped to nobody could still read `paths` (the Python
    installation, torch, triton, the worker) and write under `writable`.
    Tried in a throwaway child; None when it can, else why not."""
    if os.getuid() != 0:
        return "not running as root"
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        why = None
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            for p in paths:
                if not os.access(p, os.R_OK | os.X_OK):
                    why = f"'{p}' is not readable by nobody"
                    break
            if why is None and not os.access(writable, os.W_OK | os.X_OK):
                why = f"'{writable}' is not writable by nobody"
        except Exception as e:
            why = f"cannot drop root: {e}"
        os.write(w, (why or "").encode()[:4000])
        os._exit(0)
    os.close(w)
    msg = os.read(r, 4096)
    os.close(r)
    os.waitpid(pid, 0)
    return msg.decode() or None


def policy_paths() -> dict:
    """What a candidate's sandbox hides (home folders, temporary folders, and
    EGG_SANDBOX_HIDE: egg's store and caches) and what it keeps readable
    under them (this Python installation, its packages, this worker)."""
    # Imported here, not at the top: a child imports this module before it
    # has set TRITON_INTERPRET, which must come before triton's import.
    import numpy
    import torch
    import triton

    hide = ["/root", "/home", "/run/user", "/tmp", "/var/tmp", os.path.expanduser("~")]
    hide += [p for p in os.environ.get("EGG_SANDBOX_HIDE", "").split(os.pathsep) if p]
    keep = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, os.path.dirname(sys.executable),
            os.path.dirname(os.path.realpath(sys.executable)), os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    keep += [p for p in sys.path if p and os.path.isdir(p)]
    keep += [os.path.dirname(m.__file__) for m in (torch, triton, numpy)]
    return {"hide": sorted({os.path.realpath(p) for p in hide if os.path.isdir(p)}),
            "keep": sorted({os.path.realpath(p) for p in keep if os.path.exists(p)})}
