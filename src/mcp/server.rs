//! The rmcp server handler: `tools/list` from [`super::tools`], `tools/call` through the
//! [`Dispatcher`], progress as MCP progress notifications, and the envelope as structured
//! content (and the same JSON as text). Errors are tool results with `isError: true`; only an
//! unknown tool name is a protocol error.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};

use super::args::ToolName;
use super::hangup::Hangup;
use super::progress::ProgressSink;
use super::service::{Caller, Dispatcher};
use super::tools;
use crate::review::agents::AgentLink;
use tokio_util::sync::CancellationToken;

/// The MCP server: one per session (cheap clones share the dispatcher). A session's server
/// holds its agent's link to the gate (docs/DESIGN.md §4): when the session ends, the
/// agent's pending reviews are withdrawn.
#[derive(Clone)]
pub struct McpServer {
    dispatcher: Dispatcher,
    tools: Arc<Vec<Tool>>,
    agent: Option<AgentLink>,
}

struct PeerProgress {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
}

impl ProgressSink for PeerProgress {
    fn progress<'a>(
        &'a self,
        done: f64,
        total: f64,
        message: String,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let Some(token) = self.token.clone() else {
                return;
            };
            let p = ProgressNotificationParam::new(token, done)
                .with_total(total)
                .with_message(message);
            if let Err(e) = self.peer.notify_progress(p).await {
                tracing::debug!("progress notification not sent: {e}");
            }
        })
    }
}

impl McpServer {
    /// A server over `dispatcher`.
    pub fn new(dispatcher: Dispatcher) -> McpServer {
        McpServer {
            dispatcher,
            tools: Arc::new(tools::all()),
            agent: None,
        }
    }

    /// The server of a new session: a new agent connected to the gate, for as long as the
    /// session (and so this server) lives.
    pub fn for_session(&self) -> McpServer {
        McpServer {
            agent: Some(self.dispatcher.gate().connect_agent()),
            ..self.clone()
        }
    }

    /// Serve one client over stdin/stdout until it disconnects.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        self.dispatcher.connect_early();
        let running = self
            .for_session()
            .serve(rmcp::transport::io::stdio_pipes())
            .await
            .map_err(|e| {
                std::io::Error::other(format!("MCP initialisation over stdio failed: {e}"))
            })?;
        let reason = running.waiting().await.map_err(std::io::Error::other)?;
        tracing::info!("stdio session ended: {reason:?}");
        Ok(())
    }
}

/// A watch that ends with the call (dropped: aborted).
struct Watch(Option<tokio::task::JoinHandle<()>>);

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// The call's cancellation: the MCP cancellation, or — over HTTP — the connection of the
/// request closing before its answer ended ([`Hangup`]); either withdraws a waiting review.
fn cancel_or_hangup(ctx: &RequestContext<RoleServer>) -> (CancellationToken, Watch) {
    let hangup = ctx
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<Hangup>())
        .cloned();
    let Some(Hangup(hangup)) = hangup else {
        return (ctx.ct.clone(), Watch(None));
    };
    let either = CancellationToken::new();
    let (ct, fire) = (ctx.ct.clone(), either.clone());
    let task = tokio::spawn(async move {
        tokio::select! {
            () = ct.cancelled() => {}
            () = hangup.cancelled() => tracing::info!("the agent hung up on its call"),
        }
        fire.cancel();
    });
    (either, Watch(Some(task)))
}

fn client_name(ctx: &RequestContext<RoleServer>) -> Option<String> {
    let info = ctx
        .meta
        .client_info()
        .or_else(|| ctx.peer.peer_info().map(|p| p.client_info.clone()))?;
    // Both parts bounded before they are joined (docs/DESIGN.md §7).
    let name = crate::inert::client_name(&info.name)?;
    Some(match crate::inert::client_name(&info.version) {
        None => name,
        Some(version) => crate::inert::client_name(&format!("{name} {version}"))?,
    })
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("patchgate", env!("CARGO_PKG_VERSION"))
                    .with_title("patchgate: reviewed, exact file edits"),
            )
            .with_instructions(tools::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = ToolName::parse(&request.name) else {
            let names: Vec<&str> = ToolName::ALL.iter().map(|t| t.as_str()).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; the tools are {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        };
        let client = client_name(&ctx);
        let sink = PeerProgress {
            peer: ctx.peer.clone(),
            token: ctx.meta.get_progress_token(),
        };
        let started = std::time::Instant::now();
        if tool.is_search() {
            let arguments = request.arguments.unwrap_or_default();
            let (value, failed) = self
                .dispatcher
                .search(tool, &arguments, client.clone(), ctx.ct.clone(), &sink)
                .await;
            tracing::info!(
                tool = tool.as_str(),
                client = client.as_deref().unwrap_or("-"),
                files = value["files"].as_object().map_or(0, serde_json::Map::len),
                ms = started.elapsed().as_millis() as u64,
                "search call"
            );
            let result = if failed {
                CallToolResult::structured_error(value)
            } else {
                CallToolResult::structured(value)
            };
            return Ok(result.into());
        }
        let caller = Caller {
            client: client.clone(),
            agent: self.agent.as_ref().map(|a| a.agent().clone()),
            in_flight: ctx
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|p| p.extensions.get::<super::inflight::Share>())
                .cloned(),
        };
        let (cancel, _watch) = cancel_or_hangup(&ctx);
        let env = self
            .dispatcher
            .run_for(
                tool,
                request.arguments.unwrap_or_default(),
                caller,
                cancel,
                &sink,
            )
            .await;
        tracing::info!(
            tool = tool.as_str(),
            client = client.as_deref().unwrap_or("-"),
            status = ?env.status,
            code = env.code.map_or("-", |c| c.as_str()),
            run_id = env.run_id.as_deref().unwrap_or("-"),
            ms = started.elapsed().as_millis() as u64,
            "tool call"
        );
        let value = env.to_value();
        let result = if env.is_error() {
            CallToolResult::structured_error(value)
        } else {
            CallToolResult::structured(value)
        };
        Ok(result.into())
    }
}
