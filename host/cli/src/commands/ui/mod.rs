//! `cordon ui`: the run store in a browser. A page lists the runs with
//! their outcomes and filters; shows a run's steps as rows and its calls as
//! bars over time, with verdicts and the rules that decided, hooks,
//! approvals and sub-agents' runs; shows a call's arguments, result, events
//! and its step's file diff; and answers the calls a run waits on, which
//! resumes it exactly as `cordon runs resume` does ([`resume`]).
//!
//! It serves itself from the binary ([`page`]), on loopback only, and admits
//! a request only from its own page with the launch's token ([`guard`]).

mod api;
mod guard;
mod page;
mod resume;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use bytes::Bytes;
use clap::Args;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::args::{GlobalArgs, StoreArg};
use crate::store;
use guard::Guard;
use resume::Resumer;

/// The most a decision's body may hold.
const MAX_BODY: usize = 64 * 1024;

#[derive(Debug, Args)]
pub(crate) struct UiArgs {
    /// Where to listen: a loopback address (127.0.0.1 or [::1]) and port; port
    /// 0 takes a free one.
    #[arg(long, value_name = "ADDRESS:PORT", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub store: StoreArg,
}

/// What every request is answered from.
struct Inspector {
    store: store::RunStore,
    /// The store as the page names it (a Postgres URL without its password).
    location: String,
    guard: Guard,
    resumer: Resumer,
}

pub(crate) async fn run(global: &GlobalArgs, args: UiArgs) -> anyhow::Result<ExitCode> {
    if !args.listen.ip().is_loopback() {
        bail!(
            "--listen {}: the run inspector answers on this machine's loopback only (127.0.0.1 or [::1]), \
             since it shows every run's arguments and results and resumes runs",
            args.listen
        );
    }
    let location = args.store.location(global);
    let store = store::existing(&location).await?;
    let raw = match &location {
        store::StoreLocation::File(path) => std::path::absolute(path)
            .with_context(|| format!("resolving {}", path.display()))?
            .into_os_string(),
        store::StoreLocation::Postgres(url) => url.into(),
    };
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr()?;
    let mut secret = [0_u8; 32];
    getrandom::fill(&mut secret)
        .map_err(|error| anyhow::anyhow!("no randomness for the launch's token: {error}"))?;
    let token: String = secret.iter().map(|byte| format!("{byte:02x}")).collect();
    let inspector = Arc::new(Inspector {
        store,
        location: location.to_string(),
        guard: Guard::new(address.port(), token),
        resumer: Resumer::new(global, raw)?,
    });
    println!(
        "cordon ui: the runs of {location} at http://{address}/#token={}",
        inspector.guard.token()
    );
    println!("(the address holds this launch's token: share it with no one; Ctrl-C stops)");
    loop {
        let (stream, _) = listener.accept().await?;
        let inspector = Arc::clone(&inspector);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let inspector = Arc::clone(&inspector);
                async move { Ok::<_, Infallible>(answer(&inspector, request).await) }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%error, "an inspector connection ended badly");
            }
        });
    }
}

/// The answer to `request`.
async fn answer(inspector: &Inspector, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let data = path.starts_with("/api/");
    if let Err(refusal) = inspector.guard.admit(&parts, data) {
        return text(refusal.status(), &refusal.to_string());
    }
    if !data {
        return match (parts.method == Method::GET, page::asset(&path)) {
            (true, Some(asset)) => respond(
                StatusCode::OK,
                asset.kind,
                Bytes::from_static(asset.body.as_bytes()),
            ),
            _ => text(StatusCode::NOT_FOUND, "no such page"),
        };
    }
    let query: std::collections::BTreeMap<String, String> =
        form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let id = || {
        query
            .get("id")
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("name the run: ?id=RUN"))
    };
    let answered = match (&parts.method, path.as_str()) {
        (&Method::GET, "/api/runs") => api::runs(&inspector.store, &inspector.location).await,
        (&Method::GET, "/api/run") => match id() {
            Ok(id) => api::run(&inspector.store, &id).await,
            Err(error) => Err(error),
        },
        (&Method::GET, "/api/diff") => {
            let seq = query.get("seq").and_then(|seq| seq.parse().ok());
            match (id(), seq) {
                (Ok(id), Some(seq)) => api::diff(&inspector.store, &id, seq).await,
                (Err(error), _) => Err(error),
                (_, None) => Err(anyhow::anyhow!("name the commit: &seq=N")),
            }
        }
        (&Method::POST, "/api/decide") => match Limited::new(body, MAX_BODY).collect().await {
            Ok(body) => api::decide(&inspector.resumer, &body.to_bytes()).await,
            Err(error) => Err(anyhow::anyhow!("the decisions could not be read: {error}")),
        },
        _ => return text(StatusCode::NOT_FOUND, "no such request"),
    };
    match answered {
        Ok(value) => json_answer(StatusCode::OK, &value),
        Err(error) => json_answer(
            StatusCode::BAD_REQUEST,
            &json!({ "error": format!("{error:#}") }),
        ),
    }
}

fn json_answer(status: StatusCode, value: &Value) -> Response<Full<Bytes>> {
    respond(status, "application/json", Bytes::from(value.to_string()))
}

fn text(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    respond(
        status,
        "text/plain; charset=utf-8",
        Bytes::from(format!("{message}\n")),
    )
}

/// An answer with the headers every answer carries: the page's policy, no
/// sniffing, no caching, no referrer.
fn respond(status: StatusCode, kind: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, hyper::header::HeaderValue::from_static(kind));
    headers.insert(
        CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-store"),
    );
    headers.insert(
        "content-security-policy",
        hyper::header::HeaderValue::from_static(page::CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        "x-content-type-options",
        hyper::header::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        "referrer-policy",
        hyper::header::HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        "x-frame-options",
        hyper::header::HeaderValue::from_static("DENY"),
    );
    response
}
