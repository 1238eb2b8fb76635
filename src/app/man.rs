//! The `man` command: patchgate(1) and one page per command (patchgate-COMMAND(1)), each with
//! clap's sections (synopsis, description, options) and EXIT STATUS (the command's
//! `after_long_help`), ENVIRONMENT (the variables it reads) and SEE ALSO (the pages generated).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::CommandFactory;

use patchgate::cli::{Cli, ManArgs};

use super::out::{bytes, outln};

/// The program's name, the main page's title.
const PROGRAM: &str = "patchgate";

/// The man section of every page.
const SECTION: &str = "1";

/// The environment variables patchgate reads, each with what it changes.
const VARIABLES: &[(&str, &str)] = &[
    (
        "PATCHGATE_STATE_DIR",
        "The state directory: the journal and its pre-images, the agents' tokens (tokens/), \
         the running gates' discovery entries (gates/), the search index and the log. \
         Default: $XDG_STATE_HOME/patchgate, else ~/.local/state/patchgate, else (no HOME) \
         patchgate-state-UID in the temporary directory.",
    ),
    (
        "XDG_STATE_HOME",
        "Where the state directory is when PATCHGATE_STATE_DIR is not set: \
         $XDG_STATE_HOME/patchgate.",
    ),
    (
        "PATCHGATE_CONFIG",
        "Your own patchgate config file (policy, path rules, the model [fallback] and [search], \
         journal_max_bytes; its api_key_env names the variable that holds the model's key). \
         Default: $XDG_CONFIG_HOME/patchgate/config.toml, else ~/.config/patchgate/config.toml.",
    ),
    (
        "XDG_CONFIG_HOME",
        "Where your config is when PATCHGATE_CONFIG is not set; for config and doctor, also \
         where VS Code keeps its user mcp.json (default ~/.config).",
    ),
    (
        "HOME",
        "The default of the directories above, and of the clients' user files (~/.claude.json, \
         ~/.claude/settings.json, ~/.codex, ~/.cursor).",
    ),
    (
        "PATCHGATE_TOKEN",
        "The agents' bearer token for /mcp, as --token (with review --connect: the gate's \
         reviewer token).",
    ),
    (
        "PATCHGATE_LOG",
        "The log file (default: patchgate.log in the state directory).",
    ),
    (
        "PATCHGATE_LOG_LEVEL",
        "How much is logged: error, warn, info (the default), debug or trace.",
    ),
    (
        "XDG_RUNTIME_DIR",
        "Where the note naming the process that holds a root's gate is kept (one gate per \
         root): $XDG_RUNTIME_DIR/patchgate, else patchgate-UID in the temporary directory.",
    ),
    (
        "NO_COLOR",
        "Set and not empty: the TUI has no colours under --color auto.",
    ),
    ("VISUAL", "The editor the TUI's E key opens a proposal in."),
    ("EDITOR", "The editor when VISUAL is not set (default vi)."),
    (
        "CODEX_HOME",
        "Codex's directory (default ~/.codex), whose config.toml config codex writes and doctor \
         reads.",
    ),
    (
        "PATH",
        "The patchgate found on PATH is the one a client configuration starts (else this \
         binary).",
    ),
    (
        "TMPDIR",
        "The temporary directory (the demo's project and state, search-eval's snapshots, the \
         TUI's editor files).",
    ),
];

/// The state directory's variables, which every command that keeps state reads.
const STATE: &[&str] = &["PATCHGATE_STATE_DIR", "XDG_STATE_HOME", "HOME"];
/// The user's config's.
const CONFIG: &[&str] = &["PATCHGATE_CONFIG", "XDG_CONFIG_HOME", "HOME"];
/// The log's.
const LOG: &[&str] = &["PATCHGATE_LOG", "PATCHGATE_LOG_LEVEL"];
/// The TUI's.
const TUI: &[&str] = &["NO_COLOR", "VISUAL", "EDITOR", "TMPDIR"];

/// The variables `command` reads (`None`: the program, all of them); `None` for a command
/// this table does not know yet, so that a new command cannot get a page that says nothing.
fn variables_of(command: Option<&str>) -> Option<Vec<&'static str>> {
    let groups: &[&[&str]] = match command {
        None => return Some(VARIABLES.iter().map(|(name, _)| *name).collect()),
        Some("review") => &[
            STATE,
            CONFIG,
            LOG,
            TUI,
            &["PATCHGATE_TOKEN", "XDG_RUNTIME_DIR"],
        ],
        Some("serve") => &[STATE, CONFIG, LOG, &["PATCHGATE_TOKEN", "XDG_RUNTIME_DIR"]],
        Some("demo") => &[CONFIG, LOG, TUI],
        Some("apply") => &[STATE, CONFIG, LOG, TUI],
        Some("merge") => &[CONFIG],
        Some("search") => &[STATE, CONFIG],
        Some("search-eval") => &[&["TMPDIR"]],
        Some("log" | "undo" | "rewind") => &[STATE],
        Some("config") => &[STATE, &["XDG_CONFIG_HOME", "CODEX_HOME", "PATH"]],
        Some("doctor") => &[STATE, &["XDG_CONFIG_HOME", "CODEX_HOME"]],
        Some("eval" | "completions" | "man") => &[],
        Some(_) => return None,
    };
    let mut names: Vec<&str> = Vec::new();
    for name in groups.iter().flat_map(|g| g.iter()) {
        if !names.contains(name) {
            names.push(name);
        }
    }
    Some(names)
}

/// `patchgate man [COMMAND] [--dir DIR]`.
pub(crate) fn man(args: ManArgs) -> Result<ExitCode> {
    let cli = program();
    if let Some(dir) = &args.dir {
        for file in write_all(&cli, dir)? {
            outln!("{}", file.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let page = match args.command.as_deref() {
        None => render(&cli, None)?,
        Some(name) => match cli.find_subcommand(name) {
            Some(sub) => render(sub, Some(name))?,
            None => bail!(
                "no command `{name}`: the pages are {}",
                page_names(&cli).join(", ")
            ),
        },
    };
    bytes(&page);
    Ok(ExitCode::SUCCESS)
}

/// The command line as the pages show it: built (so each command knows its full name), with
/// no `help` command, which has no page of its own.
fn program() -> clap::Command {
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    cli
}

/// Every page's name (`patchgate`, `patchgate-apply`, …), the program's first.
fn page_names(cli: &clap::Command) -> Vec<String> {
    std::iter::once(PROGRAM.to_string())
        .chain(
            commands(cli)
                .iter()
                .map(|c| format!("{PROGRAM}-{}", c.get_name())),
        )
        .collect()
}

/// The commands that get a page.
fn commands(cli: &clap::Command) -> Vec<&clap::Command> {
    cli.get_subcommands().filter(|c| !c.is_hide_set()).collect()
}

/// Write every page into `dir` (made when missing); the files written.
fn write_all(cli: &clap::Command, dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let mut pages = vec![(PROGRAM.to_string(), render(cli, None)?)];
    for sub in commands(cli) {
        let name = sub.get_name();
        pages.push((format!("{PROGRAM}-{name}"), render(sub, Some(name))?));
    }
    let mut written = Vec::new();
    for (name, page) in pages {
        let file = dir.join(format!("{name}.{SECTION}"));
        std::fs::write(&file, page).with_context(|| format!("cannot write {}", file.display()))?;
        written.push(file);
    }
    Ok(written)
}

/// One page: the program's (`command` is `None`) or a command's.
fn render(cmd: &clap::Command, command: Option<&str>) -> Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.clone())
        .section(SECTION)
        .source(format!("{PROGRAM} {}", env!("CARGO_PKG_VERSION")));
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    page.extend_from_slice(synopsis(cmd).as_bytes());
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    if command.is_none() {
        man.render_subcommands_section(&mut page)?;
    }
    let exit = cmd
        .get_after_long_help()
        .map(ToString::to_string)
        .context("a command without its exit status")?;
    let exit = exit.strip_prefix("Exit status: ").unwrap_or(&exit);
    page.extend_from_slice(format!(".SH \"EXIT STATUS\"\n{}\n", text(exit)).as_bytes());
    page.extend_from_slice(environment(command)?.as_bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(&mut page)?;
    }
    page.extend_from_slice(see_also(cmd, command).as_bytes());
    Ok(page)
}

/// SYNOPSIS: the command's full name, each option with its value (`[--root DIR]`), a required
/// choice of options as `(--stdio | --listen ADDR)`, then the operands.
fn synopsis(cmd: &clap::Command) -> String {
    let name = cmd.get_bin_name().unwrap_or(cmd.get_name());
    let mut words = vec![format!("\\fB{}\\fR", text(name))];
    let choices: Vec<&clap::ArgGroup> = cmd.get_groups().filter(|g| g.is_required_set()).collect();
    let chosen = |arg: &clap::Arg| {
        choices
            .iter()
            .any(|g| g.get_args().any(|id| id == arg.get_id()))
    };
    for group in &choices {
        let alternatives: Vec<String> = group
            .get_args()
            .filter_map(|id| cmd.get_arguments().find(|a| a.get_id() == id))
            .map(option_words)
            .collect();
        words.push(format!("({})", alternatives.join(" | ")));
    }
    let options = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set() && !chosen(a));
    for arg in options {
        let option = option_words(arg);
        words.push(if arg.is_required_set() {
            option
        } else {
            format!("[{option}]")
        });
    }
    for arg in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let name = value_names(arg);
        let many = arg.get_num_args().is_some_and(|r| r.max_values() > 1);
        let dots = if many { "..." } else { "" };
        words.push(if arg.is_required_set() {
            format!("\\fI{}\\fR{dots}", text(&name))
        } else {
            format!("[\\fI{}\\fR{dots}]", text(&name))
        });
    }
    if cmd.has_subcommands() {
        words.push("[\\fICOMMAND\\fR]".to_string());
    }
    format!(".SH SYNOPSIS\n{}\n", words.join(" "))
}

/// An option as the synopsis shows it: `-p N`, `--root DIR`, `-R|--reverse`, `--allow-host
/// HOST...` (repeatable).
fn option_words(arg: &clap::Arg) -> String {
    let bold = |flag: String| format!("\\fB{}\\fR", text(&flag));
    let mut words = match (arg.get_short(), arg.get_long()) {
        (Some(s), Some(l)) => format!("{}|{}", bold(format!("-{s}")), bold(format!("--{l}"))),
        (Some(s), None) => bold(format!("-{s}")),
        (None, Some(l)) => bold(format!("--{l}")),
        (None, None) => bold(arg.get_id().to_string()),
    };
    if arg.get_num_args().is_some_and(|r| r.takes_values()) {
        words.push_str(&format!(" \\fI{}\\fR", text(&value_names(arg))));
    }
    if matches!(arg.get_action(), clap::ArgAction::Append) {
        words.push_str("...");
    }
    words
}

/// The names of an argument's values (`DIR`), else its own name in capitals.
fn value_names(arg: &clap::Arg) -> String {
    match arg.get_value_names() {
        Some(names) => names
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" "),
        None => arg.get_id().to_string().to_uppercase(),
    }
}

/// The ENVIRONMENT section of `command`'s page.
fn environment(command: Option<&str>) -> Result<String> {
    let mut section = String::from(".SH ENVIRONMENT\n");
    let names = variables_of(command).with_context(|| {
        format!(
            "the environment of `{}` is not listed",
            command.unwrap_or_default()
        )
    })?;
    if names.is_empty() {
        section.push_str("This command reads no environment variable.\n");
    }
    for name in names {
        let what = VARIABLES
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, what)| what);
        section.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", text(name), text(what)));
    }
    Ok(section)
}

/// SEE ALSO: on the program's page every command's page, on a command's the program's.
fn see_also(cmd: &clap::Command, command: Option<&str>) -> String {
    let names = match command {
        None => page_names(cmd).into_iter().skip(1).collect(),
        Some(_) => vec![PROGRAM.to_string()],
    };
    let refs: Vec<String> = names
        .iter()
        .map(|n| format!("\\fB{}\\fR({SECTION})", text(n)))
        .collect();
    format!(".SH \"SEE ALSO\"\n{}\n", refs.join(", "))
}

/// `s` as roff running text: backslashes and hyphens escaped, and no line starting with a
/// control character.
fn text(s: &str) -> String {
    let escaped = s.replace('\\', "\\e").replace('-', "\\-");
    escaped
        .lines()
        .map(|line| {
            if line.starts_with(['.', '\'']) {
                format!("\\&{line}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
