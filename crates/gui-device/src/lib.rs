//! The device contract: what shows an application and takes actions on it.
//!
//! Every backend implements [`Device`]: take a screenshot, perform one of the 17 actions,
//! restart the app to its start state, hand over the signals it observed (uncaught
//! exceptions, error logs, crashes) and a coverage snapshot where the platform has one.
//! Strategies, the exploration loop and the run tools take `&mut dyn Device` and depend on
//! this crate alone; the backends (Chromium, WebDriver, X11 desktop, Android, the
//! simulator) live in `gui-driver`, each behind its own cargo feature, so a crate that only
//! drives a device compiles none of their protocol stacks.
//!
//! ```
//! use gui_core::{ActionKind, CoverageSnapshot, Platform, Screenshot, Signal, Size};
//! use gui_device::{Device, Error, Result};
//!
//! /// A device that shows one blank screen and supports nothing.
//! struct Blank;
//!
//! impl Device for Blank {
//!     fn platform(&self) -> Platform { Platform::Web }
//!     fn viewport(&self) -> Size { Size::new(4, 4) }
//!     fn screenshot(&mut self) -> Result<Screenshot> {
//!         Ok(Screenshot::new(image::RgbImage::new(4, 4), 1.0, 0)?)
//!     }
//!     fn perform(&mut self, action: &gui_core::Action) -> Result<()> {
//!         Err(Error::Unsupported { action: action.kind, platform: Platform::Web })
//!     }
//!     fn restart(&mut self) -> Result<()> { Ok(()) }
//!     fn drain_signals(&mut self) -> Result<Vec<Signal>> { Ok(Vec::new()) }
//!     fn coverage(&mut self) -> Result<Option<CoverageSnapshot>> { Ok(None) }
//!     fn describe(&self) -> String { "blank".into() }
//! }
//!
//! let mut device = Blank;
//! assert_eq!(device.screenshot()?.width(), 4);
//! assert!(device.supported_actions().contains(&ActionKind::Click));
//! # Ok::<(), Error>(())
//! ```

mod error;

use gui_core::{
    Action, ActionKind, CoverageSnapshot, DeviceEvent, Platform, Screenshot, Signal, Size,
    UiHierarchy,
};

pub use error::{Error, Result};

/// A device running the application under test.
///
/// Calls are synchronous; a backend bounds each call by its own timeout. When the device
/// itself dies (browser process killed, renderer crashed) calls fail with an error for
/// which [`Error::is_device_lost`] holds; [`Device::restart`] then brings it back.
pub trait Device {
    fn platform(&self) -> Platform;

    /// Current viewport in logical pixels (the size actions are given in).
    fn viewport(&self) -> Size;

    fn screenshot(&mut self) -> Result<Screenshot>;

    /// Performs one action; unsupported kinds fail with [`Error::Unsupported`].
    fn perform(&mut self, action: &Action) -> Result<()>;

    /// Brings the app back to its start state (fresh storage, start viewport, online),
    /// relaunching the device if it died.
    fn restart(&mut self) -> Result<()>;

    /// Signals observed since the last call, in order, not deduplicated.
    fn drain_signals(&mut self) -> Result<Vec<Signal>>;

    /// Cumulative coverage of the app's own code, where the platform can measure it.
    fn coverage(&mut self) -> Result<Option<CoverageSnapshot>>;

    /// Names of the functions covered so far, as of the last [`coverage`](Self::coverage)
    /// call, stable across restarts and across devices running the same app (the web
    /// devices give `script-path@start-end`). Parallel runs merge their workers' coverage
    /// by these names, and resumed runs add the coverage recorded before. `None` where
    /// the device measures no coverage.
    fn covered_functions(&mut self) -> Result<Option<Vec<String>>> {
        Ok(None)
    }

    /// The actions this device can perform, in [`ActionKind::ALL`] order.
    fn supported_actions(&self) -> Vec<ActionKind> {
        ActionKind::supported(self.platform()).collect()
    }

    /// One line for logs and run folders: backend, version, target.
    fn describe(&self) -> String;

    /// The view hierarchy of the screen on show (the DOM on the web, a UI Automator dump
    /// on Android), with bounds in screenshot pixels; `None` where the platform exposes
    /// none (a desktop app seen only through its pixels).
    fn ui_hierarchy(&mut self) -> Result<Option<UiHierarchy>> {
        Ok(None)
    }

    /// What the device handled for the app since the last call (native dialogs answered,
    /// tabs closed, files chosen, downloads, the app brought back after leaving its
    /// origins), in order. None of these is a bug; the loop records them. Empty where the
    /// platform has none of these.
    fn drain_events(&mut self) -> Result<Vec<DeviceEvent>> {
        Ok(Vec::new())
    }
}
