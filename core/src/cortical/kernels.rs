//! Argument structs of the cortical kernels (see [`crate::kernel`]).
