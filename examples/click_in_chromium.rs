//! Library use with a real browser: open the bundled demo app in headless Chromium, click
//! the counter button, save the screen and print the coverage.
//! `cargo run --example click_in_chromium`
use gui_core::{Action, ActionKind};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = StaticServer::demo()?;
    let mut device = ChromiumDevice::launch(&server.url(), ChromiumConfig::default())?;
    println!("{}", device.describe());
    let button = device
        .element_rect("#home-counter-btn")?
        .ok_or("counter button not found")?;
    device.perform(&Action::at(ActionKind::Click, button.center()))?;
    let shot = device.screenshot()?;
    let path = std::env::temp_dir().join("click_in_chromium.png");
    std::fs::write(&path, shot.to_png()?)?;
    println!(
        "screen {}x{} saved to {}",
        shot.width(),
        shot.height(),
        path.display()
    );
    println!("coverage {:?}", device.coverage()?);
    Ok(())
}
