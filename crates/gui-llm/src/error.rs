use std::path::PathBuf;

/// Errors of the VisionDroid pipeline. Each names the input or endpoint it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The endpoint could not be reached or kept failing after every retry.
    #[error("LLM endpoint {endpoint}: {message}")]
    Endpoint { endpoint: String, message: String },
    /// The endpoint answered with an HTTP error that retrying does not cure (4xx).
    #[error("LLM endpoint {endpoint} answered HTTP {status}: {body}")]
    Status {
        endpoint: String,
        status: u16,
        body: String,
    },
    /// The model takes no images (a text-only model refused an image part); the explorer
    /// then sends the text view.
    #[error("LLM endpoint {endpoint} takes no images: {message}")]
    ImagesUnsupported { endpoint: String, message: String },
    /// The endpoint's answer is not a chat completion.
    #[error("LLM endpoint {endpoint}: unexpected answer: {message}")]
    BadResponse { endpoint: String, message: String },
    /// The model's text does not follow the requested template.
    #[error("could not read the model's {what} answer: {message}")]
    Answer { what: &'static str, message: String },
    /// Bad configuration (a missing endpoint, a zero budget, ...).
    #[error("configuration: {0}")]
    Config(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file that does not hold what it should (an example set, a script), with the
    /// reason.
    #[error("{path}: {message}")]
    BadFile { path: PathBuf, message: String },
    #[error("image: {0}")]
    Image(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
