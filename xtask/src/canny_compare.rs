//! `cargo xtask canny-compare`: gui-vision's Canny against OpenCV's GaussianBlur + Canny on
//! the same 1080x1920 grey PNG, timed side by side in one run, with edge agreement.
//!
//! Options: `--runs N` (default 50 timed runs per side and round), `--rounds N` (default 3;
//! ours and OpenCV alternate so that load from other processes hits both alike),
//! `--image PATH` (any PNG; default a synthetic GUI screenshot), `--size WxH` (of the
//! synthetic screenshot, default 1080x1920), `--out DIR` (keep the PNGs there).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use gui_vision::{CannyConfig, canny, synthetic_gui_screen, to_gray};
use image::GrayImage;

const CANNY_USAGE: &str = "usage: cargo xtask canny-compare [--runs N] [--rounds N] [--image PNG | --size WxH] [--out DIR]";

/// The target: ours at most this many times OpenCV's median.
const TARGET_RATIO: f64 = 1.5;

#[derive(Debug)]
struct Options {
    runs: usize,
    rounds: usize,
    image: Option<PathBuf>,
    size: (u32, u32),
    out: Option<PathBuf>,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        runs: 50,
        rounds: 3,
        image: None,
        size: (1080, 1920),
        out: None,
    };
    for (flag, v) in crate::flag_values(rest, CANNY_USAGE)? {
        match flag {
            "--runs" => o.runs = v.parse().context("--runs takes a number")?,
            "--rounds" => o.rounds = v.parse().context("--rounds takes a number")?,
            "--image" => o.image = Some(PathBuf::from(v)),
            "--out" => o.out = Some(PathBuf::from(v)),
            "--size" => {
                let (w, h) = v
                    .split_once('x')
                    .with_context(|| format!("--size takes WxH, got {v}"))?;
                o.size = (w.parse()?, h.parse()?);
            }
            other => bail!("unknown option {other}\n{CANNY_USAGE}"),
        }
    }
    if o.runs == 0 || o.rounds == 0 {
        bail!("--runs and --rounds must be at least 1");
    }
    Ok(o)
}

pub fn run(rest: &[String]) -> Result<()> {
    if let Some(outcome) = crate::in_release("canny-compare", rest) {
        return outcome;
    }
    let options = parse(rest)?;
    ensure_opencv()?;
    let dir = match &options.out {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("canny-compare-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
    let gray = match &options.image {
        Some(path) => to_gray(
            &image::open(path)
                .with_context(|| format!("reading {}", path.display()))?
                .to_rgb8(),
        ),
        None => to_gray(&synthetic_gui_screen(options.size.0, options.size.1, 1)),
    };
    let input = dir.join("input.png");
    gray.save(&input)
        .with_context(|| format!("writing {}", input.display()))?;
    let config = CannyConfig::default();
    // The same Gaussian support as ours: radius ceil(2 sigma).
    let ksize = 2 * (2.0 * config.sigma).ceil() as u32 + 1;
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let threads = rayon::current_num_threads();

    let (mut ours_1, mut ours_all, mut cv_1, mut cv_all) = (vec![], vec![], vec![], vec![]);
    let mut edges = None;
    let mut cv_info = serde_json::Value::Null;
    let cv_edges = dir.join("opencv-edges.png");
    for round in 0..options.rounds {
        eprintln!("round {}/{}", round + 1, options.rounds);
        ours_1.push(median_ms(options.runs, || {
            one.install(|| canny(&gray, &config))
        })?);
        let (ms, e) = timed(options.runs, || canny(&gray, &config))?;
        ours_all.push(ms);
        edges = Some(e);
        let out = Command::new("python3")
            .arg(crate::root().join("xtask/scripts/canny_opencv.py"))
            .arg(&input)
            .arg(&cv_edges)
            .args(["--runs", &options.runs.to_string()])
            .args(["--sigma", &config.sigma.to_string()])
            .args(["--ksize", &ksize.to_string()])
            .args(["--low", &config.low.to_string()])
            .args(["--high", &config.high.to_string()])
            .output()
            .context("running python3 xtask/scripts/canny_opencv.py")?;
        if !out.status.success() {
            bail!(
                "canny_opencv.py failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        cv_info = serde_json::from_slice(&out.stdout).context("canny_opencv.py output")?;
        let ms = |key: &str| {
            cv_info[key]
                .as_f64()
                .with_context(|| format!("canny_opencv.py printed no {key}: {cv_info}"))
        };
        cv_all.push(ms("all_threads_ms")?);
        cv_1.push(ms("one_thread_ms")?);
    }
    let ours = edges.expect("at least one round");
    ours.save(dir.join("ours-edges.png"))?;
    let theirs = image::open(&cv_edges)
        .with_context(|| format!("reading {}", cv_edges.display()))?
        .to_luma8();

    let (w, h) = gray.dimensions();
    println!(
        "\nCanny on {w}x{h} grey ({}), sigma {} (kernel {ksize}x{ksize}), low {}, high {}, L2 norm; median of {} runs x {} rounds",
        options
            .image
            .as_ref()
            .map_or("synthetic GUI screenshot".to_owned(), |p| p
                .display()
                .to_string()),
        config.sigma,
        config.low,
        config.high,
        options.runs,
        options.rounds,
    );
    println!(
        "OpenCV {} ({} threads)   gui-vision (rayon, {threads} threads)",
        cv_info["version"].as_str().unwrap_or("?"),
        cv_info["threads"]
    );
    println!("threads   ours (ms)  OpenCV (ms)  ours/OpenCV  target <= {TARGET_RATIO}x");
    for (label, o, c) in [("1", &ours_1, &cv_1), ("all", &ours_all, &cv_all)] {
        let (o, c) = (crate::median(o), crate::median(c));
        let ratio = o / c;
        println!(
            "{label:<7} {o:>11.2}  {c:>11.2}  {ratio:>10.2}x  {}",
            if ratio <= TARGET_RATIO {
                "met"
            } else {
                "NOT met"
            }
        );
    }
    let a = agreement(&ours, &theirs);
    println!(
        "edges: ours {} px, OpenCV {} px; identical pixels {:.2}%; ours within 1 px of OpenCV's {:.2}%, OpenCV's within 1 px of ours {:.2}%",
        a.ours,
        a.theirs,
        a.identical * 100.0,
        a.ours_near * 100.0,
        a.theirs_near * 100.0
    );
    println!("images: {}", dir.display());
    Ok(())
}

/// Median wall time of `runs` calls after three warm-up calls.
fn median_ms<T>(runs: usize, f: impl FnMut() -> gui_vision::Result<T>) -> Result<f64> {
    Ok(timed(runs, f)?.0)
}

fn timed<T>(runs: usize, mut f: impl FnMut() -> gui_vision::Result<T>) -> Result<(f64, T)> {
    for _ in 0..3 {
        std::hint::black_box(f()?);
    }
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = std::hint::black_box(f()?);
        times.push(start.elapsed().as_secs_f64() * 1e3);
        last = Some(out);
    }
    Ok((crate::median(&times), last.expect("runs >= 1")))
}

#[derive(Debug)]
struct Agreement {
    ours: usize,
    theirs: usize,
    identical: f64,
    ours_near: f64,
    theirs_near: f64,
}

fn agreement(ours: &GrayImage, theirs: &GrayImage) -> Agreement {
    let count = |img: &GrayImage| img.pixels().filter(|p| p.0[0] != 0).count();
    let same = ours
        .pixels()
        .zip(theirs.pixels())
        .filter(|(a, b)| (a.0[0] != 0) == (b.0[0] != 0))
        .count();
    Agreement {
        ours: count(ours),
        theirs: count(theirs),
        identical: same as f64 / f64::from(ours.width() * ours.height()),
        ours_near: near(ours, theirs),
        theirs_near: near(theirs, ours),
    }
}

/// Fraction of `a`'s edge pixels with an edge of `b` within Chebyshev distance 1.
fn near(a: &GrayImage, b: &GrayImage) -> f64 {
    let (w, h) = a.dimensions();
    let (mut total, mut hit) = (0usize, 0usize);
    for (x, y, p) in a.enumerate_pixels() {
        if p.0[0] == 0 {
            continue;
        }
        total += 1;
        let found = (y.saturating_sub(1)..=(y + 1).min(h - 1)).any(|yy| {
            (x.saturating_sub(1)..=(x + 1).min(w - 1)).any(|xx| b.get_pixel(xx, yy).0[0] != 0)
        });
        hit += usize::from(found);
    }
    if total == 0 {
        1.0
    } else {
        hit as f64 / total as f64
    }
}

/// `cv2` from PyPI's `opencv-python-headless`, installed with pip when missing.
fn ensure_opencv() -> Result<()> {
    crate::pip_install("canny-compare", "cv2", "opencv-python-headless")
}
