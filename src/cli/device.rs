//! Device construction: the one place that turns [`TargetArgs`] into a started device
//! (Chromium, a WebDriver session, an X11 app under Xvfb, Android over adb, or the
//! simulator) and serves the app it opens.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use gui_core::Size;
use gui_driver::{
    AndroidConfig, AndroidDevice, ChromiumConfig, ChromiumDevice, DesktopConfig, DesktopDevice,
    Device, SimApp, Simulator, StaticServer, WebDriverConfig, WebDriverDevice,
};

use super::{DeviceKind, TargetArgs};

/// A started device plus what keeps its app served.
pub struct Target {
    pub device: Box<dyn Device + Send>,
    pub url: String,
    _server: Option<StaticServer>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("device", &self.device.describe())
            .field("url", &self.url)
            .finish()
    }
}

impl TargetArgs {
    /// Serves the app if needed and starts the device on it.
    pub fn start(&self) -> Result<Target> {
        if let Some(endpoint) = &self.webdriver {
            return self.start_webdriver(endpoint);
        }
        if self.device == DeviceKind::Simulator {
            let sim = Simulator::new(SimApp::demo());
            return Ok(Target {
                url: sim.describe(),
                device: Box::new(sim),
                _server: None,
            });
        }
        let android_only = self.package.is_some()
            || self.activity.is_some()
            || self.serial.is_some()
            || self.adb.is_some()
            || !self.permissions.is_empty();
        if self.device == DeviceKind::Android {
            let Some(package) = self.package.clone() else {
                bail!(
                    "--device android needs --package, the app to test (e.g. com.example.notes); \
                     `adb shell pm list packages -3` lists the installed ones"
                );
            };
            if self.url.is_some() || self.app_dir.is_some() || self.mobile {
                bail!(
                    "--device android tests an installed app: --url, --app-dir and --mobile are for web apps"
                );
            }
            let config = AndroidConfig {
                adb: self.adb.clone(),
                serial: self.serial.clone(),
                activity: self.activity.clone(),
                permissions: self.permissions.clone(),
                ..AndroidConfig::new(package.clone())
            };
            let device = AndroidDevice::connect(config)
                .with_context(|| format!("starting {package} on Android over adb"))?;
            return Ok(Target {
                url: format!("android: {package}"),
                device: Box::new(device),
                _server: None,
            });
        }
        if android_only {
            bail!("--package, --activity, --serial, --adb and --permission need --device android");
        }
        if self.device == DeviceKind::Desktop {
            let command: Vec<&str> = self
                .app_command
                .as_deref()
                .unwrap_or_default()
                .split_whitespace()
                .collect();
            if command.is_empty() {
                bail!("--device desktop needs --app-command, the program to test (e.g. xcalc)");
            }
            if self.url.is_some() || self.app_dir.is_some() || self.mobile {
                bail!(
                    "--device desktop tests a program: --url, --app-dir and --mobile are for web apps"
                );
            }
            let mut config = DesktopConfig::new(command.iter().copied());
            config.xvfb.size = self.viewport;
            let device = DesktopDevice::launch(config)
                .with_context(|| format!("starting `{}` under Xvfb", command.join(" ")))?;
            return Ok(Target {
                url: format!("desktop: {}", command.join(" ")),
                device: Box::new(device),
                _server: None,
            });
        }
        if self.app_command.is_some() {
            bail!("--app-command needs --device desktop");
        }
        let (device, url, server) = self.start_chromium()?;
        Ok(Target {
            device: Box::new(device),
            url,
            _server: server,
        })
    }

    /// Serves the app if needed and starts Chromium on it (refusing any other `--device`
    /// and `--webdriver`): for tools that need the browser itself, such as the grey-box
    /// ripper, which reads the DOM.
    pub fn start_chromium(&self) -> Result<(ChromiumDevice, String, Option<StaticServer>)> {
        if self.webdriver.is_some() {
            bail!(
                "this tool needs Chromium's DevTools protocol itself; --webdriver is not supported here"
            );
        }
        if self.device != DeviceKind::Chromium {
            // The grey-box and Monkey++ tools read the page's scripts and DOM; other
            // platforms come in through their own options (--java-classpath, --model).
            bail!(
                "this tool analyses a web app in Chromium; --device {} is not supported here",
                format!("{:?}", self.device).to_lowercase()
            );
        }
        let (url, server) = self.serve_app()?;
        let mut config = if self.mobile {
            ChromiumConfig::mobile()
        } else {
            ChromiumConfig::default()
        };
        if !self.mobile || self.viewport != Size::new(1280, 800) {
            config.viewport = self.viewport;
        }
        config.dialogs = self.dialogs;
        config.allowed_origins.clone_from(&self.allow_origins);
        if let Some(s) = self.hang_after {
            config.call_timeout = Duration::from_secs_f64(s);
        }
        if let Some(mb) = self.js_heap_mb {
            config
                .extra_args
                .push(format!("--js-flags=--max-old-space-size={mb}"));
        }
        let device = ChromiumDevice::launch(&url, config)
            .with_context(|| format!("starting Chromium on {url}"))?;
        self.wait_settle();
        Ok((device, url, server))
    }

    /// Starts a browser session on `--webdriver` and opens the app in it.
    fn start_webdriver(&self, endpoint: &str) -> Result<Target> {
        if self.device != DeviceKind::Chromium {
            bail!(
                "--webdriver drives a web app in the endpoint's browser; it does not go with --device {:?}",
                self.device
            );
        }
        let (url, server) = self.serve_app()?;
        let mut config = WebDriverConfig {
            viewport: self.viewport,
            dialogs: self.dialogs,
            allowed_origins: self.allow_origins.clone(),
            ..WebDriverConfig::new(endpoint, url.clone())
        };
        if let Some(s) = self.hang_after {
            config.call_timeout = Duration::from_secs_f64(s);
        }
        if self.js_heap_mb.is_some() {
            bail!("--js-heap-mb sets a flag of our own Chromium; it does not go with --webdriver");
        }
        let device = WebDriverDevice::connect(config)
            .with_context(|| format!("starting a WebDriver session on {endpoint} for {url}"))?;
        self.wait_settle();
        Ok(Target {
            device: Box::new(device),
            url,
            _server: server,
        })
    }

    /// Waits `--settle` seconds, if given.
    fn wait_settle(&self) {
        if let Some(s) = self.settle.filter(|s| *s > 0.0) {
            std::thread::sleep(Duration::from_secs_f64(s));
        }
    }

    /// The app's URL: `--url`, `--app-dir` served on 127.0.0.1, or the bundled demo app.
    fn serve_app(&self) -> Result<(String, Option<StaticServer>)> {
        Ok(match (&self.url, &self.app_dir) {
            (Some(u), _) => {
                if !(u.starts_with("http://")
                    || u.starts_with("https://")
                    || u.starts_with("file://"))
                {
                    bail!("--url {u}: expected an http://, https:// or file:// URL");
                }
                (u.clone(), None)
            }
            (None, Some(dir)) => {
                let s = StaticServer::folder(dir, &self.entry)
                    .with_context(|| format!("--app-dir {}", dir.display()))?;
                (s.url(), Some(s))
            }
            (None, None) => {
                let s = StaticServer::demo().context("serving the bundled demo app")?;
                (s.url(), Some(s))
            }
        })
    }
}
