//! Unit tests of the lazy merge, each named for what it shows.

use super::*;
