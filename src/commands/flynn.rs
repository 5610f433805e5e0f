//! `neurobits flynn fit|predict|export`: a FlyNN classifier kept in a model file.

use clap::{Args, Subcommand};
use neurobits::device::Target;
use neurobits::flyhash::classifier::{FlyNN, FlyNNConfig};
use neurobits::model::Model;
use neurobits::outln;
use std::path::PathBuf;

/// `neurobits flynn …`.
#[derive(Debug, Subcommand)]
pub enum FlynnCommand {
    /// Fit a FlyNN classifier on labelled vectors and save it (`-o`).
    Fit(FitArgs),
    /// Predict the class of each input row with a saved classifier; with --labels, also print
    /// the accuracy.
    Predict(PredictArgs),
    /// Write a classifier for firmware: a blob for `include_bytes!` and a Rust module beside it.
    Export(ExportArgs),
}

/// `flynn fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// Training vectors: NPY, NPZ, CSV/TSV, whitespace text or IDX (gzip or not); `-` for
    /// standard input.
    #[arg(short, long)]
    pub input: PathBuf,
    /// How the input is read.
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// One integer label per training vector (same formats).
    #[arg(long)]
    pub labels: PathBuf,
    /// The model file to write.
    #[arg(short, long)]
    pub out: PathBuf,
    /// The FlyHash of the inputs.
    #[command(flatten)]
    pub hash: super::HashArgs,
    /// Decay γ in [0, 1]: a memory bit weighs γ^n after n training codes of its class
    /// (default: the library's, `FlyNNConfig::default().decay`).
    #[arg(long, alias = "gamma", value_parser = neurobits::validate::unit_interval)]
    pub decay: Option<f64>,
    /// Subtract the mean training vector before hashing, `true` or `false` (default: the
    /// library's, `FlyNNConfig::default().centre`).
    #[arg(long)]
    pub centre: Option<bool>,
    /// Error-driven rounds after the counting pass: each counts again, in its class, every
    /// training vector the memories misclassify (default: the library's,
    /// `FlyNNConfig::default().rounds`).
    #[arg(long, value_parser = neurobits::validate::rounds)]
    pub rounds: Option<u32>,
    /// Where to hash: cpu, gpu, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = super::parse_target)]
    pub device: Target,
}

/// `flynn predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// A model written by `flynn fit`.
    #[arg(long)]
    pub model: PathBuf,
    /// Vectors to classify (formats as for `fit`).
    #[arg(short, long)]
    pub input: PathBuf,
    /// How the input is read.
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// Predictions, one label per input row: NPY when the name ends in `.npy`, else one
    /// integer per line (`-`: standard output).
    #[arg(short, long)]
    pub out: PathBuf,
    /// True labels: print the accuracy.
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Where to hash: cpu, gpu, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = super::parse_target)]
    pub device: Target,
}

/// Runs `flynn fit` or `flynn predict`.
pub fn run(c: &FlynnCommand) -> anyhow::Result<()> {
    match c {
        FlynnCommand::Fit(a) => fit(a),
        FlynnCommand::Predict(a) => predict(a),
        FlynnCommand::Export(a) => {
            let module = neurobits::flyhash::export::export_files(&a.model, &a.out)?;
            neurobits::noteln!(
                "exported {} -> {} (blob) and {} (module)",
                a.model.display(),
                a.out.display(),
                module.display()
            );
            Ok(())
        }
    }
}

/// `flynn export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A model written by `flynn fit` (exact WTA).
    #[arg(long)]
    pub model: PathBuf,
    /// The blob to write (e.g. mcu/net/flynn.bin); the module goes beside it (flynn.rs).
    #[arg(short, long)]
    pub out: PathBuf,
}

fn fit(a: &FitArgs) -> anyhow::Result<()> {
    let lib = FlyNNConfig::default();
    let config = FlyNNConfig {
        hash: a.hash.config(),
        decay: a.decay.unwrap_or(lib.decay),
        centre: a.centre.unwrap_or(lib.centre),
        rounds: a.rounds.unwrap_or(lib.rounds),
    };
    config.validate()?;
    neurobits::io::atomic::check_writable(&a.out)?;
    let x = super::read_matrix(&a.input, &a.read)?;
    let y = super::read_labels(&a.labels)?;
    let mut clf = FlyNN::new(config).with_device(a.device);
    clf.fit(&x, &y)?;
    clf.save(&a.out)?;
    let p = clf.hasher()?.params()?;
    neurobits::noteln!(
        "FlyNN fitted on {} vectors of {} values, {} classes (m={}, s={}, k={}); saved to {}",
        x.rows,
        x.cols,
        clf.classes()?.len(),
        p.m,
        p.s,
        p.k,
        a.out.display()
    );
    Ok(())
}

fn predict(a: &PredictArgs) -> anyhow::Result<()> {
    neurobits::io::atomic::check_writable(&a.out)?;
    let clf = FlyNN::load(&a.model)?.with_device(a.device);
    let x = super::read_matrix(&a.input, &a.read)?;
    let y = a.labels.as_deref().map(super::read_labels).transpose()?;
    if let Some(y) = &y {
        if y.len() != x.rows {
            anyhow::bail!("{}: {} labels for {} vectors", a.labels.as_ref().unwrap().display(), y.len(), x.rows);
        }
    }
    let pred = clf.predict(&x)?;
    neurobits::io::labels_out::write(&a.out, &pred)?;
    if let Some(y) = y {
        let acc = pred.iter().zip(&y).filter(|(p, y)| p == y).count() as f64 / y.len() as f64;
        // With predictions on standard output, `outln!` writes to stderr.
        outln!("accuracy {acc:.4} on {} vectors", y.len())?;
    }
    Ok(())
}
