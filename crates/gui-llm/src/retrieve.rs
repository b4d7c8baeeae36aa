//! Example non-crash bugs for the detector prompt and their retrieval (Section III-D).
//!
//! The detector is shown the [`DEFAULT_TOP_K`] examples most similar to the screen under
//! test. The paper encodes activity names with Word2Vec; here a hashed n-gram TF-IDF
//! ([`TextEmbedder`]) stands in: screen names such as `EditExpenseActivity`, `#/cart` or
//! `budget_list` are split into words, and both the words and their character trigrams
//! are features, so `CartActivity` still meets `#/cart` and `carts`. It needs no model
//! file and gives the same vectors on every machine.
//!
//! An example set is a JSON array of [`BugExample`]s; the crate bundles a small one
//! (`data/bug_examples.json`, [`ExampleSet::bundled`]) and a run can add the bugs it
//! confirms ([`ExampleSet::push`]), as the paper enlarges its set.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The number of examples the paper gives the detector (K = 5).
pub const DEFAULT_TOP_K: usize = 5;

/// Dimension of the hashed feature space of [`ExampleSet`]'s embedder.
const EXAMPLE_DIMS: usize = 1024;

const BUNDLED: &str = include_str!("../data/bug_examples.json");

/// Whether a bug shows on one screen or only across a sequence of screens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BugScope {
    /// Visible on a single screen (mostly display problems).
    IntraPage,
    /// Visible only by comparing screens along a path (data, settings, navigation, ...).
    InterPage,
}

/// One non-crash bug shown to the detector as an in-context example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BugExample {
    /// Unique within its set.
    pub id: String,
    pub app: String,
    /// The activity or screen (route, window title) the bug shows on; what retrieval
    /// compares against.
    pub screen: String,
    /// One of the paper's categories: "numerical calculation error", "data operation
    /// failure", "setting and configuration failure", "navigation and link error",
    /// "media control no-response", or an intra-page display problem ("overlapping text",
    /// "truncated text", "wrong empty state", ...).
    pub category: String,
    pub scope: BugScope,
    /// What goes wrong, and what should have happened.
    pub description: String,
    /// How to reproduce it, one step per entry, in plain language.
    pub steps: Vec<String>,
    /// A screenshot of the bug. In a file, relative to the file's folder; after
    /// [`ExampleSet::load`], resolved against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<PathBuf>,
}

impl BugExample {
    /// The text an example is embedded from: screen, category and description.
    fn document(&self) -> String {
        format!("{} {} {}", self.screen, self.category, self.description)
    }
}

/// A set of example bugs with their embeddings, ready for [`ExampleSet::top_k`].
#[derive(Debug, Clone)]
pub struct ExampleSet {
    examples: Vec<BugExample>,
    embedder: TextEmbedder,
    vectors: Vec<Vec<f32>>,
}

impl ExampleSet {
    /// The example set shipped with the crate (`data/bug_examples.json`).
    pub fn bundled() -> Self {
        let examples: Vec<BugExample> =
            serde_json::from_str(BUNDLED).expect("data/bug_examples.json is a valid example list");
        Self::from_examples(examples).expect("data/bug_examples.json passes validation")
    }

    /// Reads an example set from a JSON file holding an array of [`BugExample`]s.
    /// Relative screenshot paths are resolved against the file's folder.
    ///
    /// Fails with [`Error::Io`] when the file cannot be read and [`Error::BadFile`] when it
    /// is not an example list, is empty, repeats an id or names a missing screenshot.
    pub fn load(path: &Path) -> Result<Self> {
        let bad = |message: String| Error::BadFile {
            path: path.to_path_buf(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut examples: Vec<BugExample> = serde_json::from_str(&text)
            .map_err(|e| bad(format!("not a list of bug examples: {e}")))?;
        validate(&examples).map_err(bad)?;
        let folder = path.parent().unwrap_or(Path::new(""));
        for e in &mut examples {
            if let Some(shot) = &mut e.screenshot {
                if shot.is_relative() {
                    *shot = folder.join(&*shot);
                }
                if !shot.is_file() {
                    return Err(bad(format!(
                        "example `{}`: screenshot {} does not exist",
                        e.id,
                        shot.display()
                    )));
                }
            }
        }
        Ok(Self::build(examples))
    }

    /// An example set from examples in memory. Fails with [`Error::Config`] when there are
    /// none, an id is empty or an id repeats.
    pub fn from_examples(examples: Vec<BugExample>) -> Result<Self> {
        validate(&examples).map_err(Error::Config)?;
        Ok(Self::build(examples))
    }

    fn build(examples: Vec<BugExample>) -> Self {
        let docs: Vec<String> = examples.iter().map(BugExample::document).collect();
        let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
        let embedder = TextEmbedder::fit(&refs, EXAMPLE_DIMS);
        let vectors = refs.iter().map(|d| embedder.embed(d)).collect();
        Self {
            examples,
            embedder,
            vectors,
        }
    }

    /// The examples, in file order (pushed ones last).
    pub fn examples(&self) -> &[BugExample] {
        &self.examples
    }

    pub fn len(&self) -> usize {
        self.examples.len()
    }

    /// Always false for a set built by this module; there for symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.examples.is_empty()
    }

    /// The `k` examples most similar to `query` (the screen names of the tested
    /// sub-sequence), with their cosine similarity, best first; equal scores in id order.
    ///
    /// ```
    /// use gui_llm::{DEFAULT_TOP_K, ExampleSet};
    ///
    /// let set = ExampleSet::bundled();
    /// let examples = set.top_k("CartActivity", DEFAULT_TOP_K);
    /// assert_eq!(examples[0].0.category, "numerical calculation error");
    /// ```
    pub fn top_k(&self, query: &str, k: usize) -> Vec<(&BugExample, f32)> {
        let q = self.embedder.embed(query);
        let mut scored: Vec<(&BugExample, f32)> = self
            .examples
            .iter()
            .zip(&self.vectors)
            .map(|(e, v)| (e, cosine(&q, v)))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
        scored.truncate(k);
        scored
    }

    /// Adds a bug found in a run. An example with the same id is replaced. The weights
    /// (IDF) are refitted on the enlarged set, so every example stays comparable.
    pub fn push(&mut self, example: BugExample) {
        let mut examples = std::mem::take(&mut self.examples);
        match examples.iter_mut().find(|e| e.id == example.id) {
            Some(slot) => *slot = example,
            None => examples.push(example),
        }
        *self = Self::build(examples);
    }
}

/// Checks a set is non-empty with distinct, non-empty ids; the message says what is wrong.
fn validate(examples: &[BugExample]) -> std::result::Result<(), String> {
    if examples.is_empty() {
        return Err("the example set is empty".into());
    }
    let mut ids = HashSet::new();
    for (i, e) in examples.iter().enumerate() {
        if e.id.trim().is_empty() {
            return Err(format!("example {i} has an empty id"));
        }
        if !ids.insert(e.id.as_str()) {
            return Err(format!("the id `{}` is used more than once", e.id));
        }
    }
    Ok(())
}

/// Splits identifiers and prose into lowercase words: at every character that is not a
/// letter or digit (`#/cart`, `budget_list`, `add-item`), between a lowercase letter and
/// an uppercase one (`EditExpense`), before the last capital of an acronym followed by a
/// lowercase letter (`HTMLView` → `html`, `view`) and between letters and digits
/// (`step2`). Used for screen names here and for function names elsewhere.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = run.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            if i > 0 && is_word_boundary(chars[i - 1], c, chars.get(i + 1).copied()) {
                out.push(std::mem::take(&mut word));
            }
            word.extend(c.to_lowercase());
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

fn is_word_boundary(prev: char, cur: char, next: Option<char>) -> bool {
    let lowerish = |c: char| c.is_alphabetic() && !c.is_uppercase();
    (lowerish(prev) && cur.is_uppercase())
        || (prev.is_uppercase() && cur.is_uppercase() && next.is_some_and(lowerish))
        || (prev.is_numeric() != cur.is_numeric())
}

/// Cosine similarity of two vectors of the same length; 0 when either is all zeros.
///
/// # Panics
/// If the lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "cosine of vectors of different lengths");
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (&x, &y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Hashed n-gram TF-IDF sentence embeddings.
///
/// Features of a text are its [`tokens`] and the character trigrams of each token with
/// boundary markers (`cart` → `<ca`, `car`, `art`, `rt>`), hashed with FNV-1a into `dims`
/// buckets. A bucket's weight is its count times its inverse document frequency fitted on
/// a corpus, `ln((1 + N) / (1 + df)) + 1`; vectors are L2-normalised.
#[derive(Debug, Clone, PartialEq)]
pub struct TextEmbedder {
    idf: Vec<f32>,
}

impl TextEmbedder {
    /// Fits the document frequencies on `docs`.
    ///
    /// # Panics
    /// If `dims` is 0.
    pub fn fit(docs: &[&str], dims: usize) -> Self {
        assert!(dims > 0, "an embedding needs at least one dimension");
        let mut df = vec![0u32; dims];
        let mut seen = vec![false; dims];
        let mut buckets = Vec::new();
        for doc in docs {
            buckets.clear();
            for_each_feature(doc, dims, |b| buckets.push(b));
            for &b in &buckets {
                if !seen[b] {
                    seen[b] = true;
                    df[b] += 1;
                }
            }
            for &b in &buckets {
                seen[b] = false;
            }
        }
        let n = docs.len() as f32;
        let idf = df
            .iter()
            .map(|&d| ((1.0 + n) / (1.0 + d as f32)).ln() + 1.0)
            .collect();
        Self { idf }
    }

    /// The dimension of the vectors.
    pub fn dims(&self) -> usize {
        self.idf.len()
    }

    /// The L2-normalised TF-IDF vector of `text`; all zeros when it has no words.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.idf.len()];
        for_each_feature(text, self.idf.len(), |b| v[b] += 1.0);
        for (x, idf) in v.iter_mut().zip(&self.idf) {
            *x *= idf;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

/// Calls `f` with the bucket of every feature of `text` (repeats included).
fn for_each_feature(text: &str, dims: usize, mut f: impl FnMut(usize)) {
    let bucket = |kind: u8, bytes: &[u8]| {
        let h = fnv1a(fnv1a(FNV_OFFSET, &[kind]), bytes);
        (h % dims as u64) as usize
    };
    let mut buf = [0u8; 12];
    for word in tokens(text) {
        f(bucket(b'w', word.as_bytes()));
        let marked: Vec<char> = std::iter::once('<')
            .chain(word.chars())
            .chain(std::iter::once('>'))
            .collect();
        for tri in marked.windows(3) {
            let mut len = 0;
            for c in tri {
                len += c.encode_utf8(&mut buf[len..]).len();
            }
            f(bucket(b't', &buf[..len]));
        }
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, continued from `state`: stable across runs and platforms, unlike std's hasher.
fn fnv1a(state: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(state, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(id: &str, screen: &str, description: &str) -> BugExample {
        BugExample {
            id: id.into(),
            app: "app".into(),
            screen: screen.into(),
            category: "data operation failure".into(),
            scope: BugScope::InterPage,
            description: description.into(),
            steps: vec!["open it".into()],
            screenshot: None,
        }
    }

    #[test]
    fn tokens_split_identifiers() {
        assert_eq!(
            tokens("EditExpenseActivity"),
            ["edit", "expense", "activity"]
        );
        assert_eq!(tokens("#/cart"), ["cart"]);
        assert_eq!(tokens("budget_list"), ["budget", "list"]);
        assert_eq!(tokens("add-item"), ["add", "item"]);
        assert_eq!(tokens("HTMLView step2"), ["html", "view", "step", "2"]);
        assert_eq!(tokens("Check budget-2"), ["check", "budget", "2"]);
        assert!(tokens(" -- ").is_empty());
    }

    #[test]
    fn fnv1a_matches_the_reference_values() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn embeddings_are_unit_length_and_rare_words_weigh_more() {
        let docs = ["cart total", "cart list", "cart settings", "budget"];
        let e = TextEmbedder::fit(&docs, 256);
        let v = e.embed("CartActivity");
        let norm: f32 = v.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-5);
        assert!(e.embed("").iter().all(|&x| x == 0.0));
        // "budget" is in one document, "cart" in three.
        // The first feature of a word is the word itself.
        let word = |w: &str| {
            let mut first = None;
            for_each_feature(w, 256, |x| {
                first.get_or_insert(x);
            });
            e.idf[first.expect("a word has features")]
        };
        assert!(word("budget") > word("cart"));
    }

    #[test]
    fn push_replaces_an_example_with_the_same_id_and_refits() {
        let mut set = ExampleSet::from_examples(vec![
            example("a", "CartActivity", "total wrong"),
            example("b", "SettingsActivity", "theme resets"),
        ])
        .unwrap();
        set.push(example("c", "PlayerActivity", "pause does nothing"));
        assert_eq!(set.len(), 3);
        assert_eq!(set.top_k("PlayerActivity", 1)[0].0.id, "c");
        set.push(example("a", "WalletActivity", "balance wrong"));
        assert_eq!(set.len(), 3);
        assert_eq!(set.top_k("wallet", 1)[0].0.id, "a");
    }

    #[test]
    fn invalid_sets_are_refused() {
        let err = ExampleSet::from_examples(Vec::new()).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        let err = ExampleSet::from_examples(vec![example("a", "x", "y"), example("a", "z", "w")])
            .unwrap_err();
        assert!(err.to_string().contains("`a`"), "{err}");
    }

    #[test]
    fn the_bundled_set_loads_and_mixes_scopes() {
        let set = ExampleSet::bundled();
        assert!(set.len() >= 12);
        let intra = set
            .examples()
            .iter()
            .filter(|e| e.scope == BugScope::IntraPage)
            .count();
        assert!(
            intra >= 3 && intra < set.len(),
            "{intra} intra-page examples"
        );
        assert!(set.examples().iter().all(|e| !e.steps.is_empty()));
    }

    #[test]
    fn cart_screens_retrieve_the_cart_example_first() {
        let set = ExampleSet::bundled();
        for query in ["#/cart", "CartActivity", "ShoppingCartFragment"] {
            let top = set.top_k(query, DEFAULT_TOP_K);
            assert_eq!(top.len(), DEFAULT_TOP_K);
            assert_eq!(top[0].0.id, "shop-cart-total", "query {query}: {top:?}");
            assert!(top.windows(2).all(|w| w[0].1 >= w[1].1));
        }
        assert_eq!(
            set.top_k("PlayerActivity", 1)[0].0.id,
            "player-pause-no-effect"
        );
        assert_eq!(
            set.top_k("EditExpenseActivity", 1)[0].0.app,
            "PennyWise (Android expense tracker)"
        );
        assert_eq!(set.top_k("anything", 100).len(), set.len());
    }

    #[test]
    fn identical_texts_have_cosine_one() {
        let set = ExampleSet::bundled();
        let a = set.embedder.embed("SettingsActivity dark theme");
        let b = set.embedder.embed("SettingsActivity dark theme");
        assert!((cosine(&a, &b) - 1.0).abs() < 1e-5);
        let c = set.embedder.embed("PlayerActivity pause");
        assert!(cosine(&a, &c) < 0.5);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn bad_files_are_reported_with_their_path() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let valid = serde_json::to_string(&[example("a", "CartActivity", "total")]).unwrap();
        let duplicated = serde_json::to_string(&[
            example("a", "CartActivity", "total"),
            example("a", "ListActivity", "rows"),
        ])
        .unwrap();
        let mut shot = example("s", "CartActivity", "total");
        shot.screenshot = Some("missing.png".into());
        let cases = [
            (
                write("malformed.json", "[{\"id\": \"a\","),
                "not a list of bug examples",
            ),
            (write("empty.json", "[]"), "empty"),
            (write("duplicated.json", &duplicated), "more than once"),
            (
                write("unknown.json", &valid.replace("\"app\"", "\"apps\"")),
                "unknown field",
            ),
            (
                write("shot.json", &serde_json::to_string(&[shot]).unwrap()),
                "missing.png",
            ),
            (dir.path().join("absent.json"), "absent.json"),
        ];
        for (path, reason) in cases {
            let err = ExampleSet::load(&path).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(&path.display().to_string()), "{text}");
            assert!(text.contains(reason), "{text}");
        }
        assert!(matches!(
            ExampleSet::load(&dir.path().join("absent.json")),
            Err(Error::Io { .. })
        ));
        assert_eq!(
            ExampleSet::load(&write("ok.json", &valid)).unwrap().len(),
            1
        );
    }

    #[test]
    fn relative_screenshots_resolve_against_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("shots")).unwrap();
        std::fs::write(dir.path().join("shots/cart.png"), b"png").unwrap();
        let mut e = example("a", "CartActivity", "total");
        e.screenshot = Some("shots/cart.png".into());
        let path = dir.path().join("set.json");
        std::fs::write(&path, serde_json::to_string(&[e]).unwrap()).unwrap();
        let set = ExampleSet::load(&path).unwrap();
        assert_eq!(
            set.examples()[0].screenshot.as_deref(),
            Some(dir.path().join("shots/cart.png").as_path())
        );
    }

    #[test]
    fn ties_are_broken_by_id() {
        let set = ExampleSet::from_examples(vec![
            example("b", "Same", "same"),
            example("a", "Same", "same"),
        ])
        .unwrap();
        let ids: Vec<&str> = set
            .top_k("Same", 2)
            .iter()
            .map(|(e, _)| e.id.as_str())
            .collect();
        assert_eq!(ids, ["a", "b"]);
    }
}
