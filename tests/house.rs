//! The house's shape (issue 15, docs/ARCHITECTURE.md): no two source files import each
//! other, so every arrow between rooms points one way. A file's imports are the
//! `crate::…` and `super::…` paths in its code outside its `mod tests`; a parent module and
//! its children may name each other (a `mod.rs` re-exports, a child uses its parent).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Source roots: the package's `src/` and every workspace crate's `crates/*/src/`.
fn roots() -> Vec<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![base.join("src")];
    if let Ok(entries) = std::fs::read_dir(base.join("crates")) {
        for e in entries.flatten() {
            let src = e.path().join("src");
            if src.is_dir() {
                roots.push(src);
            }
        }
    }
    roots
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `hall/board.rs` -> ["hall", "board"]; `hall/mod.rs` -> ["hall"]; `lib.rs` -> [].
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code without `#[cfg(test)] mod tests { … }` blocks and without comments.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            // Skip the item that follows, up to its closing brace at the same indent.
            let Some(item) = lines.next() else { break };
            let indent = item.len() - item.trim_start().len();
            if item.trim_end().ends_with('{') {
                for l in lines.by_ref() {
                    if l.len() - l.trim_start().len() == indent && l.trim() == "}" {
                        break;
                    }
                }
            }
            continue;
        }
        let code = line.split("//").next().unwrap_or("");
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Every path that starts with `crate::` or `super::`, with `{a, b::c}` groups expanded
/// one level, as segments relative to the crate root.
fn imported_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let starts_word = i == 0 || !ident(bytes[i - 1]);
        let (base, skip) = if starts_word && rest.starts_with(b"crate::") {
            (Vec::new(), "crate::".len())
        } else if starts_word && rest.starts_with(b"super::") {
            // `super` of module a::b is a, whether it lives in a/b.rs or a/b/mod.rs.
            let mut parent = module.to_vec();
            parent.pop();
            let mut j = i + "super::".len();
            while bytes[j..].starts_with(b"super::") {
                parent.pop();
                j += "super::".len();
            }
            (parent, j - i)
        } else {
            i += 1;
            continue;
        };
        let mut j = i + skip;
        let mut path = base;
        loop {
            let start = j;
            while j < bytes.len() && ident(bytes[j]) {
                j += 1;
            }
            if start == j {
                break;
            }
            path.push(code[start..j].to_string());
            if code[j..].starts_with("::") {
                j += 2;
                if code[j..].starts_with('{') {
                    let end = code[j..].find('}').map_or(bytes.len(), |e| j + e);
                    for item in code[j + 1..end].split(',') {
                        let first = item.trim().split("::").next().unwrap_or("").trim();
                        let first = first.split_whitespace().next().unwrap_or("");
                        if !first.is_empty() && first != "self" && first != "*" {
                            let mut p = path.clone();
                            p.push(first.to_string());
                            out.push(p);
                        }
                    }
                    j = end;
                    break;
                }
            } else {
                break;
            }
        }
        out.push(path);
        i = j.max(i + 1);
    }
    out
}

#[test]
fn no_two_source_files_import_each_other() {
    // (crate root, module path) -> the modules it imports.
    let mut modules: BTreeMap<(PathBuf, Vec<String>), BTreeSet<Vec<String>>> = BTreeMap::new();
    let mut sources = Vec::new();
    for root in roots() {
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        for f in files {
            let module = module_of(&root, &f);
            let text = std::fs::read_to_string(&f).unwrap();
            sources.push((root.clone(), module.clone(), code_of(&text)));
            modules.entry((root.clone(), module)).or_default();
        }
    }
    assert!(
        modules.len() > 50,
        "the walk found the sources: {}",
        modules.len()
    );
    for (root, module, code) in &sources {
        for path in imported_paths(module, code) {
            // The longest prefix that is a module file of this crate.
            let target = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains_key(&(root.clone(), p.clone())));
            if let Some(t) = target
                && &t != module
            {
                modules
                    .get_mut(&(root.clone(), module.clone()))
                    .unwrap()
                    .insert(t);
            }
        }
    }
    let related = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
    let mut circles = Vec::new();
    for ((root, a), deps) in &modules {
        for b in deps {
            if a < b
                && !related(a, b)
                && modules
                    .get(&(root.clone(), b.clone()))
                    .is_some_and(|d| d.contains(a))
            {
                circles.push(format!("{} <-> {}", a.join("::"), b.join("::")));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "source files that import each other: {circles:?}"
    );
}
