//! The vision half of a decision: screenshot → widgets, embeddings and layout tree.
//!
//! It needs nothing the agent learns, so several workers can each read their own screens
//! on their own threads and hand the results to one shared [`PirlAgent`](crate::PirlAgent)
//! (see [`PirlAgent::decide_read`](crate::PirlAgent::decide_read)).

use std::sync::Arc;
use std::time::Instant;

use gui_core::{Screenshot, Size};
use gui_layout::{LayoutConfig, TreeLabels, characterise};
use gui_vision::{EmbedConfig, ExtractConfig, ScreenVision, Vision, VisionConfig, WidgetCnn};

use crate::{AgentConfig, Error, PageView, Result, ScreenPrint};

/// The page of one screen as the agent sees it: the widgets found by gui-vision, their
/// embeddings scaled for the widget similarity (see below), and the layout tree of
/// their Group/Line/Column characterisation with kind labels.
///
/// Widget embeddings are scaled to unit length and then by 1/√2: their parts are
/// non-negative, so two of them are at most √2 apart before the scaling and at most 1
/// after, the range `sim_w = 1 − d` expects.
pub fn page_view(seen: ScreenVision, screen: Size, layout: &LayoutConfig) -> Result<PageView> {
    let tree = characterise(&seen.widgets, screen, layout).tree(TreeLabels::Kinds);
    let mut embeddings = seen.embeddings;
    for v in &mut embeddings {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            let s = std::f32::consts::FRAC_1_SQRT_2 / norm;
            v.iter_mut().for_each(|x| *x *= s);
        }
    }
    PageView::new(seen.widgets, embeddings, tree)
}

/// One screen read by a [`ScreenReader`], ready for
/// [`PirlAgent::decide_read`](crate::PirlAgent::decide_read).
#[derive(Debug, Clone)]
pub struct ScreenRead {
    pub view: PageView,
    /// Size of the screenshot in pixels.
    pub size: Size,
    /// The screen in brief, to tell whether the next action changed it.
    pub print: ScreenPrint,
    /// Milliseconds spent finding widgets, kinds and embeddings.
    pub vision_ms: f64,
    /// Milliseconds spent on the layout tree.
    pub layout_ms: f64,
}

/// Reads screens the way a [`PirlAgent`](crate::PirlAgent) does: the agent's widget CNN
/// (shared) and its extraction, embedding and layout settings. It keeps the vision
/// pipeline of the last screen size, so a worker should keep its reader across steps.
/// Get one from [`PirlAgent::reader`](crate::PirlAgent::reader).
pub struct ScreenReader {
    cnn: Arc<WidgetCnn>,
    vision: Option<(Size, Vision)>,
    /// `None` picks the mobile or web settings by the screen width.
    extract: Option<ExtractConfig>,
    embed: EmbedConfig,
    layout: LayoutConfig,
}

impl std::fmt::Debug for ScreenReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScreenReader")
            .field("extract", &self.extract)
            .field("embed", &self.embed)
            .field("layout", &self.layout)
            .field("size", &self.vision.as_ref().map(|(s, _)| *s))
            .finish()
    }
}

impl ScreenReader {
    pub(crate) fn new(cnn: Arc<WidgetCnn>, config: &AgentConfig) -> Self {
        Self {
            cnn,
            vision: None,
            extract: config.extract.clone(),
            embed: config.embed,
            layout: config.layout.clone(),
        }
    }

    /// A reader with the same CNN and settings and no cached pipeline.
    pub(crate) fn fresh(&self) -> Self {
        Self {
            cnn: self.cnn.clone(),
            vision: None,
            extract: self.extract.clone(),
            embed: self.embed,
            layout: self.layout.clone(),
        }
    }

    /// Widgets, embeddings and layout tree of `screen`, with the time each part took.
    pub fn read(&mut self, screen: &Screenshot) -> Result<ScreenRead> {
        let size = Size::new(screen.width(), screen.height());
        let t = Instant::now();
        let vision = self.vision_for(size)?;
        let seen = vision.analyse(screen).map_err(vision_error)?;
        let vision_ms = ms(t);

        let t = Instant::now();
        let view = page_view(seen, size, &self.layout)?;
        let print = ScreenPrint::of(screen);
        let layout_ms = ms(t);
        Ok(ScreenRead {
            view,
            size,
            print,
            vision_ms,
            layout_ms,
        })
    }

    /// The vision pipeline for screens of `size`, rebuilt when the size changes (the
    /// extraction settings depend on it).
    fn vision_for(&mut self, size: Size) -> Result<&Vision> {
        if self.vision.as_ref().is_none_or(|(s, _)| *s != size) {
            let extract = self.extract.clone().unwrap_or_else(|| {
                if size.width < 600 {
                    ExtractConfig::mobile()
                } else {
                    ExtractConfig::web()
                }
            });
            let config = VisionConfig {
                extract,
                embed: self.embed,
            };
            let vision = Vision::new(config, self.cnn.clone()).map_err(vision_error)?;
            self.vision = Some((size, vision));
        }
        Ok(&self.vision.as_ref().expect("set above").1)
    }
}

pub(crate) fn vision_error(e: gui_vision::Error) -> Error {
    Error::Input {
        what: "screenshot",
        message: e.to_string(),
    }
}

pub(crate) fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
