//! A network in fixed-size arrays (no heap), for the firmware: `HC` hypercolumns of `M`
//! minicolumns with `IN = 2M` inputs.

use super::geometry::Geometry;
use super::network::Net;
use super::part::Part;
use crate::Error;

/// The whole state of a network of `HC = 2^L − 1` hypercolumns, in arrays.
///
/// ```
/// use neurobits_core::cortical::FixedNetwork;
/// // Configuration A: 3 levels of 16 minicolumns (7 KiB of weights).
/// let mut net = FixedNetwork::<7, 16, 32>::new(3).unwrap();
/// net.net().init(1);
/// assert!(net.net().w.iter().all(|&w| w < 655));
/// ```
#[derive(Clone, Debug)]
pub struct FixedNetwork<const HC: usize, const M: usize, const IN: usize> {
    levels: u32,
    w: [[[u16; M]; IN]; HC],
    omega: [[u32; M]; HC],
    cnt: [[u32; M]; HC],
    rf: [[u8; M]; HC],
}

impl<const HC: usize, const M: usize, const IN: usize> FixedNetwork<HC, M, IN> {
    /// A zeroed network of `levels` levels; fails unless `HC = 2^levels − 1` and `IN = 2M`.
    pub fn new(levels: u32) -> Result<Self, Error> {
        let geo = Geometry::new(levels, M)?;
        if geo.hypercolumns() != HC || geo.inputs() != IN {
            return Err(Error::CorticalShape);
        }
        Ok(FixedNetwork { levels, w: [[[0; M]; IN]; HC], omega: [[0; M]; HC], cnt: [[0; M]; HC], rf: [[0; M]; HC] })
    }

    /// The state as a [`Net`].
    pub fn net(&mut self) -> Net<'_> {
        let geo = Geometry::new(self.levels, M).expect("checked by new");
        Net {
            geo,
            part: Part::whole(&geo),
            w: self.w.as_flattened_mut().as_flattened_mut(),
            omega: self.omega.as_flattened_mut(),
            cnt: self.cnt.as_flattened_mut(),
            rf: self.rf.as_flattened_mut(),
        }
    }
}
