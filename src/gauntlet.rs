//! The gauntlet: small pages that each do one thing real web apps do and the bundled demo
//! never does (native dialogs, new tabs, file pickers, downloads, leaving the app, a load
//! that never ends), plus the two real failures a device must still catch (a handler that
//! never returns, a renderer that runs out of memory), and a server for them.
//!
//! The pages live in `tests/gauntlet/`; the gauntlet tests (`tests/gauntlet.rs`) and
//! `cargo xtask gauntlet` run the strategy binaries over each of them. Every page reacts
//! to a click anywhere (most strategies click first), on a button that fills most of the
//! screen so that pixel-based strategies find it.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use gui_core::{ActionKind, DeviceEventKind};

/// What a page must make the device report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Nothing is wrong with the app: no crash or hang signal, no lost device.
    Fine,
    /// A handler that never returns: one hang signal (`Crash|the page stopped answering`).
    Hang,
    /// The renderer dies: one crash signal (`Crash|the page's renderer process crashed`).
    Crash,
}

/// One page of the gauntlet.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    /// The file in `tests/gauntlet/` without `.html`.
    pub name: &'static str,
    pub expect: Expect,
    /// The action on the page's button that causes what the page is about.
    pub trigger: ActionKind,
    /// Device events the trigger must cause.
    pub events: &'static [DeviceEventKind],
    /// More Chromium flags the page needs (the out-of-memory page caps the JS heap, so
    /// the renderer dies within a second instead of after filling gigabytes).
    pub chromium_args: &'static [&'static str],
}

const fn page(name: &'static str, events: &'static [DeviceEventKind]) -> Page {
    Page {
        name,
        expect: Expect::Fine,
        trigger: ActionKind::Click,
        events,
        chromium_args: &[],
    }
}

use DeviceEventKind as K;

/// Every page, the plain one (the yardstick of step times) first.
pub const PAGES: &[Page] = &[
    page("plain", &[]),
    page("alert", &[K::Dialog]),
    page("confirm", &[K::Dialog]),
    page("prompt", &[K::Dialog]),
    page("dialog-timer", &[K::Dialog]),
    page("dialog-flood", &[K::Dialog]),
    page("beforeunload", &[K::Dialog]),
    page("popup", &[K::TabClosed]),
    page("blank-link", &[K::TabClosed]),
    Page {
        trigger: ActionKind::MidClick,
        ..page("middle-click", &[K::TabClosed])
    },
    page("window-close", &[]),
    page("file-input", &[K::FileChooser]),
    page("download", &[K::Download]),
    page("print", &[]),
    page("fullscreen", &[]),
    page("permissions", &[]),
    page("basic-auth", &[]),
    page("other-origin", &[K::LeftApp]),
    page("unreachable", &[K::LeftApp]),
    page("never-loads", &[K::LoadIncomplete]),
    page("cross-origin-iframe", &[]),
    Page {
        expect: Expect::Hang,
        ..page("hang", &[])
    },
    Page {
        expect: Expect::Crash,
        chromium_args: &["--js-flags=--max-old-space-size=64"],
        ..page("crash", &[])
    },
];

/// The page named `name`.
pub fn page_named(name: &str) -> Option<&'static Page> {
    PAGES.iter().find(|p| p.name == name)
}

/// The folder of the gauntlet's pages in this repository.
pub fn pages_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gauntlet")
}

/// Serves the gauntlet on 127.0.0.1 at a free port; stops when dropped. Besides the
/// page files it answers three paths of its own:
/// - `/__never`: accepted and never answered (a resource that keeps a page loading);
/// - `/__auth/...`: `401` with a basic-auth challenge, whatever the credentials;
/// - `/__download/NAME`: a small CSV sent as an attachment named NAME.
#[derive(Debug)]
pub struct GauntletServer {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl GauntletServer {
    pub fn start(dir: &Path) -> Result<Self> {
        if !dir.join("plain.html").is_file() {
            bail!("{} holds no gauntlet pages (plain.html)", dir.display());
        }
        let listener = TcpListener::bind("127.0.0.1:0").context("bind 127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let dir = dir.to_owned();
        let thread = std::thread::Builder::new()
            .name("gauntlet-server".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if flag.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Ok(stream) = conn {
                        let (dir, flag) = (dir.clone(), flag.clone());
                        std::thread::spawn(move || {
                            let _ = answer(stream, &dir, &flag);
                        });
                    }
                }
            })?;
        Ok(Self {
            port,
            stop,
            thread: Some(thread),
        })
    }

    /// The URL of page `name`.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}.html", self.port)
    }
}

impl Drop for GauntletServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn answer(mut stream: TcpStream, dir: &Path, stop: &AtomicBool) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let target = request.split_whitespace().nth(1).unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let (status, ctype, extra, body): (&str, &str, String, Vec<u8>) = if path == "/__never" {
        // Held open until the server stops: the page's load event never comes.
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
        return Ok(());
    } else if path.starts_with("/__auth/") {
        (
            "401 Unauthorized",
            "text/html",
            "WWW-Authenticate: Basic realm=\"gauntlet\"\r\n".into(),
            b"<h1>401: this page needs a password</h1>".to_vec(),
        )
    } else if let Some(name) = path.strip_prefix("/__download/") {
        let name: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || ".-_".contains(*c))
            .collect();
        (
            "200 OK",
            "text/csv",
            format!("Content-Disposition: attachment; filename=\"{name}\"\r\n"),
            b"step,coverage\n1,0.5\n".to_vec(),
        )
    } else {
        let name = path.trim_start_matches('/');
        let file = (!name.contains("..") && !name.contains('/'))
            .then(|| std::fs::read(dir.join(if name.is_empty() { "plain.html" } else { name })))
            .and_then(|r| r.ok());
        match file {
            Some(body) => {
                let ctype = if name.ends_with(".css") {
                    "text/css"
                } else {
                    "text/html; charset=utf-8"
                };
                ("200 OK", ctype, String::new(), body)
            }
            None => (
                "404 Not Found",
                "text/plain",
                String::new(),
                b"not found".to_vec(),
            ),
        }
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n{extra}Content-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&body)?;
    stream.flush()?;
    stream.shutdown(Shutdown::Both)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_has_its_file() {
        for p in PAGES {
            let f = pages_dir().join(format!("{}.html", p.name));
            assert!(f.is_file(), "{} is missing", f.display());
        }
        assert_eq!(PAGES[0].name, "plain");
    }
}
