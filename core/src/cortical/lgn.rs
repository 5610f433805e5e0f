//! The LGN stage and the bottom receptive fields (D-10): one on-off and one off-on cell per
//! pixel from a 3×3 centre–surround difference on integer pixels, and the image cut by
//! recursive bisection into one rectangle per bottom hypercolumn.

use super::geometry::Geometry;
use crate::Error;

/// The default cell threshold for pixels 0…16 (centre above the surround mean by 2/16).
pub const THETA: i32 = 16;

/// An image of `height × width` integer pixels, row-major, each pixel repeated `upsample ×
/// upsample` times before the LGN (16×16 networks on 8×8 digits: `upsample = 2`).
#[derive(Clone, Copy, Debug)]
pub struct Image<'a> {
    /// Pixels, row-major.
    pub pixels: &'a [u8],
    /// Rows.
    pub height: usize,
    /// Columns.
    pub width: usize,
    /// Replication factor per axis (≥ 1).
    pub upsample: usize,
}

impl Image<'_> {
    fn rows(&self) -> usize {
        self.height * self.upsample
    }
    fn cols(&self) -> usize {
        self.width * self.upsample
    }
    fn pixel(&self, r: isize, c: isize) -> i32 {
        if r < 0 || c < 0 || r as usize >= self.rows() || c as usize >= self.cols() {
            return 0;
        }
        let (r, c) = (r as usize / self.upsample, c as usize / self.upsample);
        self.pixels[r * self.width + c] as i32
    }

    /// `d = 8·centre − Σ 8 neighbours` at (r, c), zero outside the image.
    fn contrast(&self, r: usize, c: usize) -> i32 {
        let (r, c) = (r as isize, c as isize);
        let mut d = 9 * self.pixel(r, c);
        for dr in -1..=1 {
            for dc in -1..=1 {
                d -= self.pixel(r + dr, c + dc);
            }
        }
        d
    }
}

/// The rectangle `(row, col, height, width)` of bottom hypercolumn `j`: the image halved `L − 1`
/// times, the longer side first (columns on ties), first half to the left child.
pub fn receptive_field(geo: &Geometry, rows: usize, cols: usize, j: usize) -> (usize, usize, usize, usize) {
    let (mut r0, mut c0, mut h, mut w) = (0, 0, rows, cols);
    let depth = geo.levels() - 1;
    for d in 0..depth {
        let second = (j >> (depth - 1 - d)) & 1 == 1;
        if w >= h {
            let half = w / 2;
            if second {
                c0 += half;
                w -= half;
            } else {
                w = half;
            }
        } else {
            let half = h / 2;
            if second {
                r0 += half;
                h -= half;
            } else {
                h = half;
            }
        }
    }
    (r0, c0, h, w)
}

/// Writes the bottom inputs of `img` into `out` (`geo.bottom_words()` words): hypercolumn `j`'s
/// rectangle row-major, pixel `p` giving input `2p` (on-off: `d > θ`) and `2p + 1` (off-on:
/// `−d > θ`). Fails unless every rectangle holds exactly `M` pixels.
///
/// ```
/// use neurobits_core::cortical::{lgn::{bottom_inputs, Image, THETA}, Geometry};
/// let geo = Geometry::new(3, 16).unwrap();
/// let mut px = [0u8; 64];
/// px[9] = 16; // one bright pixel at (1, 1)
/// let mut out = [0u64; 4];
/// bottom_inputs(&geo, Image { pixels: &px, height: 8, width: 8, upsample: 1 }, THETA, &mut out).unwrap();
/// // (1, 1) is pixel 5 of rectangle 0 (the top-left 4×4): its on-off cell is input 10.
/// // Its neighbours have −d = 16, not above θ: no off-on cell fires.
/// assert_eq!(out, [1 << 10, 0, 0, 0]);
/// ```
pub fn bottom_inputs(geo: &Geometry, img: Image<'_>, theta: i32, out: &mut [u64]) -> Result<(), Error> {
    let (rows, cols) = (img.rows(), img.cols());
    if img.upsample == 0 || img.pixels.len() != img.height * img.width || out.len() != geo.bottom_words() {
        return Err(Error::CorticalImage);
    }
    let (m, nw) = (geo.minicolumns(), geo.input_words());
    out.fill(0);
    for j in 0..geo.level_len(0) {
        let (r0, c0, h, w) = receptive_field(geo, rows, cols, j);
        if h * w != m {
            return Err(Error::CorticalImage);
        }
        let x = &mut out[j * nw..(j + 1) * nw];
        for p in 0..m {
            let d = img.contrast(r0 + p / w, c0 + p % w);
            for (bit, on) in [(2 * p, d > theta), (2 * p + 1, -d > theta)] {
                x[bit / 64] |= (on as u64) << (bit % 64);
            }
        }
    }
    Ok(())
}
