//! The `config` and `doctor` commands: connecting MCP clients.

use std::process::ExitCode;

use anyhow::{Context, Result};

use patchgate::cli::{ClientArg, ConfigArgs};
use patchgate::workspace::config::Config;

use super::out::out;
use super::*;

pub(crate) fn config(args: ConfigArgs) -> Result<ExitCode> {
    use patchgate::mcp::client_files::{Scope, user_wide};
    use patchgate::mcp::clients::{ClientKind, Connection, Shown, advice, snippet};

    let kind = match args.client {
        ClientArg::Claude => ClientKind::Claude,
        ClientArg::Codex => ClientKind::Codex,
        ClientArg::Cursor => ClientKind::Cursor,
        ClientArg::Vscode => ClientKind::Vscode,
    };
    let root = std::fs::canonicalize(&args.root)
        .with_context(|| format!("cannot use {} as the root", args.root.display()))?;
    let review_timeout = Config::load(&root)
        .map(|c| c.review_timeout_s)
        .unwrap_or(600);
    let exe = installed_binary()?;
    let endpoint = if args.http {
        Some(http_endpoint(&root, &args.listen)?)
    } else {
        if patchgate::mcp::discovery::Discovery::for_dir(&root).is_none() {
            eprintln!(
                "patchgate: no gate runs for {} yet; the stdio server forwards to one whenever one \
                 runs, else it says with each edit that nobody reviews it",
                root.display()
            );
        }
        None
    };
    let scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    let conn = match &endpoint {
        Some((url, token)) => Connection::Http { url, token },
        None => Connection::Stdio {
            exe: &exe,
            root: (!user_wide(kind, scope)).then_some(root.as_path()),
        },
    };
    let shown = if args.write {
        if endpoint.is_some() && user_wide(kind, scope) {
            anyhow::bail!(
                "an HTTP entry names one gate, the one for {}; in your own files it would send every \
                 project's edits there. Write the stdio form (leave out --http): it finds each \
                 project's gate itself",
                root.display()
            );
        }
        let written = write_config(kind, &conn, review_timeout, &args, &root)?;
        if endpoint.is_some() {
            eprintln!(
                "patchgate: the project's configuration now holds the gate's agents' token: keep \
                 it out of version control, or use the stdio form (leave out --http)"
            );
        }
        written
    } else {
        out!(
            "{}",
            snippet(kind, &conn, review_timeout, user_wide(kind, scope), &exe)
        );
        Shown::Printed
    };
    eprint!("{}", advice(kind, &root, shown, args.user));
    Ok(ExitCode::SUCCESS)
}

/// The patchgate binary a client should start: the one on PATH when there is one (it survives
/// `cargo clean`), else this one, with a warning when it sits in a build directory.
fn installed_binary() -> Result<std::path::PathBuf> {
    let this = std::env::current_exe().context("cannot find the patchgate binary")?;
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .filter(|d| d.is_absolute())
            .map(|d| d.join("patchgate"))
            .find(|p| is_executable(p))
    });
    // Named as PATH names it: a package manager's link outlives the versioned file behind it.
    if let Some(p) = on_path {
        return Ok(p);
    }
    if this.components().any(|c| c.as_os_str() == "target") {
        eprintln!(
            "patchgate: {} is a build output (`cargo clean` removes it) and no patchgate is on PATH; \
             install it with `cargo install --locked --path .` and run this again",
            this.display()
        );
    }
    Ok(this)
}

fn is_executable(p: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The running gate's MCP endpoint and agents' token for `root`, else `listen`'s with the
/// token a gate there will keep.
fn http_endpoint(root: &std::path::Path, listen: &str) -> Result<(String, String)> {
    use patchgate::mcp::discovery::{Discovery, stable_token};
    Ok(match Discovery::for_dir(root) {
        Some(d) => {
            eprintln!(
                "patchgate: the gate for {} listens at {}",
                d.root.display(),
                d.url
            );
            (d.mcp_url, d.token)
        }
        None => {
            let addr = listen_addr(listen)?;
            eprintln!(
                "patchgate: no gate runs for {}; start it with `patchgate --listen {addr} --root {}` \
                 (it keeps this token across restarts)",
                root.display(),
                root.display()
            );
            (format!("http://{addr}/mcp"), stable_token(root)?)
        }
    })
}

/// `config --write`: merge into the client's files and say, file by file, what changed;
/// which parts are now there.
fn write_config(
    kind: patchgate::mcp::clients::ClientKind,
    conn: &patchgate::mcp::clients::Connection,
    review_timeout: u64,
    args: &ConfigArgs,
    root: &std::path::Path,
) -> Result<patchgate::mcp::clients::Shown> {
    use patchgate::cli::ConfigPart;
    use patchgate::mcp::client_files::{Homes, Outcome, Part, Scope, apply, plan, refuse_link_out};
    let scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    let homes = Homes::from_env();
    let wanted = |p: Part| match args.only {
        None => true,
        Some(ConfigPart::Server) => p == Part::Server,
        Some(ConfigPart::Approval) => p == Part::Approval,
    };
    let changes = plan(kind, conn, review_timeout, scope, root, &homes)?;
    if changes.iter().all(|c| !wanted(c.part)) {
        out!(
            "nothing to write: this client keeps no such file (its pre-approval is its own choice)\n"
        );
    }
    // A file that links out of the project refuses the whole write, before any is written.
    for change in changes.iter().filter(|c| wanted(c.part)) {
        refuse_link_out(change)?;
    }
    // Every file first, then what changed: a reader that goes away (`| head`) cannot stop it
    // half way; a failure still says what was changed before it.
    let mut said = String::new();
    for change in changes.iter().filter(|c| wanted(c.part)) {
        let shown = change
            .file
            .strip_prefix(root)
            .unwrap_or(&change.file)
            .display()
            .to_string();
        let what = change.describe();
        let line = match apply(change) {
            Ok(Outcome::Created) => format!("created {shown}: {what}\n"),
            Ok(Outcome::Updated { backup }) => format!(
                "updated {shown}: {what} (the old file is in {})\n",
                backup.display()
            ),
            Ok(Outcome::Unchanged) => format!("unchanged {shown}: {what} already there\n"),
            Err(e) => {
                out!("{said}");
                return Err(e.into());
            }
        };
        said.push_str(&line);
    }
    out!("{said}");
    if let Some(note) = patchgate::mcp::doctor::scope_note(kind, scope, root, &homes) {
        eprintln!("patchgate: {note}");
    }
    let has = |part: Part| changes.iter().any(|c| c.part == part && wanted(c.part));
    Ok(patchgate::mcp::clients::Shown::Written {
        server: has(Part::Server),
        approval: has(Part::Approval),
    })
}

/// `patchgate doctor`.
pub(crate) fn doctor(args: patchgate::cli::DoctorArgs) -> Result<ExitCode> {
    let root = std::fs::canonicalize(&args.root)
        .with_context(|| format!("cannot use {} as the root", args.root.display()))?;
    let homes = patchgate::mcp::client_files::Homes::from_env();
    out!("{}", patchgate::mcp::doctor::report(&root, &homes));
    Ok(ExitCode::SUCCESS)
}
