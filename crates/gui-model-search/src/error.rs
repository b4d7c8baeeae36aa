use std::path::PathBuf;

/// Errors of the model-driven search. Each names the input it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The app model contradicts itself (an edge to a missing vertex, a UI vertex on an
    /// unknown screen, ...).
    #[error("inconsistent app model: {what}")]
    BadModel { what: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file that does not hold what it should (a model, a dump), with the reason.
    #[error("{path}: {message}")]
    BadFile { path: PathBuf, message: String },
    #[cfg(feature = "live")]
    #[error(transparent)]
    Device(#[from] gui_driver::Error),
    #[error(transparent)]
    Greybox(#[from] gui_greybox::Error),
    #[cfg(feature = "live")]
    #[error(transparent)]
    Run(#[from] gui_explore::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
