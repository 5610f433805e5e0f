//! FlyHash kernels: thread mappings onto `neurobits_core::flyhash`'s step functions. Layouts are
//! documented on the argument structs (`neurobits_core::flyhash::kernels`).

use core::slice::{from_raw_parts, from_raw_parts_mut};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use neurobits_core::flyhash::kernels::{
    Activation, Bisect64, CodesWordMajor, Hamming, Projection, RadixHist, RadixInit, RadixPick, Select, TieCount, TopR,
};
use neurobits_core::flyhash::{
    activation_with, bisect64, hamming, pack_above, projection_row, select_range, sort_key, ties_left, top_r,
    RadixSelect,
};

use neurobits_core::flyhash::FlyParams;
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{gid, kernel, split};

mod ann;
mod floats;
mod flynn;
mod pixels;
mod search;
mod select;

kernel! {
    /// Projection row `r` (the core's `projection_row`) into `proj[r · s ..]`, one thread per row.
    fn fly_projection(a: Projection {
        params: FlyParams,
        proj: DevMut<u32>,
    }) {
        let r = gid();
        let p = a.params;
        if r >= p.m as usize {
            return;
        }
        projection_row(&p, r as u32, from_raw_parts_mut(a.proj.0.add(r * p.s as usize), p.s as usize));
    }
}

kernel! {
    /// Activations (the core's `activation_with` over the transposed inputs), one thread per
    /// (output row, input). Threads run through all rows for a tile of 32 inputs before the next
    /// tile, so the tile's inputs (`32·d` floats) stay in L1 while every row gathers from them.
    fn fly_activation(a: Activation {
        m: u32,
        s: u32,
        b: u32,
        proj: DevPtr<u32>,
        xt: DevPtr<f32>,
        act: DevMut<f32>,
    }) {
        let (tile, rest) = split(gid(), a.m as usize * 32);
        let (r, lane) = split(rest, 32);
        let i = tile * 32 + lane;
        let b = a.b as usize;
        if i >= b {
            return;
        }
        let idx = from_raw_parts(a.proj.0.add(r * a.s as usize), a.s as usize);
        *a.act.0.add(r * b + i) = activation_with(idx, |j| *a.xt.0.add(j * b + i));
    }
}

kernel! {
    /// Exact winner-take-all, step 1: a fresh radix select (`RadixSelect`) per input.
    fn fly_radix_init(a: RadixInit {
        b: u32,
        k: u32,
        states: DevMut<RadixSelect>,
    }) {
        let i = gid();
        if i < a.b as usize {
            *a.states.0.add(i) = RadixSelect::new(a.k);
        }
    }
}

kernel! {
    /// Exact WTA, step 2 (four times): one thread per (chunk of `chunk` outputs, input) counts
    /// the keys its input's selection accepts into `hist[i · 256 ..]` (runs of one bin are added
    /// at once).
    fn fly_radix_hist(a: RadixHist {
        m: u32,
        b: u32,
        chunk: u32,
        act: DevPtr<f32>,
        states: DevPtr<RadixSelect>,
        hist: DevMut<u32>,
    }) {
        let (c, i) = split(gid(), a.b as usize);
        let (m, b, chunk) = (a.m as usize, a.b as usize, a.chunk as usize);
        if c * chunk >= m {
            return;
        }
        let st = *a.states.0.add(i);
        let (mut cur, mut n) = (0usize, 0u32);
        for r in c * chunk..m.min((c + 1) * chunk) {
            if let Some(bin) = st.bin(sort_key(*a.act.0.add(r * b + i))) {
                if bin != cur && n > 0 {
                    AtomicU32::from_ptr(a.hist.0.add(i * 256 + cur)).fetch_add(n, Relaxed);
                    n = 0;
                }
                cur = bin;
                n += 1;
            }
        }
        if n > 0 {
            AtomicU32::from_ptr(a.hist.0.add(i * 256 + cur)).fetch_add(n, Relaxed);
        }
    }
}

kernel! {
    /// Exact WTA, step 3 (after each histogram): one thread per input fixes the next byte
    /// (`RadixSelect::advance`) and clears its histogram.
    fn fly_radix_pick(a: RadixPick {
        b: u32,
        states: DevMut<RadixSelect>,
        hist: DevMut<u32>,
    }) {
        let i = gid();
        if i >= a.b as usize {
            return;
        }
        let h = from_raw_parts_mut(a.hist.0.add(i * 256), 256);
        (*a.states.0.add(i)).advance(&*(h.as_ptr() as *const [u32; 256]));
        for x in h.iter_mut() {
            *x = 0;
        }
    }
}

kernel! {
    /// Exact WTA, step 4: keys equal to the threshold per (chunk, input), for the index-order
    /// tie rule.
    fn fly_tie_count(a: TieCount {
        m: u32,
        b: u32,
        chunk: u32,
        act: DevPtr<f32>,
        states: DevPtr<RadixSelect>,
        counts: DevMut<u32>,
    }) {
        let (c, i) = split(gid(), a.b as usize);
        let (m, b, chunk) = (a.m as usize, a.b as usize, a.chunk as usize);
        if c * chunk >= m {
            return;
        }
        let t = (*a.states.0.add(i)).threshold();
        let mut n = 0;
        for r in c * chunk..m.min((c + 1) * chunk) {
            n += (sort_key(*a.act.0.add(r * b + i)) == t) as u32;
        }
        *a.counts.0.add(c * b + i) = n;
    }
}

kernel! {
    /// Exact WTA, step 5: one thread per (chunk, input) writes its chunk's code words through the
    /// core's `select_range`, with the ties still winnable after the earlier chunks (`ties_left`).
    /// `chunk` is a multiple of 64, so every code word has one writer.
    fn fly_select(a: Select {
        m: u32,
        b: u32,
        chunk: u32,
        act: DevPtr<f32>,
        states: DevPtr<RadixSelect>,
        counts: DevPtr<u32>,
        codes: DevMut<Word>,
    }) {
        let (c, i) = split(gid(), a.b as usize);
        let (m, b, chunk) = (a.m as usize, a.b as usize, a.chunk as usize);
        if c * chunk >= m {
            return;
        }
        let st = *a.states.0.add(i);
        let ties = ties_left(st.ties(), (0..c).map(|c2| *a.counts.0.add(c2 * b + i)));
        let (start, end) = (c * chunk, m.min((c + 1) * chunk));
        let code = a.codes.0.add(i * m.div_ceil(64));
        for w in start / 64..end.div_ceil(64) {
            *code.add(w) = 0;
        }
        select_range(start, end, |r| sort_key(*a.act.0.add(r * b + i)), st.threshold(), ties, |r| {
            *code.add(r / 64) |= 1 << (r % 64);
        });
    }
}

kernel! {
    /// The paper's 64-step bisection (the core's `bisect64` and `pack_above`), one thread per input.
    fn fly_wta_bisect64(a: Bisect64 {
        m: u32,
        k: u32,
        b: u32,
        eps: f32,
        act: DevPtr<f32>,
        codes: DevMut<Word>,
    }) {
        let i = gid();
        if i >= a.b as usize {
            return;
        }
        let (m, b) = (a.m as usize, a.b as usize);
        let cw = m.div_ceil(64);
        let value = |r: usize| *a.act.0.add(r * b + i);
        let mid = bisect64(m, a.k as usize, value, a.eps);
        pack_above(m, value, mid, from_raw_parts_mut(a.codes.0.add(i * cw), cw));
    }
}

kernel! {
    /// Hamming distances (the core's `hamming`), one thread per (query, database code), database
    /// fastest: `dist[q · n + j]`.
    fn fly_hamming(a: Hamming {
        words: u32,
        n: u32,
        nq: u32,
        db: DevPtr<Word>,
        q: DevPtr<Word>,
        dist: DevMut<u32>,
    }) {
        let (qi, j) = split(gid(), a.n as usize);
        if qi >= a.nq as usize {
            return;
        }
        let w = a.words as usize;
        *a.dist.0.add(qi * a.n as usize + j) =
            hamming(from_raw_parts(a.db.0.add(j * w), w), from_raw_parts(a.q.0.add(qi * w), w));
    }
}

kernel! {
    /// A chunk of codes into the word-major database (see `CodesWordMajor`): writes coalesced,
    /// reads strided by `words` (each 32-byte sector is read by four neighbouring word rows,
    /// mostly from L2).
    fn fly_codes_word_major(a: CodesWordMajor {
        words: u32,
        count: u32,
        j0: u32,
        np: u32,
        src: DevPtr<Word>,
        dst: DevMut<Word>,
    }) {
        let (w, j) = split(gid(), a.count as usize);
        if w >= a.words as usize {
            return;
        }
        *a.dst.0.add(w * a.np as usize + a.j0 as usize + j) = *a.src.0.add(j * a.words as usize + w);
    }
}

kernel! {
    /// Top-r per query (the core's `top_r`), one thread per query: the r winners in index order
    /// into `out[q · r ..]`.
    fn fly_top_r(a: TopR {
        n: u32,
        nq: u32,
        r: u32,
        dist: DevPtr<u32>,
        out: DevMut<u32>,
    }) {
        let qi = gid();
        if qi >= a.nq as usize {
            return;
        }
        let (n, r) = (a.n as usize, a.r as usize);
        let row = from_raw_parts(a.dist.0.add(qi * n), n);
        let mut at = 0;
        top_r(n, r, |j| row[j], &mut [0u32; 256], |j| {
            *a.out.0.add(qi * r + at) = j as u32;
            at += 1;
        });
    }
}
