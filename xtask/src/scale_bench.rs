//! `cargo xtask scale-bench`: the scale-out and reliability figures, each measured on the
//! release binaries as a user runs them.
//!
//! - `faults`: `monkey` on the bundled demo app in Chromium for `--steps` (500) steps while
//!   this task kills the browser `--kills` (10) times with SIGKILL, at seeded steps and at
//!   a seeded moment inside the step, and hangs it `--hangs` (2) times with SIGSTOP (a
//!   browser that stops answering: the DevTools call times out after 10 s). The run must
//!   finish with every step recorded: a line per step, numbered without gaps, each with a
//!   screenshot that decodes.
//! - `resume`: `pirltest` on the simulator for 300 steps, killed with SIGKILL (the tool
//!   itself) at step 120 and continued with `--resume`. The run must end at 300 steps
//!   numbered without gaps, the agent must have replayed every recorded step without a
//!   different choice, and its counters (decisions, memory, pages) must go on from there.
//! - `memory`: `pirltest` on the simulator for `--long-steps` (10,000) steps, with the
//!   exploration memory capped at `--memory-capacity` transitions (the agent's default
//!   unless given); this task samples the process's resident memory as the run goes and
//!   reports its peak.
//! - `workers`: steps per minute with `--workers 1` and `--workers 2`, same budget, for
//!   Monkey and PIRLTest on the simulator and Monkey in Chromium; and two workers over a
//!   local chromedriver (`--webdriver`), to show how a grid splits the budget.
//!
//! Options: `--part NAME` (all), `--seed S` (1), `--steps N` (500), `--kills N` (10),
//! `--hangs N` (2),
//! `--long-steps N` (10000), `--memory-capacity N`, `--out DIR` (target/scale-bench).
//! Writes `report.md` there.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use gui_explore::{EventRecord, Summary, read_steps};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const USAGE: &str = "usage: cargo xtask scale-bench [--part all|faults|resume|memory|workers] \
     [--seed S] [--steps N] [--kills N] [--hangs N] [--long-steps N] [--memory-capacity N] [--out DIR]";

#[derive(Debug)]
struct Options {
    part: String,
    seed: u64,
    steps: u64,
    kills: usize,
    hangs: usize,
    long_steps: u64,
    memory_capacity: Option<u64>,
    out: PathBuf,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        part: "all".into(),
        seed: 1,
        steps: 500,
        kills: 10,
        hangs: 2,
        long_steps: 10_000,
        memory_capacity: None,
        out: crate::root().join("target/scale-bench"),
    };
    for (flag, value) in crate::flag_values(rest, USAGE)? {
        let number = |v: &str| -> Result<u64> {
            v.parse()
                .with_context(|| format!("{flag} takes a number, got `{v}`"))
        };
        match flag {
            "--part" => o.part = value.to_owned(),
            "--seed" => o.seed = number(value)?,
            "--steps" => o.steps = number(value)?,
            "--kills" => o.kills = number(value)? as usize,
            "--hangs" => o.hangs = number(value)? as usize,
            "--long-steps" => o.long_steps = number(value)?,
            "--memory-capacity" => o.memory_capacity = Some(number(value)?),
            "--out" => o.out = PathBuf::from(value),
            other => bail!("unknown option `{other}`\n{USAGE}"),
        }
    }
    if !["all", "faults", "resume", "memory", "workers"].contains(&o.part.as_str()) {
        bail!("unknown part `{}`\n{USAGE}", o.part);
    }
    if o.steps < 10 * (o.kills + o.hangs) as u64 + 40 {
        bail!(
            "--steps {} leaves no room for {} kills and {} hangs",
            o.steps,
            o.kills,
            o.hangs
        );
    }
    Ok(o)
}

pub fn run(rest: &[String]) -> Result<()> {
    let o = parse(rest)?;
    crate::setup()?;
    let bin = crate::build_release(&["monkey", "pirltest"])?;
    std::fs::create_dir_all(&o.out).with_context(|| o.out.display().to_string())?;
    let mut report = String::from("# Scale-out and reliability\n\n");
    let all = o.part == "all";
    if all || o.part == "faults" {
        report += &faults(&o, &bin)?;
    }
    if all || o.part == "resume" {
        report += &resume(&o, &bin)?;
    }
    if all || o.part == "workers" {
        report += &workers(&o, &bin)?;
    }
    if all || o.part == "memory" {
        report += &memory(&o, &bin)?;
    }
    let path = o.out.join("report.md");
    std::fs::write(&path, &report).with_context(|| path.display().to_string())?;
    println!("{report}");
    println!("written to {}", path.display());
    Ok(())
}

/// A fresh run folder `name` under the output folder.
fn fresh(o: &Options, name: &str) -> Result<PathBuf> {
    let dir = o.out.join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| dir.display().to_string())?;
    }
    Ok(dir)
}

/// `--device simulator --throttle 0 --steps N --seed S`: the simulator runs of this task.
fn simulator_run<'a>(steps: &'a str, seed: &'a str) -> Vec<&'a str> {
    vec![
        "--device",
        "simulator",
        "--throttle",
        "0",
        "--steps",
        steps,
        "--seed",
        seed,
    ]
}

fn spawn(bin: &Path, tool: &str, args: &[&str], out: &Path) -> Result<Child> {
    Command::new(bin.join(tool))
        .args(args)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {tool}"))
}

fn finish(child: Child, tool: &str) -> Result<()> {
    let out = child.wait_with_output()?;
    ensure!(
        out.status.success(),
        "{tool} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// Lines of `steps.jsonl` written so far (whole ones).
fn steps_written(dir: &Path) -> u64 {
    std::fs::read(dir.join("steps.jsonl"))
        .map(|b| b.iter().filter(|c| **c == b'\n').count() as u64)
        .unwrap_or(0)
}

/// Processes whose parent is `parent` and whose name starts with `name`.
fn children_named(parent: u32, name: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                return false;
            };
            let comm = &stat[open + 1..close];
            let ppid = stat[close + 1..].split_whitespace().nth(1);
            comm.starts_with(name) && ppid == Some(parent.to_string().as_str())
        })
        .collect()
}

fn kill9(pid: u32) -> Result<()> {
    let status = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()?;
    ensure!(status.success(), "kill -9 {pid} failed");
    Ok(())
}

fn summary(dir: &Path) -> Result<Summary> {
    let path = dir.join("summary.json");
    let bytes = std::fs::read(&path).with_context(|| path.display().to_string())?;
    serde_json::from_slice(&bytes).with_context(|| path.display().to_string())
}

fn events(dir: &Path) -> Result<Vec<EventRecord>> {
    let path = dir.join("events.jsonl");
    std::fs::read_to_string(&path)
        .with_context(|| path.display().to_string())?
        .lines()
        .map(|l| serde_json::from_str(l).with_context(|| path.display().to_string()))
        .collect()
}

/// Checks that the run folder holds steps 1..=n, each with a screenshot that decodes.
fn check_every_step(dir: &Path, n: u64) -> Result<()> {
    let steps = read_steps(dir)?;
    let numbers: Vec<u64> = steps.iter().map(|s| s.step).collect();
    ensure!(
        numbers == (1..=n).collect::<Vec<_>>(),
        "{}: steps are not 1..={n} (got {} lines)",
        dir.display(),
        numbers.len()
    );
    for s in &steps {
        let path = dir.join(&s.screenshot);
        image::load_from_memory(&std::fs::read(&path)?)
            .with_context(|| format!("{} does not decode", path.display()))?;
    }
    Ok(())
}

fn faults(o: &Options, bin: &Path) -> Result<String> {
    let dir = fresh(o, "faults")?;
    let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
    // Kill steps spread over the run, at least 10 steps apart, none in the first or last 10.
    let mut at: Vec<u64> = Vec::new();
    while at.len() < o.kills + o.hangs {
        let s = rng.random_range(10..o.steps - 10);
        if at.iter().all(|a| a.abs_diff(s) >= 10) {
            at.push(s);
        }
    }
    // Which of them hang the browser instead of killing it.
    let hang_at: Vec<u64> = at[o.kills..].to_vec();
    at.sort_unstable();
    let steps = o.steps.to_string();
    let seed = o.seed.to_string();
    println!(
        "faults: monkey, {} steps on the demo app, browser killed at steps {at:?} (hung at {hang_at:?})",
        o.steps
    );
    let t = Instant::now();
    let mut child = spawn(
        bin,
        "monkey",
        &["--steps", &steps, "--seed", &seed, "--throttle", "200"],
        &dir,
    )?;
    let tool = child.id();
    let mut kills = Vec::new();
    for &step in &at {
        while steps_written(&dir) < step {
            if let Some(status) = child.try_wait()? {
                bail!("monkey ended ({status}) before step {step}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Somewhere inside the next step: the action, the wait, the screenshot, coverage.
        std::thread::sleep(Duration::from_millis(rng.random_range(0..300)));
        let browsers = children_named(tool, "chrom");
        ensure!(
            !browsers.is_empty(),
            "no browser under monkey (pid {tool}) at step {step}"
        );
        let hang = hang_at.contains(&step);
        for pid in &browsers {
            if hang {
                let status = Command::new("kill")
                    .args(["-STOP", &pid.to_string()])
                    .status()?;
                ensure!(status.success(), "kill -STOP {pid} failed");
            } else {
                kill9(*pid)?;
            }
        }
        kills.push((step, hang));
    }
    finish(child, "monkey")?;
    let took = t.elapsed().as_secs_f64();
    check_every_step(&dir, o.steps)?;
    let s = summary(&dir)?;
    let evs = events(&dir)?;
    let lost = evs.iter().filter(|e| e.event == "device_lost").count();
    let restarted = evs.iter().filter(|e| e.event == "device_restarted").count();
    let lost_steps = read_steps(&dir)?
        .iter()
        .filter(|s| {
            s.error
                .as_deref()
                .is_some_and(|e| e.starts_with("device lost"))
        })
        .count();
    ensure!(s.steps == o.steps, "the run stopped at {} steps", s.steps);
    ensure!(
        restarted >= o.kills + o.hangs,
        "{restarted} restarts for {} kills and {} hangs",
        o.kills,
        o.hangs
    );
    let mut md = String::new();
    writeln!(md, "## Browser kills during a run\n")?;
    writeln!(
        md,
        "`monkey --steps {} --seed {} --throttle 200` on the demo app in Chromium; the browser \
         process killed with SIGKILL at steps {:?} and stopped with SIGSTOP at steps {:?} \
         (each plus 0-300 ms).\n",
        o.steps,
        o.seed,
        at.iter()
            .filter(|a| !hang_at.contains(a))
            .collect::<Vec<_>>(),
        hang_at
    )?;
    writeln!(
        md,
        "| kills | hangs | steps recorded | screenshots that decode | steps lost with the browser | device_lost events | restarts | wall time |"
    )?;
    writeln!(md, "|---|---|---|---|---|---|---|---|")?;
    writeln!(
        md,
        "| {} | {} | {} of {} | {} | {lost_steps} | {lost} | {restarted} | {took:.0} s |\n",
        kills.iter().filter(|k| !k.1).count(),
        kills.iter().filter(|k| k.1).count(),
        s.steps,
        o.steps,
        s.steps
    )?;
    Ok(md)
}

fn resume(o: &Options, bin: &Path) -> Result<String> {
    let dir = fresh(o, "resume")?;
    let (total, kill_at) = (300u64, 120u64);
    let seed = o.seed.to_string();
    let total_s = total.to_string();
    let args = simulator_run(&total_s, &seed);
    println!("resume: pirltest on the simulator, killed at step {kill_at}, resumed");
    let mut child = spawn(bin, "pirltest", &args, &dir)?;
    while steps_written(&dir) < kill_at {
        if let Some(status) = child.try_wait()? {
            bail!("pirltest ended ({status}) before step {kill_at}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    kill9(child.id())?;
    child.wait()?;
    let recorded = read_steps(&dir)?.len() as u64;
    let t = Instant::now();
    let out = Command::new(bin.join("pirltest"))
        .arg("--resume")
        .arg(&dir)
        .output()
        .context("starting pirltest --resume")?;
    ensure!(
        out.status.success(),
        "pirltest --resume failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let took = t.elapsed().as_secs_f64();
    check_every_step(&dir, total)?;
    let s = summary(&dir)?;
    let evs = events(&dir)?;
    ensure!(
        !evs.iter().any(|e| e.event == "replay_diverged"),
        "the agent chose differently while replaying: {evs:?}"
    );
    let agent: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("agent.json"))?)?;
    let stats = &agent["stats"];
    let decisions = stats["decisions"].as_u64().unwrap_or(0);
    ensure!(
        decisions == total,
        "the agent made {decisions} decisions over {total} steps: it did not go on from the replay"
    );
    let mut md = String::new();
    writeln!(md, "## Resume after kill -9\n")?;
    writeln!(
        md,
        "`pirltest --device simulator --throttle 0 --steps {total} --seed {}` killed with \
         SIGKILL after {recorded} recorded steps, then `pirltest --resume DIR`.\n",
        o.seed
    )?;
    writeln!(
        md,
        "| steps before the kill | steps at the end | numbered 1..{total} | replay diverged | agent decisions | memory | pages | resumed at | resume wall time |"
    )?;
    writeln!(md, "|---|---|---|---|---|---|---|---|---|")?;
    writeln!(
        md,
        "| {recorded} | {} | yes | no | {decisions} | {} | {} | {:?} | {took:.1} s |\n",
        s.steps, stats["memory"], stats["pages"], s.resumed_at
    )?;
    Ok(md)
}

/// Steps per minute of one run of `tool` with `workers` workers.
fn rate(bin: &Path, tool: &str, args: &[&str], workers: u32, dir: &Path) -> Result<(f64, Summary)> {
    let w = workers.to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--workers", &w]);
    let child = spawn(bin, tool, &all, dir)?;
    finish(child, tool)?;
    let s = summary(dir)?;
    let minutes = s.duration_ms as f64 / 60_000.0;
    Ok((s.steps as f64 / minutes.max(1e-9), s))
}

fn workers(o: &Options, bin: &Path) -> Result<String> {
    let seed = o.seed.to_string();
    let sim = ["--device", "simulator", "--throttle", "0"];
    let cases: [(&str, &str, Vec<&str>, &str); 3] = [
        (
            "monkey",
            "simulator",
            [&sim[..], &["--steps", "4000"]].concat(),
            "4000",
        ),
        (
            "pirltest",
            "simulator",
            [&sim[..], &["--steps", "400"]].concat(),
            "400",
        ),
        (
            "monkey",
            "Chromium, demo app",
            vec!["--steps", "300", "--throttle", "200"],
            "300",
        ),
    ];
    let mut md = String::new();
    writeln!(md, "## Workers on this 2-core machine\n")?;
    writeln!(
        md,
        "Same budget, same seed ({}); steps per minute of the whole run (start-up excluded, as `summary.json` times the loop).\n",
        o.seed
    )?;
    writeln!(
        md,
        "| tool | device | steps | 1 worker (steps/min) | 2 workers (steps/min) | ratio | steps per worker |"
    )?;
    writeln!(md, "|---|---|---|---|---|---|---|")?;
    for (i, (tool, device, args, steps)) in cases.iter().enumerate() {
        let mut args = args.clone();
        args.extend(["--seed", &seed]);
        println!("workers: {tool} on {device}, 1 and 2 workers");
        let (one, _) = rate(bin, tool, &args, 1, &fresh(o, &format!("workers-{i}-1"))?)?;
        let (two, s) = rate(bin, tool, &args, 2, &fresh(o, &format!("workers-{i}-2"))?)?;
        writeln!(
            md,
            "| {tool} | {device} | {steps} | {one:.0} | {two:.0} | {:.2}x | {:?} |",
            two / one,
            s.steps_by_worker
        )?;
    }
    // A grid: here a local chromedriver stands in for the endpoint.
    let driver = gui_driver::ChromeDriver::spawn().context("starting chromedriver")?;
    let url = driver.url().to_owned();
    println!("workers: monkey over WebDriver ({url}), 2 workers");
    let dir = fresh(o, "workers-webdriver")?;
    let child = spawn(
        bin,
        "monkey",
        &[
            "--webdriver",
            &url,
            "--workers",
            "2",
            "--steps",
            "60",
            "--throttle",
            "200",
            "--seed",
            &seed,
        ],
        &dir,
    )?;
    finish(child, "monkey")?;
    let s = summary(&dir)?;
    writeln!(
        md,
        "| monkey | WebDriver (local chromedriver as the grid) | 60 | | {:.0} | | {:?} |\n",
        s.steps as f64 / (s.duration_ms as f64 / 60_000.0),
        s.steps_by_worker
    )?;
    Ok(md)
}

fn memory(o: &Options, bin: &Path) -> Result<String> {
    let dir = fresh(o, "memory")?;
    let steps = o.long_steps.to_string();
    let seed = o.seed.to_string();
    let capacity = o
        .memory_capacity
        .unwrap_or(gui_rl::MemoryConfig::default().capacity as u64)
        .to_string();
    println!("memory: pirltest on the simulator for {steps} steps, memory capacity {capacity}");
    let t = Instant::now();
    let mut args = simulator_run(&steps, &seed);
    args.extend(["--progress", "0", "--memory-capacity", &capacity]);
    let mut child = spawn(bin, "pirltest", &args, &dir)?;
    let pid = child.id();
    // (steps done, resident MiB), sampled every second; the peak from the kernel.
    let mut samples: Vec<(u64, f64)> = Vec::new();
    let mut peak = 0.0f64;
    while child.try_wait()?.is_none() {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let kib = |key: &str| {
                status
                    .lines()
                    .find(|l| l.starts_with(key))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|v| v.parse::<f64>().ok())
            };
            if let (Some(rss), Some(hwm)) = (kib("VmRSS:"), kib("VmHWM:")) {
                samples.push((steps_written(&dir), rss / 1024.0));
                peak = peak.max(hwm / 1024.0);
            }
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    finish(child, "pirltest")?;
    let took = t.elapsed().as_secs_f64();
    let s = summary(&dir)?;
    ensure!(
        s.steps == o.long_steps,
        "the run stopped at {} steps",
        s.steps
    );
    let agent: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("agent.json"))?)?;
    let at = |frac: f64| -> f64 {
        let target = (o.long_steps as f64 * frac) as u64;
        samples
            .iter()
            .find(|(n, _)| *n >= target)
            .or(samples.last())
            .map_or(f64::NAN, |(_, m)| *m)
    };
    let mut md = String::new();
    writeln!(md, "## Memory over a long run\n")?;
    writeln!(
        md,
        "`pirltest --device simulator --throttle 0 --steps {} --seed {} --memory-capacity {capacity}`: \
         {took:.0} s, {} pages, {} known widgets, {} transitions in memory.\n",
        o.long_steps,
        o.seed,
        agent["stats"]["pages"],
        agent["stats"]["known_widgets"],
        agent["stats"]["memory"],
    )?;
    writeln!(
        md,
        "| resident MiB at 10% | 25% | 50% | 75% | 100% | peak (VmHWM) |"
    )?;
    writeln!(md, "|---|---|---|---|---|---|")?;
    writeln!(
        md,
        "| {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {peak:.0} |\n",
        at(0.1),
        at(0.25),
        at(0.5),
        at(0.75),
        at(1.0)
    )?;
    Ok(md)
}
