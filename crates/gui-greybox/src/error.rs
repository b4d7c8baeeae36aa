use std::path::PathBuf;

/// Errors of the grey-box pipeline. Each names what it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("inconsistent event model: {what}")]
    BadModel { what: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[cfg(feature = "live")]
    #[error(transparent)]
    Device(#[from] gui_driver::Error),
    #[cfg(feature = "live")]
    #[error(transparent)]
    Run(#[from] gui_explore::Error),
    #[error("{path}: not a grey-box model: {message}")]
    BadFile { path: PathBuf, message: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
