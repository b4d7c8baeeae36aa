use std::path::PathBuf;

/// Errors of the exploration loop and its run folder.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Device(#[from] gui_driver::Error),

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
