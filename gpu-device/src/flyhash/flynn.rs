//! FlyNN kernels: thread mappings onto the core's `flynn_store`, `flynn_novelty`, `flynn_class`.

use core::slice::from_raw_parts;
use neurobits_core::flyhash::kernels::{FlynnClassify, FlynnTrain};
use neurobits_core::flyhash::{flynn_class, flynn_novelty, flynn_store};
use neurobits_core::kernel::{DevMut, DevPtr};
use neurobits_core::Word;

use crate::{gid, kernel, split};

kernel! {
    /// The count of (class, bit): `flynn_store` once per training code of the class that has
    /// the bit (consecutive threads, consecutive bits: they read the same code words).
    fn flynn_train(a: FlynnTrain {
        m: u32,
        classes: u32,
        words: u32,
        codes: DevPtr<Word>,
        order: DevPtr<u32>,
        starts: DevPtr<u32>,
        counts: DevMut<u16>,
    }) {
        let (c, i) = split(gid(), a.m as usize);
        if c >= a.classes as usize {
            return;
        }
        let (from, to) = (*a.starts.0.add(c) as usize, *a.starts.0.add(c + 1) as usize);
        let words = a.words as usize;
        let mut count = 0u16;
        for &j in from_raw_parts(a.order.0.add(from), to - from) {
            if *a.codes.0.add(j as usize * words + i / 64) >> (i % 64) & 1 == 1 {
                count = flynn_store(count);
            }
        }
        *a.counts.0.add(c * a.m as usize + i) = count;
    }
}

kernel! {
    /// The class of one code: its novelty to every class, the least wins.
    fn flynn_classify(a: FlynnClassify {
        m: u32,
        classes: u32,
        words: u32,
        n: u32,
        codes: DevPtr<Word>,
        counts: DevPtr<u16>,
        weights: DevPtr<u64>,
        out: DevMut<u32>,
    }) {
        let j = gid();
        if j >= a.n as usize {
            return;
        }
        let (m, words) = (a.m as usize, a.words as usize);
        let code = from_raw_parts(a.codes.0.add(j * words), words);
        let novelty = |c: usize| flynn_novelty(code, |i| *a.counts.0.add(c * m + i), |n| *a.weights.0.add(n as usize));
        let class = flynn_class(a.classes as usize, novelty);
        *a.out.0.add(j) = class as u32;
    }
}
