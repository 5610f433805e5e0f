#!/usr/bin/env python3
"""What the firmware template costs on each board (`make mcu-cost`): flash and RAM from the linker
(`llvm-size -A`: .text, .rodata, .data, .bss), the stack's high-water mark (stack painting, logged
by the firmware), and instructions per retrieval per rule (QEMU `-icount shift=0`), for the 8x50
demo network and for the largest 8-cluster network whose W fits the flash the board sets aside
(`board.rs`: flash less 32 KiB for code). The template is built without the self-test (what a user
ships), into mcu/target/template. Writes results/mcu/cost.{csv,json,md}; mcu/net is restored to
the 8x50 export afterwards.

Usage: python3 mcu/cost.py NEUROBITS_BIN LLVM_SIZE DEFMT_PRINT
"""
import csv, json, math, os, re, subprocess, sys

BIN, LLVM_SIZE, DEFMT_PRINT = sys.argv[1:4]
CARGO = ["cargo", "+1.95.0"]
BOARDS = [  # machine, core, target, qemu command, flash, RAM (as mcu/src/board.rs)
    ("microbit", "Cortex-M0", "thumbv6m-none-eabi", ["qemu-system-arm", "-machine", "microbit"], 256 << 10, 16 << 10),
    ("lm3s6965evb", "Cortex-M3", "thumbv7m-none-eabi", ["qemu-system-arm", "-cpu", "cortex-m3", "-machine", "lm3s6965evb"], 256 << 10, 64 << 10),
    ("mps2-an386", "Cortex-M4F", "thumbv7em-none-eabihf", ["qemu-system-arm", "-machine", "mps2-an386"], 4 << 20, 4 << 20),
    ("mps2-an505", "Cortex-M33", "thumbv8m.main-none-eabihf", ["qemu-system-arm", "-machine", "mps2-an505"], 4 << 20, 4 << 20),
    ("sifive_e", "RV32IMAC", "riscv32imac-unknown-none-elf", ["qemu-system-riscv32", "-machine", "sifive_e"], 4 << 20, 16 << 10),
]
CODE_RESERVE = 32 << 10
RULES = ["sum-of-sum", "sum-of-max", "bail-out-early", "joint"]
OUT = "out/mcu/cost"


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def weight_bytes(c, l):
    return c * l * c * math.ceil(l / 64) * 8


def largest_l(budget, c=8):
    return max(l for l in range(1, 4096) if weight_bytes(c, l) <= budget)


def export(c, l, stored, probes, tag):
    d = f"{OUT}/{tag}"
    sh([BIN, "-q", "gbnn", "generate", "--clusters", str(c), "--neurons", str(l), "--messages", str(stored),
        "--probes", str(probes), "--erased", "3", "--seed", "7", "-o", d])
    sh([BIN, "-q", "gbnn", "store", "--clusters", str(c), "--neurons", str(l), "--messages", f"{d}/messages.csv",
        "-o", f"{d}/net.nbg"])
    sh([BIN, "-q", "gbnn", "export", "--net", f"{d}/net.nbg", "-o", "mcu/net/net.bin"])
    return os.path.abspath(f"{d}/probes.csv")


def build(target):
    sh(CARGO + ["build", "-q", "--release", "--target", target, "--target-dir", "target/template"], cwd="mcu")
    return f"mcu/target/template/{target}/release/neurobits-mcu"


def sections(elf):
    out = subprocess.run([LLVM_SIZE, "-A", elf], check=True, capture_output=True, text=True).stdout
    sizes = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\.\w+)\s+(\d+)", out, re.M)}
    return {k: sizes.get(k, 0) for k in [".text", ".rodata", ".data", ".bss"]}


def run(qemu, elf, probes):
    semi = f"enable=on,target=native,arg=neurobits-mcu,arg=probes={probes},arg=rule=all"
    cmd = ["timeout", "600"] + qemu + ["-nographic", "-monitor", "none", "-serial", "none", "-icount", "shift=0",
                                       "-semihosting-config", semi, "-kernel", elf]
    raw = subprocess.run(cmd, check=True, capture_output=True).stdout
    text = subprocess.run([DEFMT_PRINT, "-e", elf], input=raw, check=True, capture_output=True).stdout.decode()
    ipr = {m.group(1): int(m.group(2)) for m in re.finditer(r"^rule (\S+) .*instructions_per_retrieval=(\d+)", text, re.M)}
    stack = int(re.search(r"stack_peak=(\d+)", text).group(1))
    digest = re.search(r"^digest (\d+)", text, re.M).group(1)
    return ipr, stack, digest, " ".join(cmd)


def main():
    os.makedirs("results/mcu", exist_ok=True)
    rows = []
    try:
        for machine, core, target, qemu, flash, ram in BOARDS:
            for tag, (c, l, stored, probes) in [
                ("8x50", (8, 50, 400, 100)),
                ("largest", (8, largest_l(flash - CODE_RESERVE), None, 10)),
            ]:
                stored = stored or c * l  # the demo's load: C·L messages (400 for 8x50)
                probe_file = export(c, l, stored, probes, f"{machine}-{tag}")
                elf = build(target)
                s = sections(elf)
                ipr, stack, digest, cmd = run(qemu, elf, probe_file)
                rows.append({
                    "board": machine, "core": core, "target": target, "network": f"{c}x{l}",
                    "stored": stored, "probes": probes, "w_bytes": weight_bytes(c, l),
                    "flash_bytes": s[".text"] + s[".rodata"] + s[".data"], "flash_of_board": flash,
                    "text": s[".text"], "rodata": s[".rodata"], "data": s[".data"], "bss": s[".bss"],
                    "stack_peak": stack, "ram_bytes": s[".data"] + s[".bss"] + stack, "ram_of_board": ram,
                    **{f"instructions_{r.replace('-', '_')}": ipr[r] for r in RULES},
                    "digest": digest, "qemu_command": cmd,
                })
                print(machine, tag, rows[-1]["flash_bytes"], rows[-1]["ram_bytes"], ipr, flush=True)
    finally:
        sh([BIN, "-q", "gbnn", "export", "--net", "out/mcu/net.nbg", "-o", "mcu/net/net.bin"])
    # The same network and probes decode alike on every board that holds them.
    for net in {r["network"] for r in rows}:
        digests = {r["board"]: r["digest"] for r in rows if r["network"] == net}
        assert len(set(digests.values())) == 1, f"{net}: digests differ across boards: {digests}"
    with open("results/mcu/cost.json", "w") as f:
        json.dump(rows, f, indent=1)
    with open("results/mcu/cost.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    md = ["| board (core) | network | W (bytes) | flash: .text + .rodata + .data (bytes) | RAM: .data + .bss + stack peak (bytes) | sum-of-sum | sum-of-max | bail-out-early | joint |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['board']} ({r['core']}) | {r['network']} ({r['stored']} stored) | {r['w_bytes']} | "
                  f"{r['text']} + {r['rodata']} + {r['data']} = {r['flash_bytes']} of {r['flash_of_board']} | "
                  f"{r['data']} + {r['bss']} + {r['stack_peak']} = {r['ram_bytes']} of {r['ram_of_board']} | "
                  + " | ".join(f"{r['instructions_' + k.replace('-', '_')]:,}".replace(",", " ") for k in RULES) + " |")
    with open("results/mcu/cost.md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


main()
