//! The exact hash's pixel path: inputs that are all 8-bit pixels are packed four per
//! `Pixels4` word, summed as integers by `fly_pixel_act` (a shared-memory tile per 64 inputs) and
//! selected by `fly_pixel_wta` (a lane per input, a warp per part of the code). Same codes as the `f32` path: the integer
//! sums are the activations (see `neurobits_core::flyhash::Pixels4`).

use cudarc::driver::CudaSlice;
use neurobits_core::flyhash::kernels::{self as k, PIXEL_ROWS_PER_PASS, PIXEL_TILE_GROUPS, PIXEL_TILE_INPUTS};
use neurobits_core::flyhash::{is_pixel, pixel_sums_exact};
use neurobits_core::Word;

use super::FlyGpu;
use crate::gpu::STAGING_HALF;
use crate::launch::{launch_shaped, rd, resident_blocks_shaped, wr, KernelTimer};
use crate::GpuError;

/// A batch's buffers: `(b, one part's sums, one part's first-pass counts, the b codes)`.
type PartBuffers = (u32, CudaSlice<u16>, CudaSlice<u32>, CudaSlice<u64>);

/// Row offsets of the projection for the pixel tile, and the sums and codes of the last batch.
#[derive(Default)]
pub(super) struct PixelBuffers {
    pub(super) offs: Option<(u32, CudaSlice<u32>)>,
    batch: Option<PartBuffers>,
    /// A cap on the tiles of one part (tests: several parts on a small batch).
    max_part_tiles: Option<u32>,
}

/// How many row ranges to split each of `tiles` tiles into (each a block of `fly_pixel_act`): the
/// count whose blocks fill the last of the waves of `slots` resident blocks best (reloading a tile
/// per range costs little: ~0.5 % of a range's work at Fashion-MNIST's size).
fn row_chunks(tiles: u32, passes: u32, slots: u32) -> u32 {
    let fill = |c: u32| {
        let blocks = (tiles * c) as f64;
        blocks / ((blocks / slots as f64).ceil() * slots as f64) - 1e-3 * c as f64
    };
    (1..=passes.min(1024)).max_by(|&a, &b| fill(a).total_cmp(&fill(b)).then(b.cmp(&a))).unwrap_or(1)
}

/// Packs the `b` inputs of `x` (row-major, `d` values each) four per word into `pix`
/// (`d × groups`, dimension-major); `false` as soon as a value is not an 8-bit pixel. A
/// transpose: every core takes a band of dimensions, and walks the inputs in blocks of
/// [`PACK_BLOCK`] groups so that its writes fill whole cache lines of each dimension's row
/// (one input at a time would touch a new line per dimension; 0.1 s of Fashion-MNIST's 0.5 s
/// host time on the device machine was this loop alone, single-threaded).
fn pack_rows(x: &[f32], d: usize, groups: usize, pix: &mut [u32]) -> bool {
    use rayon::prelude::*;
    const BAND: usize = 16;
    if pix.is_empty() {
        return true;
    }
    pix.par_chunks_mut(BAND * groups).enumerate().all(|(band, rows)| {
        let j0 = band * BAND;
        let dims = rows.len() / groups.max(1);
        for g0 in (0..groups).step_by(PACK_BLOCK) {
            let g1 = (g0 + PACK_BLOCK).min(groups);
            for dj in 0..dims {
                let j = j0 + dj;
                let row = &mut rows[dj * groups + g0..dj * groups + g1];
                for (g, slot) in (g0..g1).zip(row.iter_mut()) {
                    let mut word = [0u8; 4];
                    for (q, byte) in word.iter_mut().enumerate() {
                        if let Some(&v) = x.get((4 * g + q) * d + j) {
                            if !is_pixel(v) {
                                return false;
                            }
                            *byte = v as u8;
                        }
                    }
                    *slot = u32::from_le_bytes(word);
                }
            }
        }
        true
    })
}

/// Groups (of four inputs) per block of [`pack_rows`]: 16 words = one 64-byte line per dimension.
const PACK_BLOCK: usize = 16;

impl FlyGpu<'_> {
    /// Whether these parameters allow the pixel path: sums fit 16 bits, `m` is a whole number of
    /// code words, and the tile of `d + 1` dimensions fits one block's shared memory.
    fn pixel_params_ok(&self) -> bool {
        let p = &self.params;
        pixel_sums_exact(p.s) && p.m.is_multiple_of(64) && k::pixel_act_shared(p.d, p.s) <= 200 << 10
    }

    /// The inputs packed for the pixel path (`d × ⌈b/4⌉` words, dimension-major), or `None` when
    /// some value is not an 8-bit pixel or the parameters do not allow it.
    pub(super) fn pack_pixels(&self, x: &[f32], b: usize) -> Result<Option<CudaSlice<u32>>, GpuError> {
        if !self.pixel_params_ok() {
            return Ok(None);
        }
        let d = self.params.d as usize;
        let groups = b.div_ceil(4);
        let mut pix = vec![0u32; d * groups];
        if !pack_rows(x, d, groups, &mut pix) {
            return Ok(None);
        }
        self.gpu.ensure_fits(pix.len() as u64 * 4)?;
        Ok(Some(self.gpu.stream.clone_htod(&pix)?))
    }

    /// The projection as byte offsets into the tile (`j · 128`), rows padded to a multiple of 8
    /// with the zero row `d`; built once from the device's projection.
    fn pixel_offsets(&self) -> Result<(), GpuError> {
        let mut px = self.pixel.borrow_mut();
        if px.offs.is_some() {
            return Ok(());
        }
        let (s, d) = (self.params.s as usize, self.params.d);
        let sp = s.next_multiple_of(8);
        let stride = PIXEL_TILE_GROUPS * 4;
        let proj = self.projection()?;
        let mut offs = Vec::with_capacity(self.params.m as usize * sp);
        for row in proj.chunks(s) {
            offs.extend(row.iter().map(|&j| j * stride));
            offs.extend(std::iter::repeat_n(d * stride, sp - s));
        }
        px.offs = Some((sp as u32, self.gpu.stream.clone_htod(&offs)?));
        Ok(())
    }

    /// Caps the tiles (of 128 inputs) of one part of a pixel-path batch, so that a small batch runs
    /// in several parts (for tests; the default is one wave of the select's blocks, at most one staging half).
    #[doc(hidden)]
    pub fn set_max_part_tiles(&self, tiles: u32) {
        self.pixel.borrow_mut().max_part_tiles = Some(tiles);
    }

    /// Exact codes of `b` packed inputs into `out`; returns the kernels' milliseconds. The batch
    /// runs in parts of whole tiles, at most one wave of the select's blocks whose codes fit one
    /// half of the pinned staging buffer: each part's codes download while the next parts'
    /// kernels run, and the sums buffer holds one part (0.4 GB rather than 3 GB for 60 000
    /// Fashion-MNIST images on an H100).
    pub(super) fn hash_pixels(&self, b: u32, pix: &CudaSlice<u32>, out: &mut Vec<Word>) -> Result<f64, GpuError> {
        self.pixel_offsets()?;
        let (g, p) = (self.gpu, &self.params);
        let mut px = self.pixel.borrow_mut();
        let px = &mut *px;
        let (m, cw) = (p.m as usize, p.code_words());
        let groups = b.div_ceil(4);
        let tiles = groups.div_ceil(PIXEL_TILE_GROUPS);
        // A part is at most one wave of `fly_pixel_wta` blocks (32 inputs each) and its codes fit
        // one half of the pinned staging buffer: the parts of one staging half (6 of 10 000
        // Fashion-MNIST images, 313 blocks on 264 slots) left the select's second wave nearly
        // empty, and parts of two waves delayed the last part's download (measured).
        let wta_slots = resident_blocks_shaped::<k::PixelWta>(g, k::PIXEL_WTA_THREADS, k::PIXEL_WTA_SHARED)?;
        let fit =
            (wta_slots * 32 / PIXEL_TILE_INPUTS).min((STAGING_HALF / (PIXEL_TILE_INPUTS as usize * cw)) as u32).max(1);
        let fit = px.max_part_tiles.map_or(fit, |cap| fit.min(cap.max(1)));
        let part_tiles = tiles.div_ceil(tiles.div_ceil(fit));
        let bp = part_tiles * PIXEL_TILE_INPUTS;
        if px.batch.as_ref().is_none_or(|(n, keys, ..)| *n != b || keys.len() != bp as usize * m) {
            px.batch = None;
            g.ensure_fits(bp as u64 * (m as u64 * 2 + 1024) + b as u64 * cw as u64 * 8)?;
            let bpu = bp as usize;
            // SAFETY: for each part, `fly_pixel_act` writes every sum of its bp (padded) inputs
            // before `fly_pixel_wta` reads them, and the latter writes every word of the part's
            // codes; the counts are zeroed before each part.
            px.batch = Some(unsafe {
                (
                    b,
                    g.stream.alloc::<u16>(bpu * m)?,
                    g.stream.alloc::<u32>(bpu * 256)?,
                    g.stream.alloc::<u64>(b as usize * cw)?,
                )
            });
        }
        let (sp, offs) = px.offs.as_ref().expect("built above");
        let (_, keys, hist, codes) = px.batch.as_mut().expect("just set");
        let act_shape = (k::PIXEL_ACT_THREADS, k::pixel_act_shared(p.d, p.s));
        let slots = resident_blocks_shaped::<k::PixelAct>(g, act_shape.0, act_shape.1)?;
        let passes = p.m / PIXEL_ROWS_PER_PASS;
        let mut t = KernelTimer::default();
        let mut parts = Vec::new();
        for tile0 in (0..tiles).step_by(part_tiles as usize) {
            let nt = part_tiles.min(tiles - tile0);
            let (i0, i1) = (tile0 * PIXEL_TILE_INPUTS, b.min((tile0 + nt) * PIXEL_TILE_INPUTS));
            g.stream.memset_zeros(hist)?;
            // At least enough ranges that a block's rows stay below 2¹⁶ (its 16-bit counts).
            let chunks = row_chunks(nt, passes, slots).max(p.m.div_ceil(65_472));
            let rows = passes.div_ceil(chunks) * PIXEL_ROWS_PER_PASS;
            let chunks = p.m.div_ceil(rows);
            let a = k::PixelAct {
                m: p.m,
                k: p.k,
                d: p.d,
                groups,
                tile0,
                sp: *sp,
                rows,
                offs: rd(g, offs),
                pix: rd(g, pix),
                bins: k::pixel_bins(p.s),
                bp,
                keys: wr(g, keys),
                hist: wr(g, hist),
            };
            let shape = (nt * chunks, act_shape.0, act_shape.1);
            // SAFETY: `pix` holds d·groups words, `offs` m·sp offsets below (d + 1)·128 (inside
            // the tile), `keys` m·bp sums and `hist` bp·256 counts for the nt ≤ bp/64 tiles of
            // the part; m and rows are multiples of the pass (checked by `pixel_params_ok` and
            // built so here), as the kernel requires.
            unsafe { launch_shaped(g, Some(&mut t), shape, a)? };
            let (keys, hist) = (rd(g, keys), rd(g, hist));
            let a = k::PixelWta { m: p.m, k: p.k, b, i0, bp, keys, hist, codes: wr(g, codes) };
            let shape = ((i1 - i0).div_ceil(32), k::PIXEL_WTA_THREADS, k::PIXEL_WTA_SHARED);
            // SAFETY: a block per 32 of the part's inputs (below bp, a multiple of 64) over their
            // m sums; `codes` holds b·⌈m/64⌉ words.
            unsafe { launch_shaped(g, Some(&mut t), shape, a)? };
            let ready = g.stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
            parts.push((i0 as usize * cw..i1 as usize * cw, Some(ready)));
        }
        out.clear();
        g.download_parts(codes, parts, out)?;
        t.total_ms()
    }
}

#[cfg(test)]
mod tests {
    use super::{pack_rows, row_chunks};

    /// The split fills the last wave better than no split and than its neighbours.
    #[test]
    fn row_chunks_fill_the_last_wave() {
        let fill = |t: u32, c: u32, slots: u32| (t * c) as f64 / ((t * c).div_ceil(slots) * slots) as f64;
        for (tiles, slots) in [(157u32, 264u32), (938, 264), (2, 264), (32, 132)] {
            let c = row_chunks(tiles, 784, slots);
            assert!((1..=64).all(|o| fill(tiles, c, slots) >= fill(tiles, o, slots) - 0.07), "{tiles} tiles: {c}");
            assert!(fill(tiles, c, slots) >= 0.9, "{tiles} tiles over {slots} slots: {c} chunks");
        }
        assert!(row_chunks(1000, 3, 264) <= 3, "at most one chunk per pass");
    }

    /// The packing one input at a time (what `pack_rows` replaced).
    fn plain(x: &[f32], d: usize, groups: usize) -> Option<Vec<u32>> {
        let mut pix = vec![0u32; d * groups];
        for (g, inputs) in x.chunks(4 * d).enumerate() {
            for j in 0..d {
                let px = |q: usize| inputs.get(q * d + j).map(|&v| v as u8).unwrap_or(0);
                pix[j * groups + g] = u32::from_le_bytes([px(0), px(1), px(2), px(3)]);
            }
        }
        x.iter().all(|&v| neurobits_core::flyhash::is_pixel(v)).then_some(pix)
    }

    #[test]
    fn blocked_packing_equals_the_plain_one() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for (b, d) in [(0usize, 5usize), (1, 1), (3, 7), (64, 16), (65, 17), (257, 33), (1000, 40)] {
            let x: Vec<f32> = (0..b * d).map(|_| (next() % 256) as f32).collect();
            let groups = b.div_ceil(4);
            let mut pix = vec![0u32; d * groups];
            assert!(pack_rows(&x, d, groups, &mut pix), "b={b} d={d}");
            assert_eq!(Some(pix), plain(&x, d, groups), "b={b} d={d}");
            if b > 0 {
                // One value anywhere that is not a pixel refuses the whole batch.
                for bad in [0.5, -1.0, 256.0, f32::NAN] {
                    let mut y = x.clone();
                    y[(next() as usize) % (b * d)] = bad;
                    let mut pix = vec![0u32; d * groups];
                    assert!(!pack_rows(&y, d, groups, &mut pix), "b={b} d={d} {bad}");
                }
            }
        }
    }
}
