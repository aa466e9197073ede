//! docs/FIDE-COMPLIANCE.md names its proofs as `file::test_name`: each must be a real
//! test in that file, and each clause row must name one or say why none can exist. A
//! renamed or deleted test, or a row left without proof, fails here rather than rotting
//! in the document.

use std::path::Path;

/// Why a row may name no test: the clause is the clock hardware's, or not software at all.
const REASONS: [&str; 2] = ["hardware's", "not the software's"];

/// Every `file::name` in `text` (inside backticks), in order.
fn named_tests(text: &str) -> Vec<(String, String)> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|quoted| {
            let (file, name) = quoted.split_once("::")?;
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            (file.ends_with(".rs") && is_name).then(|| (file.to_string(), name.to_string()))
        })
        .collect()
}

/// What is wrong with the matrix in `doc`, read against the repository at `root`.
fn problems(doc: &str, root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (file, name) in named_tests(doc) {
        match std::fs::read_to_string(root.join(&file)) {
            Err(e) => out.push(format!("`{file}::{name}`: cannot read {file}: {e}")),
            Ok(source) if !source.contains(&format!("fn {name}(")) => {
                out.push(format!("`{file}::{name}`: no `fn {name}(` in {file}"))
            }
            Ok(_) => {}
        }
    }
    for row in doc.lines().filter(|l| l.starts_with("| ")) {
        let clause = row
            .trim_start_matches("| ")
            .split(" |")
            .next()
            .unwrap_or("");
        if clause == "Clause" {
            continue;
        }
        let last = row.trim_end_matches('|').rsplit('|').next().unwrap_or("");
        if named_tests(last).is_empty() && !REASONS.iter().any(|r| last.contains(r)) {
            out.push(format!(
                "row {clause}: names no test and gives no reason ({REASONS:?})"
            ));
        }
    }
    out
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_test_named_in_the_fide_matrix_exists() {
    let doc = std::fs::read_to_string(root().join("docs/FIDE-COMPLIANCE.md"))
        .expect("docs/FIDE-COMPLIANCE.md exists");
    let found = problems(&doc, root());
    assert!(
        found.is_empty(),
        "docs/FIDE-COMPLIANCE.md:\n{}",
        found.join("\n")
    );
    assert!(named_tests(&doc).len() > 30, "the matrix names its tests");
    // One row per clause retrieved (ANCHORS.md, "FIDE clock standards").
    for clause in [
        "(a)", "(b)", "(c)", "(d)", "(e)", "(f)", "(g)", "(h)", "(i)", "(j)", "(k)", "(l)",
        "3.1.1", "3.1.2", "3.1.3", "3.1.4", "3.1.5", "3.1.6", "3.1.7", "§7",
    ] {
        assert!(
            doc.contains(&format!("\n| {clause} |")),
            "no row for {clause}"
        );
    }
}

/// The check can fail: a misspelt test, a missing file and a row with neither a test nor
/// a reason are each caught.
#[test]
fn the_fide_matrix_check_catches_a_wrong_name_a_missing_file_and_a_bare_row() {
    let doc = "| Clause | Requirement | What | Tests |\n\
               |---|---|---|---|\n\
               | (x) | r | w | `tests/fide_compliance.rs::fide_j_no_such_test` |\n\
               | (y) | r | w | `tests/no_such_file.rs::a_test` |\n\
               | (z) | r | w | — |\n\
               | (w) | r | w | — (hardware's) |\n\
               | (v) | r | w | `tests/fide_compliance_doc.rs::every_test_named_in_the_fide_matrix_exists` |\n";
    let found = problems(doc, root());
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].contains("fide_j_no_such_test"), "{}", found[0]);
    assert!(found[1].contains("no_such_file.rs"), "{}", found[1]);
    assert!(found[2].starts_with("row (z)"), "{}", found[2]);
}
