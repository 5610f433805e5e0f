use super::FlyParams;
use crate::prng::{floyd, stream_key};

const PROJECTION: u64 = 16;

/// Row `row` of the projection: `s` distinct indices in `[0, d)`, ascending, into `out[..s]`.
///
/// ```
/// use neurobits_core::flyhash::{projection_row, FlyParams};
/// let p = FlyParams::new(784, 100, 39, 5, 1).unwrap();
/// let mut r = [0u32; 39];
/// projection_row(&p, 7, &mut r);
/// assert!(r.windows(2).all(|w| w[0] < w[1]) && r[38] < 784);
/// ```
#[inline]
pub fn projection_row(p: &FlyParams, row: u32, out: &mut [u32]) {
    let (d, s) = (p.d as u64, p.s as usize);
    let key = stream_key(p.seed, PROJECTION);
    // Exactly s distinct values, in draw order.
    let mut len = 0;
    floyd(key, row as u64 * s as u64, d, s as u64, |x| {
        let x = x as u32;
        let new = !out[..len].contains(&x);
        if new {
            out[len] = x;
            len += 1;
        }
        new
    });
    // Insertion sort: s is small.
    for i in 1..s {
        let x = out[i];
        let mut j = i;
        while j > 0 && out[j - 1] > x {
            out[j] = out[j - 1];
            j -= 1;
        }
        out[j] = x;
    }
}

/// One output of the projection: the `f32` sum of `x` over `indices`, in their (ascending) order.
///
/// ```
/// assert_eq!(neurobits_core::flyhash::activation(&[0, 2], &[1.5, 9.0, 2.0]), 3.5);
/// ```
#[inline(always)]
pub fn activation(indices: &[u32], x: &[f32]) -> f32 {
    activation_with(indices, |i| x[i])
}

/// [`activation`] over any layout of the input: `x(i)` is input dimension `i`.
///
/// ```
/// let xt = [1.5f32, 9.0, 2.0];
/// assert_eq!(neurobits_core::flyhash::activation_with(&[0, 2], |i| xt[i]), 3.5);
/// ```
///
/// The value type is generic so that a driver can add [`Lanes`] (several inputs at once, one
/// per lane): each lane then goes through exactly this sequence of `f32` additions.
#[inline(always)]
pub fn activation_with<T: Copy + Default + core::ops::Add<Output = T>>(indices: &[u32], x: impl Fn(usize) -> T) -> T {
    activation_chunks(indices.as_chunks::<1>().0, x)
}

/// [`activation_with`] over indices (`u32`, or `u16` where `d` allows) stored in fixed-size
/// chunks (e.g. rows padded to a multiple of four and read 16 or 8 bytes at a time on the GPU):
/// the same additions in the same order.
///
/// ```
/// use neurobits_core::flyhash::{activation_chunks, activation_with};
/// let xt = [1.5f32, 9.0, 2.0, 0.25];
/// assert_eq!(activation_chunks(&[[0u32, 2], [3, 3]], |i| xt[i]), activation_with(&[0, 2, 3, 3], |i| xt[i]));
/// ```
#[inline(always)]
pub fn activation_chunks<T: Copy + Default + core::ops::Add<Output = T>, I: Copy + Into<u32>, C: Copy + AsRef<[I]>>(
    chunks: &[C],
    x: impl Fn(usize) -> T,
) -> T {
    activation_chunks_at(chunks.len(), |c| chunks[c], x)
}

/// [`activation_chunks`] with chunk `c` of `n` produced by `chunk(c)` (e.g. read from GPU shared
/// memory, where no slice can point).
///
/// ```
/// use neurobits_core::flyhash::{activation_chunks, activation_chunks_at};
/// let (xt, rows) = ([1.5f32, 9.0, 2.0, 0.25], [[0u16, 2], [3, 3]]);
/// assert_eq!(activation_chunks_at(2, |c| rows[c], |i| xt[i]), activation_chunks(&rows, |i| xt[i]));
/// ```
#[inline(always)]
pub fn activation_chunks_at<T: Copy + Default + core::ops::Add<Output = T>, I: Copy + Into<u32>, C: AsRef<[I]>>(
    n: usize,
    chunk: impl Fn(usize) -> C,
    x: impl Fn(usize) -> T,
) -> T {
    let mut acc = T::default(); // +0.0
    for c in 0..n {
        for &i in chunk(c).as_ref() {
            acc = acc + x(i.into() as usize);
        }
    }
    acc
}

/// `B` independent `f32` values added lane by lane: [`activation_with`] over `Lanes` computes `B`
/// inputs' activations in one pass over the projection row, each lane bit-identical to
/// [`activation`] of that input (the compiler turns the lane loop into vector additions).
///
/// ```
/// use neurobits_core::flyhash::{activation, activation_with, Lanes};
/// let (x0, x1) = ([1.5f32, 9.0, 2.0], [0.1f32, 0.2, 0.3]);
/// let a = activation_with(&[0, 2], |i| Lanes([x0[i], x1[i]]));
/// assert_eq!(a.0, [activation(&[0, 2], &x0), activation(&[0, 2], &x1)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
pub struct Lanes<const B: usize>(pub [f32; B]);

impl<const B: usize> Default for Lanes<B> {
    #[inline(always)]
    fn default() -> Self {
        Lanes([0.0; B])
    }
}

impl<const B: usize> core::ops::Add for Lanes<B> {
    type Output = Self;
    #[inline(always)]
    fn add(mut self, o: Self) -> Self {
        // An index loop: the GPU backend keeps the lanes in registers (a zip over the array's
        // by-value iterator went through local memory).
        for i in 0..B {
            self.0[i] += o.0[i];
        }
        self
    }
}
