//! The core's `exp` (glibc's algorithm with its FMA build's fused multiply-adds): the same bits
//! as glibc's `exp` on an x86_64 CPU with FMA, and a digest of 2²² results that every target
//! must reproduce (the GPU's test compares its kernel's values with these).

use neurobits_core::digest::{fnv1a_words, FNV_OFFSET};
use neurobits_core::exp::{exp, Fma};
use neurobits_core::prng::draw;

struct MulAdd;

impl Fma for MulAdd {
    fn fma(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
}

/// Argument `i` of the checked set: a quarter each over the OCNN weights' range in `f64`
/// (`[−750, 0]`), in `f32` (`[−110, 0]`), near zero and over `[−700, 700]`.
fn argument(i: u64) -> f64 {
    let u = (draw(0xe4f, i) >> 11) as f64 / (1u64 << 53) as f64;
    match i % 4 {
        0 => -750.0 * u,
        1 => -110.0 * u,
        2 => -1e-3 * u,
        _ => 1400.0 * (u - 0.5),
    }
}

const COUNT: u64 = 1 << 22;

/// The digest of `exp` over the checked set, made with glibc 2.36's `exp` (Debian 12, x86_64
/// with FMA) when the port was written.
const GLIBC_DIGEST: u64 = 0x2629_d3cd_ce3e_b7e5;

#[test]
fn the_checked_set_has_glibcs_digest() {
    let bits: Vec<u64> = (0..COUNT).map(|i| exp::<MulAdd>(argument(i)).to_bits()).collect();
    assert_eq!(fnv1a_words(FNV_OFFSET, &bits), GLIBC_DIGEST, "{:#x}", fnv1a_words(FNV_OFFSET, &bits));
}

/// Where the C library is glibc on x86_64 and the CPU has FMA, `f64::exp` is the algorithm
/// ported: every value equal (elsewhere the digest above is the check).
#[test]
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
fn equals_glibc_where_it_is_the_fma_build() {
    if !std::arch::is_x86_feature_detected!("fma") {
        return;
    }
    let edges = [-745.0f64, -720.5, -708.4, -600.0, -512.5, 512.5, 600.0, 709.0, -103.9, -50.0, 2.5];
    for x in (0..COUNT).map(argument).chain(edges) {
        assert_eq!(exp::<MulAdd>(x).to_bits(), x.exp().to_bits(), "exp({x:e})");
    }
}

#[test]
fn edges_and_special_values() {
    let e = exp::<MulAdd>;
    assert_eq!(e(0.0), 1.0);
    assert_eq!(e(-0.0), 1.0);
    assert_eq!(e(1e-300), 1.0);
    assert_eq!(e(f64::INFINITY), f64::INFINITY);
    assert_eq!(e(f64::NEG_INFINITY), 0.0);
    assert!(e(f64::NAN).is_nan());
    assert_eq!(e(710.0), f64::INFINITY);
    assert!(e(709.78).is_finite());
    assert_eq!(e(-746.0), 0.0);
    // The subnormal range: positive, below the smallest normal, never −0.
    let s = e(-740.0);
    assert!(s > 0.0 && s < f64::MIN_POSITIVE, "{s:e}");
    assert_eq!(e(-745.2).to_bits(), 0);
    assert_eq!(e(1.0), core::f64::consts::E);
    assert_eq!(e(-1.0), 1.0 / core::f64::consts::E);
}
