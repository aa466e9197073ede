//! The dashboard's files, compiled into the binary (no CDN, no build step). Each is served
//! under a URL that carries its content hash, with that hash as its ETag, so a browser
//! caches it for ever and a new binary is fetched at once. The page itself is not cached.

use std::sync::LazyLock;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::AppState;

struct Asset {
    /// As written in index.html: `/assets/app.js`.
    name: &'static str,
    bytes: &'static [u8],
    content_type: &'static str,
    /// The first 16 hex digits of its SHA-256.
    hash: String,
    /// `app.<hash>.js`.
    hashed: String,
}

const FILES: &[(&str, &[u8], &str)] = &[
    (
        "app.js",
        include_bytes!("assets/app.js"),
        "text/javascript; charset=utf-8",
    ),
    (
        "board.js",
        include_bytes!("assets/board.js"),
        "text/javascript; charset=utf-8",
    ),
    (
        "feed.js",
        include_bytes!("assets/feed.js"),
        "text/javascript; charset=utf-8",
    ),
    (
        "icon.svg",
        include_bytes!("assets/icon.svg"),
        "image/svg+xml",
    ),
    (
        "public.css",
        include_bytes!("assets/public.css"),
        "text/css; charset=utf-8",
    ),
    (
        "public.js",
        include_bytes!("assets/public.js"),
        "text/javascript; charset=utf-8",
    ),
    (
        "style.css",
        include_bytes!("assets/style.css"),
        "text/css; charset=utf-8",
    ),
];

fn hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

static ASSETS: LazyLock<Vec<Asset>> = LazyLock::new(|| {
    FILES
        .iter()
        .map(|(name, bytes, content_type)| {
            let h = hash(bytes);
            let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
            Asset {
                name,
                bytes,
                content_type,
                hashed: format!("{stem}.{h}.{ext}"),
                hash: h,
            }
        })
        .collect()
});

/// index.html with every asset reference pointing at its hashed URL.
/// The page with the assets' hashed names; the language goes in per request.
static INDEX: LazyLock<String> = LazyLock::new(|| {
    let mut html = String::from_utf8_lossy(include_bytes!("assets/index.html")).into_owned();
    for a in ASSETS.iter() {
        html = html.replace(
            &format!("/assets/{}", a.name),
            &format!("/assets/{}", a.hashed),
        );
    }
    html
});

/// The page's fixed words (`data-i18n="key">text<`) in the language, so the first paint
/// and `<noscript>` (which no script fills) are in it already; the page fills the same
/// keys again at start.
fn fill_static(html: &str, messages: &serde_json::Value) -> String {
    const MARK: &str = "data-i18n=\"";
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find(MARK) {
        let (head, tail) = rest.split_at(i + MARK.len());
        out.push_str(head);
        let Some((key, after)) = tail.split_once('"') else {
            rest = tail;
            continue;
        };
        let text = messages.get(key).and_then(serde_json::Value::as_str);
        match (text, after.find('>'), after.find('<')) {
            (Some(text), Some(open), Some(close)) if open < close => {
                out.push_str(key);
                out.push('"');
                out.push_str(&after[..=open]);
                out.push_str(
                    &text
                        .replace('&', "&amp;")
                        .replace('<', "&lt;")
                        .replace('>', "&gt;"),
                );
                rest = &after[close..];
            }
            _ => {
                out.push_str(key);
                out.push('"');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The page in `lang`: `<html lang>` set, and the language's catalogue, the language menu
/// and the piece letters put in the page as data (`<script type="application/json">` is
/// never run, so the CSP allows it); (html, etag).
pub fn render_index(
    languages: &super::i18n::Languages,
    lang: &str,
    screen: bool,
) -> (String, String) {
    let messages = languages
        .get(lang)
        .map(|l| serde_json::Value::Object(l.messages.clone()))
        .unwrap_or_default();
    let letters: serde_json::Map<String, serde_json::Value> = [
        crate::rules::adjournment::NotationLanguage::En,
        crate::rules::adjournment::NotationLanguage::Es,
    ]
    .into_iter()
    .map(|l| {
        let code = serde_json::to_value(l)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        (code, crate::rules::adjournment::piece_letters(l).into())
    })
    .collect();
    let data = serde_json::json!({
        "lang": lang,
        "languages": languages.menu(),
        "messages": messages,
        "letters": letters,
    });
    // `</` would end the script element early: `<\/` is the same JSON string.
    let data = data
        .to_string()
        .replace("</", "<\\/")
        .replace("<!--", "<\\u0021--");
    // The hall screens' script and style only where a hall screen is drawn: the arbiters'
    // first visit on a slow link is lighter by them (docs/BENCHMARKS.md).
    let index = if screen {
        INDEX.clone()
    } else {
        INDEX
            .lines()
            .filter(|l| !l.contains("/assets/public."))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let html = fill_static(&index, &messages)
        .replacen("<html lang=\"en\">", &format!("<html lang=\"{lang}\">"), 1)
        .replacen(
            "</head>",
            &format!("<script type=\"application/json\" id=\"i18n\">{data}</script>\n</head>"),
            1,
        );
    let etag = hash(html.as_bytes());
    (html, etag)
}

fn matches(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim().trim_matches('"') == etag))
}

fn etag_value(etag: &str) -> HeaderValue {
    HeaderValue::from_str(&format!("\"{etag}\"")).unwrap_or(HeaderValue::from_static("\"\""))
}

/// Every page (`/`, `/board/…`, `/round`, `/alerts`, `/public`, `/login`): one document,
/// the script draws the view the path names.
pub async fn index(State(state): State<AppState>, uri: Uri, headers: HeaderMap) -> Response {
    let lang = language_of(&state, &uri, &headers);
    let page = state.page(&lang, uri.path().starts_with("/public"));
    let (html, etag) = &*page;
    let mut h = HeaderMap::new();
    h.insert(header::ETAG, etag_value(etag));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // The same URL is another page in another language.
    h.insert(
        header::VARY,
        HeaderValue::from_static("Accept-Language, Cookie"),
    );
    if matches(&headers, etag) {
        return (StatusCode::NOT_MODIFIED, h).into_response();
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // The page loads only its own files: no inline script, nothing from elsewhere.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; media-src 'self' data:; frame-ancestors 'none'",
        ),
    );
    (h, html.clone()).into_response()
}

/// `GET /assets/{file}`: by hashed name (cached for ever) or plain name (revalidated).
pub async fn asset(Path(file): Path<String>, headers: HeaderMap) -> Response {
    let Some((asset, hashed)) = ASSETS.iter().find_map(|a| {
        if a.hashed == file {
            Some((a, true))
        } else if a.name == file {
            Some((a, false))
        } else {
            None
        }
    }) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut h = HeaderMap::new();
    h.insert(header::ETAG, etag_value(&asset.hash));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if hashed {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        }),
    );
    if matches(&headers, &asset.hash) {
        return (StatusCode::NOT_MODIFIED, h).into_response();
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    (h, asset.bytes).into_response()
}

/// `GET /favicon.ico`: what a browser asks for before it reads the page's icon link, and
/// what a bookmark or a hall screen's tab shows; the same SVG (browsers take SVG here).
pub async fn favicon(headers: HeaderMap) -> Response {
    asset(Path("icon.svg".to_string()), headers).await
}

/// The hashed URL of an asset (for tests).
pub fn url_of(name: &str) -> Option<String> {
    ASSETS
        .iter()
        .find(|a| a.name == name)
        .map(|a| format!("/assets/{}", a.hashed))
}

/// The language of a page request: the session's choice, `?lang=`, the hall screens'
/// language on `/public…`, the browser's (`web::i18n::Languages::choose`).
pub fn language_of(state: &AppState, uri: &Uri, headers: &HeaderMap) -> String {
    let chosen = super::session::cookie(headers).and_then(|c| state.sessions().language(&c));
    let query = uri.query().and_then(|q| {
        q.split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == "lang")
            .map(|(_, v)| v.to_string())
    });
    let accept = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok());
    let screen = uri.path().starts_with("/public");
    state
        .languages()
        .choose(chosen.as_deref(), query.as_deref(), accept, screen)
        .to_string()
}
