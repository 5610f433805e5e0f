#!/usr/bin/env python3
"""Synthesises gbnn_top for each size: Yosys synth_ice40 and, where it fits an iCE40 HX8K or
UP5K, nextpnr-ice40 place-and-route with its timing report (measured Fmax); synth_ecp5 and
synth_xilinx for every size (post-synthesis resource counts, no place-and-route). Writes
results/fpga/synth.json and synth.csv. Each tool run has a time limit; a run past it is recorded
as such, never guessed.

usage: synth.py OUT_DIR [CxL ...]     (make fpga-synth)
       synth.py merge OUT_DIR PART_DIR...   (sizes run separately, one synth.json)
       synth.py pnr OUT_DIR CxL DEVICE      (one place-and-route again, e.g. with a longer limit)
environment: SYNTH_VARIANT: full (default: gbnn_top, every rule), som (gbnn_top with
SUM_OF_SUM=0, the sum-of-max-only build) or uart (gbnn_uart, the board top, placed on the
iCE40-HX8K breakout board's pins from hx8k_breakout.pcf at its 12 MHz clock);
SYNTH_MODE: hier (default: every module mapped once, without flattening, and the totals taken
from `stat -top`, which multiplies by the instance counts; no optimisation across module
boundaries) or flat (the whole design flattened first, as a vendor flow would; only flat
netlists go on to place-and-route); SYNTH_LIMIT_S (per tool run, default 600), SYNTH_JOBS (Yosys
runs at a time, default 1), SYNTH_PNR=0 (synthesis only, for a host without nextpnr),
SYNTH_FAMILIES (default ice40,ecp5,xilinx).
"""
from concurrent.futures import ThreadPoolExecutor
import json
import os
import platform
import re
import subprocess
import sys
import time

RTL = os.path.dirname(os.path.abspath(__file__))
VARIANT = os.environ.get("SYNTH_VARIANT", "full")
if VARIANT not in ("full", "som", "uart"):
    sys.exit(f"synth.py: SYNTH_VARIANT must be full, som or uart, got {VARIANT!r}")
TOP = "gbnn_uart" if VARIANT == "uart" else "gbnn_top"
CIRCUIT = ["gbnn_circuit.sv", "gbnn_pair.sv", "gbnn_cluster.sv"]
SOURCES = [os.path.join(RTL, f) for f in CIRCUIT + (["uart.sv", "gbnn_uart.sv"] if VARIANT == "uart" else ["gbnn_top.sv"])]
MODE = os.environ.get("SYNTH_MODE", "hier")
if MODE not in ("hier", "flat"):
    sys.exit(f"synth.py: SYNTH_MODE must be hier or flat, got {MODE!r}")
MODE_NAME = {"hier": "hierarchical", "flat": "flat"}[MODE]
PARAMS = "-set SUM_OF_SUM 0 " if VARIANT == "som" else ""
TAG = ("" if VARIANT == "full" else "_" + VARIANT) + "_" + MODE
SIZES = ["3x3", "4x8", "4x16", "8x16", "8x25", "4x100", "8x50", "16x25"]
LIMIT_S = int(os.environ.get("SYNTH_LIMIT_S", "600"))
JOBS = int(os.environ.get("SYNTH_JOBS", "1"))
DO_PNR = os.environ.get("SYNTH_PNR", "1") != "0" and MODE == "flat"
FAMILIES = os.environ.get("SYNTH_FAMILIES", "ice40,ecp5,xilinx").split(",")
# Devices for place-and-route: (name, nextpnr flags, LUTs, FFs).
PNR = [("ice40-hx8k", ["--hx8k", "--package", "ct256"], 7680, 7680),
       ("ice40-up5k", ["--up5k", "--package", "sg48"], 5280, 5280)]
if VARIANT == "uart":  # the board: its pins and its 12 MHz clock as the timing target
    PNR = [("ice40-hx8k", ["--hx8k", "--package", "ct256", "--pcf", os.path.join(RTL, "hx8k_breakout.pcf")],
            7680, 7680)]


def classify(family, cells):
    """Cell counts by kind: LUT, FF, carry, BRAM, LUT RAM, wide-function muxes."""
    out = {"lut": 0, "ff": 0, "carry": 0, "bram": 0, "lutram": 0, "mux": 0, "other": 0}
    for name, n in cells.items():
        if family == "ice40":
            kind = ("lut" if name == "SB_LUT4" else "ff" if name.startswith("SB_DFF") else
                    "carry" if name == "SB_CARRY" else "bram" if name.startswith("SB_RAM") else "other")
        elif family == "ecp5":
            kind = ("lut" if name == "LUT4" else "ff" if name == "TRELLIS_FF" else "carry" if name == "CCU2C" else
                    "bram" if name == "DP16KD" else "lutram" if name.startswith("TRELLIS_DPR") else
                    "mux" if name in ("PFUMX", "L6MUX21") else "other")
        else:
            kind = ("lut" if re.fullmatch(r"LUT[1-6]", name) else "ff" if re.fullmatch(r"FD[CPRSE]E?", name) else
                    "carry" if name.startswith("CARRY") else "bram" if name.startswith("RAMB") else
                    "lutram" if name.startswith("RAM") else "mux" if name.startswith("MUXF") else "other")
        out[kind] += n
    return out


def run(cmd, log):
    """Runs a tool under the limit; returns its exit code, wall seconds and CPU seconds (on a
    shared machine the wall time says more about the load than about the tool)."""
    t = time.time()
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
        try:
            _, status, usage = os.wait4(p.pid, 0) if LIMIT_S <= 0 else wait_limited(p)
            rc = os.waitstatus_to_exitcode(status)
        except subprocess.TimeoutExpired:
            p.kill()
            _, _, usage = os.wait4(p.pid, 0)
            rc = "timeout"
    run.cpu = round(usage.ru_utime + usage.ru_stime, 1)
    run.mem_mb = round(usage.ru_maxrss / 1024)  # peak resident memory (kB on Linux)
    return rc, round(time.time() - t, 1)


def wait_limited(p):
    """os.wait4 on p with SYNTH_LIMIT_S of wall time."""
    end = time.time() + LIMIT_S
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            return pid, status, usage
        if time.time() > end:
            raise subprocess.TimeoutExpired(p.args, LIMIT_S)
        time.sleep(0.5)


def synth(family, c, l, out):
    stem = os.path.join(out, f"gbnn_{c}x{l}{TAG}_{family}")
    if MODE == "flat":
        cmd = {"ice40": f"synth_ice40 -top {TOP} -json {stem}.json",
               "ecp5": f"synth_ecp5 -nowidelut -top {TOP}", "xilinx": f"synth_xilinx -top {TOP} -family xc7 -flatten"}[family]
    else:  # synth_xilinx keeps the hierarchy unless told -flatten
        cmd = {"ice40": f"synth_ice40 -noflatten -top {TOP}", "ecp5": f"synth_ecp5 -nowidelut -noflatten -top {TOP}",
               "xilinx": f"synth_xilinx -top {TOP} -family xc7"}[family]
    # ECP5 without wide LUTs (-nowidelut: LUT4s only, no PFUMX/L6MUX21 LUT5–7): ABC's depth-driven
    # choice of wide LUTs, made per module in a hierarchical run, put the full 4x8 61 % above its
    # flat count; with LUT4s alone the two modes agree within 6 % (manual, "Hierarchical against flat").
    script = (f"read_verilog -sv {' '.join(SOURCES)}; chparam -set C {c} -set L {l} {PARAMS}{TOP}; {cmd}; "
              f"tee -q -o {stem}.stat.json stat -json -top {TOP}")
    # Pass headers with time stamps, and the time per pass at the end: where a long run spends it.
    rc, secs = run(["yosys", "-t", "-v", "2", "-d", "-p", script], stem + ".yosys.log")
    row = {"family": family, "tool": "yosys " + " ".join(x for x in cmd.split() if x in ("-noflatten", "-flatten", "-nowidelut")
                                                         or x.startswith("synth_")),
           "seconds": secs, "cpu_seconds": run.cpu, "mem_mb": run.mem_mb, "mode": MODE_NAME,
           "kind": "post-synthesis estimate"}
    if rc != 0:
        row["error"] = f"yosys exceeded {LIMIT_S} s" if rc == "timeout" else f"yosys exit {rc}"
        return row
    with open(stem + ".stat.json") as f:  # (yosys -t stamps every line, tee'd ones too)
        text = re.sub(r"(?m)^\[[0-9.]+\] ", "", f.read())
    # Yosys 0.23's `stat -json -top` prints its hierarchy listing into the JSON: keep JSON lines.
    text = "\n".join(x for x in text.splitlines() if x.strip()[:1] in ('"', "{", "}", ""))
    # "design" is the whole hierarchy under TOP, each module's cells times its instances.
    cells = {k: v for k, v in json.loads(text)["design"]["num_cells_by_type"].items() if not k.startswith("$paramod")}
    row["cells"] = cells
    row.update(classify(family, cells))
    return row


def pnr(dev, flags, c, l, out):
    stem = os.path.join(out, f"gbnn_{c}x{l}{TAG}_ice40")
    log = os.path.join(out, f"gbnn_{c}x{l}{TAG}_{dev}.nextpnr.log")
    cmd = ["nextpnr-ice40", *flags, "--json", stem + ".json", "--pcf-allow-unconstrained",
           "--freq", "12" if VARIANT == "uart" else "100",
           "--timing-allow-fail", "--seed", "1", "--asc", os.path.join(out, f"gbnn_{c}x{l}{TAG}_{dev}.asc")]
    rc, secs = run(cmd, log)
    return pnr_result(dev, flags, log, rc, secs)


def pnr_result(dev, flags, log, rc, secs):
    """A place-and-route row from nextpnr's log: Fmax after routing, logic cells used."""
    row = {"device": dev, "tool": "nextpnr-ice40 " + " ".join(os.path.basename(f) for f in flags), "seconds": secs,
           "cpu_seconds": getattr(run, "cpu", None)}
    text = open(log, errors="replace").read()
    if rc != 0:
        last = [x for x in text.splitlines() if "ERROR" in x][-1:] or [f"exit {rc}"]
        row["error"] = f"nextpnr exceeded {LIMIT_S} s" if rc == "timeout" else last[0].strip()
        return row
    fmax = re.findall(r"Max frequency for clock '[^']*': ([0-9.]+) MHz", text)
    lcs = re.findall(r"ICESTORM_LC:\s+(\d+)/\s*(\d+)", text)
    row["fmax_mhz"] = float(fmax[-1]) if fmax else None  # the last report is after routing
    if lcs:
        row["logic_cells"], row["logic_cells_total"] = int(lcs[-1][0]), int(lcs[-1][1])
    return row


def repnr(out, size, dev):
    """Re-runs one place-and-route (with SYNTH_LIMIT_S) from the saved netlist; replaces its row."""
    c, l = map(int, size.split("x"))
    flags = next(f for d, f, _, _ in PNR if d == dev)
    row = pnr(dev, flags, c, l, os.path.join(out, "work"))
    row["note"] = f"re-run alone (synth.py pnr, limit {LIMIT_S} s)"
    print(f"{size} {dev}: {row}", flush=True)
    with open(os.path.join(out, "synth.json")) as f:
        doc = json.load(f)
    entry = next(e for e in doc["sizes"] if key(e) == (c, l, VARIANT, "flat", None))
    entry["pnr"] = [p for p in entry["pnr"] if p["device"] != dev] + [row]
    entry["command"] = entry.get("command", "") + f"; SYNTH_LIMIT_S={LIMIT_S} synth.py pnr {out} {size} {dev}"
    write(out, doc)


def cpu_model():
    try:
        return next(x.split(":", 1)[1].strip() for x in open("/proc/cpuinfo") if x.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor()


def key(e):
    """An entry's identity: size and build variant (entries without one are the full build)."""
    return e["clusters"], e["neurons"], e.get("variant", "full"), e.get("mode", "flat"), e.get("rtl")


def merge(out, parts):
    """Adds the entries of other runs' synth.json to OUT_DIR's. A part's entry of the same size,
    build, mode and RTL as one already there replaces its rows of the same family or device and
    keeps the others (so the families of one size may come from separate runs); entries of an
    older RTL (marked "rtl") stay beside the current one's."""
    with open(os.path.join(out, "synth.json")) as f:
        doc = json.load(f)
    for part in parts:
        with open(os.path.join(part, "synth.json")) as f:
            other = json.load(f)
        for e in other["sizes"]:
            e.setdefault("command", other["command"])  # (parts written before entries carried theirs)
            old = next((x for x in doc["sizes"] if key(x) == key(e)), None)
            if old is None:
                doc["sizes"].append(e)
                continue
            fams = {r["family"] for r in e["synth"]}
            devs = {p["device"] for p in e["pnr"]}
            old["synth"] = [r for r in old["synth"] if r["family"] not in fams] + e["synth"]
            old["pnr"] = [p for p in old["pnr"] if p["device"] not in devs] + e["pnr"]
            if old.get("command") != e["command"]:
                old["command"] = f"{old.get('command', '')}; {e['command']}"
    write(out, doc)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "merge":
        return merge(sys.argv[2], sys.argv[3:])
    if len(sys.argv) == 5 and sys.argv[1] == "pnr":
        return repnr(*sys.argv[2:])
    if len(sys.argv) < 2:
        sys.exit("usage: synth.py OUT_DIR [CxL ...]")
    out, sizes = sys.argv[1], sys.argv[2:] or SIZES
    work = os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)
    def version(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
            return (r.stdout + r.stderr).strip().splitlines()[0]
        except (OSError, IndexError):
            return "not installed"
    # The run's own command goes into each of its entries; the file's is the target that makes it all.
    command = " ".join(f"{k}={os.environ[k]}" for k in ("SYNTH_VARIANT", "SYNTH_MODE", "SYNTH_FAMILIES", "SYNTH_PNR",
                                                        "SYNTH_LIMIT_S") if k in os.environ)
    command += (f" nice -n {os.nice(0)}" if os.nice(0) else "") + " python3 fpga-model/rtl/synth.py " + " ".join(sys.argv[1:])
    doc = {"command": "make fpga-synth (fpga-model/rtl/synth.py; each entry's command in the entry)",
           "machine": os.environ.get("SYNTH_MACHINE", f"{platform.machine()}, {os.cpu_count()} cores, {cpu_model()}"),
           "jobs": JOBS,
           "tools": {"yosys": version(["yosys", "-V"]), "nextpnr-ice40": version(["nextpnr-ice40", "--version"])},
           "top": "gbnn_top (gbnn_circuit behind a byte-wide host port)", "limit_s": LIMIT_S, "sizes": []}
    parsed = []
    for size in sizes:
        m = re.fullmatch(r"(\d+)x(\d+)", size)
        if not m:
            sys.exit(f"synth.py: size must be CxL, got {size!r}")
        parsed.append((int(m[1]), int(m[2])))
    # Entries of other sizes and builds already in OUT_DIR stay (one file holds every build).
    old = os.path.join(out, "synth.json")
    if os.path.exists(old):
        with open(old) as f:
            doc["sizes"] = [e for e in json.load(f)["sizes"] if key(e)[2:] != (VARIANT, MODE_NAME, None)
                            or key(e)[:2] not in parsed]

    def job(c, l, family):
        row = synth(family, c, l, work)
        print(f"{c}x{l} {family}: {row}", flush=True)
        pnrs = []
        if family == "ice40" and "error" not in row and DO_PNR:
            for dev, flags, luts, ffs in PNR:
                if row["lut"] <= luts and row["ff"] <= ffs:
                    p = pnr(dev, flags, c, l, work)
                else:
                    p = {"device": dev, "error": f"does not fit: {row['lut']} LUT4 / {row['ff']} FF "
                                                 f"after synthesis, the device has {luts} / {ffs}"}
                print(f"{c}x{l} {dev}: {p}", flush=True)
                pnrs.append(p)
        return row, pnrs

    with ThreadPoolExecutor(JOBS) as pool:
        futures = [(c, l, [pool.submit(job, c, l, f) for f in FAMILIES]) for c, l in parsed]
        for c, l, fs in futures:
            entry = {"clusters": c, "neurons": l, "variant": VARIANT, "mode": MODE_NAME, "top": TOP,
                     "command": command.strip(), "synth": [], "pnr": []}
            for f in fs:
                row, pnrs = f.result()
                entry["synth"].append(row)
                entry["pnr"] += pnrs
            doc["sizes"].append(entry)
            write(out, doc)


def write(out, doc):
    order = {"full": 0, "som": 1, "uart": 2}
    for e in doc["sizes"]:
        e["synth"].sort(key=lambda r: ["ice40", "ecp5", "xilinx"].index(r["family"]))
    doc["sizes"].sort(key=lambda e: (order[e.get("variant", "full")], e["clusters"] * e["neurons"], e["clusters"],
                                     e.get("mode", "flat") != "flat", "rtl" in e))
    with open(os.path.join(out, "synth.json.tmp"), "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(os.path.join(out, "synth.json.tmp"), os.path.join(out, "synth.json"))
    lines = ["clusters,neurons,variant,mode,family,kind,lut,ff,carry,bram,lutram,mux,seconds,cpu_seconds,rtl,error"]
    for e in doc["sizes"]:
        v, m, rtl = e.get("variant", "full"), e.get("mode", "flat"), e.get("rtl", "")
        for r in e["synth"]:
            lines.append(",".join(str(x) for x in [e["clusters"], e["neurons"], v, m, r["family"], r["kind"],
                                                   *(r.get(k, "") for k in ("lut", "ff", "carry", "bram", "lutram", "mux")),
                                                   r["seconds"], r.get("cpu_seconds", ""), rtl,
                                                   r.get("error", "").replace(",", ";")]))
        for p in e["pnr"]:
            lines.append(",".join(str(x) for x in [e["clusters"], e["neurons"], v, m, p["device"], "placed and routed",
                                                   p.get("logic_cells", ""), "", "", "", "", "", p.get("seconds", ""),
                                                   p.get("cpu_seconds", ""), rtl,
                                                   p.get("error", f"fmax {p.get('fmax_mhz')} MHz").replace(",", ";")]))
    with open(os.path.join(out, "synth.csv"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
