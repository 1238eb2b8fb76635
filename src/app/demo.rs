//! The `demo` command: the TUI with a scripted agent on an embedded project.

use std::process::ExitCode;

use anyhow::{Context, Result};

use patchgate::cli::DemoArgs;

use super::*;

pub(crate) fn demo(args: DemoArgs) -> Result<ExitCode> {
    set_color(args.color);
    use patchgate::mcp::{http, service};
    use patchgate::workspace::config::PolicyName;

    need_terminal()?;
    // The scripted agent's calls are data, checked before anything is made.
    let script = super::demo_agent::Script::embedded()
        .map_err(|e| anyhow::anyhow!("the demo's script (assets/demo/agent.toml): {e}"))?;
    // Everything the demo keeps lives in its temporary directory: the project, and beside
    // it the state directory (journal, pre-images, locks, log, search index), chosen for
    // this whole process before anything reads it, so the user's own is never touched.
    // A new directory of the user's own (0700, a name nobody could have made beforehand).
    let base = tempfile::Builder::new()
        .prefix("patchgate-demo-")
        .tempdir()
        .context("cannot make the demo's temporary directory")?
        .keep();
    let dir = base.join("project");
    patchgate::workspace::state::use_state_dir(base.join("state"));
    patchgate::log::init();
    std::fs::create_dir_all(&dir)?;
    super::demo_agent::materialize(&dir)
        .with_context(|| format!("cannot write the demo project to {}", dir.display()))?;
    let rt = runtime()?;
    let _guard = rt.enter();
    let (gate, review_timeout) =
        patchgate::review::open_gate(&dir, Some(PolicyName::Gate), PolicyName::Gate, None)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    // The demo's scripted edits are not your agents': your policy hook is not asked.
    let gate = gate.with_hook(None);
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
            token: Some(patchgate::workspace::random::token().context("cannot make a token")?),
            review_token: patchgate::workspace::random::token().context("cannot make a token")?,
            extra_hosts: Vec::new(),
            max_body: 32 << 20,
            session_keep_alive: std::time::Duration::from_secs(3600),
            limits: patchgate::mcp::serve::Limits::default(),
        },
    ))?;
    let agent = dispatcher.clone();
    let pace = std::time::Duration::from_millis(args.pace.max(1));
    let ended = rt.block_on(patchgate::tui::run(
        super::local_backend(&dispatcher, Some(running.addr.to_string())),
        Some(Box::new(move |tx| {
            super::demo_agent::start_agent(script, agent, tx, pace)
        })),
    ));
    rt.block_on(async {
        gate.reviewer_gone();
        running.shutdown().await;
    });
    ended?;
    if args.keep {
        println!(
            "the demo project is in {} (its journal and log in {})",
            dir.display(),
            base.join("state").display()
        );
    } else {
        let _ = std::fs::remove_dir_all(&base);
        println!("demo done; its temporary project was removed (--keep keeps it)");
    }
    Ok(ExitCode::SUCCESS)
}
