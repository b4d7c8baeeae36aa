//! Java class files: the grey-box analysis loads any bytes as a class or reports an
//! error, never panics; a loaded class answers the queries the EDG builder asks.
#![no_main]

use gui_greybox::java::ClassDb;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(db) = ClassDb::from_bytes("fuzz.class", data) {
        assert_eq!(db.classes().count(), 1);
        let _ = db.listeners();
    }
});
