//! An in-process app model drawn to pixels (placeholder; filled in below).
