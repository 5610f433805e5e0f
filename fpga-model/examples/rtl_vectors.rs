//! Writes the test vectors the RTL replays (`make fpga-verilate`): for 3×3, 4×16 and 8×50, the
//! stored messages and, per rule, probes with varied γ and `max_iter`, each clock with the cycle
//! model's registers after it. Usage: `rtl_vectors OUT_DIR [PROBES_PER_RULE]` (default 1000).
//! For 3×3 and 4×16 also `gbnn_CxL_som.vec`: the same without the sum-of-sum probes, for the
//! sum-of-max-only build (`SUM_OF_SUM = 0`), whose score registers stay zero as the model's do
//! when it never runs sum-of-sum.
//!
//! One line per clock, `CMD INPUTS | phase iterations converged state out scores`, the three bit
//! vectors in hex (most significant digit first, bit i = neuron i; scores `SW` bits each), or
//! `=` where a vector equals the line before's. `S sym…` stores a message (then `# edges set`),
//! `P rule gamma max_iter sym…` starts a probe (an erased symbol is 65535, `ERASED`), `T` is a
//! tick, `Z` the reset; `W hex` (no clock) is W, one bit per edge in the RTL's `edge_at` order;
//! `R rule probe` labels what follows.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use neurobits_core::gbnn::workload::{message, ProbePlan};
use neurobits_core::gbnn::{Params, Rule};
use neurobits_core::prng::{draw, stream_key};
use neurobits_fpga::{circuit_size, Circuit, Phase, S3x3, S8x50, Size};

circuit_size!(S4x16, 4, 16);

/// Bits as hex, most significant digit first.
fn hex(bits: &[bool]) -> String {
    let digits = bits.len().div_ceil(4);
    (0..digits)
        .rev()
        .map(|d| {
            let x = (0..4).filter(|&k| bits.get(d * 4 + k).copied().unwrap_or(false)).fold(0, |a, k| a | (1 << k));
            char::from_digit(x, 16).unwrap_or('0')
        })
        .collect()
}

fn state_bits<S: Size>(words: &[u64]) -> Vec<bool> {
    let wpc = S::L.div_ceil(64);
    (0..S::C * S::L).map(|i| (words[(i / S::L) * wpc + (i % S::L) / 64] >> (i % S::L % 64)) & 1 == 1).collect()
}

/// Score width of the RTL: room for the largest effective γ plus every other cluster's neurons.
fn score_bits<S: Size>() -> usize {
    let m = (S::C - 1) * S::L;
    (usize::BITS - (2 * m + 1).leading_zeros()) as usize
}

fn edge_bits<S: Size>(c: &Circuit<S>) -> Vec<bool> {
    let (w, rw, wpc) = (c.weights(), c.geometry().row_words(), S::L.div_ceil(64));
    let mut bits = Vec::new();
    for a in 0..S::C {
        for b in a + 1..S::C {
            for la in 0..S::L {
                for lb in 0..S::L {
                    bits.push((w[(a * S::L + la) * rw + b * wpc + lb / 64] >> (lb % 64)) & 1 == 1);
                }
            }
        }
    }
    bits
}

/// The registers after a clock, with `=` for vectors unchanged since the last line.
struct Expect {
    last: [String; 3],
}

impl Expect {
    fn line<S: Size>(&mut self, c: &Circuit<S>) -> String {
        let sw = score_bits::<S>();
        let scores: Vec<bool> = c.scores().iter().flat_map(|&s| (0..sw).map(move |k| (s >> k) & 1 == 1)).collect();
        let now = [hex(&state_bits::<S>(c.state())), hex(&state_bits::<S>(c.output())), hex(&scores)];
        let mut out = format!("{} {} {}", c.phase() as u8, c.stats().iterations, c.stats().converged as u8);
        for (last, now) in self.last.iter_mut().zip(now) {
            if *last == now {
                out.push_str(" =");
            } else {
                write!(out, " {now}").unwrap();
                *last = now;
            }
        }
        out
    }
}

fn syms(s: &[u16]) -> String {
    s.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
}

fn write<S: Size>(dir: &Path, stored: u64, probes: usize, rules: &[Rule], suffix: &str) -> std::io::Result<()> {
    let mut c = Circuit::<S>::new();
    let g = *c.geometry();
    let mut f = String::new();
    let symw = (usize::BITS - S::L.leading_zeros()) as usize; // ⌈log₂(L + 1)⌉
    writeln!(f, "size {} {} {} {}", S::C, S::L, symw, score_bits::<S>()).unwrap();
    let mut ex = Expect { last: [String::new(), String::new(), String::new()] };
    writeln!(f, "Z | {}", ex.line(&c)).unwrap();
    let mut m = vec![0u16; S::C];
    for k in 0..stored {
        message(&g, 11, k, &mut m);
        c.store(&m).expect("a generated message is valid");
        let set = edge_bits(&c).iter().filter(|&&b| b).count();
        writeln!(f, "S {} {set} | {}", syms(&m), ex.line(&c)).unwrap();
    }
    writeln!(f, "W {}", hex(&edge_bits(&c))).unwrap();
    // Probes: every erased count 1..=C, of stored messages (even rounds) and never-stored ones.
    let mut list = Vec::new();
    let mut round = 0u64;
    while list.len() < probes {
        let e = 1 + (round as usize % S::C);
        let seed = if round.is_multiple_of(2) { 11 } else { 500 + round };
        let plan = ProbePlan::new(g, seed, stored, 90 + round, stored, e).expect("a valid plan");
        for p in 0..stored.min((probes - list.len()) as u64) {
            plan.probe(p, &mut m);
            list.push(m.clone());
        }
        round += 1;
    }
    let key = stream_key(2026, 38);
    for &rule in rules {
        for (p, probe) in list.iter().enumerate() {
            // γ: mostly 1, else 0, anything up to past the cap, or u32::MAX; sum-of-sum's limit:
            // mostly 20, sometimes 0 to 3 (the limit path and the no-update path).
            let r = draw(key, (rule as u64) << 32 | p as u64);
            let gamma = match r % 8 {
                0 => 0,
                1 => (r >> 8) as u32 % (2 * S::C * S::L) as u32,
                2 => u32::MAX,
                _ => 1,
            };
            let max_iter = if (r >> 40).is_multiple_of(4) { (r >> 44) as u32 % 4 } else { 20 };
            writeln!(f, "R {} {p}", rule.name()).unwrap();
            c.start(probe, rule, Params { gamma, max_iter }).expect("a generated probe is valid");
            writeln!(f, "P {} {gamma} {max_iter} {} | {}", rule as u32, syms(probe), ex.line(&c)).unwrap();
            while c.phase() != Phase::Done {
                c.tick();
                writeln!(f, "T | {}", ex.line(&c)).unwrap();
            }
            // Done holds: one more clock shows it.
            c.tick();
            writeln!(f, "T | {}", ex.line(&c)).unwrap();
        }
    }
    let path = dir.join(format!("gbnn_{}x{}{suffix}.vec", S::C, S::L));
    let tmp = path.with_extension("vec.tmp");
    std::fs::File::create(&tmp)?.write_all(f.as_bytes())?;
    std::fs::rename(tmp, path)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: rtl_vectors OUT_DIR [PROBES_PER_RULE]");
        std::process::exit(2);
    };
    let probes = match args.get(2).map(|s| s.parse::<usize>()) {
        None => 1000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("rtl_vectors: PROBES_PER_RULE must be a positive integer, got {:?}", args[2]);
            std::process::exit(2);
        }
    };
    let dir = Path::new(dir);
    let run = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let som = [Rule::SumOfMax, Rule::BailOutEarly, Rule::Joint];
        write::<S3x3>(dir, 4, probes, &Rule::ALL, "")?;
        write::<S3x3>(dir, 4, probes, &som, "_som")?;
        write::<S4x16>(dir, 60, probes, &Rule::ALL, "")?;
        write::<S4x16>(dir, 60, probes, &som, "_som")?;
        write::<S8x50>(dir, 600, probes, &Rule::ALL, "")
    };
    if let Err(e) = run() {
        eprintln!("rtl_vectors: writing {}: {e}", dir.display());
        std::process::exit(1);
    }
}
