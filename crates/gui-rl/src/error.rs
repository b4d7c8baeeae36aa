/// Errors of the RL building blocks; each names the input that was wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value out of its range.
    #[error("invalid config `{field}`: {message}")]
    Config {
        field: &'static str,
        message: String,
    },
    /// An argument that does not fit the others (lengths, dimensions, unknown ids).
    #[error("invalid input `{what}`: {message}")]
    Input { what: &'static str, message: String },
    /// A model file that cannot be read or written.
    #[error("model {}: {message}", path.display())]
    Model {
        path: std::path::PathBuf,
        message: String,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
