//! Exploring a target: one worker behind a progress bar, or `--workers` workers, each
//! with a device of its own, into one run folder.

use anyhow::Result;
use gui_explore::{ExploreConfig, RunRecorder, Strategy, Summary, Throttle, Worker, WorkerParts};

use super::{RunArgs, Target, TargetArgs, WithProgress};

/// Explores `target` with `strategy` behind a progress bar (hidden when `verbose`): the
/// one-worker run of every strategy binary.
pub fn explore_one(
    target: &mut Target,
    strategy: &mut dyn Strategy,
    run: &RunArgs,
    recorder: &mut RunRecorder,
    config: &ExploreConfig,
    verbose: bool,
) -> Result<Summary> {
    let mut throttle = run.throttle()?;
    let mut progress = WithProgress::new(strategy, config.steps, verbose);
    let outcome = gui_explore::explore(
        target.device.as_mut(),
        &mut progress,
        &mut throttle,
        recorder,
        config,
    );
    progress.finish();
    Ok(outcome?)
}

/// The seed of worker `worker` of a parallel run: the run's own for worker 0 (so one
/// worker is the plain run), a well-mixed other one for the rest.
pub fn worker_seed(seed: u64, worker: u32) -> u64 {
    seed ^ u64::from(worker).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One worker of a parallel run: its device (and the server of its app) and strategy.
struct CliWorker {
    target: Target,
    strategy: Box<dyn Strategy>,
    throttle: Box<dyn Throttle>,
}

impl Worker for CliWorker {
    fn parts(&mut self) -> WorkerParts<'_> {
        WorkerParts {
            device: self.target.device.as_mut(),
            strategy: self.strategy.as_mut(),
            throttle: self.throttle.as_mut(),
        }
    }
}

/// Explores with `--workers` workers into `recorder`: worker 0 on `first`, each other one
/// on a device it starts on its own thread (a browser with its own server of the app, an
/// X server, a WebDriver session); `strategy(i)` makes worker `i`'s strategy there.
pub fn explore_workers(
    target: &TargetArgs,
    run: &RunArgs,
    first: Target,
    recorder: &mut RunRecorder,
    config: &ExploreConfig,
    strategy: &(dyn Fn(u32) -> Result<Box<dyn Strategy>> + Sync),
) -> Result<Summary> {
    run.check_workers(target)?;
    let first = std::sync::Mutex::new(Some(first));
    let build = |i: u32| -> gui_explore::Result<CliWorker> {
        let start = || -> Result<CliWorker> {
            let taken = if i == 0 {
                first.lock().map_or(None, |mut f| f.take())
            } else {
                None
            };
            let target = match taken {
                Some(t) => t,
                None => target.start()?,
            };
            Ok(CliWorker {
                target,
                strategy: strategy(i)?,
                throttle: run.throttle()?,
            })
        };
        start().map_err(|e| gui_explore::Error::WorkerStart {
            worker: i,
            message: format!("{e:#}"),
        })
    };
    Ok(gui_explore::explore_parallel(
        run.workers,
        build,
        recorder,
        config,
    )?)
}
