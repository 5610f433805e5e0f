//! `neurobits cortical fit|predict`: a cortical network kept in a model file, trained and
//! applied to images named explicitly (the split is the user's, never drawn again).

use clap::Args;
use neurobits::cortical::data::Dataset;
use neurobits::cortical::{model::Cortical, Config, RuleArg, ScheduleArg, VariantArg};
use neurobits::device::Target;
use neurobits::flyhash::data::Matrix;
use neurobits::model::Model;
use neurobits::outln;
use std::path::{Path, PathBuf};

/// The images of `fit` and `predict` and which of them to take.
#[derive(Debug, Clone, Args)]
pub struct ImageArgs {
    /// Square images, one per row (pixels 0…16, or 8-bit 0…255): without --labels, sklearn's
    /// digits CSV (pixels then the label) or an IDX image file with its `labels-idx1` sibling;
    /// with --labels, any format the library reads (`-`: standard input).
    #[arg(short, long)]
    pub input: PathBuf,
    /// How the input is read.
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// One integer label per image.
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Skip the first N images of each class (in file order), e.g. those `fit` took.
    #[arg(long, default_value_t = 0)]
    pub skip_per_class: usize,
    /// Then take N images of each class (the spec's lists, §11.6); default: all the rest.
    #[arg(long, value_parser = neurobits::validate::positive)]
    pub per_class: Option<usize>,
}

/// `cortical fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// The images trained on.
    #[command(flatten)]
    pub images: ImageArgs,
    /// The model file to write.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Levels L of the tree (2^L - 1 hypercolumns).
    #[arg(long, default_value_t = 5)]
    pub levels: u32,
    /// Minicolumns M per hypercolumn, 1..=128.
    #[arg(long, default_value_t = 16)]
    pub minicolumns: usize,
    /// Passes over the training images.
    #[arg(long, default_value_t = 20)]
    pub epochs: u32,
    /// Consecutive learning steps per image.
    #[arg(long, default_value_t = 1)]
    pub exposure: u32,
    /// Seed of the initial weights, random firing and shuffles.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// LTD step β in [0, 1] of `--rule spec`.
    #[arg(long, default_value_t = 0.5)]
    pub beta: f64,
    /// Learning rule: competitive (generalises) or spec (the spec's D-3 … D-6).
    #[arg(long, value_enum, default_value_t = RuleArg::Competitive)]
    pub rule: RuleArg,
    /// Learning rate 2^-RATE of `--rule competitive`, 1..=15.
    #[arg(long, default_value_t = 2)]
    pub rate: u32,
    /// Level schedule.
    #[arg(long, value_enum, default_value_t = ScheduleArg::Synchronous)]
    pub schedule: ScheduleArg,
    /// GPU variant of the synchronous schedule.
    #[arg(long, value_enum, default_value_t = VariantArg::PerLevel)]
    pub variant: VariantArg,
    /// Pixel replication per axis before the LGN.
    #[arg(long, default_value_t = 2)]
    pub upsample: usize,
    /// The LGN cells' threshold θ (on-off fires iff the centre–surround contrast d > θ, off-on
    /// iff −d > θ; pixels 0…16): default 12 under the competitive rule, 16 under the spec's.
    #[arg(long)]
    pub lgn_threshold: Option<i32>,
    /// Where to train: cpu, gpu, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = super::parse_target)]
    pub device: Target,
}

/// `cortical predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// A model written by `cortical fit`.
    #[arg(long)]
    pub model: PathBuf,
    /// The images to label.
    #[command(flatten)]
    pub images: ImageArgs,
    /// Predictions, one label per image: NPY when the name ends in `.npy`, else one integer
    /// per line (`-`: standard output).
    #[arg(short, long)]
    pub out: PathBuf,
}

/// The selected images as pixel rows and their labels (`None` when the file has none).
fn images(a: &ImageArgs) -> anyhow::Result<(Matrix, Option<Vec<i64>>)> {
    let ds = match &a.labels {
        Some(l) => dataset(&a.input, &a.read, l)?,
        None => Dataset::read(&a.input)?,
    };
    let take = a.per_class.unwrap_or(usize::MAX - a.skip_per_class);
    let (_, ids) = ds.split(a.skip_per_class, take);
    if ids.is_empty() {
        anyhow::bail!("{}: no images left after skipping {} per class", a.input.display(), a.skip_per_class);
    }
    let cols = ds.side * ds.side;
    let data = ids.iter().flat_map(|&i| ds.image(i).iter().map(|&p| p as f32)).collect();
    let labels = ids.iter().map(|&i| ds.labels[i] as i64).collect();
    Ok((Matrix { rows: ids.len(), cols, data }, Some(labels)))
}

fn dataset(input: &Path, how: &super::ReadArgs, labels: &Path) -> anyhow::Result<Dataset> {
    let m = super::read_matrix(input, how)?;
    let y = super::read_labels(labels)?;
    if y.len() != m.rows {
        anyhow::bail!("{}: {} labels for {} images in {}", labels.display(), y.len(), m.rows, input.display());
    }
    let (pixels, side) = neurobits::cortical::data::pixels(&m.data, m.cols, &input.display().to_string())?;
    let labels = y
        .iter()
        .map(|&l| {
            u32::try_from(l)
                .map_err(|_| anyhow::anyhow!("{}: label {l} is not a non-negative integer", labels.display()))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Dataset { pixels, side, labels })
}

/// Runs `cortical fit`.
pub fn fit(a: &FitArgs) -> anyhow::Result<()> {
    let config = Config {
        levels: a.levels,
        minicolumns: a.minicolumns,
        epochs: a.epochs,
        exposure: a.exposure,
        seed: a.seed,
        beta: a.beta,
        rule: a.rule,
        rate: a.rate,
        schedule: a.schedule,
        upsample: a.upsample,
        lgn_threshold: a.lgn_threshold,
        variant: a.variant,
    };
    config.validate()?;
    neurobits::io::atomic::check_writable(&a.out)?;
    let (x, y) = images(&a.images)?;
    let y = y.expect("training images have labels");
    let mut net = Cortical::new(config).with_device(a.device);
    net.fit(&x, &y)?;
    net.save(&a.out)?;
    neurobits::noteln!(
        "cortical network of {} levels x {} minicolumns trained on {} images ({} steps); saved to {}",
        a.levels,
        a.minicolumns,
        x.rows,
        net.network()?.t,
        a.out.display()
    );
    Ok(())
}

/// Runs `cortical predict`.
pub fn predict(a: &PredictArgs) -> anyhow::Result<()> {
    neurobits::io::atomic::check_writable(&a.out)?;
    let net = Cortical::load(&a.model)?;
    let (x, y) = images(&a.images)?;
    let pred = net.predict(&x)?;
    neurobits::io::labels_out::write(&a.out, &pred)?;
    if let Some(y) = y {
        let pairs: Vec<(i64, i64)> = pred.iter().copied().zip(y.iter().copied()).collect();
        let acc = pairs.iter().filter(|(p, t)| p == t).count() as f64 / pairs.len() as f64;
        let line =
            format!("accuracy {acc:.4}, NMI {:.4} on {} images", neurobits::cortical::quality::nmi(&pairs), y.len());
        // With predictions on standard output, `outln!` writes to stderr.
        outln!("{line}")?;
    }
    Ok(())
}
