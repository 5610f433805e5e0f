//! Progress bars for long runs (drawn on stderr only when it is a terminal).

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps labelled `msg`.
pub fn bar(len: u64, msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>24} [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})")
            .expect("static template")
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}
