//! Hamming distances as select keys: a block holds 16 queries in shared memory and streams its
//! chunk of the database (word-major, so that an octet of codes is 64 contiguous bytes per word);
//! the keys go to `fly_pixel_wta`, which picks the `r` largest, i.e. the `r` nearest codes.

use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use neurobits_core::flyhash::kernels::{HammingKeys, HAMMING_THREADS, HAMMING_TILE_QUERIES};
use neurobits_core::flyhash::{hamming_word, RadixSelect};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{abort, kernel, smem, split, thread_block};

/// Two words read with one 128-bit load.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Pair([Word; 2]);

kernel! {
    /// Keys `65 535 − distance` of an octet of database codes against one query per thread: the
    /// half-warp's 16 lanes are the tile's 16 queries (each reads its query word from shared
    /// memory; all read the same database words, one broadcast), the two halves take two
    /// octets. Eight running distances through the core's `hamming_word`, written as 16
    /// contiguous bytes per (octet, query), and counted into the first radix pass.
    fn fly_hamming_keys(a: HammingKeys {
        words: u32,
        n: u32,
        np: u32,
        nq: u32,
        bp: u32,
        octets: u32,
        db: DevPtr<Word>,
        q: DevPtr<Word>,
        keys: DevMut<u16>,
        hist: DevMut<u32>,
    }) {
        const NT: usize = HAMMING_THREADS as usize;
        const TQ: usize = HAMMING_TILE_QUERIES as usize;
        let (words, n, np, nq, bp) = (a.words as usize, a.n as usize, a.np as usize, a.nq as usize, a.bp as usize);
        let octets = a.octets as usize;
        if words >= 1024 || np % 64 != 0 || bp % 32 != 0 || octets == 0 || octets >= 8192 {
            abort();
        }
        let (tid, blk) = thread_block();
        let (tile, chunk) = split(blk, (np / 8).div_ceil(octets));
        let base = smem::base();
        for e in (tid..words * TQ).step_by(NT) {
            let (w, ql) = (e / TQ, e % TQ);
            let qi = tile * TQ + ql;
            smem::st_u64(base + 8 * e as u32, if qi < nq { *a.q.0.add(qi * words + w) } else { 0 });
        }
        let counts = base + (words * TQ * 8) as u32;
        for e in (tid..TQ * 256 / 2).step_by(NT) {
            smem::st_u32(counts + 4 * e as u32, 0);
        }
        smem::sync();
        let (warp, lane) = (tid / 32, tid % 32);
        let (half, ql) = (lane / 16, lane % 16);
        let mine = base + 8 * ql as u32;
        let first = RadixSelect::new16(1);
        let (o0, o1) = (chunk * octets, (np / 8).min(chunk * octets + octets));
        let out = a.keys.0 as *mut [u32; 4];
        for o in (o0 + warp * 2 + half..o1).step_by(NT / 16) {
            let mut d = [0u32; 8];
            for w in 0..words {
                let qw = smem::ld_u64(mine + (w * TQ * 8) as u32);
                let row = a.db.0.add(w * np + o * 8) as *const Pair;
                let x = [*row, *row.add(1), *row.add(2), *row.add(3)];
                for t in 0..8 {
                    d[t] = hamming_word(d[t], x[t / 2].0[t % 2], qw);
                }
            }
            let key = |t: usize| if o * 8 + t < n { 65_535 - d[t] } else { 0 };
            let pair = |h: usize| key(2 * h) | key(2 * h + 1) << 16;
            *out.add(o * bp + tile * TQ + ql) = [pair(0), pair(1), pair(2), pair(3)];
            for t in 0..8 {
                match first.bin(key(t)) {
                    Some(bin) => {
                        let e = ql * 256 + bin;
                        smem::red_add_u32(counts + (e / 2 * 4) as u32, 1 << (16 * (e % 2)))
                    }
                    None => abort(),
                }
            }
        }
        smem::sync();
        for e in (tid..TQ * 256).step_by(NT) {
            let c = smem::ld_u32(counts + (e / 2 * 4) as u32) >> (16 * (e % 2)) & 0xFFFF;
            if c != 0 {
                let (ql, bin) = (e / 256, e % 256);
                AtomicU32::from_ptr(a.hist.0.add((tile * TQ + ql) * 256 + bin)).fetch_add(c, Relaxed);
            }
        }
    }
}
