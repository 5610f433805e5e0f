//! `neurobits cortical train` and `cortical eval`: a run, its report on the held-out images and
//! the lines they print.

use anyhow::{bail, Result};

use super::{
    cpu, gpu, prepare, report, train_cpu, ImageArgs, Network, RuleArg, ScheduleArg, TrainConfig, TrainReport,
    VariantArg,
};
use crate::device::DeviceChoice;
use std::path::PathBuf;

/// Prints a report's digests, memorisation, readout and random baseline (train and eval alike).
fn print_quality(r: &TrainReport) -> Result<()> {
    outln!("weights_sha256 {}\nwinners_sha256 {}", r.weights_sha256, r.winners_sha256)?;
    let h = &r.held_out;
    outln!(
        "held-out ({} images): coverage {:.3}, distinct top winners {}, purity {:.3}, NMI {:.3}, cluster accuracy {:.3}; readout: accuracy {:.3}, NMI {:.3}",
        h.images,
        h.coverage,
        h.distinct_top,
        h.purity,
        h.nmi,
        h.cluster_accuracy,
        h.readout_accuracy,
        h.readout_nmi
    )?;
    outln!(
        "training images (memorisation, not generalisation): coverage {:.3}, distinct top winners {}, purity {:.3}, NMI {:.3}",
        r.train.coverage,
        r.train.distinct_top,
        r.train.purity,
        r.train.nmi,
    )?;
    outln!(
        "random-weights baseline: training coverage {:.3}; held-out readout: accuracy {:.3}, NMI {:.3}",
        r.random_baseline.0.coverage,
        r.random_baseline.1,
        r.random_baseline.2
    )?;
    Ok(())
}

/// `neurobits cortical eval`: a saved network judged on a data set (spec §11.5).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct EvalConfig {
    /// A network saved by `cortical train --out`.
    #[cfg_attr(feature = "cli", arg(long = "model", alias = "net"))]
    pub net: PathBuf,
    /// The images and the lists taken from them (as for `cortical train`).
    #[cfg_attr(feature = "cli", command(flatten))]
    pub images: ImageArgs,
    /// Write the results as JSON here (the train report's fields; no training time).
    #[cfg_attr(feature = "cli", arg(long))]
    pub json: Option<PathBuf>,
}

/// Runs `neurobits cortical eval`: strict memorisation of the training list and the held-out
/// scores and readout on the test list, with the digests, as `train` prints them.
pub fn run_eval(e: &EvalConfig) -> Result<()> {
    if let Some(p) = &e.json {
        crate::io::atomic::check_writable(p)?;
    }
    let mut net = Network::load(&e.net)?;
    // The images go through the LGN the network was trained behind (kept in its file).
    let mut images = e.images.clone();
    match images.lgn_threshold {
        Some(t) if t != net.lgn_threshold => {
            bail!("--lgn-threshold {t}: {} was trained with {}", e.net.display(), net.lgn_threshold)
        }
        _ => images.lgn_threshold = Some(net.lgn_threshold),
    }
    let c = TrainConfig {
        images,
        levels: net.geo.levels() as u32,
        minicolumns: net.geo.minicolumns(),
        epochs: 0,
        exposure: 0,
        seed: net.seed,
        beta: 0.5,
        rule: if net.rule.is_competitive() { RuleArg::Competitive } else { RuleArg::Spec },
        rate: net.rule.shift().max(1),
        schedule: ScheduleArg::Synchronous,
        device: DeviceChoice::Cpu,
        variant: VariantArg::PerLevel,
        single_thread: false,
        json: None,
        out: None,
    };
    let p = prepare(&c)?;
    let r = report(&mut net, &p, &c.config(), crate::device::Cpu::new(None)?.name(), 0.0);
    outln!(
        "cortical eval: {} levels x {} minicolumns, {} learning steps done; {} training and {} test images",
        r.levels,
        r.minicolumns,
        r.steps,
        r.train_images,
        p.test_labels.len()
    )?;
    print_quality(&r)?;
    if let Some(path) = &e.json {
        crate::io::json::write(path, &r)?;
    }
    Ok(())
}

/// `neurobits cortical train`.
pub fn run_train(c: &TrainConfig) -> Result<()> {
    // The training loop's bounds (eval shares the configuration but does not train).
    super::check_training(c.epochs, c.exposure)?;
    if let Some(p) = &c.json {
        crate::io::atomic::check_writable(p)?;
    }
    if let Some(p) = &c.out {
        crate::io::atomic::check_writable(p)?;
    }
    let p = prepare(c)?;
    let threads = if c.single_thread { cpu::Threads::Single } else { cpu::Threads::Rayon };
    let device = crate::device::Device::open(c.device)?;
    let variant = c.variant.for_schedule(c.schedule);
    let (mut net, seconds, device) = device.run(
        |g| {
            let (n, s) = gpu::train_gpu(g, &p, &c.config(), variant)?;
            Ok((n, s, format!("gpu ({}, {variant:?})", g.name())))
        },
        |_| {
            let (n, s) = train_cpu(&p, &c.config(), threads)?;
            Ok((n, s, if c.single_thread { "cpu (1 thread)".into() } else { crate::device::Cpu::new(None)?.name() }))
        },
    )?;
    let r = report(&mut net, &p, &c.config(), device, seconds);
    outln!(
        "cortical: {} levels x {} minicolumns ({} hypercolumns), {} training images, {} steps on {} in {:.3} s ({:.1} us/step)",
        r.levels,
        r.minicolumns,
        r.hypercolumns,
        r.train_images,
        r.steps,
        r.device,
        seconds,
        r.seconds_per_step * 1e6
    )?;
    print_quality(&r)?;
    if let Some(path) = &c.out {
        net.save(path)?;
    }
    if let Some(path) = &c.json {
        crate::io::json::write(path, &r)?;
    }
    Ok(())
}
