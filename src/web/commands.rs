//! Command POSTs: an MQTT `set` body handed to the hall's one intake with the session's
//! identity (never the body's), where roles, idempotency and refusals are those of a
//! signed MQTT command; the answer is the hall's `response` payload. Also login, logout,
//! who am I, and the time-control check.

use std::time::Duration;

use crate::alert::Said;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::intake::Incoming;
use crate::intake::auth::Identity;
use crate::mqtt::payload::{ResponsePayload, ResponseStatus};
use crate::rules::time_control;

use super::AppState;
use super::error::WebError;
use super::limiter::{self, Scope, Verdict};
use super::session::{self, Arbiter, Peer};

/// How long a command may take: a flag can run the full 6.9 search (about a second at
/// worst), a `start_round` of a big hall a few seconds.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

#[derive(Debug, Deserialize)]
pub struct Login {
    pub id: String,
    pub password: String,
}

fn me_body(identity: &Identity, csrf: &str, state: &AppState) -> Value {
    let arbiter = json!({
        "id": identity.id,
        "name": identity.name,
        "role": identity.role.name(),
        // What the page offers; the hall's intake decides what it accepts.
        "boards": identity.boards().unwrap_or_default(),
    });
    // `node`: which node's dashboard this is (another node's boards are sent on to theirs).
    // `civil_ms`: the server's clock, so that the page schedules on it (not the
    // browser's) and says when the two differ (issue 36).
    json!({ "arbiter": arbiter, "csrf": csrf, "hall": state.hall(), "node": state.node(), "civil_ms": state.timebase().civil().0 })
}

fn cookie_header(value: &str, max_age: Option<u64>, secure: bool) -> String {
    let mut c = format!(
        "{}={value}; Path=/; HttpOnly; SameSite=Strict",
        session::COOKIE
    );
    if let Some(age) = max_age {
        c.push_str(&format!("; Max-Age={age}"));
    }
    if secure {
        c.push_str("; Secure");
    }
    c
}

/// Behind a TLS-terminating proxy (or when configured) the cookie is marked `Secure`.
fn secure(state: &AppState, headers: &HeaderMap) -> bool {
    state.secure_cookies()
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("https"))
}

/// `POST /api/login`, JSON `{id, password}`: sets the session cookie, returns the CSRF
/// token. The same answer for an unknown id and a wrong password. Too many failures from
/// the client or for the account (`limiter.rs`) and the login is refused with 429 and
/// `Retry-After` before the password is looked at, right or wrong.
pub async fn login(
    State(state): State<AppState>,
    peer: Peer,
    headers: HeaderMap,
    Json(login): Json<Login>,
) -> Result<Response, WebError> {
    session::same_origin(&headers)?;
    let client = session::client_address(peer.0, &headers, state.trusted_proxy());
    let arbiters = state.arbiters();
    let id = login.id.trim().to_string();
    // Escaped (the client's text in a log line and an alert), and cut as the limiter cuts
    // it: a 1 MiB id must not make a 1 MiB log line or alert.
    let mut shown: String = id
        .chars()
        .take(limiter::MAX_ACCOUNT_CHARS)
        .collect::<String>()
        .escape_debug()
        .to_string();
    if id.chars().nth(limiter::MAX_ACCOUNT_CHARS).is_some() {
        shown.push('…');
    }
    // The attempt counts as a failure from the moment it is let through, and a success
    // takes it back: parallel guesses cannot all pass the check before the first one is
    // recorded.
    let recorded = {
        let now = state.timebase().now();
        let mut limiter = state.limiter();
        if let Verdict::Wait {
            retry_after,
            scope,
            locked,
        } = limiter.check(client, &id, now)
        {
            drop(limiter);
            let retry_after_secs = u64::try_from((retry_after.0 + 999) / 1000)
                .unwrap_or(1)
                .max(1);
            tracing::warn!(
                arbiter = %shown,
                %client,
                retry_after_secs,
                by = match scope { Scope::Client => "client", Scope::Account => "account" },
                locked,
                "web login refused: too many failed logins (password not checked)"
            );
            return Err(WebError::TooManyAttempts { retry_after_secs });
        }
        limiter.record_failure(client, &id, now)
    };
    let account = id.clone();
    let identity = tokio::task::spawn_blocking(move || arbiters.login(&account, &login.password))
        .await
        .map_err(|e| WebError::Internal(e.to_string()))?;
    let Some(identity) = identity else {
        // `client` is a parsed `IpAddr` (the peer's, or a trusted proxy's header parsed),
        // so it cannot carry control characters; the account name is the client's text.
        tracing::warn!(arbiter = %shown, %client, "web login refused");
        if recorded.locked() {
            // The alert says what was locked: an account guessed at (from wherever), or a
            // client guessing (at whichever accounts).
            let code = match (recorded.account_locked, recorded.client_locked) {
                (true, true) => "auth_failures.locked_both",
                (true, false) => "auth_failures.locked_account",
                _ => "auth_failures.locked_client",
            };
            let what = match (recorded.account_locked, recorded.client_locked) {
                (true, true) => {
                    format!("for account '{shown}' from {client}: the account and the client are")
                }
                (true, false) => {
                    format!("for account '{shown}' (the last from {client}): the account is")
                }
                _ => format!("from {client} (the last for account '{shown}'): the client is"),
            };
            let message = format!(
                "dashboard login: {} failed passwords in a row {what} locked out for {} min (a restart of the daemon lifts it)",
                limiter::LOCKOUT_FAILURES,
                limiter::LOCKOUT.0 / 60_000,
            );
            tracing::warn!("{message}");
            let params = json!({
                "account": shown,
                "client": client.to_string(),
                "failures": limiter::LOCKOUT_FAILURES,
                "lockout_ms": limiter::LOCKOUT.0,
            });
            state.raise_auth_alert(Said::new(code, params, message));
        } else if recorded.burst {
            // A spray: many addresses at many accounts, none of them locked out alone.
            let message = format!(
                "dashboard login: {} failed passwords in the hall within {} s (the last for account '{shown}' from {client}): someone may be guessing from several addresses; each address and account is still limited on its own",
                limiter::BURST_FAILURES,
                limiter::BURST_WINDOW.0 / 1000,
            );
            tracing::warn!("{message}");
            let params = json!({
                "account": shown,
                "client": client.to_string(),
                "failures": limiter::BURST_FAILURES,
                "window_ms": limiter::BURST_WINDOW.0,
            });
            state.raise_auth_alert(Said::new("auth_failures.burst", params, message));
        }
        return Err(WebError::BadLogin);
    };
    state
        .limiter()
        .record_success(client, &id, state.timebase().now());
    tracing::info!(arbiter = %identity.id.escape_debug(), %client, "web login");
    let (cookie, csrf) = state.sessions().create(identity.clone());
    let set = cookie_header(&cookie, None, secure(&state, &headers));
    Ok((
        [(header::SET_COOKIE, set)],
        Json(me_body(&identity, &csrf, &state)),
    )
        .into_response())
}

/// `POST /api/logout`.
pub async fn logout(State(state): State<AppState>, who: Arbiter, headers: HeaderMap) -> Response {
    state.sessions().remove(&who.session);
    let set = cookie_header("", Some(0), secure(&state, &headers));
    ([(header::SET_COOKIE, set)], StatusCode::NO_CONTENT).into_response()
}

/// `GET /api/me`: who is logged in, and the CSRF token the page sends with its POSTs.
pub async fn me(State(state): State<AppState>, who: Arbiter) -> Json<Value> {
    let mut body = me_body(&who.identity, &who.csrf, &state);
    body["language"] = json!(who.language);
    Json(body)
}

#[derive(Debug, Deserialize)]
pub struct LanguageChoice {
    /// A served language's code, or `null` to go back to the browser's.
    language: Option<String>,
}

/// `POST /api/language`: the arbiter's own language for the page, kept in the session
/// (docs/DASHBOARD.md, "Languages"). The page reloads in it.
pub async fn language(
    State(state): State<AppState>,
    who: Arbiter,
    Json(choice): Json<LanguageChoice>,
) -> Result<Json<Value>, WebError> {
    let language = choice.language.filter(|l| !l.is_empty());
    if let Some(l) = &language
        && state.languages().get(l).is_none()
    {
        let served: Vec<&str> = state.languages().codes().collect();
        return Err(WebError::BadRequest(format!(
            "language: '{}' is not served here; these are: {}",
            l.escape_debug(),
            served.join(", ")
        )));
    }
    state
        .sessions()
        .set_language(&who.session, language.clone());
    Ok(Json(json!({ "language": language })))
}

#[derive(Debug, Deserialize)]
pub struct TcQuery {
    pub tc: String,
}

/// `GET /api/tc?tc=…`: `hallclock tc check` for the round form.
pub async fn tc_check(Query(q): Query<TcQuery>) -> Result<Json<Value>, WebError> {
    match time_control::parse(q.tc.trim()) {
        Ok(tc) => Ok(Json(json!({
            "canonical": tc.to_string(),
            "description": tc.describe(),
            "parts": tc_parts(&tc),
            "note": tc.periods().err().map(|e| e.to_string()),
        }))),
        Err(e) => Err(tc_error(&q.tc, &e)),
    }
}

/// A time control that does not read, as data for the page (`tc_<kind>`, the kind's
/// parameters, the column and the text) and in English.
fn tc_error(text: &str, e: &time_control::TcError) -> WebError {
    let said = serde_json::to_value(&e.kind).unwrap_or_default();
    let kind = said["code"].as_str().unwrap_or("empty");
    let code = super::error::WEB_ERROR_CODES
        .iter()
        .copied()
        .find(|c| c.strip_prefix("tc_") == Some(kind))
        .unwrap_or("bad_request");
    let mut params = said.get("params").cloned().unwrap_or_else(|| json!({}));
    params["column"] = json!(e.column);
    params["text"] = json!(text);
    WebError::BadValue {
        code,
        params,
        reason: format!("'{text}': {e}"),
    }
}

/// A time control as data, part by part, for the page to say in its language what
/// `describe` says in English: `{part: game|rest|moves|every|hourglass|untimed|unknown,
/// time_ms, moves, increment_ms, delay_ms, from_move}`.
fn tc_parts(tc: &time_control::TimeControl) -> Value {
    use time_control::{Bonus, TimeControl};
    let ms = |s: u32| u64::from(s) * 1000;
    match tc {
        TimeControl::Unknown => json!([{ "part": "unknown" }]),
        TimeControl::Untimed => json!([{ "part": "untimed" }]),
        TimeControl::Hourglass(s) => json!([{ "part": "hourglass", "time_ms": ms(*s) }]),
        TimeControl::Periods(periods) => {
            let mut first_move = 1u32;
            let mut parts = Vec::new();
            for (i, p) in periods.iter().enumerate() {
                let last = i + 1 == periods.len();
                let part = match (p.moves, last) {
                    (Some(_), true) => "every",
                    (Some(_), false) => "moves",
                    (None, _) if i == 0 => "game",
                    (None, _) => "rest",
                };
                let mut v = json!({ "part": part, "time_ms": ms(p.secs), "moves": p.moves, "from_move": first_move });
                match p.bonus {
                    Bonus::None => {}
                    Bonus::Increment(s) => v["increment_ms"] = json!(ms(s)),
                    Bonus::Delay(s) => v["delay_ms"] = json!(ms(s)),
                }
                parts.push(v);
                first_move = first_move.saturating_add(p.moves.unwrap_or(0));
            }
            Value::Array(parts)
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct TrfPreview {
    trf: String,
    round: u32,
}

/// `POST /api/trf/preview`: a pairing program's file read as `start_round` reads it, the
/// round's boards in board order for the arbiter to review before starting. Nothing is
/// started; the hall maps tournament boards to its own when the round starts.
pub async fn trf_preview(
    _who: Arbiter,
    Json(q): Json<TrfPreview>,
) -> Result<Json<Value>, WebError> {
    let bad = |e: crate::trf::TrfError| WebError::BadRequest(format!("trf: {e}"));
    let trf = crate::trf::Trf::read(q.trf.as_bytes()).map_err(bad)?;
    let boards = crate::hall::trf_round::review(
        &trf,
        q.round as usize,
        crate::trf::round::Order::Fide,
        &std::collections::BTreeMap::new(),
    )
    .map_err(bad)?;
    let tc = trf.time_control();
    Ok(Json(json!({
        "tournament": trf.name(),
        "time_control": tc.as_ref().map(|t| t.white.to_string()),
        "time_control_black": tc.as_ref().and_then(|t| t.black.as_ref()).map(|b| b.to_string()),
        "boards": boards,
        // What the reader skipped (rulers, notes, other programs' records), each naming
        // its line, as `hallclock trf show` says it: the arbiter sees the file was read
        // whole except these.
        "warnings": trf.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        // The same as data, for a page in another language (`trfwarn.<code>`).
        "warning_codes": trf.warnings,
    })))
}

/// `POST /api/board/{board}/command`: a `board/<b>/set` body.
pub async fn board(
    State(state): State<AppState>,
    who: Arbiter,
    Path(board): Path<String>,
    body: Bytes,
) -> Result<Json<ResponsePayload>, WebError> {
    submit(&state, &who, Some(board), body).await
}

/// `POST /api/hall/command`: a hall `set` body.
pub async fn hall(
    State(state): State<AppState>,
    who: Arbiter,
    body: Bytes,
) -> Result<Json<ResponsePayload>, WebError> {
    submit(&state, &who, None, body).await
}

#[derive(Debug, Deserialize)]
pub struct HallTime {
    /// The hall's time as the chief arbiter's device reads it, ms since the Unix epoch.
    pub civil_ms: i64,
}

/// `POST /api/hall/time`: the chief arbiter sets the hall's time (a server without a
/// real-time clock, no NTP). Chief only; the page confirms before it sends; the hall
/// bounds, journals and announces it (`Hall::set_hall_time`).
pub async fn hall_time(
    State(state): State<AppState>,
    who: Arbiter,
    Json(body): Json<HallTime>,
) -> Result<Json<Value>, WebError> {
    if who.identity.role != crate::intake::auth::Role::Chief {
        return Err(WebError::Forbidden(
            "only the chief arbiter sets the hall's time".into(),
        ));
    }
    tracing::info!(arbiter = %who.identity.id.escape_debug(), civil_ms = body.civil_ms, "web: set the hall's time");
    let set = ask_hall(state, |reply| Incoming::SetHallTime {
        civil: crate::rules::Millis(body.civil_ms),
        identity: who.identity.clone(),
        reply,
    })
    .await?;
    match set {
        Ok(civil) => Ok(Json(json!({ "status": "ok", "civil_ms": civil.0 }))),
        Err(why) => Err(WebError::BadRequest(why)),
    }
}

/// Hand `message` (made around its reply channel) to the hall and wait for the answer.
async fn ask_hall<T>(
    state: AppState,
    message: impl FnOnce(oneshot::Sender<T>) -> Incoming,
) -> Result<T, WebError> {
    let (reply, answer) = oneshot::channel();
    state
        .intake()
        .send(message(reply))
        .await
        .map_err(|_| WebError::Unavailable("the hall is stopping"))?;
    tokio::time::timeout(ANSWER_WITHIN, answer)
        .await
        .map_err(|_| WebError::Unavailable("the hall did not answer within 60 s"))?
        .map_err(|_| WebError::Unavailable("the hall is stopping"))
}

async fn submit(
    state: &AppState,
    who: &Arbiter,
    board: Option<String>,
    body: Bytes,
) -> Result<Json<ResponsePayload>, WebError> {
    let mut value: Value = serde_json::from_slice(&body)
        .map_err(|e| WebError::BadRequest(format!("the body is not JSON: {e}")))?;
    let Value::Object(obj) = &mut value else {
        return Err(WebError::BadRequest(
            "the body must be a JSON object: an MQTT `set` command".into(),
        ));
    };
    let action = obj
        .get("action")
        .and_then(Value::as_str)
        .ok_or_else(|| WebError::BadRequest("missing \"action\"".into()))?
        .to_string();
    if !obj.contains_key("transaction") {
        obj.insert(
            "transaction".into(),
            Value::String(format!("web-{}", &session::token()[..16])),
        );
    }
    let payload = serde_json::to_vec(&value).map_err(|e| WebError::Internal(e.to_string()))?;
    tracing::info!(
        arbiter = %who.identity.id.escape_debug(),
        board = %board.as_deref().unwrap_or("(hall)").escape_debug(),
        action = %action.escape_debug(),
        "web command"
    );
    let bytes = ask_hall(state.clone(), |reply| Incoming::Web {
        board,
        payload,
        // Who the journal and the logs record: the session's account, not the body.
        identity: who.identity.clone(),
        reply,
    })
    .await?;
    let response: ResponsePayload = serde_json::from_slice(&bytes)
        .map_err(|e| WebError::Internal(format!("the hall's response: {e}")))?;
    match response.status {
        ResponseStatus::Ok => Ok(Json(response)),
        ResponseStatus::Error => Err(WebError::refused(response)),
    }
}
