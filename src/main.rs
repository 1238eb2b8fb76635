//! The `patchgate` binary: parse the command line, run the command, map outcomes to exit codes
//! (0 success, 1 refused, 2 usage, I/O or internal error).

#![forbid(unsafe_code)]
// No function over 100 lines (clippy.toml), tests aside.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use patchgate::cli::{Cli, Command};

mod app;

use app::{
    apply, config, demo, doctor, eval, log, man, merge, review, rewind, search, search_eval, serve,
    undo,
};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // No command: the gate with its review TUI.
    let command = cli.command.unwrap_or(Command::Review(cli.review));
    match run_command(command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("patchgate: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run_command(command: Command) -> Result<ExitCode> {
    // Commands that read or write the state directory (journal, tokens, intents, index; the
    // running gate's address and token that `config` writes into a client's file) refuse
    // one another user could have planted; the demo chooses its own.
    if matches!(
        command,
        Command::Review(_)
            | Command::Apply(_)
            | Command::Log(_)
            | Command::Undo(_)
            | Command::Rewind(_)
            | Command::Serve(_)
            | Command::Search(_)
            | Command::Config(_)
    ) {
        patchgate::workspace::state::ensure_state_dir()?;
    }
    match command {
        Command::Review(args) => review(args),
        Command::Demo(args) => demo(args),
        Command::Apply(args) => apply(args),
        Command::Merge(args) => merge(args),
        Command::Eval(args) => eval(args),
        Command::Search(args) => search(args),
        Command::SearchEval(args) => search_eval(args),
        Command::Log(args) => log(args),
        Command::Undo(args) => undo(args),
        Command::Rewind(args) => rewind(args),
        Command::Serve(args) => serve(args),
        Command::Config(args) => config(args),
        Command::Doctor(args) => doctor(args),
        Command::Completions(args) => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut cmd, "patchgate", &mut script);
            app::out::bytes(&script);
            Ok(ExitCode::SUCCESS)
        }
        Command::Man(args) => man(args),
    }
}
