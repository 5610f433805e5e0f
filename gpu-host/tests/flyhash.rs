//! FlyHash GPU ≡ CPU, bit for bit (`make gpu-test`). The CPU reference is the core's functions
//! called in a plain loop.

use neurobits_core::flyhash::*;
use neurobits_core::prng::{below, draw};
use neurobits_gpu_host::flyhash::FlyWta;
use neurobits_gpu_host::Gpu;

fn cpu_codes(p: &FlyParams, proj: &[u32], x: &[f32], b: usize, bisect: bool) -> Vec<u64> {
    let (m, s, d, cw) = (p.m as usize, p.s as usize, p.d as usize, p.code_words());
    let mut out = vec![0; b * cw];
    let mut act = vec![0f32; m];
    for i in 0..b {
        for r in 0..m {
            act[r] = activation(&proj[r * s..(r + 1) * s], &x[i * d..(i + 1) * d]);
        }
        let code = &mut out[i * cw..(i + 1) * cw];
        if bisect {
            let mid = bisect64(m, p.k as usize, |r| act[r], 1e-3);
            pack_above(m, |r| act[r], mid, code);
        } else {
            wta_pack(m, p.k as usize, |r| sort_key(act[r]), &mut [0; 256], code);
        }
    }
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn flyhash_codes_equal_cpu_bit_for_bit() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let mut total = 0;
    // m a multiple of 64 takes the pixel path for these integer inputs (then also forced through
    // the f32 path); 2001 inputs: a partial group of 4 and a partial tile; s = 257 sums up to
    // 65 535, the largest the 16-bit lanes hold; m = 49 216 reads its sums unstaged.
    for (d, m, s, k, b, levels) in [
        (64, 1000, 6, 50, 3000, 3u64),
        (784, 2000, 39, 100, 2000, 256),
        (100, 130, 5, 7, 4000, 2),
        (784, 2048, 39, 100, 2001, 256),
        (64, 1024, 6, 50, 3000, 3),
        (100, 192, 5, 7, 4000, 2),
        (300, 128, 257, 9, 500, 256),
        (784, 49_216, 39, 2_000, 300, 256),
    ] {
        let p = FlyParams::new(d, m, s, k, 11).unwrap();
        // Integer-valued inputs with few levels: many tied activations.
        let x: Vec<f32> = (0..b * d as usize).map(|i| below(draw(5, i as u64), levels) as f32).collect();
        let f = gpu.fly(p).unwrap();
        let proj = f.projection().unwrap();
        let mut row = vec![0u32; s as usize];
        for r in 0..m {
            projection_row(&p, r, &mut row);
            assert_eq!(&proj[(r * s) as usize..((r + 1) * s) as usize], &row[..], "projection row {r}");
        }
        let inputs = f.upload(&x, b).unwrap();
        assert_eq!(inputs.pixels(), m % 64 == 0, "d={d} m={m}: pixel path");
        if m % 64 == 0 {
            // One value that is not an 8-bit pixel sends the batch to the f32 path.
            for v in [256.0, -0.0, 0.5] {
                let mut y = x.clone();
                y[b * d as usize - 1] = v;
                assert!(!f.upload(&y, b).unwrap().pixels(), "{v} is not a pixel");
            }
        }
        let floats = f.upload_float(&x, b).unwrap();
        assert!(!floats.pixels());
        for (bisect, wta, inputs) in [
            (false, FlyWta::Exact, &inputs),
            (false, FlyWta::Exact, &floats),
            (true, FlyWta::Bisect64 { eps: 1e-3 }, &inputs),
        ] {
            let got = f.hash(inputs, wta).unwrap();
            if inputs.pixels() && m == 2048 && wta == FlyWta::Exact {
                // The same batch in parts of 7 tiles (5 parts, the last one partial).
                f.set_max_part_tiles(7);
                let parts = f.hash(inputs, wta).unwrap();
                assert!(parts.codes == got.codes, "pixel path in parts differs");
                println!("d={d} m={m}: pixel path in 5 parts: same codes");
            }
            let want = cpu_codes(&p, &proj, &x, b, bisect);
            let path = if inputs.pixels() { "pixel path" } else { "f32 path" };
            assert!(got.codes == want, "d={d} m={m} {wta:?} ({path}): GPU codes differ from the CPU's");
            let ones: Vec<u32> =
                got.codes.chunks(p.code_words()).map(|c| c.iter().map(|w| w.count_ones()).sum()).collect();
            let wrong = ones.iter().filter(|&&o| o != k).count();
            if bisect {
                println!("d={d} m={m} k={k}: bisect64 gives a wrong winner count on {wrong} of {b} codes");
            } else {
                assert_eq!(wrong, 0, "exact WTA must give exactly k ones");
            }
            println!(
                "d={d} m={m} s={s} k={k} b={b} {wta:?} ({path}): bit-identical ({:.3} ms of kernels)",
                got.kernel_ms
            );
        }
        let w = p.code_words();
        let codes = cpu_codes(&p, &proj, &x, b, false);
        let q = &codes[..200 * w];
        let got = gpu.hamming_top_r(&codes, q, w, 50).unwrap();
        for (qi, row) in got.iter().enumerate() {
            let mut all: Vec<(u32, u32)> =
                (0..b).map(|j| (hamming(&codes[j * w..(j + 1) * w], &q[qi * w..(qi + 1) * w]), j as u32)).collect();
            all.sort();
            let want: Vec<(u32, u32)> = all[..50].iter().map(|&(dd, j)| (j, dd)).collect();
            assert_eq!(row, &want, "Hamming top-50 of query {qi}");
        }
        if b <= 500 {
            // r past the database: every code, in (distance, index) order.
            let all = gpu.hamming_top_r(&codes, q, w, b + 5).unwrap();
            for (qi, row) in all.iter().enumerate() {
                let mut want: Vec<(u32, u32)> =
                    (0..b).map(|j| (j as u32, hamming(&codes[j * w..(j + 1) * w], &q[qi * w..(qi + 1) * w]))).collect();
                sort_hits(&mut want);
                assert_eq!(row, &want, "Hamming top-all of query {qi}");
            }
        }
        total += b;
    }
    println!("FlyHash GPU = CPU bit for bit on {total} inputs (exact and bisect64), Hamming top-r equal");
}

/// The filtered `f32` path (sample, interval, one classifying pass, candidates) gives the CPU's
/// codes on uniform floats with inputs whose sums all tie (they fall back to the unfiltered
/// kernels), with a capacity so small that every input falls back, and switched off; pixel
/// inputs with blank images take the pixel path (in one part and in six) whatever the switch;
/// batches that are not a whole number of tiles.
#[test]
#[ignore = "needs a CUDA GPU"]
fn filtered_paths_equal_cpu() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    // The pixel path is not filtered (see the README): its case checks the switch leaves it alone.
    for (d, m, s, k, b, pixels) in
        [(1024u32, 8192u32, 51u32, 410u32, 1001usize, false), (784, 4096, 39, 200, 2001, true)]
    {
        let p = FlyParams::new(d, m, s, k, 7).unwrap();
        let f = gpu.fly(p).unwrap();
        let proj = f.projection().unwrap();
        let du = d as usize;
        let mut x: Vec<f32> = (0..b * du)
            .map(|i| {
                let v = draw(9, i as u64);
                if pixels {
                    below(v, 256) as f32
                } else {
                    (v >> 40) as f32 / (1u64 << 24) as f32
                }
            })
            .collect();
        // Inputs 3 and 500: constant (every sum ties); input 7: two levels.
        x[3 * du..4 * du].fill(if pixels { 7.0 } else { 0.25 });
        x[500 * du..501 * du].fill(0.0);
        for (j, v) in x[7 * du..8 * du].iter_mut().enumerate() {
            *v = if draw(4, j as u64).is_multiple_of(2) { 0.0 } else { 255.0 };
        }
        let want = cpu_codes(&p, &proj, &x, b, false);
        let inputs = f.upload(&x, b).unwrap();
        assert_eq!(inputs.pixels(), pixels);
        let path = if pixels { "pixel" } else { "filtered f32" };
        let filtered = f.hash(&inputs, FlyWta::Exact).unwrap();
        assert!(filtered.codes == want, "{path} path differs from the CPU");
        println!("{path} path: {b} inputs bit-identical ({:.3} ms of kernels)", filtered.kernel_ms);
        if pixels {
            f.set_max_part_tiles(3);
            assert!(f.hash(&inputs, FlyWta::Exact).unwrap().codes == want, "pixel path in 6 parts");
        }
        f.set_candidate_capacity(8);
        let fallback = f.hash(&inputs, FlyWta::Exact).unwrap();
        assert!(fallback.codes == want, "capacity 8 (every input falls back) differs from the CPU");
        f.set_filtered(false);
        let unfiltered = f.hash(&inputs, FlyWta::Exact).unwrap();
        assert!(unfiltered.codes == want, "{path} path switched off differs from the CPU");
        println!(
            "{path}: capacity 8 (all fall back): {:.3} ms, unfiltered: {:.3} ms of kernels, same codes",
            fallback.kernel_ms, unfiltered.kernel_ms
        );
    }
}

/// FlyNN on the GPU: memories and classes equal the core's rules run in plain loops, with
/// classes of very different sizes (saturating counts included) and tied novelties.
#[test]
#[ignore = "needs a CUDA GPU"]
fn flynn_gpu_equals_cpu() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let (m, classes) = (300usize, 4usize);
    let words = m.div_ceil(64);
    let mask = |w: usize| if w == words - 1 { (1u64 << (m % 64)) - 1 } else { u64::MAX };
    // Class 3 has 70 000 copies of one code: its counts saturate at 65 535.
    let mut codes = Vec::new();
    let mut labels = Vec::new();
    for i in 0..3000usize {
        codes.extend((0..words).map(|w| draw(11, (i * words + w) as u64) & draw(12, (i * words + w) as u64) & mask(w)));
        labels.push(below(draw(13, i as u64), 3) as u8);
    }
    let same: Vec<u64> = (0..words).map(|w| 0x00ff_00ff_00ff_00ff & mask(w)).collect();
    codes.extend(same.iter().cycle().take(70_000 * words));
    labels.extend(std::iter::repeat_n(3u8, 70_000));
    let mut want = vec![0u16; classes * m];
    for (code, &l) in codes.chunks(words).zip(&labels) {
        for i in 0..m {
            if code[i / 64] >> (i % 64) & 1 == 1 {
                want[l as usize * m + i] = flynn_store(want[l as usize * m + i]);
            }
        }
    }
    let (mem, train_ms) = gpu.flynn_train(&codes, &labels, classes, m).unwrap();
    assert_eq!(mem.counts().unwrap(), want, "FlyNN memories");
    assert!(want.contains(&FLYNN_MAX_COUNT));
    let test: Vec<u64> = (0..500 * words).map(|i| draw(14, i as u64) & draw(15, i as u64) & mask(i % words)).collect();
    for gamma in [0.5, 0.99, 1.0] {
        let mut w = vec![0u64; FLYNN_WEIGHTS];
        flynn_weights(gamma, &mut w);
        let (got, ms) = mem.classify(&test, &w).unwrap();
        let cpu: Vec<u32> = test
            .chunks(words)
            .map(|c| flynn_class(classes, |k| flynn_novelty(c, |i| want[k * m + i], |n| w[n as usize])) as u32)
            .collect();
        assert_eq!(got, cpu, "FlyNN classes, gamma {gamma}");
        println!("FlyNN gamma {gamma}: 500 classes = CPU ({train_ms:.3} ms training, {ms:.3} ms classifying)");
    }
}

/// splitmix64's finaliser: the search tests' codes and queries.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A database larger than one staging half (several upload parts, the last one short, `n` not
/// a multiple of 64) searched from the resident upload several times: equal to a brute-force
/// top-r (distance, then index).
#[test]
#[ignore = "needs a CUDA GPU"]
fn resident_codes_in_several_parts_equal_cpu() {
    let gpu = Gpu::open(0).unwrap();
    for (words, n) in [(392usize, 25_013usize), (7, 1_200_001), (1, 4_194_400)] {
        let codes: Vec<u64> = (0..n * words).map(|i| mix(i as u64)).collect();
        let q: Vec<u64> = (0..16 * words).map(|i| mix(!(i as u64))).collect();
        let resident = gpu.upload_codes(&codes, words).unwrap();
        assert_eq!(resident.len(), n);
        for r in [1, 10, 100] {
            let got = resident.top_r(&gpu, &codes, &q, r).unwrap().hits;
            for (qi, row) in got.iter().enumerate() {
                let query = &q[qi * words..(qi + 1) * words];
                let mut all: Vec<(u32, u32)> =
                    (0..n).map(|j| (hamming(&codes[j * words..(j + 1) * words], query), j as u32)).collect();
                all.select_nth_unstable(r - 1);
                all.truncate(r);
                all.sort();
                let want: Vec<(u32, u32)> = all.iter().map(|&(d, j)| (j, d)).collect();
                assert_eq!(row, &want, "words={words} n={n} r={r} query {qi}: resident top-r differs");
            }
        }
        println!("{n} codes of {words} words uploaded in parts: top-1/10/100 of 16 queries = brute force");
    }
}

/// The tensor-core key kernel gives the CUDA-core kernel's hits, and both the brute force's, on
/// code lengths that are and are not whole 256-bit steps (1, 5, 7, 392, 1 023 words), databases
/// that are not whole octets or 64s, query counts that are not whole tiles, and sparse codes
/// with many tied distances.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tensor_core_keys_equal_cuda_core_keys_and_cpu() {
    use neurobits_gpu_host::flyhash::KeyKernel;
    let gpu = Gpu::open(0).unwrap();
    let mut checked = 0;
    for (words, n, nq, sparse) in [
        (392usize, 25_013usize, 100usize, true),
        (5, 10_007, 33, false),
        (1, 777, 1, false),
        (1023, 3_001, 17, true),
        (7, 64, 16, true),
        (4, 200_003, 48, false),
    ] {
        // Sparse codes: about one bit in 16 set, so that distances tie often.
        let word = |i: u64| if sparse { mix(i) & mix(i ^ 0x5555) & mix(i ^ 0xAAAA) & mix(i ^ 0xF0F0) } else { mix(i) };
        let codes: Vec<u64> = (0..n * words).map(|i| word(i as u64)).collect();
        let q: Vec<u64> = (0..nq * words).map(|i| word(!(i as u64))).collect();
        let index = gpu.hamming_index(&codes, words).unwrap();
        for r in [1, 10, 100] {
            let tc = index.top_r_with(&q, r, KeyKernel::TensorCores).unwrap().hits;
            let simt = index.top_r_with(&q, r, KeyKernel::Simt).unwrap().hits;
            assert_eq!(tc, simt, "words={words} n={n} nq={nq} r={r}: tensor-core hits differ from CUDA-core hits");
            for (qi, row) in tc.iter().enumerate() {
                let query = &q[qi * words..(qi + 1) * words];
                let mut all: Vec<(u32, u32)> =
                    (0..n).map(|j| (hamming(&codes[j * words..(j + 1) * words], query), j as u32)).collect();
                let r = r.min(n);
                all.select_nth_unstable(r - 1);
                all.truncate(r);
                all.sort();
                let want: Vec<(u32, u32)> = all.iter().map(|&(d, j)| (j, d)).collect();
                assert_eq!(row, &want, "words={words} n={n} r={r} query {qi}: differs from brute force");
            }
            checked += nq;
        }
        println!("{n} codes of {words} words, {nq} queries: tensor-core keys = CUDA-core keys = brute force (r = 1, 10, 100)");
    }
    println!("tensor-core Hamming keys: bit-exact on {checked} query searches");
}

/// The select spread over chunks of the database keeps the lowest-index rule when the ties at
/// the threshold fill many chunks: codes drawn from four distinct ones (so each query sees at
/// most four distances, each shared by a quarter of the database), `r` from one to every code.
#[test]
#[ignore = "needs a CUDA GPU"]
fn select_ties_across_chunks_equal_cpu() {
    let gpu = Gpu::open(0).unwrap();
    let (words, n, nq) = (2usize, 300_001usize, 40usize);
    let codes: Vec<u64> =
        (0..n).flat_map(|j| (0..words).map(move |w| mix((mix(j as u64) % 4) * 8 + w as u64))).collect();
    let q: Vec<u64> = (0..nq * words).map(|i| mix(!(i as u64))).collect();
    let index = gpu.hamming_index(&codes, words).unwrap();
    for r in [1, 1_000, 74_999, 150_000, n] {
        let got = index.top_r(&q, r).unwrap().hits;
        for (qi, row) in got.iter().enumerate() {
            let query = &q[qi * words..(qi + 1) * words];
            let mut all: Vec<(u32, u32)> =
                (0..n).map(|j| (hamming(&codes[j * words..(j + 1) * words], query), j as u32)).collect();
            all.sort_unstable();
            let want: Vec<(u32, u32)> = all[..r].iter().map(|&(d, j)| (j, d)).collect();
            assert_eq!(row, &want, "n={n} r={r} query {qi}: the chunked select differs from brute force");
        }
    }
    println!("select over chunks: {nq} queries × r = 1 … {n} on {n} codes with four distances = brute force");
}
