use std::path::PathBuf;

/// Errors of the exploration loop and its run folder.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Device(#[from] gui_device::Error),

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path} already holds a run; choose another output folder")]
    RunFolderExists { path: PathBuf },

    #[error("{path} holds no run (no run.json) to resume")]
    NotARun { path: PathBuf },

    /// Another recorder, of process `pid`, is writing the folder (its `run.lock`).
    #[error(
        "{path} is being written by process {pid} (see run.lock in it); wait for that run to end, \
         or delete run.lock if process {pid} is not a run of this tool"
    )]
    RunFolderLocked { path: PathBuf, pid: u32 },

    /// A step of `steps.jsonl` names a worker the run does not have.
    #[error("{path}: step {step} names worker {worker}, but the run has {workers} workers")]
    WorkerOutOfRange {
        path: PathBuf,
        step: u64,
        worker: u32,
        workers: u32,
    },

    #[error("{path}:{line}: {message}")]
    BadRecord {
        path: PathBuf,
        line: usize,
        message: String,
    },

    #[error("the device could not be brought back after {attempts} restarts; last error: {last}")]
    DeviceGone { attempts: u32, last: String },

    #[error("the rendering-state judge `{judge}` failed: {message}")]
    Judge { judge: String, message: String },

    #[error("worker {worker} could not start: {message}")]
    WorkerStart { worker: u32, message: String },

    #[error("invalid configuration: {0}")]
    Config(String),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
