//! Unit tests of the lazy merge, each named for the rule or the failure it shows.

use super::*;

