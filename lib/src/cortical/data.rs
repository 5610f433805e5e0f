//! Labelled images for the cortical network: sklearn's digits CSV (64 pixel columns then the
//! label, pixels 0…16, gzipped or not) and IDX image files with their `labels-idx1` sibling
//! (Fashion-MNIST, MNIST; 8-bit pixels are scaled to 0…16 as `(p·16 + 127) / 255`).

use anyhow::{anyhow, bail, Result};
use neurobits_core::cortical::lgn::{bottom_inputs, Image};
use neurobits_core::cortical::Geometry;
use std::path::{Path, PathBuf};

use crate::flyhash::data::read;

/// Square images with labels, pixels 0…16.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Pixels, image after image, row-major.
    pub pixels: Vec<u8>,
    /// Side of the square images.
    pub side: usize,
    /// One label per image.
    pub labels: Vec<u32>,
}

impl Dataset {
    /// Images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no images.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Image `i`'s pixels.
    pub fn image(&self, i: usize) -> &[u8] {
        &self.pixels[i * self.side * self.side..(i + 1) * self.side * self.side]
    }

    /// Reads a digits CSV or an IDX image file (labels from the file named like it with
    /// `labels-idx1` in place of `images-idx3`).
    pub fn read(path: &Path) -> Result<Self> {
        let name = path.display().to_string();
        let m = read(path)?;
        let idx_labels = labels_path(path).filter(|p| p.exists());
        let (cols, labels): (usize, Vec<f32>) = match &idx_labels {
            Some(lp) => {
                let l = read(lp)?;
                if l.rows != m.rows || l.cols != 1 {
                    bail!("{}: {} labels for {} images", lp.display(), l.rows, m.rows);
                }
                (m.cols, l.data)
            }
            None => {
                if m.cols < 2 {
                    bail!("{name}: expected pixel columns then a label column");
                }
                (m.cols - 1, (0..m.rows).map(|r| m.row(r)[m.cols - 1]).collect())
            }
        };
        let mut raw = Vec::with_capacity(m.rows * cols);
        for r in 0..m.rows {
            raw.extend_from_slice(&m.row(r)[..cols]);
        }
        let (pixels, side) = pixels(&raw, cols, &name)?;
        let labels = labels
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                if l.fract() != 0.0 || !(0.0..1e6).contains(&l) {
                    Err(anyhow!("{name}: label of image {} is not a small non-negative integer: {l}", i + 1))
                } else {
                    Ok(l as u32)
                }
            })
            .collect::<Result<_>>()?;
        Ok(Dataset { pixels, side, labels })
    }

    /// The spec's split (§11.6): the training list = the first `per_class` images of class 0 in
    /// file order, then of class 1, …; the test list = the next `test_per_class` of each class.
    pub fn split(&self, per_class: usize, test_per_class: usize) -> (Vec<usize>, Vec<usize>) {
        let mut classes: Vec<u32> = self.labels.clone();
        classes.sort_unstable();
        classes.dedup();
        let (mut train, mut test) = (vec![], vec![]);
        for c in classes {
            let of_c = (0..self.len()).filter(|&i| self.labels[i] == c);
            let v: Vec<usize> = of_c.take(per_class + test_per_class).collect();
            train.extend(v.iter().take(per_class));
            test.extend(v.iter().skip(per_class));
        }
        (train, test)
    }

    /// The hold-out split every evaluation uses: per class, in file order, the **last**
    /// `test_per_class` images are the test list; of the others, the last `validation_per_class`
    /// are the validation list and the first `train_per_class` (all when `None`) the training
    /// list. The test list does not depend on how many images are trained on, so learning curves
    /// share it. Returns (train, validation, test) ids.
    ///
    /// ```
    /// let ds = neurobits::cortical::data::Dataset { pixels: vec![0; 10], side: 1, labels: vec![0, 1, 0, 1, 0, 1, 0, 1, 0, 1] };
    /// let (tr, va, te) = ds.holdout(Some(1), 1, 2);
    /// assert_eq!((tr, va, te), (vec![0, 1], vec![4, 5], vec![6, 8, 7, 9]));
    /// ```
    pub fn holdout(
        &self,
        train_per_class: Option<usize>,
        validation_per_class: usize,
        test_per_class: usize,
    ) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
        let mut classes: Vec<u32> = self.labels.clone();
        classes.sort_unstable();
        classes.dedup();
        let (mut train, mut val, mut test) = (vec![], vec![], vec![]);
        for c in classes {
            let of_c: Vec<usize> = (0..self.len()).filter(|&i| self.labels[i] == c).collect();
            let (pool, t) = of_c.split_at(of_c.len().saturating_sub(test_per_class));
            let (pool, v) = pool.split_at(pool.len().saturating_sub(validation_per_class));
            test.extend_from_slice(t);
            val.extend_from_slice(v);
            train.extend(pool.iter().take(train_per_class.unwrap_or(usize::MAX)));
        }
        (train, val, test)
    }

    /// The bottom inputs of images `ids` for `geo` (`geo.bottom_words()` words each): each image
    /// upsampled `upsample` times, padded with zeros to the size the tree needs, through the LGN.
    pub fn bottom(&self, geo: &Geometry, ids: &[usize], upsample: usize, theta: i32) -> Result<Vec<u64>> {
        let side = self
            .side
            .checked_mul(upsample)
            .filter(|&s| s > 0 && s <= 1 << 16)
            .ok_or_else(|| anyhow!("bad --upsample"))?;
        let need = geo.level_len(0).checked_mul(geo.minicolumns()).ok_or_else(|| anyhow!("network too large"))?;
        let (h, w) = padded_size(side, need).ok_or_else(|| {
            anyhow!(
                "{side}x{side} images (after upsampling) do not fit the {need} bottom pixels of {} levels x {} minicolumns \
                 (needs H*W = 2^(L-1)*M, e.g. a square or a 1x2 rectangle at least as large)",
                geo.levels(),
                geo.minicolumns()
            )
        })?;
        let mut out = vec![0u64; ids.len() * geo.bottom_words()];
        let mut canvas = vec![0u8; h * w];
        let (top, left) = ((h - side) / 2, (w - side) / 2);
        for (k, &i) in ids.iter().enumerate() {
            canvas.fill(0);
            let img = self.image(i);
            for r in 0..side {
                for c in 0..side {
                    canvas[(top + r) * w + left + c] = img[(r / upsample) * self.side + c / upsample];
                }
            }
            let chunk = &mut out[k * geo.bottom_words()..(k + 1) * geo.bottom_words()];
            bottom_inputs(geo, Image { pixels: &canvas, height: h, width: w, upsample: 1 }, theta, chunk)
                .map_err(|e| anyhow!("{e}"))?;
        }
        Ok(out)
    }
}

/// Images of `cols` pixels each (values 0…16, or 8-bit 0…255 scaled to 0…16 as
/// `(p·16 + 127) / 255` when any value is above 16) as pixels 0…16 and the square's side.
pub fn pixels(raw: &[f32], cols: usize, name: &str) -> Result<(Vec<u8>, usize)> {
    let side = (cols as f64).sqrt().round() as usize;
    if side * side != cols || side == 0 {
        bail!("{name}: {cols} pixels per image is not a square image");
    }
    if let Some(v) = raw.iter().find(|v| v.fract() != 0.0 || **v < 0.0 || **v > 255.0) {
        bail!("{name}: pixel value {v} is not an integer in 0..=255");
    }
    let eight_bit = raw.iter().any(|&v| v > 16.0);
    let pixels = raw.iter().map(|&v| if eight_bit { ((v as u32 * 16 + 127) / 255) as u8 } else { v as u8 }).collect();
    Ok((pixels, side))
}

/// `(H, W)` with `H·W = need` holding a `side × side` image: the square, or `H × 2H`.
pub(crate) fn padded_size(side: usize, need: usize) -> Option<(usize, usize)> {
    let s = (need as f64).sqrt().round() as usize;
    if s * s == need && s >= side {
        return Some((s, s));
    }
    let h = ((need / 2) as f64).sqrt().round() as usize;
    (2 * h * h == need && h >= side).then_some((h, 2 * h))
}

fn labels_path(images: &Path) -> Option<PathBuf> {
    let name = images.file_name()?.to_str()?;
    name.contains("images-idx3").then(|| images.with_file_name(name.replace("images-idx3", "labels-idx1")))
}
