//! Hall, board and arbiter ids: `[a-z0-9-]+`, because hall and board ids are MQTT topic
//! levels (and arbiter ids name accounts in the same alphabet). Checked once, at each edge
//! where an id comes in (the configuration, the arbiters file, the demo's options), by
//! [`Id::parse`] or [`valid`]. A leaf: it imports nothing of the house.

use serde::{Deserialize, Serialize};

/// An id that passed [`valid`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Id(String);

/// Why a text is not an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a valid id: use lowercase letters, digits and '-'")]
pub struct BadId(pub String);

impl Id {
    pub fn parse(text: &str) -> Result<Id, BadId> {
        if valid(text) {
            Ok(Id(text.to_string()))
        } else {
            Err(BadId(text.to_string()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An id reads as the text it is (topics, logs, maps keyed by text); it is made only by
/// [`Id::parse`] and `TryFrom<String>`, so every `Id` passed the check.
impl std::ops::Deref for Id {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Id {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Id {
    type Error = BadId;
    fn try_from(s: String) -> Result<Id, BadId> {
        if valid(&s) { Ok(Id(s)) } else { Err(BadId(s)) }
    }
}

impl From<Id> for String {
    fn from(id: Id) -> String {
        id.0
    }
}

/// A host name made an id, for a default node name: its first label, lowercased, with
/// every character an id may not hold made '-', and no '-' at either end; `node` when
/// nothing is left. (A host name is already mostly an id: RFC 1123 allows letters,
/// digits and '-' in a label.)
pub fn from_host_name(host: &str) -> Id {
    let label = host.trim().split('.').next().unwrap_or("");
    let text: String = label
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if allowed(c) { c } else { '-' }
        })
        .collect();
    let text = text.trim_matches('-');
    Id::parse(text).unwrap_or_else(|_| Id("node".to_string()))
}

/// `[a-z0-9-]+`.
pub fn valid(id: &str) -> bool {
    !id.is_empty() && id.chars().all(allowed)
}

/// A character an id may hold (for messages that name the others).
pub fn allowed(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_name_becomes_a_node_id() {
        for (host, id) in [
            ("hall-server-1\n", "hall-server-1"),
            ("Hall_PC.example.org", "hall-pc"),
            ("-pi-", "pi"),
            ("", "node"),
            ("___", "node"),
            ("ÉCOLE", "cole"),
        ] {
            assert_eq!(from_host_name(host).as_str(), id, "{host:?}");
        }
    }

    #[test]
    fn an_id_is_a_topic_level_of_lowercase_letters_digits_and_dashes() {
        for good in ["board-007", "a", "0", "hall-2026-main"] {
            assert!(valid(good), "{good}");
            assert_eq!(Id::parse(good).map(|i| i.to_string()), Ok(good.to_string()));
        }
        for bad in [
            "", "Board", "board 7", "board/7", "b#", "b+", "ü", "board_7",
        ] {
            assert!(!valid(bad), "{bad:?}");
            assert_eq!(Id::parse(bad), Err(BadId(bad.to_string())));
        }
        assert_eq!(
            BadId("B 1".into()).to_string(),
            "'B 1' is not a valid id: use lowercase letters, digits and '-'"
        );
    }

    #[test]
    fn an_id_reads_from_json_only_when_valid() {
        assert_eq!(
            serde_json::from_str::<Id>("\"board-1\"").ok(),
            Id::parse("board-1").ok()
        );
        assert!(serde_json::from_str::<Id>("\"Board 1\"").is_err());
        assert_eq!(
            serde_json::to_string(&Id::parse("h").unwrap_or_else(|e| panic!("{e}"))).ok(),
            Some("\"h\"".to_string())
        );
    }
}
