#!/usr/bin/env python3
"""Communication volume per query batch of the two distributed models, and its scaling on paper
to 64 GPUs (issue 37, "Beyond one host"). Computed, not measured: the bandwidths below are
assumptions, named in the output. Writes volume.csv next to this script and prints a Markdown
table. Run: python3 results/dist/volume.py
"""
import csv, math, os

HBM = 2.9e12          # copy bandwidth of one H100 as measured in issue 37 (bytes/s)
NVLINK = 360e9        # NCCL all-gather bus bandwidth inside an 8 x H100 SXM node (assumed)
NET = 45e9            # NCCL bus bandwidth across nodes, 400 Gb/s NIC per GPU (assumed)
TCP = 12.5e9          # rank 0's host link for the index's TCP star, 100 Gb/s Ethernet (assumed)
RECORD = 24           # bytes of a sparse record: header + 2 words (core::gbnn::shard::RECORD_WORDS)

def eo_max(C, e, G, samples):
    """Largest number of erased clusters one shard owns, over `samples` (probe, shard) pairs:
    the smallest m with P(X > m) * samples < 1, X hypergeometric (C clusters, e erased, C/G owned)."""
    own = C // G
    p = [math.comb(e, x) * math.comb(C - e, own - x) / math.comb(C, own) for x in range(own + 1)]
    for m in range(own + 1):
        if sum(p[m + 1:]) * samples < 1:
            return max(m, 1)
    return own

rows = []
# GBNN: the n = 2^20 network of the manual (C = 64, L = 16 384, W = 128 GiB), 2e5 probes, e = 32;
# the first joint update, when every probe is active (later updates carry only the active ones).
C, L, K, e = 64, 16384, 200_000, 32
wpc = math.ceil(L / 64)
for G in [2, 4, 8, 16, 32, 64]:
    eo = eo_max(C, e, G, K * G)
    sent = K * eo * RECORD                  # this rank's records
    recv = (G - 1) * sent                   # every other rank's records (all-gather)
    bcast = K * 4                           # rank 0's active list
    compute = (C - e) * e * wpc * 8 / G * K  # W words the first pass reads on this rank
    bw = NVLINK if G <= 8 else NET
    rows.append(dict(model="gbnn", gpus=G, per_rank_bytes_read=compute, eo_max=eo,
                     sent_per_rank=sent, received_per_rank=recv + bcast,
                     compute_ms=compute / HBM * 1e3, exchange_ms=(recv + bcast) / bw * 1e3,
                     link="NVLink" if G <= 8 else "400 Gb/s per GPU"))
# FlyHash exact index: 10^7 codes of 25 088 bits (392 words), 100 queries, k = 100.
N, words, nq, k = 10_000_000, 392, 100, 100
code = words * 8
for G in [2, 4, 8, 16, 32, 64]:
    compute = N / G * code                  # codes this rank reads once per batch
    sent = nq * k * 12                      # this rank's hits: (id i64, distance u32)
    q = nq * code + 16                      # the queries' codes from rank 0
    root = (G - 1) * (sent + q)             # through rank 0's link (star)
    rows.append(dict(model="flyhash-index", gpus=G, per_rank_bytes_read=compute, eo_max="",
                     sent_per_rank=sent, received_per_rank=q,
                     compute_ms=compute / HBM * 1e3, exchange_ms=root / TCP * 1e3,
                     link="rank 0's 100 Gb/s TCP"))

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "volume.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
mb = lambda b: f"{b / 1e6:,.1f}"
print("| model | GPUs | read per rank (GB) | eo | sent per rank (MB) | received per rank (MB) | compute at HBM (ms) | exchange (ms), link |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['model']} | {r['gpus']} | {r['per_rank_bytes_read'] / 1e9:,.2f} | {r['eo_max']} | {mb(r['sent_per_rank'])} | "
          f"{mb(r['received_per_rank'])} | {r['compute_ms']:.2f} | {r['exchange_ms']:.2f}, {r['link']} |")
