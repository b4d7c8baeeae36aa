//! The Q-network's retraining (Sections 3.4.1, 3.4.2), off the decision path: a
//! retraining runs on its own thread while the device carries out the chosen action.
//!
//! By default the next decision waits for it, so that a run is fixed by its seed: each
//! decision uses the network trained on every transition but the one it closes. With
//! [`AgentConfig::train_async`](crate::AgentConfig::train_async) no decision waits: it
//! uses a copy of the weights of the last retraining that finished, and retrainings run
//! at a lower scheduling priority ([`TRAINING_NICE`]) so that reading screens, choosing
//! and the app under test go first.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use rand_chacha::ChaCha8Rng;

use crate::reader::ms;
use crate::{AgentStats, Error, ExplorationMemory, FitReport, QNetwork, Result, SharedEntry};

/// The nice value of the threads of background retrainings
/// ([`AgentConfig::train_async`](crate::AgentConfig::train_async)): at 10 the scheduler
/// gives a busy thread of the default priority about nine times their share, so reading
/// the screen, choosing and the browser go first and learning takes the CPU time left
/// over.
pub const TRAINING_NICE: i32 = 10;

/// The calling thread's nice value (on Linux, where it is a property of each thread).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(crate) fn thread_nice() -> i32 {
    // SAFETY: `gettid` has no preconditions, and `getpriority` only reads its arguments.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
}

/// Raises the calling thread's nice value to `nice`, and leaves a higher one as it is.
/// A failure leaves the priority as it was: only timing depends on it.
#[allow(unsafe_code)]
fn lower_priority(nice: i32) {
    #[cfg(target_os = "linux")]
    if thread_nice() < nice {
        // SAFETY: `gettid` has no preconditions, and `setpriority` only reads its
        // arguments.
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, nice);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// The pool background retrainings run on: as many threads as rayon's global pool, each
/// at [`TRAINING_NICE`]. candle's matrix products and the Adam pass use the pool they
/// are called in, so a retraining does not queue its work beside the screen reading and
/// choosing on the global pool, and it takes only the CPU time they and the browser
/// leave.
fn training_pool() -> Result<Arc<rayon::ThreadPool>> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .thread_name(|i| format!("q-network-training-{i}"))
        .start_handler(|_| lower_priority(TRAINING_NICE))
        .build()
        .map(Arc::new)
        .map_err(|e| Error::Input {
            what: "training thread pool",
            message: e.to_string(),
        })
}

type Training = JoinHandle<(QNetwork, Result<FitReport>, f64)>;

/// When and where the Q-network retrains.
pub(crate) struct Learner {
    /// `None` while a retraining runs on `training`.
    network: Option<QNetwork>,
    training: Option<Training>,
    /// In the background: a copy of the network's weights, for the decisions made while
    /// it retrains.
    acting: Option<QNetwork>,
    /// In the background: a retraining came due while another was in flight; it starts
    /// once that one has finished.
    due: bool,
    /// In the background: the threads retrainings run on.
    pub(crate) pool: Option<Arc<rayon::ThreadPool>>,
    background: bool,
    since: usize,
    every: usize,
    samples: usize,
    gamma: f64,
}

impl Learner {
    pub fn new(
        network: QNetwork,
        background: bool,
        every: usize,
        samples: usize,
        gamma: f64,
    ) -> Result<Self> {
        Ok(Self {
            network: Some(network),
            training: None,
            acting: None,
            due: false,
            pool: background.then(training_pool).transpose()?,
            background,
            since: 0,
            every,
            samples,
            gamma,
        })
    }

    /// The network decisions use now: the one being trained once it is back, or in the
    /// background the copy made before its retraining.
    pub fn acting(&self) -> &QNetwork {
        self.network
            .as_ref()
            .or(self.acting.as_ref())
            .expect("the network, or its copy while it retrains")
    }

    /// The network, once any retraining in flight has finished.
    pub fn network(&mut self, stats: &mut AgentStats) -> Result<&QNetwork> {
        self.join(stats)?;
        Ok(self.network.as_ref().expect("joined"))
    }

    /// Replaces the network, once any retraining in flight has finished.
    pub fn replace(&mut self, network: QNetwork, stats: &mut AgentStats) -> Result<()> {
        self.join(stats)?;
        self.network = Some(network);
        Ok(())
    }

    /// A step was closed and remembered: whether a retraining is due.
    pub fn step_closed(&mut self) -> bool {
        self.since += 1;
        let due = self.since >= self.every;
        if due {
            self.since = 0;
        }
        due
    }

    /// Before a decision: takes the network back from the retraining in flight, waiting
    /// for it unless in the background.
    pub fn before_decision(&mut self, stats: &mut AgentStats) -> Result<()> {
        let t = Instant::now();
        let finished = self.training.as_ref().is_some_and(|h| h.is_finished());
        if !self.background || finished {
            self.join(stats)?;
        }
        stats.timings.train_ms += ms(t);
        Ok(())
    }

    /// After a decision: starts a retraining that is `due`, while the device acts. In the
    /// background one that comes due while another runs waits for it.
    pub fn after_decision(
        &mut self,
        due: bool,
        memory: &ExplorationMemory<Arc<[f32]>, Arc<[f32]>>,
        rng: &mut ChaCha8Rng,
        stats: &mut AgentStats,
    ) -> Result<()> {
        if !self.background {
            return if due { self.start(memory, rng) } else { Ok(()) };
        }
        self.due |= due;
        if self.due && self.training.is_none() {
            self.due = false;
            let t = Instant::now();
            self.acting = Some(self.network.as_ref().expect("joined").weights_copy()?);
            stats.timings.train_ms += ms(t);
            self.start(memory, rng)?;
        }
        Ok(())
    }

    /// Retrains on a batch from the memory (the newest half and a random half of the
    /// rest, Section 3.4.2) on another thread.
    fn start(
        &mut self,
        memory: &ExplorationMemory<Arc<[f32]>, Arc<[f32]>>,
        rng: &mut ChaCha8Rng,
    ) -> Result<()> {
        let batch: Vec<SharedEntry> = memory
            .training_batch(self.samples, rng)
            .into_iter()
            .cloned()
            .collect();
        let pool = self.pool.clone();
        let mut network = self.network.take().expect("joined before");
        let gamma = self.gamma;
        let handle = std::thread::Builder::new()
            .name("q-network-training".to_owned())
            .spawn(move || {
                let t = Instant::now();
                let refs: Vec<&SharedEntry> = batch.iter().collect();
                let report = match pool {
                    Some(pool) => pool.install(|| network.fit(&refs, gamma)),
                    None => network.fit(&refs, gamma),
                };
                (network, report, ms(t))
            })
            .map_err(|e| Error::Input {
                what: "training thread",
                message: e.to_string(),
            })?;
        self.training = Some(handle);
        Ok(())
    }

    /// Waits for a retraining in flight and takes its network back.
    fn join(&mut self, stats: &mut AgentStats) -> Result<()> {
        if let Some(handle) = self.training.take() {
            let (network, report, took) = handle.join().map_err(|_| Error::Input {
                what: "training thread",
                message: "the Q-network training panicked".to_owned(),
            })?;
            self.network = Some(network);
            self.acting = None;
            let report = report?;
            stats.retrainings += 1;
            stats.last_loss = report.last_loss;
            tracing::debug!(
                retraining = stats.retrainings,
                samples = report.samples,
                mean_reward = report.mean_reward,
                mean_future = report.mean_future,
                next_values = report.next_values,
                evaluated = report.evaluated,
                bounded = report.bounded,
                first_loss = report.first_loss,
                last_loss = report.last_loss,
                "retrained"
            );
            stats.timings.training_thread_ms += took;
        }
        Ok(())
    }
}
