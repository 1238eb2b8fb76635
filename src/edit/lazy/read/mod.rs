//! The read stage of the lazy merge (docs/DESIGN.md §5.1 steps 1–3): the snippet's text made
//! into classified lines (`prepare`), its placeholders and narration read (`placeholder`), cut
//! into segments between placeholders (`segments`), and the agent's `instruction` read for
//! hints (`hints`, `impls`); `shown` reads what a snippet shows of the file the same way, for
//! the unseen-deletion measure. Nothing here places a line or deletes one.

pub(crate) mod hints;
pub(crate) mod impls;
pub(crate) mod placeholder;
pub(crate) mod prepare;
pub(crate) mod segments;
pub(crate) mod shown;
