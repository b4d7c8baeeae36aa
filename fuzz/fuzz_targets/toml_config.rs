//! `--config FILE` of the strategy binaries: any file content gives options or a clap
//! error naming the file, never a panic. The options are those of `monkey` (common, target
//! and run flags); the file is rewritten in one temporary folder for every input.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use clap::Parser;
use gui_testing::cli::{CommonArgs, RunArgs, TargetArgs, parse_from};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Parser)]
struct Options {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    run: RunArgs,
}

fn config_path() -> &'static PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        DIR.get_or_init(|| tempfile::tempdir().expect("temporary folder"))
            .path()
            .join("fuzz.toml")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = config_path();
    std::fs::write(path, data).expect("write the config file");
    let args = [
        "monkey".into(),
        "--config".into(),
        path.clone().into_os_string(),
    ];
    if let Err(e) = parse_from::<Options>(args) {
        // A file that is not TOML at all is reported against the file's name; other
        // errors (a value of the wrong type) name the flag instead.
        let is_toml = std::str::from_utf8(data).is_ok_and(|t| t.parse::<toml::Table>().is_ok());
        if !is_toml {
            let message = e.to_string();
            assert!(
                message.contains("fuzz.toml"),
                "error does not name the file: {message}"
            );
        }
    }
});
