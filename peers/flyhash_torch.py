#!/usr/bin/env python3
"""The GPU peer a user would write instead of `neurobits flyhash hash --device gpu`: FlyHash in a
dozen lines of PyTorch — the projection as a dense 0/1 matrix, one matrix product, `torch.topk`,
bits packed as neurobits packs them. fp32 is exact for integer pixels (sums below 2^24); fp16
accumulates in fp32 but rounds the product to fp16 on output, so activations above 2048 lose
their last integer bits and the codes differ (measured: 20 447 of 60 000 equal). Inputs resident
on the GPU; prints the milliseconds of the hashing (CUDA events, after a warm-up) and, given
neurobits' code file, how many codes are identical.

    python3 peers/flyhash_torch.py IDX_GZ PROJ_CSV K [CODES.bin]
"""
import gzip, struct, sys

import numpy as np
import torch


def main():
    b = gzip.open(sys.argv[1]).read()
    x = np.frombuffer(b[16:], dtype=np.uint8).reshape(-1, 784).astype(np.float32)
    rows = np.loadtxt(sys.argv[2], delimiter=",", dtype=np.int64, ndmin=2)
    k = int(sys.argv[3])
    m, d = rows.shape[0], x.shape[1]
    dev = torch.device("cuda")
    p = torch.zeros(m, d, device=dev)
    p[torch.arange(m).repeat_interleave(rows.shape[1]), torch.from_numpy(rows.ravel()).to(dev)] = 1.0
    xs = torch.from_numpy(x).to(dev)
    words = (m + 63) // 64
    weights = (2 ** torch.arange(64, device=dev, dtype=torch.int64))

    def flyhash(dtype):
        act = xs.to(dtype) @ p.to(dtype).T
        win = torch.topk(act.float(), k, dim=1).indices
        bits = torch.zeros(x.shape[0], words * 64, dtype=torch.int64, device=dev)
        bits.scatter_(1, win, 1)
        return (bits.view(x.shape[0], words, 64) * weights).sum(dim=2)  # int64 wraps like u64 bits

    for name, dtype in (("fp16", torch.float16), ("fp32", torch.float32)):
        flyhash(dtype)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        codes = flyhash(dtype)
        e.record()
        torch.cuda.synchronize()
        line = f"PyTorch FlyHash {name} ({torch.cuda.get_device_name()}): {s.elapsed_time(e):.2f} ms for {x.shape[0]} inputs (m={m}, k={k})"
        if len(sys.argv) > 4:
            raw = open(sys.argv[4], "rb").read()
            n = struct.unpack("<Q", raw[16:24])[0]
            ours = np.frombuffer(raw[24:], dtype="<i8").reshape(n, -1)
            same = int((ours == codes.cpu().numpy()).all(axis=1).sum())
            line += f"; codes identical to neurobits': {same} of {n}"
        print(line)


if __name__ == "__main__":
    main()
