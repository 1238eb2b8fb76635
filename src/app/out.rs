//! Standard output for the commands: a reader that went away (`patchgate search … | head -1`,
//! `patchgate man | true`) ends the command quietly with status 0, as `git log | head` does,
//! instead of a panic or an error.

use std::io::Write;

/// Print to standard output (like `print!`); a closed reader ends the process with status 0.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::app::out::emit(format_args!($($arg)*))
    };
}

/// Print a line to standard output (like `println!`); a closed reader ends the process with
/// status 0.
macro_rules! outln {
    () => {
        $crate::app::out::emit(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::app::out::emit(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};

/// Write `args` to standard output and flush it.
pub(crate) fn emit(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| stdout.flush());
    settle(written);
}

/// Write `bytes` to standard output and flush it.
pub(crate) fn bytes(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_all(bytes).and_then(|()| stdout.flush());
    settle(written);
}

/// A write's outcome: a closed reader exits 0 quietly; any other failure exits 2 with a
/// message (standard output is gone, so there is nothing else to do).
fn settle(written: std::io::Result<()>) {
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            // Standard error may be gone too; nothing is left to report to.
            let _ = writeln!(
                std::io::stderr(),
                "patchgate: error: cannot write to standard output: {e}"
            );
            std::process::exit(2);
        }
    }
}
