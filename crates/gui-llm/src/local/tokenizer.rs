//! The SentencePiece tokenizer a GGUF file carries (`tokenizer.ggml.model = "llama"`):
//! pieces with scores, no merge list. Encoding follows SentencePiece's BPE mode as
//! llama.cpp implements it (`llm_tokenizer_spm`): start from single characters and
//! repeatedly merge the adjacent pair whose concatenation is a piece with the highest
//! score; characters that are no piece fall back to their UTF-8 bytes (`<0xNN>`).
//!
//! Reading the vocabulary from the model file means no `tokenizer.json` has to be fetched
//! from a model hub, which this machine cannot reach. Cost: O(n log n) in the characters
//! of the text, with a heap of candidate merges.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use crate::error::{Error, Result};

/// SentencePiece's stand-in for a space.
const SPACE: char = '\u{2581}';
/// `tokenizer.ggml.token_type` values (llama.cpp's `llama_token_type`).
const TYPE_CONTROL: i32 = 3;
const TYPE_USER_DEFINED: i32 = 4;
const TYPE_BYTE: i32 = 6;

/// A vocabulary of scored pieces, read from GGUF metadata.
#[derive(Debug, Clone)]
pub struct GgufTokenizer {
    pieces: Vec<String>,
    scores: Vec<f32>,
    types: Vec<i32>,
    ids: HashMap<String, u32>,
    byte_ids: [Option<u32>; 256],
    unknown: u32,
}

impl GgufTokenizer {
    /// The tokenizer described by `pieces`, `scores` and `types` (all of one length).
    pub fn new(
        pieces: Vec<String>,
        scores: Vec<f32>,
        types: Vec<i32>,
        unknown: u32,
    ) -> Result<Self> {
        if pieces.len() != scores.len() || pieces.len() != types.len() {
            return Err(Error::Config(format!(
                "tokenizer: {} pieces, {} scores, {} types",
                pieces.len(),
                scores.len(),
                types.len()
            )));
        }
        let mut ids = HashMap::with_capacity(pieces.len());
        let mut byte_ids = [None; 256];
        for (id, piece) in pieces.iter().enumerate() {
            let id = id as u32;
            if types[id as usize] == TYPE_BYTE {
                if let Some(byte) = piece
                    .strip_prefix("<0x")
                    .and_then(|p| p.strip_suffix('>'))
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                {
                    byte_ids[byte as usize] = Some(id);
                }
                continue;
            }
            ids.entry(piece.clone()).or_insert(id);
        }
        Ok(Self {
            pieces,
            scores,
            types,
            ids,
            byte_ids,
            unknown,
        })
    }

    /// The id of a whole piece such as `<start_of_turn>`.
    pub fn piece_id(&self, piece: &str) -> Option<u32> {
        self.ids.get(piece).copied()
    }

    pub fn vocab_size(&self) -> usize {
        self.pieces.len()
    }

    /// The ids of `text` (no BOS added). Runs of newlines that are user-defined pieces
    /// are matched whole first, as llama.cpp does for user-defined tokens.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        let mut rest = text;
        while !rest.is_empty() {
            let cut = rest.find('\n').unwrap_or(rest.len());
            self.encode_plain(&rest[..cut], &mut out);
            rest = &rest[cut..];
            let run = rest.len() - rest.trim_start_matches('\n').len();
            if run > 0 {
                self.encode_newlines(run, &mut out);
                rest = &rest[run..];
            }
        }
        out
    }

    fn encode_newlines(&self, mut run: usize, out: &mut Vec<u32>) {
        while run > 0 {
            let take = (1..=run)
                .rev()
                .find(|n| {
                    self.ids
                        .get(&"\n".repeat(*n))
                        .is_some_and(|id| self.types[*id as usize] == TYPE_USER_DEFINED || *n == 1)
                })
                .unwrap_or(1);
            match self.ids.get(&"\n".repeat(take)) {
                Some(id) => out.push(*id),
                None => out.push(self.byte_ids[b'\n' as usize].unwrap_or(self.unknown)),
            }
            run -= take;
        }
    }

    /// SentencePiece BPE over one stretch of text without newlines.
    fn encode_plain(&self, text: &str, out: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        let text: String = text
            .chars()
            .map(|c| if c == ' ' { SPACE } else { c })
            .collect();
        // Symbols as a doubly linked list of byte ranges into `text`.
        let mut symbols: Vec<Symbol> = text
            .char_indices()
            .map(|(start, c)| Symbol {
                start,
                len: c.len_utf8(),
                prev: None,
                next: None,
            })
            .collect();
        let n = symbols.len();
        for (i, symbol) in symbols.iter_mut().enumerate() {
            symbol.prev = i.checked_sub(1);
            symbol.next = (i + 1 < n).then_some(i + 1);
        }
        let mut heap = BinaryHeap::new();
        for i in 0..n.saturating_sub(1) {
            self.push_candidate(&text, &symbols, i, i + 1, &mut heap);
        }
        while let Some(candidate) = heap.pop() {
            let (left, right) = (candidate.left, candidate.right);
            // Stale: one side was merged away or grew since the candidate was pushed.
            if symbols[left].len == 0
                || symbols[right].len == 0
                || symbols[left].len + symbols[right].len != candidate.len
                || symbols[left].next != Some(right)
            {
                continue;
            }
            symbols[left].len += symbols[right].len;
            symbols[right].len = 0;
            symbols[left].next = symbols[right].next;
            if let Some(next) = symbols[right].next {
                symbols[next].prev = Some(left);
            }
            if let Some(prev) = symbols[left].prev {
                self.push_candidate(&text, &symbols, prev, left, &mut heap);
            }
            if let Some(next) = symbols[left].next {
                self.push_candidate(&text, &symbols, left, next, &mut heap);
            }
        }
        let mut at = Some(0);
        while let Some(i) = at {
            let s = &symbols[i];
            let piece = &text[s.start..s.start + s.len];
            match self.ids.get(piece) {
                Some(id) => out.push(*id),
                None => out.extend(
                    piece
                        .bytes()
                        .map(|b| self.byte_ids[b as usize].unwrap_or(self.unknown)),
                ),
            }
            at = s.next;
        }
    }

    fn push_candidate(
        &self,
        text: &str,
        symbols: &[Symbol],
        left: usize,
        right: usize,
        heap: &mut BinaryHeap<Candidate>,
    ) {
        let (l, r) = (&symbols[left], &symbols[right]);
        let len = l.len + r.len;
        if let Some(id) = self.ids.get(&text[l.start..l.start + len]) {
            heap.push(Candidate {
                score: self.scores[*id as usize],
                left,
                right,
                len,
            });
        }
    }

    /// The text of `ids`: control pieces dropped, byte pieces joined into UTF-8.
    pub fn decode(&self, ids: &[u32]) -> String {
        let mut bytes = Vec::new();
        for &id in ids {
            let Some(piece) = self.pieces.get(id as usize) else {
                continue;
            };
            match self.types[id as usize] {
                TYPE_CONTROL => {}
                TYPE_BYTE => {
                    if let Some(b) = piece
                        .strip_prefix("<0x")
                        .and_then(|p| p.strip_suffix('>'))
                        .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                    {
                        bytes.push(b);
                    }
                }
                _ => bytes.extend(piece.replace(SPACE, " ").bytes()),
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[derive(Debug)]
struct Symbol {
    start: usize,
    /// Bytes; 0 once merged into its left neighbour.
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

/// A possible merge; the heap pops the best score, then the leftmost.
#[derive(Debug)]
struct Candidate {
    score: f32,
    left: usize,
    right: usize,
    len: usize,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.left.cmp(&self.left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy() -> GgufTokenizer {
        let pieces = [
            "<unk>",
            "<0x21>",
            "a",
            "b",
            "ab",
            "\u{2581}",
            "\u{2581}ab",
            "\n",
            "\n\n",
        ];
        let scores = [0.0, 0.0, -1.0, -1.0, -0.5, -1.0, -0.1, 0.0, 0.0];
        let types = [2, 6, 1, 1, 1, 1, 1, 4, 4];
        GgufTokenizer::new(
            pieces.iter().map(|p| p.to_string()).collect(),
            scores.to_vec(),
            types.to_vec(),
            0,
        )
        .unwrap()
    }

    #[test]
    fn merges_by_score_and_falls_back_to_bytes() {
        let t = toy();
        // " ab" -> "▁ab"; "!" is no piece but has a byte piece; "c" has neither.
        assert_eq!(t.encode("ab ab!"), vec![4, 6, 1]);
        assert_eq!(t.encode("c"), vec![0]);
        assert_eq!(t.encode("a\n\n\nb"), vec![2, 8, 7, 3]);
        assert_eq!(t.decode(&t.encode("ab ab!")), "ab ab!");
    }
}
