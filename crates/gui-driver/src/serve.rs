//! A tiny static HTTP server on 127.0.0.1 for the app under test.
//!
//! It serves GET and HEAD of files (from a folder or embedded), answers everything else
//! with 405/404, and closes each connection after one answer. It exists so every binary can
//! serve the bundled demo app or a fetched subject without another program.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crate::{Error, Result};

include!(concat!(env!("OUT_DIR"), "/demo_files.rs"));

#[derive(Debug, Clone)]
enum Site {
    Embedded(&'static [(&'static str, &'static [u8])]),
    Folder(PathBuf),
}

/// A running server; stops when dropped.
#[derive(Debug)]
pub struct StaticServer {
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    entry: String,
}

impl StaticServer {
    /// Serves the bundled demo app; [`StaticServer::url`] opens its home screen.
    pub fn demo() -> Result<Self> {
        Self::start(Site::Embedded(DEMO_FILES), "index.html")
    }

    /// Serves a folder; `entry` is the path (with query or fragment) the URL opens.
    pub fn folder(root: &Path, entry: &str) -> Result<Self> {
        let root = root
            .canonicalize()
            .map_err(|e| Error::io(format!("app folder {}", root.display()), e))?;
        Self::start(Site::Folder(root), entry)
    }

    fn start(site: Site, entry: &str) -> Result<Self> {
        let listener =
            TcpListener::bind("127.0.0.1:0").map_err(|e| Error::io("bind 127.0.0.1:0", e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::io("local address", e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("static-server".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if flag.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Ok(stream) = conn {
                        let site = site.clone();
                        std::thread::spawn(move || {
                            // A client that hangs up early is its own business.
                            let _ = answer(stream, &site);
                        });
                    }
                }
            })
            .map_err(|e| Error::io("spawn server thread", e))?;
        Ok(Self {
            addr,
            stop,
            thread: Some(thread),
            entry: entry.trim_start_matches('/').to_owned(),
        })
    }

    /// `http://127.0.0.1:PORT/` followed by the entry path.
    pub fn url(&self) -> String {
        format!("http://{}/{}", self.addr, self.entry)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "json" | "map" => "application/json",
        "pdf" => "application/pdf",
        "woff2" => "font/woff2",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The file a request path names (a folder path means its `index.html`).
fn resolve(path: &str) -> String {
    if path.is_empty() || path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_owned()
    }
}

fn lookup(site: &Site, path: &str) -> Option<Vec<u8>> {
    match site {
        Site::Embedded(files) => files
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, b)| b.to_vec()),
        Site::Folder(root) => {
            let rel = Path::new(&path);
            // Only plain names: no `..`, no absolute paths.
            if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
                return None;
            }
            std::fs::read(root.join(rel)).ok()
        }
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn answer(mut stream: TcpStream, site: &Site) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Skip the headers.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let path = resolve(&percent_decode(path.trim_start_matches('/')));
    let (status, body, ctype) = if method != "GET" && method != "HEAD" {
        (
            "405 Method Not Allowed",
            b"method not allowed".to_vec(),
            "text/plain",
        )
    } else {
        match lookup(site, &path) {
            Some(body) => ("200 OK", body, content_type(&path)),
            None => ("404 Not Found", b"not found".to_vec(), "text/plain"),
        }
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if method != "HEAD" {
        stream.write_all(&body)?;
    }
    stream.flush()?;
    stream.shutdown(Shutdown::Both)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn get(origin: &str, path: &str) -> String {
        let host = origin.trim_start_matches("http://");
        let mut s = TcpStream::connect(host).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_the_embedded_demo_and_refuses_escapes() {
        let server = StaticServer::demo().unwrap();
        assert!(server.url().ends_with("/index.html"));
        let home = get(&server.origin(), "/");
        assert!(home.starts_with("HTTP/1.1 200"), "{home}");
        assert!(home.contains("text/html"));
        assert!(get(&server.origin(), "/app.js").contains("text/javascript"));
        assert!(get(&server.origin(), "/nope.html").starts_with("HTTP/1.1 404"));
    }

    #[test]
    fn folder_sites_stay_inside_their_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a b.txt"), "hello").unwrap();
        let server = StaticServer::folder(dir.path(), "a b.txt").unwrap();
        assert!(get(&server.origin(), "/a%20b.txt").ends_with("hello"));
        assert!(get(&server.origin(), "/../etc/passwd").starts_with("HTTP/1.1 404"));
        assert!(
            StaticServer::folder(Path::new("/no/such/dir"), "x")
                .unwrap_err()
                .to_string()
                .contains("/no/such/dir")
        );
    }
}
