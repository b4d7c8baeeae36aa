//! JavaScript sources: the grey-box analysis turns any text into functions and handlers,
//! or a script error, never a panic.
#![no_main]

use gui_greybox::js::{JsAnalysis, JsConfig, Script};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|source: &str| {
    let scripts = [Script {
        name: "fuzz.js".into(),
        source: source.into(),
    }];
    let analysis = JsAnalysis::analyse(&scripts, &JsConfig::default());
    for e in analysis.errors() {
        assert_eq!(e.script, "fuzz.js");
    }
    for f in 0..analysis.functions().len() {
        let _ = analysis.read_write(f);
    }
});
