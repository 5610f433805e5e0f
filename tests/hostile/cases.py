"""Fixtures, working base command lines and the hand-written hostile cases of run.py."""

import gzip
import os
import random
import re
import signal
import struct
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Options whose value is an input path (given hostile paths by the generated cases).
INPUT_OPTIONS = {"input", "labels", "model", "net", "probes", "messages", "db", "queries", "index", "result", "train",
                 "test", "train-labels", "test-labels",
                 "truth", "projection", "digits", "synth-report", "firmware"}

# A command line that works on the fixtures, per leaf command ({fx}: fixtures, {w}: the case's folder).
BASES = {
    "gbnn store": ["--clusters", "4", "--neurons", "8", "--messages", "{fx}/m.csv", "-o", "{w}/net.nb"],
    "gbnn retrieve": ["--net", "{fx}/net.nb", "--probes", "{fx}/p.csv", "--rule", "sum-of-sum", "-o", "{w}/r.csv"],
    "gbnn export": ["--net", "{fx}/net.nb", "-o", "{w}/net.bin"],
    "gbnn generate": ["--clusters", "4", "--neurons", "8", "--messages", "20", "--probes", "5", "--erased", "1",
                      "-o", "{w}/gen"],
    "gbnn score": ["--result", "{fx}/r.csv", "--truth", "{fx}/m5.csv", "--json", "{w}/s.json"],
    "gbnn experiment": ["--scenario", "1", "--probes", "8", "--erased", "1..1", "--rules", "joint", "--gammas",
                        "-o", "{w}/exp"],
    "fpga": ["--clusters", "4", "--neurons", "8", "--messages", "20", "--probes", "5", "-o", "{w}/f.json"],
    "hwcost": ["--clusters", "4", "--neurons", "8", "--messages", "20", "--probes", "5", "--latency-probes", "2",
               "-o", "{w}/hw"],
    "flyhash hash": ["-i", "{fx}/x.csv", "--code-bits", "32", "--ones-per-row", "2", "--winners", "4",
                     "-o", "{w}/c.bin"],
    "flyhash projection": ["--input-dim", "8", "--code-bits", "16", "--ones-per-row", "2", "-o", "{w}/pr.csv"],
    "flyhash search": ["--db", "{fx}/codes.bin", "--queries", "{fx}/codes.bin", "--neighbours", "3",
                       "-o", "{w}/s.csv"],
    "flynn fit": ["-i", "{fx}/x.csv", "--labels", "{fx}/y.csv", "--code-bits", "32", "--ones-per-row", "2",
                  "--winners", "4", "-o", "{w}/f.model"],
    "flynn predict": ["--model", "{fx}/flynn.model", "-i", "{fx}/x.csv", "-o", "{w}/pred.csv"],
    "flyhash index build": ["-i", "{fx}/x.csv", "--code-bits", "32", "--ones-per-row", "2", "--winners", "4",
                            "-o", "{w}/i.idx"],
    "ocnn cluster": ["-i", "{fx}/pts.csv", "--iters", "60", "-o", "{w}/l.csv", "--json", "{w}/l.json"],
    "cortical fit": ["-i", "{fx}/img.csv", "--labels", "{fx}/imgy.csv", "--levels", "3", "--minicolumns", "4",
                     "--epochs", "1", "-o", "{w}/c.model"],
    # Commands whose defaults start a long workload (Fashion-MNIST, all FCPS sets, the paper's
    # sizes): a small one, so that every value is judged within the case's limit.
    "gbnn bench": ["--scenario", "1", "--probes", "64", "--baseline-probes", "0", "--rules", "sum-of-sum",
                   "--device", "cpu", "-o", "{w}/b.json"],
    "flyhash bench": ["-i", "{fx}/fm", "--max-exp", "1", "--db-codes", "1000", "--queries", "10", "--neighbours", "5",
                      "-o", "{w}/fb.json"],
    "flyhash flynn": ["--train", "{fx}/fm/train-images-idx3-ubyte.gz", "--test", "{fx}/fm/t10k-images-idx3-ubyte.gz",
                      "--code-bits", "64", "--ones-per-row", "4", "--winners", "8", "--decay", "0.5", "--json", "{w}/ff.json"],
    "flyhash eval": ["-i", "{fx}/fm", "--queries", "10", "--digits", "{fx}/digits.csv", "--digit-queries", "10",
                     "--winners", "4", "--neighbours", "5", "-o", "{w}/ev"],
    "ocnn bench": ["--sizes", "50", "--iters", "30", "--device", "cpu", "-o", "{w}/ob.json"],
    "ocnn experiment": ["-i", os.path.join(REPO, "data/fcps"), "--labels", os.path.join(REPO, "lib/data/fcps"),
                        "--iters", "30", "--seeds", "1", "-o", "{w}/oe"],
    "cortical bench": ["--minicolumns", "4", "--levels", "3", "--cpu-max-levels", "3", "--device", "cpu",
                       "-o", "{w}/cb.json"],
}


def with_option(base, opt, value):
    """`base` with `--opt value` (replacing its value if `base` has the option)."""
    argv = list(base)
    flags = {"--" + opt} | ({"-i"} if opt == "input" else set()) | ({"-o"} if opt == "out" else set())
    for i, a in enumerate(argv):
        if a in flags and i + 1 < len(argv):
            argv[i + 1] = value
            return argv
    return argv + ["--" + opt, value]


def npy(shape, descr="<f4", payload=b""):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


def fixtures(binary, fx, seed=31):
    """The user's files every case reads (hashed before and after the run), drawn from `seed`."""
    rnd = random.Random(seed)
    w = lambda name, data: open(os.path.join(fx, name), "wb" if isinstance(data, bytes) else "w").write(data)  # noqa: E731
    w("m.csv", "".join(",".join(str(rnd.randrange(8)) for _ in range(4)) + "\n" for _ in range(30)))
    msgs = open(os.path.join(fx, "m.csv")).read().splitlines()
    w("m5.csv", "\n".join(msgs[:5]) + "\n")
    w("p.csv", "".join(",".join("?" if j == 0 else s for j, s in enumerate(m.split(","))) + "\n" for m in msgs[:5]))
    rows = [[rnd.gauss(3 * (i % 3), 1) for _ in range(8)] for i in range(60)]
    w("x.csv", "".join(",".join(f"{v:.4f}" for v in r) + "\n" for r in rows))
    w("y.csv", "".join(f"{i % 3}\n" for i in range(60)))
    w("pts.csv", "".join(f"{(i % 2) * 10 + rnd.random():.3f},{(i % 2) * 10 + rnd.random():.3f}\n" for i in range(40)))
    w("img.csv", "".join(",".join(str(rnd.randrange(17) * (j % 8 < 4) if i % 2 else rnd.randrange(17) * (j % 8 >= 4))
                                  for j in range(64)) + "\n" for i in range(40)))
    w("imgy.csv", "".join(f"{i % 2}\n" for i in range(40)))
    w("garbled.bin", bytes(rnd.randrange(256) for _ in range(3000)))
    w("empty.csv", "")
    w("zerodim.csv", "a\n\n")
    w("zerodim.npy", npy("(5, 0)"))
    w("ro.csv", "read-only, the user's\n")
    os.chmod(os.path.join(fx, "ro.csv"), 0o444)
    run = lambda *a: subprocess.run([binary, "-q", *a], check=True, capture_output=True)  # noqa: E731
    run("gbnn", "store", "--clusters", "4", "--neurons", "8", "--messages", f"{fx}/m.csv", "-o", f"{fx}/net.nb")
    run("gbnn", "retrieve", "--net", f"{fx}/net.nb", "--probes", f"{fx}/p.csv", "--rule", "sum-of-sum", "-o",
        f"{fx}/r.csv")
    run("flyhash", "hash", "-i", f"{fx}/x.csv", "--code-bits", "32", "--ones-per-row", "2", "--winners", "4", "-o",
        f"{fx}/codes.bin")
    run("flynn", "fit", "-i", f"{fx}/x.csv", "--labels", f"{fx}/y.csv", "--code-bits", "32", "--ones-per-row", "2",
        "--winners", "4", "-o", f"{fx}/flynn.model")
    # Binary forms of x.csv for the truncation cases.
    vals = [v for r in rows for v in r]
    w("x.npy", npy("(60, 8)", payload=struct.pack("<480f", *vals)))
    w("x.csv.gz", gzip.compress(open(os.path.join(fx, "x.csv"), "rb").read()))
    w("x.idx", b"\x00\x00\x0d\x02" + struct.pack(">II", 60, 8) + struct.pack(">480f", *vals))
    # A small Fashion-MNIST folder (28 x 28 bytes, 10 classes) and a small digits file, for the
    # benchmarks' base lines.
    os.makedirs(os.path.join(fx, "fm"))
    for part, n in (("train", 300), ("t10k", 60)):
        ys = [i % 10 for i in range(n)]
        px = bytes(min(255, max(0, int(rnd.gauss(20 * y + 30, 40)))) if j % 28 // 3 == y else rnd.randrange(30)
                   for y in ys for j in range(784))
        w(f"fm/{part}-images-idx3-ubyte.gz", gzip.compress(b"\0\0\x08\x03" + struct.pack(">III", n, 28, 28) + px))
        w(f"fm/{part}-labels-idx1-ubyte.gz", gzip.compress(b"\0\0\x08\x01" + struct.pack(">I", n) + bytes(ys)))
    w("digits.csv", "".join(",".join(str(rnd.randrange(17)) for _ in range(64)) + f",{i % 10}\n" for i in range(120)))


def read_text(p):
    try:
        return open(p, "rb").read()
    except OSError:
        return None


def cases(Case, seed=31):
    out = []
    rnd = random.Random(seed)  # fresh cut points and flipped bytes per seed (31: the quick set's)
    q = True  # in the quick set

    # ---- lost data: concurrent multi-file writers (one run's set, never a mix)
    for k in range(12):
        n = 50 + 37 * k
        sh = (f"$NB -q gbnn generate --clusters 4 --neurons 16 --messages {n} --probes 5 --erased 1 --seed 1 -o ref1 && "
              f"$NB -q gbnn generate --clusters 4 --neurons 16 --messages {n} --probes 5 --erased 1 --seed 2 -o ref2 && "
              f"for i in 1 2 3; do $NB -q gbnn generate --clusters 4 --neurons 16 --messages {n} --probes 5 --erased 1 "
              f"--seed 1 -o out & $NB -q gbnn generate --clusters 4 --neurons 16 --messages {n} --probes 5 --erased 1 "
              f"--seed 2 -o out & wait; done")

        def check(ctx):
            w = ctx["w"]
            got = [read_text(f"{w}/out/{f}") for f in ("messages.csv", "probes.csv", "truth.csv")]
            for ref in ("ref1", "ref2"):
                if got == [read_text(f"{w}/{ref}/{f}") for f in ("messages.csv", "probes.csv", "truth.csv")]:
                    return None
            return "the folder holds a mix of both runs' files"
        out.append(Case("lost data: concurrent multi-file writers", f"two generate runs into one folder, {n} msgs",
                        [], shell=sh, check=check, expect={0}, timeout=60, quick=q and k < 2))

    # ---- lost data: the experiment journal (made by interrupting a run, then tampered with; the
    # resumed run must give the clean run's results, timing columns aside)
    exp = ["gbnn", "experiment", "--scenario", "1", "--probes", "2000", "--erased", "1..7", "--rules",
           "joint,sum-of-sum", "--gammas", "-q"]
    exp_sh = " ".join(exp)
    tamper = {
        "fabricated row": "sed -i '$ s/\"strict\":[0-9.]*/\"strict\":0.123/' exp/partial.jsonl",
        "duplicated row": "tail -1 exp/partial.jsonl >> exp/partial.jsonl",
        "edited header": "sed -i '1 s/scenario=1/scenario=2/' exp/partial.jsonl",
        "truncated row": "truncate -s -7 exp/partial.jsonl",
        "garbage appended": "printf '\\xff\\xfe{{nonsense\\n' >> exp/partial.jsonl",
        "row of another rule": "tail -1 exp/partial.jsonl | sed 's/joint/sum-of-max/' >> exp/partial.jsonl",
        "row of another erased count": "tail -1 exp/partial.jsonl | sed 's/\"erased\":1/\"erased\":9/' >> exp/partial.jsonl",
        "untouched": "true",
    }

    def same_results(c):
        def rows(p):
            t = read_text(p)
            if t is None:
                return None
            lines = [ln.split(",") for ln in t.decode().splitlines()]
            drop = lines[0].index("seconds")
            return [ln[:drop] + ln[drop + 1:] for ln in lines]
        a, b = rows(f"{c['w']}/exp/results.csv"), rows(f"{c['w']}/clean/results.csv")
        if a is None:
            return "no results after the resumed run"
        return None if a == b else "resumed results differ from a clean run"
    for what, cmd in tamper.items():
        sh = (f"$NB {exp_sh} -o clean && ($NB {exp_sh} -o exp 2>/dev/null & pid=$!; "
              f"for i in $(seq 400); do [ -f exp/partial.jsonl ] && [ $(wc -l < exp/partial.jsonl) -ge 3 ] && break; "
              f"sleep 0.02; done; kill -INT $pid; wait $pid; test -f exp/partial.jsonl || echo 'no journal: finished early' >&2; "
              f"{cmd}) && $NB {exp_sh} -o exp")
        out.append(Case("lost data: journals", f"experiment resumed from an interrupted run's journal, {what}", [],
                        shell=sh, check=same_results, timeout=120, quick=False))
    exp_sh += " -o exp"
    sh = f"mkdir exp && echo 'my notes' > exp/partial.jsonl && $NB {exp_sh}; cat exp/partial.jsonl | head -1"
    out.append(Case("lost data: journals", "a user's own file at the journal path", [], shell=sh, timeout=120,
                    check=lambda c: None if b"my notes" in c["out"] or c["rc"] != 0 and not os.path.exists(
                        f"{c['w']}/exp/results.csv") else "the user's file was overwritten"))
    sh = f"mkdir exp && ln -s {{fx}}/m.csv exp/partial.jsonl && $NB {exp_sh}"
    out.append(Case("lost data: journals", "a symlink at the journal path (its target is the user's)", [], shell=sh,
                    timeout=120))

    # ---- lost data: readers with odd rows and delimiters (read right, or refused with the line)
    x = "{fx}/x.csv"
    variants = {
        "semicolons": "sed 's/,/;/g' {fx}/x.csv",
        "tabs": "sed 's/,/\\t/g' {fx}/x.csv",
        "CRLF": "sed 's/$/\\r/' {fx}/x.csv",
        "BOM and header": "(printf '\\xef\\xbb\\xbfa,b,c,d,e,f,g,h\\n'; cat {fx}/x.csv)",
        "quoted fields": "sed 's/\\([-0-9.]*\\)/\"\\1\"/g' {fx}/x.csv",
        "trailing empty rows": "(cat {fx}/x.csv; printf ',,,,,,,\\n,,,,,,,\\n')",
        "empty row inside": "(head -5 {fx}/x.csv; printf ',,,,,,,\\n'; tail -n +6 {fx}/x.csv)",
        "extra header inside": "(head -5 {fx}/x.csv; echo a,b,c,d,e,f,g,h; tail -n +6 {fx}/x.csv)",
        "blank lines and comments": "(echo '# comment'; head -5 {fx}/x.csv; echo; echo '% c'; tail -n +6 {fx}/x.csv)",
        "ragged row": "(head -5 {fx}/x.csv; echo 1,2,3; tail -n +6 {fx}/x.csv)",
        "spaces aligned": "sed 's/,/   /g' {fx}/x.csv",
        "pipes": "sed 's/,/|/g' {fx}/x.csv",
        "NaN field": "(head -5 {fx}/x.csv; echo 1,2,3,4,5,6,7,nan; tail -n +6 {fx}/x.csv)",
        "1e999 field": "(head -5 {fx}/x.csv; echo 1,2,3,4,5,6,7,1e999; tail -n +6 {fx}/x.csv)",
        "no final newline": "head -c -1 {fx}/x.csv",
        "latin-1 byte": "(head -5 {fx}/x.csv; printf '1,2,3,4,5,6,7,\\xe9\\n'; tail -n +6 {fx}/x.csv)",
    }
    hash_args = "--code-bits 32 --ones-per-row 2 --winners 4"
    for what, make in variants.items():
        sh = (f"{make} > v.csv; $NB -q flyhash hash -i {x} {hash_args} -o ref.bin && "
              f"$NB -q flyhash hash -i v.csv {hash_args} -o v.bin")

        def check(c):
            if c["rc"] == 0:
                return None if read_text(f"{c['w']}/v.bin") == read_text(f"{c['w']}/ref.bin") else \
                    "read without an error but the values differ from the comma-separated file"
            return None if c["rc"] == 2 and "v.csv" in c["err"] else "refused without naming the file"
        out.append(Case("lost data: readers (odd rows, delimiters)", f"x.csv with {what}", [], shell=sh, check=check,
                        quick=q))

    # ---- wrong results: ocnn experiment's class files (FCPS .cls) malformed: refused, never scored
    def corrupt(name, edit):
        def setup(ctx):
            os.makedirs(f"{ctx['w']}/cls")
            for f in os.listdir(os.path.join(REPO, "lib/data/fcps")):
                text = open(os.path.join(REPO, "lib/data/fcps", f)).read()
                open(f"{ctx['w']}/cls/{f}", "w").write(edit(text) if f == name else text)
        return setup
    rows = lambda t: [ln for ln in t.splitlines() if not ln.startswith("%")]  # noqa: E731
    edits = {
        "one column": lambda t: "".join(r.split("\t")[1] + "\n" for r in rows(t)),
        "three columns": lambda t: "".join(r + "\t0\n" for r in rows(t)),
        "a row short": lambda t: "\n".join(rows(t)[:-1]) + "\n",
        "a row too many": lambda t: t + f"{len(rows(t)) + 1}\t1\n",
        "keys swapped": lambda t: "\n".join(rows(t)[1::-1] + rows(t)[2:]) + "\n",
        "a negative class": lambda t: t.replace("\n3\t", "\n3\t-", 1),
        "a fractional class": lambda t: re.sub(r"\n3\t(\d+)\n", r"\n3\t\1.5\n", t, count=1),
        "empty": lambda t: "",
        "garbled bytes": lambda t: "\x00\xff" * 50,
    }
    sets = ["Lsun", "Target", "TwoDiamonds", "Hepta", "Tetra", "Atom", "Chainlink", "WingNut"]
    for what, edit in edits.items():
        name = rnd.choice(sets) + ".cls"
        out.append(Case("wrong results: class files", f"ocnn experiment, {name} with {what}",
                        ["ocnn", "experiment", "-i", os.path.join(REPO, "data/fcps"), "--labels", "{w}/cls", "--iters",
                         "30", "--seeds", "1", "-o", "{w}/oe"], setup=corrupt(name, edit), expect={2}, quick=q,
                        check=lambda c, name=name: None if name in c["err"] and not os.path.exists(f"{c['w']}/oe")
                        else "the refusal does not name the file, or results were written"))

    # ---- lost data: partial outputs (nothing written when a later output fails)
    for args, made in [
        (["ocnn", "cluster", "-i", "{fx}/pts.csv", "--iters", "60", "-o", "{w}/l.csv", "--plots", "{fx}/ro.csv/p"], "l.csv"),
        (["ocnn", "cluster", "-i", "{fx}/pts.csv", "--iters", "60", "-o", "{w}/l.csv", "--json", "{fx}/ro.csv/j.json"], "l.csv"),
        (["gbnn", "retrieve", "--net", "{fx}/net.nb", "--probes", "{fx}/p.csv", "--rule", "joint", "-o", "{w}/no/r.csv"], None),
        (["flynn", "fit", "-i", "{fx}/x.csv", "--labels", "{fx}/y.csv", "-o", "{w}/f.model", "--code-bits", "0"], "f.model"),
        (["cortical", "fit", "-i", "{fx}/img.csv", "--labels", "{fx}/imgy.csv", "--levels", "3", "-o", "{w}"], None),
        (["gbnn", "score", "--result", "{fx}/r.csv", "--truth", "{fx}/m5.csv", "--json", "{fx}/ro.csv/s.json"], None),
        (["hwcost", "--clusters", "4", "--neurons", "8", "--messages", "20", "--probes", "5", "-o", "{fx}/ro.csv/x"], None),
    ]:
        out.append(Case("lost data: partial outputs", " ".join(args[:2]) + " with a bad later output", args,
                        expect={1, 2}, quick=q,
                        check=lambda c, made=made: f"{made} was written before the failure" if made and os.path.exists(
                            f"{c['w']}/{made}") else None))

    # ---- lost data: permissions, owners, links
    proj = "$NB -q flyhash projection --input-dim 8 --code-bits 16 --ones-per-row 2 -o"
    perm = {
        "0600 output keeps its mode": (f"echo old > o.csv && chmod 600 o.csv && {proj} o.csv && stat -c %a o.csv",
                                       lambda c: None if c["out"].strip() == b"600" else f"mode now {c['out'].strip()}"),
        "0444 output refused and kept": (f"{proj} {{fx}}/ro.csv", None),
        "symlink written through": (f"echo old > t.csv && ln -s t.csv l.csv && {proj} l.csv && test -L l.csv && grep -c , t.csv",
                                    lambda c: None if c["out"].strip() == b"16" else "link replaced or target not written"),
        "chain of links to a missing file": (f"ln -s l2 l1 && ln -s t.csv l2 && {proj} l1 && test -L l1 && test -L l2 && test -s t.csv",
                                             None),
        "dangling link into a missing folder": (f"ln -s nodir/t.csv l.csv && {proj} l.csv", None),
        "output is a directory": (f"mkdir d && {proj} d", None),
        "multi-file member 0600 kept": ("$NB -q gbnn generate --clusters 4 --neurons 8 --messages 9 -o g && chmod 600 g/messages.csv && "
                                        "$NB -q gbnn generate --clusters 4 --neurons 8 --messages 9 --seed 2 -o g && stat -c %a g/messages.csv",
                                        lambda c: None if c["out"].strip() == b"600" else f"mode now {c['out'].strip()}"),
        "multi-file member symlink written through": (
            "mkdir g && echo x > keep.csv && ln -s ../keep.csv g/messages.csv && "
            "$NB -q gbnn generate --clusters 4 --neurons 8 --messages 9 -o g && test -L g/messages.csv && grep -c , keep.csv",
            lambda c: None if c["out"].strip() == b"9" else "member link replaced"),
    }
    for what, (sh, check) in perm.items():
        expect = {1} if "refused" in what or "read-only folder" in what else ({2} if "directory" in what else None)
        out.append(Case("lost data: permissions, owners, links", what, [], shell=sh, check=check, expect=expect,
                        quick=q))
    if os.geteuid() != 0:  # root writes into a read-only folder
        out.append(Case("lost data: permissions, owners, links", "output in a read-only folder", [],
                        shell=f"mkdir d && chmod 500 d && {proj} d/x.csv; r=$?; chmod 700 d; exit $r", expect={1}))
    if os.geteuid() == 0:
        sh = (f"echo old > o.csv && chown 1234:1234 o.csv && chmod 666 o.csv && {proj} o.csv && stat -c %u:%g o.csv")
        out.append(Case("lost data: permissions, owners, links", "owner of a replaced file kept (root)", [], shell=sh,
                        check=lambda c: None if c["out"].strip() == b"1234:1234" else f"owner now {c['out'].strip()}"))

    # ---- crashes: zero-dimension data, truncated/garbled files of every format, allocation bombs
    readers = [
        ("ocnn cluster", ["ocnn", "cluster", "--iters", "30", "-o", "{w}/l.csv", "-i"]),
        ("flyhash hash", ["flyhash", "hash", "--code-bits", "32", "--ones-per-row", "2", "--winners", "4", "-o", "{w}/c.bin", "-i"]),
        ("flynn predict", ["flynn", "predict", "--model", "{fx}/flynn.model", "-o", "{w}/p.csv", "-i"]),
        ("cortical fit", ["cortical", "fit", "--labels", "{fx}/imgy.csv", "--levels", "3", "-o", "{w}/c.model", "-i"]),
    ]
    for name, argv in readers:
        for f in ("zerodim.csv", "zerodim.npy", "empty.csv", "garbled.bin"):
            out.append(Case("crash: zero-dimension and garbled data", f"{name} -i {f}", argv + ["{fx}/" + f],
                            expect={2}, quick=q))

    def truncations(src, cuts):
        return [(f"{src}[:{k}]", lambda ctx, src=src, k=k: open(f"{ctx['w']}/in", "wb").write(
            open(f"{ctx['fx']}/{src}", "rb").read()[:k])) for k in cuts]

    fresh = lambda top, k: sorted(rnd.sample(range(1, top), k))  # noqa: E731
    for src, cuts in [("x.npy", [0, 5, 9, 10, 60, 127, 128, 129, 500, 2047] + fresh(2047, 4)),
                      ("x.idx", [2, 4, 7, 11, 12, 100, 1931] + fresh(1931, 4)),
                      ("x.csv.gz", [2, 10, 50, 300] + fresh(300, 3)), ("x.csv", [1, 30, 2000] + fresh(2000, 3))]:
        for what, setup in truncations(src, cuts):
            # Text cut at a line end (or inside the first row) is a valid, smaller table.
            out.append(Case("crash: truncated/garbled files", f"flyhash hash -i {what}",
                            readers[1][1] + ["{w}/in"], setup=setup, expect={0, 2} if src == "x.csv" else {2},
                            quick=q and src == "x.npy"))
    for src, argv in [("net.nb", ["gbnn", "retrieve", "--probes", "{fx}/p.csv", "--rule", "joint", "-o", "{w}/r.csv", "--net"]),
                      ("flynn.model", ["flynn", "predict", "-i", "{fx}/x.csv", "-o", "{w}/p.csv", "--model"]),
                      ("codes.bin", ["flyhash", "search", "--queries", "{fx}/codes.bin", "--neighbours", "2", "-o", "{w}/s.csv", "--db"])]:
        size = os.path.getsize  # noqa: F841  (cut points below are fixed: the files are small)
        for k in [0, 1, 7, 8, 12, 16, 24, 40, 64, 100, 200, -1, -8, -33] + [rnd.randrange(-300, 300) for _ in range(4)]:
            def setup(ctx, src=src, k=k):
                b = open(f"{ctx['fx']}/{src}", "rb").read()
                open(f"{ctx['w']}/in", "wb").write(b[:k] if k >= 0 else b[:len(b) + k])
            out.append(Case("crash: truncated/garbled files", f"{src}[:{k}]", argv + ["{w}/in"], setup=setup,
                            expect={2}, quick=q and k in (8, -1)))
            def flip(ctx, src=src, k=k):
                b = bytearray(open(f"{ctx['fx']}/{src}", "rb").read())
                b[abs(k) % len(b)] ^= 0x41
                open(f"{ctx['w']}/in", "wb").write(bytes(b))
            # Code files carry no checksum (a flipped code bit is another code): 0 or 2 there.
            out.append(Case("crash: truncated/garbled files", f"{src} byte {k} flipped", argv + ["{w}/in"], setup=flip,
                            expect={0, 2} if src == "codes.bin" else {2}))
    bombs = {
        "npy claiming 2^40 x 2^20": lambda: npy("(1099511627776, 1048576)", payload=b"\0" * 64),
        "npy claiming 10^9 x 10^3 f8": lambda: npy("(1000000000, 1000)", "<f8", b"\0" * 64),
        "npy deeply nested header": lambda: b"\x93NUMPY\x01\x00" + struct.pack("<H", 600) + (b"{'shape': " + b"(" * 280 + b")" * 280).ljust(599) + b"\n",
        "idx claiming 2^32-1 x 2^32-1": lambda: b"\x00\x00\x0d\x02" + b"\xff" * 8 + b"\0" * 64,
        "gzip bomb (1 GiB of zeros)": lambda: gzip_bomb(),
        "csv line of 40 MB": lambda: b"7," * 20_000_000 + b"7\n",
        "npz member claiming 4 GB": lambda: npz_bomb(),
    }
    for what, make in bombs.items():
        def setup(ctx, make=make):
            open(f"{ctx['w']}/in", "wb").write(make())
        # The 40 MB line needs 40 MB of text and 80 MB of values: 100M refuses it.
        mem = "100M" if "csv" in what else "256M"
        for name, argv in readers[:2]:
            out.append(Case("crash: allocation bombs", f"{name} -i <{what}> --max-memory {mem}",
                            ["--max-memory", mem] + argv + ["{w}/in"], setup=setup, expect={2}, timeout=60,
                            quick=q and "csv" not in what and "gzip" not in what))

    # ---- crashes: huge sizes from options (the documented caps and the budget)
    for argv in [["cortical", "bench", "--levels", "30", "--device", "cpu"],
                 ["ocnn", "bench", "--sizes", "10000000", "--device", "cpu"],
                 ["fpga", "--messages", "1000000000000", "-o", "{w}/f.json"],
                 ["hwcost", "--messages", "1000000000000", "-o", "{w}/hw"],
                 ["gbnn", "generate", "--clusters", "100000", "--neurons", "100000", "--messages", "1000000000", "-o", "{w}/g"],
                 ["gbnn", "store", "--clusters", "1000000", "--neurons", "1000000", "--messages", "{fx}/m.csv", "-o", "{w}/n"],
                 ["flyhash", "projection", "--input-dim", "4000000000", "--code-bits", "4000000000", "--ones-per-row", "4000000000", "-o", "{w}/p"],
                 ["flyhash", "search", "--db", "{fx}/codes.bin", "--queries", "{fx}/codes.bin", "--neighbours", "18446744073709551615", "-o", "{w}/s"],
                 ["gbnn", "experiment", "--scenario", "2", "--probes", "18446744073709551615", "-o", "{w}/e"],
                 ["cortical", "fit", "-i", "{fx}/img.csv", "--labels", "{fx}/imgy.csv", "--epochs", "4294967295", "--exposure", "4294967295", "-o", "{w}/m"],
                 ["--threads", "4096", "ocnn", "cluster", "-i", "{fx}/pts.csv", "--iters", "30", "-o", "{w}/l.csv"]]:
        out.append(Case("crash: huge sizes from options", " ".join(argv[:4]), argv, timeout=30, quick=q))
    out.append(Case("crash: huge sizes from options", "RAYON_NUM_THREADS=100000",
                    ["ocnn", "cluster", "-i", "{fx}/pts.csv", "--iters", "30", "-o", "{w}/l.csv"],
                    env={"RAYON_NUM_THREADS": "100000"}, quick=q))

    # ---- hangs: named pipes, devices, endless input, signals
    out.append(Case("hang: FIFOs, devices, endless input", "FIFO input with no writer, then SIGTERM",
                    ["ocnn", "cluster", "-i", "{w}/fifo", "-o", "{w}/l.csv"], setup=lambda c: os.mkfifo(f"{c['w']}/fifo"),
                    signal_after=(signal.SIGTERM, 2.5), check=lambda c: None if "waiting for a writer" in c["err"] else
                    "no word while waiting", quick=q))
    out.append(Case("hang: FIFOs, devices, endless input", "FIFO output with no reader, then SIGINT",
                    ["flyhash", "projection", "--input-dim", "8", "--code-bits", "16", "--ones-per-row", "2", "-o", "{w}/fifo"],
                    setup=lambda c: os.mkfifo(f"{c['w']}/fifo"), signal_after=(signal.SIGINT, 2.5),
                    check=lambda c: None if "waiting for a reader" in c["err"] else "no word while waiting", quick=q))
    out.append(Case("hang: FIFOs, devices, endless input", "FIFO with a late writer",
                    [], shell="mkfifo f; (sleep 1.5; cat {fx}/pts.csv > f) & $NB -q ocnn cluster -i f --iters 30 -o l.csv && wc -l < l.csv",
                    expect={0}, check=lambda c: None if c["out"].strip() == b"40" else f"read {c['out'].strip()} rows"))
    for dev in ("/dev/zero", "/dev/urandom", "/dev/null", "/dev/full", "/proc/self/mem", "/dev/tty", "/"):
        out.append(Case("hang: FIFOs, devices, endless input", f"input {dev}",
                        ["ocnn", "cluster", "--iters", "30", "-o", "{w}/l.csv", "-i", dev], expect={1, 2}, quick=q))
    out.append(Case("hang: FIFOs, devices, endless input", "output /dev/full",
                    ["flyhash", "projection", "--input-dim", "8", "--code-bits", "16", "--ones-per-row", "2", "-o", "/dev/full"],
                    expect={1}, quick=q))
    out.append(Case("hang: FIFOs, devices, endless input", "endless standard input, --max-memory 64M", [],
                    shell="yes 1,2,3 | $NB --max-memory 64M flyhash hash --code-bits 32 --ones-per-row 2 --winners 2 "
                          "-o c.bin -i -", expect={2}, timeout=60, quick=q))
    out.append(Case("hang: FIFOs, devices, endless input", "--help > /dev/full", [], shell="$NB --help > /dev/full",
                    expect={1}, quick=q))
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGALRM, signal.SIGQUIT):
        for what, argv in [("gbnn experiment", ["gbnn", "experiment", "--scenario", "2", "-o", "{w}/exp"]),
                           ("ocnn cluster", ["ocnn", "cluster", "-i", "{fx}/pts.csv", "--iters", "1000000", "-o", "{w}/l.csv",
                                             "--json", "{w}/l.json"])]:
            out.append(Case("hang: signals", f"{what}, {signal.Signals(sig).name} after 1.5 s", argv,
                            signal_after=(sig, 1.5), expect={128 + sig}, timeout=30, quick=q and sig == signal.SIGHUP,
                            check=lambda c: "output written though interrupted" if os.path.exists(f"{c['w']}/l.csv") or
                            os.path.exists(f"{c['w']}/exp/results.csv") else None))
    return out


def gzip_bomb():
    import io
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as g:
        chunk = b"0" * (1 << 20)
        for _ in range(1024):
            g.write(chunk)
    return buf.getvalue()


def npz_bomb():
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w", force_zip64=True) as m:
            m.write(npy("(1000000000, 1)"))
            chunk = b"\0" * (1 << 20)
            for _ in range(600):
                m.write(chunk)
    return buf.getvalue()
