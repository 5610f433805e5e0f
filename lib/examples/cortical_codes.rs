//! What the readout of a trained cortical network can read, written out for readout experiments
//! (`peers/cortical_readouts.py` compares readouts with it on the validation list):
//! `cargo run -p neurobits --release --example cortical_codes -- PER_CLASS SEED VALIDATION OUT`
//! trains the default network (competitive rule, 5 levels × 16, upsample 2) on the first
//! PER_CLASS digits of each class (0 = all) with VALIDATION per class held out before the test
//! list, and writes, for the training list (`OUT.train.*`) and the validation list (`OUT.test.*`;
//! the test list when VALIDATION is 0), little-endian: `.lab` `u32` labels, `.win` `i32` winners
//! `[image][hc]`, `.code` `u32` population codes `[image][hc][m]` (the readout's input), `.rank`
//! `i64` every minicolumn's ranking value (`minicolumn_key >> 8`, `i64::MIN` outside the
//! competition), `.bits` the LGN bits (`u64` bottom words).

use neurobits::cortical::{self, cpu, ImageArgs, RuleArg, ScheduleArg, TrainConfig, VariantArg};
use neurobits::device::DeviceChoice;
use neurobits_core::cortical::rules::Tally;
use neurobits_core::cortical::{minicolumn_key, tally_inputs, Part, StepCtx};
use std::io::Write;

fn write<T: Copy>(path: &str, v: &[T], bytes: impl Fn(T) -> Vec<u8>) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    v.iter().try_for_each(|&x| f.write_all(&bytes(x)))?;
    f.flush()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let [n, seed, val, out] = <[String; 4]>::try_from(a).map_err(|_| "usage: PER_CLASS SEED VALIDATION OUT")?;
    let n: usize = n.parse()?;
    let images = ImageArgs {
        data: "data/digits/digits.csv.gz".into(),
        train_per_class: (n > 0).then_some(n),
        test_per_class: 50,
        validation_per_class: val.parse()?,
        upsample: 2,
        lgn_threshold: None,
    };
    let c = TrainConfig {
        images,
        levels: 5,
        minicolumns: 16,
        epochs: 20,
        exposure: 1,
        seed: seed.parse()?,
        beta: 0.5,
        rule: RuleArg::Competitive,
        rate: 2,
        schedule: ScheduleArg::Synchronous,
        device: DeviceChoice::Cpu,
        variant: VariantArg::PerLevel,
        single_thread: false,
        json: None,
        out: None,
    };
    let p = cortical::prepare(&c)?;
    let (mut net, _) = cortical::train_cpu(&p, &c.config(), cpu::Threads::Rayon)?;
    let geo = p.geo;
    let (nw, n_hc, m, wp) = (geo.bottom_words(), geo.hypercolumns(), geo.minicolumns(), geo.weights_per_column());
    let ctx = StepCtx { rule: net.rule, ..StepCtx::new(&geo, 0, 0, false) };
    for (name, xs, labels) in [("train", &p.train_x, &p.train_labels), ("test", &p.test_x, &p.test_labels)] {
        let (winners, codes) = cpu::population(&mut net, xs);
        // The ranking values, from the same inputs the evaluation pass gives each hypercolumn.
        let mut rank = vec![i64::MIN; winners.len() * m];
        for (i, (x, w)) in xs.chunks(nw).zip(winners.chunks(n_hc)).enumerate() {
            for s in Part::whole(&geo).spans() {
                for k in 0..s.count as usize {
                    let (hc, xin) = (s.id(&geo, k), s.input(&geo, k, x, w));
                    let mut tally = vec![Tally::default(); m];
                    tally_inputs(&net.w[hc * wp..(hc + 1) * wp], &xin, &mut tally);
                    for (j, t) in tally.iter().enumerate() {
                        let key = minicolumn_key(*t, net.omega[hc * m + j], 0, &ctx, hc as u64, j);
                        rank[(i * n_hc + hc) * m + j] = if key == i64::MIN { key } else { key >> 8 };
                    }
                }
            }
        }
        write(&format!("{out}.{name}.lab"), labels, |v| v.to_le_bytes().to_vec())?;
        write(&format!("{out}.{name}.win"), &winners, |v| v.to_le_bytes().to_vec())?;
        write(&format!("{out}.{name}.code"), &codes, |v| v.to_le_bytes().to_vec())?;
        write(&format!("{out}.{name}.rank"), &rank, |v| v.to_le_bytes().to_vec())?;
        write(&format!("{out}.{name}.bits"), xs, |v| v.to_le_bytes().to_vec())?;
    }
    Ok(())
}
