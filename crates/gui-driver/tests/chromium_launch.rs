//! Starting Chromium when the browser misbehaves: a fake `chromium` (a shell script) that
//! announces a DevTools endpoint which refuses the connection, or which accepts it and
//! never answers the handshake. The launch must fail with an error naming the endpoint,
//! in bounded time, and leave no process behind.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use gui_driver::{ChromiumConfig, ChromiumDevice};

/// A fake browser that writes its pid to `pid_file`, announces `ws_url` on stderr as
/// Chromium does, and then sleeps.
fn fake_browser(dir: &Path, ws_url: &str) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let pid_file = dir.join("pid");
    let script = dir.join("chromium");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > {}\necho 'DevTools listening on {ws_url}' >&2\nexec sleep 300\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, pid_file)
}

/// Launches the fake browser on another thread; the launch's error, or a panic if it
/// has not returned within `within`.
fn launch_fails(script: PathBuf, within: Duration) -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let config = ChromiumConfig {
            executable: Some(script),
            call_timeout: Duration::from_secs(1),
            ..ChromiumConfig::default()
        };
        let _ = tx.send(ChromiumDevice::launch("http://127.0.0.1:1/", config).map(drop));
    });
    match rx.recv_timeout(within) {
        Ok(Err(e)) => e.to_string(),
        Ok(Ok(())) => panic!("a fake browser was taken for Chromium"),
        Err(_) => panic!("the launch did not return within {within:?}"),
    }
}

/// Whether process `pid` still runs (a zombie, reaped or not by its parent, does not).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn a_browser_whose_endpoint_refuses_is_killed_when_the_launch_fails() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 1.
    let url = "ws://127.0.0.1:1/devtools/browser/fake";
    let (script, pid_file) = fake_browser(dir.path(), url);
    let err = launch_fails(script, Duration::from_secs(30));
    assert!(err.contains(url), "{err}");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let pid = pid.trim();
    // Killed and reaped by the launch, not left to sleep on.
    std::thread::sleep(Duration::from_millis(100));
    assert!(!running(pid), "the fake browser {pid} still runs");
}

#[test]
fn a_devtools_endpoint_that_never_answers_the_handshake_fails_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "ws://{}/devtools/browser/silent",
        listener.local_addr().unwrap()
    );
    // Accepts the connection, reads the handshake request, and never answers.
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while conn.read(&mut buf).is_ok_and(|n| n > 0) {}
            });
        }
    });
    let (script, pid_file) = fake_browser(dir.path(), &url);
    let err = launch_fails(script, Duration::from_secs(30));
    assert!(err.contains(&url), "{err}");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(!running(pid.trim()), "the fake browser still runs");
}
