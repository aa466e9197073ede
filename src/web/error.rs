//! One error type for every handler: the status code is decided here and nowhere else.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Why a request was not served. `Display` is what the page shows.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The request itself is malformed (a body that is not a command, a bad field).
    #[error("{0}")]
    BadRequest(String),
    /// A malformed value whose reader says what is wrong as data: `code` (one of
    /// [`WEB_ERROR_CODES`]) and its parameters, for a page in another language; `reason`
    /// is the English. Answered 400 with `error: bad_request`, as [`WebError::BadRequest`].
    #[error("{reason}")]
    BadValue {
        code: &'static str,
        params: serde_json::Value,
        reason: String,
    },
    /// No session (or an expired one): log in.
    #[error("not logged in (or the session expired): log in again")]
    Unauthenticated,
    /// Wrong identifier or password; deliberately says nothing about which.
    #[error("unknown arbiter or wrong password")]
    BadLogin,
    /// Too many failed logins from this client or for this account (`web::limiter`): the
    /// password was not checked. `retry_after_secs` goes in the `Retry-After` header.
    #[error("too many failed logins: try again in {}", wait_in_words(*retry_after_secs))]
    TooManyAttempts { retry_after_secs: u64 },
    /// A POST without the session's CSRF token, or from another site.
    #[error("{0}")]
    Csrf(&'static str),
    /// Logged in, but the role does not allow it.
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    /// The hall (or the rules) refused the command; the hall's response is the body.
    #[error("refused")]
    Refused {
        status: StatusCode,
        /// Boxed: the payload is large beside the other variants (clippy's
        /// `result_large_err`), and a refusal is the rare path.
        response: Box<crate::mqtt::payload::ResponsePayload>,
    },
    /// The hall is stopping or did not answer in time.
    #[error("{0}")]
    Unavailable(&'static str),
    /// Logged, answered with a bare 500.
    #[error("internal error")]
    Internal(String),
}

impl WebError {
    pub fn status_code(&self) -> StatusCode {
        match self {
            WebError::BadRequest(_) | WebError::BadValue { .. } => StatusCode::BAD_REQUEST,
            WebError::Unauthenticated | WebError::BadLogin => StatusCode::UNAUTHORIZED,
            WebError::TooManyAttempts { .. } => StatusCode::TOO_MANY_REQUESTS,
            WebError::Csrf(_) | WebError::Forbidden(_) => StatusCode::FORBIDDEN,
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::Refused { status, .. } => *status,
            WebError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The status for a hall response with `status: error`, from its `error` code: the
    /// same table as docs/DASHBOARD.md.
    pub fn refused(response: crate::mqtt::payload::ResponsePayload) -> WebError {
        let status = match response.error.as_deref() {
            Some("bad_command" | "bad_value") => StatusCode::BAD_REQUEST,
            Some("unknown_board" | "no_game") => StatusCode::NOT_FOUND,
            Some("unauthenticated") => StatusCode::UNAUTHORIZED,
            Some("forbidden") => StatusCode::FORBIDDEN,
            Some("internal" | "storage") => StatusCode::INTERNAL_SERVER_ERROR,
            // Everything else is the rules (or the hall's state) saying no.
            _ => StatusCode::CONFLICT,
        };
        WebError::Refused {
            status,
            response: Box::new(response),
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        match self {
            WebError::Refused { response, .. } => (status, Json(response)).into_response(),
            WebError::BadValue {
                code,
                params,
                reason,
            } => (
                status,
                Json(json!({ "status": "error", "error": "bad_request", "code": code, "params": params, "reason": reason })),
            )
                .into_response(),
            WebError::Internal(why) => {
                tracing::error!(error = %why.escape_debug(), "web: internal error");
                status.into_response()
            }
            WebError::TooManyAttempts { retry_after_secs } => {
                let body = json!({
                    "status": "error",
                    "error": "too_many_attempts",
                    "code": "too_many_attempts",
                    "params": { "retry_after_ms": retry_after_secs.saturating_mul(1000) },
                    "reason": self.to_string(),
                    "retry_after_secs": retry_after_secs,
                });
                (
                    status,
                    [(header::RETRY_AFTER, retry_after_secs.to_string())],
                    Json(body),
                )
                    .into_response()
            }
            other => {
                let code = match &other {
                    WebError::BadRequest(_) => "bad_request",
                    WebError::Unauthenticated => "unauthenticated",
                    WebError::BadLogin => "bad_login",
                    WebError::Csrf(_) => "csrf",
                    WebError::Forbidden(_) => "forbidden",
                    WebError::NotFound(_) => "not_found",
                    _ => "unavailable",
                };
                // The words a code cannot carry (a parser's message naming the place),
                // as a parameter; the others say all in their code.
                let params = match &other {
                    WebError::BadRequest(text)
                    | WebError::Forbidden(text)
                    | WebError::NotFound(text) => json!({ "text": text }),
                    _ => json!({}),
                };
                (
                    status,
                    Json(json!({ "status": "error", "error": code, "code": code, "params": params, "reason": other.to_string() })),
                )
                    .into_response()
            }
        }
    }
}

/// Every code the dashboard's own refusals carry (`error` and `code` alike), for the
/// catalogues' test: `error.<code>` has words in every shipped language.
pub const WEB_ERROR_CODES: &[&str] = &[
    "bad_request",
    "unauthenticated",
    "bad_login",
    "too_many_attempts",
    "csrf",
    "forbidden",
    "not_found",
    "unavailable",
    // `/api/tc`'s reader (rules::time_control::TcErrorKind), as `tc_<kind>`.
    "tc_empty",
    "tc_period_after_colon",
    "tc_expected",
    "tc_expected_at_end",
    "tc_leading_zero",
    "tc_too_large",
    "tc_zero_moves",
    "tc_quota_missing",
];

/// A wait as the arbiter reads it on the login page: seconds for a back-off step, whole
/// minutes (rounded up) for a lockout ("15 min", not "898 s").
pub fn wait_in_words(secs: u64) -> String {
    if secs < 120 {
        format!("{secs} s")
    } else {
        format!("{} min", secs.div_ceil(60))
    }
}
