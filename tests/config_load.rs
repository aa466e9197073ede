//! The configuration through the library: every kind of mistake reported with its key
//! path, environment overrides, secrets, and the shipped default file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use hallclock::config::{
    BoardConfig, BoardMode, BrokerConfig, Config, ConfigError, EventDefaults, HallConfig,
    LinkSettings, LogConfig, Problem, Severity, board_numbers,
};
use hallclock::rules::Color;
use hallclock::rules::Millis;
use hallclock::rules::game::{BothAbsent, FlagMode};
use hallclock::rules::placement::Side;
use hallclock::rules::time_control::{DelayDisplay, IncrementCredit, PeriodTransition};

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hallclock-config-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Give a read-only test directory its write bit back so it can be removed.
        let _ = std::process::Command::new("chmod")
            .args(["-R", "u+w"])
            .arg(&self.0)
            .status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A file whose state_dir exists and is writable, so only what a test adds is reported.
fn with_state_dir(dir: &TempDir, rest: &str) -> String {
    format!(
        "[hall]\nid = \"hall-a\"\nstate_dir = {:?}\n{rest}",
        dir.path().display().to_string()
    )
}

/// A board on an existing port, so no port warning.
fn board(id: &str) -> String {
    format!("\n[[boards]]\nid = \"{id}\"\nport = \"/dev/null\"\n")
}

fn ok(text: &str, env: &[(String, String)]) -> (Config, Vec<Problem>) {
    match Config::from_toml_str(text, env) {
        Ok(loaded) => loaded,
        Err(e) => panic!("expected a valid configuration, got:\n{e}"),
    }
}

fn err(text: &str, env: &[(String, String)]) -> ConfigError {
    match Config::from_toml_str(text, env) {
        Ok((c, w)) => panic!("expected errors, got a valid configuration {c:?} with {w:?}"),
        Err(e) => e,
    }
}

/// The one problem at `key`, or a failure listing all of them.
fn at<'a>(problems: &'a [Problem], key: &str) -> &'a Problem {
    let found: Vec<&Problem> = problems.iter().filter(|p| p.key == key).collect();
    match found.as_slice() {
        [p] => p,
        _ => panic!("expected one problem at '{key}', got {problems:#?}"),
    }
}

fn error_at<'a>(e: &'a ConfigError, key: &str) -> &'a Problem {
    let p = at(&e.problems, key);
    assert_eq!(p.severity, Severity::Error, "{p}");
    p
}

fn shipped() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/hallclock.toml");
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_shipped_file_is_valid_apart_from_the_example_port() {
    let dir = TempDir::new();
    let state = dir.path().display().to_string();
    let (config, warnings) = ok(&shipped(), &env(&[("HALLCLOCK__HALL__STATE_DIR", &state)]));
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let w = at(&warnings, "boards[0].port");
    assert_eq!(w.severity, Severity::Warning);
    assert!(w.message.contains("does not exist"), "{w}");
    assert_eq!(
        config.boards,
        vec![BoardConfig {
            id: "board-001".into(),
            port: "/dev/serial/by-id/usb-Digital_Game_Technology_DGT_Board-if00".into(),
            white: Side::Left,
            number: None,
            mode: None,
        }]
    );
}

#[test]
fn the_shipped_file_states_the_defaults() {
    let text = shipped();
    // state_dir is the one key whose check depends on the machine.
    assert!(text.contains("\nstate_dir = \"/var/lib/hallclock\"\n"));
    assert_eq!(
        HallConfig::default().state_dir,
        PathBuf::from("/var/lib/hallclock")
    );
    let dir = TempDir::new();
    let state = dir.path().display().to_string();
    let (config, _) = ok(&text, &env(&[("HALLCLOCK__HALL__STATE_DIR", &state)]));
    assert_eq!(config.broker, BrokerConfig::default());
    assert_eq!(config.defaults, EventDefaults::default());
    assert_eq!(config.link, LinkSettings::default());
    assert_eq!(config.log, LogConfig::default());
}

#[test]
fn the_shipped_file_documents_every_key() {
    let text = shipped();
    // The effective TOML of a configuration with every optional key set names every key.
    let mut all = Config::default();
    all.broker.client_id = Some("x".into());
    all.broker.username = Some("u".into());
    all.broker.password = Some("p".into());
    all.broker.ca_file = Some("/ca.pem".into());
    all.broker.client_cert = Some("/client.pem".into());
    all.broker.client_key = Some("/client.key".into());
    all.boards.push(BoardConfig {
        id: "b".into(),
        port: "/dev/null".into(),
        white: Side::Left,
        number: Some(17),
        mode: Some(BoardMode::Observe),
    });
    all.broadcast.lichess = Some(hallclock::broadcast::LichessSettings {
        base_url: "https://lichess.org".into(),
        round_id: "AbCd1234".into(),
        rounds: Vec::new(),
        token_file: "/etc/hallclock/lichess.token".into(),
    });
    let mut section = String::new();
    let mut keys = 0;
    for line in all.effective_toml(false).lines() {
        if line.starts_with('[') {
            section = line.to_string();
            // A table whose presence turns something on ([broadcast.lichess]) is shipped
            // commented out.
            assert!(
                text.contains(&format!("\n{line}\n")) || text.contains(&format!("\n# {line}\n")),
                "section {line} missing"
            );
            continue;
        }
        let Some((key, _)) = line.split_once(" = ") else {
            continue;
        };
        keys += 1;
        let documented = text.lines().any(|l| {
            l.strip_prefix("# ")
                .unwrap_or(l)
                .starts_with(&format!("{key} = "))
        });
        assert!(
            documented,
            "{section} {key} is not in config/hallclock.toml"
        );
    }
    assert_eq!(keys, 54);
}

#[test]
fn defaults_without_a_file() {
    let dir = TempDir::new();
    let (config, warnings) = ok(&with_state_dir(&dir, &board("b1")), &[]);
    assert!(warnings.is_empty(), "{warnings:#?}");
    assert_eq!(config.broker.host, "localhost");
    assert_eq!(config.broker.port, 1883);
    // The node is in the derived client id: two servers of one hall must not share it.
    assert_eq!(config.hall.node, hallclock::config::default_node());
    assert_eq!(
        config.client_id(),
        format!("hallclock-hall-a-{}", config.hall.node)
    );
    assert_eq!(config.broker.keep_alive_secs, 15);
    assert_eq!(config.broker.max_queued, 10_000);
    assert_eq!(
        config.defaults.time_control.to_string(),
        "40/5400+30:1800+30"
    );
    assert_eq!(config.defaults.default_time, Millis::from_mins(60));
    assert_eq!(config.defaults.discrepancy_margin, Millis::from_secs(2));
    assert_eq!(config.defaults.flag_mode, FlagMode::Auto);
    assert_eq!(config.link.liveness_timeout_ms, 3000);
    assert_eq!(config.log.level, "info");
}

#[test]
fn a_misspelt_key_is_an_error_with_its_path_and_a_suggestion() {
    let e = err("[broker]\nprot = 1884\n", &[]);
    let p = error_at(&e, "broker.prot");
    assert_eq!(p.message, "unknown key in [broker]; did you mean 'port'?");

    let e = err("[brokr]\nport = 1884\n", &[]);
    let p = error_at(&e, "brokr");
    assert!(p.message.contains("did you mean 'broker'?"), "{p}");

    let e = err("[defaults.clock]\ndelay-display = \"bronstein\"\n", &[]);
    let p = error_at(&e, "defaults.clock.delay-display");
    assert!(p.message.contains("did you mean 'delay_display'?"), "{p}");

    let e = err(
        "[[boards]]\nid = \"b1\"\nport = \"/dev/null\"\nwhte = \"left\"\n",
        &[],
    );
    let p = error_at(&e, "boards[0].whte");
    assert!(p.message.contains("did you mean 'white'?"), "{p}");

    let e = err("[log]\nfile = \"/var/log/x\"\n", &[]);
    assert_eq!(error_at(&e, "log.file").message, "unknown key in [log]");
}

#[test]
fn type_errors_name_the_key() {
    let dir = TempDir::new();
    let e = err(
        &with_state_dir(
            &dir,
            "[broker]\nport = \"1883\"\ntls = \"yes\"\nkeep_alive_secs = 70000\nmax_queued = -1\n\
             [link]\nmax_resends = 1.5\n",
        ),
        &[],
    );
    assert_eq!(
        error_at(&e, "broker.port").message,
        "expected an integer from 0 to 65535, found a string (\"1883\")"
    );
    assert_eq!(
        error_at(&e, "broker.tls").message,
        "expected true or false, found a string (\"yes\")"
    );
    assert!(
        error_at(&e, "broker.keep_alive_secs")
            .message
            .starts_with("70000 is out of range")
    );
    assert!(
        error_at(&e, "broker.max_queued")
            .message
            .starts_with("-1 is out of range")
    );
    assert!(
        error_at(&e, "link.max_resends")
            .message
            .contains("found a float (1.5)")
    );
    assert_eq!(e.errors().count(), 5, "{e}");

    let e = err("broker = \"localhost\"\n", &[]);
    assert!(
        error_at(&e, "broker")
            .message
            .starts_with("expected a table ([broker])")
    );
    let e = err("[boards]\nid = \"b1\"\n", &[]);
    assert!(
        error_at(&e, "boards")
            .message
            .starts_with("expected an array of tables ([[boards]])")
    );
}

#[test]
fn every_problem_is_reported_not_just_the_first() {
    let text = "\
[hall]
id = \"Hall A\"
[broker]
host = \"\"
port = 0
colour = \"blue\"
[defaults]
time_control = \"40/5400+30:\"
default_time = \"1 hour\"
[log]
level = \"verbose\"
[[boards]]
id = \"board-001\"
port = \"/dev/null\"
[[boards]]
id = \"board-001\"
port = \"/dev/zero\"
";
    let e = err(text, &[]);
    for key in [
        "hall.id",
        "broker.host",
        "broker.port",
        "broker.colour",
        "defaults.time_control",
        "defaults.default_time",
        "log.level",
        "boards[1].id",
    ] {
        error_at(&e, key);
    }
    // The client id derived from the bad hall id is not a second complaint.
    assert!(
        e.problems.iter().all(|p| p.key != "broker.client_id"),
        "{e}"
    );
    // Listed in the order of the file, whichever check found them.
    let keys: Vec<&str> = e
        .problems
        .iter()
        .map(|p| p.key.as_str())
        .filter(|k| !k.starts_with("boards[") || !k.ends_with(".port"))
        .filter(|k| *k != "hall.state_dir")
        .collect();
    assert_eq!(
        keys,
        [
            "hall.id",
            "broker.colour",
            "broker.host",
            "broker.port",
            "defaults.time_control",
            "defaults.default_time",
            "log.level",
            "boards[1].id",
        ]
    );
    // The Display is one problem per line, each with its key path.
    let shown = e.to_string();
    assert_eq!(shown.lines().count(), e.problems.len());
    assert!(shown.lines().any(|l| l
        == "error: boards[1].id: duplicate board id 'board-001' (also boards[0].id)"));
}

#[test]
fn board_ids_are_unique_and_lowercase() {
    let dir = TempDir::new();
    let text = with_state_dir(
        &dir,
        &format!(
            "{}{}{}",
            board("board-001"),
            board("board-001").replace("/dev/null", "/dev/zero"),
            board("Board_3").replace("/dev/null", "/dev/full")
        ),
    );
    let e = err(&text, &[]);
    assert_eq!(
        error_at(&e, "boards[1].id").to_string(),
        "error: boards[1].id: duplicate board id 'board-001' (also boards[0].id)"
    );
    let p = error_at(&e, "boards[2].id");
    assert!(
        p.message
            .contains("'Board_3' may contain only lowercase letters, digits and '-'"),
        "{p}"
    );
    assert!(p.message.ends_with("did you mean 'board-3'?"), "{p}");
}

#[test]
fn hall_id_must_match_the_topic_pattern() {
    let e = err("[hall]\nid = \"hall/a\"\n", &[]);
    assert!(error_at(&e, "hall.id").message.contains("not '/'"));
    let e = err("[hall]\nid = \"\"\n", &[]);
    assert!(error_at(&e, "hall.id").message.contains("empty"));
}

#[test]
fn boards_need_an_id_and_a_port_and_one_port_serves_one_board() {
    let dir = TempDir::new();
    let text = with_state_dir(
        &dir,
        "[[boards]]\nport = \"/dev/null\"\n[[boards]]\nid = \"b2\"\n\
         [[boards]]\nid = \"b3\"\nport = \"/dev/null\"\nwhite = \"middle\"\n",
    );
    let e = err(&text, &[]);
    assert!(error_at(&e, "boards[0].id").message.contains("missing"));
    assert!(error_at(&e, "boards[1].port").message.contains("missing"));
    assert!(
        error_at(&e, "boards[2].port")
            .message
            .contains("already the port of boards[0]")
    );
    assert_eq!(
        error_at(&e, "boards[2].white").message,
        "'middle' is not one of 'left', 'right'"
    );
    assert_eq!(e.errors().count(), 4, "{e}");
}

#[test]
fn a_missing_serial_port_is_only_a_warning() {
    let dir = TempDir::new();
    let text = with_state_dir(
        &dir,
        "[[boards]]\nid = \"b1\"\nport = \"/dev/serial/by-id/not-plugged-in\"\nwhite = \"right\"\n",
    );
    let (config, warnings) = ok(&text, &[]);
    assert_eq!(config.boards[0].white, Side::Right);
    let w = at(&warnings, "boards[0].port");
    assert_eq!(w.severity, Severity::Warning);
    assert!(w.message.contains("does not exist"), "{w}");

    let text = with_state_dir(&dir, "[[boards]]\nid = \"b1\"\nport = \"/dev/ttyUSB97\"\n");
    let (_, warnings) = ok(&text, &[]);
    assert!(
        at(&warnings, "boards[0].port")
            .message
            .contains("prefer /dev/serial/by-id/")
    );

    let file = dir.path().join("not-a-device");
    std::fs::write(&file, "").unwrap();
    let text = with_state_dir(
        &dir,
        &format!(
            "[[boards]]\nid = \"b1\"\nport = {:?}\n",
            file.display().to_string()
        ),
    );
    let (_, warnings) = ok(&text, &[]);
    assert!(
        at(&warnings, "boards[0].port")
            .message
            .contains("not a serial device")
    );
}

/// Thousands of boards with no sync window: each press syncs on its own.
#[test]
fn thousands_of_boards_without_a_sync_window_is_a_warning() {
    let dir = TempDir::new();
    // Ports of their own (missing ones are only warnings at their own keys).
    let boards = |n: usize| {
        (1..=n)
            .map(|i| format!("\n[[boards]]\nid = \"b{i}\"\nport = \"/dev/ttyNONE{i}\"\n"))
            .collect::<String>()
    };
    let (_, warnings) = ok(&with_state_dir(&dir, &boards(2000)), &[]);
    let w = at(&warnings, "hall.sync_window_ms");
    assert_eq!(w.severity, Severity::Warning);
    assert!(
        w.message.starts_with("0 with 2000 boards:"),
        "{}",
        w.message
    );
    // One board fewer, or a window set: nothing to say.
    let (_, warnings) = ok(&with_state_dir(&dir, &boards(1999)), &[]);
    assert!(
        !warnings.iter().any(|w| w.key == "hall.sync_window_ms"),
        "{warnings:?}"
    );
    let text =
        with_state_dir(&dir, &boards(2000)).replace("[hall]\n", "[hall]\nsync_window_ms = 50\n");
    let (c, warnings) = ok(&text, &[]);
    assert_eq!(c.hall.sync_window_ms, 50);
    assert!(
        !warnings.iter().any(|w| w.key == "hall.sync_window_ms"),
        "{warnings:?}"
    );
}

#[test]
fn no_boards_is_a_warning() {
    let dir = TempDir::new();
    let (_, warnings) = ok(&with_state_dir(&dir, ""), &[]);
    assert_eq!(at(&warnings, "boards").severity, Severity::Warning);
}

#[test]
fn a_time_control_that_does_not_parse_shows_the_column() {
    let e = err("[defaults]\ntime_control = \"40/5400+30:\"\n", &[]);
    assert_eq!(
        error_at(&e, "defaults.time_control").message,
        "time control '40/5400+30:': expected a period after ':' at column 12 \
         (e.g. \"40/5400+30:1800+30\", see `hallclock tc check`)"
    );
    let e = err("[defaults]\ntime_control = \"40/5400+3O\"\n", &[]);
    assert!(
        error_at(&e, "defaults.time_control")
            .message
            .contains("found 'O' at column 10")
    );
    // Parses, but no clock can run on it.
    let e = err("[defaults]\ntime_control = \"?\"\n", &[]);
    assert!(
        error_at(&e, "defaults.time_control")
            .message
            .contains("unknown")
    );
    let e = err("[defaults]\ntime_control = 5400\n", &[]);
    assert!(
        error_at(&e, "defaults.time_control")
            .message
            .contains("found an integer (5400)")
    );
}

#[test]
fn durations_are_strings_or_seconds() {
    let dir = TempDir::new();
    let (c, _) = ok(
        &with_state_dir(
            &dir,
            &format!(
                "[defaults]\ndefault_time = 900\ndiscrepancy_margin = \"0:01.500\"\n{}",
                board("b")
            ),
        ),
        &[],
    );
    assert_eq!(c.defaults.default_time, Millis::from_mins(15));
    assert_eq!(c.defaults.discrepancy_margin, Millis(1500));
    let (c, _) = ok(
        &with_state_dir(
            &dir,
            &format!("[defaults]\ndefault_time = \"0:00\"\n{}", board("b")),
        ),
        &[],
    );
    assert_eq!(c.defaults.default_time, Millis::ZERO);
    // The house notation's units (the simulator's and the dashboard's too).
    let (c, _) = ok(
        &with_state_dir(
            &dir,
            &format!(
                "[defaults]\ndefault_time = \"1h\"\ndiscrepancy_margin = \"1500ms\"\n{}",
                board("b")
            ),
        ),
        &[],
    );
    assert_eq!(c.defaults.default_time, Millis::from_mins(60));
    assert_eq!(c.defaults.discrepancy_margin, Millis(1500));

    let e = err(
        "[defaults]\ndefault_time = \"1 hour\"\ndiscrepancy_margin = -2\n",
        &[],
    );
    assert!(
        error_at(&e, "defaults.default_time")
            .message
            .contains("expected a duration such as")
    );
    assert!(
        error_at(&e, "defaults.discrepancy_margin")
            .message
            .contains("cannot be negative")
    );
    let e = err("[defaults]\ndefault_time = \"1:75\"\n", &[]);
    assert!(
        error_at(&e, "defaults.default_time")
            .message
            .contains("00 to 59")
    );
}

#[test]
fn enum_values_are_checked_with_suggestions() {
    let e = err(
        "[defaults]\nflag_mode = \"automatic\"\nboth_absent = \"both-lose\"\n[defaults.clock]\nperiod_transition = \"on_flag \"\n",
        &[],
    );
    assert!(
        error_at(&e, "defaults.flag_mode")
            .message
            .starts_with("'automatic' is not one of 'auto', 'claim'")
    );
    assert!(
        error_at(&e, "defaults.both_absent")
            .message
            .ends_with("did you mean 'both_lose'?")
    );
    assert!(
        error_at(&e, "defaults.clock.period_transition")
            .message
            .ends_with("did you mean 'on_flag'?")
    );
}

#[test]
fn a_boards_mode_is_its_own_or_the_defaults_and_a_bad_one_names_the_board() {
    let dir = TempDir::new();
    let text = with_state_dir(
        &dir,
        "[defaults]\nmode = \"observe\"\n\
         [[boards]]\nid = \"b1\"\nport = \"/dev/null\"\n\
         [[boards]]\nid = \"b2\"\nport = \"/dev/zero\"\nmode = \"control\"\n",
    );
    let (c, _) = ok(&text, &[]);
    assert_eq!(c.defaults.mode, BoardMode::Observe);
    assert_eq!(c.boards[0].mode, None);
    assert_eq!(c.boards[1].mode, Some(BoardMode::Control));
    let settings = hallclock::daemon::settings(&c).expect("valid ids");
    let modes: Vec<BoardMode> = settings.boards.iter().map(|b| b.mode).collect();
    assert_eq!(modes, [BoardMode::Observe, BoardMode::Control]);
    // Without any: control.
    assert_eq!(EventDefaults::default().mode, BoardMode::Control);
    let e = err(
        "[defaults]\nmode = \"watch\"\n[[boards]]\nid = \"b1\"\nport = \"/dev/null\"\n\
         [[boards]]\nid = \"b2\"\nport = \"/dev/zero\"\nmode = \"observed\"\n",
        &[],
    );
    assert!(
        error_at(&e, "defaults.mode")
            .message
            .starts_with("'watch' is not one of 'control', 'observe'"),
        "{e}"
    );
    assert!(
        error_at(&e, "boards[1].mode")
            .message
            .ends_with("did you mean 'observe'?"),
        "{e}"
    );
}

#[test]
fn broker_host_and_port() {
    let e = err("[broker]\nhost = \"\"\nport = 0\n", &[]);
    assert!(error_at(&e, "broker.host").message.contains("empty"));
    assert!(
        error_at(&e, "broker.port")
            .message
            .starts_with("0 is not a port")
    );
    let e = err("[broker]\nhost = \"mqtt://broker.local:1883\"\n", &[]);
    assert!(error_at(&e, "broker.host").message.contains("is a URL"));
}

#[test]
fn tls_needs_an_existing_ca_file() {
    let dir = TempDir::new();
    let missing = dir.path().join("missing-ca.pem");
    let text = with_state_dir(
        &dir,
        &format!(
            "[broker]\ntls = true\nca_file = {:?}\n{}",
            missing.display().to_string(),
            board("b")
        ),
    );
    let e = err(&text, &[]);
    assert!(
        error_at(&e, "broker.ca_file")
            .message
            .contains("does not exist")
    );

    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\n").unwrap();
    let text = with_state_dir(
        &dir,
        &format!(
            "[broker]\ntls = true\nport = 8883\nca_file = {:?}\n{}",
            ca.display().to_string(),
            board("b")
        ),
    );
    let (c, warnings) = ok(&text, &[]);
    assert!(c.broker.tls && warnings.is_empty(), "{warnings:?}");

    // A CA file without TLS is ignored: say so.
    let text = text.replace("tls = true", "tls = false");
    let (_, warnings) = ok(&text, &[]);
    assert_eq!(at(&warnings, "broker.ca_file").severity, Severity::Warning);
}

#[test]
fn client_certificates_are_checked_for_mutual_tls() {
    let dir = TempDir::new();
    let cert = dir.path().join("client.pem");
    let key = dir.path().join("client.key");
    std::fs::write(
        &cert,
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    std::fs::write(
        &key,
        "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let text = |tls: bool, cert: &Path, key: Option<&Path>| {
        let mut broker = format!(
            "[broker]\ntls = {tls}\nclient_cert = {:?}\n",
            cert.display().to_string()
        );
        if let Some(k) = key {
            broker.push_str(&format!("client_key = {:?}\n", k.display().to_string()));
        }
        with_state_dir(&dir, &format!("{broker}{}", board("b")))
    };
    let (c, warnings) = ok(&text(true, &cert, Some(&key)), &[]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.broker.client_cert.as_deref(), Some(cert.as_path()));
    assert_eq!(c.broker.client_key.as_deref(), Some(key.as_path()));

    let e = err(&text(true, &cert, None), &[]);
    assert!(
        error_at(&e, "broker.client_cert").message.contains(
            "needs both broker.client_cert and broker.client_key; broker.client_key is not set"
        ),
        "{e}"
    );
    let missing = dir.path().join("missing.pem");
    let e = err(&text(true, &missing, Some(&key)), &[]);
    assert!(
        error_at(&e, "broker.client_cert")
            .message
            .contains("does not exist")
    );
    // Swapped: the key where the certificate belongs, and the other way round.
    let e = err(&text(true, &key, Some(&cert)), &[]);
    assert!(
        error_at(&e, "broker.client_cert")
            .message
            .contains("no PEM certificate in it"),
        "{e}"
    );
    assert!(
        error_at(&e, "broker.client_key")
            .message
            .contains("no unencrypted PEM private key"),
        "{e}"
    );
    // Without TLS they are ignored: say so.
    let (_, warnings) = ok(&text(false, &cert, Some(&key)), &[]);
    assert_eq!(
        at(&warnings, "broker.client_cert").severity,
        Severity::Warning
    );
    assert_eq!(
        at(&warnings, "broker.client_key").severity,
        Severity::Warning
    );
}

#[test]
fn state_dir_must_be_a_writable_directory() {
    let dir = TempDir::new();
    let missing = dir.path().join("state");
    let text = format!(
        "[hall]\nstate_dir = {:?}\n{}",
        missing.display().to_string(),
        board("b")
    );
    let (_, warnings) = ok(&text, &[]);
    let w = at(&warnings, "hall.state_dir");
    assert_eq!(w.severity, Severity::Warning);
    assert!(
        w.message.ends_with("does not exist; it will be created"),
        "{w}"
    );

    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let text = format!("[hall]\nstate_dir = {:?}\n", file.display().to_string());
    let e = err(&text, &[]);
    assert!(
        error_at(&e, "hall.state_dir")
            .message
            .ends_with("exists but is not a directory")
    );

    // root may write anywhere, so this check says nothing when the tests run as root.
    // (A file we just created is owned by our effective user id.)
    let running_as_root = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&file).unwrap().uid() == 0
    };
    if !running_as_root {
        let ro = dir.path().join("read-only");
        std::fs::create_dir(&ro).unwrap();
        let status = std::process::Command::new("chmod")
            .arg("a-w")
            .arg(&ro)
            .status()
            .unwrap();
        assert!(status.success());
        let text = format!("[hall]\nstate_dir = {:?}\n", ro.display().to_string());
        let e = err(&text, &[]);
        assert!(
            error_at(&e, "hall.state_dir")
                .message
                .contains("not a writable directory")
        );
    }
}

#[test]
fn client_ids_brokers_refuse() {
    let dir = TempDir::new();
    // As TOML literals: '\u0001' is a control character.
    for bad in [
        r#""hall#1""#,
        r#""hall/a""#,
        r#""hall a""#,
        r#""a\u0001b""#,
        r#""""#,
    ] {
        let text = with_state_dir(&dir, &format!("[broker]\nclient_id = {bad}\n"));
        let e = err(&text, &[]);
        error_at(&e, "broker.client_id");
    }
    let text = with_state_dir(
        &dir,
        &format!(
            "[broker]\nclient_id = \"hallclock-a-rather-long-client-id\"\n{}",
            board("b")
        ),
    );
    let (_, warnings) = ok(&text, &[]);
    assert_eq!(
        at(&warnings, "broker.client_id").severity,
        Severity::Warning
    );
}

#[test]
fn a_password_needs_a_username() {
    let e = err("[broker]\npassword = \"secret\"\n", &[]);
    assert!(error_at(&e, "broker.password").message.contains("3.1.2.9"));
}

#[test]
fn log_level_is_one_of_five() {
    let e = err("[log]\nlevel = \"verbose\"\n", &[]);
    assert_eq!(
        error_at(&e, "log.level").message,
        "'verbose' is not a log level; expected one of 'error', 'warn', 'info', 'debug', 'trace'"
    );
    let e = err("[log]\nlevel = \"INFO\"\n", &[]);
    assert!(
        error_at(&e, "log.level")
            .message
            .ends_with("did you mean 'info'?")
    );
}

#[test]
fn link_timeouts() {
    let e = err(
        "[link]\nliveness_timeout_ms = 0\nreopen_backoff_max_ms = 0\n",
        &[],
    );
    error_at(&e, "link.liveness_timeout_ms");
    error_at(&e, "link.reopen_backoff_max_ms");
    let dir = TempDir::new();
    let (_, warnings) = ok(
        &with_state_dir(
            &dir,
            &format!("[link]\nack_timeout_ms = 5000\n{}", board("b")),
        ),
        &[],
    );
    assert_eq!(
        at(&warnings, "link.ack_timeout_ms").severity,
        Severity::Warning
    );
}

#[test]
fn a_toml_syntax_error_names_line_and_column() {
    let e = err("[hall]\nid = \"hall-a\"\nstate_dir = /var/lib\n", &[]);
    assert_eq!(e.problems.len(), 1, "{e}");
    let p = &e.problems[0];
    assert_eq!(p.key, "");
    assert!(p.message.contains("line 3, column 13"), "{p}");
    assert_eq!(e.to_string().lines().count(), 1);

    let e = err("[hall]\nid = \"a\"\nid = \"b\"\n", &[]);
    assert!(
        e.problems[0].message.contains("line 3, column 1"),
        "{}",
        e.problems[0]
    );
    assert!(
        e.problems[0].message.contains("duplicate key"),
        "{}",
        e.problems[0]
    );
}

#[test]
fn environment_overrides_the_file() {
    let dir = TempDir::new();
    let text = with_state_dir(&dir, &format!("[broker]\nport = 1999\n{}", board("b")));
    let (c, warnings) = ok(
        &text,
        &env(&[
            ("HALLCLOCK__BROKER__PORT", "1884"),
            ("HALLCLOCK__HALL__ID", "hall-b"),
            ("HALLCLOCK__BROKER__TLS", "true"),
            ("HALLCLOCK__BROKER__USERNAME", "clock"),
            ("HALLCLOCK__BROKER__PASSWORD", "hunter2"),
            ("HALLCLOCK__DEFAULTS__TIME_CONTROL", "900+10"),
            ("HALLCLOCK__DEFAULTS__DEFAULT_TIME", "0:15:00"),
            ("HALLCLOCK__DEFAULTS__CLOCK__DELAY_DISPLAY", "bronstein"),
            ("HALLCLOCK__DEFAULTS__CLOCK__PERIOD_TRANSITION", "on_flag"),
            ("HALLCLOCK__DEFAULTS__BOTH_ABSENT", "arbiter"),
            ("HALLCLOCK__LINK__MAX_RESENDS", "5"),
            ("hallclock__log__level", "debug"),
            // Not ours: ignored.
            ("HALLCLOCK_BROKER_PORT", "1"),
            ("PATH", "/usr/bin"),
        ]),
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.broker.port, 1884);
    assert_eq!(c.hall.id, "hall-b");
    assert_eq!(c.client_id(), format!("hallclock-hall-b-{}", c.hall.node));
    assert!(c.broker.tls);
    assert_eq!(c.broker.username.as_deref(), Some("clock"));
    assert_eq!(c.broker.password.as_deref(), Some("hunter2"));
    assert_eq!(c.defaults.time_control.to_string(), "900+10");
    assert_eq!(c.defaults.default_time, Millis::from_mins(15));
    assert_eq!(c.defaults.clock.delay_display, DelayDisplay::Bronstein);
    assert_eq!(c.defaults.clock.period_transition, PeriodTransition::OnFlag);
    assert_eq!(c.defaults.both_absent, BothAbsent::Arbiter);
    assert_eq!(c.link.max_resends, 5);
    assert_eq!(c.log.level, "debug");
}

#[test]
fn an_empty_environment_variable_unsets_an_optional_key() {
    let dir = TempDir::new();
    let text = with_state_dir(
        &dir,
        &format!("[broker]\nclient_id = \"daemon-1\"\n{}", board("b")),
    );
    let (c, _) = ok(&text, &env(&[("HALLCLOCK__BROKER__CLIENT_ID", "")]));
    assert_eq!(c.broker.client_id, None);
    assert_eq!(c.client_id(), format!("hallclock-hall-a-{}", c.hall.node));
}

#[test]
fn environment_mistakes_name_the_variable() {
    let e = err(
        "",
        &env(&[
            ("HALLCLOCK__BROKER__PORT", "eighteen"),
            ("HALLCLOCK__BROKER__PROT", "1884"),
            ("HALLCLOCK__BOARDS__0__PORT", "/dev/ttyUSB0"),
            ("HALLCLOCK__HALL__ID", "Hall B"),
        ]),
    );
    assert_eq!(
        error_at(&e, "broker.port").message,
        "expected an integer from 0 to 65535, found \"eighteen\" (from HALLCLOCK__BROKER__PORT)"
    );
    assert_eq!(
        error_at(&e, "broker.prot").message,
        "unknown key (set by HALLCLOCK__BROKER__PROT) in [broker]; did you mean 'port'?"
    );
    assert!(
        error_at(&e, "")
            .message
            .starts_with("HALLCLOCK__BOARDS__0__PORT: boards cannot be set from the environment")
    );
    error_at(&e, "hall.id");

    let e = err("", &env(&[("HALLCLOCK__BROKR__PORT", "1884")]));
    let p = error_at(&e, "brokr");
    assert!(p.message.contains("HALLCLOCK__BROKR__PORT"), "{p}");
    assert!(p.message.contains("did you mean 'broker'?"), "{p}");
}

#[test]
fn effective_toml_masks_the_password_and_round_trips() {
    let dir = TempDir::new();
    let text = with_state_dir(
        &dir,
        &format!(
            "[broker]\nusername = \"clock\"\npassword = \"hunter2\"\n[defaults]\ndiscrepancy_margin = \"0:01.500\"\n{}",
            board("b1")
        ),
    );
    let (c, _) = ok(&text, &[]);
    let masked = c.effective_toml(true);
    assert!(masked.contains("\npassword = \"********\"\n"), "{masked}");
    assert!(!masked.contains("hunter2"));
    assert!(masked.contains(&format!(
        "\nclient_id = \"hallclock-hall-a-{}\"\n",
        c.hall.node
    )));
    assert!(masked.contains(&format!("\nnode = \"{}\"\n", c.hall.node)));
    assert!(masked.contains("\n# ca_file: not set\n"));
    assert!(masked.contains("\ndiscrepancy_margin = \"0:01.500\"\n"));

    let plain = c.effective_toml(false);
    assert!(plain.contains("\npassword = \"hunter2\"\n"));
    let (again, _) = ok(&plain, &[]);
    let mut expected = c.clone();
    expected.broker.client_id = Some(c.client_id());
    assert_eq!(again, expected);
}

#[test]
fn effective_toml_escapes_strings() {
    let mut c = Config::default();
    c.broker.password = Some("a\"b\\c\nd".into());
    c.broker.username = Some("u".into());
    let text = c.effective_toml(false);
    assert!(text.contains(r#"password = "a\"b\\c\nd""#), "{text}");
}

#[test]
fn load_reads_the_file_and_reports_a_missing_one() {
    let dir = TempDir::new();
    let file = dir.path().join("hallclock.toml");
    std::fs::write(&file, with_state_dir(&dir, &board("b1"))).unwrap();
    let (c, _) = Config::load(Some(&file)).unwrap();
    assert_eq!(c.boards.len(), 1);

    let missing = dir.path().join("nope.toml");
    let e = Config::load(Some(&missing)).unwrap_err();
    assert_eq!(e.problems.len(), 1);
    assert!(
        e.problems[0]
            .message
            .starts_with(&format!("cannot read {}", missing.display()))
    );
}

#[test]
fn a_quoted_dotted_key_is_one_unknown_key() {
    // TOML: "hall.id" is a single key at the top level, not id in [hall].
    let e = err("\"hall.id\" = \"hall-q\"\n", &[]);
    let p = error_at(&e, "\"hall.id\"");
    assert!(p.message.contains("write hall.id without quotes"), "{p}");
}

#[test]
fn key_paths_in_the_file_or_environment_cannot_exhaust_memory() {
    // The config crate reads "x[N]" as an array index and would allocate N values.
    let e = err("\"x[99999999999999]\" = 1\n", &[]);
    error_at(&e, "\"x[99999999999999]\"");
    let e = err("", &env(&[("HALLCLOCK__X[99999999999999]", "1")]));
    let p = error_at(&e, "");
    assert!(
        p.message
            .starts_with("HALLCLOCK__X[99999999999999]: not an override"),
        "{p}"
    );
}

#[test]
fn a_board_that_is_not_a_table_keeps_the_others_numbered() {
    let dir = TempDir::new();
    // An array of mixed values: TOML allows it, [[boards]] cannot express it.
    let text = format!(
        "boards = [\"board-001\", {{ id = \"b2\", port = \"/dev/null\" }}, {{ id = \"b2\", port = \"/dev/zero\" }}]\n{}",
        with_state_dir(&dir, "")
    );
    let e = err(&text, &[]);
    assert!(
        error_at(&e, "boards[0]")
            .message
            .starts_with("expected a table ([[boards]]), found a string")
    );
    error_at(&e, "boards[2].id");
    assert_eq!(e.problems.len(), 2, "{e}");
}

#[test]
fn an_environment_mistake_about_boards_does_not_hide_the_files_boards() {
    let dir = TempDir::new();
    let text = with_state_dir(
        &dir,
        &format!(
            "{}{}",
            board("b1"),
            board("b1").replace("/dev/null", "/dev/zero")
        ),
    );
    let e = err(&text, &env(&[("HALLCLOCK__BOARDS", "x")]));
    error_at(&e, "");
    error_at(&e, "boards[1].id");
}

#[test]
fn a_games_setup_and_a_boards_placement_come_from_the_configuration() {
    let dir = TempDir::new();
    let text = with_state_dir(
        &dir,
        "[defaults]\ntime_control = \"900+10\"\ndefault_time = \"0:00\"\nflag_mode = \"claim\"\n\
         [defaults.clock]\nincrement_credit = \"after_press\"\n\
         [[boards]]\nid = \"b1\"\nport = \"/dev/null\"\nwhite = \"right\"\n",
    );
    let (c, _) = ok(&text, &[]);
    let setup = c.defaults.setup("Carlsen", "Nepo", Millis(1_000));
    assert_eq!(setup.tc.to_string(), "900+10");
    assert_eq!(setup.tc_black, None);
    assert_eq!(setup.default_time, Millis::ZERO);
    assert_eq!(setup.flag_mode, FlagMode::Claim);
    assert_eq!(setup.clock.increment_credit, IncrementCredit::AfterPress);
    assert_eq!(setup.discrepancy_margin, Millis::from_secs(2));
    assert_eq!(
        (setup.white.as_str(), setup.start),
        ("Carlsen", Millis(1_000))
    );
    assert_eq!(c.boards[0].placement().side_of(Color::White), Side::Right);
}

#[test]
fn tournament_board_numbers_follow_the_entry_before() {
    let dir = TempDir::new();
    let board = |id: &str| format!("\n[[boards]]\nid = \"{id}\"\nport = \"/dev/{id}\"\n");
    let text = format!(
        "{}\nnumber = 17\n{}{}\nnumber = 30\n{}",
        board("b1"),
        board("b2"),
        board("b3"),
        board("b4")
    );
    let (config, _) = ok(&with_state_dir(&dir, &text), &[]);
    assert_eq!(board_numbers(&config.boards), vec![17, 18, 30, 31]);
    let (config, _) = ok(&with_state_dir(&dir, &board("b1")), &[]);
    assert_eq!(board_numbers(&config.boards), vec![1]);
    // Two entries cannot play the same tournament board.
    let text = format!("{}{}\nnumber = 1\n", board("b1"), board("b2"));
    let e = err(&with_state_dir(&dir, &text), &[]);
    let p = error_at(&e, "boards[1].number");
    assert!(
        p.message
            .contains("tournament board 1 is already boards[0]"),
        "{p}"
    );
    let text = format!("{}\nnumber = 0\n", board("b1"));
    let e = err(&with_state_dir(&dir, &text), &[]);
    assert!(
        error_at(&e, "boards[0].number")
            .message
            .contains("0 is out of range")
    );
}

#[test]
fn security_is_signed_by_default_and_checked_with_key_paths() {
    use hallclock::config::Commands;
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new();
    let (config, _) = ok(&with_state_dir(&dir, &board("b1")), &[]);
    assert_eq!(config.security.commands, Commands::Signed);
    assert_eq!(
        config.security.arbiters,
        Path::new("/etc/hallclock/arbiters.toml")
    );
    let (_, warnings) = ok(
        &with_state_dir(
            &dir,
            &format!("[security]\ncommands = \"open\"\n{}", board("b1")),
        ),
        &[],
    );
    let w = at(&warnings, "security.commands");
    assert!(w.message.contains("anyone who can publish"), "{w}");
    let e = err(
        &with_state_dir(&dir, "[security]\ncommands = \"sgned\"\nwindow_secs = 0\n"),
        &[],
    );
    assert!(
        error_at(&e, "security.commands")
            .message
            .contains("did you mean 'signed'"),
        "{e}"
    );
    assert!(
        error_at(&e, "security.window_secs")
            .message
            .contains("out of range")
    );
    // The arbiters file: others may not read it, and every account must be right.
    let file = dir.path().join("arbiters.toml");
    let with_file = with_state_dir(
        &dir,
        &format!(
            "[security]\narbiters = {:?}\n{}",
            file.display().to_string(),
            board("b1")
        ),
    );
    std::fs::write(
        &file,
        "[[arbiter]]\nid = \"ia\"\nname = \"IA\"\nrole = \"chief\"\nkey = \"0011223344556677889900aabbccddeeff\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = err(&with_file, &[]);
    assert!(
        error_at(&e, "security.arbiters")
            .message
            .contains("chmod 600"),
        "{e}"
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    ok(&with_file, &[]);
    std::fs::write(
        &file,
        "[[arbiter]]\nid = \"IA\"\nname = \"IA\"\nrole = \"chief\"\nkey = \"00\"\n",
    )
    .unwrap();
    let e = err(&with_file, &[]);
    assert!(
        error_at(&e, "security.arbiters")
            .message
            .contains("arbiter[0] (IA): id"),
        "{e}"
    );
}

/// A game set up from `[defaults]` with the given option: Black never comes, White is
/// there, the arbiter pauses the clocks from minute 1 to minute 6; default time 10 min.
/// Returns the instant the default passed.
fn default_instant_with(option: Option<bool>) -> Millis {
    use hallclock::rules::game::{Event, Game, Input};
    let dir = TempDir::new();
    let line = option.map_or(String::new(), |b| {
        format!("pauses_extend_default_time = {b}\n")
    });
    let text = with_state_dir(
        &dir,
        &format!("[defaults]\ntime_control = \"5400\"\ndefault_time = \"0:10:00\"\n{line}"),
    );
    let (config, _) = ok(&text, &[]);
    let t0 = Millis(1_700_000_000_000);
    let mut g = Game::new(config.defaults.setup("W", "B", t0)).unwrap();
    let step = |g: &mut Game, input: Option<Input>, now: Millis| -> Vec<Event> {
        let events = match input {
            Some(i) => g.decide(&i, now).unwrap(),
            None => g.poll(now),
        };
        for e in &events {
            g.evolve(e);
        }
        events
    };
    let present = Input::Present {
        side: Color::White,
        arbiter: "IA".into(),
    };
    step(&mut g, Some(present), t0 - Millis(1));
    step(&mut g, None, t0);
    let pause = Input::Pause {
        arbiter: "IA".into(),
        reason: "fire alarm".into(),
    };
    step(&mut g, Some(pause), t0 + Millis::from_secs(60));
    let resume = Input::Resume {
        arbiter: "IA".into(),
    };
    step(&mut g, Some(resume), t0 + Millis::from_secs(360));
    let mut now = t0 + Millis::from_secs(360);
    while now < t0 + Millis::from_mins(30) {
        now += Millis(1);
        if let Some(d) = g.next_deadline() {
            now = now.max(d);
        }
        for e in step(&mut g, None, now) {
            if let Event::DefaultTimePassed { at, absent } = e {
                assert_eq!(absent, vec![Color::Black]);
                return at - t0;
            }
        }
    }
    panic!("the default never passed");
}

#[test]
fn rule_6_6_by_default_a_pause_does_not_move_the_default_instant_set_in_defaults() {
    assert!(!EventDefaults::default().pauses_extend_default_time);
    // 6.6's text: 10 min after the scheduled start (and 1 ms, "more than").
    let expected = Millis::from_mins(10) + Millis(1);
    assert_eq!(default_instant_with(None), expected);
    assert_eq!(default_instant_with(Some(false)), expected);
}

#[test]
fn rule_6_6_pauses_extend_default_time_in_defaults_moves_the_default_instant() {
    // The event's rules say otherwise: the 5 min of pause do not count.
    assert_eq!(
        default_instant_with(Some(true)),
        Millis::from_mins(15) + Millis(1)
    );
}

#[test]
fn pauses_extend_default_time_must_be_a_boolean() {
    let dir = TempDir::new();
    let text = with_state_dir(&dir, "[defaults]\npauses_extend_default_time = \"yes\"\n");
    let e = err(&text, &[]);
    error_at(&e, "defaults.pauses_extend_default_time");
}

#[test]
fn broadcast_delay_and_lichess_push_are_read_and_checked() {
    let dir = TempDir::new();
    let (config, _) = ok(
        &with_state_dir(
            &dir,
            &format!(
                "[broadcast]\ndelay_minutes = 15\n[broadcast.lichess]\nround_id = \"AbCd1234\"\ntoken_file = \"/etc/hallclock/lichess.token\"\n{}",
                board("b1")
            ),
        ),
        &[],
    );
    assert_eq!(config.broadcast.delay, Millis::from_mins(15));
    let l = config.broadcast.lichess.expect("the push is on");
    assert_eq!(l.base_url, "https://lichess.org");
    assert_eq!(l.round_id, "AbCd1234");
    let (config, _) = ok(&with_state_dir(&dir, &board("b1")), &[]);
    assert_eq!(config.broadcast.delay, Millis::ZERO);
    assert!(config.broadcast.lichess.is_none(), "off by default");
    let e = err(
        &with_state_dir(
            &dir,
            "[broadcast]\ndelay_minutes = 61\n[broadcast.lichess]\nround_id = \"a/b\"\nbase_url = \"lichess.org\"\ntoken_file = \"/t\"\n",
        ),
        &[],
    );
    assert!(
        error_at(&e, "broadcast.delay_minutes")
            .message
            .contains("61 is out of range (0 to 60)"),
        "{e}"
    );
    assert!(
        error_at(&e, "broadcast.lichess.round_id")
            .message
            .contains("'a/b'")
    );
    assert!(
        error_at(&e, "broadcast.lichess.base_url")
            .message
            .contains("http")
    );
}

/// Issue 22: `event` and `site` fill the PGN's tags; `rounds` maps board ranges to lichess
/// rounds (a push takes at most 100 games), checked for overlaps, width and ids, and
/// printed so that print-config's output loads back the same.
#[test]
fn broadcast_event_site_and_lichess_rounds_are_read_checked_and_printed() {
    use hallclock::broadcast::{BoardRange, LichessRound};
    let dir = TempDir::new();
    let (config, _) = ok(
        &with_state_dir(
            &dir,
            &format!(
                "[broadcast]\nevent = \"Hall Open 2026\"\nsite = \"Lisbon POR\"\n\
                 [broadcast.lichess]\ntoken_file = \"/t\"\n\
                 rounds = [{{ boards = \"1-100\", round_id = \"AbCd1234\" }}, {{ boards = \"101-150\", round_id = \"EfGh5678\" }}]\n{}",
                board("b1")
            ),
        ),
        &[],
    );
    assert_eq!(
        config.broadcast.tags.event.as_deref(),
        Some("Hall Open 2026")
    );
    assert_eq!(config.broadcast.tags.site.as_deref(), Some("Lisbon POR"));
    let l = config.broadcast.lichess.clone().expect("the push is on");
    assert_eq!(
        l.rounds,
        vec![
            LichessRound {
                boards: Some(BoardRange {
                    first: 1,
                    last: 100
                }),
                round_id: "AbCd1234".into()
            },
            LichessRound {
                boards: Some(BoardRange {
                    first: 101,
                    last: 150
                }),
                round_id: "EfGh5678".into()
            },
        ]
    );
    let printed = config.effective_toml(false);
    assert!(printed.contains("event = \"Hall Open 2026\""), "{printed}");
    let (again, _) = ok(&printed, &[]);
    assert_eq!(again.broadcast, config.broadcast, "print-config loads back");

    // Empty tags are no tags.
    let (c, _) = ok(&with_state_dir(&dir, "[broadcast]\nevent = \"\"\n"), &[]);
    assert_eq!(c.broadcast.tags.event, None);

    let e = err(
        &with_state_dir(
            &dir,
            "[broadcast]\nevent = 7\n[broadcast.lichess]\ntoken_file = \"/t\"\nround_id = \"Xy\"\n\
             rounds = [{ boards = \"1-100\", round_id = \"AbCd1234\" },\
             { boards = \"90-120\", round_id = \"\" },\
             { boards = \"200-350\", round_id = \"AbCd1234\" },\
             { boards = \"x-3\", round_id = \"Zz\" },\
             { boards = \"9-2\", round_id = \"Zy\" },\
             { round_id = \"Zx\" }]\n",
        ),
        &[],
    );
    let msg = |key: &str| error_at(&e, key).message.clone();
    assert!(msg("broadcast.event").contains("expected a string"), "{e}");
    assert!(
        msg("broadcast.lichess.round_id").contains("not both"),
        "{e}"
    );
    assert!(
        msg("broadcast.lichess.rounds[1].boards").contains("overlaps rounds[0] (\"1-100\")"),
        "{e}"
    );
    assert!(
        msg("broadcast.lichess.rounds[1].round_id").contains("is not a lichess round id"),
        "{e}"
    );
    assert!(
        msg("broadcast.lichess.rounds[2].boards")
            .contains("151 boards: a lichess round takes at most 100 games"),
        "{e}"
    );
    assert!(
        msg("broadcast.lichess.rounds[2].round_id").contains("rounds[0]'s too"),
        "{e}"
    );
    assert!(
        msg("broadcast.lichess.rounds[3].boards").contains("'x-3' is not a board range"),
        "{e}"
    );
    assert!(
        msg("broadcast.lichess.rounds[4].boards").contains("the first board comes after the last"),
        "{e}"
    );
    assert!(
        msg("broadcast.lichess.rounds[5].boards").contains("missing"),
        "{e}"
    );
}

#[test]
fn web_trusted_proxy_is_an_ip_address_or_empty() {
    let dir = TempDir::new();
    let (c, _) = ok(
        &with_state_dir(&dir, "[web]\ntrusted_proxy = \"127.0.0.1\"\n"),
        &[],
    );
    assert_eq!(c.web.trusted_proxy, "127.0.0.1");
    let (c, _) = ok(&with_state_dir(&dir, ""), &[]);
    assert_eq!(c.web.trusted_proxy, "", "no proxy is trusted by default");
    let e = err(
        &with_state_dir(&dir, "[web]\ntrusted_proxy = \"nginx.local\"\n"),
        &[],
    );
    assert!(
        error_at(&e, "web.trusted_proxy")
            .message
            .contains("is not an IP address"),
        "{e}"
    );
}

#[test]
fn the_node_is_an_id_named_in_the_file_or_the_host_name() {
    let dir = TempDir::new();
    let text =
        with_state_dir(&dir, &board("b1")).replacen("[hall]\n", "[hall]\nnode = \"server-2\"\n", 1);
    let (c, _) = ok(&text, &[]);
    assert_eq!(c.hall.node, "server-2");
    assert_eq!(c.client_id(), "hallclock-hall-a-server-2");
    for bad in ["Server_2", "", "a/b"] {
        let text = with_state_dir(&dir, &board("b1")).replacen(
            "[hall]\n",
            &format!("[hall]\nnode = \"{bad}\"\n"),
            1,
        );
        let e = err(&text, &[]);
        error_at(&e, "hall.node");
    }
    // The default is always a valid id, whatever the machine's name.
    assert!(hallclock::id::valid(&hallclock::config::default_node()));
}
