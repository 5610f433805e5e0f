//! The host–kernel interface, typed: every GPU kernel takes exactly one `#[repr(C)]` argument
//! struct defined here (per model: [`crate::gbnn::kernels`], [`crate::flyhash::kernels`]), and
//! each struct names its kernel through [`KernelArgs::KERNEL`]. `gpu-device` declares each entry
//! point with that struct as its only parameter and checks at compile time that the entry's name
//! is the struct's [`Kernel::name`]; `gpu-host` launches a struct, never a name and an argument
//! list. A change of arguments is one struct edit, and a mismatch fails to compile.

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
    GbnnJointFirst = "gbnn_joint_first",
    GbnnOccupancy = "gbnn_occupancy",
    GbnnStepJoint = "gbnn_step_joint",
    GbnnStepSos = "gbnn_step_sos",
    GbnnCompact = "gbnn_compact",
    GbnnDenseSelect = "gbnn_dense_select",
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
}

/// The argument struct of one kernel.
///
/// # Safety
/// Implementors are `#[repr(C)]`, hold only plain integers, floats and [`DevPtr`]/[`DevMut`]
/// (no references, no host pointers), and are the one parameter of the entry point named
/// [`Kernel::name`] of [`KernelArgs::KERNEL`]: the host copies their bytes into the launch.
pub unsafe trait KernelArgs: Copy {
    /// The kernel that takes this struct.
    const KERNEL: Kernel;
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

/// Implements [`KernelArgs`] for argument structs.
macro_rules! kernel_args {
    ($($ty:ident => $kernel:ident),* $(,)?) => {
        $(
            // SAFETY: the struct is `#[repr(C)]` over integers, floats and device pointers, and
            // gpu-device declares `$kernel` with it as the only parameter (checked there).
            unsafe impl $crate::kernel::KernelArgs for $ty {
                const KERNEL: $crate::kernel::Kernel = $crate::kernel::Kernel::$kernel;
            }
        )*
    };
}
pub(crate) use kernel_args;
