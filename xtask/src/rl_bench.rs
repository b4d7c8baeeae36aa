//! `cargo xtask rl-bench`: the Q-network of gui-rl against the same network written the
//! usual way in PyTorch (`xtask/scripts/qnet_torch.py`), on the paper's sizes (state 8718,
//! action 8224: 16942 inputs → 4x512 → 1), timed in one run on this machine.
//!
//! Three measures, medians over `--iters N` (default 20):
//! - `grad_step`: one Adam step on a batch of 64 dense random rows, no reuse possible on
//!   either side: the bare cost of the matrix products.
//! - `choose`: Q of the 40 candidate actions of one state (one decision).
//! - `dqn_update`: one retraining step as PIRLTest runs it: Eq. 3 targets of 64 memory
//!   entries over their next states' 40 candidate actions, then one Adam step. The 64
//!   entries visit `--pages N` (default 12) distinct pages; gui-rl pays for each page
//!   once, the plain PyTorch network for each row.
//!
//! Installs `torch` with pip when missing (a large download, about 5 minutes).

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use gui_rl::{MemoryEntry, QBatch, QNetwork, QNetworkConfig, SharedEntry};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const STATE: usize = 8718;
const ACTION: usize = 8224;
const BATCH: usize = 64;
const CANDIDATES: usize = 40;

pub fn run(rest: &[String]) -> Result<()> {
    if let Some(done) = crate::in_release("rl-bench", rest) {
        return done;
    }
    let (mut iters, mut pages) = (20usize, 12usize);
    for (flag, v) in crate::flag_values(rest, "options: --iters N --pages N")? {
        let value = || -> Result<usize> {
            v.parse()
                .with_context(|| format!("{flag} takes a number, got {v}"))
        };
        match flag {
            "--iters" => iters = value()?.max(1),
            "--pages" => pages = value()?.clamp(1, BATCH),
            other => bail!("unknown option {other}; options: --iters N --pages N"),
        }
    }
    crate::pip_install("rl-bench", "torch", "torch")?;
    let script = crate::root().join("xtask/scripts/qnet_torch.py");
    eprintln!("rl-bench: timing PyTorch ({iters} iterations per measure)");
    let out = Command::new("python3")
        .arg(&script)
        .args([STATE, ACTION, pages, CANDIDATES, iters].map(|n| n.to_string()))
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let torch: serde_json::Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("output of {}", script.display()))?;
    eprintln!("rl-bench: timing gui-rl");
    let ours = time_ours(iters, pages)?;
    let peer = |k: &str| torch[k].as_f64().unwrap_or(f64::NAN);
    println!(
        "Q-network {STATE}+{ACTION} → 4x512 → 1, batch {BATCH}, {CANDIDATES} candidates, {pages} pages; \
         torch {} on {} threads, candle on {} threads",
        torch["torch"],
        torch["threads"],
        rayon::current_num_threads()
    );
    println!("| measure | gui-rl (candle) ms | PyTorch ms | gui-rl / PyTorch |");
    println!("|---|---|---|---|");
    for (name, ms) in [
        ("grad_step", ours.grad_step),
        ("choose", ours.choose),
        ("dqn_update", ours.dqn_update),
    ] {
        let t = peer(&format!("{name}_ms"));
        println!("| {name} | {ms:.1} | {t:.1} | {:.2} |", ms / t);
    }
    Ok(())
}

struct Timings {
    grad_step: f64,
    choose: f64,
    dqn_update: f64,
}

fn median_ms(iters: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let mut times = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(crate::median(&times))
}

fn time_ours(iters: usize, pages: usize) -> Result<Timings> {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut vector =
        |n: usize| -> Arc<[f32]> { (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect() };
    let mut net = QNetwork::new(QNetworkConfig::new(STATE, ACTION))?;

    let states: Vec<Arc<[f32]>> = (0..BATCH).map(|_| vector(STATE)).collect();
    let actions: Vec<Arc<[f32]>> = (0..BATCH).map(|_| vector(ACTION)).collect();
    let targets: Vec<f32> = (0..BATCH).map(|i| (i % 7) as f32 / 7.0).collect();
    let s_refs: Vec<&[f32]> = states.iter().map(|s| &s[..]).collect();
    let a_refs: Vec<&[f32]> = actions.iter().map(|a| &a[..]).collect();
    let state_of: Vec<usize> = (0..BATCH).collect();
    let grad_step = median_ms(iters, || {
        net.train_step(&QBatch {
            states: &s_refs,
            state_of: &state_of,
            actions: &a_refs,
            targets: &targets,
        })?;
        Ok(())
    })?;

    let page_states: Vec<Arc<[f32]>> = (0..pages).map(|_| vector(STATE)).collect();
    let page_actions: Vec<Vec<Arc<[f32]>>> = (0..pages)
        .map(|_| (0..CANDIDATES).map(|_| vector(ACTION)).collect())
        .collect();
    let candidates: Vec<&[f32]> = page_actions[0].iter().map(|a| &a[..]).collect();
    let choose = median_ms(iters, || {
        net.q_values(&page_states[0], &candidates)?;
        Ok(())
    })?;

    let entries: Vec<SharedEntry> = (0..BATCH)
        .map(|i| {
            let (p, next) = (i % pages, (i + 1) % pages);
            MemoryEntry {
                state: page_states[p].clone(),
                action: page_actions[p][0].clone(),
                reward: 0.5,
                next_state: page_states[next].clone(),
                next_actions: page_actions[next].clone(),
            }
        })
        .collect();
    let refs: Vec<_> = entries.iter().collect();
    let mut one_epoch = net.config().clone();
    one_epoch.epochs = 1;
    let mut net = QNetwork::new(one_epoch)?;
    let dqn_update = median_ms(iters, || {
        net.fit(&refs, 0.9)?;
        Ok(())
    })?;
    Ok(Timings {
        grad_step,
        choose,
        dqn_update,
    })
}
