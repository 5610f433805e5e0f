#!/usr/bin/env python3
"""Hostile-input acceptance run of the neurobits CLI (issue 31).

Every case runs the release binary in its own folder under a time limit and an address-space
limit (RLIMIT_AS), and is judged by one contract:

* it ends within its time limit (else HANG) and is not killed by a signal it was not sent;
* exit 0, 1 (I/O) or 2 (bad input) only -- 101 (a panic turned into a line) is a bug -- and the
  code the case expects where it expects one;
* on failure exactly one stderr line that is not a `warning:`/`note:`, starting with `error: `;
  no panic text anywhere;
* no temporary file (`.neurobits-*`, `.tmp*`) left in its folder or in the fixtures;
* the fixtures (the user's files) unchanged, byte for byte;
* and the case's own check, if it has one (outputs whole, modes kept, one run's set, ...).

Cases come from two sources: generated from the clap tree (every leaf command's options from
its `--help`, each given hostile values on a working base command line where there is one) and
hand-written ones for the classes of the issue. `--quick` runs a fixed, fast subset (make test);
the full run is `make hostile`.

Usage: run.py BINARY [--quick] [--log FILE] [--jobs N] [--seed S]
"""

import argparse
import concurrent.futures as cf
import hashlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as hand  # noqa: E402  (the hand-written cases and the fixtures)

MEM_LIMIT = 4 << 30  # address space per case
PANIC_WORDS = ("panicked", "internal error", "RUST_BACKTRACE", "stack backtrace")


class Case:
    """One run: `argv` after the binary; `cls` is the issue's class it belongs to."""

    def __init__(self, cls, name, argv, expect=None, timeout=20, stdin=None, check=None, setup=None,
                 signal_after=None, env=None, quick=False, shell=None):
        self.cls, self.name, self.argv, self.expect = cls, name, argv, expect
        self.timeout, self.stdin, self.check, self.setup = timeout, stdin, check, setup
        self.signal_after, self.env, self.quick, self.shell = signal_after, env, quick, shell


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))
    os.setsid()


def tree_hash(root):
    h = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                h[p] = (hashlib.sha256(fh.read()).hexdigest(), os.stat(p).st_mode)
    return h


def leftovers(root):
    found = []
    for d, dirs, files in os.walk(root):
        for n in files + dirs:
            if n.startswith(".neurobits-") or n.startswith(".tmp"):
                found.append(os.path.join(d, n))
    return found


def cpu_seconds(pid):
    """CPU time of a process, its threads and its waited-for children (/proc/PID/stat)."""
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in f[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def judge_long(p, c, work, fx):
    """A case still running at its limit. Blocked (under a fifth of a core) is a HANG; a process
    that is computing (a valid but large workload: a drawn `--iters 65536`) must stop cleanly on
    SIGINT as a user's Ctrl-C would stop it: exit 130 within 10 s, one line, no temporary file."""
    busy = cpu_seconds(p.pid) / c.timeout
    if c.shell or busy < 0.2:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return "HANG", f"still running after {c.timeout} s, {busy:.0%} of a core"
    os.kill(p.pid, signal.SIGINT)
    try:
        _, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return "HANG", f"computing after {c.timeout} s ({busy:.0%} of a core) and not stopped by SIGINT in 10 s"
    err = err.decode("utf-8", "replace")
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(("warning:", "note:"))]
    if p.returncode != 128 + signal.SIGINT or len(lines) > 1 or any(w in err for w in PANIC_WORDS):
        return "EXIT", f"a long run stopped by SIGINT: exit {p.returncode}, stderr {err.strip()[:200]!r}"
    left = leftovers(work) + leftovers(fx)
    if left:
        return "LEFTOVER", ", ".join(left[:3])
    return "LONG", f"computing after {c.timeout} s ({busy:.0%} of a core), stopped cleanly by SIGINT (exit 130)"


def run_case(binary, fx, work, c):
    """Runs `c` in `work`; returns (verdict, detail)."""
    os.makedirs(work, exist_ok=True)
    ctx = {"bin": binary, "fx": fx, "w": work}
    if any("{w}/in/" in a for a in c.argv if isinstance(a, str)):
        shutil.copytree(fx, os.path.join(work, "in"))
    if c.setup:
        c.setup(ctx)
    sub = lambda a: a.format(**ctx) if isinstance(a, str) else a  # noqa: E731
    # Arguments as bytes: `\udcff` (surrogate escapes) become the non-UTF-8 bytes they stand for.
    argv = [binary] + [os.fsencode(sub(a)) for a in c.argv]
    env = dict(os.environ, **(c.env or {}))
    env.pop("RUST_BACKTRACE", None)
    stdin = subprocess.DEVNULL
    if c.stdin == "endless":
        stdin = subprocess.PIPE
    elif isinstance(c.stdin, str):
        stdin = open(sub(c.stdin), "rb")
    t0 = time.time()
    if c.shell:
        p = subprocess.Popen(["bash", "-c", sub(c.shell)], cwd=work, env=dict(env, NB=binary),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit_memory)
    else:
        p = subprocess.Popen(argv, cwd=work, env=env, stdin=stdin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=limit_memory)
    if c.stdin == "endless":
        import threading

        def feed():
            try:
                chunk = b"1,2,3\n" * 100000
                while True:
                    p.stdin.write(chunk)
            except (BrokenPipeError, OSError, ValueError):
                pass
        threading.Thread(target=feed, daemon=True).start()
    if c.signal_after:
        sig, after = c.signal_after
        time.sleep(after)
        if p.poll() is None:
            os.kill(p.pid, sig)
    try:
        out, err = p.communicate(timeout=c.timeout)
    except subprocess.TimeoutExpired:
        return judge_long(p, c, work, fx)
    secs = time.time() - t0
    rc = p.returncode
    err = err.decode("utf-8", "replace")
    ctx.update(rc=rc, out=out, err=err, secs=secs)
    if any(w in err for w in PANIC_WORDS):
        return "PANIC", err.strip()[:300]
    expected_signal = c.signal_after and rc in (128 + c.signal_after[0], -c.signal_after[0])
    if rc < 0 and not expected_signal and not (c.expect and rc in c.expect):
        return "SIGNAL", f"killed by signal {-rc}: {err.strip()[:200]}"
    if rc not in (0, 1, 2) and not expected_signal and not (c.expect and rc in c.expect):
        return "EXIT", f"exit {rc}: {err.strip()[:200]}"
    if c.expect is not None and rc not in c.expect:
        return "EXIT", f"exit {rc}, expected {sorted(c.expect)}: {err.strip()[:200]}"
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(("warning:", "note:"))]
    if rc in (1, 2):
        if len(lines) != 1 or not lines[0].startswith("error: "):
            return "MESSAGE", f"{len(lines)} stderr lines: {err.strip()[:300]}"
    left = leftovers(work) + leftovers(fx)
    if left:
        return "LEFTOVER", ", ".join(left[:3])
    if c.check:
        why = c.check(ctx)
        if why:
            return "CHECK", why
    return "ok", f"exit {rc} in {secs:.2f} s" + (f": {lines[0][:160]}" if lines else "")


# ---------------------------------------------------------------- the clap tree

def walk(binary, path=()):
    """Leaf commands and their options ({long: value name or None}) from `--help`."""
    text = subprocess.run([binary, *path, "--help"], capture_output=True, text=True).stdout
    subs = []
    if "\nCommands:\n" in text:
        block = text.split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
        subs = [ln.split()[0] for ln in block.splitlines() if ln.strip() and ln.split()[0] != "help"]
    if subs:
        out = []
        for s in subs:
            out += walk(binary, path + (s,))
        return out
    opts = {}
    for m in re.finditer(r"^\s+(?:-\w, )?--([\w-]+)(?: [<\[]+([^>\]]+)[>\]]+)?(.*)$", text, re.M):
        if m.group(1) in ("help", "version"):
            continue
        opts[m.group(1)] = (m.group(2), m.group(3))
    return [(path, opts)]


NUMERIC = ["0", "-1", "4294967296", "18446744073709551616", "99999999999999999999999999", "1e308",
           "nan", "inf", "0.5", "1,2,3"]
ANY = ["", "\udcff\udcfe", "-", "x" * 5000]
# Inputs are copies in the case's folder (`{w}/in/`): an option taken for an input may be an
# output of that command (`ocnn cluster --model`), and the user's fixtures must stay as they are.
PATHS_IN = ["/dev/zero", "{w}/missing/x", "{w}", "{w}/in/garbled.bin", "{w}/in/empty.csv", "{w}/in/zerodim.csv"]
# As root, a missing folder is created where the command creates folders: no path outside {w}.
PATHS_OUT = ["{fx}/ro.csv/x", "{w}/nodir/x", "{fx}", "/dev/full", "{fx}/ro.csv"]


def is_numeric(value_name, rest):
    return bool(re.search(r"\[default: -?[\d.]+(,[\d.]+)*\]", rest)) or value_name in (
        "N", "M", "S", "K", "R", "CLUSTERS", "NEURONS", "PROBES", "ERASED", "GAMMA", "SEED", "ITERS",
        "LEVELS", "MINICOLUMNS", "EPOCHS", "EXPOSURE", "SIZES", "SEEDS", "NEIGHBOURS", "MAX_ITER",
        "TRANSIENT", "SCALE", "EPS", "CLOCK_MHZ", "LATENCY_PROBES", "PER_CLASS", "SKIP_ROWS", "SIZE")


def fresh_numbers(rnd):
    """Numbers drawn per option from the run's seed: integers around a random power of two (either
    sign), a float of a random exponent, a list of random integers."""
    k = rnd.randrange(0, 70)
    return [str((1 << k) + rnd.randrange(-2, 3)), str(-rnd.randrange(1, 1 << rnd.randrange(1, 64))),
            f"{rnd.uniform(1, 10):.3f}e{rnd.randrange(-330, 330)}",
            ",".join(str(rnd.randrange(0, 1 << rnd.randrange(1, 40))) for _ in range(rnd.randrange(2, 5)))]


def generated(binary, fx, seed=31):
    import random
    rnd = random.Random(seed)
    cases = []
    for path, opts in walk(binary):
        cmd = " ".join(path)
        base = hand.BASES.get(cmd)
        for opt, (vname, rest) in opts.items():
            if vname is None:
                continue
            outputs = opt in ("out", "json", "levels-out", "plots")
            values = list(ANY)
            drawn = []
            if is_numeric(vname, rest):
                drawn = fresh_numbers(rnd)
                values += NUMERIC + drawn
            elif outputs:
                values += PATHS_OUT
            elif opt in hand.INPUT_OPTIONS:
                values += PATHS_IN
            for v in values:
                argv = list(path) + hand.with_option(base or [], opt, v)
                expect = None
                # A read-only output is an I/O refusal (1); a missing folder the user's (2).
                if v == "{fx}/ro.csv" and base:
                    expect = {1, 2} if opt in ("plots", "out") else {1}
                cls = "crash: huge/odd numeric option" if v in NUMERIC or v in drawn else (
                    "crash: non-UTF-8 argument" if v.startswith("\udcff") else "crash: odd option value")
                if v in PATHS_IN:
                    cls = "hang/crash: odd input path"
                if v in PATHS_OUT:
                    cls = "lost data: odd output path"
                # Every command whose defaults start a workload has a small base line; a case still
                # computing at its limit is judged by judge_long.
                cases.append(Case(cls, f"{cmd} --{opt} {v[:30]!r}" + ("" if base else " (no base)"),
                                  argv, expect=expect, timeout=30 if base else 10))
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--log")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=31, help="draws the fixtures' data, cut points, flipped bytes and "
                    "numbers (31: the quick set's; a new seed gives fresh cases)")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    root = tempfile.mkdtemp(prefix="nb-hostile-")
    fx = os.path.join(root, "fx")
    os.makedirs(fx)
    hand.fixtures(binary, fx, a.seed)
    before = tree_hash(fx)
    cases = hand.cases(Case, a.seed) + generated(binary, fx, a.seed)
    if a.quick:
        # The hand-written cases marked quick and every 12th generated one that has a base line.
        gen = [c for c in cases if not c.quick and "(no base)" not in c.name and c.timeout <= 30]
        cases = [c for c in cases if c.quick] + gen[::12]
    log = open(a.log, "w") if a.log else None
    say = lambda s: (print(s), log and (log.write(s + "\n"), log.flush()))  # noqa: E731
    u = os.uname()
    say(f"# neurobits hostile run: {len(cases)} cases, binary {binary}, {'quick' if a.quick else 'full'}, "
        f"address space {MEM_LIMIT >> 30} GiB per case, {a.jobs} at a time, seed {a.seed}")
    say(f"# command: {' '.join(sys.argv)}; machine: {u.sysname} {u.machine}, {os.cpu_count()} cores, "
        f"uid {os.geteuid()}; started {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    t0 = time.time()
    results = []
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run_case, binary, fx, os.path.join(root, "w", str(i)), c): c for i, c in enumerate(cases)}
        for f in cf.as_completed(futs):
            c = futs[f]
            try:
                verdict, detail = f.result()
            except Exception as e:  # the harness's own failure is a failure too
                verdict, detail = "HARNESS", repr(e)
            results.append((c, verdict, detail))
            if verdict not in ("ok", "LONG"):
                say(f"FAIL [{verdict}] {c.cls} :: {c.name} :: {detail}")
            elif verdict == "LONG":
                say(f"LONG (held) {c.cls} :: {c.name} :: {detail}")
    after = tree_hash(fx)
    changed = [p for p in before if before[p] != after.get(p)]
    if changed:
        results.append((Case("lost data: user files intact", "fixtures unchanged", []), "CHANGED", ", ".join(changed)))
        say(f"FAIL [CHANGED] fixtures modified: {changed}")
    by = {}
    for c, v, _ in results:
        by.setdefault(c.cls, [0, 0, 0])
        by[c.cls][0] += 1
        by[c.cls][1] += v in ("ok", "LONG")
        by[c.cls][2] += v == "LONG"
    say(f"# {len(results)} cases in {time.time() - t0:.0f} s; per class (held / tried):")
    for cls in sorted(by):
        long = f" ({by[cls][2]} still computing at the limit, stopped cleanly by SIGINT)" if by[cls][2] else ""
        say(f"#   {cls}: {by[cls][1]} / {by[cls][0]}{long}")
    bad = [r for r in results if r[1] not in ("ok", "LONG")]
    long = sum(r[1] == "LONG" for r in results)
    say(f"# {len(results) - len(bad)} held ({long} of them long runs stopped cleanly by SIGINT), {len(bad)} failed, "
        f"0 not judged")
    shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
