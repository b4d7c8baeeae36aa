//! Page identity for the reward (Section 3.3): two screens are the same page when their
//! page similarity, `0.5 · sim_w + 0.5 · sim_l`, reaches 0.75. `sim_w` compares the
//! embeddings of widgets matched one-to-one by IoU; `sim_l` is the layout similarity of
//! Eq. 2. The [`PageStore`] keeps one entry per distinct page with the counters Eq. 1
//! needs: transitions `N`, executable actions `m` and executed actions `n`.

use std::collections::{BTreeMap, BTreeSet};

use gui_core::{ActionKind, Rect, Widget};
use gui_layout::{LayoutTree, NodeId, layout_similarity};
use serde::{Deserialize, Serialize};

use crate::{Error, Result, curiosity_reward};

/// Thresholds and weights of the page similarity, and the most pages kept.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PageStoreConfig {
    /// Two widgets on different screens can be matched when their boxes' IoU is at least
    /// this. The paper says only "a specific threshold"; the one IoU threshold it states is
    /// 0.8 (Section 3.1.1, for detected widgets, following the same studies it follows for
    /// the 0.75 page threshold), so 0.8 is the default. Lower it for apps whose widgets
    /// shift by a few pixels between visits (animations, scroll offsets). In `(0, 1]`.
    pub match_iou: f64,
    /// Page similarity at or above which two screens are the same page (0.75, Section
    /// 3.3). In `[0, 1]`.
    pub same_page: f64,
    /// Weight of `sim_w` in the page similarity; `sim_l` gets the rest (0.5-0.5 in the
    /// paper). In `[0, 1]`.
    pub widget_weight: f64,
    /// Most pages the store keeps. Once it holds this many, a screen like none of them
    /// joins the stored page most similar to it instead of starting a new one, so memory
    /// stays bounded however long a run on however large an app. Not in the paper, whose
    /// runs last an hour; 10,000 is far above the pages a run finds (`docs/measured.md`,
    /// "Scale-out and reliability").
    pub max_pages: usize,
}

impl Default for PageStoreConfig {
    fn default() -> Self {
        Self {
            match_iou: 0.8,
            same_page: 0.75,
            widget_weight: 0.5,
            max_pages: 10_000,
        }
    }
}

impl PageStoreConfig {
    fn validate(&self) -> Result<()> {
        let check = |field, value: f64, ok: bool, range: &str| {
            if ok {
                Ok(())
            } else {
                Err(Error::Config {
                    field,
                    message: format!("must be in {range}, got {value}"),
                })
            }
        };
        let m = self.match_iou;
        check("match_iou", m, m > 0.0 && m <= 1.0, "(0, 1]")?;
        let s = self.same_page;
        check("same_page", s, (0.0..=1.0).contains(&s), "[0, 1]")?;
        let w = self.widget_weight;
        check("widget_weight", w, (0.0..=1.0).contains(&w), "[0, 1]")?;
        if self.max_pages == 0 {
            return Err(Error::Config {
                field: "max_pages",
                message: "must be at least 1".to_owned(),
            });
        }
        Ok(())
    }
}

/// What the store needs to know of one screen: its widgets, one embedding per widget
/// (Section 3.1.1) and its layout tree (Section 3.1.2).
///
/// Embeddings are expected to be scaled so that distances between them mostly fall in
/// `[0, 1]` (for instance L2-normalised and halved, or normalised so that a typical
/// different widget is at distance about 1): `sim_w = 1 − mean distance` is clamped to
/// `[0, 1]`, so larger distances all count as "completely different".
#[derive(Debug, Clone, PartialEq)]
pub struct PageView {
    widgets: Vec<Widget>,
    embeddings: Vec<Vec<f32>>,
    layout: LayoutTree,
}

impl PageView {
    /// Checks that there is one embedding per widget, all of one dimension and finite.
    pub fn new(
        widgets: Vec<Widget>,
        embeddings: Vec<Vec<f32>>,
        layout: LayoutTree,
    ) -> Result<Self> {
        if widgets.len() != embeddings.len() {
            return Err(Error::Input {
                what: "embeddings",
                message: format!(
                    "{} embeddings for {} widgets",
                    embeddings.len(),
                    widgets.len()
                ),
            });
        }
        if let Some(first) = embeddings.first() {
            let dim = first.len();
            for (i, e) in embeddings.iter().enumerate() {
                if e.len() != dim {
                    return Err(Error::Input {
                        what: "embeddings",
                        message: format!(
                            "embedding {i} has dimension {}, embedding 0 has {dim}",
                            e.len()
                        ),
                    });
                }
                if let Some(j) = e.iter().position(|x| !x.is_finite()) {
                    return Err(Error::Input {
                        what: "embeddings",
                        message: format!("embedding {i} has a non-finite value at {j}"),
                    });
                }
            }
        }
        Ok(Self {
            widgets,
            embeddings,
            layout,
        })
    }

    pub fn widgets(&self) -> &[Widget] {
        &self.widgets
    }

    pub fn embeddings(&self) -> &[Vec<f32>] {
        &self.embeddings
    }

    pub fn layout(&self) -> &LayoutTree {
        &self.layout
    }

    /// Dimension of the widget embeddings; `None` without widgets.
    pub fn embedding_dim(&self) -> Option<usize> {
        self.embeddings.first().map(Vec::len)
    }
}

fn check_dims(a: &PageView, b: &PageView) -> Result<()> {
    match (a.embedding_dim(), b.embedding_dim()) {
        (Some(da), Some(db)) if da != db => Err(Error::Input {
            what: "embeddings",
            message: format!("pages have widget embeddings of dimensions {da} and {db}"),
        }),
        _ => Ok(()),
    }
}

fn euclidean(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let d = f64::from(x) - f64::from(y);
            d * d
        })
        .sum::<f64>()
        .sqrt()
}

fn rect_key(r: &Rect) -> (i32, i32, u32, u32) {
    (r.x, r.y, r.width, r.height)
}

/// Widget similarity `sim_w = 1 − d(p_A, p_B)` (Section 3.3), clamped to `[0, 1]`.
///
/// Widgets are matched one-to-one, greedily by decreasing IoU among the pairs whose IoU
/// is at least `match_iou` (and above 0); unmatched widgets are neglected, as in the
/// paper. `d` is the mean Euclidean distance between the embeddings of matched pairs.
/// With no matched pair there is no evidence of shared widgets and the similarity is 0,
/// except between two pages without any widget (blank or loading screens), which are
/// alike in every widget they have: 1. Without that exception two identical blank
/// screens would score 0.5 and never be the same page at the 0.75 threshold.
///
/// Ties in IoU are broken by smaller embedding distance, then by the two boxes as an
/// unordered pair, so the result does not depend on which page is `a`.
///
/// Fails when the two pages' embeddings differ in dimension.
pub fn widget_similarity(a: &PageView, b: &PageView, match_iou: f64) -> Result<f64> {
    check_dims(a, b)?;
    if a.widgets.is_empty() && b.widgets.is_empty() {
        return Ok(1.0);
    }
    let mut pairs = Vec::new();
    for (i, wa) in a.widgets.iter().enumerate() {
        for (j, wb) in b.widgets.iter().enumerate() {
            let iou = wa.rect.iou(&wb.rect);
            if iou > 0.0 && iou >= match_iou {
                let dist = euclidean(&a.embeddings[i], &b.embeddings[j]);
                let (ka, kb) = (rect_key(&wa.rect), rect_key(&wb.rect));
                let boxes = (ka.min(kb), ka.max(kb));
                pairs.push((iou, dist, boxes, i, j));
            }
        }
    }
    pairs.sort_by(|x, y| {
        y.0.total_cmp(&x.0)
            .then(x.1.total_cmp(&y.1))
            .then(x.2.cmp(&y.2))
    });
    let (mut used_a, mut used_b) = (vec![false; a.widgets.len()], vec![false; b.widgets.len()]);
    let (mut total, mut matched) = (0.0, 0usize);
    for (_, dist, _, i, j) in pairs {
        if !used_a[i] && !used_b[j] {
            used_a[i] = true;
            used_b[j] = true;
            total += dist;
            matched += 1;
        }
    }
    if matched == 0 {
        return Ok(0.0);
    }
    Ok((1.0 - total / matched as f64).clamp(0.0, 1.0))
}

/// Page similarity (Section 3.3): `w · sim_w + (1 − w) · sim_l` with
/// `w = config.widget_weight` and `sim_l` the layout similarity of Eq. 2. In `[0, 1]`.
pub fn page_similarity(a: &PageView, b: &PageView, config: &PageStoreConfig) -> Result<f64> {
    config.validate()?;
    let w = config.widget_weight;
    let sim_w = widget_similarity(a, b, config.match_iou)?;
    let sim_l = layout_similarity(&a.layout, &b.layout);
    Ok((w * sim_w + (1.0 - w) * sim_l).clamp(0.0, 1.0))
}

/// Index of a page in its [`PageStore`], in order of discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PageId(pub usize);

/// Identifies an executed action on a page for the count `n` of Eq. 1: its kind, the
/// index of its target widget on the page, if it has one, and which of the kind's
/// parameter values it uses (two swipes up and down, two drag offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ActionKey {
    pub kind: ActionKind,
    pub target: Option<usize>,
    /// Position of the parameter value among the kind's candidates; 0 when there is one.
    pub variant: u32,
}

/// The counters of one page for Eq. 1.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageStats {
    transitions: usize,
    executable: usize,
    executed: BTreeSet<ActionKey>,
}

impl PageStats {
    /// `N`: how many times the exploration arrived on this page.
    pub fn transitions(&self) -> usize {
        self.transitions
    }

    /// `m`: executable actions of the page, as last reported.
    pub fn executable(&self) -> usize {
        self.executable
    }

    /// `n`: distinct actions executed on the page.
    pub fn executed(&self) -> usize {
        self.executed.len()
    }

    /// Whether this action was executed on the page.
    pub fn was_executed(&self, action: &ActionKey) -> bool {
        self.executed.contains(action)
    }
}

/// The cheap summary of a page used to skip hopeless comparisons.
#[derive(Debug, Clone, PartialEq)]
struct Signature {
    /// Nodes of the layout tree.
    nodes: usize,
    /// How many layout nodes carry each label (with kind labels, a widget-kind histogram).
    labels: BTreeMap<String, usize>,
    has_widgets: bool,
}

impl Signature {
    fn of(view: &PageView) -> Self {
        let tree = &view.layout;
        let mut labels = BTreeMap::new();
        for i in 0..tree.len() {
            *labels
                .entry(tree.label(NodeId(i as u32)).to_owned())
                .or_insert(0) += 1;
        }
        Self {
            nodes: tree.len(),
            labels,
            has_widgets: !view.widgets.is_empty(),
        }
    }

    /// An upper bound of the layout similarity (Eq. 2) of two pages.
    ///
    /// With unit costs a tree edit script deletes `n_A − k`, inserts `n_B − k` and renames
    /// at least `k − c` nodes, where `k ≤ min(n_A, n_B)` nodes are mapped and `c` is the
    /// size of the common label multiset, so `d(A, B) ≥ max(n_A, n_B) − c` and
    /// `sim_l ≤ c / max(n_A, n_B)`.
    fn layout_bound(&self, other: &Signature) -> f64 {
        let common: usize = self
            .labels
            .iter()
            .map(|(label, &n)| other.labels.get(label).map_or(0, |&m| n.min(m)))
            .sum();
        let max_nodes = self.nodes.max(other.nodes).max(1);
        common as f64 / max_nodes as f64
    }

    /// An upper bound of the widget similarity: 0 when exactly one page has widgets
    /// (nothing can match), else 1.
    fn widget_bound(&self, other: &Signature) -> f64 {
        if self.has_widgets == other.has_widgets {
            1.0
        } else {
            0.0
        }
    }
}

#[derive(Debug, Clone)]
struct StoredPage {
    view: PageView,
    signature: Signature,
    stats: PageStats,
}

/// The distinct pages seen so far and their Eq. 1 counters.
///
/// A page is represented by the first screen that created it; later screens of the same
/// page are compared against that one, so a page cannot drift away over many visits.
///
/// Lookup cost: finding the page of a screen compares it with stored pages, and a full
/// comparison costs a tree edit distance. Two lossless filters skip most of them:
/// 1. Pages are indexed by layout node count. Since `sim_l ≤ min(n_A, n_B) / max(n_A,
///    n_B)` and `sim_w ≤ 1`, only node counts within the ratio
///    `(same_page − w) / (1 − w)` of the screen's can reach the threshold (a range query).
/// 2. The label histogram of the layout tree bounds `sim_l` more tightly (the common
///    label multiset of size `c` gives `sim_l ≤ c / max(n_A, n_B)`); candidates whose
///    bound is below the threshold are skipped.
/// 3. `sim_w` is computed next (a widget matching, cheap next to a tree edit distance);
///    with it and the bound on `sim_l`, hopeless candidates are skipped before the tree
///    edit distance. [`Self::comparisons`] counts the tree edit distances computed.
///
/// Neither filter ever skips a page that would reach the threshold, so the result is
/// the one of a scan over all pages.
#[derive(Debug, Clone)]
pub struct PageStore {
    config: PageStoreConfig,
    pages: Vec<StoredPage>,
    by_nodes: BTreeMap<usize, Vec<PageId>>,
    embedding_dim: Option<usize>,
    comparisons: usize,
}

impl PageStore {
    /// An empty store; fails when a config value is out of its range.
    pub fn new(config: PageStoreConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self {
            config,
            pages: Vec::new(),
            by_nodes: BTreeMap::new(),
            embedding_dim: None,
            comparisons: 0,
        })
    }

    pub fn config(&self) -> &PageStoreConfig {
        &self.config
    }

    /// Number of distinct pages.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Tree edit distances computed by lookups so far (what the filters save).
    pub fn comparisons(&self) -> usize {
        self.comparisons
    }

    /// The screen that created a page.
    pub fn view(&self, page: PageId) -> Result<&PageView> {
        Ok(&self.page(page)?.view)
    }

    /// The Eq. 1 counters of a page.
    pub fn stats(&self, page: PageId) -> Result<&PageStats> {
        Ok(&self.page(page)?.stats)
    }

    fn page(&self, page: PageId) -> Result<&StoredPage> {
        self.pages
            .get(page.0)
            .ok_or_else(|| unknown(page, self.pages.len()))
    }

    fn page_mut(&mut self, page: PageId) -> Result<&mut StoredPage> {
        let len = self.pages.len();
        self.pages.get_mut(page.0).ok_or_else(|| unknown(page, len))
    }

    fn check_dim(&self, view: &PageView) -> Result<()> {
        match (self.embedding_dim, view.embedding_dim()) {
            (Some(store), Some(dim)) if store != dim => Err(Error::Input {
                what: "view",
                message: format!("widget embeddings of dimension {dim}, the store holds {store}"),
            }),
            _ => Ok(()),
        }
    }

    /// The most similar stored page whose similarity reaches
    /// [`PageStoreConfig::same_page`], with that similarity; ties go to the older page.
    pub fn lookup(&mut self, view: &PageView) -> Result<Option<(PageId, f64)>> {
        self.check_dim(view)?;
        let signature = Signature::of(view);
        let (threshold, w) = (self.config.same_page, self.config.widget_weight);
        // Filter 1: node counts whose ratio to ours can reach the threshold.
        let ratio = if w < 1.0 {
            (threshold - w) / (1.0 - w)
        } else {
            0.0
        };
        let n = signature.nodes as f64;
        let range = if ratio > 0.0 {
            let lo = (n * ratio).floor() as usize;
            let hi = (n / ratio).ceil() as usize;
            lo..=hi
        } else {
            0..=usize::MAX
        };
        let mut best: Option<(PageId, f64)> = None;
        let mut comparisons = 0;
        for id in self.by_nodes.range(range).flat_map(|(_, ids)| ids) {
            let stored = &self.pages[id.0];
            // Filter 2 (with a tolerance for rounding: the filters must never lose a page).
            let sim_l_bound = stored.signature.layout_bound(&signature);
            if w * stored.signature.widget_bound(&signature) + (1.0 - w) * sim_l_bound
                < threshold - 1e-9
            {
                continue;
            }
            // Filter 3: the widget matching is cheap next to the tree edit distance.
            let sim_w = widget_similarity(&stored.view, view, self.config.match_iou)?;
            if w * sim_w + (1.0 - w) * sim_l_bound < threshold - 1e-9 {
                continue;
            }
            comparisons += 1;
            let sim_l = layout_similarity(&stored.view.layout, &view.layout);
            let sim = (w * sim_w + (1.0 - w) * sim_l).clamp(0.0, 1.0);
            let better = match best {
                None => true,
                Some((best_id, best_sim)) => sim > best_sim || (sim == best_sim && *id < best_id),
            };
            if sim >= threshold && better {
                best = Some((*id, sim));
            }
        }
        self.comparisons += comparisons;
        Ok(best)
    }

    /// The page of this screen: the most similar stored page at or above the threshold
    /// (see [`Self::lookup`]), or else a new page created from it.
    pub fn lookup_or_insert(&mut self, view: PageView) -> Result<PageId> {
        if let Some((id, _)) = self.lookup(&view)? {
            return Ok(id);
        }
        self.insert(view)
    }

    /// A new page created from `view`, without a lookup; the nearest stored page when the
    /// store is full ([`PageStoreConfig::max_pages`]).
    pub fn insert(&mut self, view: PageView) -> Result<PageId> {
        self.check_dim(&view)?;
        if self.pages.len() >= self.config.max_pages {
            return self.nearest(&view);
        }
        let id = PageId(self.pages.len());
        let signature = Signature::of(&view);
        self.by_nodes.entry(signature.nodes).or_default().push(id);
        if self.embedding_dim.is_none() {
            self.embedding_dim = view.embedding_dim();
        }
        self.pages.push(StoredPage {
            view,
            signature,
            stats: PageStats::default(),
        });
        Ok(id)
    }

    /// The stored page most similar to `view`, whatever the threshold: the store is full.
    /// Full similarities are computed for the 16 pages whose cheap upper bounds are
    /// highest, so a full store costs no more per screen than a lookup.
    fn nearest(&mut self, view: &PageView) -> Result<PageId> {
        let signature = Signature::of(view);
        let w = self.config.widget_weight;
        let mut bounds: Vec<(f64, PageId)> = self
            .pages
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let bound = w * p.signature.widget_bound(&signature)
                    + (1.0 - w) * p.signature.layout_bound(&signature);
                (bound, PageId(i))
            })
            .collect();
        bounds.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut best = (f64::NEG_INFINITY, PageId(0));
        for &(_, id) in bounds.iter().take(16) {
            let stored = &self.pages[id.0];
            let sim_w = widget_similarity(&stored.view, view, self.config.match_iou)?;
            let sim_l = layout_similarity(&stored.view.layout, &view.layout);
            let sim = w * sim_w + (1.0 - w) * sim_l;
            if sim > best.0 {
                best = (sim, id);
            }
        }
        self.comparisons += bounds.len().min(16);
        Ok(best.1)
    }

    /// Sets `m`, the number of executable actions of a page.
    pub fn set_executable(&mut self, page: PageId, actions: usize) -> Result<()> {
        self.page_mut(page)?.stats.executable = actions;
        Ok(())
    }

    /// Counts an arrival on a page without a transition, such as the start screen.
    pub fn record_visit(&mut self, page: PageId) -> Result<()> {
        self.page_mut(page)?.stats.transitions += 1;
        Ok(())
    }

    /// Records that `action` was executed on `from` and led to `to`: `from` has one more
    /// executed action (if it is new) and `to` one more transition.
    pub fn record_transition(&mut self, from: PageId, action: ActionKey, to: PageId) -> Result<()> {
        self.page(to)?;
        self.page_mut(from)?.stats.executed.insert(action);
        self.page_mut(to)?.stats.transitions += 1;
        Ok(())
    }

    /// Forgets which actions were executed on `page` (its `n` of Eq. 1 becomes 0): the
    /// page is in a state where they may do something else.
    pub fn forget_executed(&mut self, page: PageId) -> Result<()> {
        self.page_mut(page)?.stats.executed.clear();
        Ok(())
    }

    /// The reward of Eq. 1 for a transition from `from` to `to`, from the counters as they
    /// are now: `n` and `m` of `to`, `N` of `from` (see [`curiosity_reward`]).
    pub fn transition_reward(&self, from: PageId, to: PageId) -> Result<f64> {
        let (from, to) = (self.stats(from)?, self.stats(to)?);
        Ok(curiosity_reward(
            to.executed(),
            to.executable(),
            from.transitions(),
        ))
    }
}

fn unknown(page: PageId, len: usize) -> Error {
    Error::Input {
        what: "page",
        message: format!("no page {} in a store of {len} pages", page.0),
    }
}

#[cfg(test)]
mod tests {
    use gui_core::{Size, WidgetKind};
    use gui_layout::{LayoutConfig, TreeLabels, characterise};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    const SCREEN: Size = Size::new(360, 640);

    /// The kind one-hot scaled so that two different kinds are at distance 1.
    fn embed(kind: WidgetKind) -> Vec<f32> {
        kind.one_hot()
            .iter()
            .map(|x| x * std::f32::consts::FRAC_1_SQRT_2)
            .collect()
    }

    fn view(boxes: &[(i32, i32, u32, u32, WidgetKind)]) -> PageView {
        let widgets: Vec<_> = boxes
            .iter()
            .map(|&(x, y, w, h, k)| Widget::new(Rect::new(x, y, w, h), k, 1.0))
            .collect();
        let embeddings = widgets.iter().map(|w| embed(w.kind)).collect();
        let layout =
            characterise(&widgets, SCREEN, &LayoutConfig::default()).tree(TreeLabels::Kinds);
        PageView::new(widgets, embeddings, layout).unwrap()
    }

    fn login() -> PageView {
        use WidgetKind::*;
        view(&[
            (20, 40, 320, 40, TextView),
            (20, 120, 320, 48, EditText),
            (20, 190, 320, 48, EditText),
            (20, 260, 150, 48, Button),
            (190, 260, 150, 48, Button),
        ])
    }

    fn login_shifted() -> PageView {
        use WidgetKind::*;
        view(&[
            (20, 42, 320, 40, TextView),
            (20, 122, 320, 48, EditText),
            (20, 192, 320, 48, EditText),
            (22, 262, 150, 48, Button),
            (190, 262, 150, 48, Button),
        ])
    }

    fn gallery() -> PageView {
        use WidgetKind::*;
        let mut boxes = vec![(0, 0, 360, 56, Tab)];
        for row in 0..4 {
            for col in 0..3 {
                boxes.push((10 + col * 115, 80 + row * 120, 105, 105, ImageView));
            }
        }
        view(&boxes)
    }

    fn random_view(rng: &mut impl Rng) -> PageView {
        let count = rng.random_range(0..10);
        let boxes: Vec<_> = (0..count)
            .map(|_| {
                let kind = WidgetKind::ALL[rng.random_range(0..4)];
                let row = rng.random_range(0..8);
                let col = rng.random_range(0..3);
                (
                    10 + col * 115,
                    20 + row * 75,
                    100,
                    50 + rng.random_range(0..3) * 5,
                    kind,
                )
            })
            .collect();
        view(&boxes)
    }

    fn store() -> PageStore {
        PageStore::new(PageStoreConfig::default()).unwrap()
    }

    #[test]
    fn same_screen_twice_is_one_page() {
        let mut s = store();
        let a = s.lookup_or_insert(login()).unwrap();
        let b = s.lookup_or_insert(login()).unwrap();
        let c = s.lookup_or_insert(login_shifted()).unwrap();
        assert_eq!((a, b, c), (PageId(0), PageId(0), PageId(0)));
        assert_eq!(s.len(), 1);
        // Blank screens too.
        let blank = s.lookup_or_insert(view(&[])).unwrap();
        assert_eq!(s.lookup_or_insert(view(&[])).unwrap(), blank);
        assert_eq!(s.len(), 2);
        let sim = page_similarity(&login(), &login_shifted(), s.config()).unwrap();
        assert!(sim > 0.99, "{sim}");
    }

    #[test]
    fn different_screen_is_a_new_page() {
        let mut s = store();
        let a = s.lookup_or_insert(login()).unwrap();
        let b = s.lookup_or_insert(gallery()).unwrap();
        assert_ne!(a, b);
        assert_eq!(s.len(), 2);
        assert_eq!(s.lookup_or_insert(gallery()).unwrap(), b);
        let sim = page_similarity(&login(), &gallery(), s.config()).unwrap();
        assert!(sim < 0.75, "{sim}");
    }

    #[test]
    fn widget_similarity_by_hand() {
        use WidgetKind::*;
        // Two matched pairs: same kind (distance 0) and Button vs ImageButton (distance 1);
        // the third widget of `a` has no partner and is neglected. sim_w = 1 - 0.5.
        let a = view(&[
            (0, 0, 100, 50, Button),
            (0, 100, 100, 50, Button),
            (200, 300, 50, 50, Icon),
        ]);
        let b = view(&[(0, 0, 100, 50, Button), (0, 100, 100, 50, ImageButton)]);
        let sim = widget_similarity(&a, &b, 0.8).unwrap();
        assert!((sim - 0.5).abs() < 1e-6, "{sim}");
        // Nothing overlaps enough: no match, similarity 0.
        let c = view(&[(0, 300, 100, 50, Button)]);
        assert_eq!(widget_similarity(&a, &c, 0.8).unwrap(), 0.0);
        // An empty page matches nothing, but two empty pages are alike.
        assert_eq!(widget_similarity(&a, &view(&[]), 0.8).unwrap(), 0.0);
        assert_eq!(widget_similarity(&view(&[]), &view(&[]), 0.8).unwrap(), 1.0);
    }

    #[test]
    fn matching_is_one_to_one_and_greedy_by_iou() {
        use WidgetKind::*;
        // `a` has one Button; `b` has a Button barely shifted (IoU 0.9) and an Icon
        // exactly on it (IoU 1). Greedy takes the IoU-1 pair: distance 1, sim_w 0; the
        // second pair is not taken because the widget of `a` is used.
        let a = view(&[(0, 0, 100, 100, Button)]);
        let b = view(&[(0, 0, 100, 100, Icon), (0, 5, 100, 100, Button)]);
        assert!(widget_similarity(&a, &b, 0.5).unwrap() < 1e-6);
        assert!(widget_similarity(&b, &a, 0.5).unwrap() < 1e-6);
        // Above the shifted pair's IoU only the exact pair is left: the same result.
        assert!(widget_similarity(&a, &b, 0.95).unwrap() < 1e-6);
        // Without the Icon the shifted Button matches: distance 0, sim_w 1.
        let c = view(&[(0, 5, 100, 100, Button)]);
        assert!((widget_similarity(&a, &c, 0.5).unwrap() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn similarity_is_symmetric_and_bounded() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let config = PageStoreConfig::default();
        let views: Vec<_> = (0..25).map(|_| random_view(&mut rng)).collect();
        for a in &views {
            for b in &views {
                let ab = page_similarity(a, b, &config).unwrap();
                let ba = page_similarity(b, a, &config).unwrap();
                assert!((0.0..=1.0).contains(&ab), "{ab}");
                assert!((ab - ba).abs() < 1e-12, "{ab} vs {ba}");
                let w = widget_similarity(a, b, config.match_iou).unwrap();
                assert!((0.0..=1.0).contains(&w));
            }
            let own = page_similarity(a, a, &config).unwrap();
            assert!((own - 1.0).abs() < 1e-12, "{own}");
        }
    }

    #[test]
    fn filters_never_change_the_lookup_and_skip_comparisons() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut s = store();
        for _ in 0..60 {
            s.lookup_or_insert(random_view(&mut rng)).unwrap();
        }
        s.lookup_or_insert(gallery()).unwrap();
        let pages = s.len();
        assert!(pages > 10, "only {pages} distinct pages");
        let before = s.comparisons();
        let probes: Vec<_> = (0..40)
            .map(|_| random_view(&mut rng))
            .chain([gallery(), login()])
            .collect();
        for probe in &probes {
            let found = s.lookup(probe).unwrap();
            let mut brute: Option<(PageId, f64)> = None;
            for i in 0..pages {
                let sim = page_similarity(s.view(PageId(i)).unwrap(), probe, s.config()).unwrap();
                if sim >= s.config().same_page && brute.is_none_or(|(_, b)| sim > b) {
                    brute = Some((PageId(i), sim));
                }
            }
            assert_eq!(found, brute);
        }
        let done = s.comparisons() - before;
        assert!(
            done < probes.len() * pages / 10,
            "{done} full comparisons for {} probes over {pages} pages",
            probes.len()
        );
    }

    #[test]
    fn counters_follow_transitions() {
        let mut s = store();
        let home = s.lookup_or_insert(login()).unwrap();
        let next = s.lookup_or_insert(gallery()).unwrap();
        s.record_visit(home).unwrap();
        s.set_executable(home, 8).unwrap();
        s.set_executable(next, 4).unwrap();
        let tap = ActionKey {
            kind: ActionKind::Click,
            target: Some(3),
            variant: 0,
        };
        s.record_transition(home, tap, next).unwrap();
        // Eq. 1: n(next) = 0, m(next) = 4, N(home) = 1: reward 1.
        assert_eq!(s.transition_reward(home, next).unwrap(), 1.0);
        let back = ActionKey {
            kind: ActionKind::Return,
            target: None,
            variant: 0,
        };
        s.record_transition(next, back, home).unwrap();
        s.record_transition(home, tap, next).unwrap();
        let (h, n) = (s.stats(home).unwrap(), s.stats(next).unwrap());
        assert_eq!((h.transitions(), h.executable(), h.executed()), (2, 8, 1));
        assert_eq!((n.transitions(), n.executable(), n.executed()), (2, 4, 1));
        assert!(h.was_executed(&tap) && !h.was_executed(&back));
        // n(next) = 1 of 4, N(home) = 2: 0.75 / sqrt(2).
        let r = s.transition_reward(home, next).unwrap();
        assert!((r - 0.75 / 2f64.sqrt()).abs() < 1e-12, "{r}");
        // A new state of `next` forgets its executed action: 1 / sqrt(2), and only
        // `next` is touched.
        s.forget_executed(next).unwrap();
        assert_eq!(s.stats(next).unwrap().executed(), 0);
        assert_eq!(s.stats(next).unwrap().transitions(), 2);
        assert_eq!(s.stats(home).unwrap().executed(), 1);
        let r = s.transition_reward(home, next).unwrap();
        assert!((r - 1.0 / 2f64.sqrt()).abs() < 1e-12, "{r}");
        assert!(s.forget_executed(PageId(9)).is_err());
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut s = store();
        let home = s.lookup_or_insert(login()).unwrap();
        let err = s
            .record_transition(
                home,
                ActionKey {
                    kind: ActionKind::Click,
                    target: None,
                    variant: 0,
                },
                PageId(5),
            )
            .unwrap_err();
        assert!(err.to_string().contains("no page 5"), "{err}");
        assert_eq!(
            s.stats(home).unwrap().executed(),
            0,
            "a failed call changed a counter"
        );
        assert!(s.set_executable(PageId(1), 3).is_err());

        let widget = Widget::new(Rect::new(0, 0, 10, 10), WidgetKind::Button, 1.0);
        let tree = LayoutTree::new("screen");
        assert!(PageView::new(vec![widget.clone()], vec![], tree.clone()).is_err());
        assert!(PageView::new(vec![widget.clone()], vec![vec![f32::NAN]], tree.clone()).is_err());
        let odd = PageView::new(vec![widget], vec![vec![0.0; 3]], tree).unwrap();
        let err = s.lookup_or_insert(odd.clone()).unwrap_err();
        assert!(err.to_string().contains("dimension 3"), "{err}");
        assert!(widget_similarity(&login(), &odd, 0.5).is_err());

        for bad in [
            PageStoreConfig {
                match_iou: 0.0,
                ..Default::default()
            },
            PageStoreConfig {
                same_page: 1.5,
                ..Default::default()
            },
            PageStoreConfig {
                widget_weight: f64::NAN,
                ..Default::default()
            },
        ] {
            assert!(PageStore::new(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_full_store_maps_new_screens_to_their_nearest_page() {
        use WidgetKind::*;
        let mut s = PageStore::new(PageStoreConfig {
            max_pages: 2,
            same_page: 0.98,
            ..Default::default()
        })
        .unwrap();
        let login_page = s.lookup_or_insert(login()).unwrap();
        let gallery_page = s.lookup_or_insert(gallery()).unwrap();
        // A login form with one field fewer: a page of its own below the cap.
        let short_login = view(&[
            (20, 40, 320, 40, TextView),
            (20, 120, 320, 48, EditText),
            (20, 260, 150, 48, Button),
            (190, 260, 150, 48, Button),
        ]);
        assert!(s.lookup(&short_login).unwrap().is_none());
        assert_eq!(s.lookup_or_insert(short_login).unwrap(), login_page);
        assert_eq!(s.len(), 2);
        assert_eq!(s.lookup_or_insert(gallery()).unwrap(), gallery_page);
        assert!(
            PageStore::new(PageStoreConfig {
                max_pages: 0,
                ..Default::default()
            })
            .is_err()
        );
        // Configurations written before the cap existed still read.
        let old: PageStoreConfig =
            serde_json::from_str(r#"{"match_iou":0.8,"same_page":0.75,"widget_weight":0.5}"#)
                .unwrap();
        assert_eq!(old.max_pages, 10_000);
    }

    #[test]
    fn config_round_trips_through_json() {
        let config = PageStoreConfig {
            match_iou: 0.6,
            ..Default::default()
        };
        let text = serde_json::to_string(&config).unwrap();
        let back: PageStoreConfig = serde_json::from_str(&text).unwrap();
        assert_eq!(back, config);
    }
}
