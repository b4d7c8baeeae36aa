//! Cumulative JavaScript coverage from `Profiler.takePreciseCoverage` takes.
//!
//! With `callCount: true` every take reports only the counts gathered since the previous
//! take, so coverage is the union over all takes: a function is covered once any take saw
//! it run, a byte once any take saw the innermost block around it run. Unions never count
//! anything twice, however often the same code runs or the page reloads.

use std::collections::{BTreeMap, HashMap, HashSet};

use gui_core::CoverageSnapshot;
use serde_json::Value;

/// The `(start, end, count)` ranges of one function of a take, the whole function first.
fn ranges_of(function: &Value) -> Vec<(u64, u64, u64)> {
    function
        .get("ranges")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some((
                r.get("startOffset")?.as_u64()?,
                r.get("endOffset")?.as_u64()?,
                r.get("count")?.as_u64()?,
            ))
        })
        .collect()
}

/// A function that ran during one coverage take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RanFunction {
    /// The script's URL.
    pub url: String,
    /// V8's `(start, end, count)` ranges in UTF-16 offsets of the script's source: first
    /// the whole function, then blocks inside it whose count differs from their parent's
    /// (count 0: the block did not run in this take).
    pub ranges: Vec<(u64, u64, u64)>,
}

impl RanFunction {
    /// Where the function starts in its script.
    pub fn start(&self) -> u64 {
        self.ranges.first().map_or(0, |r| r.0)
    }

    /// Whether the code at `offset` ran in this take: the count of the innermost range
    /// around it is not 0. Offsets outside the function did not run as part of it.
    pub fn executed(&self, offset: u64) -> bool {
        self.ranges
            .iter()
            .filter(|(a, b, _)| *a <= offset && offset < *b)
            .min_by_key(|(a, b, _)| b - a)
            .is_some_and(|r| r.2 > 0)
    }
}

/// Coverage of the scripts whose URL starts with one origin (the app's own scripts; the
/// tool's evaluations have no URL and other origins are third parties).
#[derive(Debug, Clone, Default)]
pub struct JsCoverage {
    origin: String,
    scripts: HashMap<String, ScriptCoverage>,
}

#[derive(Debug, Clone, Default)]
struct ScriptCoverage {
    len: u64,
    /// Function ranges `(start, end)` seen, and whether each ever ran.
    functions: HashMap<(u64, u64), bool>,
    /// Disjoint covered byte intervals, start -> end.
    covered: BTreeMap<u64, u64>,
}

impl JsCoverage {
    /// Coverage of scripts served from `origin` (`scheme://host:port`).
    pub fn new(origin: impl Into<String>) -> Self {
        Self {
            origin: origin.into(),
            scripts: HashMap::new(),
        }
    }

    /// The origin of a URL: everything before the path.
    pub fn origin_of(url: &str) -> String {
        match url.find("://") {
            Some(i) => {
                let rest = &url[i + 3..];
                let end = rest.find('/').map_or(url.len(), |j| i + 3 + j);
                url[..end].to_owned()
            }
            None => url.to_owned(),
        }
    }

    /// Adds one take (the `result` array of `Profiler.takePreciseCoverage`).
    pub fn add_take(&mut self, result: &Value) {
        let Some(scripts) = result.as_array() else {
            return;
        };
        for script in scripts {
            let url = script.get("url").and_then(Value::as_str).unwrap_or("");
            if url.is_empty() || Self::origin_of(url) != self.origin {
                continue;
            }
            let entry = self.scripts.entry(url.to_owned()).or_default();
            let functions: Vec<Vec<(u64, u64, u64)>> = script
                .get("functions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(ranges_of)
                .collect();
            entry.add_take(&functions);
        }
    }

    /// The functions of this origin's scripts that ran during one take (the `result`
    /// array of `Profiler.takePreciseCoverage`), with their block ranges. Script bodies
    /// (ranges starting at 0) are left out: they are not functions a handler calls.
    pub fn ran_in(&self, take: &Value) -> Vec<RanFunction> {
        let mut ran = Vec::new();
        for script in take.as_array().into_iter().flatten() {
            let url = script.get("url").and_then(Value::as_str).unwrap_or("");
            if url.is_empty() || Self::origin_of(url) != self.origin {
                continue;
            }
            for f in script
                .get("functions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let ranges = ranges_of(f);
                if let Some(&(start, _, count)) = ranges.first()
                    && start > 0
                    && count > 0
                {
                    ran.push(RanFunction {
                        url: url.to_owned(),
                        ranges,
                    });
                }
            }
        }
        ran
    }

    pub fn snapshot(&self) -> CoverageSnapshot {
        let mut s = CoverageSnapshot {
            scripts: self.scripts.len() as u32,
            ..Default::default()
        };
        for sc in self.scripts.values() {
            s.functions_total += sc.functions.len() as u64;
            s.functions_covered += sc.functions.values().filter(|c| **c).count() as u64;
            s.bytes_total += sc.len;
            s.bytes_covered += sc.covered.iter().map(|(a, b)| b - a).sum::<u64>();
        }
        s
    }

    /// Covered functions as `script-path@start-end`, sorted. The path leaves out the
    /// origin, so two servers of the same app on different ports name functions alike.
    pub fn covered_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .scripts
            .iter()
            .flat_map(|(url, sc)| {
                let path = url.strip_prefix(&self.origin).unwrap_or(url);
                sc.functions
                    .iter()
                    .filter(|(_, covered)| **covered)
                    .map(move |((a, b), _)| format!("{path}@{a}-{b}"))
            })
            .collect();
        names.sort_unstable();
        names
    }

    /// Covered function ranges per script URL, for reports and tests.
    pub fn covered_functions(&self) -> HashMap<&str, HashSet<(u64, u64)>> {
        self.scripts
            .iter()
            .map(|(u, sc)| {
                (
                    u.as_str(),
                    sc.functions
                        .iter()
                        .filter(|(_, c)| **c)
                        .map(|(k, _)| *k)
                        .collect(),
                )
            })
            .collect()
    }
}

impl ScriptCoverage {
    /// Adds one take of this script: the block ranges of each function it reported.
    ///
    /// A byte's count is that of the innermost range around it, over all functions: V8
    /// ranges nest (a function inside the script body, a block inside a function). A known
    /// function missing from the take did not run since the last take, so it stands in
    /// with count 0; otherwise the body of an enclosing function that ran would claim its
    /// bytes.
    fn add_take(&mut self, functions: &[Vec<(u64, u64, u64)>]) {
        let mut ranges: Vec<(u64, u64, u64)> = Vec::new();
        let mut reported = std::collections::HashSet::new();
        for f in functions {
            let Some(&(start, end, count)) = f.first() else {
                continue;
            };
            self.len = self.len.max(end);
            *self.functions.entry((start, end)).or_insert(false) |= count > 0;
            reported.insert((start, end));
            ranges.extend_from_slice(f);
        }
        ranges.extend(
            self.functions
                .keys()
                .filter(|k| !reported.contains(*k))
                .map(|&(s, e)| (s, e, 0)),
        );
        // Outer before inner: by start, then longer first; a stable sort keeps a block
        // that repeats its function's range after (inside) it.
        let mut order: Vec<usize> = (0..ranges.len()).collect();
        order.sort_by_key(|&i| (ranges[i].0, std::cmp::Reverse(ranges[i].1)));
        let mut stack: Vec<(u64, u64)> = Vec::new(); // (end, count) of open ranges
        let mut pos = 0;
        let mut covered = Vec::new();
        let mut emit = |a: u64, b: u64, count: u64| {
            if b > a && count > 0 {
                covered.push((a, b));
            }
        };
        for i in order {
            let (start, end, count) = ranges[i];
            while let Some(&(top_end, top_count)) = stack.last() {
                if top_end > start {
                    break;
                }
                emit(pos, top_end, top_count);
                pos = pos.max(top_end);
                stack.pop();
            }
            if let Some(&(_, top_count)) = stack.last() {
                emit(pos, start, top_count);
            }
            pos = pos.max(start);
            stack.push((end, count));
        }
        while let Some((top_end, top_count)) = stack.pop() {
            emit(pos, top_end, top_count);
            pos = pos.max(top_end);
        }
        for (a, b) in covered {
            self.insert(a, b);
        }
    }

    /// Adds `[a, b)` to the covered set, merging with overlapping or touching intervals.
    fn insert(&mut self, mut a: u64, mut b: u64) {
        let touching: Vec<(u64, u64)> = self
            .covered
            .range(..=b)
            .rev()
            .take_while(|(_, e)| **e >= a)
            .map(|(s, e)| (*s, *e))
            .collect();
        for (s, e) in touching {
            self.covered.remove(&s);
            a = a.min(s);
            b = b.max(e);
        }
        self.covered.insert(a, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn functions_that_ran_come_with_the_blocks_they_skipped() {
        let c = JsCoverage::new("http://127.0.0.1:9");
        let ran = c.ran_in(&take(json!([
            { "ranges": [{ "startOffset": 0, "endOffset": 100, "count": 1 }] },
            { "ranges": [{ "startOffset": 10, "endOffset": 40, "count": 2 },
                         { "startOffset": 20, "endOffset": 30, "count": 0 }] },
            { "ranges": [{ "startOffset": 50, "endOffset": 60, "count": 0 }] }
        ])));
        // The script body and the function that did not run are left out, and so is
        // every script of another origin.
        assert_eq!(ran.len(), 1);
        let f = &ran[0];
        assert_eq!(
            (f.url.as_str(), f.start()),
            ("http://127.0.0.1:9/app.js", 10)
        );
        assert!(f.executed(12) && f.executed(35));
        assert!(!f.executed(25), "inside the skipped block");
        assert!(!f.executed(45), "outside the function");
    }

    fn take(fns: Value) -> Value {
        json!([{ "url": "http://127.0.0.1:9/app.js", "functions": fns },
               { "url": "http://elsewhere:1/lib.js", "functions": [
                   { "ranges": [{ "startOffset": 0, "endOffset": 500, "count": 1 }] }] },
               { "url": "", "functions": [
                   { "ranges": [{ "startOffset": 0, "endOffset": 70, "count": 1 }] }] }])
    }

    #[test]
    fn unions_takes_without_double_counting() {
        let mut cov = JsCoverage::new("http://127.0.0.1:9");
        // Script body ran; function f (10..50) with an uncovered block 20..30; g never ran.
        cov.add_take(&take(json!([
            { "ranges": [{ "startOffset": 0, "endOffset": 100, "count": 1 }] },
            { "ranges": [{ "startOffset": 10, "endOffset": 50, "count": 1 },
                         { "startOffset": 20, "endOffset": 30, "count": 0 }] },
            { "ranges": [{ "startOffset": 60, "endOffset": 80, "count": 0 }] },
        ])));
        let s = cov.snapshot();
        assert_eq!((s.functions_covered, s.functions_total), (2, 3));
        // 0..100 with 20..30 and 60..80 uncovered.
        assert_eq!((s.bytes_covered, s.bytes_total, s.scripts), (70, 100, 1));

        // The same code again changes nothing.
        cov.add_take(&take(json!([
            { "ranges": [{ "startOffset": 10, "endOffset": 50, "count": 3 },
                         { "startOffset": 20, "endOffset": 30, "count": 0 }] },
        ])));
        assert_eq!(cov.snapshot(), s);

        // g runs and the block inside f runs: both are added once.
        cov.add_take(&take(json!([
            { "ranges": [{ "startOffset": 60, "endOffset": 80, "count": 1 }] },
            { "ranges": [{ "startOffset": 10, "endOffset": 50, "count": 1 },
                         { "startOffset": 20, "endOffset": 30, "count": 1 }] },
        ])));
        let s2 = cov.snapshot();
        assert_eq!((s2.functions_covered, s2.bytes_covered), (3, 100));
    }

    #[test]
    fn a_script_body_does_not_cover_the_functions_inside_it() {
        let mut cov = JsCoverage::new("http://127.0.0.1:9");
        cov.add_take(&take(json!([
            { "ranges": [{ "startOffset": 0, "endOffset": 100, "count": 1 }] },
            { "ranges": [{ "startOffset": 30, "endOffset": 40, "count": 0 }] },
        ])));
        assert_eq!(cov.snapshot().bytes_covered, 90);
        // Later only the inner function is reported, having run once.
        cov.add_take(&take(
            json!([{ "ranges": [{ "startOffset": 30, "endOffset": 40, "count": 1 }] }]),
        ));
        assert_eq!(cov.snapshot().bytes_covered, 100);
        // Later only the body is reported again: the inner function stays as it was.
        let mut cov2 = JsCoverage::new("http://127.0.0.1:9");
        cov2.add_take(&take(json!([
            { "ranges": [{ "startOffset": 0, "endOffset": 100, "count": 1 }] },
            { "ranges": [{ "startOffset": 30, "endOffset": 40, "count": 0 }] },
        ])));
        cov2.add_take(&take(
            json!([{ "ranges": [{ "startOffset": 0, "endOffset": 100, "count": 1 }] }]),
        ));
        assert_eq!(cov2.snapshot().bytes_covered, 90);
    }

    #[test]
    fn origin_of_urls() {
        assert_eq!(
            JsCoverage::origin_of("http://127.0.0.1:8080/a/b.js?x"),
            "http://127.0.0.1:8080"
        );
        assert_eq!(JsCoverage::origin_of("http://h"), "http://h");
    }
}
