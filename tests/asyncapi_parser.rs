//! docs/asyncapi.yaml as the integrators' tools read it (issue 41): the official AsyncAPI
//! parser, `@asyncapi/parser` (npm; every generator of code, models and docs is built on
//! it), must return the document with no error and no warning. Its "information" notes
//! (a newer AsyncAPI version exists) are printed, not counted.
//!
//! The parser is not vendored: ./scripts/test installs it, pinned, into target/asyncapi
//! (npm, as axe-core); `HALLCLOCK_ASYNCAPI` names another directory holding its
//! `node_modules`. Without it this test fails and says how to install it.

use std::path::PathBuf;
use std::process::Command;

fn parser_dir() -> PathBuf {
    std::env::var_os("HALLCLOCK_ASYNCAPI")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/asyncapi"))
}

/// `(errors, warnings, document returned, every diagnostic line)` for `spec`.
fn parse(spec: &std::path::Path) -> (usize, usize, bool, Vec<String>) {
    let dir = parser_dir();
    assert!(
        dir.join("node_modules/@asyncapi/parser/package.json")
            .exists(),
        "@asyncapi/parser is not installed under {}: run ./scripts/test (it installs it into \
         target/asyncapi), or set HALLCLOCK_ASYNCAPI to a directory whose node_modules has it",
        dir.display()
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/asyncapi_parse.mjs");
    let out = Command::new("node")
        .arg(&script)
        .arg(&dir)
        .arg(spec)
        .output()
        .expect("node runs (./scripts/test installs npm, which brings it)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the parser's script failed: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let summary = lines
        .iter()
        .find_map(|l| l.strip_prefix("errors="))
        .unwrap_or_else(|| panic!("no summary line from the parser's script:\n{text}"));
    let mut parts = summary.split(' ');
    let errors: usize = parts
        .next()
        .and_then(|n| n.parse().ok())
        .expect("errors=<n>");
    let warnings: usize = parts
        .next()
        .and_then(|w| w.strip_prefix("warnings="))
        .and_then(|n| n.parse().ok())
        .expect("warnings=<n>");
    let document = parts.next() == Some("document=yes");
    (errors, warnings, document, lines)
}

#[test]
fn the_official_parser_accepts_the_spec_without_a_warning() {
    let spec = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/asyncapi.yaml");
    let (errors, warnings, document, lines) = parse(&spec);
    for l in &lines {
        println!("{l}");
    }
    let said: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("error ") || l.starts_with("warning "))
        .collect();
    assert!(
        errors == 0 && warnings == 0 && document,
        "@asyncapi/parser: {errors} error(s), {warnings} warning(s) in docs/asyncapi.yaml:\n{}",
        said.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The check can fail: the messageId reused by two operations (issue 41's first finding)
/// is an error the parser reports and the test would see.
#[test]
fn the_parser_check_sees_a_reused_message_id() {
    let spec = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/asyncapi.yaml"),
    )
    .expect("docs/asyncapi.yaml");
    let broken = spec.replacen(
        "$ref: \"#/components/messages/replayedEvent\"",
        "$ref: \"#/components/messages/boardEvent\"",
        1,
    );
    assert_ne!(broken, spec, "the reply channel names replayedEvent");
    let dir = std::env::temp_dir().join(format!("hallclock-asyncapi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join("asyncapi.yaml");
    std::fs::write(&path, broken).expect("write the broken spec");
    let (errors, _, document, lines) = parse(&path);
    assert!(
        errors > 0 && !document,
        "a reused messageId passed:\n{}",
        lines.join("\n")
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("asyncapi2-message-messageId-uniqueness")),
        "{}",
        lines.join("\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
