//! Plug-ins that say which page a screen is, or which widget a box is, where the paper's
//! page similarity would see a new one: `local-page`, `print-pages` and `anchor-match`.
//!
//! The page store judges a screen by widget and layout similarity (Section 3.3). A field's
//! typed text, a tick, a one-line message or a slider's filled track each move the
//! widgets the vision finds and the layout tree built from them, and a form with other
//! values in its fields can score below the store's threshold against itself. Each such
//! screen is then a page of its own that Eq. 1 pays the most for reaching, with every
//! action on it untried, so typing pays for its own sake.

use std::sync::Arc;

use gui_core::{Rect, Widget};

use super::{Plugin, Sight};
use crate::effect::grown;
use crate::known::KnownWidget;
use crate::{AgentConfig, PageId, Result, ScreenPrint};

/// Plug-in `local-page`: an action that changed at most
/// [`local_page`](AgentConfig::local_page) of the screen (in 4-pixel cells, the widget the
/// pointer left aside) leaves the agent on the page it acted on, without a page-store
/// lookup.
#[derive(Debug)]
pub(crate) struct LocalPage {
    share: f64,
}

impl LocalPage {
    pub fn new(config: &AgentConfig) -> Self {
        Self {
            share: config.local_page,
        }
    }
}

impl Plugin for LocalPage {
    fn name(&self) -> &'static str {
        "local-page"
    }

    fn see(&mut self, sight: &mut Sight<'_>) -> Result<()> {
        let Some(prev) = sight.prev.filter(|_| sight.page.is_none()) else {
            return Ok(());
        };
        if self.share <= 0.0 || prev.before.size() != sight.screen.size() {
            return Ok(());
        }
        let left: Vec<Rect> = prev.left.map(grown).into_iter().collect();
        if prev.before.changed_outside_all(sight.screen, &left) <= self.share {
            sight.page = Some(prev.page);
        }
        Ok(())
    }
}

/// Most screens kept per page for `print-pages`.
const PRINTS_PER_PAGE: usize = 8;

/// Plug-in `print-pages`: a screen that the page store would make a new page, but that
/// differs from a kept screen of a known page (outside a dialog, at the same size) in at
/// most [`local_page`](AgentConfig::local_page) of its cells, is that page.
#[derive(Debug)]
pub(crate) struct PrintPages {
    share: f64,
    /// Screens of each page: the first of each size and those that joined it by their
    /// print, at most [`PRINTS_PER_PAGE`].
    prints: Vec<Vec<Arc<ScreenPrint>>>,
}

impl PrintPages {
    pub fn new(config: &AgentConfig) -> Self {
        Self {
            share: config.local_page,
            prints: Vec::new(),
        }
    }

    /// The known page with a kept screen of `print`'s size that differs from it in the
    /// fewest cells, if at most `share` of them.
    fn page_by_print(&self, print: &ScreenPrint) -> Option<PageId> {
        self.prints
            .iter()
            .enumerate()
            .flat_map(|(page, kept)| kept.iter().map(move |k| (page, k)))
            .filter(|(_, k)| k.size() == print.size())
            .map(|(page, k)| (page, k.changed_outside_all(print, &[])))
            .filter(|(_, changed)| *changed <= self.share)
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            .map(|(page, _)| PageId(page))
    }

    /// Keeps `print` as a screen of `page`, while it has fewer than [`PRINTS_PER_PAGE`].
    fn keep_print(&mut self, page: PageId, print: &Arc<ScreenPrint>) {
        if self.prints.len() <= page.0 {
            self.prints.resize_with(page.0 + 1, Vec::new);
        }
        let kept = &mut self.prints[page.0];
        if kept.len() < PRINTS_PER_PAGE {
            kept.push(Arc::clone(print));
        }
    }
}

impl Plugin for PrintPages {
    fn name(&self) -> &'static str {
        "print-pages"
    }

    fn see(&mut self, sight: &mut Sight<'_>) -> Result<()> {
        if sight.page.is_some() || sight.dialog.is_some() {
            return Ok(());
        }
        // Kept: the screen that made a page, and those that joined one by print.
        let page = match sight.store.lookup(&sight.view)? {
            Some((page, _)) => page,
            None => {
                let page = match self.page_by_print(sight.screen) {
                    Some(page) => page,
                    None => sight.store.insert(sight.view.clone())?,
                };
                self.keep_print(page, sight.screen);
                page
            }
        };
        sight.page = Some(page);
        Ok(())
    }
}

/// Most pixels by which a box's left edge, top edge or height may move and still be the
/// same widget for `anchor-match`.
const ANCHOR_SLACK: i32 = 4;

/// Plug-in `anchor-match`: a widget that matches no known widget of its page by IoU is
/// still the same widget as a known one of its kind with the same left edge, top edge and
/// height (within [`ANCHOR_SLACK`] px), whatever its width: a slider's filled track, a
/// field's text and a status line change width with their value.
#[derive(Debug)]
pub(crate) struct AnchorMatch;

impl AnchorMatch {
    pub fn new(_: &AgentConfig) -> Self {
        Self
    }
}

/// The first known widget of `widget`'s kind, not yet matched on this screen, with the
/// same left edge, top edge and height (within [`ANCHOR_SLACK`]).
pub(crate) fn anchored_match(
    known: &[KnownWidget],
    widget: &Widget,
    taken: &[bool],
) -> Option<usize> {
    let r = widget.rect;
    known.iter().zip(taken).position(|(k, &t)| {
        !t && k.kind == widget.kind
            && (k.rect.x - r.x).abs() <= ANCHOR_SLACK
            && (k.rect.y - r.y).abs() <= ANCHOR_SLACK
            && k.rect.height.abs_diff(r.height) <= ANCHOR_SLACK as u32
    })
}

impl Plugin for AnchorMatch {
    fn name(&self) -> &'static str {
        "anchor-match"
    }

    fn same_widget(&self, known: &[KnownWidget], widget: &Widget, taken: &[bool]) -> Option<usize> {
        anchored_match(known, widget, taken)
    }
}

#[cfg(test)]
mod tests {
    use gui_core::WidgetKind;

    use super::*;
    use crate::known::tests::known_widgets;

    #[test]
    fn a_widget_that_only_changed_its_width_is_the_same_widget() {
        let known = known_widgets(&[
            (Rect::new(198, 518, 25, 8), WidgetKind::SeekBar),
            (Rect::new(198, 540, 25, 8), WidgetKind::SeekBar),
            (Rect::new(198, 518, 25, 8), WidgetKind::TextView),
        ]);
        // The filled track four times as wide, one pixel lower: IoU 0.19, same widget.
        let wider = Widget::new(Rect::new(199, 519, 103, 8), WidgetKind::SeekBar, 1.0);
        assert!(known[0].rect.iou(&wider.rect) < 0.8);
        assert_eq!(anchored_match(&known, &wider, &[false; 3]), Some(0));
        // Taken on this screen already: the next one anchored there, none here.
        assert_eq!(anchored_match(&known, &wider, &[true, false, false]), None);
        // Another height, another kind or another top edge is another widget.
        let taller = Widget::new(Rect::new(198, 518, 103, 20), WidgetKind::SeekBar, 1.0);
        assert_eq!(anchored_match(&known, &taller, &[false; 3]), None);
        let label = Widget::new(Rect::new(198, 518, 103, 8), WidgetKind::TextView, 1.0);
        assert_eq!(anchored_match(&known, &label, &[false; 3]), Some(2));
        let lower = Widget::new(Rect::new(198, 530, 103, 8), WidgetKind::SeekBar, 1.0);
        assert_eq!(anchored_match(&known, &lower, &[false; 3]), None);
    }
}
