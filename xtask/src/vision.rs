//! `cargo xtask vision <eval | tune | train-cnn | eval-cnn | location | bench | snap | bound>`: detection quality against
//! the DOM ground truth, widget-kind CNN training and accuracy, location-feature
//! comparison, and whole-screen timing. Reads the data set of `cargo xtask vision-data`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use gui_core::{Rect, Screenshot, Widget, WidgetKind};
use gui_vision::dataset::{DatasetEntry, Split, load_dataset, split_of};
use gui_vision::eval::{DetectionScore, Matching, PAPER_IOU, match_boxes};
use gui_vision::{
    CnnSample, CnnTrainConfig, EmbedConfig, Embedder, ExtractConfig, LocationFeature, Vision,
    VisionConfig, WidgetCnn, WidgetCnnConfig, WidgetEmbedder, evaluate_cnn, extract_screenshot,
    prepare_crop_for, shipped_model_path, train_widget_cnn,
};
use rand::{Rng, SeedableRng};

const USAGE: &str =
    "usage: cargo xtask vision <eval | tune | train-cnn | eval-cnn | location | bench | snap | bound> [--data DIR]
  eval       precision/recall/F at IoU 0.8 of widget extraction, per app and viewport
  tune       grid search of the extraction thresholds on the train apps (F at IoU 0.8)
  train-cnn  train the widget-kind CNN on the train apps, report accuracy on the held-out apps
             [--epochs N] [--lr L] [--cosine] [--jitter N] [--feature-dim D] [--channels A,B,C]
             [--context F] [--sides] [--seed S] [--out PATH]
  eval-cnn   score a trained widget-kind CNN on the validation screens and the held-out apps
             [--model PATH] [--validation-pages PREFIX,...]
  location   compare the CNN location feature with the exact mask feature
  bench      whole-screen vision time (edges, boxes, kinds, embeddings) on one core
             [--model PATH]
  snap       detection F per value of `ink_snap`, train and held-out apps
  bound      share of held-out labels that Canny's edges could outline, given the label";

pub fn run(rest: &[String]) -> Result<()> {
    if let Some(outcome) = crate::in_release("vision", rest) {
        return outcome;
    }
    let Some(sub) = rest.first() else {
        bail!("{USAGE}")
    };
    let flags = Flags::parse(&rest[1..])?;
    match sub.as_str() {
        "eval" => eval(&flags),
        "tune" => tune(&flags),
        "train-cnn" => train_cnn(&flags),
        "eval-cnn" => eval_cnn(&flags),
        "location" => location(&flags),
        "bench" => bench(&flags),
        "bound" => bound(&flags),
        "snap" => snap(&flags),
        other => bail!("unknown `vision {other}`\n{USAGE}"),
    }
}

struct Flags {
    data: PathBuf,
    epochs: Option<usize>,
    lr: Option<f64>,
    cosine: bool,
    jitter: usize,
    feature_dim: Option<usize>,
    channels: Option<[usize; 3]>,
    context: Option<f32>,
    sides: bool,
    model: Option<PathBuf>,
    validation_pages: Vec<String>,
    seed: u64,
    out: Option<PathBuf>,
    annotate: Option<PathBuf>,
}

impl Flags {
    fn parse(args: &[String]) -> Result<Self> {
        let mut f = Flags {
            data: crate::root().join("target/vision-data"),
            epochs: None,
            lr: None,
            cosine: false,
            jitter: 1,
            feature_dim: None,
            channels: None,
            context: None,
            sides: false,
            model: None,
            validation_pages: Vec::new(),
            seed: 1,
            out: None,
            annotate: None,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || {
                it.next()
                    .with_context(|| format!("{a} needs a value\n{USAGE}"))
            };
            match a.as_str() {
                "--data" => f.data = PathBuf::from(value()?),
                "--epochs" => f.epochs = Some(value()?.parse().context("--epochs")?),
                "--lr" => f.lr = Some(value()?.parse().context("--lr")?),
                "--cosine" => f.cosine = true,
                "--jitter" => f.jitter = value()?.parse().context("--jitter")?,
                "--feature-dim" => f.feature_dim = Some(value()?.parse().context("--feature-dim")?),
                "--channels" => {
                    let v = value()?;
                    let widths: Vec<usize> = v
                        .split(',')
                        .map(|w| w.trim().parse())
                        .collect::<std::result::Result<_, _>>()
                        .with_context(|| format!("--channels takes three widths, not `{v}`"))?;
                    let Ok(widths) = <[usize; 3]>::try_from(widths) else {
                        bail!("--channels takes three widths (A,B,C), not `{v}`");
                    };
                    f.channels = Some(widths);
                }
                "--context" => f.context = Some(value()?.parse().context("--context")?),
                "--sides" => f.sides = true,
                "--model" => f.model = Some(PathBuf::from(value()?)),
                "--validation-pages" => {
                    f.validation_pages = value()?.split(',').map(str::to_owned).collect()
                }
                "--seed" => f.seed = value()?.parse().context("--seed")?,
                "--out" => f.out = Some(PathBuf::from(value()?)),
                "--annotate" => f.annotate = Some(PathBuf::from(value()?)),
                other => bail!("unknown flag {other}\n{USAGE}"),
            }
        }
        Ok(f)
    }
}

fn dataset(dir: &Path) -> Result<Vec<DatasetEntry>> {
    if !dir.is_dir() {
        bail!(
            "no data set at {} — run `cargo xtask vision-data` first",
            dir.display()
        );
    }
    let entries = load_dataset(dir)?;
    if entries.is_empty() {
        bail!("{} holds no label files", dir.display());
    }
    Ok(entries)
}

fn screenshot(e: &DatasetEntry) -> Result<Screenshot> {
    let mut shot = Screenshot::load(&e.screenshot_path)
        .with_context(|| format!("screenshot {}", e.screenshot_path.display()))?;
    shot.scale = e.labels.scale;
    Ok(shot)
}

fn eval(flags: &Flags) -> Result<()> {
    let entries = dataset(&flags.data)?;
    let mut per: BTreeMap<(String, String), DetectionScore> = BTreeMap::new();
    let mut by_split: BTreeMap<&'static str, DetectionScore> = BTreeMap::new();
    let mut missed: BTreeMap<WidgetKind, (usize, usize)> = BTreeMap::new();
    let mut offsets: [Vec<i32>; 4] = Default::default();
    for e in &entries {
        let shot = screenshot(e)?;
        let found = extract_screenshot(&shot, &ExtractConfig::for_viewport(&e.labels.viewport))?;
        let detected: Vec<Rect> = found.iter().map(|d| d.rect).collect();
        let labelled = e.labels.visible_widgets(shot.pixels());
        let truth: Vec<Rect> = labelled.iter().map(|(r, _)| *r).collect();
        let m = match_boxes(&detected, &truth, PAPER_IOU);
        let mut hit = vec![false; truth.len()];
        for &(_, j, _) in &m.pairs {
            hit[j] = true;
        }
        for ((_, kind), h) in labelled.iter().zip(&hit) {
            let slot = missed.entry(*kind).or_default();
            slot.1 += 1;
            slot.0 += usize::from(!h);
        }
        // Systematic offsets between detected and true edges, on loosely matched pairs.
        for &(i, j, _) in &match_boxes(&detected, &truth, 0.5).pairs {
            let (d, t) = (detected[i], truth[j]);
            offsets[0].push(d.x - t.x);
            offsets[1].push(d.y - t.y);
            offsets[2].push(d.right() - t.right());
            offsets[3].push(d.bottom() - t.bottom());
        }
        if let Some(dir) = &flags.annotate {
            annotate(dir, e, &shot, &detected, &truth, &m)?;
        }
        per.entry((e.labels.app.clone(), e.labels.viewport.clone()))
            .or_default()
            .add(&m);
        let split = match split_of(&e.labels.app) {
            Split::Train => "train apps",
            Split::Test => "test apps (held out)",
        };
        by_split.entry(split).or_default().add(&m);
    }
    println!(
        "widget extraction vs DOM ground truth, IoU >= {PAPER_IOU} (paper: P 0.9473 R 0.9909)"
    );
    println!(
        "{:<22} {:<8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "app", "viewport", "TP", "FP", "FN", "P", "R", "F"
    );
    let row = |name: &str, vp: &str, s: &DetectionScore| {
        println!(
            "{name:<22} {vp:<8} {:>6} {:>6} {:>6} {:>6.3} {:>6.3} {:>6.3}",
            s.true_positives,
            s.false_positives,
            s.false_negatives,
            s.precision(),
            s.recall(),
            s.f_measure()
        );
    };
    for ((app, vp), s) in &per {
        row(app, vp, s);
    }
    for (split, s) in &by_split {
        row(split, "all", s);
    }
    let median = |v: &mut Vec<i32>| {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let pairs = offsets[0].len();
    let [l, t, r, b] = offsets.each_mut().map(median);
    println!(
        "\nmedian edge offset detected - truth over {pairs} pairs with IoU >= 0.5: left {l:+} top {t:+} right {r:+} bottom {b:+} px"
    );
    println!("\nmissed ground-truth boxes by kind:");
    for (k, (miss, total)) in &missed {
        println!("  {k:?}: {miss}/{total}");
    }
    let json = serde_json::json!({
        "iou": PAPER_IOU,
        "per_app": per.iter().map(|((a, v), s)| serde_json::json!({
            "app": a, "viewport": v, "tp": s.true_positives, "fp": s.false_positives,
            "fn": s.false_negatives, "precision": s.precision(), "recall": s.recall(),
            "f": s.f_measure()})).collect::<Vec<_>>(),
        "per_split": by_split.iter().map(|(k, s)| serde_json::json!({
            "split": k, "precision": s.precision(), "recall": s.recall(), "f": s.f_measure()}))
            .collect::<Vec<_>>(),
    });
    let out = crate::root().join("target/vision-eval.json");
    std::fs::write(&out, serde_json::to_vec_pretty(&json)?)?;
    println!("\nwrote {}", out.display());
    Ok(())
}

/// Writes the screen with ground truth (green: matched, red: missed) and detections
/// (blue: matched, magenta: false positive) drawn in.
fn annotate(
    dir: &Path,
    e: &DatasetEntry,
    shot: &Screenshot,
    detected: &[Rect],
    truth: &[Rect],
    m: &gui_vision::eval::Matching,
) -> Result<()> {
    let mut img = shot.pixels().clone();
    let mut hit_t = vec![false; truth.len()];
    let mut hit_d = vec![false; detected.len()];
    for &(i, j, _) in &m.pairs {
        hit_d[i] = true;
        hit_t[j] = true;
    }
    for (r, h) in truth.iter().zip(&hit_t) {
        outline(&mut img, *r, if *h { [0, 170, 0] } else { [230, 0, 0] }, 0);
    }
    for (r, h) in detected.iter().zip(&hit_d) {
        outline(
            &mut img,
            *r,
            if *h { [0, 60, 255] } else { [220, 0, 220] },
            1,
        );
    }
    std::fs::create_dir_all(dir)?;
    let l = &e.labels;
    let out = dir.join(format!("{}-{}-{}.png", l.app, l.viewport, l.page));
    img.save(&out)
        .with_context(|| format!("cannot write {}", out.display()))?;
    Ok(())
}

fn outline(img: &mut image::RgbImage, r: Rect, c: [u8; 3], inset: i32) {
    let (w, h) = (img.width() as i32, img.height() as i32);
    let mut put = |x: i32, y: i32| {
        if (0..w).contains(&x) && (0..h).contains(&y) {
            img.put_pixel(x as u32, y as u32, image::Rgb(c));
        }
    };
    let (x0, y0, x1, y1) = (
        r.x + inset,
        r.y + inset,
        r.right() - 1 - inset,
        r.bottom() - 1 - inset,
    );
    for x in x0..=x1 {
        put(x, y0);
        put(x, y1);
    }
    for y in y0..=y1 {
        put(x0, y);
        put(x1, y);
    }
}

/// The visible ground-truth boxes of a labelled screen.
fn truth_boxes(e: &DatasetEntry, shot: &Screenshot) -> Vec<Rect> {
    e.labels
        .visible_widgets(shot.pixels())
        .into_iter()
        .map(|(r, _)| r)
        .collect()
}

/// Grid search over the box rules on the train apps only; the edge maps are computed once
/// per screen. Prints the best settings per viewport and their score on the held-out apps.
fn tune(flags: &Flags) -> Result<()> {
    use rayon::prelude::*;
    let entries = dataset(&flags.data)?;
    for viewport in ["desktop", "mobile"] {
        let base = ExtractConfig::for_viewport(viewport);
        // (app, split, device scale, edge map, ground truth)
        let screens: Vec<(String, Split, f32, image::GrayImage, Vec<Rect>)> = entries
            .iter()
            .filter(|e| e.labels.viewport == viewport)
            .map(|e| {
                let shot = screenshot(e)?;
                let cfg = base.scaled(shot.scale);
                let edges = gui_vision::canny(&gui_vision::to_gray(shot.pixels()), &cfg.canny)?;
                Ok((
                    e.labels.app.clone(),
                    split_of(&e.labels.app),
                    shot.scale,
                    edges,
                    truth_boxes(e, &shot),
                ))
            })
            .collect::<Result<_>>()?;
        let mut grid = Vec::new();
        for join_gap in [0u32, 1, 2] {
            for word_gap in [0.4f32, 0.6, 0.9] {
                for line_gap in [0.0f32, 0.45, 0.8] {
                    for glyph in [20u32, 28, 40] {
                        for min_area in [0.00001f64, 0.00003, 0.0001] {
                            for inset in [[0, 0, 0, 0], [1, 1, 0, -1], [1, 1, 1, 1]] {
                                // With and without splitting marks off text lines.
                                for mark_min_side in [0, base.mark_min_side] {
                                    grid.push(ExtractConfig {
                                        join_gap,
                                        word_gap,
                                        line_gap,
                                        max_glyph_height: glyph,
                                        min_area_ratio: min_area,
                                        inset,
                                        mark_min_side,
                                        ..base.clone()
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        // Macro average over apps: each app counts once, however many screens it has
        // (jsoneditor alone has half the training screens).
        let score = |cfg: &ExtractConfig, split: Split| {
            let mut per_app: BTreeMap<&str, DetectionScore> = BTreeMap::new();
            for (app, sp, scale, edges, truth) in &screens {
                if *sp != split {
                    continue;
                }
                let found: Vec<Rect> = gui_vision::boxes_from_edges(edges, &cfg.scaled(*scale))
                    .iter()
                    .map(|d| d.rect)
                    .collect();
                per_app
                    .entry(app.as_str())
                    .or_default()
                    .add(&match_boxes(&found, truth, PAPER_IOU));
            }
            let n = per_app.len().max(1) as f64;
            let mean =
                |f: &dyn Fn(&DetectionScore) -> f64| per_app.values().map(f).sum::<f64>() / n;
            (
                mean(&|s| s.f_measure()),
                mean(&|s| s.precision()),
                mean(&|s| s.recall()),
            )
        };
        let t = Instant::now();
        let mut results: Vec<(f64, usize)> = grid
            .par_iter()
            .enumerate()
            .map(|(i, c)| (score(c, Split::Train).0, i))
            .collect();
        results.sort_by(|a, b| b.0.total_cmp(&a.0));
        println!(
            "{viewport}: {} settings on {} train screens in {:.0} s",
            grid.len(),
            screens.iter().filter(|s| s.1 == Split::Train).count(),
            t.elapsed().as_secs_f64()
        );
        let b = score(&base, Split::Train);
        let bt = score(&base, Split::Test);
        println!(
            "  current preset (macro over apps): train F {:.3} (P {:.3} R {:.3}); test F {:.3} (P {:.3} R {:.3})",
            b.0, b.1, b.2, bt.0, bt.1, bt.2
        );
        for (f, i) in results.iter().take(5) {
            let c = &grid[*i];
            let test = score(c, Split::Test);
            println!(
                "  train F {f:.3}  test F {:.3} (P {:.3} R {:.3})  join_gap {} word_gap {} line_gap {} max_glyph_height {} min_area_ratio {} inset {:?} mark_min_side {}",
                test.0,
                test.1,
                test.2,
                c.join_gap,
                c.word_gap,
                c.line_gap,
                c.max_glyph_height,
                c.min_area_ratio,
                c.inset,
                c.mark_min_side
            );
        }
    }
    Ok(())
}

/// Crops of ground-truth widgets. Training crops also get `jitter` extra copies each (each
/// side moved by up to 3 px, colour channels shuffled) so the network does not depend on
/// pixel-exact boxes from the detector or on one app's colours.
fn samples(
    entries: &[DatasetEntry],
    split: Split,
    cfg: &WidgetCnnConfig,
    jitter: usize,
    rng: &mut impl Rng,
) -> Result<Vec<CnnSample>> {
    let side = cfg.input;
    let mut out = Vec::new();
    for e in entries.iter().filter(|e| split_of(&e.labels.app) == split) {
        let shot = screenshot(e)?;
        for (rect, kind) in e.labels.visible_widgets(shot.pixels()) {
            out.push(CnnSample {
                input: prepare_crop_for(cfg, shot.pixels(), rect)?,
                kind,
            });
            for _ in 0..jitter {
                let mut d = || rng.random_range(-3i32..=3);
                let (dx0, dy0, dx1, dy1) = (d(), d(), d(), d());
                let r = rect;
                let width = (r.width as i32 + dx1 - dx0).max(2) as u32;
                let height = (r.height as i32 + dy1 - dy0).max(2) as u32;
                let j = Rect::new(r.x + dx0, r.y + dy0, width, height);
                if let Ok(mut input) = prepare_crop_for(cfg, shot.pixels(), j) {
                    // Colour schemes differ between apps, shapes less: the jittered copy
                    // also gets its colour channels shuffled (the context's the same way).
                    let plane = side * side;
                    let order = [
                        [0, 1, 2],
                        [0, 2, 1],
                        [1, 0, 2],
                        [1, 2, 0],
                        [2, 0, 1],
                        [2, 1, 0],
                    ][rng.random_range(0..6)];
                    let src = input.pixels.clone();
                    for group in 0..src.len() / (3 * plane) {
                        let base = group * 3 * plane;
                        for (c, &from) in order.iter().enumerate() {
                            let (to, from) = (base + c * plane, base + from * plane);
                            input.pixels[to..to + plane].copy_from_slice(&src[from..from + plane]);
                        }
                    }
                    out.push(CnnSample { input, kind });
                }
            }
        }
    }
    Ok(out)
}

fn train_cnn(flags: &Flags) -> Result<()> {
    let entries = dataset(&flags.data)?;
    let mut cfg = WidgetCnnConfig::default();
    if let Some(d) = flags.feature_dim {
        cfg.feature_dim = d;
    }
    if let Some(c) = flags.channels {
        cfg.channels = c;
    }
    if let Some(c) = flags.context {
        cfg.context = c;
    }
    cfg.sides |= flags.sides;
    let mut train_cfg = CnnTrainConfig {
        seed: flags.seed,
        ..CnnTrainConfig::default()
    };
    if let Some(e) = flags.epochs {
        train_cfg.epochs = e;
    }
    if let Some(lr) = flags.lr {
        train_cfg.learning_rate = lr;
    }
    train_cfg.cosine |= flags.cosine;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(flags.seed);
    let (fit, validate) = fit_and_validation(&entries);
    let train = samples(&fit, Split::Train, &cfg, flags.jitter, &mut rng)?;
    let val = samples(&validate, Split::Train, &cfg, 0, &mut rng)?;
    println!(
        "widget CNN: {} training crops (with jitter), {} validation crops; config {cfg:?}",
        train.len(),
        val.len(),
    );
    let mut cnn = WidgetCnn::new(cfg, flags.seed)?;
    let start = Instant::now();
    let report = train_widget_cnn(&mut cnn, &train, &val, &train_cfg, |epoch, loss, acc| {
        println!(
            "  epoch {epoch:>3}  loss {loss:.4}  validation accuracy {:.4}  ({:.0} s)",
            acc.unwrap_or(f64::NAN),
            start.elapsed().as_secs_f64()
        );
    })?;
    println!("kept the weights of epoch {}", report.kept_epoch);
    let (train_acc, _) = evaluate_cnn(&cnn, &train)?;
    println!("accuracy: train {train_acc:.4}");
    let test_acc = report_held_out(&cnn, &entries)?;
    cnn.set_notes(format!(
        "trained by `cargo xtask vision train-cnn --seed {} --jitter {}` on {} crops of the \
         train apps; kept epoch {}; held-out accuracy {test_acc:.4}; {train_cfg:?}",
        flags.seed,
        flags.jitter,
        train.len(),
        report.kept_epoch
    ));
    let out = flags.out.clone().unwrap_or_else(shipped_model_path);
    cnn.save(&out)?;
    println!(
        "wrote {} ({} parameters)",
        out.display(),
        cnn.parameter_count()
    );
    Ok(())
}

/// The training apps' screens for fitting and for validation: every fifth validates (it
/// chooses the epoch to keep); the held-out apps are only scored at the end.
fn fit_and_validation(entries: &[DatasetEntry]) -> (Vec<DatasetEntry>, Vec<DatasetEntry>) {
    let (fit, validate): (Vec<_>, Vec<_>) = entries
        .iter()
        .filter(|e| split_of(&e.labels.app) == Split::Train)
        .cloned()
        .enumerate()
        .partition(|(i, _)| i % 5 != 4);
    (
        fit.into_iter().map(|(_, e)| e).collect(),
        validate.into_iter().map(|(_, e)| e).collect(),
    )
}

/// Prints the accuracy on the held-out apps, pooled (with the confusion matrix) and per
/// app, and returns the pooled one. Per app too: one app's many look-alike widgets
/// (jQuery UI's icon palette) can carry the pooled figure either way.
fn report_held_out(cnn: &WidgetCnn, entries: &[DatasetEntry]) -> Result<f64> {
    // Crops without jitter draw nothing from the generator.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let cfg = cnn.config().clone();
    let mut held_out: Vec<&str> = entries
        .iter()
        .filter(|e| split_of(&e.labels.app) == Split::Test)
        .map(|e| e.labels.app.as_str())
        .collect();
    held_out.dedup();
    // Each app's crops once; the pooled figure is over all of them together.
    let mut per_app = Vec::new();
    let mut test = Vec::new();
    for app in held_out {
        let of_app: Vec<DatasetEntry> = entries
            .iter()
            .filter(|e| e.labels.app == app)
            .cloned()
            .collect();
        let crops = samples(&of_app, Split::Test, &cfg, 0, &mut rng)?;
        let (acc, _) = evaluate_cnn(cnn, &crops)?;
        per_app.push((app, crops.len(), acc));
        test.extend(crops);
    }
    let (test_acc, confusion) = evaluate_cnn(cnn, &test)?;
    println!(
        "held-out apps: accuracy {test_acc:.4} on {} crops (paper: 0.8998)",
        test.len()
    );
    print_confusion(&confusion);
    for (app, n, acc) in &per_app {
        println!("  {app:<20} {n:>5} crops  accuracy {acc:.4}");
    }
    if !per_app.is_empty() {
        println!(
            "  mean over held-out apps: {:.4}",
            per_app.iter().map(|(_, _, a)| a).sum::<f64>() / per_app.len() as f64
        );
    }
    Ok(test_acc)
}

/// Scores a trained network without training: on the validation screens (optionally only
/// pages whose names start with one of `--validation-pages`, so that two networks trained
/// on different data can be compared on screens neither trained on) and on the held-out
/// apps.
fn eval_cnn(flags: &Flags) -> Result<()> {
    let entries = dataset(&flags.data)?;
    let path = flags.model.clone().unwrap_or_else(shipped_model_path);
    let cnn = WidgetCnn::load(&path)?;
    let (_, validate) = fit_and_validation(&entries);
    let validate: Vec<DatasetEntry> = validate
        .into_iter()
        .filter(|e| {
            flags.validation_pages.is_empty()
                || flags
                    .validation_pages
                    .iter()
                    .any(|p| e.labels.page.starts_with(p.as_str()))
        })
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let val = samples(&validate, Split::Train, cnn.config(), 0, &mut rng)?;
    let (acc, _) = evaluate_cnn(&cnn, &val)?;
    println!(
        "{}: validation accuracy {acc:.4} on {} crops of {} screens",
        path.display(),
        val.len(),
        validate.len()
    );
    report_held_out(&cnn, &entries)?;
    Ok(())
}

fn print_confusion(c: &[[usize; WidgetKind::COUNT]; WidgetKind::COUNT]) {
    println!("confusion (rows truth, columns predicted), held-out apps:");
    let short = |k: WidgetKind| format!("{k:?}").chars().take(5).collect::<String>();
    print!("{:>12}", "");
    for k in WidgetKind::ALL {
        print!(" {:>5}", short(k));
    }
    println!();
    for (i, row) in c.iter().enumerate() {
        if row.iter().sum::<usize>() == 0 {
            continue;
        }
        print!("{:>12}", format!("{:?}", WidgetKind::ALL[i]));
        for v in row {
            print!(" {v:>5}");
        }
        println!();
    }
}

fn load_cnn() -> Result<Arc<WidgetCnn>> {
    Ok(Arc::new(WidgetCnn::shipped().context(
        "the widget CNN is not trained yet: run `cargo xtask vision train-cnn`",
    )?))
}

/// How well distances between location vectors follow how far apart boxes are: Spearman
/// correlation of the vector distance with (1 − IoU) + normalised centre distance, over
/// all widget pairs of each held-out screen; plus time per screen.
fn location(flags: &Flags) -> Result<()> {
    let entries = dataset(&flags.data)?;
    let cnn = load_cnn()?;
    let variants = [
        ("cnn (paper)", LocationFeature::Cnn),
        ("mask 8x8", LocationFeature::Mask { grid: 8 }),
        ("mask 16x16", LocationFeature::Mask { grid: 16 }),
        ("mask 32x32", LocationFeature::Mask { grid: 32 }),
    ];
    println!(
        "{:<14} {:>6} {:>10} {:>14}",
        "location", "dims", "spearman", "ms per screen"
    );
    for (name, loc) in variants {
        let emb = WidgetEmbedder::new(
            cnn.clone(),
            EmbedConfig {
                location: loc,
                kind_one_hot: false,
            },
        )?;
        let image_dim = cnn.config().feature_dim;
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let mut time = 0.0;
        let mut screens = 0;
        for e in entries
            .iter()
            .filter(|e| split_of(&e.labels.app) == Split::Test)
        {
            let widgets: Vec<Widget> = e
                .labels
                .widgets
                .iter()
                .map(|w| Widget::new(w.rect, w.kind, 1.0))
                .collect();
            let zeros = vec![vec![0f32; image_dim]; widgets.len()];
            let t = Instant::now();
            let v = emb.embed_with_features((e.labels.width, e.labels.height), &widgets, &zeros)?;
            time += t.elapsed().as_secs_f64();
            screens += 1;
            let diag = ((e.labels.width as f64).powi(2) + (e.labels.height as f64).powi(2)).sqrt();
            for i in 0..widgets.len() {
                for j in i + 1..widgets.len() {
                    let (a, b) = (widgets[i].rect, widgets[j].rect);
                    let (ca, cb) = (a.center(), b.center());
                    let centre = (((ca.x - cb.x) as f64).powi(2) + ((ca.y - cb.y) as f64).powi(2))
                        .sqrt()
                        / diag;
                    y.push(1.0 - a.iou(&b) + centre);
                    let d: f64 = v[i][image_dim..]
                        .iter()
                        .zip(&v[j][image_dim..])
                        .map(|(p, q)| ((p - q) as f64).powi(2))
                        .sum::<f64>()
                        .sqrt();
                    x.push(d);
                }
            }
        }
        println!(
            "{name:<14} {:>6} {:>10.3} {:>14.3}",
            emb.dim() - image_dim,
            gui_layout::spearman(&x, &y),
            1000.0 * time / screens.max(1) as f64
        );
    }
    Ok(())
}

/// Median whole-screen time in a one-thread pool, on the data set's desktop and mobile
/// screens.
fn bench(flags: &Flags) -> Result<()> {
    let entries = dataset(&flags.data)?;
    let cnn = match &flags.model {
        Some(path) => Arc::new(WidgetCnn::load(path)?),
        None => load_cnn()?,
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    for (label, viewport) in [
        ("1280x800 desktop", "desktop"),
        ("412x915 mobile", "mobile"),
    ] {
        let shots: Vec<Screenshot> = entries
            .iter()
            .filter(|e| e.labels.viewport == viewport)
            .map(screenshot)
            .collect::<Result<_>>()?;
        if shots.is_empty() {
            continue;
        }
        for (name, embed) in [
            ("mask location", EmbedConfig::default()),
            ("cnn location (paper)", EmbedConfig::paper()),
        ] {
            let vision = Vision::new(
                VisionConfig {
                    extract: ExtractConfig::for_viewport(viewport),
                    embed,
                },
                cnn.clone(),
            )?;
            let mut times = Vec::new();
            let mut widgets = 0;
            pool.install(|| -> Result<()> {
                for _ in 0..3 {
                    for s in &shots {
                        let t = Instant::now();
                        let v = vision.analyse(s)?;
                        times.push(t.elapsed().as_secs_f64() * 1000.0);
                        widgets += v.widgets.len();
                    }
                }
                Ok(())
            })?;
            times.sort_by(f64::total_cmp);
            println!(
                "{label:<18} {name:<22} median {:>6.2} ms  p90 {:>6.2} ms  ({:.0} widgets/screen, {} dims, 1 thread)",
                times[times.len() / 2],
                times[times.len() * 9 / 10],
                widgets as f64 / times.len() as f64,
                vision.embedding_dim()
            );
        }
    }
    Ok(())
}

/// Whether `r`, as it is or a pixel larger or smaller all round, overlaps `label` at the
/// paper's IoU.
fn outlines(r: Rect, label: &Rect) -> bool {
    [-1, 0, 1]
        .iter()
        .any(|&d| r.grown(d).iou(label) >= PAPER_IOU)
}

/// The bounding box of the edge pixels of `edges` inside `area`.
fn edge_extent(edges: &image::GrayImage, area: Rect) -> Option<Rect> {
    let (w, h) = (edges.width() as i32, edges.height() as i32);
    let (mut x0, mut y0, mut x1, mut y1) = (i32::MAX, i32::MAX, i32::MIN, i32::MIN);
    for y in area.y.max(0)..area.bottom().min(h) {
        for x in area.x.max(0)..area.right().min(w) {
            if edges.get_pixel(x as u32, y as u32)[0] != 0 {
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            }
        }
    }
    (x1 >= x0).then(|| Rect::new(x0, y0, (x1 - x0 + 1) as u32, (y1 - y0 + 1) as u32))
}

/// The PP-OCR text lines of `shot`, found at its own size and at twice it (small text
/// the detector misses at 1x), each snapped to its ink.
fn ocr_lines(detector: &gui_vision::TextDetector, shot: &Screenshot) -> Result<Vec<Rect>> {
    let img = shot.pixels();
    let mut out: Vec<Rect> = detector.detect(img)?.iter().map(|t| t.rect).collect();
    let (w, h) = img.dimensions();
    let big = image::imageops::resize(img, 2 * w, 2 * h, image::imageops::FilterType::Triangle);
    out.extend(detector.detect(&big)?.iter().map(|t| {
        let r = t.rect;
        Rect::new(r.x / 2, r.y / 2, r.width.div_ceil(2), r.height.div_ceil(2))
    }));
    Ok(out
        .into_iter()
        .map(|r| gui_vision::tighten_to_ink(img, r.grown(2)).unwrap_or(r))
        .collect())
}

/// How many held-out labels could any grouping of Canny's edges outline at IoU 0.8, even
/// one told where each label is? Oracle A: the union of the connected components lying
/// (90% of their box) inside the label grown by 2 px. Oracle B: the bounding box of all
/// edge pixels inside it. Then the labels that a PP-OCR text line outlines (found at 1x
/// and 2x, snapped to ink), and those that B or a text line does: the most the issue's
/// pipeline of edges plus merged text regions could find. Also counts labels under 8 px
/// on their shorter side.
fn bound(flags: &Flags) -> Result<()> {
    use rayon::prelude::*;
    let entries = dataset(&flags.data)?;
    let detector = gui_vision::TextDetector::new(gui_vision::TextDetectorConfig {
        limit_side: 4096,
        ..Default::default()
    })
    .context("the PP-OCR detector (run `cargo xtask models`)")?;
    // (app, viewport, [labels, oracle A, oracle B, OCR, B or OCR, small])
    let rows: Vec<(String, String, [usize; 6])> = entries
        .par_iter()
        .filter(|e| split_of(&e.labels.app) == Split::Test)
        .map(|e| {
            let shot = screenshot(e)?;
            let cfg = ExtractConfig::for_viewport(&e.labels.viewport).scaled(shot.scale);
            let edges = gui_vision::canny(&gui_vision::to_gray(shot.pixels()), &cfg.canny)?;
            let comps = gui_vision::connected_components(&edges, 0);
            let truth = truth_boxes(e, &shot);
            let lines = ocr_lines(&detector, &shot)?;
            let mut counts = [truth.len(), 0, 0, 0, 0, 0];
            for t in &truth {
                let area = t.grown(2);
                let union = comps
                    .iter()
                    .filter(|c| {
                        c.rect
                            .intersection(&area)
                            .is_some_and(|i| i.area() as f64 >= 0.9 * c.rect.area() as f64)
                    })
                    .map(|c| c.rect)
                    .reduce(|a, b| a.union(&b));
                let edged = edge_extent(&edges, area).is_some_and(|r| outlines(r, t));
                let read = lines.iter().any(|&l| outlines(l, t));
                counts[1] += usize::from(union.is_some_and(|u| outlines(u, t)));
                counts[2] += usize::from(edged);
                counts[3] += usize::from(read);
                counts[4] += usize::from(edged || read);
                counts[5] += usize::from(t.width.min(t.height) < 8);
            }
            Ok((e.labels.app.clone(), e.labels.viewport.clone(), counts))
        })
        .collect::<Result<_>>()?;
    let mut per: BTreeMap<(String, String), [usize; 6]> = BTreeMap::new();
    let mut all = [0usize; 6];
    for (app, vp, counts) in rows {
        let slot = per.entry((app, vp)).or_default();
        for k in 0..6 {
            slot[k] += counts[k];
            all[k] += counts[k];
        }
    }
    println!("held-out labels Canny's edges outline at IoU >= {PAPER_IOU}, given the label");
    println!(
        "{:<20} {:<8} {:>6} {:>11} {:>11} {:>9} {:>11} {:>9}",
        "app",
        "viewport",
        "labels",
        "components",
        "edge pixels",
        "OCR lines",
        "edges or OCR",
        "under 8px"
    );
    let row = |app: &str, vp: &str, v: &[usize; 6]| {
        let f = |x: usize| x as f64 / v[0].max(1) as f64;
        println!(
            "{app:<20} {vp:<8} {:>6} {:>11.3} {:>11.3} {:>9.3} {:>11.3} {:>9.3}",
            v[0],
            f(v[1]),
            f(v[2]),
            f(v[3]),
            f(v[4]),
            f(v[5])
        );
    };
    for ((app, vp), v) in &per {
        row(app, vp, v);
    }
    row("held out", "all", &all);
    Ok(())
}

/// F at IoU 0.8 for each `ink_snap` setting, per split and viewport: the choice of the
/// presets' value on the training apps.
fn snap(flags: &Flags) -> Result<()> {
    use rayon::prelude::*;
    const GROWS: [u32; 4] = [0, 1, 2, 3];
    let entries = dataset(&flags.data)?;
    let rows: Vec<(Split, String, Vec<Matching>)> = entries
        .par_iter()
        .map(|e| {
            let shot = screenshot(e)?;
            let truth = truth_boxes(e, &shot);
            let scores = GROWS
                .iter()
                .map(|&ink_snap| {
                    let config = ExtractConfig {
                        ink_snap,
                        ..ExtractConfig::for_viewport(&e.labels.viewport)
                    };
                    let found: Vec<Rect> = extract_screenshot(&shot, &config)?
                        .iter()
                        .map(|d| d.rect)
                        .collect();
                    Ok(match_boxes(&found, &truth, PAPER_IOU))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok((split_of(&e.labels.app), e.labels.viewport.clone(), scores))
        })
        .collect::<Result<_>>()?;
    let mut per: BTreeMap<(bool, String), Vec<DetectionScore>> = BTreeMap::new();
    for (split, vp, scores) in rows {
        let slot = per
            .entry((split == Split::Test, vp))
            .or_insert_with(|| vec![DetectionScore::default(); GROWS.len()]);
        for (score, m) in slot.iter_mut().zip(&scores) {
            score.add(m);
        }
    }
    println!("detection at IoU >= {PAPER_IOU} by ink_snap (the presets' other fields unchanged)");
    for ((split, vp), scores) in &per {
        let split = if *split { "held out" } else { "train" };
        for (grow, s) in GROWS.iter().zip(scores) {
            println!(
                "{split:<9} {vp:<8} ink_snap {grow}  P {:.3} R {:.3} F {:.3}",
                s.precision(),
                s.recall(),
                s.f_measure()
            );
        }
    }
    Ok(())
}
