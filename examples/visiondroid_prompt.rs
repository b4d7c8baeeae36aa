//! Library use of gui-llm: the visual and text prompt VisionDroid shows a model for one
//! screen of the bundled demo app: the annotated screenshot (boxes by action type, ids in
//! reading order) and the numbered widget list.
//! `cargo run --example visiondroid_prompt -- cart` (any route of the demo; default home)
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
use gui_llm::{AnnotateConfig, annotate, prompt};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let route = std::env::args().nth(1).unwrap_or_else(|| "home".into());
    let server = StaticServer::demo()?;
    let url = format!("{}#/{route}", server.url());
    let mut device = ChromiumDevice::launch(&url, ChromiumConfig::default())?;
    let shot = device.screenshot()?;
    let ui = device.ui_hierarchy()?.ok_or("Chromium gave no hierarchy")?;
    let annotation = annotate(&shot, &ui, &AnnotateConfig::default());
    let path = std::env::temp_dir().join(format!("visiondroid-{route}.png"));
    std::fs::write(&path, annotation.to_png()?)?;
    println!("{} on {}:", ui.app, ui.screen);
    print!("{}", prompt::widget_lines(&ui, &annotation.widgets));
    for t in prompt::screen_texts(&ui, 20) {
        println!("  text {t}");
    }
    println!("annotated screenshot: {}", path.display());
    Ok(())
}
