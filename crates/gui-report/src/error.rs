use std::path::PathBuf;

/// Errors of reading run folders and writing reports. Each names the file it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: no such folder")]
    MissingFolder { path: PathBuf },

    #[error("{path}: not a run folder (it has no run.json)")]
    NotARunFolder { path: PathBuf },

    #[error("{path}: format {format:?} version {version} is not a run folder this tool reads")]
    UnsupportedFormat {
        path: PathBuf,
        format: String,
        version: u64,
    },

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A JSON file (`line` = 0) or a line of a JSON-lines file that does not parse.
    #[error("{}: {message}", location(path, *line))]
    BadJson {
        path: PathBuf,
        line: usize,
        message: String,
    },

    #[error("no run folders given")]
    NoRuns,
}

fn location(path: &std::path::Path, line: usize) -> String {
    if line == 0 {
        path.display().to_string()
    } else {
        format!("{}:{line}", path.display())
    }
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
