//! `tcplab dashboard --db URL --listen ADDR`: a read-only web view of the archive (SQLite or
//! PostgreSQL) on axum. Pages: `/` the mesh grid of each inventory's newest round (its script
//! long-polls `/api/grid` and redraws in place when the grid changed), `/cell?sender=&receiver=&test=` one path's history,
//! `/host?name=` every path a host sends on, `/run/ID` the run's full HTML report (the report
//! crate's, as `tcplab report` writes it). The archive is opened read-only for each request
//! ([`store::Store::open_read_only`]): the dashboard never writes it. It listens on loopback
//! unless told otherwise; on any other address every request needs the token
//! (`?token=` or `Authorization: Bearer`), compared in constant time.
#![forbid(unsafe_code)]

pub mod data;
pub mod pages;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
use stats::regression::Rule;
use store::Store;
use subtle::ConstantTimeEq;

/// Dashboard errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A non-loopback address without a token.
    #[error("--listen {0} is not a loopback address: give --token or --token-file (every request must then carry it)")]
    TokenRequired(SocketAddr),
    /// The archive cannot be read.
    #[error("{0}")]
    Store(#[from] store::Error),
    /// Binding or serving failed.
    #[error("serving on {addr}: {source}")]
    Serve {
        /// Address.
        addr: SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
}

/// What the dashboard serves and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The archive: a file or a `postgres://` URL.
    pub db: PathBuf,
    /// Where to listen.
    pub listen: SocketAddr,
    /// The token every request must carry (required off loopback).
    pub token: Option<String>,
    /// History window for baselines and verdicts.
    pub since: Duration,
    /// The regression rule (its threshold also sets the cell colours).
    pub rule: Rule,
    /// How often the grid page refreshes, ms.
    pub poll_ms: u64,
}

struct App {
    opts: Options,
}

type Shared = Arc<App>;

/// Checks the options and the archive (opened read-only once), binds, and serves until
/// `stopped()` turns true (checked every 100 ms). `ready` is called with the bound address.
pub fn serve(
    opts: Options,
    ready: impl FnOnce(SocketAddr),
    stopped: impl Fn() -> bool + Send + 'static,
) -> Result<(), Error> {
    if !opts.listen.ip().is_loopback() && opts.token.as_deref().is_none_or(str::is_empty) {
        return Err(Error::TokenRequired(opts.listen));
    }
    Store::open_read_only(&opts.db)?;
    let addr = opts.listen;
    let io = |source| Error::Serve { addr, source };
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(io)?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(io)?;
        ready(listener.local_addr().map_err(io)?);
        let app = Arc::new(App { opts });
        let router = Router::new()
            .route("/", get(index))
            .route("/api/grid", get(grid))
            .route("/cell", get(cell))
            .route("/host", get(host))
            .route("/cell.csv", get(cell_csv))
            .route("/host.csv", get(host_csv))
            .route("/run/{id}", get(run))
            .layer(middleware::from_fn_with_state(app.clone(), auth))
            .with_state(app);
        let shutdown = async move {
            while !stopped() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        axum::serve(listener, router).with_graceful_shutdown(shutdown).await.map_err(io)
    })
}

/// The token check (nothing to check without one).
async fn auth(State(app): State<Shared>, req: Request, next: Next) -> Response {
    let Some(want) = app.opts.token.as_deref() else { return next.run(req).await };
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(String::from);
    let query = req.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|kv| kv.strip_prefix("token="))
            .map(|t| t.replace("%2B", "+").replace("%2F", "/").replace("%3D", "="))
    });
    let ok = [bearer, query].into_iter().flatten().any(|t| bool::from(t.as_bytes().ct_eq(want.as_bytes())));
    if ok {
        next.run(req).await
    } else {
        (StatusCode::UNAUTHORIZED, "a token is required: ?token=… or Authorization: Bearer …\n")
            .into_response()
    }
}

/// Runs `f` on a read-only opening of the archive, off the async workers.
async fn read<T: Send + 'static>(
    app: &Shared,
    f: impl FnOnce(&Store, &Options) -> store::Result<T> + Send + 'static,
) -> Result<T, Response> {
    let app = app.clone();
    let out = tokio::task::spawn_blocking(move || {
        let st = Store::open_read_only(&app.opts.db)?;
        f(&st, &app.opts)
    })
    .await;
    match out {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(store::Error::NotFound(id))) => {
            Err((StatusCode::NOT_FOUND, format!("no run {id}\n")).into_response())
        }
        Ok(Err(e)) => Err((StatusCode::SERVICE_UNAVAILABLE, format!("archive: {e}\n")).into_response()),
        Err(e) => Err((StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response()),
    }
}

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn judging(o: &Options) -> data::Judging {
    data::Judging { since_unix_ms: now_unix_ms().saturating_sub(o.since.as_millis() as u64), rule: o.rule }
}

async fn index(State(app): State<Shared>) -> Html<String> {
    Html(pages::index(app.opts.poll_ms))
}

#[derive(Debug, Deserialize)]
struct GridQuery {
    /// The token of the grid the page shows (`x-grid-token` of its last answer).
    #[serde(default)]
    known: String,
    /// How long to hold the answer while nothing changed, ms (at most [`MAX_WAIT_MS`]).
    #[serde(default)]
    wait: u64,
}

/// The longest a poll is held.
const MAX_WAIT_MS: u64 = 60_000;
/// How often a held poll looks for a change.
const RECHECK: Duration = Duration::from_millis(500);

/// The grids as JSON with their token in `x-grid-token`. With `?known=` that token already,
/// `204 No Content` (the token only): the live poll learns that nothing changed from a few
/// index lookups ([`Store::grid_token`]), without the grid being built; with `&wait=MS` the
/// answer is held until the token changes or `MS` pass (a long poll: a new round shows at once).
async fn grid(State(app): State<Shared>, Query(q): Query<GridQuery>) -> Result<Response, Response> {
    let until = tokio::time::Instant::now() + Duration::from_millis(q.wait.min(MAX_WAIT_MS));
    let out = loop {
        let known = q.known.clone();
        let out = read(&app, move |st, o| {
            let j = judging(o);
            let token = format!("{}-{}", st.grid_token()?, j.since_unix_ms / store::summary::DAY_MS);
            if token == known {
                return Ok((token, None));
            }
            Ok((token, Some(data::grids(st, &j)?)))
        })
        .await?;
        if out.1.is_some() || tokio::time::Instant::now() + RECHECK > until {
            break out;
        }
        tokio::time::sleep(RECHECK).await;
    };
    let headers = |token| [("x-grid-token", token), (header::CACHE_CONTROL.as_str(), "no-store".into())];
    Ok(match out {
        (token, None) => (StatusCode::NO_CONTENT, headers(token)).into_response(),
        (token, Some(grids)) => {
            let body = serde_json::to_string(&grids).unwrap_or_else(|_| "[]".into());
            (headers(token), [(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
    })
}

#[derive(Debug, Deserialize)]
struct CellQuery {
    sender: String,
    receiver: String,
    #[serde(default)]
    test: String,
    #[serde(default)]
    token: String,
}

async fn cell(State(app): State<Shared>, Query(q): Query<CellQuery>) -> Result<Html<String>, Response> {
    read(&app, move |st, o| {
        let j = judging(o);
        let results = data::history(st, j.since_unix_ms, &q.sender, Some(&q.receiver), &q.test)?;
        let judged = verdicts_of(&results, &j);
        let title = format!("{} → {} {}", q.sender, q.receiver, q.test);
        let csv = format!(
            "/cell.csv?{}",
            query(&[
                ("sender", &q.sender),
                ("receiver", &q.receiver),
                ("test", &q.test),
                ("token", &q.token)
            ])
        );
        Ok(pages::history(&title, &results, &judged, now_unix_ms(), &q.token, &csv))
    })
    .await
    .map(Html)
}

#[derive(Debug, Deserialize)]
struct HostQuery {
    name: String,
    #[serde(default)]
    token: String,
}

async fn host(State(app): State<Shared>, Query(q): Query<HostQuery>) -> Result<Html<String>, Response> {
    read(&app, move |st, o| {
        let j = judging(o);
        let results = data::history(st, j.since_unix_ms, &q.name, None, "")?;
        let judged = verdicts_of(&results, &j);
        let csv = format!("/host.csv?{}", query(&[("name", &q.name), ("token", &q.token)]));
        Ok(pages::history(&format!("{} sending", q.name), &results, &judged, now_unix_ms(), &q.token, &csv))
    })
    .await
    .map(Html)
}

/// A query string of the non-empty `pairs`, percent-encoded.
fn query(pairs: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn csv_response(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/csv; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], body)
        .into_response()
}

/// Every result of one path in the window, as CSV.
async fn cell_csv(State(app): State<Shared>, Query(q): Query<CellQuery>) -> Result<Response, Response> {
    read(&app, move |st, o| {
        let results = data::history(st, judging(o).since_unix_ms, &q.sender, Some(&q.receiver), &q.test)?;
        Ok(pages::csv(&results))
    })
    .await
    .map(csv_response)
}

/// Every result a host sent in the window, as CSV.
async fn host_csv(State(app): State<Shared>, Query(q): Query<HostQuery>) -> Result<Response, Response> {
    read(&app, move |st, o| Ok(pages::csv(&data::history(st, judging(o).since_unix_ms, &q.name, None, "")?)))
        .await
        .map(csv_response)
}

/// The verdicts of the series among `results` (one path's or one host's).
fn verdicts_of(results: &[store::PathResult], j: &data::Judging) -> Vec<results::regression::Judgement> {
    let obs: Vec<_> = results.iter().filter_map(data::observation).collect();
    let mut v = stats::regression::judge_all(&obs, &j.rule);
    v.sort_by(|a, b| a.series.cmp(&b.series));
    v
}

async fn run(State(app): State<Shared>, Path(id): Path<i64>) -> Result<Html<String>, Response> {
    read(&app, move |st, _| Ok(report::html::document(&[st.load_run(id)?]))).await.map(Html)
}
