//! Which snippet lines of a segment lie inside a new definition: a unit the segment shows
//! whole whose name the file does not define (its nested definitions are new too, whatever
//! their names).
//!
//! Asked of each line in turn as placement walks the segment, so the answer is kept as the
//! walk goes: each header's unit end is read once (not once per line below it, which made a
//! long run of new lines quadratic), and the file's definitions are asked for a header's name
//! only when a line inside its unit is asked about (they may cost a tags query).

use std::collections::VecDeque;

use super::Context;
use super::units;
use crate::edit::lazy::segments::Segment;

/// The new units above the lines asked so far (asked in increasing order).
pub(super) struct NewUnits<'c> {
    /// The first snippet line not yet read as a possible header.
    next: usize,
    /// Headers read, in snippet order, whose unit's last line is below them and whose name
    /// the file's definitions have not been asked about: (last line, name).
    pending: VecDeque<(usize, &'c str)>,
    /// The furthest last line of a unit found new.
    reach: Option<usize>,
}

impl<'c> NewUnits<'c> {
    pub(super) fn new(seg: &Segment) -> Self {
        NewUnits {
            next: seg.lines.start,
            pending: VecDeque::new(),
            reach: None,
        }
    }

    /// Whether snippet line `i` lies inside a new unit headed above it in the segment. Lines
    /// are asked in increasing order.
    pub(super) fn covers(&mut self, ctx: &'c Context<'_>, seg: &Segment, i: usize) -> bool {
        debug_assert!(i + 1 >= self.next, "lines asked out of order");
        let lines = ctx.lines();
        while self.next < i {
            let h = self.next;
            self.next += 1;
            if lines[h].count != 0 {
                continue;
            }
            let Some(name) = units::header_name(&lines[h].text) else {
                continue;
            };
            let end =
                units::snippet_unit_end(lines, h, seg.lines.end, seg.gap_after, seg.follows());
            if let Some(end) = end.filter(|&e| e > h) {
                self.pending.push_back((end, name));
            }
        }
        if self.reach.is_some_and(|r| r >= i) {
            return true;
        }
        // A header whose unit ends above `i` ends above every later line too, and whether the
        // file defines a name does not change: each leaves the queue once.
        while let Some((end, name)) = self.pending.pop_front() {
            if end >= i && ctx.defs().headers(name).is_empty() {
                self.reach = Some(end);
                return true;
            }
        }
        false
    }
}
