//! VisionDroid's function-aware explorer (gui-llm) behind the exploration loop's
//! [`Strategy`] interface, with a view hierarchy made from pixels for devices that have
//! none (a desktop app under Xvfb): widget boxes from gui-vision, their text by OCR.

use gui_core::{Rect, Screenshot, UiElement, UiHierarchy};
use gui_explore::{Insight, Observation, Strategy};
use gui_llm::{Decision, FunctionAwareExplorer};
use gui_vision::{
    ExtractConfig, TextDetector, TextDetectorConfig, TextRecognizer, TextRecognizerConfig,
    extract_widgets,
};

/// Runs a [`FunctionAwareExplorer`] as a [`Strategy`].
#[derive(Debug)]
pub struct VisionDroidStrategy {
    explorer: FunctionAwareExplorer,
    pixels: Option<PixelHierarchy>,
    decisions: Vec<(u64, Decision)>,
    last_widgets: Vec<gui_core::Widget>,
}

impl VisionDroidStrategy {
    pub fn new(explorer: FunctionAwareExplorer) -> Self {
        Self {
            explorer,
            pixels: None,
            decisions: Vec::new(),
            last_widgets: Vec::new(),
        }
    }

    pub fn explorer(&self) -> &FunctionAwareExplorer {
        &self.explorer
    }

    pub fn explorer_mut(&mut self) -> &mut FunctionAwareExplorer {
        &mut self.explorer
    }

    /// Every decision with its step.
    pub fn decisions(&self) -> &[(u64, Decision)] {
        &self.decisions
    }

    /// Consumes the strategy, giving back the explorer (for the detector).
    pub fn into_explorer(self) -> FunctionAwareExplorer {
        self.explorer
    }
}

impl Strategy for VisionDroidStrategy {
    fn name(&self) -> &str {
        "visiondroid"
    }

    fn wants_ui(&self) -> bool {
        true
    }

    fn choose(&mut self, observation: &Observation<'_>) -> gui_core::Action {
        let built;
        let ui = match observation.ui {
            Some(ui) => ui,
            None => {
                let pixels = self.pixels.get_or_insert_with(PixelHierarchy::new);
                built = pixels.hierarchy(observation.screenshot);
                &built
            }
        };
        let decision = self
            .explorer
            .decide(observation.step, observation.screenshot, ui);
        self.last_widgets = decision
            .bounds
            .map(|b| vec![gui_core::Widget::new(b, gui_core::WidgetKind::Button, 1.0)])
            .unwrap_or_default();
        let action = decision.to_action(observation.screenshot.scale);
        self.decisions.push((observation.step, decision));
        action
    }

    fn insight(&self) -> Option<Insight> {
        Some(Insight {
            page: None,
            widgets: self.last_widgets.clone(),
        })
    }

    fn on_restart(&mut self) {
        self.explorer.on_restart();
    }

    /// A model endpoint that stopped answering ends the run: every later step would be a
    /// random fallback, recorded as if the technique had chosen it.
    fn stop_request(&self) -> Option<String> {
        self.explorer.endpoint_dead().map(|(step, error)| {
            format!("the model endpoint stopped answering at step {step}: {error}")
        })
    }
}

/// A view hierarchy read from pixels: every widget box is a clickable element carrying
/// the text OCR reads inside it; text outside any box becomes a text element. Without
/// the OCR models the boxes come without text (and a warning says why).
pub struct PixelHierarchy {
    ocr: Option<(TextDetector, TextRecognizer)>,
}

impl std::fmt::Debug for PixelHierarchy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PixelHierarchy")
            .field("ocr", &self.ocr.is_some())
            .finish()
    }
}

impl Default for PixelHierarchy {
    fn default() -> Self {
        Self::new()
    }
}

impl PixelHierarchy {
    pub fn new() -> Self {
        let ocr = TextDetector::new(TextDetectorConfig::default())
            .and_then(|d| TextRecognizer::new(TextRecognizerConfig::default()).map(|r| (d, r)));
        let ocr = match ocr {
            Ok(pair) => Some(pair),
            Err(e) => {
                tracing::warn!("no OCR, widgets get no text: {e}");
                None
            }
        };
        Self { ocr }
    }

    pub fn hierarchy(&mut self, shot: &Screenshot) -> UiHierarchy {
        let img = shot.pixels();
        let boxes = extract_widgets(img, &ExtractConfig::web()).unwrap_or_else(|e| {
            tracing::warn!("widget extraction failed: {e}");
            Vec::new()
        });
        let mut texts: Vec<(Rect, String)> = Vec::new();
        if let Some((det, rec)) = &self.ocr {
            match det.detect(img) {
                Ok(mut regions) => {
                    if let Err(e) = rec.annotate(img, &mut regions) {
                        tracing::warn!("OCR failed: {e}");
                    }
                    texts = regions
                        .into_iter()
                        .filter_map(|r| r.text.map(|t| (r.rect, t.trim().to_owned())))
                        .filter(|(_, t)| !t.is_empty())
                        .collect();
                }
                Err(e) => tracing::warn!("text detection failed: {e}"),
            }
        }
        let mut used = vec![false; texts.len()];
        let mut elements: Vec<UiElement> = boxes
            .iter()
            .filter(|b| !b.is_text())
            .map(|b| {
                let mut inside = Vec::new();
                for (i, (r, t)) in texts.iter().enumerate() {
                    let c = r.center();
                    if b.rect.contains(c) {
                        inside.push(t.as_str());
                        used[i] = true;
                    }
                }
                UiElement {
                    bounds: b.rect,
                    class: "widget".into(),
                    text: inside.join(" "),
                    clickable: true,
                    ..UiElement::default()
                }
            })
            .collect();
        for ((r, t), used) in texts.iter().zip(used) {
            if !used {
                elements.push(UiElement {
                    bounds: *r,
                    class: "text".into(),
                    text: t.clone(),
                    ..UiElement::default()
                });
            }
        }
        UiHierarchy {
            app: String::new(),
            screen: "screen".into(),
            elements,
        }
    }
}
