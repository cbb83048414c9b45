//! YAML → JSON conversion as sigs.k8s.io/yaml does it, with a choice about duplicate keys.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};

/// How [`yaml_to_json`] treats a key that appears twice in one mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Duplicates {
    /// The later value wins, as go-yaml v2 (and so kubectl) does.
    LastWins,
    /// An error at the second key: `mapping key "x" already defined`.
    Reject,
}

/// Converts one YAML document to JSON the way sigs.k8s.io/yaml does: non-string keys
/// become strings (`1` → `"1"`), tags are dropped, infinities and NaN become strings.
pub fn yaml_to_json(
    doc: serde_yaml::Deserializer<'_>,
    duplicates: Duplicates,
) -> Result<serde_json::Value, serde_yaml::Error> {
    JsonSeed { duplicates }.deserialize(doc)
}

/// Parses the first YAML document of `text` as JSON (see [`yaml_to_json`]). Empty text
/// gives `null`. Text nested deeper than serde_yaml deserializes is refused before it is
/// parsed (see [`super::too_deep`]).
pub fn first_document_to_json(
    text: &str,
    duplicates: Duplicates,
) -> Result<serde_json::Value, serde_yaml::Error> {
    if let Some(e) = super::too_deep(text) {
        return Err(e);
    }
    match serde_yaml::Deserializer::from_str(text).next() {
        Some(doc) => yaml_to_json(doc, duplicates),
        None => Ok(serde_json::Value::Null),
    }
}

/// The YAML merge key.
const MERGE_KEY: &str = "<<";
/// go-yaml's error for a merge key whose value is not mappings.
const MERGE_ERROR: &str = "map merge requires map or sequence of maps as the value";

#[derive(Clone, Copy)]
struct JsonSeed {
    duplicates: Duplicates,
}

impl<'de> DeserializeSeed<'de> for JsonSeed {
    type Value = serde_json::Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        d.deserialize_any(self)
    }
}

fn json_float(v: f64) -> serde_json::Value {
    match serde_json::Number::from_f64(v) {
        Some(n) => serde_json::Value::Number(n),
        None if v.is_nan() => serde_json::Value::String("NaN".into()),
        None if v > 0.0 => serde_json::Value::String("+Inf".into()),
        None => serde_json::Value::String("-Inf".into()),
    }
}

impl<'de> de::Visitor<'de> for JsonSeed {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(json_float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(serde_json::Value::String(v.to_string()))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(serde_json::Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = serde_json::Map::new();
        let mut merges = Vec::new();
        loop {
            let seed = JsonKeySeed {
                existing: &out,
                duplicates: self.duplicates,
            };
            let Some(key) = map.next_key_seed(seed)? else {
                break;
            };
            let value = map.next_value_seed(self)?;
            if key == MERGE_KEY {
                merges.push(value);
            } else {
                out.insert(key, value);
            }
        }
        // YAML merge keys (`<<: *base`), as go-yaml resolves them: the mapping's own keys
        // win, then the merged mappings in order.
        for merged in merges {
            let sources = match merged {
                serde_json::Value::Object(m) => vec![m],
                serde_json::Value::Array(items) => items
                    .into_iter()
                    .map(|v| match v {
                        serde_json::Value::Object(m) => Ok(m),
                        _ => Err(de::Error::custom(MERGE_ERROR)),
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(de::Error::custom(MERGE_ERROR)),
            };
            for source in sources {
                for (k, v) in source {
                    out.entry(k).or_insert(v);
                }
            }
        }
        Ok(serde_json::Value::Object(out))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        use de::VariantAccess;
        let (_, variant) = data.variant::<IgnoredAny>()?;
        variant.newtype_variant_seed(self)
    }
}

struct JsonKeySeed<'m> {
    existing: &'m serde_json::Map<String, serde_json::Value>,
    duplicates: Duplicates,
}

impl<'de> DeserializeSeed<'de> for JsonKeySeed<'_> {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl JsonKeySeed<'_> {
    fn key<E: de::Error>(self, key: String) -> Result<String, E> {
        if self.duplicates == Duplicates::Reject && self.existing.contains_key(&key) {
            return Err(E::custom(format!("mapping key {key:?} already defined")));
        }
        Ok(key)
    }
}

impl<'de> de::Visitor<'de> for JsonKeySeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        self.key(v.to_string())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        self.key(v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        self.key(v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        self.key(v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        match json_float(v) {
            serde_json::Value::String(s) => self.key(s),
            n => self.key(n.to_string()),
        }
    }
    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        self.key("null".to_string())
    }
    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        self.key("null".to_string())
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<String, A::Error> {
        use de::VariantAccess;
        let (_, variant) = data.variant::<IgnoredAny>()?;
        let inner = variant.newtype_variant_seed(JsonSeed {
            duplicates: Duplicates::LastWins,
        })?;
        match inner {
            serde_json::Value::String(s) => self.key(s),
            serde_json::Value::Object(_) | serde_json::Value::Array(_) => Err(de::Error::custom(
                "unsupported map key: a mapping or sequence",
            )),
            other => self.key(other.to_string()),
        }
    }
    // A mapping or sequence as a key (`? [a, b] : c`) has no JSON form.
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(de::Error::custom("unsupported map key: a mapping"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(de::Error::custom("unsupported map key: a sequence"))
    }
}
