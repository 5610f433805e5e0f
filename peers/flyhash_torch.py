#!/usr/bin/env python3
"""The GPU peer a user would write instead of `neurobits flyhash hash --device gpu`, at its best:
FlyHash in PyTorch with the projection as a dense 0/1 matrix **resident in each precision before
timing**, the inputs resident in each precision, one matrix product, and an **unsorted**
`torch.topk` giving the k winner indices per input (the peer's natural output; packing them into
bit words, as neurobits returns them, is left out of the timing and done only to compare codes).
TF32 is off so that fp32 is exact for integer pixels (sums below 2^24); fp16 accumulates in fp32
but rounds the product to fp16 on output, so activations above 2048 lose their last integer bits
and some codes differ. Timed with CUDA events after a warm-up, median of 5.

    python3 peers/flyhash_torch.py IDX_GZ PROJ_CSV K [CODES.bin]

Prints one line per precision: the median milliseconds and, given neurobits' code file (from
`neurobits flyhash hash`), how many codes are identical to neurobits'.
"""
import gzip
import statistics
import struct
import sys

import numpy as np
import torch


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    b = gzip.open(sys.argv[1]).read()
    x = np.frombuffer(b[16:], dtype=np.uint8).reshape(-1, 784).astype(np.float32)
    rows = np.loadtxt(sys.argv[2], delimiter=",", dtype=np.int64, ndmin=2)
    k = int(sys.argv[3])
    m, d, n = rows.shape[0], x.shape[1], x.shape[0]
    dev = torch.device("cuda")
    p = torch.zeros(m, d, device=dev)
    p[torch.arange(m, device=dev).repeat_interleave(rows.shape[1]), torch.from_numpy(rows.ravel()).to(dev)] = 1.0
    ours = None
    if len(sys.argv) > 4:
        raw = open(sys.argv[4], "rb").read()
        count = struct.unpack("<Q", raw[16:24])[0]
        ours = np.frombuffer(raw[24:], dtype="<u8").reshape(count, -1)
    words = (m + 63) // 64
    for name, dtype in (("fp16", torch.float16), ("fp32", torch.float32)):
        # Resident before timing, as a user keeps them: no conversion inside the timed call.
        pt = p.to(dtype).T.contiguous()
        xs = torch.from_numpy(x).to(dev).to(dtype)

        def flyhash():
            return torch.topk(xs @ pt, k, dim=1, sorted=False).indices

        flyhash()
        torch.cuda.synchronize()
        times = []
        for _ in range(5):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            win = flyhash()
            e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e))
        line = (
            f"PyTorch {torch.__version__} FlyHash {name} ({torch.cuda.get_device_name()}): "
            f"{statistics.median(times):.2f} ms (median of 5) for {n} inputs (m={m}, k={k}; "
            f"projection and inputs resident, unsorted top-k)"
        )
        if ours is not None:
            # Out of the timing: the winners as neurobits' bit words (bit i of word i // 64).
            w = win.cpu().numpy().astype(np.int64)
            codes = np.zeros((n, words), dtype=np.uint64)
            np.bitwise_or.at(codes, (np.repeat(np.arange(n), k), (w // 64).ravel()), np.left_shift(np.uint64(1), (w % 64).ravel().astype(np.uint64)))
            same = int((ours[:, :words] == codes).all(axis=1).sum())
            line += f"; codes identical to neurobits': {same} of {len(ours)}"
        print(line, flush=True)
        del pt, xs


if __name__ == "__main__":
    main()
