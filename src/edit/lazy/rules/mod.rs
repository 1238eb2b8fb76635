//! The lazy merge's rules as data: each named decision that makes or vetoes a placement or
//! a deletion, in ONE list ([`ALL`], grouped by stage), and the set of rules a merge runs with
//! ([`RuleSet`], all on by default). A merge consults a rule at its fixed point
//! (`if rules.on(Rule::X)`); `patchgate eval --rules` lists them and `eval --without NAME`
//! scores the merge with one switched off. One file per rule below says what it decides and
//! why, and holds a fixture on which the merge differs with the rule off (or, where guards
//! overlap, on which the refusal given is the rule's own only with it on).

use std::fmt;

#[cfg(test)]
mod among_new;
#[cfg(test)]
mod balance;
#[cfg(test)]
mod changed_copy;
#[cfg(test)]
mod changed_lines;
#[cfg(test)]
mod closer_floor;
#[cfg(test)]
mod deleted_copy;
#[cfg(test)]
mod doc_comments;
#[cfg(test)]
mod doubled_definition;
#[cfg(test)]
mod edge_copied;
#[cfg(test)]
mod edge_lookalike;
#[cfg(test)]
mod emptied_block;
#[cfg(test)]
mod entry_guard;
#[cfg(test)]
mod file_edges;
#[cfg(test)]
mod ground;
#[cfg(test)]
mod head_as_new;
#[cfg(test)]
mod instruction_place;
#[cfg(test)]
mod instruction_removes;
#[cfg(test)]
mod instruction_renames;
#[cfg(test)]
mod joined_blocks;
#[cfg(test)]
mod jump_lookalike;
#[cfg(test)]
mod kept_between;
#[cfg(test)]
mod licence;
#[cfg(test)]
mod loose_elsewhere;
#[cfg(test)]
mod moved_lines;
#[cfg(test)]
mod new_definitions;
#[cfg(test)]
mod rename_check;
#[cfg(test)]
mod rename_lookalike;
#[cfg(test)]
mod retyped_context;
#[cfg(test)]
mod slide;
#[cfg(test)]
mod split_conflicts;

/// The stage of the merge a rule acts in (docs/DESIGN.md §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Reading the snippet and the instruction.
    Read,
    /// Placing each segment in the file.
    Place,
    /// Aligning a placed segment against the file lines around it.
    Align,
    /// Checking the merge's deletions and result.
    Check,
}

impl Stage {
    /// The stage's name as `eval --rules` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Read => "read",
            Stage::Place => "place",
            Stage::Align => "align",
            Stage::Check => "check",
        }
    }
}

/// One rule of the lazy merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `instruction-place`.
    InstructionPlace,
    /// `instruction-renames`.
    InstructionRenames,
    /// `instruction-removes`.
    InstructionRemoves,
    /// `split-conflicts`.
    SplitConflicts,
    /// `closer-floor`.
    CloserFloor,
    /// `new-definitions`.
    NewDefinitions,
    /// `rename-lookalike`.
    RenameLookalike,
    /// `doc-comments`.
    DocComments,
    /// `changed-lines`.
    ChangedLines,
    /// `loose-elsewhere`.
    LooseElsewhere,
    /// `jump-lookalike`.
    JumpLookalike,
    /// `file-edges`.
    FileEdges,
    /// `entry-guard`.
    EntryGuard,
    /// `edge-copied`.
    EdgeCopied,
    /// `moved-lines`.
    MovedLines,
    /// `slide`.
    Slide,
    /// `edge-lookalike`.
    EdgeLookalike,
    /// `retyped-context`.
    RetypedContext,
    /// `ground`.
    Ground,
    /// `rename-check`.
    RenameCheck,
    /// `balance`.
    Balance,
    /// `licence`.
    Licence,
    /// `kept-between`.
    KeptBetween,
    /// `among-new`.
    AmongNew,
    /// `changed-copy`.
    ChangedCopy,
    /// `head-as-new`.
    HeadAsNew,
    /// `joined-blocks`.
    JoinedBlocks,
    /// `emptied-block`.
    EmptiedBlock,
    /// `doubled-definition`.
    DoubledDefinition,
    /// `deleted-copy`.
    DeletedCopy,
}

/// A rule's name, stage and one-line summary.
#[derive(Debug, Clone, Copy)]
pub struct RuleInfo {
    /// The rule.
    pub rule: Rule,
    /// Its name, as `eval --without` takes it.
    pub name: &'static str,
    /// The stage it acts in.
    pub stage: Stage,
    /// What it decides, in one line.
    pub summary: &'static str,
}

const fn info(rule: Rule, name: &'static str, stage: Stage, summary: &'static str) -> RuleInfo {
    RuleInfo {
        rule,
        name,
        stage,
        summary,
    }
}

/// Every rule, grouped by stage (not the order the merge consults them: `split-conflicts`
/// acts after `closer-floor` and the other place rules, `kept-between` before `balance`).
pub const ALL: &[RuleInfo] = &[
    info(
        Rule::InstructionPlace,
        "instruction-place",
        Stage::Read,
        "a segment no file line places goes where the instruction says (after X, in X, at the end)",
    ),
    info(
        Rule::InstructionRenames,
        "instruction-renames",
        Stage::Read,
        "`rename A to B` in the instruction lets a definition shown as B replace A",
    ),
    info(
        Rule::InstructionRemoves,
        "instruction-removes",
        Stage::Read,
        "a definition the instruction says to remove, and the snippet does not show, is deleted",
    ),
    info(
        Rule::SplitConflicts,
        "split-conflicts",
        Stage::Place,
        "a segment whose anchors name two places in the wrong order is split at a blank line",
    ),
    info(
        Rule::CloserFloor,
        "closer-floor",
        Stage::Place,
        "a segment closing the block the one before opened starts at that block's closer",
    ),
    info(
        Rule::NewDefinitions,
        "new-definitions",
        Stage::Place,
        "a definition the file lacks is new code: the file lines it repeats do not place it",
    ),
    info(
        Rule::RenameLookalike,
        "rename-lookalike",
        Stage::Place,
        "a new definition that alone could place its segment reads as a rename of its lookalike",
    ),
    info(
        Rule::DocComments,
        "doc-comments",
        Stage::Place,
        "a doc comment repeated from another definition does not pin the segment",
    ),
    info(
        Rule::ChangedLines,
        "changed-lines",
        Stage::Place,
        "a changed line clearly closest to one file line places a segment with no sure anchor",
    ),
    info(
        Rule::LooseElsewhere,
        "loose-elsewhere",
        Stage::Place,
        "repeated anchors that fit a second place a few lines apart are two readings",
    ),
    info(
        Rule::JumpLookalike,
        "jump-lookalike",
        Stage::Place,
        "sure anchors that jump over file lines, when one side also fits beside the other \
         with a line changed, are two readings",
    ),
    info(
        Rule::FileEdges,
        "file-edges",
        Stage::Place,
        "a segment the snippet opens or closes with no placeholder is pinned to the file's edge",
    ),
    info(
        Rule::EntryGuard,
        "entry-guard",
        Stage::Place,
        "new code bound for the file's end, which ends with its entry guard \
         (`if __name__ == \"__main__\":`), goes before or after it: two readings",
    ),
    info(
        Rule::EdgeCopied,
        "edge-copied",
        Stage::Place,
        "a segment no line places is not new code for the file's open edge when all its lines \
         are the file's, or the snippet opens there with a blank line the file's start lacks",
    ),
    info(
        Rule::MovedLines,
        "moved-lines",
        Stage::Align,
        "a file line the snippet shows elsewhere, every copy of it, was moved and may go (at an open edge too)",
    ),
    info(
        Rule::Slide,
        "slide",
        Stage::Align,
        "new code a placeholder cuts mid-block is slid so the block balances",
    ),
    info(
        Rule::EdgeLookalike,
        "edge-lookalike",
        Stage::Align,
        "an edge that changes file lines to reach context it could take nearer its pin \
         takes the nearer copy: it inserts, and changes and deletes nothing",
    ),
    info(
        Rule::RetypedContext,
        "retyped-context",
        Stage::Align,
        "a line shown as it reads rendered (a comment without code marks or entities, code \
         without anonymous lifetimes or with other quotes) is the file's line, unless the \
         snippet then changes nothing but blank lines",
    ),
    info(
        Rule::Ground,
        "ground",
        Stage::Check,
        "a deletion's anchors must be grounded: lines among new code license nothing by chance",
    ),
    info(
        Rule::RenameCheck,
        "rename-check",
        Stage::Check,
        "a definition given another name may change only its name",
    ),
    info(
        Rule::Balance,
        "balance",
        Stage::Check,
        "a merge that unbalances brackets the snippet keeps balanced is refused",
    ),
    info(
        Rule::Licence,
        "licence",
        Stage::Check,
        "every file line the result lost must hold a licence from the file and snippet alone",
    ),
    info(
        Rule::KeptBetween,
        "kept-between",
        Stage::Check,
        "a segment keeping file lines between two lines it writes together is refused",
    ),
    info(
        Rule::AmongNew,
        "among-new",
        Stage::Check,
        "a deletion licensed only by a block among new lines is refused",
    ),
    info(
        Rule::ChangedCopy,
        "changed-copy",
        Stage::Check,
        "a merge that changes a line the file has once while adding its text as new code is refused",
    ),
    info(
        Rule::HeadAsNew,
        "head-as-new",
        Stage::Check,
        "a segment's first line under a placeholder read as new code though the file has it there, \
         or alone above kept lines though the file has it elsewhere, is refused",
    ),
    info(
        Rule::JoinedBlocks,
        "joined-blocks",
        Stage::Check,
        "a deletion between two kept lines that joins the block above to the block below is refused",
    ),
    info(
        Rule::EmptiedBlock,
        "emptied-block",
        Stage::Check,
        "a new `} else … {` (or `elsif …`) line under an unshown header at its depth, emptying that header's block, is refused",
    ),
    info(
        Rule::DoubledDefinition,
        "doubled-definition",
        Stage::Check,
        "a result that holds one definition twice in one scope, where the file and the snippet \
         each hold it at most once there, is refused",
    ),
    info(
        Rule::DeletedCopy,
        "deleted-copy",
        Stage::Check,
        "a segment that keeps context lines at one copy in the file and deletes another copy \
         of them nearby has a second reading that deletes less: it is refused",
    ),
];

impl Rule {
    /// The rule's entry in [`ALL`].
    pub fn info(self) -> &'static RuleInfo {
        ALL.iter()
            .find(|r| r.rule == self)
            .expect("every rule is listed in ALL")
    }

    /// The rule named `name`, if any.
    pub fn named(name: &str) -> Option<Rule> {
        ALL.iter().find(|r| r.name == name).map(|r| r.rule)
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.info().name)
    }
}

/// The rules a merge runs with: all on unless switched off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuleSet {
    off: u32,
}

impl RuleSet {
    /// Every rule on.
    pub const ALL_ON: RuleSet = RuleSet { off: 0 };

    /// This set with `rule` switched off.
    #[must_use]
    pub fn without(self, rule: Rule) -> RuleSet {
        RuleSet {
            off: self.off | rule.bit(),
        }
    }

    /// Whether `rule` is on.
    pub fn on(self, rule: Rule) -> bool {
        self.off & rule.bit() == 0
    }
}

#[cfg(test)]
pub(super) mod fixture {
    //! What every rule's fixture checks: the merge with the rule on and off.

    use super::{Rule, RuleSet};
    use crate::edit::{ErrorCode, Hints};

    /// The merge's result, or its refusal's code and message.
    pub(crate) type Outcome = Result<String, (ErrorCode, String)>;

    /// A small hand-made file and snippet on which the merge differs with `rule` off.
    pub(crate) struct Fixture {
        pub(crate) rule: Rule,
        pub(crate) path: &'static str,
        pub(crate) file: &'static str,
        pub(crate) snippet: &'static str,
        pub(crate) instruction: Option<&'static str>,
    }

    impl Fixture {
        /// The merge under `rules`.
        pub(crate) fn merge(&self, rules: RuleSet) -> Outcome {
            let hints = Hints {
                path: Some(self.path),
                instruction: self.instruction,
            };
            crate::edit::lazy::merge_with(self.file, self.snippet, &hints, rules)
                .map(|m| m.content)
                .map_err(|e| (e.code, e.message))
        }

        /// Assert that the merge's outcome differs in kind with the fixture's rule off: a
        /// result against a refusal, another result, or a refusal with another code (a
        /// refusal's wording alone does not count).
        pub(crate) fn differs(&self) {
            let on = kind(self.merge(RuleSet::ALL_ON));
            let off = kind(self.merge(RuleSet::ALL_ON.without(self.rule)));
            assert_ne!(on, off, "the merge must differ with `{}` off", self.rule);
        }
    }

    /// Where guards overlap, the rule's effect is only WHICH check refuses: assert that with
    /// the rule on the refusal is its own (its message holds `own`) and with it off another
    /// check's (its message holds `other`, not `own`).
    pub(crate) fn refused_otherwise(fixture: &Fixture, own: &str, other: &str) {
        let on = fixture.merge(RuleSet::ALL_ON);
        let off = fixture.merge(RuleSet::ALL_ON.without(fixture.rule));
        let (Err((_, on)), Err((_, off))) = (on, off) else {
            panic!(
                "`{}`'s fixture must be refused with it on and off",
                fixture.rule
            );
        };
        assert!(on.contains(own) && !on.contains(other), "on: {on}");
        assert!(off.contains(other) && !off.contains(own), "off: {off}");
    }

    /// Assert a rule's category: with the rule off the merge gives a text that `off` says is
    /// the category's wrong reading; with it on the merge is refused, its message holding `on`.
    pub(crate) fn refused_where_off_merges(
        fixture: &Fixture,
        off: impl Fn(&str) -> bool,
        on: &str,
    ) {
        let merged = fixture.merge(RuleSet::ALL_ON.without(fixture.rule));
        assert!(
            matches!(&merged, Ok(c) if off(c)),
            "the category, with `{}` off: {merged:?}",
            fixture.rule
        );
        let refused = fixture.merge(RuleSet::ALL_ON);
        assert!(
            matches!(&refused, Err((_, m)) if m.contains(on)),
            "{refused:?}"
        );
    }

    /// An outcome without its refusal's wording.
    fn kind(outcome: Outcome) -> Result<String, ErrorCode> {
        outcome.map_err(|(code, _)| code)
    }

    /// Every rule's fixture, in [`super::ALL`]'s order.
    pub(crate) const ALL: &[&Fixture] = &[
        &super::instruction_place::FIXTURE,
        &super::instruction_renames::FIXTURE,
        &super::instruction_removes::FIXTURE,
        &super::split_conflicts::FIXTURE,
        &super::closer_floor::FIXTURE,
        &super::new_definitions::FIXTURE,
        &super::rename_lookalike::FIXTURE,
        &super::doc_comments::FIXTURE,
        &super::changed_lines::FIXTURE,
        &super::loose_elsewhere::FIXTURE,
        &super::jump_lookalike::FIXTURE,
        &super::file_edges::FIXTURE,
        &super::entry_guard::FIXTURE,
        &super::edge_copied::FIXTURE,
        &super::moved_lines::FIXTURE,
        &super::slide::FIXTURE,
        &super::edge_lookalike::FIXTURE,
        &super::retyped_context::FIXTURE,
        &super::ground::FIXTURE,
        &super::rename_check::FIXTURE,
        &super::balance::FIXTURE,
        &super::licence::FIXTURE,
        &super::kept_between::FIXTURE,
        &super::among_new::FIXTURE,
        &super::changed_copy::FIXTURE,
        &super::head_as_new::FIXTURE,
        &super::joined_blocks::FIXTURE,
        &super::emptied_block::FIXTURE,
        &super::doubled_definition::FIXTURE,
        &super::deleted_copy::FIXTURE,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_listed_once_with_a_unique_name() {
        for (k, r) in ALL.iter().enumerate() {
            assert_eq!(r.rule as usize, k, "{} out of order", r.name);
            assert_eq!(
                fixture::ALL[k].rule,
                r.rule,
                "{}'s fixture out of order",
                r.name
            );
            assert_eq!(Rule::named(r.name), Some(r.rule));
        }
        assert!(ALL.len() < 32, "a RuleSet holds at most 32 rules");
    }

    #[test]
    fn a_rule_switched_off_is_off_and_the_rest_stay_on() {
        let set = RuleSet::ALL_ON.without(Rule::Slide);
        assert!(!set.on(Rule::Slide));
        assert!(
            ALL.iter()
                .filter(|r| r.rule != Rule::Slide)
                .all(|r| set.on(r.rule))
        );
        assert_eq!(RuleSet::default(), RuleSet::ALL_ON);
    }
}
