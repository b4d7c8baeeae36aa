//! Running the `adb` program: finding it, bounding every call by a timeout, quoting for
//! the phone's shell.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{Error, Result};

/// Finds `adb`: `$ANDROID_HOME/platform-tools/adb`, then `$ANDROID_SDK_ROOT/...`, then
/// every folder of `$PATH`. Fails with [`Error::AdbNotFound`] listing where it looked.
pub fn find_adb() -> Result<PathBuf> {
    let sdk_roots = ["ANDROID_HOME", "ANDROID_SDK_ROOT"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect::<Vec<_>>();
    let path = std::env::var_os("PATH").unwrap_or_default();
    find_adb_in(&sdk_roots, &path)
}

pub(crate) fn find_adb_in(sdk_roots: &[PathBuf], path: &std::ffi::OsStr) -> Result<PathBuf> {
    let candidates: Vec<PathBuf> = sdk_roots
        .iter()
        .map(|root| root.join("platform-tools").join("adb"))
        .chain(std::env::split_paths(path).map(|dir| dir.join("adb")))
        .collect();
    candidates
        .iter()
        .find(|c| is_executable(c))
        .cloned()
        .ok_or_else(|| Error::AdbNotFound {
            tried: if candidates.is_empty() {
                "an empty PATH and no ANDROID_HOME".into()
            } else {
                candidates
                    .iter()
                    .map(|c| c.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Quotes one word for the phone's `sh`: single quotes, with `'` written as `'\''`. Words
/// made only of safe characters stay as they are, so logs read naturally.
pub(crate) fn sh_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=%@+,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// One phone as reached through `adb [-s SERIAL]`.
#[derive(Debug, Clone)]
pub(crate) struct Adb {
    pub program: PathBuf,
    pub serial: Option<String>,
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

impl Adb {
    /// The command line of a call, for errors and logs.
    fn line(&self, args: &[&str]) -> String {
        let mut words = vec![self.program.display().to_string()];
        if let Some(s) = &self.serial {
            words.extend(["-s".to_owned(), s.clone()]);
        }
        words.extend(args.iter().map(|a| a.to_string()));
        words.join(" ")
    }

    /// Runs `adb [-s SERIAL] ARGS` and returns its stdout. A non-zero exit is
    /// [`Error::Adb`] (or [`Error::DeviceLost`] when adb says the device is gone); a
    /// call still running after the timeout is killed and reported as a lost device.
    pub fn run(&self, args: &[&str]) -> Result<Vec<u8>> {
        let command = self.line(args);
        let mut cmd = Command::new(&self.program);
        if let Some(s) = &self.serial {
            cmd.args(["-s", s]);
        }
        cmd.args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                Error::AdbNotFound {
                    tried: self.program.display().to_string(),
                }
            } else {
                Error::Launch {
                    path: self.program.clone(),
                    source,
                }
            }
        })?;
        let deadline = Instant::now() + self.timeout;
        let (stdout, stderr) = match collect(&mut child, deadline) {
            Some(out) => out,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::DeviceLost {
                    what: format!(
                        "`{command}` did not finish within {:?} and was killed: the device or \
                         the adb server hangs",
                        self.timeout
                    ),
                });
            }
        };
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(Error::DeviceLost {
                        what: format!(
                            "`{command}` closed its output but did not exit within {:?}",
                            self.timeout
                        ),
                    });
                }
                Err(e) => return Err(Error::io(format!("waiting for `{command}`"), e)),
            }
        };
        if status.success() {
            return Ok(stdout);
        }
        let stderr = String::from_utf8_lossy(&stderr).trim().to_owned();
        let message = if stderr.is_empty() {
            let out = String::from_utf8_lossy(&stdout).trim().to_owned();
            if out.is_empty() {
                format!("exit status {status}")
            } else {
                out
            }
        } else {
            stderr
        };
        if device_gone(&message) {
            return Err(Error::DeviceLost {
                what: format!("`{command}`: {message}"),
            });
        }
        Err(Error::Adb { command, message })
    }

    /// `adb shell CMD` as text; `cmd` is one line for the phone's shell, quoted by the
    /// caller with [`sh_quote`].
    pub fn shell(&self, cmd: &str) -> Result<String> {
        let out = self.run(&["shell", cmd])?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// `adb exec-out CMD`: the raw bytes, without the newline translation of a terminal.
    pub fn exec_out(&self, cmd: &str) -> Result<Vec<u8>> {
        self.run(&["exec-out", cmd])
    }
}

/// What adb prints when it cannot reach the device at all.
fn device_gone(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "no devices/emulators found",
        "device offline",
        "device unauthorized",
    ]
    .iter()
    .any(|s| m.contains(s))
        || (m.contains("device '") && m.contains("' not found"))
}

/// Reads stdout and stderr to their ends on two threads; `None` when the deadline passes
/// first.
fn collect(child: &mut Child, deadline: Instant) -> Option<(Vec<u8>, Vec<u8>)> {
    let (tx, rx) = mpsc::channel();
    let readers: [(bool, Option<Box<dyn Read + Send>>); 2] = [
        (
            true,
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
        (
            false,
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
    ];
    for (is_stdout, pipe) in readers {
        let tx = tx.clone();
        let Some(mut pipe) = pipe else {
            let _ = tx.send((is_stdout, Vec::new()));
            continue;
        };
        // A reader left behind by a timeout ends when the killed process's pipe closes.
        let spawned = std::thread::Builder::new()
            .name("adb-output".into())
            .spawn(move || {
                let mut buf = Vec::new();
                let _ = pipe.read_to_end(&mut buf);
                let _ = tx.send((is_stdout, buf));
            });
        if spawned.is_err() {
            return None;
        }
    }
    drop(tx);
    let (mut stdout, mut stderr) = (None, None);
    while stdout.is_none() || stderr.is_none() {
        let left = deadline.checked_duration_since(Instant::now())?;
        match rx.recv_timeout(left) {
            Ok((true, buf)) => stdout = Some(buf),
            Ok((false, buf)) => stderr = Some(buf),
            Err(_) => return None,
        }
    }
    Some((stdout.unwrap_or_default(), stderr.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_the_phone_shell() {
        assert_eq!(sh_quote("com.example/.Main"), "com.example/.Main");
        assert_eq!(sh_quote("a%sb"), "a%sb");
        assert_eq!(sh_quote("*:S"), "'*:S'");
        assert_eq!(sh_quote("it's; rm"), r"'it'\''s; rm'");
        assert_eq!(sh_quote(""), "''");
    }

    #[test]
    fn a_missing_adb_lists_where_it_was_looked_for() {
        let dir = tempfile::tempdir().unwrap();
        let e = find_adb_in(&[dir.path().join("sdk")], dir.path().as_os_str()).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("sdk/platform-tools/adb"), "{text}");
        assert!(text.contains("apt-get install adb"), "{text}");

        let tools = dir.path().join("sdk/platform-tools");
        std::fs::create_dir_all(&tools).unwrap();
        std::fs::write(tools.join("adb"), "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(tools.join("adb"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        assert_eq!(
            find_adb_in(&[dir.path().join("sdk")], std::ffi::OsStr::new("")).unwrap(),
            tools.join("adb")
        );
    }

    #[test]
    fn adb_messages_about_a_vanished_device_are_recognised() {
        assert!(device_gone("adb: device 'emulator-5554' not found"));
        assert!(device_gone("error: no devices/emulators found"));
        assert!(device_gone("error: device offline"));
        assert!(!device_gone("cat: /sdcard/x: No such file or directory"));
        assert!(!device_gone("java.lang.SecurityException: not requested"));
    }
}
