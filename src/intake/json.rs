//! The one strict JSON reader for what people and programs send: commands (MQTT, the web)
//! and rules scripts. serde_json keeps the last of two equal keys silently; a command or a
//! script line saying `side` twice is ambiguous, so it is refused with where the key
//! repeats (`pairings[3].white`).

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Why a text is not strict JSON.
#[derive(Debug)]
pub enum StrictError {
    /// Not JSON at all (or a value serde refused): serde's error, with its line and column.
    Syntax(serde_json::Error),
    /// A key given twice in one object: `path` names it (`pairings[3].white`), `key` is
    /// its last level, `line`/`column` where the second one ends.
    Duplicate {
        path: String,
        key: String,
        line: usize,
        column: usize,
    },
}

impl std::fmt::Display for StrictError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StrictError::Syntax(e) => write!(f, "not JSON: {e}"),
            StrictError::Duplicate { path, .. } => {
                write!(f, "{path}: the key appears twice; give each key once")
            }
        }
    }
}

impl std::error::Error for StrictError {}

/// `bytes` as a JSON value in which no object has a key twice.
pub fn read(bytes: &[u8]) -> Result<Value, StrictError> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let read = Walk {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match (read, found) {
        (Ok(v), _) => Ok(v),
        (Err(e), Some((path, key))) => Err(StrictError::Duplicate {
            path,
            key,
            line: e.line(),
            column: e.column(),
        }),
        (Err(e), None) => Err(StrictError::Syntax(e)),
    }
}

/// A value at `path`; on a repeated key, `found` takes its path and name.
struct Walk<'a> {
    path: String,
    found: &'a mut Option<(String, String)>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut v = Vec::new();
        loop {
            let seed = Walk {
                path: format!("{}[{}]", self.path, v.len()),
                found: &mut *self.found,
            };
            match seq.next_element_seed(seed)? {
                Some(e) => v.push(e),
                None => return Ok(Value::Array(v)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if m.contains_key(&key) {
                let message = format!("\"{key}\" is given twice");
                *self.found = Some((path, key));
                return Err(serde::de::Error::custom(message));
            }
            let v = map.next_value_seed(Walk {
                path,
                found: &mut *self.found,
            })?;
            m.insert(key, v);
        }
        Ok(Value::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_is_named_by_its_path_wherever_it_is() {
        let e = read(br#"{"side":"white","side":"black"}"#).unwrap_err();
        assert!(
            matches!(&e, StrictError::Duplicate { path, key, line: 1, .. } if path == "side" && key == "side"),
            "{e:?}"
        );
        let e = read(br#"{"pairings":[{"board":"a"},{"white":"x","white":"y"}]}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pairings[1].white: the key appears twice; give each key once"
        );
        let e = read(b"{\"a\":{\"b\":1,\n\"b\":2}}").unwrap_err();
        assert!(
            matches!(&e, StrictError::Duplicate { path, line: 2, .. } if path == "a.b"),
            "{e:?}"
        );
    }

    #[test]
    fn the_same_key_in_two_objects_is_not_a_repeat_and_values_read_as_serde_reads_them() {
        let text = r#"{"a":{"k":1},"b":{"k":[1,-2,3.5,"x",null,true]}}"#;
        let v = read(text.as_bytes()).unwrap();
        assert_eq!(v, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn what_is_not_json_is_a_syntax_error_with_its_place() {
        let e = read(b"{\"a\":1,}").unwrap_err();
        assert!(
            matches!(&e, StrictError::Syntax(s) if s.column() == 8),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("not JSON: "), "{e}");
        // Trailing text after the value is refused, as serde_json::from_slice does.
        assert!(matches!(read(b"{} x"), Err(StrictError::Syntax(_))));
        assert!(matches!(read(b""), Err(StrictError::Syntax(_))));
    }
}
