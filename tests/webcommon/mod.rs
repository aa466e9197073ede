//! Browser-test harness: Debian's chromium driven through chromedriver (WebDriver, plain
//! HTTP on a local port), plain HTTP requests, and dashboard accounts.
#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder};
use hallclock::intake::auth::{Arbiters, Role};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const PASSWORD: &str = "correct horse";

/// The dashboard on a free local port, plain HTTP, serving `state`, as the daemon starts it.
pub async fn serve(state: hallclock::web::AppState) -> hallclock::web::RunningWeb {
    hallclock::web::start(
        &hallclock::web::WebSettings {
            listen: "127.0.0.1:0".parse().expect("an address"),
            secure_cookies: false,
        },
        state,
    )
    .await
    .expect("the dashboard listens")
}

/// A dashboard with no daemon behind it: a publisher whose feed the pages read (nothing
/// reaches a broker) and an intake nobody answers. The receivers are held here so the
/// channels stay open as long as the test keeps this.
pub struct Detached {
    pub publisher: hallclock::mqtt::Publisher,
    pub state: hallclock::web::AppState,
    _held: Vec<Box<dyn std::any::Any + Send>>,
}

pub fn detached(hall: &str) -> Detached {
    let (publisher, out) = hallclock::mqtt::client::detached();
    let (tx, intake) = tokio::sync::mpsc::channel(8);
    let state =
        hallclock::web::AppState::new(hall, publisher.feed().clone(), tx, accounts(), false);
    Detached {
        publisher,
        state,
        _held: vec![Box::new(out), Box::new(intake)],
    }
}

/// The dashboard's accounts: a chief, an arbiter for board-002 only, a viewer, and an
/// arbiter with no password (signs MQTT commands only). Few iterations: a debug build.
pub fn accounts() -> Arc<Arbiters> {
    let mut a = Arbiters::default();
    for (id, name, role, boards) in [
        ("chief", "IA Chief Test", Role::Chief, None),
        (
            "arb",
            "IA Two Test",
            Role::Arbiter,
            Some(vec!["board-002".to_string()]),
        ),
        ("viewer", "Viewer Test", Role::Viewer, None),
        ("signer", "Key Only Test", Role::Chief, None),
    ] {
        a.add(id, name, role, boards).expect("a test account");
        if id != "signer" {
            a.set_password_with(id, PASSWORD, 10)
                .expect("a test password");
        }
    }
    Arc::new(a)
}

/// Where screenshots go (target/web-screenshots).
pub fn shots_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/web-screenshots");
    let _ = std::fs::create_dir_all(&d);
    d
}

pub struct Chrome {
    pub client: Client,
    /// chromedriver's port, for its Chromium-only endpoints (network throttling).
    pub driver_port: u16,
    driver: Child,
    _profile: PathBuf,
}

impl Chrome {
    /// A fresh headless Chromium (its own profile) at `width`×`height`.
    pub async fn start(name: &str, width: u32, height: u32) -> Chrome {
        Self::start_args(name, width, height, &[], json!({})).await
    }

    /// As `start`, with the browser in `lang` (as "es-ES"): `navigator.language` and the
    /// `Accept-Language` it sends ("es-ES,es"), as a browser set up in that language.
    pub async fn start_with_lang(name: &str, width: u32, height: u32, lang: &str) -> Chrome {
        let primary = lang.split('-').next().unwrap_or(lang);
        let accept = format!("{lang},{primary}");
        // Headless Chromium takes --lang for navigator.language and --accept-lang (or the
        // profile's preference) for the header.
        let args = [format!("--lang={lang}"), format!("--accept-lang={accept}")];
        Self::start_args(
            name,
            width,
            height,
            &args,
            json!({"intl": {"accept_languages": accept}}),
        )
        .await
    }

    async fn start_args(
        name: &str,
        width: u32,
        height: u32,
        extra: &[String],
        prefs: Value,
    ) -> Chrome {
        let port = free_port();
        // Its own process group, which the browser it starts joins: a test that panics
        // (or a close) ends the whole group, never leaving a browser behind to load the
        // machine for the tests after it.
        let driver = Command::new("chromedriver")
            .process_group(0)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is installed (apt-get install chromium chromium-driver)");
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let profile = hallclock::link::testing::scratch_dir(&format!("chrome-{name}"));
        let mut args: Vec<String> = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--autoplay-policy=no-user-gesture-required",
        ]
        .map(String::from)
        .to_vec();
        args.push(format!("--user-data-dir={}", profile.display()));
        args.push(format!("--window-size={width},{height}"));
        args.extend(extra.iter().cloned());
        let mut caps = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": args,
            }
        });
        if prefs.as_object().is_some_and(|p| !p.is_empty()) {
            caps["goog:chromeOptions"]["prefs"] = prefs;
        }
        let Value::Object(caps) = caps else {
            unreachable!()
        };
        let mut builder =
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
        builder.capabilities(caps);
        let client = builder
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a WebDriver session with headless chromium");
        Chrome {
            client,
            driver_port: port,
            driver,
            _profile: profile,
        }
    }

    /// Chromium's own network throttling (chromedriver's `network_conditions`): every
    /// request of this browser from now on gets `latency_ms` and `bytes_per_s` each way.
    pub async fn throttle(&self, latency_ms: u64, bytes_per_s: u64) {
        let session = self
            .client
            .session_id()
            .await
            .ok()
            .flatten()
            .expect("a WebDriver session id");
        let body = json!({"network_conditions": {"offline": false, "latency": latency_ms,
            "download_throughput": bytes_per_s, "upload_throughput": bytes_per_s}})
        .to_string();
        let (status, _, answer) = http(
            ([127, 0, 0, 1], self.driver_port).into(),
            "POST",
            &format!("/session/{session}/chromium/network_conditions"),
            &[("Content-Type", "application/json")],
            &body,
        )
        .await;
        assert_eq!(status, 200, "chromedriver's network conditions: {answer}");
    }

    pub async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Wait until `script` (an expression) is truthy; returns its value.
    pub async fn until(&self, what: &str, expr: &str) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            // A page still loading has no elements yet: not ready, not an error.
            let v = self
                .js(&format!(
                    "try {{ return ({expr}); }} catch (e) {{ return false; }}"
                ))
                .await;
            if !(v.is_null() || v == Value::Bool(false) || v == json!("") || v == json!(0)) {
                return v;
            }
            if tokio::time::Instant::now() > deadline {
                let _ = self
                    .shot(&format!("timeout-{}", what.replace(' ', "-")))
                    .await;
                panic!("timed out waiting for {what} ({expr})");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn shot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("a screenshot");
        let path = shots_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }

    /// A screenshot that is also a picture of the docs (`docs/{doc}`): copied there when
    /// HALLCLOCK_UPDATE_SCREENSHOTS is set, so the docs show what the code draws today.
    /// Look at it before committing it.
    pub async fn shot_for_docs(&self, name: &str, doc: &str) -> PathBuf {
        let path = self.shot(name).await;
        if std::env::var_os("HALLCLOCK_UPDATE_SCREENSHOTS").is_some() {
            let to = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("docs")
                .join(doc);
            std::fs::copy(&path, &to)
                .unwrap_or_else(|e| panic!("copy {} to {}: {e}", path.display(), to.display()));
        }
        path
    }

    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        kill_group(&mut self.driver);
    }
}

impl Drop for Chrome {
    fn drop(&mut self) {
        kill_group(&mut self.driver);
    }
}

/// End chromedriver and every browser process it started (its process group).
fn kill_group(driver: &mut Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", driver.id())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = driver.kill();
    let _ = driver.wait();
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// One plain HTTP/1.1 request; (status, headers, body).
pub async fn http(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut s = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the dashboard listens");
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.expect("send");
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

/// Log in over plain HTTP: (cookie, csrf).
pub async fn login(addr: std::net::SocketAddr, id: &str, password: &str) -> (u16, String, String) {
    let (status, head, body) = http(
        addr,
        "POST",
        "/api/login",
        &[("Content-Type", "application/json")],
        &json!({"id": id, "password": password}).to_string(),
    )
    .await;
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .unwrap_or("")
        .to_string();
    let csrf = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v["csrf"].as_str().map(String::from))
        .unwrap_or_default();
    (status, cookie, csrf)
}

/// Gives the chief in the arbiters' file `accounts` the test password, for a dashboard login.
pub fn chief_password(accounts: &std::path::Path) {
    let mut arbiters = Arbiters::load(accounts).expect("arbiters");
    arbiters
        .set_password_with("chief", PASSWORD, 10)
        .expect("a password");
    arbiters.save(accounts).expect("saved");
}

/// A session of the test chief on the dashboard at `port` (retried while the daemon starts).
pub async fn chief_cookie(port: u16) -> String {
    let addr: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    for _ in 0..100 {
        let (status, cookie, _) = login(addr, "chief", PASSWORD).await;
        if status == 200 {
            return cookie;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no chief session on the dashboard at {addr}");
}

/// Polls the arbiters' feed (`/api/feed`) on `port` with `cookie` until `want` holds of
/// its snapshot (topic → payload); panics after 20 s with the last one.
pub async fn arbiter_feed_until(
    port: u16,
    cookie: &str,
    what: &str,
    want: impl Fn(&std::collections::BTreeMap<String, String>) -> bool,
) -> std::collections::BTreeMap<String, String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let snap = crate::common::feed_snapshot(port, "/api/feed", Some(cookie)).await;
        if want(&snap) {
            return snap;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}: {snap:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The rig's hall on the dashboard, with the test accounts.
pub async fn dashboard(rig: &crate::common::Rig) -> hallclock::web::RunningWeb {
    let state = hallclock::web::AppState::for_hall(
        crate::common::HALL,
        rig.hall.as_ref().expect("the daemon runs"),
        accounts(),
        false,
    );
    serve(state).await
}

/// Log in through the login page, as a person does; the browser keeps the session.
pub async fn log_in(chrome: &Chrome, base: &str, id: &str) {
    let c = &chrome.client;
    c.goto(&format!("{base}/login"))
        .await
        .expect("the login page");
    chrome
        .until(
            "the login form",
            "document.querySelector('#login input[name=id]')",
        )
        .await;
    c.find(fantoccini::Locator::Css("#login input[name=id]"))
        .await
        .expect("the id field")
        .send_keys(id)
        .await
        .expect("type the id");
    c.find(fantoccini::Locator::Css("#login input[name=password]"))
        .await
        .expect("the password field")
        .send_keys(PASSWORD)
        .await
        .expect("type the password");
    press(chrome, "#login button", "the button").await;
    chrome
        .until("the hall after the login", "location.pathname === '/'")
        .await;
}

/// Click `css` as a person does (WebDriver's click), once it is scrolled to the middle
/// of the window: at the top it would sit under the sticky header.
pub async fn press(chrome: &Chrome, css: &str, what: &str) {
    chrome
        .js(&format!(
            "document.querySelector({css:?}).scrollIntoView({{block: 'center'}}); return true;"
        ))
        .await;
    chrome
        .client
        .find(fantoccini::Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {what}: {e}"));
}
