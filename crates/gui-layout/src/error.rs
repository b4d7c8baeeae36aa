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
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
