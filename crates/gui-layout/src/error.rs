/// Errors of layout trees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A bracket string that is not one well-formed tree; `position` is the byte offset.
    #[error("bracket notation, byte {position}: {message} (in `{excerpt}`)")]
    Parse {
        position: usize,
        message: String,
        excerpt: String,
    },
    /// A layout embedder weights file that cannot be read, written or understood.
    #[error("layout embedder weights {}: {message}", path.display())]
    Model {
        path: std::path::PathBuf,
        message: String,
    },
    /// The layout embedder failed outside file handling: a bad config, data set or tensor
    /// operation.
    #[error("layout embedder: {message}")]
    Embedder { message: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
