//! The host–kernel interface, typed: every GPU kernel's arguments are one `#[repr(C)]` struct
//! defined here (per model: [`crate::gbnn::kernels`], [`crate::flyhash::kernels`]), naming its
//! kernel through [`KernelArgs::KERNEL`]. `gpu-device` declares each entry point with the
//! struct's fields as parameters, and fails to compile unless the entry's name is the struct's
//! [`Kernel::name`] and its parameters are exactly the struct's fields, of the same types, in the
//! same order (it rebuilds the struct from them). `gpu-host` launches a struct, never a name and
//! an argument list. A change of arguments is one struct edit, and a mismatch fails to compile.
//!
//! Why fields rather than the struct as one by-value parameter: LLVM knows that a pointer passed
//! directly to a kernel points into global memory and emits `ld.global`/`atom.global`; a pointer
//! read out of an aggregate parameter gets generic loads, which cost 3–10 % on the hot kernels.

/// A device address of `T` elements, read-only to the kernel (8 bytes, the CUDA pointer).
#[repr(transparent)]
pub struct DevPtr<T>(pub *const T);

/// A device address of `T` elements the kernel may write.
#[repr(transparent)]
pub struct DevMut<T>(pub *mut T);

impl<T> Clone for DevPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevPtr<T> {}
impl<T> Clone for DevMut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevMut<T> {}

impl<T> core::fmt::Debug for DevPtr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "DevPtr({:p})", self.0)
    }
}
impl<T> core::fmt::Debug for DevMut<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "DevMut({:p})", self.0)
    }
}

impl<T> DevPtr<T> {
    /// The address of a device buffer (`addr`: a `CUdeviceptr`).
    ///
    /// ```
    /// let p = neurobits_core::kernel::DevPtr::<u64>::from_addr(0x1000);
    /// assert_eq!(p.0 as u64, 0x1000);
    /// ```
    pub const fn from_addr(addr: u64) -> Self {
        DevPtr(addr as usize as *const T)
    }

    /// The same address as a buffer of `U` (a buffer allocated as words of another type).
    ///
    /// ```
    /// let p = neurobits_core::kernel::DevPtr::<u32>::from_addr(256);
    /// assert_eq!(p.cast::<u64>().0 as u64, 256);
    /// ```
    pub const fn cast<U>(self) -> DevPtr<U> {
        DevPtr(self.0 as *const U)
    }
}

impl<T> DevMut<T> {
    /// The address of a device buffer (`addr`: a `CUdeviceptr`).
    ///
    /// ```
    /// let p = neurobits_core::kernel::DevMut::<u32>::from_addr(0x2000);
    /// assert_eq!(p.0 as u64, 0x2000);
    /// ```
    pub const fn from_addr(addr: u64) -> Self {
        DevMut(addr as usize as *mut T)
    }

    /// The same address, read-only (a buffer one kernel writes and the next reads).
    ///
    /// ```
    /// let p = neurobits_core::kernel::DevMut::<u32>::from_addr(8);
    /// assert_eq!(p.read().0 as u64, 8);
    /// ```
    pub const fn read(self) -> DevPtr<T> {
        DevPtr(self.0 as *const T)
    }

    /// The same address as a buffer of `U` (a scratch buffer allocated as bytes).
    ///
    /// ```
    /// let p = neurobits_core::kernel::DevMut::<u8>::from_addr(256);
    /// assert_eq!(p.cast::<u64>().0 as u64, 256);
    /// ```
    pub const fn cast<U>(self) -> DevMut<U> {
        DevMut(self.0 as *mut U)
    }
}

macro_rules! kernels {
    ($($variant:ident = $name:literal,)*) => {
        /// Every GPU kernel, by entry-point name.
        ///
        /// ```
        /// use neurobits_core::kernel::Kernel;
        /// assert_eq!(Kernel::GbnnStore.name(), "gbnn_store");
        /// assert!(Kernel::ALL.contains(&Kernel::FlyTopR));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Kernel {
            $(
                #[doc = concat!("The entry point `", $name, "`.")]
                $variant,
            )*
        }

        impl Kernel {
            /// Every kernel, in declaration order (index = discriminant).
            pub const ALL: &'static [Kernel] = &[$(Kernel::$variant),*];

            /// The PTX entry-point name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Kernel::$variant => $name,)*
                }
            }
        }
    };
}

kernels! {
    GbnnStore = "gbnn_store",
    GbnnInit = "gbnn_init",
    GbnnStepWord = "gbnn_step_word",
    GbnnProbeIndex = "gbnn_probe_index",
    GbnnProbeCheck = "gbnn_probe_check",
    GbnnJointFirst = "gbnn_joint_first",
    GbnnStepJoint = "gbnn_step_joint",
    GbnnStepSos = "gbnn_step_sos",
    GbnnCompact = "gbnn_compact",
    GbnnDenseSelect = "gbnn_dense_select",
    GbnnDecode = "gbnn_decode",
    GbnnPack = "gbnn_pack",
    GbnnUnpack = "gbnn_unpack",
    GbnnJointWarp = "gbnn_joint_warp",
    GbnnStepGlobal = "gbnn_step_global",
    FlyProjection = "fly_projection",
    FlyActivation = "fly_activation",
    FlyRadixInit = "fly_radix_init",
    FlyRadixHist = "fly_radix_hist",
    FlyRadixPick = "fly_radix_pick",
    FlyTieCount = "fly_tie_count",
    FlySelect = "fly_select",
    FlyWtaBisect64 = "fly_wta_bisect64",
    FlyHamming = "fly_hamming",
    FlyTopR = "fly_top_r",
    FlyPixelAct = "fly_pixel_act",
    FlyPixelWta = "fly_pixel_wta",
    FlyHammingKeys = "fly_hamming_keys",
    FlyHammingKeysMma = "fly_hamming_keys_mma",
    FlyHammingSelect = "fly_hamming_select",
    FlyCodesWordMajor = "fly_codes_word_major",
    FlyFloatSample = "fly_float_sample",
    FlyFloatInterval = "fly_float_interval",
    FlyFloatHash = "fly_float_hash",
    FlyFloatResolve = "fly_float_resolve",
    FlyGather = "fly_gather",
    FlyUnpackPixels = "fly_unpack_pixels",
    FlyAnnDist = "fly_ann_dist",
    FlyAnnTopR = "fly_ann_top_r",
    FlynnTrain = "flynn_train",
    FlynnClassify = "flynn_classify",
    OcnnTransferF32 = "ocnn_transfer_f32",
    OcnnStepF32 = "ocnn_step_f32",
    OcnnTransferF64 = "ocnn_transfer_f64",
    OcnnStepF64 = "ocnn_step_f64",
    OcnnPhaseBitsF32 = "ocnn_phase_bits_f32",
    OcnnPhaseBitsF64 = "ocnn_phase_bits_f64",
    OcnnPhaseHits = "ocnn_phase_hits",
    OcnnFragmentaryHitsF32 = "ocnn_fragmentary_hits_f32",
    OcnnFragmentaryHitsF64 = "ocnn_fragmentary_hits_f64",
    OcnnStepPerNeuronF32 = "ocnn_step_per_neuron_f32",
    OcnnLanesYF32 = "ocnn_lanes_y_f32",
    OcnnCombineYF32 = "ocnn_combine_y_f32",
    OcnnStepPerNeuronF64 = "ocnn_step_per_neuron_f64",
    OcnnLanesYF64 = "ocnn_lanes_y_f64",
    OcnnCombineYF64 = "ocnn_combine_y_f64",
    OcnnStepSparseF32 = "ocnn_step_sparse_f32",
    OcnnStepSparseF64 = "ocnn_step_sparse_f64",
    OcnnStepGroupedF32 = "ocnn_step_grouped_f32",
    OcnnStepGroupedF64 = "ocnn_step_grouped_f64",
    OcnnGroupFillF32 = "ocnn_group_fill_f32",
    OcnnGroupFillF64 = "ocnn_group_fill_f64",
    OcnnSparsePhaseHits = "ocnn_sparse_phase_hits",
    OcnnSparseFragmentaryHitsF32 = "ocnn_sparse_fragmentary_hits_f32",
    OcnnSparseFragmentaryHitsF64 = "ocnn_sparse_fragmentary_hits_f64",
    OcnnStepLaneRowsF32 = "ocnn_step_lane_rows_f32",
    OcnnStepLaneRowsF64 = "ocnn_step_lane_rows_f64",
    OcnnLaneWidthF32 = "ocnn_lane_width_f32",
    OcnnLaneFillF32 = "ocnn_lane_fill_f32",
    OcnnLaneWidthF64 = "ocnn_lane_width_f64",
    OcnnLaneFillF64 = "ocnn_lane_fill_f64",
    OcnnLanePointsWidthF32 = "ocnn_lane_points_width_f32",
    OcnnLanePointsFillF32 = "ocnn_lane_points_fill_f32",
    OcnnLanePointsWidthF64 = "ocnn_lane_points_width_f64",
    OcnnLanePointsFillF64 = "ocnn_lane_points_fill_f64",
    OcnnLaneQuot16 = "ocnn_lane_quot16",
    OcnnStepLaneStatesF32 = "ocnn_step_lane_states_f32",
    OcnnStepLaneStatesF64 = "ocnn_step_lane_states_f64",
    OcnnForestBest = "ocnn_forest_best",
    OcnnForestHook = "ocnn_forest_hook",
    OcnnForestJump = "ocnn_forest_jump",
    CorticalColumns = "cortical_columns",
    CorticalQueue = "cortical_queue",
    CorticalInit = "cortical_init",
}

/// The launch parameters of a kernel: the addresses of its argument struct's fields, in order
/// (one PTX `.param` each), and their sizes. Fixed capacity: no allocation.
#[derive(Clone, Copy, Debug)]
pub struct ParamPtrs {
    ptrs: [*mut core::ffi::c_void; MAX_PARAMS],
    sizes: [usize; MAX_PARAMS],
    len: usize,
}

/// Most fields an argument struct may have.
pub const MAX_PARAMS: usize = 24;

impl ParamPtrs {
    #[doc(hidden)]
    pub const fn new() -> Self {
        ParamPtrs { ptrs: [core::ptr::null_mut(); MAX_PARAMS], sizes: [0; MAX_PARAMS], len: 0 }
    }

    #[doc(hidden)]
    pub fn push<T>(&mut self, field: &T) {
        self.ptrs[self.len] = field as *const T as *mut core::ffi::c_void;
        self.sizes[self.len] = core::mem::size_of::<T>();
        self.len += 1;
    }

    /// The field addresses, as `cuLaunchKernel` takes them.
    pub fn ptrs(&mut self) -> &mut [*mut core::ffi::c_void] {
        &mut self.ptrs[..self.len]
    }

    /// The fields' sizes in bytes, in order.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes[..self.len]
    }
}

impl Default for ParamPtrs {
    fn default() -> Self {
        Self::new()
    }
}

/// The argument struct of one kernel.
///
/// # Safety
/// Implementors are `#[repr(C)]`, hold only plain integers, floats, plain-data structs and
/// [`DevPtr`]/[`DevMut`] (no references, no host pointers), and the entry point named
/// [`Kernel::name`] of [`KernelArgs::KERNEL`] takes their fields, in order, as its parameters.
/// Implement it only through `kernel_struct!`, which writes the field list once.
pub unsafe trait KernelArgs: Copy {
    /// The kernel that takes this struct.
    const KERNEL: Kernel;
    /// Number of fields (= kernel parameters).
    const PARAMS: usize;
    /// The fields' addresses, in declaration order: the launch's parameter array. Valid while
    /// `self` is borrowed.
    fn param_ptrs(&self) -> ParamPtrs;
}

/// `a == b` in a `const` context: lets `gpu-device` assert that an entry point's name is its
/// argument struct's [`Kernel::name`].
///
/// ```
/// assert!(neurobits_core::kernel::same_name("gbnn_store", "gbnn_store"));
/// assert!(!neurobits_core::kernel::same_name("gbnn_store", "gbnn_init"));
/// ```
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether offsets are strictly increasing: lets `gpu-device` assert that an entry point lists
/// its struct's fields in declaration order.
///
/// ```
/// assert!(neurobits_core::kernel::ascending(&[0, 4, 8]));
/// assert!(!neurobits_core::kernel::ascending(&[0, 8, 4]));
/// ```
pub const fn ascending(offsets: &[usize]) -> bool {
    let mut i = 1;
    while i < offsets.len() {
        if offsets[i] <= offsets[i - 1] {
            return false;
        }
        i += 1;
    }
    true
}

/// Defines a kernel's argument struct (`#[repr(C)]`, documented fields) and its [`KernelArgs`]
/// from one field list.
macro_rules! kernel_struct {
    ($(#[$m:meta])* $name:ident => $kernel:ident { $($(#[$fm:meta])* $field:ident: $fty:ty,)* }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct $name {
            $($(#[$fm])* pub $field: $fty,)*
        }

        // SAFETY: the struct is `#[repr(C)]` over plain data and device pointers, and gpu-device
        // declares `$kernel` with these fields, in this order (checked there at compile time).
        unsafe impl $crate::kernel::KernelArgs for $name {
            const KERNEL: $crate::kernel::Kernel = $crate::kernel::Kernel::$kernel;
            const PARAMS: usize = [$(stringify!($field)),*].len();
            fn param_ptrs(&self) -> $crate::kernel::ParamPtrs {
                let mut p = $crate::kernel::ParamPtrs::new();
                $(p.push(&self.$field);)*
                p
            }
        }
    };
}
pub(crate) use kernel_struct;
