//! Another program using `gui-vision` and `gui-rl` as libraries: groups a folder of
//! screenshots (for example `screenshots/` of a run folder) into PIRLTest's abstract pages
//! and prints, per screenshot, its page and how similar it is to that page's first screen.
//!
//! ```text
//! cargo run --release --example group_pages -- runs/pirltest-seed1-*/screenshots [--same-page 0.75]
//! ```

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use gui_core::{Screenshot, Size};
use gui_layout::LayoutConfig;
use gui_rl::{PageStore, PageStoreConfig, page_similarity, page_view};
use gui_vision::{ExtractConfig, Vision, VisionConfig};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut folder, mut config) = (None, PageStoreConfig::default());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--same-page" => {
                let v = it.next().context("--same-page needs a value")?;
                config.same_page = v.parse().with_context(|| format!("--same-page {v}"))?;
            }
            _ if folder.is_none() => folder = Some(PathBuf::from(a)),
            other => bail!("unexpected argument {other}"),
        }
    }
    let folder =
        folder.context("usage: group_pages <folder of PNG screenshots> [--same-page S]")?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .with_context(|| format!("reading {}", folder.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("png")))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no PNG files in {}", folder.display());
    }

    let mut store = PageStore::new(config)?;
    let mut vision: Option<(Size, Vision)> = None;
    let mut counts: Vec<usize> = Vec::new();
    for file in &files {
        let shot = Screenshot::load(file).with_context(|| format!("{}", file.display()))?;
        let size = Size::new(shot.width(), shot.height());
        if vision.as_ref().is_none_or(|(s, _)| *s != size) {
            let extract = if size.width < 600 {
                ExtractConfig::mobile()
            } else {
                ExtractConfig::web()
            };
            let config = VisionConfig {
                extract,
                ..VisionConfig::default()
            };
            vision = Some((size, Vision::shipped(config)?));
        }
        let seen = vision.as_ref().expect("set above").1.analyse(&shot)?;
        let widgets = seen.widgets.len();
        let view = page_view(seen, size, &LayoutConfig::default())?;
        let page = store.lookup_or_insert(view.clone())?;
        let similarity = page_similarity(store.view(page)?, &view, store.config())?;
        if page.0 == counts.len() {
            counts.push(0);
        }
        counts[page.0] += 1;
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        println!(
            "{name}: page {} ({widgets} widgets, similarity {similarity:.3})",
            page.0
        );
    }
    println!(
        "{} screenshots, {} pages; screenshots per page: {counts:?}",
        files.len(),
        store.len()
    );
    Ok(())
}
