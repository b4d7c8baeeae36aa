//! Compiling Java sources (fixtures, small applications under test) with the JDK's javac.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::ClassError;

/// Compiles every `.java` file under `sources_dir` (recursively) into `out_dir` with
/// `javac -g -d out_dir`, and returns `out_dir` so the result can go straight into
/// [`ClassDb::load`](super::ClassDb::load).
///
/// `javac` is taken from `$JAVA_HOME/bin` when that exists, else from `PATH`.
pub fn compile_java(sources_dir: &Path, out_dir: &Path) -> Result<PathBuf, ClassError> {
    let io_error = |path: &Path, e: std::io::Error| ClassError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut sources = Vec::new();
    collect_sources(sources_dir, &mut sources).map_err(|e| io_error(sources_dir, e))?;
    if sources.is_empty() {
        return Err(ClassError::NoSources {
            sources: sources_dir.to_path_buf(),
        });
    }
    sources.sort();
    std::fs::create_dir_all(out_dir).map_err(|e| io_error(out_dir, e))?;

    let javac = javac_program();
    let output = Command::new(&javac)
        .arg("-g")
        .arg("-d")
        .arg(out_dir)
        .args(&sources)
        .output()
        .map_err(|e| match e.kind() {
            ErrorKind::NotFound => ClassError::JavacMissing {
                javac: javac.clone(),
                sources: sources_dir.to_path_buf(),
            },
            _ => io_error(&javac, e),
        })?;
    if !output.status.success() {
        return Err(ClassError::Javac {
            sources: sources_dir.to_path_buf(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(out_dir.to_path_buf())
}

fn javac_program() -> PathBuf {
    std::env::var_os("JAVA_HOME")
        .map(|home| Path::new(&home).join("bin").join("javac"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("javac"))
}

fn collect_sources(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_sources(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "java") {
            out.push(path);
        }
    }
    Ok(())
}
