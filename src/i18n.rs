//! The page's languages (docs/DASHBOARD.md, "Languages"): the shipped catalogues, an
//! operator's files that override or add one, and which language a request gets. A leaf
//! room, so that `check-config` reads the operator's files as the dashboard does.
//!
//! The page renders every word from a flat catalogue (`key → text`, a plural as an object
//! of CLDR categories). The server merges it once per language at start — English
//! underneath (so an operator's partial language falls back to English, key by key), then
//! the shipped page catalogue, the daemon's message codes (`messages.<lang>.json`: alerts
//! and refusals by code) and last the operator's file — and puts it in the page itself,
//! so the first paint is already in the arbiter's language and costs no second request.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

/// The languages shipped in the binary: (code, page catalogue, message catalogue).
const SHIPPED: &[(&str, &str, &str)] = &[
    (
        "en",
        include_str!("web/assets/i18n/en.json"),
        include_str!("web/assets/i18n/messages.en.json"),
    ),
    (
        "es",
        include_str!("web/assets/i18n/es.json"),
        include_str!("web/assets/i18n/messages.es.json"),
    ),
];

/// The language everything falls back to.
pub const FALLBACK: &str = "en";

/// Why an operator's catalogue was not taken (the daemon logs it and goes on without it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogueError {
    #[error("{path}: cannot be read: {why}")]
    Read { path: String, why: String },
    #[error("{path}: not JSON: {why}")]
    Json { path: String, why: String },
    #[error("{path}: a catalogue is one JSON object of \"key\": \"text\"; {why}")]
    Shape { path: String, why: String },
    #[error(
        "{path}: '{code}' is not a language code (a file is named by its code, as en.json, es.json or pt-BR.json)"
    )]
    Code { path: String, code: String },
}

/// One language ready to serve: its name (in itself) and its merged catalogue.
#[derive(Debug, Clone)]
pub struct Language {
    pub code: String,
    pub name: String,
    pub messages: Map<String, Value>,
}

/// Every language the page can be shown in, and the hall screens' own (`[web] language`).
#[derive(Debug, Clone)]
pub struct Languages {
    langs: BTreeMap<String, Language>,
    screens: Option<String>,
}

impl Default for Languages {
    /// The shipped catalogues alone; no hall-screen language.
    fn default() -> Self {
        Languages::build(&[], None)
    }
}

fn parse(path: &str, text: &str) -> Result<Map<String, Value>, CatalogueError> {
    let v: Value = serde_json::from_str(text).map_err(|e| CatalogueError::Json {
        path: path.into(),
        why: e.to_string(),
    })?;
    let Value::Object(map) = v else {
        return Err(CatalogueError::Shape {
            path: path.into(),
            why: "this is not an object".into(),
        });
    };
    for (k, v) in &map {
        let ok = match v {
            Value::String(_) => true,
            // A plural: CLDR categories, each a text; `_meta`: the language's own data.
            Value::Object(o) => k == "_meta" || o.values().all(Value::is_string),
            _ => false,
        };
        if !ok {
            return Err(CatalogueError::Shape {
                path: path.into(),
                why: format!(
                    "\"{}\" is neither a text nor a plural's texts",
                    k.escape_debug()
                ),
            });
        }
    }
    Ok(map)
}

/// Whether `code` is a language tag this server takes: `es`, `pt-BR`, `sr-Latn`.
pub fn valid_code(code: &str) -> bool {
    let mut parts = code.split('-');
    let first = parts.next().unwrap_or("");
    (2..=3).contains(&first.len())
        && first.bytes().all(|b| b.is_ascii_lowercase())
        && parts.all(|p| (2..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// An operator's catalogue: its language code and its texts.
pub type Catalogue = (String, Map<String, Value>);

/// The operator's catalogues in `dir` (`<code>.json`), each read whole or refused whole;
/// a missing directory is no files.
pub fn read_dir(dir: &Path) -> (Vec<Catalogue>, Vec<CatalogueError>) {
    let (mut files, mut errors) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (files, errors);
    };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let shown = path.display().to_string();
        let code = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if !valid_code(code) {
            errors.push(CatalogueError::Code {
                path: shown,
                code: code.escape_debug().to_string(),
            });
            continue;
        }
        let read = std::fs::read_to_string(&path).map_err(|e| CatalogueError::Read {
            path: shown.clone(),
            why: e.to_string(),
        });
        match read.and_then(|text| parse(&shown, &text)) {
            Ok(map) => files.push((code.to_string(), map)),
            Err(e) => errors.push(e),
        }
    }
    (files, errors)
}

fn shipped(code: &str) -> Option<Map<String, Value>> {
    let (_, page, messages) = SHIPPED.iter().find(|(c, _, _)| *c == code)?;
    let mut map = parse(code, page).unwrap_or_default();
    map.extend(parse(code, messages).unwrap_or_default());
    Some(map)
}

impl Languages {
    /// The shipped languages, then the operator's files (`overrides`: code and catalogue)
    /// on top; `screens` is `[web] language`.
    pub fn build(overrides: &[Catalogue], screens: Option<&str>) -> Languages {
        let base = shipped(FALLBACK).unwrap_or_default();
        let mut langs = BTreeMap::new();
        let codes = SHIPPED
            .iter()
            .map(|(c, _, _)| c.to_string())
            .chain(overrides.iter().map(|(c, _)| c.clone()));
        for code in codes {
            let mut messages = base.clone();
            messages.extend(shipped(&code).unwrap_or_default());
            for (c, map) in overrides {
                if *c == code {
                    messages.extend(map.clone());
                }
            }
            // The language's own name, from its own catalogue only (the English underneath
            // would call every added language "English"); else its code.
            let own = shipped(&code)
                .into_iter()
                .chain(
                    overrides
                        .iter()
                        .filter(|(c, _)| *c == code)
                        .map(|(_, m)| m.clone()),
                )
                .filter_map(|m| m.get("_meta")?.get("name")?.as_str().map(str::to_string))
                .next_back();
            let name = own.unwrap_or_else(|| code.clone());
            langs.insert(
                code.clone(),
                Language {
                    code,
                    name,
                    messages,
                },
            );
        }
        let screens = screens
            .filter(|s| langs.contains_key(*s))
            .map(str::to_string);
        Languages { langs, screens }
    }

    /// The operator's catalogues in `dir`, with what could not be taken.
    pub fn load(dir: &Path, screens: Option<&str>) -> (Languages, Vec<CatalogueError>) {
        let (files, errors) = read_dir(dir);
        (Languages::build(&files, screens), errors)
    }

    pub fn get(&self, code: &str) -> Option<&Language> {
        self.langs.get(code)
    }

    pub fn codes(&self) -> impl Iterator<Item = &str> {
        self.langs.keys().map(String::as_str)
    }

    /// `[{code, name}]`, for the page's language menu.
    pub fn menu(&self) -> Value {
        Value::Array(
            self.langs
                .values()
                .map(|l| serde_json::json!({"code": l.code, "name": l.name}))
                .collect(),
        )
    }

    /// The language a request gets. An arbiter's own choice (kept in the session) first,
    /// then `?lang=`; then, for a hall screen, `[web] language`; then the browser's
    /// `Accept-Language`; then `[web] language` for the dashboard too; then English.
    pub fn choose(
        &self,
        chosen: Option<&str>,
        query: Option<&str>,
        accept: Option<&str>,
        screen: bool,
    ) -> &str {
        let known = |c: &str| self.langs.get_key_value(c).map(|(k, _)| k.as_str());
        if let Some(c) = chosen
            .and_then(known)
            .or_else(|| query.and_then(|q| self.closest(q)))
        {
            return c;
        }
        if screen && let Some(s) = self.screens.as_deref() {
            return s;
        }
        accept
            .and_then(|a| self.best_of_accept(a))
            .or(self.screens.as_deref())
            .unwrap_or(FALLBACK)
    }

    /// `es-ES` is served as `es` when no `es-ES` catalogue exists.
    fn closest(&self, tag: &str) -> Option<&str> {
        let tag = tag.trim();
        if let Some((k, _)) = self.langs.get_key_value(tag) {
            return Some(k);
        }
        let primary = tag.split('-').next()?.to_ascii_lowercase();
        self.langs.get_key_value(&primary).map(|(k, _)| k.as_str())
    }

    /// The best of `Accept-Language`'s tags this server has, by their weights (RFC 9110
    /// §12.5.4); a tag with `q=0` is never chosen.
    fn best_of_accept(&self, header: &str) -> Option<&str> {
        let mut tags: Vec<(u16, usize, &str)> = header
            .split(',')
            .enumerate()
            .filter_map(|(i, part)| {
                let mut it = part.split(';');
                let tag = it.next()?.trim();
                let q = it
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .unwrap_or(1.0);
                // Weights have three decimals at most: compare them as integers.
                let q = (q.clamp(0.0, 1.0) * 1000.0).round() as u16;
                (q > 0 && !tag.is_empty()).then_some((q, i, tag))
            })
            .collect();
        tags.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        tags.iter().find_map(|(_, _, t)| self.closest(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn langs() -> Languages {
        Languages::default()
    }

    #[test]
    fn accept_language_picks_the_best_weighted_language_we_have() {
        let l = langs();
        assert_eq!(
            l.choose(None, None, Some("es-ES,es;q=0.9,en;q=0.8"), false),
            "es"
        );
        assert_eq!(
            l.choose(None, None, Some("fr-FR, es;q=0.5, en;q=0.4"), false),
            "es"
        );
        assert_eq!(l.choose(None, None, Some("fr-FR, de"), false), "en");
        assert_eq!(l.choose(None, None, Some("es;q=0, en"), false), "en");
        assert_eq!(
            l.choose(None, None, Some("en;q=0.2, es;q=0.9"), false),
            "es"
        );
        assert_eq!(l.choose(None, None, Some(""), false), "en");
    }

    #[test]
    fn the_arbiters_choice_beats_the_query_and_the_browser() {
        let l = langs();
        assert_eq!(l.choose(Some("en"), Some("es"), Some("es"), false), "en");
        assert_eq!(l.choose(None, Some("es-MX"), Some("en"), false), "es");
        // A choice of a language no longer served is no choice.
        assert_eq!(l.choose(Some("xx"), None, Some("es"), false), "es");
    }

    #[test]
    fn hall_screens_follow_web_language_unless_the_url_says_otherwise() {
        let l = Languages::build(&[], Some("es"));
        assert_eq!(l.choose(None, None, Some("en-GB"), true), "es");
        assert_eq!(l.choose(None, Some("en"), Some("es"), true), "en");
        // The dashboard: the browser first, then the hall's language.
        assert_eq!(l.choose(None, None, Some("en-GB"), false), "en");
        assert_eq!(l.choose(None, None, Some("fr"), false), "es");
    }

    #[test]
    fn an_operators_file_overrides_keys_and_adds_a_language_over_english() {
        let mut es = Map::new();
        es.insert("nav.hall".into(), Value::String("Sala de juego".into()));
        let mut pt = Map::new();
        pt.insert("_meta".into(), serde_json::json!({"name": "Português"}));
        pt.insert("nav.hall".into(), Value::String("Sala".into()));
        let l = Languages::build(&[("es".into(), es), ("pt".into(), pt)], None);
        assert_eq!(
            l.get("es").and_then(|x| x.messages.get("nav.hall")),
            Some(&Value::String("Sala de juego".into()))
        );
        let pt = l.get("pt").map(|x| (x.name.clone(), x.messages.len()));
        let en_len = l.get("en").map(|x| x.messages.len()).unwrap_or(0);
        assert_eq!(pt.as_ref().map(|p| p.0.as_str()), Some("Português"));
        // Every English key is there, in English where Portuguese has none.
        assert!(pt.is_some_and(|p| p.1 >= en_len));
        assert_eq!(l.choose(None, None, Some("pt-BR"), false), "pt");
    }

    #[test]
    fn a_bad_operator_file_is_refused_whole_with_its_path_and_why() {
        let dir = std::env::temp_dir().join(format!("hallclock-i18n-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join("es.json"), "{\"a\": 3}");
        let _ = std::fs::write(dir.join("Spanish.json"), "{}");
        let _ = std::fs::write(dir.join("fr.json"), "{\"a\": ");
        let _ = std::fs::write(dir.join("de.json"), "{\"nav.hall\": \"Saal\"}");
        let (l, errors) = Languages::load(&dir, None);
        let said: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(
            said.iter()
                .any(|s| s.contains("es.json") && s.contains("\"a\" is neither a text")),
            "{said:?}"
        );
        assert!(
            said.iter()
                .any(|s| s.contains("'Spanish' is not a language code")),
            "{said:?}"
        );
        assert!(
            said.iter().any(|s| s.contains("fr.json: not JSON")),
            "{said:?}"
        );
        assert!(l.get("de").is_some() && l.get("fr").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
