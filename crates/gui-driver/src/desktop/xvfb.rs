//! A private X server per device: Xvfb, the virtual framebuffer.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use gui_core::Size;

use crate::{Error, Result};

/// How long Xvfb may take to accept connections; it needs well under a second here.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// The X server a [`DesktopDevice`](super::DesktopDevice) draws on.
#[derive(Debug, Clone)]
pub struct XvfbConfig {
    /// Screen size; 24-bit colour.
    pub size: Size,
    /// Display number; `None` lets Xvfb pick a free one.
    pub display: Option<u32>,
}

impl Default for XvfbConfig {
    fn default() -> Self {
        Self {
            size: Size::new(1024, 768),
            display: None,
        }
    }
}

/// Finds the Xvfb binary on `PATH` (or at its Debian location).
pub fn find_xvfb() -> Result<PathBuf> {
    let mut tried = Vec::new();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).chain([PathBuf::from("/usr/bin")]);
    for dir in dirs {
        let candidate = dir.join("Xvfb");
        if candidate.is_file() {
            return Ok(candidate);
        }
        tried.push(candidate.display().to_string());
    }
    Err(Error::XvfbNotFound {
        tried: tried.join(", "),
    })
}

/// A running Xvfb; killed on drop.
#[derive(Debug)]
pub struct Xvfb {
    child: Child,
    display: u32,
    size: Size,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Xvfb {
    /// Starts Xvfb and waits until its display accepts connections.
    ///
    /// Without a fixed display number Xvfb chooses one itself (`-displayfd`): it skips
    /// displays whose socket or lock file exists and reports the one it took once it
    /// listens, so devices started at the same moment cannot race for a number.
    pub fn start(config: &XvfbConfig) -> Result<Self> {
        let path = find_xvfb()?;
        let mut cmd = Command::new(&path);
        match config.display {
            Some(n) => cmd.arg(format!(":{n}")),
            None => cmd.args(["-displayfd", "1"]),
        };
        cmd.args(["-screen", "0"])
            .arg(format!(
                "{}x{}x24",
                config.size.width.max(1),
                config.size.height.max(1)
            ))
            // The device's own connection outlives every app, but a reset between apps
            // would also drop keyboard remappings; never reset.
            .args(["-nolisten", "tcp", "-noreset"])
            .stdin(Stdio::null())
            .stdout(if config.display.is_none() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped());
        crate::die_with_parent(&mut cmd);
        let mut child = cmd.spawn().map_err(|source| Error::Launch {
            path: path.clone(),
            source,
        })?;

        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().expect("stderr is piped");
        let err_buf = stderr.clone();
        std::thread::Builder::new()
            .name("xvfb-stderr".into())
            .spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = err_pipe.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    let mut b = err_buf.lock().expect("xvfb stderr lock");
                    // Xvfb is chatty about missing fonts and keymaps; keep the last bit.
                    if b.len() > 16_384 {
                        let cut = b.len() - 8_192;
                        let cut = (cut..b.len()).find(|&i| b.is_char_boundary(i)).unwrap_or(0);
                        b.drain(..cut);
                    }
                    b.push_str(&String::from_utf8_lossy(&chunk[..n]));
                }
            })
            .map_err(|e| Error::io("spawn Xvfb stderr reader", e))?;

        let mut xvfb = Self {
            child,
            display: config.display.unwrap_or(0),
            size: config.size,
            stderr,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        if config.display.is_none() {
            let stdout = xvfb.child.stdout.take().expect("stdout is piped");
            let (tx, rx) = mpsc::channel();
            std::thread::Builder::new()
                .name("xvfb-displayfd".into())
                .spawn(move || {
                    let mut reader = BufReader::new(stdout);
                    let mut line = String::new();
                    let _ = reader.read_line(&mut line);
                    let _ = tx.send(line);
                    // Keep the pipe open and drained: a closed one would kill Xvfb with
                    // SIGPIPE should it ever write again.
                    let _ = std::io::copy(&mut reader, &mut std::io::sink());
                })
                .map_err(|e| Error::io("spawn Xvfb display reader", e))?;
            let line = rx.recv_timeout(START_TIMEOUT).unwrap_or_default();
            xvfb.display = line
                .trim()
                .parse()
                .map_err(|_| xvfb.start_error(&path, "did not report its display number"))?;
        }
        // Connections may still be refused for a moment after a fixed display starts.
        loop {
            if x11rb::connect(Some(&xvfb.display_name())).is_ok() {
                return Ok(xvfb);
            }
            if !xvfb.is_running() {
                return Err(xvfb.start_error(&path, "exited"));
            }
            if Instant::now() >= deadline {
                return Err(xvfb.start_error(&path, "did not accept connections in time"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn start_error(&self, path: &Path, what: &str) -> Error {
        Error::DesktopStart {
            what: format!(
                "{} {} {what} (within {START_TIMEOUT:?})",
                path.display(),
                self.display_name()
            ),
            output: self.stderr.lock().expect("xvfb stderr lock").clone(),
        }
    }

    /// The display number, as in `DISPLAY=:N`.
    pub fn display(&self) -> u32 {
        self.display
    }

    /// `:N`, the value for `DISPLAY`.
    pub fn display_name(&self) -> String {
        format!(":{}", self.display)
    }

    pub fn size(&self) -> Size {
        self.size
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM lets Xvfb remove its socket and lock file; SIGKILL would leave them.
        // std has no signal call besides kill(), hence kill(1).
        if self.is_running() {
            let _ = Command::new("kill")
                .args(["-s", "TERM", &self.child.id().to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let deadline = Instant::now() + Duration::from_millis(500);
            while self.is_running() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
