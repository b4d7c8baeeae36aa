//! Model files of the workspace: named f32 tensors in safetensors with one JSON header
//! under a metadata key. Every trained model (widget CNN, layout LSTM, Q-network) uses
//! this one format, so a file can be inspected by any safetensors reader.
//!
//! Errors are plain strings; the caller knows the path and wraps them in its own error.

use std::collections::HashMap;
use std::path::Path;

use safetensors::SafeTensors;

/// One tensor to write: name, shape and row-major values.
pub type NamedTensor<'a> = (&'a str, &'a [usize], &'a [f32]);

/// Writes `tensors` (f32, little endian) and `header` under the metadata key `key`,
/// creating the parent folder. One metadata entry keeps the same model's file
/// byte-identical from one save to the next.
pub fn write_checkpoint(
    path: &Path,
    key: &str,
    header: &str,
    tensors: &[NamedTensor<'_>],
) -> Result<(), String> {
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, _, v)| v.iter().flat_map(|x| x.to_le_bytes()).collect())
        .collect();
    let mut views = Vec::with_capacity(tensors.len());
    for ((name, shape, values), data) in tensors.iter().zip(&bytes) {
        let expected: usize = shape.iter().product();
        if expected != values.len() {
            return Err(format!(
                "tensor {name}: shape {shape:?} needs {expected} values, got {}",
                values.len()
            ));
        }
        let view =
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.to_vec(), data)
                .map_err(|e| format!("tensor {name}: {e}"))?;
        views.push((name.to_string(), view));
    }
    let metadata = HashMap::from([(key.to_owned(), header.to_owned())]);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating folder: {e}"))?;
    }
    safetensors::serialize_to_file(views, Some(metadata), path).map_err(|e| format!("writing: {e}"))
}

/// A parsed checkpoint: its header and typed access to its tensors.
pub struct CheckpointReader<'a> {
    header: String,
    tensors: SafeTensors<'a>,
}

impl std::fmt::Debug for CheckpointReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointReader")
            .field("header", &self.header)
            .field("tensors", &self.tensors.len())
            .finish()
    }
}

impl<'a> CheckpointReader<'a> {
    /// Parses the bytes of a file written by [`write_checkpoint`] with the same `key`.
    pub fn parse(bytes: &'a [u8], key: &str) -> Result<Self, String> {
        let (_, metadata) =
            SafeTensors::read_metadata(bytes).map_err(|e| format!("not safetensors: {e}"))?;
        let header = metadata
            .metadata()
            .as_ref()
            .and_then(|m| m.get(key))
            .ok_or(format!("no `{key}` entry in the metadata"))?
            .clone();
        let tensors =
            SafeTensors::deserialize(bytes).map_err(|e| format!("not safetensors: {e}"))?;
        Ok(Self { header, tensors })
    }

    /// The JSON header.
    pub fn header(&self) -> &str {
        &self.header
    }

    /// The values of tensor `name`, which must be f32 of exactly `shape`.
    pub fn f32(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let view = self
            .tensors
            .tensor(name)
            .map_err(|e| format!("tensor {name}: {e}"))?;
        if view.dtype() != safetensors::Dtype::F32 || view.shape() != shape {
            return Err(format!(
                "tensor {name} is {:?} {:?}, expected F32 {shape:?}",
                view.dtype(),
                view.shape()
            ));
        }
        Ok(view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m/x.safetensors");
        let w = [1.0f32, -2.5, 3.0, 0.25, 5.0, 6.0];
        write_checkpoint(
            &path,
            "k",
            "{\"a\":1}",
            &[("w", &[2, 3], &w), ("b", &[1], &[9.0])],
        )
        .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let r = CheckpointReader::parse(&bytes, "k").unwrap();
        assert_eq!(r.header(), "{\"a\":1}");
        assert_eq!(r.f32("w", &[2, 3]).unwrap(), w);
        assert!(
            r.f32("w", &[3, 2])
                .unwrap_err()
                .contains("expected F32 [3, 2]")
        );
        assert!(r.f32("nope", &[1]).unwrap_err().contains("nope"));
        assert!(
            CheckpointReader::parse(&bytes, "other")
                .unwrap_err()
                .contains("`other`")
        );
        assert!(
            CheckpointReader::parse(b"garbage", "k")
                .unwrap_err()
                .contains("not safetensors")
        );
        let bad = write_checkpoint(&path, "k", "", &[("w", &[4], &w)]).unwrap_err();
        assert!(bad.contains("needs 4 values, got 6"), "{bad}");
    }
}
