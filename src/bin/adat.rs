//! `adat`: the rendering-state classifier of AdaT (is a screenshot fully rendered?):
//! train it on a folder of labelled frames, score it on the apps it has not seen, and
//! classify screenshots. The model and its defaults are described in `docs/adat.md`.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use gui_core::Screenshot;
use gui_vision::render::{
    ConsecutiveFrameConfig, InputColor, RenderArch, RenderDataset, RenderMetrics, RenderNet,
    RenderNetConfig, RenderTrainConfig, consecutive_frame_labels, evaluate_by_app, prepare_samples,
    train,
};

// candle allocates a tensor per operation; mimalloc halves training time (as in pirltest).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Tell fully rendered screenshots from partially rendered ones (AdaT).
#[derive(Debug, Parser)]
#[command(name = "adat", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train on a data set folder (labels.jsonl + PNG frames), split by app; prints the
    /// scores on the held-out apps and writes the model.
    Train {
        /// The data set folder (`cargo xtask adat-data` writes target/adat-data).
        #[arg(long, value_name = "DIR")]
        data: PathBuf,
        /// Where to write the model (safetensors).
        #[arg(long, value_name = "MODEL.safetensors")]
        out: PathBuf,
        /// Seed of the initial weights, the app split and the batch order.
        #[arg(long, value_name = "N", default_value_t = 1)]
        seed: u64,
        /// The network: the paper's MobileNetV2-style model or its 3-layer CNN baseline.
        #[arg(long, value_name = "ARCH", default_value = "mobilenet", value_parser = ["mobilenet", "cnn3"])]
        arch: String,
        /// Training epochs (the paper's 20 by default).
        #[arg(long, value_name = "N")]
        epochs: Option<usize>,
        /// Hold out this app for the test (repeatable); default: a seeded 10 % of the apps.
        #[arg(long = "test-app", value_name = "APP")]
        test_apps: Vec<String>,
        /// Gray input instead of RGB.
        #[arg(long)]
        gray: bool,
        /// Synthetic partial frames (skeletons, spinners, progress bars, cross-fades,
        /// slides) drawn from each full training frame; 0 trains on the recorded frames
        /// alone.
        #[arg(long, value_name = "N", default_value_t = 1)]
        synthetic: usize,
        /// No synthetic finished screens (dialogs over a dimmed page, pages in a larger
        /// window) beside the synthetic partial ones.
        #[arg(long)]
        no_finished: bool,
        /// Initial learning rate (the paper's 0.01 by default), halved every 10 epochs.
        #[arg(long, value_name = "RATE")]
        learning_rate: Option<f64>,
        /// Train only on partial frames that differ from their settled screen in at least
        /// this share of pixels (the collector's `change`); the test frames are all kept.
        #[arg(long, value_name = "SHARE", default_value_t = 0.0)]
        min_change: f64,
        /// Input width in pixels, a multiple of 8 (default 192).
        #[arg(long, value_name = "PX")]
        width: Option<usize>,
        /// Input height in pixels, a multiple of 8 (default 112; 192 with width 112 for
        /// portrait phone screens).
        #[arg(long, value_name = "PX")]
        height: Option<usize>,
    },
    /// Score a model on the apps of a data set it was not trained on: precision, recall
    /// and F1 (fully rendered is the positive class) per app and overall, next to the
    /// consecutive-frame heuristic on the same frames when they have transitions.
    Evaluate {
        #[arg(long, value_name = "DIR")]
        data: PathBuf,
        #[arg(long, value_name = "MODEL.safetensors")]
        model: PathBuf,
        /// Score only the partial frames that differ from their settled screen in at least
        /// this share of pixels (the `change` the collector records), e.g. 0.01.
        #[arg(long, value_name = "SHARE", default_value_t = 0.0)]
        min_change: f64,
    },
    /// Print the rendering state and P(fully rendered) of PNG screenshots.
    Classify {
        #[arg(long, value_name = "MODEL.safetensors")]
        model: PathBuf,
        /// PNG files, or folders whose PNG files are classified (sorted by name).
        #[arg(value_name = "FOLDER_OR_PNG", required = true)]
        inputs: Vec<PathBuf>,
    },
}

const EXAMPLES: &str = "Examples:
  adat train --data target/adat-data --out target/adat/mobilenet.safetensors --seed 1
  adat train --data target/adat-data --out target/adat/cnn3.safetensors --seed 1 --arch cnn3
  adat evaluate --data target/adat-data --model target/adat/mobilenet.safetensors
  adat classify --model target/adat/mobilenet.safetensors runs/demo/screenshots";

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Train {
            data,
            out,
            seed,
            arch,
            epochs,
            test_apps,
            gray,
            synthetic,
            no_finished,
            learning_rate,
            min_change,
            width,
            height,
        } => {
            let defaults = RenderNetConfig::default();
            let net = RenderNetConfig {
                color: if gray {
                    InputColor::Gray
                } else {
                    InputColor::Rgb
                },
                width: width.unwrap_or(defaults.width),
                height: height.unwrap_or(defaults.height),
                seed,
                ..defaults
            };
            let defaults = RenderTrainConfig::default();
            let config = RenderTrainConfig {
                epochs: epochs.unwrap_or(defaults.epochs),
                test_apps,
                synthetic_per_full: synthetic,
                synthetic_finished: !no_finished,
                learning_rate: learning_rate.unwrap_or(defaults.learning_rate),
                min_partial_change: min_change,
                ..defaults
            };
            run_train(&data, &out, &arch, net, config)
        }
        Command::Evaluate {
            data,
            model,
            min_change,
        } => run_evaluate(&data, &model, min_change),
        Command::Classify { model, inputs } => run_classify(&model, &inputs),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("adat: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_train(
    data: &Path,
    out: &Path,
    arch: &str,
    net: RenderNetConfig,
    config: RenderTrainConfig,
) -> Result<()> {
    let arch: RenderArch = arch.parse()?;
    let seed = net.seed;
    // A bad size is refused before the frames are read.
    RenderNet::new(RenderNetConfig {
        arch,
        ..net.clone()
    })?;
    if !(0.0..=1.0).contains(&config.min_partial_change) {
        bail!(
            "--min-change takes a share between 0 and 1, not {}",
            config.min_partial_change
        );
    }
    if !(config.learning_rate > 0.0 && config.learning_rate.is_finite()) {
        bail!(
            "--learning-rate must be a positive number, not {}",
            config.learning_rate
        );
    }
    let dataset = RenderDataset::load(data)?;
    let config = RenderTrainConfig {
        net: RenderNetConfig { arch, ..net },
        seed,
        ..config
    };
    let synthetic = config.synthetic_per_full;
    let [partial, full] = dataset.label_counts();
    gui_testing::say!(
        "{}: {} frames ({full} full, {partial} partial) from {} apps; training {} for {} epochs \
         at learning rate {}, {synthetic} synthetic partial frame(s) per full training frame (finished ones too: {}), \
         training partial frames changed by at least {}",
        data.display(),
        dataset.frames.len(),
        dataset.apps().len(),
        arch.as_str(),
        config.epochs,
        config.learning_rate,
        config.synthetic_finished,
        config.min_partial_change
    );
    let (mut net, report) = train(&dataset, &config, |epoch, loss, val| match val {
        Some(f1) => gui_testing::say!("epoch {epoch:>3}: loss {loss:.4}, validation F1 {f1:.3}"),
        None => gui_testing::say!("epoch {epoch:>3}: loss {loss:.4}"),
    })?;
    gui_testing::say!(
        "apps: train {} | validation {} | test {} (frames {} / {} / {}); kept epoch {}",
        report.split.train.join(","),
        report.split.validation.join(","),
        report.split.test.join(","),
        report.frames[0],
        report.frames[1],
        report.frames[2],
        report.kept_epoch
    );
    print_scores(&report.test_by_app, &report.test);
    net.set_notes(format!(
        "data {}, seed {seed}, epochs {}, learning rate {}, synthetic {synthetic}, finished {}, \
         min change {}, \
         test apps {}: {}",
        data.display(),
        config.epochs,
        config.learning_rate,
        config.synthetic_finished,
        config.min_partial_change,
        report.split.test.join(","),
        report.test
    ));
    net.save(out)?;
    gui_testing::say!("model: {}", out.display());
    Ok(())
}

fn print_scores(by_app: &std::collections::BTreeMap<String, RenderMetrics>, all: &RenderMetrics) {
    for (app, m) in by_app {
        gui_testing::say!("  {app:<24} {m}");
    }
    gui_testing::say!("  {:<24} {all}", "overall");
}

/// The shares of changed pixels `adat evaluate` reports the single-screenshot ceiling at.
const CEILING_SHARES: [f64; 3] = [0.005, 0.01, 0.02];

fn run_evaluate(data: &Path, model: &Path, min_change: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&min_change) {
        bail!("--min-change takes a share between 0 and 1, not {min_change}");
    }
    let net = RenderNet::load(model)?;
    let mut dataset = RenderDataset::load(data)?;
    if min_change > 0.0 {
        let dropped = dataset.drop_small_changes(min_change);
        gui_testing::say!(
            "left out {dropped} partial frame(s) that differ from their settled screen in less \
             than {min_change} of their pixels"
        );
    }
    let held_out: Vec<String> = dataset
        .apps()
        .into_iter()
        .filter(|a| !net.train_apps().contains(a))
        .collect();
    if held_out.is_empty() {
        bail!(
            "every app in {} was used to train {}; nothing is held out",
            data.display(),
            model.display()
        );
    }
    if net.train_apps().is_empty() {
        gui_testing::say!(
            "{} records no training apps: scoring every app",
            model.display()
        );
    }
    let samples = prepare_samples(&dataset, &held_out, net.config())?;
    let (by_app, all) = evaluate_by_app(&net, &samples)?;
    gui_testing::say!(
        "{} ({}) on {} held-out app(s) of {}:",
        model.display(),
        net.config().arch.as_str(),
        held_out.len(),
        data.display()
    );
    print_scores(&by_app, &all);

    // The heuristic baseline on the same apps' frame sequences.
    let config = ConsecutiveFrameConfig::default();
    let mut heuristic = RenderMetrics::default();
    for seq in dataset.transitions() {
        if !held_out.contains(&seq[0].record.app) {
            continue;
        }
        let shots = seq
            .iter()
            .map(|f| Screenshot::new(dataset.image(f)?, 1.0, 0).map_err(anyhow::Error::from))
            .collect::<Result<Vec<_>>>()?;
        let labels = consecutive_frame_labels(&shots, &config);
        for (f, predicted) in seq.iter().zip(labels) {
            heuristic.add(f.record.label, predicted);
        }
    }
    if heuristic.total() > 0 {
        gui_testing::say!("  {:<24} {heuristic}", "consecutive-frame");
    }
    // What no judge of one screenshot can get right: frames that look alike with both
    // labels.
    gui_testing::say!(
        "ceiling of any single-screenshot judge, frames of an app that look alike getting one \
         answer:"
    );
    let twins = dataset.twin_ceilings(&held_out, &[0.0, 0.0025])?;
    for (m, label) in twins.iter().zip(["identical", "within 0.25 %"]) {
        gui_testing::say!("  {label:<24} {m}");
    }
    // What no judge of one screenshot can be sure of: partial frames barely unlike the
    // screen they settle on.
    if dataset
        .frames_of(&held_out)
        .any(|f| f.record.change.is_some())
    {
        gui_testing::say!(
            "ceiling of a single-screenshot judge that calls full the partial frames within \
             a share of their settled screen (right on all others):"
        );
        for within in CEILING_SHARES {
            let m = dataset.small_change_ceiling(&held_out, within);
            let label = format!("within {:.1} %", within * 100.0);
            gui_testing::say!("  {label:<24} {m}");
        }
    }
    Ok(())
}

fn run_classify(model: &Path, inputs: &[PathBuf]) -> Result<()> {
    let net = RenderNet::load(model)?;
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut pngs: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| format!("reading folder {}", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")))
                .collect();
            if pngs.is_empty() {
                bail!("{} holds no PNG file", input.display());
            }
            pngs.sort();
            files.extend(pngs);
        } else if input.is_file() {
            files.push(input.clone());
        } else {
            bail!("{} is neither a PNG file nor a folder", input.display());
        }
    }
    for file in files {
        // Screenshot::load names the file in its errors.
        let shot = Screenshot::load(&file)?;
        let (label, p) = net.classify(&shot)?;
        gui_testing::say!("{}\t{label}\t{p:.3}", file.display());
    }
    Ok(())
}
