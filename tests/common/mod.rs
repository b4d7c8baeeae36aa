//! Set-up shared by the browser tests: starting Chromium, finding elements, clicking.
//!
//! Each test crate uses a part of it.
#![allow(dead_code)]

pub mod competent_model;

use gui_core::{Action, ActionKind, Point};
use gui_driver::{ChromiumConfig, ChromiumDevice, StaticServer};

/// Chromium on `url`; without a browser the test fails saying what to install.
pub fn launch(url: &str, config: ChromiumConfig) -> ChromiumDevice {
    ChromiumDevice::launch(url, config).unwrap_or_else(|e| {
        panic!("cannot start Chromium for the browser tests (`cargo xtask setup` installs it): {e}")
    })
}

/// The bundled demo app, served, in Chromium at 1280x800.
pub fn demo() -> (StaticServer, ChromiumDevice) {
    let server = StaticServer::demo().expect("serve demo app");
    let device = launch(&server.url(), ChromiumConfig::default());
    (server, device)
}

/// The centre of the element `selector` names, in CSS pixels; panics if it is absent.
pub fn center_of(device: &mut ChromiumDevice, selector: &str) -> Point {
    device
        .element_rect(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("{selector} not on the page"))
        .center()
}

pub fn click(p: Point) -> Action {
    Action::at(ActionKind::Click, p)
}
