//! The check stage of the lazy merge (docs/DESIGN.md §5.1 steps 4b–6): every rule that vetoes a
//! reading or a deletion after placement and alignment lives here, so a deletion bug has one
//! room to go to — grounding (`ground`), renames (`rename`), the guards on the result
//! (`guards`), deletions that join two blocks (`joins`), new lines that empty a block (`emptied`), a definition left twice in one scope (`doubled`), context kept at one copy and deleted at another (`copies`), the independent licence check (`licence`), the evidence and the one decision
//! made of it (`evidence`), and the reading check on the result's syntax (`parses`).

pub(crate) mod copies;
pub(crate) mod doubled;
pub(crate) mod emptied;
pub(crate) mod evidence;
pub(crate) mod ground;
pub(crate) mod guards;
pub(crate) mod joins;
pub(crate) mod licence;
pub(crate) mod parses;
pub(crate) mod rename;
