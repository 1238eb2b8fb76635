//! Assembling a gate: `serve` (headless, or a stdio server) and `review` (the gate with its TUI), their tokens, HTTP options and shutdown.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use patchgate::cli::{ReviewArgs, ServeArgs};
use patchgate::workspace::rootlock::RootLock;

use super::*;

/// Wait for Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
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

pub(crate) fn serve(args: ServeArgs) -> Result<ExitCode> {
    use patchgate::mcp::{server::McpServer, service};
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
    let root_lock = RootLock::acquire(&root).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let policy = gate.policy().default;
    let token = agent_token(args.token, &args.token_opts, addr, &root)?;
    let on = rt.block_on(listen(
        &gate,
        review_timeout,
        (addr, token, args.allow_host),
        root_lock,
    ))?;
    tracing::info!("listening on {} (root {})", on.running.url, root.display());
    eprintln!(
        "patchgate: gate for {} listening on {} (policy {}); MCP endpoint {}\n\
         patchgate: bearer token and address in {}; Ctrl-C stops",
        root.display(),
        on.running.url,
        policy.as_str(),
        on.running.mcp_url(),
        on.discovery_file.display()
    );
    rt.block_on(async move {
        shutdown_signal().await;
        stop(&gate, on.running).await;
    });
    Ok(ExitCode::SUCCESS)
}

/// A gate listening over HTTP, found through its discovery entry.
pub(crate) struct Listening {
    /// What serves its agents.
    pub(crate) dispatcher: patchgate::mcp::service::Dispatcher,
    /// The HTTP server.
    pub(crate) running: patchgate::mcp::http::Running,
    /// Its discovery entry.
    pub(crate) discovery_file: std::path::PathBuf,
    /// Held while it runs: one gate per root.
    _root_lock: RootLock,
}

/// Serve `gate` over HTTP at `addr` with the agents' `token` (and extra allowed hosts), and
/// write its discovery entry.
pub(crate) async fn listen(
    gate: &patchgate::review::queue::Gate,
    review_timeout: std::time::Duration,
    (addr, token, allow_host): (std::net::SocketAddr, Option<String>, Vec<String>),
    mut root_lock: RootLock,
) -> Result<Listening> {
    use patchgate::mcp::{discovery::Discovery, http, service};
    let dispatcher = service::Dispatcher::new(
        gate.clone(),
        review_timeout,
        service::Reviewers::Attachable,
        None,
    );
    // The reviews a gate killed on this root left pending are pending again before any
    // agent or reviewer can reach this one.
    gate.keep_open_reviews(&root_lock);
    let opts = gate_http_options(gate, addr, token, allow_host, review_timeout)?;
    let (token, review_token) = (opts.token.clone(), opts.review_token.clone());
    let running = http::start(dispatcher.clone(), opts)
        .await
        .context("is another gate running? `patchgate --listen 127.0.0.1:0` picks a free port")?;
    root_lock.set_url(&running.url);
    let discovery = Discovery {
        url: running.url.clone(),
        mcp_url: running.mcp_url(),
        token: token.unwrap_or_default(),
        review_token,
        pid: std::process::id(),
        root: gate.workspace().root.path().to_path_buf(),
    };
    let discovery_file = discovery
        .write()
        .context("cannot write the discovery file")?;
    Ok(Listening {
        dispatcher,
        running,
        discovery_file,
        _root_lock: root_lock,
    })
}

/// Stop a listening gate: waiting agents hear REVIEWER_GONE before the connections close,
/// and the discovery entry goes.
pub(crate) async fn stop(
    gate: &patchgate::review::queue::Gate,
    running: patchgate::mcp::http::Running,
) {
    use patchgate::mcp::discovery::Discovery;
    Discovery::remove_own();
    if !gate.pending().is_empty() {
        gate.reviewer_gone();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    running.shutdown().await;
}

/// The agents' token of a gate listening on `addr`: `--no-token` (loopback only: none),
/// `--token-file`, `--token`/`PATCHGATE_TOKEN`, else the one kept for `root` in the state
/// directory (the same at every start).
pub(crate) fn agent_token(
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
/// sessions kept well past the longest review; an error when no reviewers' token can be made.
pub(crate) fn gate_http_options(
    gate: &patchgate::review::queue::Gate,
    addr: std::net::SocketAddr,
    token: Option<String>,
    extra_hosts: Vec<String>,
    review_timeout: std::time::Duration,
) -> Result<patchgate::mcp::http::HttpOptions> {
    Ok(patchgate::mcp::http::HttpOptions {
        addr,
        token,
        // The reviewers' token is new at every start and lives in the discovery file only.
        review_token: patchgate::workspace::random::token()
            .context("cannot make the reviewers' token")?,
        extra_hosts,
        max_body: usize::try_from(gate.workspace().config.max_file_bytes)
            .unwrap_or(usize::MAX / 4)
            .saturating_mul(2)
            .saturating_add(1 << 20),
        session_keep_alive: review_timeout
            .saturating_mul(3)
            .max(std::time::Duration::from_secs(3600)),
        limits: patchgate::mcp::serve::Limits::default(),
    })
}

/// A TUI attached to a gate of this machine follows it across restarts: when the gate goes
/// away, the discovery entry of its root names the next one (its URL and reviewer token).
/// The TUI is handed a function that looks it up, as it knows nothing of discovery (MCP).
fn follow_local_gate(
    remote: patchgate::tui::backend::Remote,
    root: &std::path::Path,
) -> patchgate::tui::backend::Remote {
    use patchgate::mcp::discovery::Discovery;
    fn canon(p: &std::path::Path) -> std::path::PathBuf {
        std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
    }
    // The gate of exactly this root (not one of a directory above it).
    let find =
        |root: &std::path::Path| Discovery::for_dir(root).filter(|d| canon(&d.root) == canon(root));
    let here = find(root).is_some_and(|d| d.url.trim_end_matches('/') == remote.base());
    if !here {
        // A gate elsewhere: its discovery entries are on its own machine.
        return remote;
    }
    remote.follow(
        root.to_path_buf(),
        std::sync::Arc::new(move |root: &std::path::Path| {
            find(root).map(|d| (d.url, d.review_token))
        }),
    )
}

pub(crate) fn review(args: ReviewArgs) -> Result<ExitCode> {
    set_color(args.color);
    use patchgate::mcp::discovery::Discovery;
    use patchgate::tui::backend::{Backend, Remote, RemoteError};
    use patchgate::workspace::config::PolicyName;

    need_terminal()?;
    patchgate::log::init();
    let rt = runtime()?;
    let _guard = rt.enter();
    if let Some(url) = &args.connect {
        let token = match args.token.clone().filter(|t| !t.is_empty()) {
            Some(t) => t,
            None => Discovery::for_url(url)
                .map(|d| d.review_token)
                .filter(|t| !t.is_empty())
                .context("give the gate's reviewer token with --token or PATCHGATE_TOKEN (`review_token` in the discovery file of the machine the gate runs on)")?,
        };
        let remote = Remote::new(url, &token).map_err(|e| anyhow::anyhow!(e))?;
        // A token the gate refuses (the agents' one, say) is an error, not a lost connection.
        let info = match rt.block_on(remote.connect()) {
            Ok(info) => info,
            Err(RemoteError::Refused(why)) => bail!("{why}"),
            Err(RemoteError::Failed(e)) => bail!("cannot reach the gate at {url}: {e}"),
        };
        let remote = follow_local_gate(remote, &info.root);
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
    let root_lock = RootLock::acquire(&root).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let (gate, review_timeout) = patchgate::review::open_gate(
        &root,
        args.policy.map(Into::into),
        PolicyName::Gate,
        args.review_timeout,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let addr = listen_addr(&args.listen)?;
    let token = agent_token(args.token, &args.token_opts, addr, &root)?;
    let on = rt.block_on(listen(
        &gate,
        review_timeout,
        (addr, token, args.allow_host),
        root_lock,
    ))?;
    let address = on.running.addr.to_string();
    let ended = rt.block_on(patchgate::tui::run(
        super::local_backend(&on.dispatcher, Some(address)),
        None,
    ));
    rt.block_on(stop(&gate, on.running));
    ended?;
    Ok(ExitCode::SUCCESS)
}
