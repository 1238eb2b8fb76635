//! The `config` and `doctor` commands: connecting MCP clients.

use std::process::ExitCode;

use anyhow::{Context, Result};

use patchgate::cli::{ClientArg, ConfigArgs};
use patchgate::workspace::config::Config;

use super::out::out;
use super::*;

pub(crate) fn config(args: ConfigArgs) -> Result<ExitCode> {
    use patchgate::mcp::clients::{ClientKind, Connection, advice, snippet};
    use patchgate::mcp::discovery::{Discovery, stable_token};

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
    let exe = std::env::current_exe().context("cannot find the patchgate binary")?;
    let out = if args.http {
        let (url, token) = match Discovery::for_dir(&root) {
            Some(d) => {
                eprintln!(
                    "patchgate: the gate for {} listens at {}",
                    d.root.display(),
                    d.url
                );
                (d.mcp_url, d.token)
            }
            None => {
                let addr = listen_addr(&args.listen)?;
                eprintln!(
                    "patchgate: no gate runs for {}; start it with `patchgate --listen {addr} --root {}` \
                     (it keeps this token across restarts)",
                    root.display(),
                    root.display()
                );
                (format!("http://{addr}/mcp"), stable_token(&root)?)
            }
        };
        snippet(
            kind,
            &Connection::Http {
                url: &url,
                token: &token,
            },
            review_timeout,
        )
    } else {
        if Discovery::for_dir(&root).is_none() {
            eprintln!(
                "patchgate: no gate runs for {} yet; the stdio server forwards to one whenever one \
                 runs, else it says with each edit that nobody reviews it",
                root.display()
            );
        }
        snippet(
            kind,
            &Connection::Stdio {
                exe: &exe,
                root: &root,
            },
            review_timeout,
        )
    };
    out!("{out}");
    eprint!("{}", advice(kind, &root));
    Ok(ExitCode::SUCCESS)
}

/// `patchgate doctor`.
pub(crate) fn doctor(args: patchgate::cli::DoctorArgs) -> Result<ExitCode> {
    let root = std::fs::canonicalize(&args.root)
        .with_context(|| format!("cannot use {} as the root", args.root.display()))?;
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    out!("{}", patchgate::mcp::doctor::report(&root, home.as_deref()));
    Ok(ExitCode::SUCCESS)
}
