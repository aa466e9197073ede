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

/// (crate root, module path) -> the modules its code imports (the longest prefix of each
/// path that is a module file of that crate; a module's own parent and children left out:
/// a `mod.rs` re-exports its children, a child uses its parent).
type Graph = BTreeMap<(PathBuf, Vec<String>), BTreeSet<Vec<String>>>;

fn house() -> Graph {
    let mut modules: Graph = BTreeMap::new();
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
    let related = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
    for (root, module, code) in &sources {
        for path in imported_paths(module, code) {
            let target = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains_key(&(root.clone(), p.clone())));
            if let Some(t) = target
                && !related(&t, module)
            {
                modules
                    .get_mut(&(root.clone(), module.clone()))
                    .unwrap()
                    .insert(t);
            }
        }
    }
    modules
}

/// Every cycle of `edges` (as its strongly connected components of more than one node),
/// each named by its members in order.
fn cycles<N: Ord + Clone>(edges: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    // Tarjan's algorithm, iteratively (the house is small, but recursion is not needed).
    let nodes: Vec<&N> = edges.keys().collect();
    let index_of: BTreeMap<&N, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges[*n]
                .iter()
                .filter_map(|m| index_of.get(m).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut out) = (Vec::new(), 0, Vec::new());
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 && index[v] == usize::MAX {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = succ[v].get(*i) {
                *i += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    component.push(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.reverse();
                    out.push(component);
                }
            }
        }
    }
    out
}

#[test]
fn the_cycle_finder_finds_a_circle_of_any_length_and_nothing_else() {
    let graph = |edges: &[(u8, u8)]| {
        let mut g: BTreeMap<u8, BTreeSet<u8>> = BTreeMap::new();
        for &(a, b) in edges {
            g.entry(a).or_default().insert(b);
            g.entry(b).or_default();
        }
        g
    };
    assert!(cycles(&graph(&[(1, 2), (2, 3), (1, 3)])).is_empty());
    assert_eq!(cycles(&graph(&[(1, 2), (2, 1)])).len(), 1);
    let five = cycles(&graph(&[(1, 2), (2, 3), (3, 4), (4, 5), (5, 1), (5, 6)]));
    assert_eq!(five.len(), 1);
    assert_eq!(five[0].len(), 5, "{five:?}");
    assert_eq!(
        cycles(&graph(&[(1, 2), (2, 1), (3, 4), (4, 5), (5, 3)])).len(),
        2
    );
}

#[test]
fn no_source_files_import_each_other_in_a_circle_of_any_length() {
    let house = house();
    let mut by_root: BTreeMap<PathBuf, BTreeMap<Vec<String>, BTreeSet<Vec<String>>>> =
        BTreeMap::new();
    for ((root, module), deps) in &house {
        by_root
            .entry(root.clone())
            .or_default()
            .insert(module.clone(), deps.clone());
    }
    let mut circles = Vec::new();
    for graph in by_root.values() {
        for c in cycles(graph) {
            let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            circles.push(names.join(" -> "));
        }
    }
    assert!(circles.is_empty(), "source files in a circle: {circles:#?}");
}

/// The daemon's rooms (its top-level modules), each with the rooms it imports.
fn rooms() -> BTreeMap<String, BTreeSet<String>> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut rooms: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for ((root, module), deps) in house() {
        if root != base || module.is_empty() {
            continue;
        }
        let from = module[0].clone();
        let entry = rooms.entry(from.clone()).or_default();
        for d in deps {
            if let Some(to) = d.first()
                && *to != from
            {
                entry.insert(to.clone());
            }
        }
    }
    rooms
}

#[test]
fn no_room_imports_the_command_line() {
    let offenders: Vec<String> = rooms()
        .into_iter()
        .filter(|(room, deps)| room != "cli" && deps.contains("cli"))
        .map(|(room, _)| room)
        .collect();
    assert!(
        offenders.is_empty(),
        "cli/ is the outermost seam; these rooms import it: {offenders:?}"
    );
}

/// ARCHITECTURE.md's layering: the ```layers block, top first, one layer a line.
fn layers() -> Vec<Vec<String>> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md");
    let text = std::fs::read_to_string(doc).unwrap();
    let start = text
        .find("```layers\n")
        .expect("ARCHITECTURE.md has a ```layers block");
    let body = &text[start + "```layers\n".len()..];
    let end = body.find("```").expect("the layers block ends");
    body[..end]
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn every_room_imports_only_rooms_below_it_and_no_rooms_form_a_circle() {
    let rooms = rooms();
    let layers = layers();
    let layer_of = |room: &str| layers.iter().position(|l| l.iter().any(|r| r == room));
    let unplaced: Vec<&String> = rooms.keys().filter(|r| layer_of(r).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "rooms missing from ARCHITECTURE.md's layers: {unplaced:?}"
    );
    let mut upward = Vec::new();
    for (room, deps) in &rooms {
        for d in deps {
            if let (Some(a), Some(b)) = (layer_of(room), layer_of(d))
                && b <= a
            {
                upward.push(format!("{room} -> {d}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports of a room in the same layer or one above (ARCHITECTURE.md's layers): {upward:?}"
    );
    let circles = cycles(&rooms);
    assert!(circles.is_empty(), "rooms in a circle: {circles:?}");
}

/// Functions of `src/` over 150 lines (name, file, lines), measured from `fn` to the
/// closing brace at the same indentation.
fn long_functions() -> BTreeMap<(String, String), usize> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut out = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            let indent = &line[..line.len() - code.len()];
            let head = ["pub ", "pub(crate) ", "pub(super) ", "async ", "const "]
                .iter()
                .fold(code, |c, p| c.strip_prefix(p).unwrap_or(c));
            let head = head.strip_prefix("async ").unwrap_or(head);
            let Some(rest) = head.strip_prefix("fn ") else {
                continue;
            };
            if line.trim_end().ends_with(';') {
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let close = format!("{indent}}}");
            let Some(end) = lines[i..].iter().position(|l| *l == close) else {
                continue;
            };
            if end + 1 > 150 {
                let rel = file
                    .strip_prefix(&root)
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                out.insert((rel, name), end + 1);
            }
        }
    }
    out
}

/// The functions ARCHITECTURE.md's "Long functions" names, with their reasons.
fn named_long_functions() -> BTreeSet<(String, String)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
            .expect("ARCHITECTURE.md");
    let table = doc
        .split("<!-- long-functions -->")
        .nth(1)
        .and_then(|t| t.split("<!-- /long-functions -->").next())
        .unwrap_or("");
    table
        .lines()
        .filter_map(|l| {
            let cell = l.split('|').nth(1)?.trim();
            let mut parts = cell.split('`').filter(|p| !p.trim().is_empty());
            Some((parts.next()?.to_string(), parts.next()?.to_string()))
        })
        .filter(|(file, _)| file.ends_with(".rs"))
        .collect()
}

#[test]
fn no_function_is_over_150_lines_unless_architecture_names_it() {
    let long = long_functions();
    assert!(
        long.keys()
            .any(|(f, n)| f == "sim/control.rs" && n == "parse_line"),
        "the measure finds the known long one: {long:?}"
    );
    let named = named_long_functions();
    let unnamed: Vec<String> = long
        .iter()
        .filter(|(k, _)| !named.contains(*k))
        .map(|((f, n), l)| format!("{f} {n}: {l} lines"))
        .collect();
    let gone: Vec<String> = named
        .iter()
        .filter(|k| !long.contains_key(*k))
        .map(|(f, n)| format!("{f} {n}"))
        .collect();
    assert!(
        unnamed.is_empty() && gone.is_empty(),
        "over 150 lines and not in ARCHITECTURE.md's \"Long functions\": {unnamed:?}; named there but no longer over 150 lines: {gone:?}"
    );
}
