"""The `meta` object of a peer's result file, as the Rust side writes it (lib/src/io/json.rs):
the neurobits commit, the command line, the devices, the library versions and every seed used,
so that a result can be traced to its run and run again."""

from __future__ import annotations

import os
import platform
import subprocess
import sys


def _commit() -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
        return head + ("-modified" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def _version() -> str:
    """The commit of the neurobits code that ran: the installed module's build when it is loaded
    (a copied checkout's git may be older than the wheel built from it), else the checkout's."""
    nb = sys.modules.get("neurobits._neurobits")
    if nb is not None:
        return f"neurobits {nb.version()} (checkout {_commit()})"
    return f"neurobits {_commit()}"


def _gpus() -> list:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return [{"ordinal": i, "name": torch.cuda.get_device_name(i)} for i in range(torch.cuda.device_count())]
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    names = [n.strip() for n in out.stdout.splitlines() if n.strip()] if out.returncode == 0 else []
    return [{"ordinal": i, "name": n} for i, n in enumerate(names)]


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def meta(seeds, **extra) -> dict:
    """`seeds`: every seed the run used, by name (given or default)."""
    versions = {m: getattr(sys.modules[m], "__version__", "?") for m in ("numpy", "sklearn", "faiss", "torch", "h5py", "neurobits") if m in sys.modules}
    return {"version": _version(), "command_line": sys.argv, "device": {"cpu": _cpu(), "gpus": _gpus()},
            "host_threads": os.cpu_count(), "python": platform.python_version(), "libraries": versions, "seeds": seeds, **extra}
