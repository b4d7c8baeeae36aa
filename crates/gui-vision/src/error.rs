use std::path::PathBuf;

/// Errors of the vision pipeline. Every variant names the input it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An image that cannot be used: undecodable, zero-sized, or of the wrong shape.
    #[error("image {what}: {message}")]
    Image { what: String, message: String },
    /// A configuration value outside its valid range.
    #[error("config `{field}`: {message}")]
    Config {
        field: &'static str,
        message: String,
    },
    /// A model file (weights, ONNX graph, runtime library) that is missing or unusable.
    #[error("model {}: {message}", path.display())]
    Model { path: PathBuf, message: String },
    /// A labelled data set file that is missing or malformed.
    #[error("data set {}: {message}", path.display())]
    Dataset { path: PathBuf, message: String },
    /// A failure inside a model backend (tensor shapes, runtime errors).
    #[error("{backend}: {message}")]
    Backend {
        backend: &'static str,
        message: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn image(what: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Image {
            what: what.into(),
            message: message.into(),
        }
    }
}
