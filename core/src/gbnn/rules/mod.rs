//! The retrieval rules as word-level step functions.
//!
//! Each function computes part of the *next* state `v^{t+1}` from the current state `v` (one
//! probe, [`Geometry::row_words`] words) and `W`, reading nothing else: a CPU loop calls it for
//! every cluster or word of a probe, a GPU thread calls it for one `(probe, cluster, word)`, the
//! FPGA model evaluates it as the combinational logic of one clock, the firmware calls it
//! directly. All updates are synchronous (Jacobi): every part of `v^{t+1}` reads `v^t` only.

mod bail_out_early;
mod init;
mod joint;
mod joint_cols;
mod sum_of_max;
mod sum_of_sum;
mod wta;

pub use bail_out_early::{
    bail_out_early_word, bail_out_early_word_occ, occupancy, occupancy_part, occupancy_words, supported, supported_occ,
};
pub use init::init_word;
pub use joint::{
    joint_first_word, joint_first_word_rows, joint_iter_word, joint_iter_word_occ, known_row, known_rows, known_symbol,
};
pub use joint_cols::{
    joint_first_pair_cols, joint_first_word_cols, joint_first_words_cols, joint_iter_word_cols, joint_support_cols,
};
pub use sum_of_max::sum_of_max_word;
pub use sum_of_sum::{score, select_max, sum_of_sum_cluster};
pub use wta::{
    active_clusters, global_max, global_max_word, global_score, global_word, max_score, select_equal,
    sum_of_max_wta_cluster,
};

#[allow(unused_imports)]
use crate::gbnn::Geometry;
