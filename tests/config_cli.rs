//! `hallclock check-config` and `hallclock print-config` through the binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hallclock-config-cli-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    /// Write `hallclock.toml` with `[hall]` pointing state_dir here, then `rest`.
    fn config(&self, rest: &str) -> PathBuf {
        let file = self.0.join("hallclock.toml");
        let text = format!(
            "[hall]\nid = \"hall-a\"\nstate_dir = {:?}\n{rest}",
            self.0.display().to_string()
        );
        std::fs::write(&file, text).unwrap();
        file
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The binary with no HALLCLOCK__ variables inherited, plus `env`.
fn hallclock(args: &[&str], config: Option<&Path>, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hallclock"));
    for (name, _) in std::env::vars_os() {
        if name
            .to_str()
            .is_some_and(|n| n.to_uppercase().starts_with("HALLCLOCK__"))
        {
            cmd.env_remove(name);
        }
    }
    cmd.args(args);
    if let Some(config) = config {
        cmd.arg("--config").arg(config);
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

const BOARDS: &str = "\
[[boards]]
id = \"board-001\"
port = \"/dev/null\"

[[boards]]
id = \"board-001\"
port = \"/dev/zero\"
white = \"right\"
";

#[test]
fn check_config_reports_every_error_with_its_key_and_exits_78() {
    let dir = TempDir::new();
    let file = dir.config(&format!(
        "[broker]\nprot = 1884\n[defaults]\ntime_control = \"40/5400+30:\"\n{BOARDS}"
    ));
    let out = hallclock(&["check-config"], Some(&file), &[]);
    assert_eq!(out.status.code(), Some(78), "{}", stdout(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(&"error: broker.prot: unknown key in [broker]; did you mean 'port'?"),
        "{text}"
    );
    assert!(
        lines.contains(&"error: boards[1].id: duplicate board id 'board-001' (also boards[0].id)"),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("error: defaults.time_control: time control '40/5400+30:': expected a period after ':' at column 12")),
        "{text}"
    );
    assert_eq!(
        lines.last().copied(),
        Some(format!("{}: invalid, 3 errors, 0 warnings", file.display()).as_str())
    );
}

#[test]
fn check_config_passes_with_warnings() {
    let dir = TempDir::new();
    let file =
        dir.config("[[boards]]\nid = \"board-001\"\nport = \"/dev/serial/by-id/not-plugged-in\"\n");
    let out = hallclock(&["check-config"], Some(&file), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "warning: boards[0].port: /dev/serial/by-id/not-plugged-in does not exist (yet); the board may be unplugged, the daemon keeps trying to open it\n\
             {}: valid, 1 warning; hall 'hall-a', 1 board\n",
            file.display()
        )
    );
}

#[test]
fn check_config_of_the_shipped_file() {
    let dir = TempDir::new();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/hallclock.toml");
    let state = dir.path().display().to_string();
    let out = hallclock(
        &["check-config"],
        Some(&shipped),
        &[("HALLCLOCK__HALL__STATE_DIR", &state)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.starts_with("warning: boards[0].port: "), "{text}");
    assert!(
        text.ends_with("(with 1 environment override): valid, 1 warning; hall 'hall-a', 1 board\n"),
        "{text}"
    );
}

#[test]
fn environment_overrides_reach_check_config() {
    let dir = TempDir::new();
    let file = dir.config("[[boards]]\nid = \"b1\"\nport = \"/dev/null\"\n");
    let out = hallclock(
        &["check-config"],
        Some(&file),
        &[("HALLCLOCK__BROKER__PORT", "0")],
    );
    assert_eq!(out.status.code(), Some(78));
    assert!(
        stdout(&out).starts_with("error: broker.port: 0 is not a port"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_toml_syntax_error_names_line_and_column() {
    let dir = TempDir::new();
    let file = dir.path().join("broken.toml");
    std::fs::write(&file, "[broker]\nhost = localhost\n").unwrap();
    let out = hallclock(&["check-config"], Some(&file), &[]);
    assert_eq!(out.status.code(), Some(78));
    let text = stdout(&out);
    assert!(
        text.starts_with("error: TOML parse error at line 2, column 8: "),
        "{text}"
    );
}

#[test]
fn a_missing_file_is_a_configuration_error() {
    let dir = TempDir::new();
    let missing = dir.path().join("nope.toml");
    let out = hallclock(&["check-config"], Some(&missing), &[]);
    assert_eq!(out.status.code(), Some(78));
    assert!(
        stdout(&out).starts_with(&format!("error: cannot read {}: ", missing.display())),
        "{}",
        stdout(&out)
    );
}

#[test]
fn check_config_reads_etc_hallclock_by_default() {
    let out = hallclock(&["check-config"], None, &[]);
    let text = stdout(&out);
    assert!(text.contains("/etc/hallclock/hallclock.toml"), "{text}");
    if !Path::new("/etc/hallclock/hallclock.toml").exists() {
        assert_eq!(out.status.code(), Some(78));
    }
}

#[test]
fn print_config_applies_the_environment_and_masks_the_password() {
    let dir = TempDir::new();
    let file = dir.config(
        "[broker]\nusername = \"clock\"\npassword = \"in-the-file\"\n[[boards]]\nid = \"b1\"\nport = \"/dev/null\"\n",
    );
    let out = hallclock(
        &["print-config"],
        Some(&file),
        &[
            ("HALLCLOCK__BROKER__PORT", "1884"),
            ("HALLCLOCK__BROKER__PASSWORD", "hunter2"),
            ("HALLCLOCK__HALL__ID", "hall-b"),
            ("HALLCLOCK__HALL__NODE", "server-2"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        "id = \"hall-b\"",
        "port = 1884",
        "node = \"server-2\"",
        "client_id = \"hallclock-hall-b-server-2\"",
        "username = \"clock\"",
        "password = \"********\"",
        "time_control = \"40/5400+30:1800+30\"",
        "default_time = \"1:00:00\"",
        "[defaults.clock]",
        "[[boards]]",
        "white = \"left\"",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
    }
    assert!(!text.contains("hunter2") && !text.contains("in-the-file"));
    assert_eq!(stderr(&out), "");
}

#[test]
fn print_config_output_is_a_valid_configuration() {
    let dir = TempDir::new();
    let file = dir.config("[[boards]]\nid = \"b1\"\nport = \"/dev/null\"\nwhite = \"right\"\n");
    let first = hallclock(&["print-config"], Some(&file), &[]);
    assert_eq!(first.status.code(), Some(0));
    let again = dir.path().join("again.toml");
    std::fs::write(&again, &first.stdout).unwrap();
    let second = hallclock(&["print-config"], Some(&again), &[]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert_eq!(stdout(&first), stdout(&second));
}

#[test]
fn print_config_of_an_invalid_file_prints_no_configuration() {
    let dir = TempDir::new();
    let file = dir.config(BOARDS);
    let out = hallclock(&["print-config"], Some(&file), &[]);
    assert_eq!(out.status.code(), Some(78));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("error: boards[1].id: duplicate board id 'board-001'"),
        "{}",
        stderr(&out)
    );
}

/// The code block after `marker` in docs/OPERATIONS.md.
fn doc_block(doc: &str, marker: &str) -> String {
    let after = doc
        .split_once(marker)
        .unwrap_or_else(|| panic!("{marker} not in docs/OPERATIONS.md"))
        .1;
    let body = after.split_once("```").unwrap().1;
    let body = body.split_once('\n').unwrap().1;
    body.split_once("```").unwrap().0.to_string()
}

#[test]
fn the_check_config_example_in_operations_md_is_real() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/OPERATIONS.md"))
            .unwrap();
    let dir = TempDir::new();
    let file = dir.path().join("hallclock.toml");
    std::fs::write(&file, doc_block(&doc, "<!-- check-config sample file -->")).unwrap();
    let out = hallclock(&["check-config"], Some(&file), &[]);
    assert_eq!(out.status.code(), Some(78));
    // Whether /var/lib/hallclock exists depends on the machine.
    let machine = |l: &&str| !l.starts_with("warning: hall.state_dir:");
    let shown = doc_block(&doc, "<!-- check-config sample output -->");
    let expected: Vec<&str> = shown
        .lines()
        .skip(1) // the command line
        .take_while(|l| !l.starts_with('$'))
        .filter(machine)
        .collect();
    let real = stdout(&out).replace(&file.display().to_string(), "/etc/hallclock/hallclock.toml");
    let real: Vec<&str> = real.lines().filter(machine).collect();
    assert_eq!(real, expected);
}

#[test]
fn the_print_config_example_in_operations_md_is_real() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/OPERATIONS.md")).unwrap();
    let shown = doc_block(&doc, "<!-- print-config sample output -->");
    let out = hallclock(
        &["print-config"],
        Some(&root.join("config/hallclock.toml")),
        &[
            // The default node is the host name: named, so the example is the same anywhere.
            ("HALLCLOCK__HALL__NODE", "hall-server-1"),
            ("HALLCLOCK__BROKER__USERNAME", "clock"),
            ("HALLCLOCK__BROKER__PASSWORD", "s3cret"),
        ],
    );
    // The shipped state_dir is /var/lib/hallclock: on a machine where it exists and is
    // not ours, the configuration is (rightly) invalid here.
    if out.status.code() == Some(78) {
        assert!(stderr(&out).contains("hall.state_dir"), "{}", stderr(&out));
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let expected = shown.split_once('\n').unwrap().1;
    assert_eq!(stdout(&out), expected);
}

/// Issue 36: a state directory on a file system without room for a day's journal is
/// warned about (a real small file system: a tmpfs, mounted here; skipped without root).
#[test]
fn check_config_warns_when_the_state_dir_has_no_room_for_a_days_journal() {
    let dir = TempDir::new();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
        .arg(&state)
        .output();
    if !mounted.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: cannot mount a tmpfs (run as root): {mounted:?}");
        return;
    }
    let boards: String = (1..=10)
        .map(|n| format!("[[boards]]\nid = \"board-{n:03}\"\nport = \"/dev/serial/by-id/b{n}\"\n"))
        .collect();
    let file = dir.path().join("small.toml");
    std::fs::write(
        &file,
        format!(
            "[hall]\nid = \"hall-a\"\nstate_dir = {:?}\n{boards}",
            state.display().to_string()
        ),
    )
    .unwrap();
    let out = hallclock(&["check-config"], Some(&file), &[]);
    let _ = Command::new("umount").arg("-l").arg(&state).status();
    let text = stdout(&out);
    let warning = text
        .lines()
        .find(|l| l.starts_with("warning: hall.state_dir:") && l.contains("a day's journal"))
        .unwrap_or_else(|| panic!("no free-space warning:\n{text}{}", stderr(&out)));
    // 8 MiB free against 10 boards' day (18 MB) and a segment (17 MB): 35 MB.
    assert!(
        warning.contains("with 9 MB free") && warning.contains("10 board(s) may take up to 35 MB"),
        "{warning}"
    );
    assert_eq!(out.status.code(), Some(0), "a warning, not an error");

    // The same hall with room: no such warning.
    let roomy = dir.config(&boards);
    let out = hallclock(&["check-config"], Some(&roomy), &[]);
    assert!(
        !stdout(&out).contains("a day's journal"),
        "{}",
        stdout(&out)
    );
}
