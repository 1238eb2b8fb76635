//! Syntax through tree-sitter (docs/DESIGN.md §5.5), pure like the engines beside it: the
//! language of a path, bounded parsing, the parse errors an edit adds, which every proposal
//! carries as a `syntax:` warning, and the definitions its grammar's tags query finds; the
//! trees of the texts parsed lately are remembered for the next edits of the same file.

pub mod check;
pub mod defs;
pub mod lang;
pub(crate) mod local;
pub mod memory;
pub mod parse;

pub use check::{check, errors_once, new_errors, warning};
pub use defs::{Def, defs};
pub use lang::Lang;
pub use memory::forget_parses;
pub use parse::{Skipped, SyntaxError};
