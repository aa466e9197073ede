//! The Debian package and what it installs: the systemd unit, the udev rules, the Mosquitto
//! example and the maintainer scripts (issue 7). The package is built from the debug binary
//! with `cargo deb --no-build`, so this costs seconds, not a release build.
//!
//! Needs `cargo-deb` (./scripts/test installs it), `dpkg-deb` and Mosquitto with its clients
//! (./scripts/test installs them too); a missing tool fails the test with the command that
//! provides it. `systemd-analyze` is optional: without it the verify test says it skipped.

use std::collections::BTreeMap;
use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const UNIT: &str = "packaging/hallclock.service";
const RULES: &str = "packaging/99-hallclock.rules";
const MOSQUITTO_CONF: &str = "packaging/mosquitto/hallclock.conf";
const MOSQUITTO_ACL: &str = "packaging/mosquitto/acl";
const MOSQUITTO_BRIDGE: &str = "packaging/mosquitto/bridge.conf";
/// The cargo-deb this metadata was written against; ./scripts/test installs exactly this one.
const CARGO_DEB_VERSION: &str = "3.8.0";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

/// A fresh directory for one test; removed when dropped, kept if the test panics (to look at).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("hallclock-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn require(tool: &str, how: &str) {
    assert!(have(tool), "`{tool}` is not installed; {how}");
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(cmd: &mut Command) -> String {
    String::from_utf8(run(cmd).stdout).unwrap()
}

// ---------------------------------------------------------------- systemd unit

/// `[section] -> key -> every value`, in order (systemd keys such as DeviceAllow= repeat).
type Unit = BTreeMap<String, BTreeMap<String, Vec<String>>>;

fn parse_unit(text: &str) -> Unit {
    let mut unit = Unit::new();
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("not a key=value line: {line}"));
        assert!(!section.is_empty(), "key outside a section: {line}");
        unit.entry(section.clone())
            .or_default()
            .entry(key.trim().to_string())
            .or_default()
            .push(value.trim().to_string());
    }
    unit
}

fn values<'a>(unit: &'a Unit, section: &str, key: &str) -> Vec<&'a str> {
    unit.get(section)
        .and_then(|s| s.get(key))
        .map(|v| v.iter().map(String::as_str).collect())
        .unwrap_or_default()
}

/// Space-separated list values of a key, over all its lines.
fn words<'a>(unit: &'a Unit, section: &str, key: &str) -> Vec<&'a str> {
    values(unit, section, key)
        .into_iter()
        .flat_map(str::split_whitespace)
        .collect()
}

fn assert_unit_requirements(unit: &Unit) {
    let one = |key: &str, want: &str| {
        assert_eq!(values(unit, "Service", key), [want], "[Service] {key}=");
    };
    one("Type", "notify");
    one("NotifyAccess", "main");
    one("WatchdogSec", "30s");
    one("Restart", "on-failure");
    // An invalid configuration (exit 78) is not restarted in a loop (OPERATIONS.md).
    one("RestartPreventExitStatus", "78");
    one("User", "hallclock");
    one("SupplementaryGroups", "dialout");
    one("StateDirectory", "hallclock");
    one("ConfigurationDirectory", "hallclock");
    one(
        "ExecStartPre",
        "/usr/bin/hallclock check-config --config /etc/hallclock/hallclock.toml",
    );
    one(
        "ExecStart",
        "/usr/bin/hallclock run --config /etc/hallclock/hallclock.toml",
    );
    one("ExecReload", "/bin/kill -HUP $MAINPID");
    one("KillSignal", "SIGTERM");
    one("ProtectSystem", "strict");
    one("ProtectHome", "yes");
    one("PrivateTmp", "yes");
    one("NoNewPrivileges", "yes");
    for key in [
        "ProtectKernelTunables",
        "ProtectKernelModules",
        "ProtectControlGroups",
        "RestrictNamespaces",
        "LockPersonality",
        "MemoryDenyWriteExecute",
        "RestrictRealtime",
    ] {
        one(key, "yes");
    }
    one("SystemCallArchitectures", "native");
    one("DevicePolicy", "closed");
    one("UMask", "0077");
    // An empty CapabilityBoundingSet= means "no capabilities"; a missing one means "all".
    assert_eq!(values(unit, "Service", "CapabilityBoundingSet"), [""]);
    assert_eq!(
        words(unit, "Service", "RestrictAddressFamilies"),
        ["AF_UNIX", "AF_INET", "AF_INET6"]
    );
    let devices = values(unit, "Service", "DeviceAllow");
    for dev in ["char-ttyACM rw", "char-ttyUSB rw", "char-rfcomm rw"] {
        assert!(
            devices.contains(&dev),
            "DeviceAllow={dev} missing: {devices:?}"
        );
    }
    // Wants=, not Requires=: the daemon must start without a local broker.
    for target in ["network-online.target", "mosquitto.service"] {
        assert!(
            words(unit, "Unit", "Wants").contains(&target),
            "Wants={target}"
        );
        assert!(
            words(unit, "Unit", "After").contains(&target),
            "After={target}"
        );
    }
    assert!(
        values(unit, "Unit", "Requires").is_empty(),
        "no hard dependency"
    );
    // Issue 36: after the clock was set forward to its last known time; never after
    // time-sync.target, which a hall without internet may never reach.
    assert!(
        words(unit, "Unit", "After").contains(&"time-set.target"),
        "After=time-set.target"
    );
    for key in ["Wants", "After", "Requires", "Requisite", "BindsTo"] {
        assert!(
            !words(unit, "Unit", key).contains(&"time-sync.target"),
            "{key}=time-sync.target: an offline hall would never start"
        );
    }
    // The char-* device groups only resolve if their drivers are loaded before we start.
    for module in ["cdc_acm", "usbserial", "rfcomm"] {
        let unit_name = format!("modprobe@{module}.service");
        assert!(words(unit, "Unit", "Wants").contains(&unit_name.as_str()));
        assert!(words(unit, "Unit", "After").contains(&unit_name.as_str()));
    }
    assert_eq!(values(unit, "Install", "WantedBy"), ["multi-user.target"]);
}

#[test]
fn unit_file_has_the_required_keys() {
    assert_unit_requirements(&parse_unit(&read(UNIT)));
}

#[test]
fn unit_check_notices_a_weakened_unit() {
    // The checker itself must be able to fail: drop one hardening line and expect a panic.
    let weakened = read(UNIT).replace("DevicePolicy=closed\n", "");
    let unit = parse_unit(&weakened);
    let caught = std::panic::catch_unwind(|| assert_unit_requirements(&unit));
    assert!(caught.is_err(), "a unit without DevicePolicy= passed");
    // And the ordering on the clock, and the exit code that is never restarted (issue 36).
    for (from, to) in [
        ("After=time-set.target\n", "After=time-sync.target\n"),
        ("After=time-set.target\n", ""),
        ("RestartPreventExitStatus=78\n", ""),
    ] {
        let unit = parse_unit(&read(UNIT).replace(from, to));
        let caught = std::panic::catch_unwind(|| assert_unit_requirements(&unit));
        assert!(caught.is_err(), "a unit with {from:?} as {to:?} passed");
    }
}

#[test]
fn unit_file_passes_systemd_analyze_verify() {
    if !have("systemd-analyze") {
        eprintln!("SKIPPED: systemd-analyze is not installed, the unit file was not verified");
        return;
    }
    // verify insists that ExecStart= binaries exist; point them at the one cargo just built.
    // Everything else is the shipped file, unchanged.
    let scratch = Scratch::new("verify");
    let text = read(UNIT).replace("/usr/bin/hallclock", env!("CARGO_BIN_EXE_hallclock"));
    let path = scratch.0.join("hallclock.service");
    fs::write(&path, text).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .expect("running systemd-analyze");
    // verify exits 0 after "Unknown key name ..., ignoring", so any message is a failure.
    let messages = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && messages.trim().is_empty(),
        "systemd-analyze verify {UNIT}:\n{messages}"
    );
}

// ---------------------------------------------------------------- udev rules

#[test]
fn udev_rules_name_dgt_boards_and_keep_modemmanager_away() {
    let text = read(RULES);
    let rules: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let matching = |vendor: &str, product: &str| -> Vec<&str> {
        rules
            .iter()
            .copied()
            .filter(|r| {
                r.contains(&format!("ATTRS{{idVendor}}==\"{vendor}\""))
                    && r.contains(&format!("ATTRS{{idProduct}}==\"{product}\""))
            })
            .collect()
    };
    for (vendor, product, kernel) in [
        ("04d8", "000a", "ttyACM"),
        ("045b", "8111", "ttyACM"),
        ("0403", "6001", "ttyUSB"),
    ] {
        let found = matching(vendor, product);
        assert!(!found.is_empty(), "no rule for {vendor}:{product}");
        for rule in found {
            assert!(rule.contains(&format!("KERNEL==\"{kernel}")), "{rule}");
            assert!(rule.ends_with("GOTO=\"hallclock_dgt\""), "{rule}");
        }
    }
    // FTDI's id is in countless unrelated cables: never claim it on the id alone.
    for rule in matching("0403", "6001") {
        assert!(
            rule.contains("*DGT*"),
            "FTDI rule without a DGT string: {rule}"
        );
    }
    let dgt_block: Vec<&str> = rules
        .iter()
        .copied()
        .skip_while(|r| *r != "LABEL=\"hallclock_dgt\"")
        .collect();
    for needed in [
        "GROUP=\"dialout\", MODE=\"0660\"",
        "ENV{ID_MM_DEVICE_IGNORE}=\"1\"",
        "ENV{ID_PATH}==\"?*\", SYMLINK+=\"dgt/by-path/$env{ID_PATH}\"",
        "ENV{ID_SERIAL_SHORT}==\"?*\", SYMLINK+=\"dgt/$env{ID_SERIAL_SHORT}\"",
    ] {
        assert!(
            dgt_block.contains(&needed),
            "missing after the DGT label: {needed}"
        );
    }
    // Every GOTO lands on a label, or udev skips the rest of the file silently.
    for rule in &rules {
        if let Some(label) = rule.split("GOTO=\"").nth(1) {
            let label = label.trim_end_matches('"');
            assert!(
                rules.contains(&format!("LABEL=\"{label}\"").as_str()),
                "GOTO to a missing label: {rule}"
            );
        }
    }
}

// ---------------------------------------------------------------- Debian package

/// The .deb built from the binary `cargo test` just built, once per test run: cargo-deb
/// strips into one fixed directory under target/, so two builds at once would race.
fn deb() -> &'static Path {
    static DEB: OnceLock<PathBuf> = OnceLock::new();
    DEB.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("packaging-deb");
        let _ = fs::remove_dir_all(&out);
        fs::create_dir_all(&out).unwrap();
        build_deb(&out)
    })
}

fn build_deb(out_dir: &Path) -> PathBuf {
    require(
        "dpkg-deb",
        "it comes with dpkg (Debian/Ubuntu: `apt-get install dpkg`); this test installs nothing",
    );
    let version = Command::new("cargo").args(["deb", "--version"]).output();
    let version = match version {
        Ok(v) if v.status.success() => String::from_utf8_lossy(&v.stdout).trim().to_string(),
        _ => panic!(
            "cargo-deb is not installed: run ./scripts/test, or \
             `cargo install cargo-deb --version {CARGO_DEB_VERSION} --locked`"
        ),
    };
    if version != format!("cargo-deb {CARGO_DEB_VERSION}") {
        eprintln!("note: {version}, the metadata was checked with {CARGO_DEB_VERSION}");
    }
    assert!(
        repo().join("config/hallclock.toml").is_file(),
        "config/hallclock.toml (the commented default configuration) is missing; the package \
         ships it as /etc/hallclock/hallclock.toml"
    );
    // The binary under test sits in <target>/<profile dir>/; package that one, never rebuild.
    let exe = Path::new(env!("CARGO_BIN_EXE_hallclock"));
    let profile = match exe
        .parent()
        .and_then(Path::file_name)
        .and_then(|p| p.to_str())
    {
        Some("debug") | None => "dev".to_string(),
        Some(dir) => dir.to_string(),
    };
    run(Command::new("cargo")
        .current_dir(repo())
        .args(["deb", "--no-build", "--fast", "--locked", "--quiet"])
        .args(["--profile", &profile])
        .arg("--output")
        .arg(out_dir));
    let debs: Vec<PathBuf> = fs::read_dir(out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    assert_eq!(debs.len(), 1, "one .deb expected in {out_dir:?}: {debs:?}");
    debs.into_iter().next().unwrap()
}

#[test]
fn deb_installs_the_daemon_its_unit_rules_config_and_examples() {
    let scratch = Scratch::new("deb");
    let deb = deb();

    // -c: the file list, as "mode owner size date time path".
    let listing = stdout(Command::new("dpkg-deb").arg("-c").arg(deb));
    let entry = |path: &str| -> &str {
        listing
            .lines()
            .find(|l| l.ends_with(&format!(" .{path}")))
            .unwrap_or_else(|| panic!("{path} is not in the package:\n{listing}"))
    };
    assert!(entry("/usr/bin/hallclock").starts_with("-rwxr-xr-x 0/0 "));
    // cargo-deb installs units to /usr/lib/systemd/system, which is /lib/systemd/system on
    // every merged-/usr system (Debian 12, Raspberry Pi OS bookworm and later).
    for path in [
        "/usr/lib/systemd/system/hallclock.service",
        "/lib/udev/rules.d/99-hallclock.rules",
        "/etc/hallclock/hallclock.toml",
        "/usr/share/doc/hallclock/examples/mosquitto/hallclock.conf",
        "/usr/share/doc/hallclock/examples/mosquitto/acl",
        "/usr/share/doc/hallclock/examples/mosquitto/bridge.conf",
        "/usr/share/doc/hallclock/examples/chrony/hallclock-hall.conf",
        "/usr/share/doc/hallclock/examples/chrony/hallclock-peer.conf",
        "/usr/share/doc/hallclock/copyright",
    ] {
        assert!(entry(path).starts_with("-rw-r--r-- 0/0 "), "{path}");
    }

    // -I: the control file.
    let control = stdout(Command::new("dpkg-deb").arg("-I").arg(deb));
    let depends = control
        .lines()
        .find_map(|l| l.trim().strip_prefix("Depends: "))
        .expect("Depends:");
    assert!(depends.split(", ").any(|d| d == "adduser"), "{depends}");
    assert!(control.contains(" Package: hallclock\n"));

    // -e: the control archive. A conffile survives upgrades with the operator's edits.
    let control_dir = scratch.0.join("DEBIAN");
    run(Command::new("dpkg-deb")
        .arg("-e")
        .arg(deb)
        .arg(&control_dir));
    let conffiles = fs::read_to_string(control_dir.join("conffiles")).expect("conffiles");
    assert!(
        conffiles
            .lines()
            .any(|l| l == "/etc/hallclock/hallclock.toml"),
        "{conffiles}"
    );
    for script in ["postinst", "prerm", "postrm"] {
        let path = control_dir.join(script);
        let text = fs::read_to_string(&path).unwrap_or_else(|_| panic!("no {script}"));
        assert!(text.starts_with("#!/bin/sh\n"), "{script}");
        assert!(
            text.lines().any(|l| l == "set -e"),
            "{script} must be set -e"
        );
        assert!(!text.contains("#DEBHELPER#"), "{script}: unexpanded token");
        run(Command::new("sh").arg("-n").arg(&path));
    }
    let postinst = fs::read_to_string(control_dir.join("postinst")).unwrap();
    assert!(postinst.contains("adduser --system --group"), "{postinst}");
    // The closing note tells the operator to enable the unit; only code counts below.
    let (code, note) = postinst
        .split_once("cat <<'MSG'")
        .expect("the next-steps note");
    let code = format!(
        "{code}{}",
        note.split_once("\nMSG\n").expect("end of note").1
    );
    assert!(postinst.contains("adduser --quiet hallclock dialout"));
    assert!(postinst.contains("udevadm control --reload-rules"));
    // Not started or enabled on install: nothing may start the unit from the postinst.
    for forbidden in [
        "deb-systemd-invoke start",
        "deb-systemd-invoke restart",
        "deb-systemd-invoke try-restart",
        "systemctl start",
        "systemctl enable",
    ] {
        assert!(!code.contains(forbidden), "postinst runs `{forbidden}`");
    }
    let prerm = fs::read_to_string(control_dir.join("prerm")).unwrap();
    assert!(prerm.contains("deb-systemd-invoke stop hallclock.service"));

    // -x: the files themselves are the ones in the repository.
    let root = scratch.0.join("root");
    run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(&root));
    let shipped = |path: &str| fs::read_to_string(root.join(path)).unwrap();
    assert_eq!(
        shipped("usr/lib/systemd/system/hallclock.service"),
        read(UNIT)
    );
    assert_unit_requirements(&parse_unit(&shipped(
        "usr/lib/systemd/system/hallclock.service",
    )));
    assert_eq!(shipped("lib/udev/rules.d/99-hallclock.rules"), read(RULES));
    assert_eq!(
        shipped("etc/hallclock/hallclock.toml"),
        read("config/hallclock.toml")
    );
    // The packaged binary runs (cargo-deb stripped it; it must still be our program).
    let help = stdout(Command::new(root.join("usr/bin/hallclock")).arg("--help"));
    assert!(help.contains("hallclock"), "{help}");
}

#[test]
fn postinst_creates_the_user_idempotently_and_starts_nothing() {
    // Run the real postinst against stub commands that only record how they were called, so
    // the test needs no root and changes nothing on this machine.
    let scratch = Scratch::new("postinst");
    let deb = deb();
    let control_dir = scratch.0.join("DEBIAN");
    run(Command::new("dpkg-deb")
        .arg("-e")
        .arg(deb)
        .arg(&control_dir));
    let bin = scratch.0.join("stubs");
    fs::create_dir(&bin).unwrap();
    let log = scratch.0.join("calls.log");
    for tool in [
        "adduser",
        "udevadm",
        "systemctl",
        "deb-systemd-helper",
        "deb-systemd-invoke",
    ] {
        // deb-systemd-helper says the unit was never enabled or installed, as on a fresh system.
        let answer = if tool == "deb-systemd-helper" {
            "case \" $* \" in *\" was-enabled \"*|*\" debian-installed \"*) exit 1;; esac\n"
        } else {
            ""
        };
        let body = format!(
            "#!/bin/sh\necho \"{tool} $*\" >> '{}'\n{answer}exit 0\n",
            log.display()
        );
        let path = bin.join(tool);
        fs::write(&path, body).unwrap();
        run(Command::new("chmod").arg("755").arg(&path));
    }
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let postinst = control_dir.join("postinst");
    let install = stdout(
        Command::new("sh")
            .arg(&postinst)
            .arg("configure")
            .env("PATH", &path),
    );
    let upgrade = stdout(
        Command::new("sh")
            .arg(&postinst)
            .args(["configure", "0.1.0-1"])
            .env("PATH", &path),
    );
    let calls = fs::read_to_string(&log).unwrap();
    let adduser: Vec<&str> = calls.lines().filter(|l| l.starts_with("adduser")).collect();
    assert_eq!(adduser.len(), 4, "two adduser calls per run:\n{calls}");
    assert!(adduser[0].contains("--system") && adduser[0].ends_with(" hallclock"));
    assert!(adduser[1].ends_with("hallclock dialout"));
    assert_eq!(
        adduser[0..2],
        adduser[2..4],
        "a rerun does the same, idempotent calls"
    );
    for line in calls.lines() {
        assert!(
            !(line.contains(" start") || line.contains(" enable") || line.contains("restart")),
            "postinst started or enabled the service: {line}"
        );
    }
    // The "next steps" note is for a first install only.
    assert!(
        install.contains("systemctl enable --now hallclock"),
        "{install}"
    );
    assert!(!upgrade.contains("systemctl enable"), "{upgrade}");
}

// ---------------------------------------------------------------- Mosquitto example

struct Broker(Child);

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts Mosquitto on the shipped example config and ACL, with only its listener port and
/// file locations changed (and `extra` appended), in `dir`, listening on `port`.
/// Accounts (password = user name + "-pw", the daemon's "daemon-pw"): hallclock-hall-a,
/// arbiter-anna, viewer-screen-1, stranger.
fn example_broker(dir: &Path, port: u16, extra: &str) -> Broker {
    fs::create_dir_all(dir).unwrap();
    let conf = read(MOSQUITTO_CONF);
    let passwd = dir.join("passwd");
    let acl = dir.join("acl");
    let mut replaced = 0;
    let mut conf: String = conf
        .lines()
        .map(|line| {
            let new = match line {
                "listener 1883" => format!("listener {port} 127.0.0.1"),
                "password_file /etc/mosquitto/hallclock.passwd" => {
                    format!("password_file {}", passwd.display())
                }
                "acl_file /etc/mosquitto/hallclock.acl" => format!("acl_file {}", acl.display()),
                _ => return format!("{line}\n"),
            };
            replaced += 1;
            format!("{new}\n")
        })
        .collect();
    assert_eq!(
        replaced, 3,
        "the example no longer has the three lines this test adapts"
    );
    // As root, Mosquitto drops to the `mosquitto` user, which could not read this directory.
    if stdout(Command::new("id").arg("-u")).trim() == "0" {
        conf.push_str("user root\n");
    }
    conf.push_str(extra);
    fs::write(dir.join("mosquitto.conf"), conf).unwrap();
    fs::copy(repo().join(MOSQUITTO_ACL), &acl).unwrap();
    fs::File::create(&passwd).unwrap();
    for (user, password) in [
        ("hallclock-hall-a", "daemon-pw"),
        ("arbiter-anna", "anna-pw"),
        ("viewer-screen-1", "viewer-pw"),
        ("stranger", "stranger-pw"),
    ] {
        run(Command::new("mosquitto_passwd")
            .arg("-b")
            .arg(&passwd)
            .args([user, password]));
    }
    let broker_log = fs::File::create(dir.join("broker.log")).unwrap();
    let broker = Broker(
        Command::new("mosquitto")
            .arg("-c")
            .arg(dir.join("mosquitto.conf"))
            .arg("-v")
            .stdout(broker_log.try_clone().unwrap())
            .stderr(broker_log)
            .spawn()
            .expect("starting mosquitto"),
    );
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "mosquitto did not come up with the example config:\n{}",
            fs::read_to_string(dir.join("broker.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    broker
}

#[test]
fn mosquitto_example_acl_lets_only_the_daemon_and_arbiters_write_and_gives_viewers_their_replays() {
    let how = "./scripts/test installs it (apt-get install mosquitto mosquitto-clients)";
    for tool in [
        "mosquitto",
        "mosquitto_passwd",
        "mosquitto_pub",
        "mosquitto_sub",
    ] {
        require(tool, how);
    }
    let scratch = Scratch::new("mosquitto");
    let dir = &scratch.0;
    let port = free_port();
    let _broker = example_broker(dir, port, "");
    let port_s = port.to_string();
    type Who = Option<(&'static str, &'static str)>;
    let auth = |user: Who| -> Vec<String> {
        user.map(|(u, p)| vec!["-u".into(), u.into(), "-P".into(), p.into()])
            .unwrap_or_default()
    };
    let daemon = Some(("hallclock-hall-a", "daemon-pw"));
    let arbiter = Some(("arbiter-anna", "anna-pw"));
    let viewer = Some(("viewer-screen-1", "viewer-pw"));
    let stranger = Some(("stranger", "stranger-pw"));
    let anonymous = None;
    // Retained QoS 1 publishes: a denied one still gets its PUBACK (MQTT 3.1.1 cannot say
    // no), so what counts is what a reader finds on the topic afterwards.
    let publish = |who: Who, topic: &str, payload: &str| {
        run(Command::new("mosquitto_pub")
            .args(["-p", &port_s, "-q", "1", "-r", "-t", topic, "-m", payload])
            .args(auth(who)));
    };
    let read_as = |who: Who, client_id: &str, topic: &str| -> String {
        let out = Command::new("mosquitto_sub")
            .args([
                "-p", &port_s, "-C", "1", "-W", "2", "-t", topic, "-i", client_id,
            ])
            .args(auth(who))
            .output()
            .expect("mosquitto_sub");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let retained =
        |who: Who, topic: &str| read_as(who, &format!("reader-{}", std::process::id()), topic);
    let mut denied = 0;

    // The daemon reads the broker's version (issue 36: 2.0.19-2.0.21 drop every client at a
    // clock step); an account without the line reads nothing there.
    let version = "$SYS/broker/version";
    assert!(
        retained(daemon, version).starts_with("mosquitto version "),
        "the daemon reads {version}"
    );
    assert_eq!(retained(viewer, version), "", "viewers do not read $SYS");

    let state = "hallclock/hall-a/board/b1/state";
    publish(daemon, state, "from-daemon");
    assert_eq!(retained(anonymous, state), "from-daemon", "anonymous reads");
    assert_eq!(retained(viewer, state), "from-daemon", "viewers read");
    assert_eq!(retained(arbiter, state), "from-daemon", "arbiters read");
    assert_eq!(
        retained(stranger, state),
        "",
        "an account without a block reads"
    );
    // Broadcast tools read the boards' PGN (docs/MQTT-API.md, docs/BROADCAST.md).
    let pgn = "hallclock/hall-a/board/b1/pgn";
    publish(daemon, pgn, "1. e4 *");
    assert_eq!(
        retained(anonymous, pgn),
        "1. e4 *",
        "anonymous reads the PGN"
    );
    assert_eq!(retained(viewer, pgn), "1. e4 *", "viewers read the PGN");
    assert_eq!(retained(arbiter, pgn), "1. e4 *", "arbiters read the PGN");
    for (who, name) in [
        (anonymous, "anonymous"),
        (viewer, "viewer"),
        (arbiter, "arbiter"),
    ] {
        publish(who, state, name);
        denied += 1;
        assert_eq!(
            retained(daemon, state),
            "from-daemon",
            "{name} overwrote state"
        );
    }

    for set in ["hallclock/hall-a/set", "hallclock/hall-a/board/b1/set"] {
        publish(arbiter, set, "arbiter-command");
        assert_eq!(
            retained(daemon, set),
            "arbiter-command",
            "arbiter may command"
        );
        for (who, name) in [
            (anonymous, "anonymous"),
            (viewer, "viewer"),
            (stranger, "stranger"),
        ] {
            publish(who, set, name);
            denied += 1;
            assert_eq!(
                retained(daemon, set),
                "arbiter-command",
                "{name} commanded {set}"
            );
        }
        // Commands carry sealed moves (`seal`): only the daemon reads them (I.3).
        for (who, name) in [
            (anonymous, "anonymous"),
            (viewer, "viewer"),
            (arbiter, "arbiter"),
        ] {
            assert_eq!(retained(who, set), "", "{name} read the commands on {set}");
        }
    }

    // Viewers ask for replays; spectators do not.
    let ask = "hallclock/hall-a/ask";
    publish(viewer, ask, "viewer-asks");
    assert_eq!(retained(daemon, ask), "viewer-asks", "a viewer may ask");
    publish(anonymous, ask, "anonymous-asks");
    denied += 1;
    assert_eq!(retained(daemon, ask), "viewer-asks", "anonymous asked");
    // The replay reaches the client that asked (by its client id), and nobody else.
    let reply = "hallclock/hall-a/reply/dash-7";
    publish(daemon, reply, "replayed");
    assert_eq!(
        read_as(viewer, "dash-7", reply),
        "replayed",
        "the asker reads its replay"
    );
    assert_eq!(
        read_as(viewer, "dash-8", reply),
        "",
        "another client read the replay"
    );
    assert_eq!(
        read_as(anonymous, "spectator-1", reply),
        "",
        "a spectator read the replay"
    );

    // Per hall: hall-a's accounts act on hall-a only.
    publish(arbiter, "hallclock/hall-b/set", "other hall");
    publish(daemon, "hallclock/hall-b/status", "other hall");
    denied += 2;
    for t in ["hallclock/hall-b/set", "hallclock/hall-b/status"] {
        assert_eq!(retained(daemon, t), "", "published on another hall: {t}");
    }
    // Nobody writes outside the hallclock tree, not even the daemon's account.
    publish(daemon, "elsewhere/x", "stray");
    denied += 1;
    assert_eq!(
        retained(daemon, "elsewhere/x"),
        "",
        "published outside hallclock/"
    );

    // The broker's own account of it: exactly the attempts above were refused, and the
    // ACL loaded without a warning.
    let log = fs::read_to_string(dir.join("broker.log")).unwrap_or_default();
    assert_eq!(
        log.matches("Denied PUBLISH").count(),
        denied,
        "refusals the ACL should have made:\n{log}"
    );
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("Warning") && !l.contains("should not be run as root"))
        .collect();
    assert!(
        warnings.is_empty(),
        "Mosquitto warned about the example: {warnings:?}"
    );
    assert!(
        read(MOSQUITTO_CONF).contains("\nmax_packet_size 1049600\n"),
        "the example limits packets to the daemon's 1 MiB commands"
    );
}

/// The shipped bridge example joins a hall server's Mosquitto to the central one: the
/// node's retained topics go out, commands come in, the bridge's state shows on the central
/// broker (and its last will says when the room is cut off), and what the node published
/// while the central broker was away arrives when it is back.
#[test]
fn mosquitto_example_bridge_carries_the_hall_both_ways_and_catches_up_after_a_cut() {
    let how = "./scripts/test installs it (apt-get install mosquitto mosquitto-clients)";
    for tool in [
        "mosquitto",
        "mosquitto_passwd",
        "mosquitto_pub",
        "mosquitto_sub",
    ] {
        require(tool, how);
    }
    let scratch = Scratch::new("bridge");
    let central_port = free_port();
    let central = example_broker(&scratch.0.join("central"), central_port, "");
    // The example as shipped, with only the central broker's address and the password set.
    let mut replaced = 0;
    let bridge: String = read(MOSQUITTO_BRIDGE)
        .lines()
        .map(|line| {
            let new = match line {
                "address central.hall.lan:1883" => format!("address 127.0.0.1:{central_port}"),
                "remote_password change-me" => "remote_password daemon-pw".to_string(),
                _ => return format!("{line}\n"),
            };
            replaced += 1;
            format!("{new}\n")
        })
        .collect();
    assert_eq!(
        replaced, 2,
        "the bridge example no longer has the lines this test adapts"
    );
    let local_port = free_port();
    let local = example_broker(&scratch.0.join("local"), local_port, &bridge);

    let auth = |who: (&str, &str)| ["-u".to_string(), who.0.into(), "-P".into(), who.1.into()];
    let daemon = ("hallclock-hall-a", "daemon-pw");
    let arbiter = ("arbiter-anna", "anna-pw");
    let publish = |port: u16, who: (&str, &str), topic: &str, payload: &str| {
        run(Command::new("mosquitto_pub")
            .args([
                "-p",
                &port.to_string(),
                "-q",
                "1",
                "-r",
                "-t",
                topic,
                "-m",
                payload,
            ])
            .args(auth(who)));
    };
    let read_on = |port: u16, who: (&str, &str), topic: &str| -> String {
        let out = Command::new("mosquitto_sub")
            .args(["-p", &port.to_string(), "-C", "1", "-W", "2", "-t", topic])
            .args(["-i", &format!("reader-{}", std::process::id())])
            .args(auth(who))
            .output()
            .expect("mosquitto_sub");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    // Waits until `topic` on the broker at `port` holds `want` (the bridge takes a moment).
    let until = |port: u16, topic: &str, want: &str, what: &str| {
        let started = Instant::now();
        loop {
            let got = read_on(port, daemon, topic);
            if got == want {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{what}: {topic} holds {got:?}, not {want:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let bridge_state = "hallclock/hall-a/bridge/room-2";
    until(
        central_port,
        bridge_state,
        "1",
        "the bridge announces itself on the central broker",
    );

    let state = "hallclock/hall-a/board/b7/state";
    publish(local_port, daemon, state, "move-1");
    until(
        central_port,
        state,
        "move-1",
        "the node's state reaches the central broker",
    );
    let command = "hallclock/hall-a/board/b7/set";
    publish(central_port, arbiter, command, "pause");
    until(
        local_port,
        command,
        "pause",
        "an arbiter's command reaches the node",
    );

    // The central broker goes away; the node plays on; its state arrives when it is back.
    drop(central);
    publish(local_port, daemon, state, "move-2-during-the-cut");
    let central = example_broker(&scratch.0.join("central"), central_port, "");
    until(
        central_port,
        state,
        "move-2-during-the-cut",
        "what the node published during the cut reaches the central broker after it",
    );
    until(central_port, bridge_state, "1", "the bridge is back");

    // The node's broker dies: its last will on the central broker says the room is cut off.
    drop(local);
    until(central_port, bridge_state, "0", "the bridge's last will");
    drop(central);
}

/// Whether the MQTT topic filter `filter` (`+`, `#`) matches `topic` (a parameter such as
/// `{board}` stands for one level).
fn filter_matches(filter: &str, topic: &str) -> bool {
    let mut t = topic.split('/');
    for f in filter.split('/') {
        match (f, t.next()) {
            ("#", _) => return true,
            ("+", Some(_)) => {}
            (f, Some(level)) if f == level => {}
            _ => return false,
        }
    }
    t.next().is_none()
}

/// asyncapi.yaml's channels as topics of hall-a, each `{…}` level as `x`.
fn api_channels() -> Vec<String> {
    let api = read("docs/asyncapi.yaml");
    let channels: Vec<String> = api
        .lines()
        .filter_map(|l| l.strip_prefix("  \"hallclock/"))
        .filter_map(|l| l.strip_suffix("\":"))
        .map(|l| {
            format!("hallclock/{l}")
                .replace("{hall}", "hall-a")
                .split('/')
                .map(|level| if level.starts_with('{') { "x" } else { level })
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    assert!(
        channels.len() >= 10,
        "asyncapi.yaml's channels not found: {channels:?}"
    );
    channels
}

/// Every reader the example ACL names (anonymous spectators, an arbiter, a viewer) may
/// read every topic the API publishes but the commands (only the daemon reads them: a
/// `seal` carries the sealed move) and the replies (each to its own client id): a topic
/// added to the API without its ACL lines reaches no integrator on a packaged broker.
#[test]
fn mosquitto_example_acl_lets_every_reader_read_every_published_topic_of_the_api() {
    let acl = read(MOSQUITTO_ACL);
    // The blocks: anonymous (before the first `user`), then one per `user`.
    let mut blocks: Vec<(String, Vec<String>)> = vec![("anonymous".into(), Vec::new())];
    for line in acl.lines().map(str::trim) {
        if let Some(user) = line.strip_prefix("user ") {
            blocks.push((user.to_string(), Vec::new()));
        } else if let Some(filter) = line
            .strip_prefix("topic read ")
            .or_else(|| line.strip_prefix("topic readwrite "))
            && let Some((_, filters)) = blocks.last_mut()
        {
            filters.push(filter.to_string());
        }
    }
    let readers = ["anonymous", "arbiter-anna", "viewer-screen-1"];
    let published: Vec<String> = api_channels()
        .into_iter()
        .filter(|c| {
            !["hallclock/hall-a/set", "hallclock/hall-a/ask"].contains(&c.as_str())
                && !c.ends_with("/set")
                && !c.starts_with("hallclock/hall-a/reply/")
        })
        .collect();
    assert!(
        published.iter().any(|c| c.ends_with("/announce")),
        "{published:?}"
    );
    let mut missing = Vec::new();
    for reader in readers {
        let filters = &blocks
            .iter()
            .find(|(who, _)| who == reader)
            .unwrap_or_else(|| panic!("no block for {reader} in the ACL"))
            .1;
        for channel in &published {
            if !filters.iter().any(|f| filter_matches(f, channel)) {
                missing.push(format!("{reader} cannot read {channel}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "packaging/mosquitto/acl:\n{}",
        missing.join("\n")
    );
}

/// Every topic of the API (docs/asyncapi.yaml's channels) crosses the example bridge, and
/// the bridge's own state does not (it would overwrite itself on the central broker): a
/// topic added to the API without a bridge line would silently stay on one hall server.
#[test]
fn mosquitto_example_bridge_carries_every_topic_of_the_api_but_its_own_state() {
    assert!(filter_matches("hallclock/hall-a/+", "hallclock/hall-a/set"));
    assert!(!filter_matches(
        "hallclock/hall-a/+",
        "hallclock/hall-a/bridge/x"
    ));
    assert!(filter_matches(
        "hallclock/hall-a/board/#",
        "hallclock/hall-a/board/b/state"
    ));
    let bridge = read(MOSQUITTO_BRIDGE);
    let filters: Vec<&str> = bridge
        .lines()
        .filter_map(|l| l.strip_prefix("topic "))
        .map(|rest| {
            let mut words = rest.split_whitespace();
            let filter = words.next().unwrap_or_default();
            assert_eq!(
                words.collect::<Vec<_>>(),
                ["both", "1"],
                "{filter}: both ways, QoS 1"
            );
            filter
        })
        .collect();
    assert!(!filters.is_empty(), "the bridge example has no topic lines");
    let channels = api_channels();
    // Every channel but the bridges' own state (`bridge/{node}`), which each broker
    // writes for itself and which is not carried (below).
    for channel in channels
        .iter()
        .filter(|c| !c.starts_with("hallclock/hall-a/bridge/"))
    {
        assert!(
            filters.iter().any(|f| filter_matches(f, channel)),
            "{channel} is in the API but not carried by packaging/mosquitto/bridge.conf"
        );
    }
    assert!(
        channels.iter().any(|c| c == "hallclock/hall-a/bridge/x"),
        "the bridges' state is in the API: {channels:?}"
    );
    assert!(
        !filters
            .iter()
            .any(|f| filter_matches(f, "hallclock/hall-a/bridge/room-2")),
        "the bridge would carry its own state"
    );
}
