//! Bracket-notation layout trees: any text parses or is an error; a parsed tree writes
//! back to bracket notation that parses to the same tree.
#![no_main]

use gui_layout::LayoutTree;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(tree) = LayoutTree::parse(text) {
        assert!(!tree.is_empty());
        let written = tree.to_bracket();
        let again = LayoutTree::parse(&written).expect("written bracket notation parses");
        assert_eq!(again.to_bracket(), written);
    }
});
