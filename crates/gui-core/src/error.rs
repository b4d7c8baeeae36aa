use std::path::PathBuf;

/// Errors of the shared types: decoding or encoding pixels and reading them from disk.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bytes that should hold an image could not be decoded.
    #[error("cannot decode image {what}: {source}")]
    Decode {
        what: String,
        #[source]
        source: image::ImageError,
    },
    /// A screenshot could not be encoded.
    #[error("cannot encode screenshot as PNG: {0}")]
    Encode(#[source] image::ImageError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A screenshot with no pixels (zero width or height).
    #[error("screenshot {what} is empty ({width}x{height})")]
    EmptyScreenshot {
        what: String,
        width: u32,
        height: u32,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
