//! Umbrella crate of the workspace: re-exports the libraries under one name and hosts the
//! strategy binaries (`monkey`, ...), the command-line plumbing they share ([`cli`]), the
//! cross-crate integration tests and the benches.
pub use gui_core as core;
pub use gui_driver as driver;
pub use gui_explore as explore;
pub use gui_greybox as greybox;
pub use gui_llm as llm;
pub use gui_report as report;
pub use gui_rl as rl;
pub use gui_vision as vision;

pub mod cli;
pub mod gauntlet;
pub mod pirltest;
pub mod progress;
pub mod visiondroid;

/// `println!` for the binaries' results on stdout, except that a reader who has gone away
/// (`monkey ... | head -1`) ends the process quietly with status 0, as Unix tools do,
/// instead of a panic about a broken pipe. Every finished step is already on disk by then.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            panic!("writing to stdout: {e}");
        }
    }};
}
