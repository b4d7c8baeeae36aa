//! What the agent keeps of each page: its state vector (Section 3.1.3), the widgets met
//! on it, and the embedded candidate actions on them (Section 3.2).
//!
//! A page's state vector is taken from its first screen, so that every visit of the page
//! has the same state. A widget on a later screen of the page is the known widget of the
//! same kind with the highest IoU at or above
//! [`PageStoreConfig::match_iou`](crate::PageStoreConfig::match_iou), as the page
//! similarity matches widgets; a widget matching none joins the known ones. An action's [`ActionKey`] target is its widget's
//! index among the known ones, so the executed count `n` of Eq. 1 survives small changes
//! of the screen.

use std::collections::BTreeSet;
use std::sync::Arc;

use gui_action::{ActionEmbedding, ActionSpace, ActionSpaceConfig};
use gui_core::{Action, ActionKind, Platform, Rect, Widget, WidgetKind};
use gui_layout::LayoutEmbedder;

use crate::{ActionKey, Error, PageId, PageView, Result};

/// Most widgets the agent keeps per page. A page whose widgets keep changing (a text that
/// grows as it is typed into, a feed) would otherwise gain one with every visit; past
/// this, a widget that matches none joins the nearest known widget of its kind. Real
/// pages have far fewer (the demo app's largest: about 40).
pub const MAX_KNOWN_WIDGETS: usize = 256;

/// A widget the agent has met on a page, with the embeddings of its candidate actions.
#[derive(Debug)]
pub(crate) struct KnownWidget {
    pub rect: Rect,
    pub kind: WidgetKind,
    /// How many times `input` was chosen on it. Each time it types the next of the
    /// action space's texts, in their order, so that a field gets every text over the
    /// run. The candidate keeps the embedding made with the first text, so it stays one
    /// action of the page.
    pub typed: usize,
    /// One per candidate of the widget, in the action space's order.
    pub embeddings: Vec<Arc<[f32]>>,
}

/// What the agent keeps of one page.
#[derive(Debug)]
struct KnownPage {
    state: Arc<[f32]>,
    widgets: Vec<KnownWidget>,
    /// Page and system actions with their embeddings and keys.
    fixed: Candidates,
}

/// The candidate actions of the screen now, aimed at the widgets where they are now.
#[derive(Debug, Clone, Default)]
pub(crate) struct Candidates {
    pub actions: Vec<Action>,
    pub keys: Vec<ActionKey>,
    pub embeddings: Vec<Arc<[f32]>>,
}

impl Candidates {
    pub fn push(&mut self, action: Action, key: ActionKey, embedding: Arc<[f32]>) {
        self.actions.push(action);
        self.keys.push(key);
        self.embeddings.push(embedding);
    }

    /// Keeps the candidates whose action and key pass `keep`.
    pub fn retain(&mut self, keep: impl Fn(&Action, &ActionKey) -> bool) {
        let all = std::mem::take(self);
        for ((a, k), e) in all.actions.into_iter().zip(all.keys).zip(all.embeddings) {
            if keep(&a, &k) {
                self.push(a, k, e);
            }
        }
    }
}

/// Actions that change the window's size or shape, and so every pixel.
pub(crate) fn resizes(kind: ActionKind) -> bool {
    matches!(
        kind,
        ActionKind::WindowSize | ActionKind::SplitScreen | ActionKind::OrientationSwitch
    )
}

/// Position of each action among the earlier ones of the same kind: the `variant` of its
/// [`ActionKey`].
fn variants(actions: &[Action]) -> Vec<u32> {
    let mut seen: Vec<(ActionKind, u32)> = Vec::new();
    actions
        .iter()
        .map(|a| match seen.iter_mut().find(|(k, _)| *k == a.kind) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                seen.push((a.kind, 0));
                0
            }
        })
        .collect()
}

/// The known widget of `widget`'s kind whose centre is nearest, preferring those not yet
/// matched on this screen; `None` when the page knows no widget of that kind.
pub(crate) fn nearest_of_kind(
    known: &[KnownWidget],
    widget: &Widget,
    taken: &[bool],
) -> Option<usize> {
    let c = widget.rect.center();
    known
        .iter()
        .enumerate()
        .filter(|(_, k)| k.kind == widget.kind)
        .min_by_key(|(j, k)| {
            let d = k.rect.center();
            let (dx, dy) = (i64::from(d.x - c.x), i64::from(d.y - c.y));
            (taken[*j], dx * dx + dy * dy, *j)
        })
        .map(|(j, _)| j)
}

/// A match a plug-in makes when IoU finds none: the index of a known widget not yet
/// `taken` on this screen that `widget` is.
pub(crate) type SameWidget<'a> = dyn Fn(&[KnownWidget], &Widget, &[bool]) -> Option<usize> + 'a;

/// Every page's [`KnownPage`], by page number, with what turns actions into vectors.
pub(crate) struct KnownPages {
    embedding: ActionEmbedding,
    layout: LayoutEmbedder,
    config: ActionSpaceConfig,
    match_iou: f64,
    /// Shared so that each step can hold it while the page records change.
    space: Option<Arc<ActionSpace>>,
    pages: Vec<KnownPage>,
}

impl std::fmt::Debug for KnownPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownPages")
            .field("pages", &self.pages.len())
            .finish()
    }
}

impl KnownPages {
    pub fn new(
        embedding: ActionEmbedding,
        layout: LayoutEmbedder,
        config: ActionSpaceConfig,
        match_iou: f64,
    ) -> Self {
        Self {
            embedding,
            layout,
            config,
            match_iou,
            space: None,
            pages: Vec::new(),
        }
    }

    /// The state vector of `page`.
    pub fn state(&self, page: PageId) -> &Arc<[f32]> {
        &self.pages[page.0].state
    }

    /// Widgets known over all pages.
    pub fn known_widgets(&self) -> usize {
        self.pages.iter().map(|p| p.widgets.len()).sum()
    }

    /// Length of a widget vector.
    #[cfg(test)]
    pub fn widget_dim(&self) -> usize {
        self.embedding.widget_dim()
    }

    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// The actions the platform and the device support, as this run configured them.
    pub fn space_for(
        &mut self,
        platform: Platform,
        supported: &[ActionKind],
    ) -> Result<Arc<ActionSpace>> {
        if self.space.as_ref().is_none_or(|s| s.platform() != platform) {
            let device: BTreeSet<ActionKind> = supported.iter().copied().collect();
            let enabled = self.config.enabled.intersection(&device).copied().collect();
            let config = ActionSpaceConfig {
                enabled,
                ..self.config.clone()
            };
            let space = ActionSpace::new(platform, config).map_err(|e| Error::Config {
                field: "actions",
                message: e.to_string(),
            })?;
            self.space = Some(Arc::new(space));
        }
        Ok(self.space.clone().expect("set above"))
    }

    /// Adds the next page: state vector (mean widget embedding ‖ layout embedding,
    /// Section 3.1.3) and its page and system actions.
    pub fn add(&mut self, view: &PageView, space: &ActionSpace) -> Result<()> {
        let dim = self.embedding.widget_dim();
        let mut mean = vec![0f32; dim];
        for e in view.embeddings() {
            mean.iter_mut().zip(e).for_each(|(m, x)| *m += x);
        }
        let n = view.embeddings().len().max(1) as f32;
        mean.iter_mut().for_each(|m| *m /= n);
        let layout = self.layout.embed(view.layout()).map_err(|e| Error::Input {
            what: "layout",
            message: e.to_string(),
        })?;
        mean.extend(layout);

        let actions: Vec<Action> = space
            .page_candidates()
            .into_iter()
            .chain(space.system_candidates())
            .collect();
        let mut fixed = Candidates::default();
        for (a, variant) in actions.iter().zip(variants(&actions)) {
            let key = ActionKey {
                kind: a.kind,
                target: None,
                variant,
            };
            fixed.push(a.clone(), key, self.embed(a, None)?);
        }
        self.pages.push(KnownPage {
            state: mean.into(),
            widgets: Vec::new(),
            fixed,
        });
        Ok(())
    }

    /// The widget actions on the widgets of `view` (matched to the page's known widgets
    /// by IoU, then by `same_widget`; new ones added), then the page and system actions.
    pub fn candidates(
        &mut self,
        page: PageId,
        view: &PageView,
        space: &ActionSpace,
        same_widget: &SameWidget<'_>,
    ) -> Result<Candidates> {
        let match_iou = self.match_iou;
        let mut out = Candidates::default();
        let mut taken = vec![false; self.pages[page.0].widgets.len()];
        for (widget, emb) in view.widgets().iter().zip(view.embeddings()) {
            let known = &self.pages[page.0].widgets;
            let best = known
                .iter()
                .enumerate()
                .filter(|(j, k)| !taken[*j] && k.kind == widget.kind)
                .map(|(j, k)| (j, k.rect.iou(&widget.rect)))
                .filter(|(_, iou)| *iou >= match_iou)
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
                .map(|(j, _)| j)
                .or_else(|| same_widget(known, widget, &taken))
                .or_else(|| {
                    (known.len() >= MAX_KNOWN_WIDGETS)
                        .then(|| nearest_of_kind(known, widget, &taken))
                        .flatten()
                });
            // The widget's candidates now, at its current box; a new widget also gets
            // its text and the candidates' embeddings, kept for later visits.
            let (index, actions) = match best {
                Some(j) => {
                    let known = &self.pages[page.0].widgets[j];
                    (j, space.widget_candidates(widget, known.typed))
                }
                None => {
                    let actions = space.widget_candidates(widget, 0);
                    let embeddings = actions
                        .iter()
                        .map(|a| self.embed(a, Some(emb)))
                        .collect::<Result<_>>()?;
                    self.pages[page.0].widgets.push(KnownWidget {
                        rect: widget.rect,
                        kind: widget.kind,
                        typed: 0,
                        embeddings,
                    });
                    taken.push(false);
                    (taken.len() - 1, actions)
                }
            };
            taken[index] = true;
            let known = &self.pages[page.0].widgets[index];
            let variants = variants(&actions);
            for ((a, variant), e) in actions.into_iter().zip(variants).zip(&known.embeddings) {
                let key = ActionKey {
                    kind: a.kind,
                    target: Some(index),
                    variant,
                };
                out.push(a, key, e.clone());
            }
        }
        let fixed = &self.pages[page.0].fixed;
        for ((a, k), e) in fixed.actions.iter().zip(&fixed.keys).zip(&fixed.embeddings) {
            out.push(a.clone(), *k, e.clone());
        }
        Ok(out)
    }

    /// After `key` was chosen on `page`: an `input` moves its widget on to the next text.
    pub fn count_typing(&mut self, page: PageId, key: ActionKey) {
        if let (ActionKind::Input, Some(w)) = (key.kind, key.target) {
            self.pages[page.0].widgets[w].typed += 1;
        }
    }

    fn embed(&self, action: &Action, widget: Option<&[f32]>) -> Result<Arc<[f32]>> {
        self.embedding
            .embed(action, widget)
            .map(Into::into)
            .map_err(|e| Error::Input {
                what: "action",
                message: e.to_string(),
            })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Known widgets at these boxes, with no texts or embeddings.
    pub(crate) fn known_widgets(boxes: &[(Rect, WidgetKind)]) -> Vec<KnownWidget> {
        boxes
            .iter()
            .map(|&(rect, kind)| KnownWidget {
                rect,
                kind,
                typed: 0,
                embeddings: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn past_the_cap_a_new_widget_joins_the_nearest_of_its_kind() {
        let known = known_widgets(&[
            (Rect::new(0, 0, 50, 20), WidgetKind::Button),
            (Rect::new(0, 100, 50, 20), WidgetKind::Button),
            (Rect::new(0, 200, 50, 20), WidgetKind::EditText),
        ]);
        let button = Widget::new(Rect::new(0, 90, 50, 20), WidgetKind::Button, 1.0);
        assert_eq!(nearest_of_kind(&known, &button, &[false; 3]), Some(1));
        // One already matched on this screen is taken only when no other is left.
        assert_eq!(
            nearest_of_kind(&known, &button, &[false, true, false]),
            Some(0)
        );
        assert_eq!(
            nearest_of_kind(&known, &button, &[true, true, false]),
            Some(1)
        );
        let check = Widget::new(Rect::new(0, 90, 50, 20), WidgetKind::CheckBox, 1.0);
        assert_eq!(nearest_of_kind(&known, &check, &[false; 3]), None);
    }
}
