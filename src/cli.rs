//! Command-line parsing (clap) into the commands `main` runs. The contract is docs/DESIGN.md §2.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::edit::Format;

/// patchgate: review and merge the file edits of AI coding agents.
#[derive(Debug, Parser)]
#[command(
    name = "patchgate",
    version,
    about,
    long_about = "A human approval gate and deterministic merge engines for the file edits of \
        AI coding agents.\n\nWith no command, patchgate runs `review`: the gate for --root and \
        its TUI, where a person accepts, edits or rejects each edit an agent sends over MCP \
        (`patchgate config` connects a client). The commands below apply patch files, merge \
        edits on the command line, search code, and read or undo the decision journal.",
    args_conflicts_with_subcommands = true,
    after_long_help = exit::MAIN
)]
pub struct Cli {
    /// What to do (default: `review`, the gate and its TUI).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `review`'s options, when no command is given.
    #[command(flatten)]
    pub review: ReviewArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gate and review its edits in the terminal (the default command), or attach to
    /// a running gate with --connect.
    ///
    /// Agents reach the gate at http://ADDR/mcp (see `patchgate config`) or through
    /// `patchgate serve --stdio`, which forwards to it.
    #[command(after_long_help = exit::REVIEW)]
    Review(ReviewArgs),
    /// The TUI with a scripted agent editing a temporary copy of a small demo project.
    #[command(after_long_help = exit::DEMO)]
    Demo(DemoArgs),
    /// Review a patch file in the terminal and apply the parts you accept: a git or plain
    /// unified diff, `git format-patch` mail, a Codex `*** Begin Patch` envelope,
    /// SEARCH/REPLACE blocks after their file names (aider), or a lazy snippet with --file.
    ///
    /// One review per file, with hunk decisions (a file's hunks that do not apply are left
    /// out and named; the others are offered); writes are atomic and journaled (`patchgate
    /// undo` reverts them). The report names every file.
    #[command(after_long_help = exit::APPLY)]
    Apply(ApplyArgs),
    /// Merge an edit into a file and print the result to stdout (never writes the file).
    ///
    /// With --json, standard output holds one JSON object instead: merged, {"status": "ok",
    /// "applied": N (the edits applied: blocks, replacements, hunks), "warnings": [...] (each
    /// mismatch tolerated, a new syntax error, deleted lines the edit does not show), "diff":
    /// the unified diff of FILE, "content": the merged file}; refused, {"status": "error",
    /// "code": "NO_MATCH" or another error code, "message": what to send next}.
    #[command(after_long_help = exit::MERGE)]
    Merge(MergeArgs),
    /// Score a merge engine on a corpus of real edits and print accuracy and timing.
    ///
    /// DIR holds one folder per case with before.EXT, after.EXT and the edit (lazy.txt or
    /// blocks.txt). The last line is a one-line summary.
    #[command(after_long_help = exit::EVAL)]
    Eval(EvalArgs),
    /// Search the code under a root (the agents' `agentic_search`, on the command line):
    /// files best first, with the line ranges of their best-matching definitions.
    ///
    /// The index is kept in the state directory and brought up to date on each search (only
    /// changed files are read). With a model configured in your patchgate config ([fallback]
    /// and [search]), --agentic runs the model's exploration loop as the MCP tool does.
    #[command(after_long_help = exit::SEARCH)]
    Search(SearchArgs),
    /// Score the code search on a corpus and print recall@5, hit@1, MRR and time per query.
    ///
    /// DIR holds one folder per project with snapshot.tar.gz and queries.jsonl (lines of
    /// {"query", "files"}), or is one such folder. Before the last line, the scores per
    /// language of the answers (their files' extension) and per query kind (fix, feature,
    /// refactor, other: the subject's first verb). The last line is a one-line summary.
    #[command(after_long_help = exit::SEARCH_EVAL)]
    SearchEval(SearchEvalArgs),
    /// List the decision journal of a root: what was applied, rejected and undone.
    #[command(after_long_help = exit::LOG)]
    Log(LogArgs),
    /// Take back an applied edit (the latest not yet undone, or RUN_ID), keeping every later
    /// change.
    ///
    /// A file that still holds what the run wrote gets its content from before the run back;
    /// a file changed since has only the run's own change taken back, by a three-way merge
    /// (as `git revert`), and the later changes stay. Refused, with nothing written, where a
    /// later change touched the lines the run changed, or where what the run wrote or
    /// replaced is no longer stored. All of the run's files, or none; the undo is journaled.
    #[command(after_long_help = exit::UNDO)]
    Undo(UndoArgs),
    /// Take back RUN and every applied run after it, newest first, keeping every other
    /// change (hand edits included).
    ///
    /// Each run is taken back as `undo` takes one back (byte for byte, or by a three-way
    /// merge that keeps later changes elsewhere). If a later change touched the lines of any
    /// of the runs, the whole rewind is refused, naming them, and nothing is written. Each
    /// run taken back is journaled as undone.
    #[command(after_long_help = exit::REWIND)]
    Rewind(RewindArgs),
    /// Run the MCP server: over stdio for a client that spawns it, or as a headless gate over
    /// HTTP (MCP at /mcp, the review API at /api).
    ///
    /// With --stdio, edits go to a running gate (`patchgate` or `serve --listen`) whose root
    /// covers --root, found through the discovery file; with none running, the server applies
    /// its own --policy (default dry-run: nothing is written until a run_id is committed).
    #[command(after_long_help = exit::SERVE)]
    Serve(ServeArgs),
    /// Print an MCP client's configuration (a stdio server that forwards to the running gate,
    /// or with --http the gate's endpoint), pre-approving patchgate's tools, and how to keep
    /// the client's own edit tools off.
    #[command(after_long_help = exit::CONFIG)]
    Config(ConfigArgs),
    /// Show which gates run and which roots they cover, and whether each client's
    /// configuration reaches one with patchgate's tools pre-approved.
    #[command(after_long_help = exit::DOCTOR)]
    Doctor(DoctorArgs),
    /// Print a shell completion script (e.g. `patchgate completions bash >
    /// ~/.local/share/bash-completion/completions/patchgate`).
    #[command(after_long_help = exit::PRINT)]
    Completions(CompletionsArgs),
    /// Print a man page (roff) to standard output (e.g. `patchgate man | man -l -`, `patchgate
    /// man apply`), or write them all to a directory with --dir.
    #[command(after_long_help = exit::PRINT)]
    Man(ManArgs),
}

/// Each command's exit status, shown after its options in `--help` and as the EXIT STATUS
/// section of its man page.
pub mod exit {
    /// The program's.
    pub const MAIN: &str = "Exit status: 0 success; 1 refused (an edit, a patch or an undo \
        was refused, or a search found nothing: see each command); 2 usage, I/O or internal \
        error. A command whose standard output is closed by its reader (`| head`) stops \
        quietly with 0.";
    /// `review`'s.
    pub const REVIEW: &str = "Exit status: 0 the TUI was left; 2 usage error, no terminal, \
        the root already has a gate, the address cannot be listened on, or (with --connect) \
        the gate cannot be reached or refuses the token.";
    /// `demo`'s.
    pub const DEMO: &str = "Exit status: 0 the TUI was left; 2 no terminal, or an I/O error.";
    /// `apply`'s.
    pub const APPLY: &str = "Exit status: 0 every file and hunk applied (or, with --check, \
        would apply); 1 the patch cannot be read as a patch, or some file or hunk was not \
        applied (it does not apply, or was rejected; with --yes nothing is written then, with \
        --yes --reject the rest is written and each hunk left out is in FILE.rej); 2 usage or \
        I/O error.";
    /// `merge`'s.
    pub const MERGE: &str = "Exit status: 0 merged; 1 the edit was refused (stderr's last \
        line is a JSON object {\"code\": ..., \"message\": ...}; with --json, standard \
        output holds the refusal object too); 2 usage or I/O error, or --instruction with a \
        format other than lazy.";
    /// `eval`'s.
    pub const EVAL: &str = "Exit status: 0 scored; 2 usage or I/O error (a corpus directory \
        missing or unreadable).";
    /// `search`'s.
    pub const SEARCH: &str = "Exit status: 0 some file was found; 1 no file matches the \
        query; 2 usage or I/O error, or --agentic with no model configured.";
    /// `search-eval`'s.
    pub const SEARCH_EVAL: &str =
        "Exit status: 0 scored; 2 usage or I/O error (the corpus missing or unreadable).";
    /// `log`'s.
    pub const LOG: &str = "Exit status: 0 listed (also when the journal holds nothing for the \
        root or the run); 1 --since names no applied run; 2 usage or I/O error.";
    /// `undo`'s.
    pub const UNDO: &str = "Exit status: 0 undone; 1 not undone (stderr's last line is a JSON \
        object {\"code\": ..., \"message\": ...}): RUN_NOT_FOUND (no such applied run, or \
        it was already undone), FILE_CHANGED (a later change touched the lines the run \
        changed, or the file was deleted or what the run wrote is no longer stored), FS_ERROR \
        (the copy from before the run was dropped under the journal's size cap, or a file or \
        the journal cannot be read or written), or another error code; 2 usage error, or the \
        root or the state directory cannot be used.";
    /// `rewind`'s.
    pub const REWIND: &str = "Exit status: 0 rewound; 1 not rewound, nothing changed (stderr's \
        last line is a JSON object {\"code\": ..., \"message\": ...}): RUN_NOT_FOUND (no such \
        applied run, or it was undone), FILE_CHANGED (a later change touched the lines a run \
        changed, or a file was deleted or what a run wrote is no longer stored), FS_ERROR (a \
        file or the journal cannot be read or written: the files already written are put back \
        as they were, and the message names any that could not be), or another error code; 2 \
        usage error, or the root or the state directory cannot be used.";
    /// `serve`'s.
    pub const SERVE: &str = "Exit status: 0 stopped by Ctrl-C or SIGTERM, or (--stdio) its \
        client closed standard input; 2 usage error, the root already has a gate (--listen), \
        the address cannot be listened on, or an I/O error.";
    /// `config`'s.
    pub const CONFIG: &str = "Exit status: 0 printed, or written (--write); 2 usage or I/O \
        error, or a client file that cannot be merged (it is left untouched and the message \
        shows what to add by hand).";
    /// `doctor`'s.
    pub const DOCTOR: &str = "Exit status: 0 the report was printed (it says what is not \
        ready and the command that makes it ready); 2 usage or I/O error.";
    /// `completions`' and `man`'s.
    pub const PRINT: &str = "Exit status: 0 printed (or written); 2 usage or I/O error.";
}

/// `patchgate man [COMMAND] [--dir DIR]`
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (default: patchgate(1), the program's).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Option<String>,
    /// Write every page (patchgate.1 and patchgate-COMMAND.1 for each command) into this
    /// directory, and print their paths.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `patchgate completions SHELL`
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `patchgate [review] [--root DIR] [--listen ADDR] [--policy P] [--token T | --token-file FILE |
/// --no-token] [--review-timeout SECS] [--allow-host HOST]... [--color WHEN]`, or `patchgate
/// review --connect URL [--token T] [--color WHEN]`
#[derive(Debug, Clone, Args)]
pub struct ReviewArgs {
    /// The project root every path resolves under.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Where agents and other reviewers reach the gate (port 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub listen: String,
    /// The write policy (default: `policy` in your own patchgate config, $PATCHGATE_CONFIG or
    /// $XDG_CONFIG_HOME/patchgate/config.toml, else gate). A repository's .patchgate.toml can
    /// only make it stricter: its `policy` counts when stricter than this one.
    #[arg(long, value_enum)]
    pub policy: Option<PolicyArg>,
    /// The agents' bearer token for /mcp (default: one made on the first start and kept for
    /// this root in tokens/ of the state directory, $PATCHGATE_STATE_DIR, else
    /// $XDG_STATE_HOME/patchgate or ~/.local/state/patchgate: the same after every restart).
    /// The review API has its own reviewer token, new at each start, in the gate's discovery
    /// file (gates/ of the state directory). With --connect: that gate's reviewer token
    /// (default: its discovery file's).
    #[arg(long, env = "PATCHGATE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Where the agents' token comes from, or none.
    #[command(flatten)]
    pub token_opts: TokenOpts,
    /// Seconds an agent's call waits for a decision before answering `pending` (default:
    /// `.patchgate.toml`'s review_timeout_s, at most 600, else 600).
    #[arg(long, value_name = "SECS")]
    pub review_timeout: Option<u64>,
    /// Attach to a running gate (e.g. http://127.0.0.1:8787) instead of starting one.
    #[arg(long, value_name = "URL")]
    pub connect: Option<String>,
    /// Another host name to answer to besides the loopback ones; repeatable.
    #[arg(long, value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// Colours in the TUI: auto (unless NO_COLOR is set), always or never.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
}

/// `patchgate apply [PATCH|-] [--root DIR] [--yes [--reject] | --check] [--reverse] [-p N]
/// [--file PATH [--instruction TEXT]] [--color WHEN]`
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The patch file; `-` (or nothing, with a piped stdin) reads stdin.
    #[arg(value_name = "PATCH")]
    pub patch: Option<PathBuf>,
    /// The project root the patch's paths are under.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Apply everything without the TUI (all files or none; see --reject).
    #[arg(long, conflicts_with = "check")]
    pub yes: bool,
    /// With --yes, as `git apply --reject`: write what applies, leave each hunk that does
    /// not apply in FILE.rej, and exit 1 when any was left out. (The TUI always offers a
    /// file's hunks that apply and shows those that do not.)
    #[arg(long, requires = "yes", conflicts_with = "check")]
    pub reject: bool,
    /// Only check that every file applies; write nothing (exit 1 if any does not).
    #[arg(long)]
    pub check: bool,
    /// Apply the patch in reverse (undo it).
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// Strip N leading components from the patch's paths (default: 1 for git diffs and
    /// `dir/` prefixed plain diffs, else 0).
    #[arg(short = 'p', value_name = "N")]
    pub strip: Option<usize>,
    /// The input is a lazy snippet (`// ... existing code ...`) for this file.
    #[arg(long, value_name = "PATH")]
    pub file: Option<String>,
    /// With --file: a hint where the snippet goes (as fast_apply's instruction).
    #[arg(long, value_name = "TEXT", requires = "file")]
    pub instruction: Option<String>,
    /// Colours in the TUI: auto (unless NO_COLOR is set), always or never.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
}

/// `patchgate demo [--keep] [--pace MS] [--color WHEN]`
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the demo project's temporary directory (its path is printed on exit).
    #[arg(long)]
    pub keep: bool,
    /// Milliseconds between the scripted agent's calls.
    #[arg(long, value_name = "MS", default_value_t = 700)]
    pub pace: u64,
    /// Colours in the TUI: auto (unless NO_COLOR is set), always or never.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
}

/// The write policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PolicyArg {
    /// A person decides every write.
    Gate,
    /// Apply at once and journal it.
    Auto,
    /// Never write; every edit waits for a commit by run_id.
    #[value(name = "dry-run")]
    DryRun,
}

impl From<PolicyArg> for crate::workspace::config::PolicyName {
    fn from(p: PolicyArg) -> Self {
        use crate::workspace::config::PolicyName;
        match p {
            PolicyArg::Gate => PolicyName::Gate,
            PolicyArg::Auto => PolicyName::Auto,
            PolicyArg::DryRun => PolicyName::DryRun,
        }
    }
}

/// `patchgate serve (--stdio | --listen ADDR) [--root DIR] [--policy P] [--token T |
/// --token-file FILE | --no-token] [--review-timeout SECS] [--allow-host HOST]...`
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("transport").required(true).args(["stdio", "listen"])))]
pub struct ServeArgs {
    /// Serve one client over standard input and output.
    #[arg(long)]
    pub stdio: bool,
    /// Listen for MCP and review-API clients over HTTP (e.g. 127.0.0.1:8787; port 0 picks a
    /// free port, written to the discovery file).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// The project root every path resolves under.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// The write policy (default: `policy` in your own patchgate config, $PATCHGATE_CONFIG or
    /// $XDG_CONFIG_HOME/patchgate/config.toml, else dry-run for --stdio and gate for --listen).
    /// A repository's .patchgate.toml can only make it stricter: its `policy` counts when
    /// stricter than this one. A stdio server that forwards to a gate follows that gate's.
    #[arg(long, value_enum)]
    pub policy: Option<PolicyArg>,
    /// The agents' bearer token for /mcp (default: one made on the first start and kept for
    /// this root in tokens/ of the state directory, $PATCHGATE_STATE_DIR, else
    /// $XDG_STATE_HOME/patchgate or ~/.local/state/patchgate: the same after every restart).
    /// The review API (/api) has its own reviewer token, new at each start, in the gate's
    /// discovery file only (gates/ of the state directory).
    #[arg(long, env = "PATCHGATE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Where the agents' token comes from, or none.
    #[command(flatten)]
    pub token_opts: TokenOpts,
    /// Seconds a tool call waits for a person before answering `pending` (default:
    /// `.patchgate.toml`'s review_timeout_s, at most 600, else 600).
    #[arg(long, value_name = "SECS")]
    pub review_timeout: Option<u64>,
    /// Another host name to answer to besides the loopback ones (when listening on a
    /// non-loopback address); repeatable.
    #[arg(long, value_name = "HOST")]
    pub allow_host: Vec<String>,
}

/// The MCP clients `config` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientArg {
    /// Claude Code: `.mcp.json` and `.claude/settings.local.json` (user: `~/.claude.json`
    /// and `~/.claude/settings.json`).
    Claude,
    /// Codex CLI: always the user's `~/.codex/config.toml` (`$CODEX_HOME/config.toml` when
    /// set), with or without --user, as a stdio server with no --root (Codex starts it in the
    /// project); Codex reads a project's own `.codex/config.toml` only in a trusted project.
    Codex,
    /// Cursor: `.cursor/mcp.json` and `.cursor/permissions.json` (user: under `~/.cursor`).
    Cursor,
    /// VS Code: `.vscode/mcp.json` (user: VS Code's user `mcp.json`).
    Vscode,
}

/// `patchgate config (claude|codex|cursor|vscode) [--stdio | --http [--listen ADDR]] [--root DIR]
/// [--write [--only PART]] [--user]`
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The client.
    #[arg(value_enum)]
    pub client: ClientArg,
    /// The stdio form (the default): the client spawns `patchgate serve --stdio`, which
    /// forwards to whatever gate runs for the root.
    #[arg(long, conflicts_with = "http")]
    pub stdio: bool,
    /// The HTTP form: the running gate's endpoint, else `--listen`'s, with the agents' token
    /// the gate keeps across restarts.
    #[arg(long)]
    pub http: bool,
    /// The gate's address for `--http` when none runs yet.
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:8787",
        requires = "http"
    )]
    pub listen: String,
    /// The project root.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Merge the configuration into the client's own files instead of printing it (every
    /// other key is kept, the old file is copied to FILE.patchgate-backup, a second run
    /// changes nothing), and print what changed.
    #[arg(long)]
    pub write: bool,
    /// The user's files (every project; the stdio server serves the directory the client
    /// runs in) instead of the project's.
    #[arg(long)]
    pub user: bool,
    /// With --write: only the server entry, or only the pre-approval.
    #[arg(long, value_name = "PART", value_enum, requires = "write")]
    pub only: Option<ConfigPart>,
}

/// What `config --write --only` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConfigPart {
    /// The MCP server entry.
    Server,
    /// The pre-approval of patchgate's tools (and the denial of the client's own edit tools
    /// where it has such a list).
    Approval,
}

/// `patchgate search QUERY... [--root DIR] [--json] [--limit N] [--agentic]`
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for, in words or names (several arguments are joined).
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// The project root to search.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Print the tool's JSON answer.
    #[arg(long)]
    pub json: bool,
    /// How many files to list.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=200))]
    pub limit: u32,
    /// Follow the hits' definitions and references (the `agentic_retrieval` tool).
    #[arg(long)]
    pub retrieval: bool,
    /// Let the configured model explore from the local hits (the `agentic_search` tool with
    /// a model); without a model configured this is an error.
    #[arg(long)]
    pub agentic: bool,
}

/// `patchgate search-eval DIR [--verbose] [--fit] [--weights LIST]`
#[derive(Debug, Args)]
pub struct SearchEvalArgs {
    /// The corpus directory.
    pub dir: PathBuf,
    /// List each query's rank of its first answering file and the files it missed (with
    /// their ranks), and for a query that missed one its ten leading files with scores.
    #[arg(long, short)]
    pub verbose: bool,
    /// Fit the last stage's weights on this corpus and print them (a development tool:
    /// confirm them on another corpus with --weights before they are kept).
    #[arg(long)]
    pub fit: bool,
    /// Rank with these last-stage weights (comma-separated, one per feature, as --fit prints
    /// them) instead of the built-in ones.
    #[arg(long, value_name = "LIST")]
    pub weights: Option<String>,
}

/// `patchgate doctor [--root DIR]`
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The project root to check.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
}

/// `patchgate log [RUN_ID] [--root DIR] [--json]`, `patchgate log --diff [--since RUN]`
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only this run's entries, each with the diff that was written.
    pub run_id: Option<String>,
    /// The root whose journal to read.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Print the journal's JSON lines.
    #[arg(long, conflicts_with = "diff")]
    pub json: bool,
    /// Print one unified diff of what the applied runs changed, per file (hand edits made
    /// between runs are not theirs and do not appear).
    #[arg(long, conflicts_with = "run_id")]
    pub diff: bool,
    /// With --diff: from this run on (it included).
    #[arg(long, value_name = "RUN", requires = "diff")]
    pub since: Option<String>,
}

/// `patchgate rewind RUN [--root DIR]`
#[derive(Debug, Args)]
pub struct RewindArgs {
    /// The first run to take back; every later applied run goes too.
    pub run_id: String,
    /// The root whose journal holds the runs.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
}

/// `patchgate undo [RUN_ID] [--root DIR]`
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The run to undo (default: the latest applied one not yet undone).
    pub run_id: Option<String>,
    /// The root whose journal holds the run.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
}

/// The edit formats on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// A lazy snippet with `... existing code ...` placeholders (fast_apply).
    Lazy,
    /// SEARCH/REPLACE blocks (FileWriteOrEdit).
    Blocks,
    /// A JSON object with patch_file's fields (search_content/replace_content, replacements,
    /// insert_line/insert_content, start_line/end_line, allow_multiple).
    Replace,
    /// A unified diff for this one file (git or plain, or bare hunks).
    Udiff,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Lazy => Format::Lazy,
            FormatArg::Blocks => Format::Blocks,
            FormatArg::Replace => Format::Replace,
            FormatArg::Udiff => Format::Udiff,
        }
    }
}

/// `patchgate merge FORMAT FILE [EDIT|-] [--instruction TEXT] [--json]`
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The edit's format.
    #[arg(value_enum)]
    pub format: FormatArg,
    /// The file to merge into (it is only read).
    pub file: PathBuf,
    /// The file holding the edit; `-` or nothing reads standard input.
    pub edit: Option<String>,
    /// A placement hint for a lazy snippet ("after NAME", "in NAME", "at the end of the
    /// file"). Only the lazy engine reads it: with another format it is refused (exit 2).
    #[arg(long, value_name = "TEXT")]
    pub instruction: Option<String>,
    /// Print one JSON object instead of the merged file: {"status": "ok", "applied",
    /// "warnings", "diff", "content"}, or when refused {"status": "error", "code",
    /// "message"} (see above).
    #[arg(long)]
    pub json: bool,
}

/// `patchgate eval DIR... [--format lazy|blocks] [--without RULE]...`, `patchgate eval --rules`
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The corpus directories (each scored on its own, then all together).
    #[arg(required_unless_present = "rules", num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Print the lazy merge's rules, one per line (name, stage, summary), and score nothing.
    #[arg(long, conflicts_with_all = ["dirs", "without", "curve"])]
    pub rules: bool,
    /// Score the lazy merge with this rule switched off (repeatable; `--rules` lists them;
    /// only with `--format lazy`).
    #[arg(long, value_name = "RULE", value_parser = rule_named)]
    pub without: Vec<crate::edit::lazy::Rule>,
    /// The engine to score.
    #[arg(long, value_enum, default_value = "lazy")]
    pub format: EvalFormat,
    /// Runs of each merge; a case's time is the median of its runs.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Show the first line of each refusal's message and the slowest cases.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print, per corpus, what each threshold of the lazy merge's decision would give: right,
    /// harmful, lost code and refused, from no threshold up past the highest margin seen.
    #[arg(long)]
    pub curve: bool,
}

/// The lazy merge's rule named `name`; an unknown name is refused listing the names.
fn rule_named(name: &str) -> Result<crate::edit::lazy::Rule, String> {
    crate::edit::lazy::Rule::named(name).ok_or_else(|| {
        let names: Vec<&str> = crate::edit::lazy::rules::ALL
            .iter()
            .map(|r| r.name)
            .collect();
        format!("no rule `{name}`; the rules: {}", names.join(", "))
    })
}

/// The engines `eval` can score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EvalFormat {
    /// lazy.txt through the lazy-snippet merge.
    Lazy,
    /// blocks.txt through the SEARCH/REPLACE engine.
    Blocks,
}

impl From<EvalFormat> for Format {
    fn from(f: EvalFormat) -> Format {
        match f {
            EvalFormat::Lazy => Format::Lazy,
            EvalFormat::Blocks => Format::Blocks,
        }
    }
}

/// Where the agents' token comes from besides `--token`/`PATCHGATE_TOKEN`.
#[derive(Debug, Clone, Default, Args)]
pub struct TokenOpts {
    /// Read the agents' token from this file (its first line), not the command line (which
    /// `ps` shows).
    #[arg(long, value_name = "FILE", conflicts_with = "no_token")]
    pub token_file: Option<PathBuf>,
    /// Let agents use /mcp without a token (for local tools that cannot send headers).
    /// Only on a loopback address; /api always needs its reviewer token.
    #[arg(long)]
    pub no_token: bool,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorArg {
    /// Colours unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Colours always.
    Always,
    /// No colours.
    Never,
}
