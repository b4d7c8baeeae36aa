use crate::{Error, Result};

/// Index of a node in its [`LayoutTree`]; the root is `NodeId(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// An ordered, labelled tree stored as an arena: nodes in creation order, each with its
/// label and its children in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutTree {
    labels: Vec<String>,
    children: Vec<Vec<NodeId>>,
}

impl LayoutTree {
    /// A tree of one node.
    pub fn new(root_label: impl Into<String>) -> Self {
        Self {
            labels: vec![root_label.into()],
            children: vec![Vec::new()],
        }
    }

    pub fn root(&self) -> NodeId {
        NodeId(0)
    }

    /// Appends a child as the last child of `parent`.
    pub fn add_child(&mut self, parent: NodeId, label: impl Into<String>) -> NodeId {
        let id = NodeId(self.labels.len() as u32);
        self.labels.push(label.into());
        self.children.push(Vec::new());
        self.children[parent.0 as usize].push(id);
        id
    }

    pub fn label(&self, n: NodeId) -> &str {
        &self.labels[n.0 as usize]
    }

    pub fn children(&self, n: NodeId) -> &[NodeId] {
        &self.children[n.0 as usize]
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Always false: a tree has its root.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Longest root-to-leaf path counted in nodes (a lone root has depth 1).
    pub fn depth(&self) -> usize {
        let mut best = 0;
        let mut stack = vec![(self.root(), 1)];
        while let Some((n, d)) = stack.pop() {
            best = best.max(d);
            stack.extend(self.children(n).iter().map(|c| (*c, d + 1)));
        }
        best
    }

    /// Nodes in postorder (children left to right, then the node).
    pub fn postorder(&self) -> Vec<NodeId> {
        self.postorder_by(false)
    }

    /// Postorder of the mirror image (children right to left), without building it.
    pub fn mirrored_postorder(&self) -> Vec<NodeId> {
        self.postorder_by(true)
    }

    fn postorder_by(&self, mirror: bool) -> Vec<NodeId> {
        let mut out = Vec::with_capacity(self.len());
        let mut stack = vec![(self.root(), false)];
        while let Some((n, expanded)) = stack.pop() {
            if expanded {
                out.push(n);
                continue;
            }
            stack.push((n, true));
            // The stack pops last-pushed first: push in reverse of the visiting order.
            let kids = self.children(n).iter().map(|c| (*c, false));
            if mirror {
                stack.extend(kids);
            } else {
                stack.extend(kids.rev());
            }
        }
        out
    }

    /// The same tree with every node's children in reverse order.
    pub fn mirrored(&self) -> Self {
        let mut t = self.clone();
        for c in &mut t.children {
            c.reverse();
        }
        t
    }

    /// Bracket notation: `{label{child}{child}}`. `{`, `}` and `\` inside labels are
    /// escaped with `\`, so any tree round-trips through [`LayoutTree::parse`].
    pub fn to_bracket(&self) -> String {
        let mut out = String::with_capacity(self.len() * 8);
        // (node, closing?) pairs give an iterative preorder with closing braces.
        let mut stack = vec![(self.root(), false)];
        while let Some((n, close)) = stack.pop() {
            if close {
                out.push('}');
                continue;
            }
            out.push('{');
            for ch in self.label(n).chars() {
                if matches!(ch, '{' | '}' | '\\') {
                    out.push('\\');
                }
                out.push(ch);
            }
            stack.push((n, true));
            stack.extend(self.children(n).iter().rev().map(|c| (*c, false)));
        }
        out
    }

    /// Parses bracket notation. Errors give the byte position: unbalanced braces, an empty
    /// label, text after the tree, a dangling escape.
    pub fn parse(s: &str) -> Result<Self> {
        let bytes = s.as_bytes();
        let err = |position: usize, message: &str| {
            let mut from = position.saturating_sub(12).min(s.len());
            while !s.is_char_boundary(from) {
                from -= 1;
            }
            let mut to = (position + 12).min(s.len());
            while !s.is_char_boundary(to) {
                to += 1;
            }
            Error::Parse {
                position,
                message: message.to_owned(),
                excerpt: s[from..to].to_owned(),
            }
        };
        let start = s.len() - s.trim_start().len();
        if bytes.get(start) != Some(&b'{') {
            return Err(err(start, "expected `{` to open the root"));
        }
        let mut tree: Option<LayoutTree> = None;
        let mut open: Vec<NodeId> = Vec::new();
        let mut i = start;
        let mut done_at = None;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => {
                    if done_at.is_some() {
                        return Err(err(i, "text after the end of the tree"));
                    }
                    // Read the label up to the next unescaped brace.
                    let label_start = i + 1;
                    let mut label = String::new();
                    let mut j = label_start;
                    while j < bytes.len() && bytes[j] != b'{' && bytes[j] != b'}' {
                        if bytes[j] == b'\\' {
                            match bytes.get(j + 1) {
                                Some(b'{' | b'}' | b'\\') => {
                                    label.push(bytes[j + 1] as char);
                                    j += 2;
                                    continue;
                                }
                                _ => return Err(err(j, "`\\` must escape `{`, `}` or `\\`")),
                            }
                        }
                        let ch = s[j..].chars().next().expect("in bounds");
                        label.push(ch);
                        j += ch.len_utf8();
                    }
                    if label.is_empty() {
                        return Err(err(label_start, "empty label"));
                    }
                    let id = match (&mut tree, open.last()) {
                        (None, _) => {
                            tree = Some(LayoutTree::new(label));
                            NodeId(0)
                        }
                        (Some(t), Some(parent)) => t.add_child(*parent, label),
                        (Some(_), None) => return Err(err(i, "text after the end of the tree")),
                    };
                    open.push(id);
                    i = j;
                }
                b'}' => {
                    if open.pop().is_none() || done_at.is_some() {
                        return Err(err(i, "`}` closes nothing"));
                    }
                    if open.is_empty() {
                        done_at = Some(i);
                    }
                    i += 1;
                }
                b if b.is_ascii_whitespace() && done_at.is_some() => i += 1,
                _ => {
                    let what = if done_at.is_some() {
                        "text after the end of the tree"
                    } else {
                        "text between children (labels come right after `{`)"
                    };
                    return Err(err(i, what));
                }
            }
        }
        match (tree, done_at) {
            (Some(t), Some(_)) => Ok(t),
            _ => Err(err(s.len(), &format!("{} unclosed `{{`", open.len()))),
        }
    }
}

impl std::fmt::Display for LayoutTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_bracket())
    }
}

impl std::str::FromStr for LayoutTree {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_including_escaped_labels() {
        for s in [
            "{a}",
            "{screen{group{line{w}{w}}}{group}}",
            r"{a\{b{c\}}{\\}}",
            "{ü{日本}}",
        ] {
            let t = LayoutTree::parse(s).unwrap();
            assert_eq!(t.to_bracket(), s);
        }
        let t = LayoutTree::parse(r"{a\{b{c\}}}").unwrap();
        assert_eq!(t.label(NodeId(0)), "a{b");
        assert_eq!(t.label(NodeId(1)), "c}");
    }

    #[test]
    fn malformed_strings_name_the_position() {
        for (s, pos, what) in [
            ("", 0, "expected `{`"),
            ("{a{b}", 5, "unclosed"),
            ("{a}}", 3, "closes nothing"),
            ("{a{}}", 3, "empty label"),
            ("{a}x", 3, "after the end"),
            ("{a}{b}", 3, "after the end"),
            ("{a{b}x{c}}", 5, "between children"),
            (r"{a\q}", 2, "must escape"),
            ("x{a}", 0, "expected `{`"),
        ] {
            match LayoutTree::parse(s) {
                Err(Error::Parse {
                    position, message, ..
                }) => {
                    assert_eq!(position, pos, "{s:?}: {message}");
                    assert!(message.contains(what), "{s:?}: {message}");
                }
                Ok(t) => panic!("{s:?} parsed as {t}"),
                Err(e) => panic!("{s:?}: unexpected error {e}"),
            }
        }
        // Whitespace around the tree is fine.
        assert_eq!(LayoutTree::parse("  {a{b}}\n").unwrap().len(), 2);
    }

    #[test]
    fn postorder_depth_and_mirror() {
        let t = LayoutTree::parse("{r{a{x}{y}}{b}}").unwrap();
        let labels: Vec<_> = t
            .postorder()
            .into_iter()
            .map(|n| t.label(n).to_owned())
            .collect();
        assert_eq!(labels, ["x", "y", "a", "b", "r"]);
        assert_eq!(t.depth(), 3);
        assert_eq!(t.mirrored().to_bracket(), "{r{b}{a{y}{x}}}");
    }
}

#[cfg(test)]
mod robustness {
    use super::*;

    #[test]
    fn random_strings_never_panic_and_accepted_ones_round_trip() {
        let alphabet = ['{', '}', 'a', 'b', '\\', ' ', 'é'];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 12) as usize;
            let s: String = (0..len)
                .map(|i| alphabet[((state >> (i * 5)) % alphabet.len() as u64) as usize])
                .collect();
            if let Ok(t) = LayoutTree::parse(&s) {
                assert_eq!(LayoutTree::parse(&t.to_bracket()).unwrap(), t, "{s:?}");
            }
        }
    }
}
