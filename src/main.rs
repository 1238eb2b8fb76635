//! The `patchgate` binary: parse the command line, run the command, map outcomes to exit codes
//! (0 success, 1 refused, 2 usage, I/O or internal error).

use std::borrow::Cow;
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Parser;

use patchgate::cli::{
    ApplyArgs, Cli, ClientArg, Command, ConfigArgs, DemoArgs, EvalArgs, LogArgs, MergeArgs,
    ReviewArgs, ServeArgs, UndoArgs,
};
use patchgate::diff::unified_diff;
use patchgate::edit::{self, Format, text::Text};
use patchgate::inert::{inert, inert_line};
use patchgate::review::fallback::merge_lazy;
use patchgate::review::journal::Journal;
use patchgate::workspace::Workspace;
use patchgate::workspace::config::Config;
use patchgate::workspace::rootlock::RootLock;
use patchgate::workspace::userconfig::UserConfig;
use std::path::Path;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => review(cli.review),
        Some(command) => match command {
            Command::Review(args) => review(args),
            Command::Demo(args) => demo(args),
            Command::Apply(args) => apply(args),
            other => run_command(other),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("patchgate: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run_command(command: Command) -> Result<ExitCode> {
    match command {
        Command::Review(args) => review(args),
        Command::Demo(args) => demo(args),
        Command::Apply(args) => apply(args),
        Command::Merge(args) => merge(args),
        Command::Eval(args) => eval(args),
        Command::Log(args) => log(args),
        Command::Undo(args) => undo(args),
        Command::Serve(args) => serve(args),
        Command::Config(args) => config(args),
        Command::Doctor(args) => {
            let root = std::fs::canonicalize(&args.root)
                .with_context(|| format!("cannot use {} as the root", args.root.display()))?;
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            print!("{}", patchgate::mcp::doctor::report(&root, home.as_deref()));
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions(args) => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            clap_complete::generate(args.shell, &mut cmd, "patchgate", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            use clap::CommandFactory;
            clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn read_edit(arg: Option<&str>) -> Result<String> {
    let bytes = match arg {
        None | Some("-") => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("cannot read the edit from standard input")?;
            buf
        }
        Some(path) => {
            std::fs::read(path).with_context(|| format!("cannot read the edit {path}"))?
        }
    };
    String::from_utf8(bytes).context("the edit is not valid UTF-8")
}

fn merge(args: MergeArgs) -> Result<ExitCode> {
    let format = Format::from(args.format);
    // A lazy snippet may create the file; every other format needs it.
    let file = match std::fs::read(&args.file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && format == Format::Lazy => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", args.file.display())),
    };
    let edit_text = read_edit(args.edit.as_deref())?;
    let path = args.file.to_string_lossy();
    let hints = edit::Hints {
        path: Some(&path),
        instruction: args.instruction.as_deref(),
    };
    // The model fallback for lazy snippets, when the user's own config has one.
    let fallback = match format {
        Format::Lazy => {
            let user = UserConfig::load()?;
            let repo_has_one = Config::load(Path::new("."))?.fallback.is_some();
            if repo_has_one {
                eprintln!(
                    "patchgate: .patchgate.toml's [fallback] is ignored: the model fallback comes \
                     only from your own config (PATCHGATE_CONFIG or ~/.config/patchgate/config.toml)"
                );
            }
            patchgate::review::user_fallback(&user, repo_has_one)
                .map_err(|e| anyhow::anyhow!("{e}"))?
        }
        _ => None,
    };
    let outcome = Text::decode(&file).and_then(|text| {
        let merged = match &fallback {
            Some(fb) => tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| patchgate::error::Error::invalid_input(e.to_string()))?
                .block_on(merge_lazy(Some(fb), text.content(), &edit_text, &hints))?,
            None => edit::run(format, &text, &edit_text, &hints)?,
        };
        let bytes = text.encode(&merged.content)?;
        Ok((text, merged, bytes))
    });
    let (text, merged, bytes) = match outcome {
        Ok(ok) => ok,
        Err(e) => {
            if args.json {
                let obj =
                    serde_json::json!({"status": "error", "code": e.code, "message": e.message});
                println!("{obj}");
            }
            eprintln!(
                "patchgate: the edit was refused ({}):\n{}",
                e.code, e.message
            );
            eprintln!("{}", e.to_json());
            return Ok(ExitCode::from(1));
        }
    };
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let name = args.file.to_string_lossy();
        let obj = serde_json::json!({
            "status": "ok",
            "applied": merged.applied,
            "warnings": merged.warnings,
            "diff": unified_diff(&name, text.content(), &merged.content),
            "content": String::from_utf8(bytes).unwrap_or(merged.content),
        });
        writeln!(stdout, "{obj}")?;
    } else {
        for w in &merged.warnings {
            eprintln!("patchgate: warning: {w}");
        }
        stdout.write_all(&bytes)?;
    }
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn eval(args: EvalArgs) -> Result<ExitCode> {
    if let Some(missing) = args.dirs.iter().find(|d| !d.is_dir()) {
        bail!("{} is not a directory", missing.display());
    }
    let show_progress = std::io::stderr().is_terminal();
    let format: patchgate::edit::Format = args.format.into();
    let mut parts = Vec::new();
    for dir in &args.dirs {
        let report = patchgate::eval::run(dir, format, args.repeat as usize, |done, total| {
            if show_progress {
                eprint!("\r{}: {done}/{total} cases", dir.display());
                if done == total {
                    eprint!("\r\x1b[K");
                }
            }
        })?;
        if args.dirs.len() > 1 {
            println!("== {}", dir.display());
        }
        print!("{}", report.render(args.verbose));
        let label = dir.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        parts.push((label, report));
    }
    if parts.len() > 1 {
        let all = patchgate::eval::Report::combine(format, parts);
        println!("== all");
        println!("{}", all.summary());
    }
    Ok(ExitCode::SUCCESS)
}

/// `2026-11-21 12:00:03` (UTC) from seconds since the epoch.
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn log(args: LogArgs) -> Result<ExitCode> {
    let ws = Workspace::load(&args.root).map_err(|e| anyhow::anyhow!("{e}"))?;
    let journal = Journal::for_root(&ws.root);
    let mut out = std::io::stdout().lock();
    let mut any = false;
    // One entry at a time: a journal may be large.
    journal
        .each(|e| {
            any = true;
            let line = if args.json {
                // Pre-images stay in the journal (old entries hold them inline): not printed.
                let mut e = e;
                for f in &mut e.files {
                    f.before = None;
                }
                serde_json::to_string(&e).unwrap_or_default()
            } else {
                log_line(&e)
            };
            writeln!(out, "{line}").map_err(|e| {
                patchgate::error::Error::new(patchgate::error::ErrorCode::FsError, e.to_string())
            })
        })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if !any && !args.json {
        writeln!(
            out,
            "no decisions recorded for {} (journal: {})",
            ws.root.path().display(),
            journal.path().display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One journal entry as `patchgate log` prints it, its text made inert.
fn log_line(e: &patchgate::review::journal::Entry) -> String {
    let files: Vec<Cow<'_, str>> = e.files.iter().map(|f| inert_line(&f.path)).collect();
    let hunks = match e.hunks {
        Some((a, t)) if a != t => format!(" ({a}/{t} hunks)"),
        _ => String::new(),
    };
    let edited = if e.edited {
        " (edited by the reviewer)"
    } else {
        ""
    };
    // A note's further lines go below, indented.
    let note = if e.note.is_empty() {
        String::new()
    } else {
        format!(" — {}", inert(e.note.trim()).replace('\n', "\n      "))
    };
    format!(
        "{}  {:<8} {}  {:<18} {}{hunks}{edited}{note}",
        utc(e.ts),
        inert_line(&e.action),
        inert_line(&e.run_id),
        inert_line(&e.tool),
        files.join(", ")
    )
}

fn undo(args: UndoArgs) -> Result<ExitCode> {
    let ws = Workspace::load(&args.root).map_err(|e| anyhow::anyhow!("{e}"))?;
    let journal = Journal::for_root(&ws.root);
    match journal.undo(args.run_id.as_deref(), ws.config.max_file_bytes) {
        Ok(entry) => {
            let files: Vec<Cow<'_, str>> =
                entry.files.iter().map(|f| inert_line(&f.path)).collect();
            println!(
                "undid run {}: restored {}",
                inert_line(&entry.run_id),
                files.join(", ")
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("patchgate: undo refused ({}):\n{}", e.code, e.message);
            eprintln!("{}", e.to_json());
            Ok(ExitCode::from(1))
        }
    }
}

/// A listen address: `HOST:PORT`, or a bare port on loopback.
fn listen_addr(s: &str) -> Result<std::net::SocketAddr> {
    use std::net::ToSocketAddrs;
    let spec = if s.chars().all(|c| c.is_ascii_digit()) {
        format!("127.0.0.1:{s}")
    } else {
        s.to_string()
    };
    spec.to_socket_addrs()
        .with_context(|| format!("cannot use `{s}` as a listen address (HOST:PORT)"))?
        .next()
        .with_context(|| format!("`{s}` resolves to no address"))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Wait for Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn serve(args: ServeArgs) -> Result<ExitCode> {
    use patchgate::mcp::{discovery::Discovery, http, server::McpServer, service};
    use patchgate::workspace::config::PolicyName;

    patchgate::log::init();
    let root = std::fs::canonicalize(&args.root)
        .with_context(|| format!("cannot use {} as the root", args.root.display()))?;
    let default = if args.stdio {
        PolicyName::DryRun
    } else {
        PolicyName::Gate
    };
    let rt = runtime()?;
    let _guard = rt.enter();
    let (gate, review_timeout) = patchgate::review::open_gate(
        &root,
        args.policy.map(Into::into),
        default,
        args.review_timeout,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if args.stdio {
        tracing::info!(
            "serve --stdio: root {} policy {}",
            root.display(),
            gate.policy().default.as_str()
        );
        let dispatcher =
            service::Dispatcher::new(gate, review_timeout, service::Reviewers::None, Some(root));
        rt.block_on(McpServer::new(dispatcher).serve_stdio())?;
        return Ok(ExitCode::SUCCESS);
    }
    let addr = listen_addr(args.listen.as_deref().unwrap_or("127.0.0.1:8787"))?;
    let mut root_lock = RootLock::acquire(&root).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let policy = gate.policy().default;
    let dispatcher = service::Dispatcher::new(
        gate.clone(),
        review_timeout,
        service::Reviewers::Attachable,
        None,
    );
    let opts = gate_http_options(
        &gate,
        addr,
        agent_token(args.token, &args.token_opts, addr, &root)?,
        args.allow_host,
        review_timeout,
    );
    let (token, review_token) = (opts.token.clone(), opts.review_token.clone());
    rt.block_on(async move {
        let running = http::start(dispatcher, opts).await?;
        root_lock.set_url(&running.url);
        let discovery = Discovery {
            url: running.url.clone(),
            mcp_url: running.mcp_url(),
            token: token.unwrap_or_default(),
            review_token,
            pid: std::process::id(),
            root: root.clone(),
        };
        let file = discovery
            .write()
            .context("cannot write the discovery file")?;
        tracing::info!("listening on {} (root {})", running.url, root.display());
        eprintln!(
            "patchgate: gate for {} listening on {} (policy {}); MCP endpoint {}\n\
             patchgate: bearer token and address in {}; Ctrl-C stops",
            root.display(),
            running.url,
            policy.as_str(),
            running.mcp_url(),
            file.display()
        );
        shutdown_signal().await;
        if !gate.pending().is_empty() {
            // Waiting agents hear REVIEWER_GONE before the connections close.
            gate.reviewer_gone();
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        Discovery::remove_own();
        running.shutdown().await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn config(args: ConfigArgs) -> Result<ExitCode> {
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
    print!("{out}");
    eprint!("{}", advice(kind, &root));
    Ok(ExitCode::SUCCESS)
}

/// The agents' token of a gate listening on `addr`: `--no-token` (loopback only: none),
/// `--token-file`, `--token`/`PATCHGATE_TOKEN`, else the one kept for `root` in the state
/// directory (the same at every start).
fn agent_token(
    token: Option<String>,
    opts: &patchgate::cli::TokenOpts,
    addr: std::net::SocketAddr,
    root: &std::path::Path,
) -> Result<Option<String>> {
    if opts.no_token {
        if !addr.ip().is_loopback() {
            bail!("--no-token is for a loopback address only; {addr} is reachable from elsewhere");
        }
        eprintln!(
            "patchgate: warning: --no-token: any local process can call the edit tools at /mcp \
             (the review API still needs its reviewer token)"
        );
        return Ok(None);
    }
    if let Some(path) = &opts.token_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the token file {}", path.display()))?;
        let t = text.lines().next().unwrap_or("").trim().to_string();
        if t.is_empty() {
            bail!("the token file {} is empty", path.display());
        }
        return Ok(Some(t));
    }
    if let Some(t) = token.filter(|t| !t.trim().is_empty()) {
        return Ok(Some(t));
    }
    let t = patchgate::mcp::discovery::stable_token(root)
        .context("cannot keep the agents' token in the state directory")?;
    Ok(Some(t))
}

/// The HTTP options of a gate: bodies up to twice the file cap (JSON escaping) plus 1 MiB,
/// sessions kept well past the longest review.
fn gate_http_options(
    gate: &patchgate::review::queue::Gate,
    addr: std::net::SocketAddr,
    token: Option<String>,
    extra_hosts: Vec<String>,
    review_timeout: std::time::Duration,
) -> patchgate::mcp::http::HttpOptions {
    patchgate::mcp::http::HttpOptions {
        addr,
        token,
        // The reviewers' token is new at every start and lives in the discovery file only.
        review_token: patchgate::mcp::http::random_token(),
        extra_hosts,
        max_body: usize::try_from(gate.workspace().config.max_file_bytes)
            .unwrap_or(usize::MAX / 4)
            .saturating_mul(2)
            .saturating_add(1 << 20),
        session_keep_alive: (review_timeout * 3).max(std::time::Duration::from_secs(3600)),
        limits: patchgate::mcp::serve::Limits::default(),
    }
}

fn need_terminal() -> Result<()> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!(
            "the review TUI needs a terminal; MCP clients should spawn `patchgate serve --stdio` (see `patchgate config`)"
        );
    }
    Ok(())
}

fn review(args: ReviewArgs) -> Result<ExitCode> {
    set_color(args.color);
    use patchgate::mcp::{discovery::Discovery, http, service};
    use patchgate::tui::backend::{Backend, Remote};
    use patchgate::workspace::config::PolicyName;

    need_terminal()?;
    patchgate::log::init();
    let rt = runtime()?;
    let _guard = rt.enter();
    if let Some(url) = &args.connect {
        let token = match args.token.clone().filter(|t| !t.is_empty()) {
            Some(t) => t,
            None => Discovery::live()
                .filter(|d| d.url.trim_end_matches('/') == url.trim_end_matches('/').trim_end_matches("/mcp"))
                .map(|d| d.review_token)
                .filter(|t| !t.is_empty())
                .context("give the gate's reviewer token with --token or PATCHGATE_TOKEN (`review_token` in the discovery file of the machine the gate runs on)")?,
        };
        let remote = Remote::new(url, &token).map_err(|e| anyhow::anyhow!(e))?;
        rt.block_on(remote.info())
            .map_err(|e| anyhow::anyhow!("cannot reach the gate at {url}: {e}"))?;
        let ended = rt.block_on(patchgate::tui::run(Backend::Remote(remote), None))?;
        if ended.pending > 0 {
            eprintln!(
                "patchgate: {} review(s) still pending at {url}",
                ended.pending
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let root = std::fs::canonicalize(&args.root)
        .with_context(|| format!("cannot use {} as the root", args.root.display()))?;
    let mut root_lock = RootLock::acquire(&root).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let (gate, review_timeout) = patchgate::review::open_gate(
        &root,
        args.policy.map(Into::into),
        PolicyName::Gate,
        args.review_timeout,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let addr = listen_addr(&args.listen)?;
    let dispatcher = service::Dispatcher::new(
        gate.clone(),
        review_timeout,
        service::Reviewers::Attachable,
        None,
    );
    let opts = gate_http_options(
        &gate,
        addr,
        agent_token(args.token, &args.token_opts, addr, &root)?,
        args.allow_host,
        review_timeout,
    );
    let (token, review_token) = (opts.token.clone(), opts.review_token.clone());
    let running = rt
        .block_on(http::start(dispatcher.clone(), opts))
        .context("is another gate running? `patchgate --listen 127.0.0.1:0` picks a free port")?;
    root_lock.set_url(&running.url);
    let discovery = Discovery {
        url: running.url.clone(),
        mcp_url: running.mcp_url(),
        token: token.unwrap_or_default(),
        review_token,
        pid: std::process::id(),
        root: root.clone(),
    };
    discovery
        .write()
        .context("cannot write the discovery file")?;
    let address = running.addr.to_string();
    let ended = rt.block_on(patchgate::tui::run(
        Backend::local(dispatcher, Some(address)),
        None,
    ));
    Discovery::remove_own();
    rt.block_on(async {
        if !gate.pending().is_empty() {
            gate.reviewer_gone();
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        running.shutdown().await;
    });
    ended?;
    Ok(ExitCode::SUCCESS)
}

fn demo(args: DemoArgs) -> Result<ExitCode> {
    set_color(args.color);
    use patchgate::mcp::{http, service};
    use patchgate::tui::backend::Backend;
    use patchgate::workspace::config::PolicyName;

    need_terminal()?;
    patchgate::log::init();
    let dir = std::env::temp_dir().join(format!("patchgate-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    patchgate::tui::demo::materialize(&dir)
        .with_context(|| format!("cannot write the demo project to {}", dir.display()))?;
    let rt = runtime()?;
    let _guard = rt.enter();
    let (gate, review_timeout) =
        patchgate::review::open_gate(&dir, Some(PolicyName::Gate), PolicyName::Gate, None)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    let dispatcher = service::Dispatcher::new(
        gate.clone(),
        review_timeout,
        service::Reviewers::Attachable,
        None,
    );
    // Listen too, so a real agent can join the demo (no discovery file: it is not your gate).
    let running = rt.block_on(http::start(
        dispatcher.clone(),
        http::HttpOptions {
            addr: "127.0.0.1:0".parse()?,
            token: Some(http::random_token()),
            review_token: http::random_token(),
            extra_hosts: Vec::new(),
            max_body: 32 << 20,
            session_keep_alive: std::time::Duration::from_secs(3600),
            limits: patchgate::mcp::serve::Limits::default(),
        },
    ))?;
    let agent = dispatcher.clone();
    let pace = std::time::Duration::from_millis(args.pace.max(1));
    let ended = rt.block_on(patchgate::tui::run(
        Backend::local(dispatcher, Some(running.addr.to_string())),
        Some(Box::new(move |tx| {
            patchgate::tui::demo::start_agent(agent, tx, pace)
        })),
    ));
    rt.block_on(async {
        gate.reviewer_gone();
        running.shutdown().await;
    });
    ended?;
    if args.keep {
        println!("the demo project is in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
        println!("demo done; its temporary project was removed (--keep keeps it)");
    }
    Ok(ExitCode::SUCCESS)
}

/// Read a patch: the file, or stdin for `-` / nothing.
fn read_patch(path: Option<&std::path::Path>) -> Result<(String, String)> {
    use std::io::Read;
    let (name, bytes) = match path.filter(|p| p.as_os_str() != "-") {
        Some(p) => (
            p.display().to_string(),
            std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        None => {
            if std::io::stdin().is_terminal() {
                bail!("give a patch file, or pipe one in: `git diff | patchgate apply`");
            }
            let mut b = Vec::new();
            std::io::stdin()
                .read_to_end(&mut b)
                .context("cannot read the patch from stdin")?;
            ("stdin".to_string(), b)
        }
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{name} is not UTF-8 text; patchgate applies text patches"))?;
    Ok((name, text))
}

fn apply(args: ApplyArgs) -> Result<ExitCode> {
    set_color(args.color);
    use patchgate::edit::patchfile;
    use patchgate::review::apply as patch_apply;
    use patchgate::review::queue::Outcome;
    use patchgate::workspace::config::PolicyName;

    let (name, text) = read_patch(args.patch.as_deref())?;
    // The patch's name is shown only; paths in it may carry control characters.
    let name = inert_line(&name).into_owned();
    let set = match &args.file {
        Some(path) => patchfile::lazy(path, &text, args.instruction.as_deref()),
        None => match patchfile::parse(&text, args.strip, args.reverse) {
            Ok(set) => set,
            Err(e) => {
                eprintln!("patchgate: {name}: {}: {}", e.code.as_str(), e.message);
                return Ok(ExitCode::from(1));
            }
        },
    };
    let root = std::fs::canonicalize(&args.root)
        .with_context(|| format!("cannot use {} as the root", args.root.display()))?;
    let policy = if args.yes {
        PolicyName::Auto
    } else {
        PolicyName::Gate
    };
    let (gate, review_timeout) =
        patchgate::review::open_gate(&root, Some(policy), PolicyName::Gate, None)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    let rt = runtime()?;
    let _guard = rt.enter();
    let files = set.files.len();
    let checked = rt.block_on(patch_apply::check(&gate, &set));
    let failed: Vec<&patch_apply::Checked> = checked.iter().filter(|c| c.result.is_err()).collect();
    let print_failures = || {
        for c in &failed {
            if let Err(e) = &c.result {
                eprintln!(
                    "  does not apply  {}: {}",
                    inert_line(&c.path),
                    inert(&e.to_string())
                );
            }
        }
    };
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if args.check {
        for c in &checked {
            if let Ok(ok) = &c.result {
                println!(
                    "  applies  {}  +{} -{}",
                    inert_line(&c.path),
                    ok.added,
                    ok.removed
                );
                for w in &ok.warnings {
                    println!("           {}", inert_line(w));
                }
            }
        }
        print_failures();
        println!(
            "{name} ({}): {} of {files} file{} apply",
            set.format.name(),
            files - failed.len(),
            plural(files)
        );
        return Ok(if failed.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    if args.yes {
        if !failed.is_empty() {
            print_failures();
            eprintln!(
                "patchgate: {} of {files} file{} in {name} do not apply; nothing was written",
                failed.len(),
                plural(files)
            );
            return Ok(ExitCode::from(1));
        }
        return match rt.block_on(patch_apply::apply_all(&gate, &set)) {
            Ok(Outcome::Applied(s)) => {
                for c in &checked {
                    if let Ok(ok) = &c.result {
                        println!(
                            "  applied  {}  +{} -{}",
                            inert_line(&c.path),
                            ok.added,
                            ok.removed
                        );
                    }
                }
                println!(
                    "applied {name} ({}): {files} file{}, run {} (`patchgate undo {}` reverts it)",
                    set.format.name(),
                    plural(files),
                    s.run_id,
                    s.run_id
                );
                Ok(ExitCode::SUCCESS)
            }
            Ok(Outcome::Failed(_, e)) | Err(e) => {
                eprintln!(
                    "patchgate: {}: {}; nothing was written",
                    e.code.as_str(),
                    e.message
                );
                Ok(ExitCode::from(1))
            }
            Ok(_) => {
                eprintln!("patchgate: the patch was not applied; nothing was written");
                Ok(ExitCode::from(1))
            }
        };
    }
    // The TUI: one review per file that applies.
    if failed.len() == files {
        print_failures();
        eprintln!("patchgate: nothing in {name} applies; nothing was written");
        return Ok(ExitCode::from(1));
    }
    if !std::io::stdout().is_terminal() || std::fs::File::open("/dev/tty").is_err() {
        bail!(
            "reviewing a patch needs a terminal; use --yes to apply it all or --check to test it"
        );
    }
    patchgate::log::init();
    let dispatcher = patchgate::mcp::service::Dispatcher::new(
        gate.clone(),
        review_timeout,
        patchgate::mcp::service::Reviewers::Attachable,
        None,
    );
    let requests = patch_apply::requests(&set);
    // Each submitted file: its run id, or why the gate refused it.
    type Submitted = Vec<(String, std::result::Result<String, String>)>;
    let run_ids = std::sync::Arc::new(std::sync::Mutex::new(Submitted::new()));
    let submit_gate = gate.clone();
    let submitted = run_ids.clone();
    let bad_paths: Vec<String> = failed.iter().map(|c| c.path.clone()).collect();
    let ended = rt.block_on(patchgate::tui::run(
        patchgate::tui::backend::Backend::local(dispatcher, Some(format!("apply {name}"))),
        Some(Box::new(move |tx| {
            tokio::spawn(async move {
                for (path, req) in requests {
                    if bad_paths.contains(&path) {
                        continue;
                    }
                    match submit_gate.submit(req).await {
                        Ok(o) => {
                            let id = outcome_run_id(&o).ok_or_else(|| "refused".to_string());
                            submitted.lock().unwrap().push((path, id));
                        }
                        Err(e) => {
                            let _ = tx.send(patchgate::tui::update::Msg::Done(Err(format!(
                                "{path}: {}",
                                e.message
                            ))));
                            submitted.lock().unwrap().push((path, Err(e.message)));
                        }
                    }
                }
                if let Some(first) = failed_summary(&bad_paths) {
                    let _ = tx.send(patchgate::tui::update::Msg::Done(Err(first)));
                }
            });
        })),
    ));
    rt.block_on(async {
        if !gate.pending().is_empty() {
            gate.reviewer_gone();
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    });
    ended?;
    println!("{name} ({}):", set.format.name());
    let mut applied = 0;
    let submitted = run_ids.lock().unwrap().clone();
    // Every file of the patch, in its order: applied, rejected, or why not.
    for c in &checked {
        let path = &c.path;
        let id = match (&c.result, submitted.iter().find(|(p, _)| p == path)) {
            (Err(e), _) => {
                let why = inert_line(e.lines().next().unwrap_or("")).into_owned();
                println!(
                    "  {}: not applied (does not apply: {why})",
                    inert_line(path)
                );
                continue;
            }
            (Ok(_), Some((_, Err(why)))) => {
                let why = inert_line(why.lines().next().unwrap_or("")).into_owned();
                println!("  {}: not applied ({why})", inert_line(path));
                continue;
            }
            (Ok(_), None) => {
                println!(
                    "  {}: not applied (never sent for review)",
                    inert_line(path)
                );
                continue;
            }
            (Ok(_), Some((_, Ok(id)))) => id,
        };
        let line = match gate.get(id) {
            Some(p) => {
                let r = p.review.as_ref();
                match p.state {
                    patchgate::review::proposal::State::Applied => {
                        applied += 1;
                        match r {
                            Some(r) if r.edited_by_reviewer => "applied as edited".to_string(),
                            Some(r) if r.hunks_accepted < r.hunks_total => {
                                format!("applied {} of {} hunks", r.hunks_accepted, r.hunks_total)
                            }
                            _ => "applied".to_string(),
                        }
                    }
                    patchgate::review::proposal::State::Rejected => "rejected".to_string(),
                    s => format!("not applied ({})", s.name()),
                }
            }
            None => "not applied".to_string(),
        };
        println!("  {}: {line}", inert_line(path));
    }
    print_failures();
    println!(
        "{applied} of {files} file{} applied{}",
        plural(files),
        if applied > 0 {
            " (`patchgate log` lists them, `patchgate undo` reverts)"
        } else {
            ""
        }
    );
    // Exit 1 unless every file was applied.
    Ok(if applied == files {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--color` for the TUI.
fn set_color(c: patchgate::cli::ColorArg) {
    use patchgate::cli::ColorArg;
    patchgate::tui::set_color(match c {
        ColorArg::Auto => None,
        ColorArg::Always => Some(true),
        ColorArg::Never => Some(false),
    });
}

fn outcome_run_id(o: &patchgate::review::queue::Outcome) -> Option<String> {
    use patchgate::review::queue::Outcome;
    match o {
        Outcome::Applied(s) | Outcome::DryRun(s) | Outcome::Pending(s) | Outcome::Rejected(s) => {
            Some(s.run_id.clone())
        }
        Outcome::Failed(s, _) => s.as_ref().map(|s| s.run_id.clone()),
    }
}

fn failed_summary(bad: &[String]) -> Option<String> {
    match bad {
        [] => None,
        [one] => Some(format!(
            "{one} does not apply (the summary on exit says why)"
        )),
        many => Some(format!(
            "{} files do not apply: {} (the summary on exit says why)",
            many.len(),
            many.join(", ")
        )),
    }
}
