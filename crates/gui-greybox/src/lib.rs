//! Grey-box GUI testing (Arlt, Bertolini, Schäf, Banerjee, Memon, ISSTA 2012).

mod rw;

pub use rw::ReadWrite;
