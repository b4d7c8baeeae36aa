//! The command line as the binaries read it: `--config` TOML files turned into flags, the
//! settings of a `--resume`d run folder put before the flags given now (never a program
//! the user did not name again), and the line kept for `run.json`.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Parser;
use clap::error::ErrorKind;

/// Parses the process's command line as [`parse_from`] does; on an error prints it and
/// exits with code 2.
pub fn parse<C: Parser>() -> C {
    parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit())
}

/// Parses `args` (program name first) into `C`, reading `--config FILE` first: the file's
/// keys become flags placed before the command line's own, and a flag given twice takes
/// its last value, so the command line wins.
pub fn parse_from<C: Parser>(args: impl IntoIterator<Item = OsString>) -> Result<C, clap::Error> {
    let args: Vec<OsString> = args.into_iter().collect();
    let mut command = C::command().args_override_self(true);
    let mut from_config = Vec::new();
    if let Some(path) = config_path(&args) {
        let flags: BTreeSet<String> = command
            .get_arguments()
            .filter(|a| a.get_id() != "config")
            .filter_map(|a| a.get_long().map(str::to_owned))
            .collect();
        from_config = config_flags(&path, &flags).map_err(|message| {
            command.error(
                ErrorKind::InvalidValue,
                format!("--config {}: {message}", path.display()),
            )
        })?;
    }
    let mut full = Vec::with_capacity(args.len());
    full.extend(args.first().cloned());
    if let Some(dir) = flag_value(&args, "resume") {
        // The run's own settings first; anything given now (-v, a larger --steps) wins.
        let given: Vec<OsString> = from_config
            .iter()
            .chain(args.iter().skip(1))
            .cloned()
            .collect();
        let stored = recorded_argv(&dir)
            .and_then(|stored| refuse_launchers_from_folder(&stored, &given).map(|()| stored))
            .map_err(|message| {
                command.error(
                    ErrorKind::InvalidValue,
                    format!("--resume {}: {message}", dir.display()),
                )
            })?;
        full.extend(stored.into_iter().map(OsString::from));
    }
    full.extend(from_config);
    full.extend(args.into_iter().skip(1));
    let _ = ARGV.set(replayable(&full[1.min(full.len())..]));
    let matches = command.try_get_matches_from_mut(full)?;
    C::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// The command line of this process as [`parse_from`] saw it, with `--config` files
/// expanded and without `--config`, `--resume` and `--out`, and with the user and
/// password of URLs hidden: what `run.json` keeps so that `--resume` can start the same
/// run again (give a `--webdriver` URL with credentials again with `--resume`).
static ARGV: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// The command line [`parse_from`] saw (see [`ARGV`]), for tools that write `run.json`
/// themselves and still want `--resume` to work.
pub fn recorded_command_line() -> Option<&'static [String]> {
    ARGV.get().map(Vec::as_slice)
}

fn replayable(args: &[OsString]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = it.next() {
        if ["--config", "--resume", "--out"].contains(&a.as_str()) {
            it.next();
        } else if !["--config=", "--resume=", "--out="]
            .iter()
            .any(|p| a.starts_with(p))
        {
            out.push(gui_driver::redact_userinfo(&a));
        }
    }
    out
}

/// The command line recorded in the `run.json` of the run folder `dir`.
fn recorded_argv(dir: &Path) -> Result<Vec<String>, String> {
    let path = dir.join("run.json");
    let text = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let run: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let argv = run["meta"]["argv"].as_array().ok_or_else(|| {
        format!(
            "{} records no command line (it was written by a tool that could not resume runs)",
            path.display()
        )
    })?;
    argv.iter()
        .map(|a| {
            a.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{}: meta.argv holds a non-string", path.display()))
        })
        .collect()
}

/// Flags whose value names a program the tool starts, on this machine or on the attached
/// device: the desktop app (`--app-command`), adb (`--adb`), the Android app and activity
/// it launches (`--package`, `--activity`), and the Java app that `greybox` compiles and
/// runs (`--java-classpath`, `--java-sources`, `--java-main`). Chromium and chromedriver
/// are found through the environment (`GUI_CHROMIUM`, `GUI_CHROMEDRIVER`), not flags.
const LAUNCHING_FLAGS: &[&str] = &[
    "app-command",
    "adb",
    "package",
    "activity",
    "java-classpath",
    "java-sources",
    "java-main",
];

/// Refuses a recorded command line (`stored`, read from a run folder for `--resume`) that
/// would start a program the user did not name again in `given` (the flags given now,
/// `--config` files expanded): anyone who can write a run folder could otherwise make
/// `--resume` run anything.
fn refuse_launchers_from_folder(stored: &[String], given: &[OsString]) -> Result<(), String> {
    let given: Vec<String> = given
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .take_while(|a| a != "--")
        .collect();
    for flag in LAUNCHING_FLAGS {
        let theirs = flag_values(stored, flag);
        let ours = flag_values(&given, flag);
        if let Some(value) = theirs.iter().find(|v| !ours.contains(v)) {
            return Err(format!(
                "the run's recorded command line starts a program with --{flag} {}, and a run \
                 folder's settings never start programs by themselves; to run it, give \
                 `--{flag} {}` again with --resume",
                shell_quote(value),
                shell_quote(value)
            ));
        }
    }
    Ok(())
}

/// Every value of `--NAME VALUE` and `--NAME=VALUE` in `args`.
fn flag_values(args: &[String], name: &str) -> Vec<String> {
    let flag = format!("--{name}");
    let with_value = format!("--{name}=");
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == flag {
            // A flag without its value still names the flag: never match it silently.
            out.push(it.next().cloned().unwrap_or_default());
        } else if let Some(v) = a.strip_prefix(&with_value) {
            out.push(v.to_owned());
        }
    }
    out
}

/// `value` as one shell word.
fn shell_quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if plain {
        value.to_owned()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

/// The value of the last `--config FILE` or `--config=FILE`, before any `--`.
fn config_path(args: &[OsString]) -> Option<PathBuf> {
    flag_value(args, "config")
}

/// The value of the last `--NAME VALUE` or `--NAME=VALUE`, before any `--`.
fn flag_value(args: &[OsString], name: &str) -> Option<PathBuf> {
    let flag = format!("--{name}");
    let with_value = format!("--{name}=");
    let mut found = None;
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let a = a.to_string_lossy();
        if a == "--" {
            break;
        } else if a == flag {
            found = it.next().map(PathBuf::from);
        } else if let Some(v) = a.strip_prefix(&with_value) {
            found = Some(PathBuf::from(v));
        }
    }
    found
}

/// The flags a TOML file stands for, checked against the command's long flags.
fn config_flags(path: &Path, known: &BTreeSet<String>) -> Result<Vec<OsString>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let mut out = Vec::new();
    for (key, value) in table {
        let flag = key.replace('_', "-");
        if !known.contains(&flag) {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            return Err(format!(
                "unknown key `{key}`; the keys are the long flags: {}",
                known.join(", ")
            ));
        }
        let values = match value {
            toml::Value::Array(items) => items,
            one => vec![one],
        };
        for v in values {
            let text = match v {
                // A switch: on when true, left at its default when false.
                toml::Value::Boolean(true) => {
                    out.push(format!("--{flag}").into());
                    continue;
                }
                toml::Value::Boolean(false) => continue,
                toml::Value::String(s) => s,
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                other => {
                    return Err(format!(
                        "`{key}`: a {} cannot be a flag's value",
                        other.type_str()
                    ));
                }
            };
            out.push(format!("--{flag}={text}").into());
        }
    }
    Ok(out)
}
