//! A local chromedriver on a free port, for tests and for `--webdriver` runs on one machine.

use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::client::{Client, Verb};
use crate::{Error, Result};

/// Debian's `chromium-driver` installs the program here.
const CANDIDATES: &[&str] = &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"];

/// Finds chromedriver: `GUI_CHROMEDRIVER` if set (and only it), else `chromedriver` on
/// PATH, else the Debian locations.
pub fn find_chromedriver() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("GUI_CHROMEDRIVER") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        return Err(Error::DriverNotFound {
            tried: format!("GUI_CHROMEDRIVER={}", p.display()),
        });
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("chromedriver"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let candidates: Vec<PathBuf> = on_path
        .into_iter()
        .chain(CANDIDATES.iter().map(PathBuf::from))
        .collect();
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| Error::DriverNotFound {
            tried: format!("chromedriver on PATH, {}", CANDIDATES.join(", ")),
        })
}

/// A chromedriver process listening on 127.0.0.1 at a free port; killed, with every
/// browser it started, when dropped.
#[derive(Debug)]
pub struct ChromeDriver {
    child: Child,
    url: String,
    // Its output, kept for error messages; deleted on drop.
    log: tempfile::NamedTempFile,
}

impl ChromeDriver {
    /// Starts chromedriver ([`find_chromedriver`]) and waits until `GET /status` says it
    /// is ready for sessions.
    pub fn spawn() -> Result<Self> {
        let path = find_chromedriver()?;
        // A port the kernel just handed out and took back is free for the moment it takes
        // chromedriver to bind it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| Error::io("pick a free port for chromedriver", e))?
            .port();
        let log = tempfile::Builder::new()
            .prefix("gui-testing-chromedriver-")
            .suffix(".log")
            .tempfile()
            .map_err(|e| Error::io("create chromedriver log file", e))?;
        let out = log
            .reopen()
            .map_err(|e| Error::io("open chromedriver log file", e))?;
        let err = log
            .reopen()
            .map_err(|e| Error::io("open chromedriver log file", e))?;
        let mut cmd = Command::new(&path);
        crate::die_with_parent(&mut cmd);
        let child = cmd
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            // Its own process group, so that drop also ends the browsers it started, which
            // outlive a killed chromedriver otherwise.
            .process_group(0)
            .spawn()
            .map_err(|source| Error::Launch {
                path: path.clone(),
                source,
            })?;
        let mut driver = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
        };
        const LAUNCH_TIMEOUT: Duration = Duration::from_secs(20);
        let deadline = Instant::now() + LAUNCH_TIMEOUT;
        let client = Client::new(&driver.url);
        loop {
            let status = client.send(
                Verb::Get,
                "/status",
                None,
                "GET /status",
                Duration::from_secs(2),
            );
            if status.is_ok_and(|s| s["ready"] == true) {
                return Ok(driver);
            }
            let exited = matches!(driver.child.try_wait(), Ok(Some(_)));
            if exited || Instant::now() >= deadline {
                return Err(Error::LaunchTimeout {
                    path,
                    after: LAUNCH_TIMEOUT,
                    stderr: driver.output(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The endpoint, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills chromedriver alone, as a crash would; the browsers it started live on until
    /// this value is dropped. For testing how devices take a lost endpoint.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// What chromedriver printed so far (its last 4 KB).
    pub fn output(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = self.log.reopen() {
            let _ = f.read_to_string(&mut text);
        }
        let start = text.char_indices().rev().nth(4096).map_or(0, |(i, _)| i);
        text[start..].to_owned()
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        // The whole group: chromedriver and the browsers it started. (std has no call
        // for signalling a group, and the crate uses no unsafe code.)
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
