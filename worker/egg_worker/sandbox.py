"""sandbox.py: confine a candidate's process: no network, no secrets, limits, no privileges."""
from __future__ import annotations

import ctypes
import os
import resource

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
NOBODY = 65534

SECRET_MARKS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")

_libc = ctypes.CDLL(None, use_errno=True)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def isolate_network() -> str | None:
    """Move this (single-threaded, freshly forked) process into an empty network
    namespace. Returns None on success, else why it is not possible here."""
    if _libc.unshare(CLONE_NEWNET) == 0:
        return None
    first = os.strerror(ctypes.get_errno())
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        return f"unshare(CLONE_NEWNET): {first}; with a user namespace: {os.strerror(ctypes.get_errno())}"
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as e:
        return f"user namespace mapping failed: {e}"
    return None


def scrub_environment() -> None:
    """Remove every variable that looks like a credential."""
    for name in list(os.environ):
        if any(mark in name.upper() for mark in SECRET_MARKS):
            del os.environ[name]


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


def drop_privileges() -> str | None:
    """When running as root, become nobody. Returns None or why not."""
    if os.getuid() != 0:
        return None
    try:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    except OSError as e:
        return f"cannot drop root: {e}"
    return None


def _in_throwaway_child(fn) -> str | None:
    """Run fn() (returning None or a reason) in a forked child that exits at
    once, so that what it changes (namespaces, credentials) stays there."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            why = fn()
        except Exception as e:  # report, never raise in the child
            why = f"{type(e).__name__}: {e}"
        os.write(w, (why or "").encode()[:4000])
        os._exit(0)
    os.close(w)
    msg = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        msg += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return msg.decode() or None


def probe_network_isolation() -> str | None:
    """Try isolate_network in a throwaway child; None when it works."""
    return _in_throwaway_child(isolate_network)


def can_drop_privileges(paths: list[str], writable: str) -> str | None:
    """Whether a process dropped to nobody could still read `paths` (the Python
    installation, torch, triton, the worker) and write under `writable`.
    Tried in a throwaway child; None when it can, else why not."""
    if os.getuid() != 0:
        return "not running as root"

    def attempt() -> str | None:
        why = drop_privileges()
        if why:
            return why
        for p in paths:
            if not os.access(p, os.R_OK | os.X_OK):
                return f"'{p}' is not readable by nobody"
        if not os.access(writable, os.W_OK | os.X_OK):
            return f"'{writable}' is not writable by nobody"
        return None

    return _in_throwaway_child(attempt)
