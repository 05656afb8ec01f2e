//! A slow, obviously correct JSON-RPC classifier built on `serde_json`, following
//! JSON-RPC 2.0 and SPEC.md rule by rule. It shares no code with the core: JSON
//! validity comes from `switchboard_tests::reference_accepts_with_depth` (UTF-8 check,
//! `serde_json` `IgnoredAny`, depth counted separately), and the structure from
//! `serde_json`'s `RawValue` (exact bytes of each value, keys included).

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use switchboard::{Code, Field, ParserConfig, Reason};

/// The verdict on one object (or batch element).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefItem<'a> {
    /// A call with an id.
    Request {
        /// The method name, unescaped (`None`: it holds a lone surrogate escape).
        method: Option<String>,
        /// The id's exact bytes.
        id: &'a [u8],
        /// The params' exact bytes (`None`: absent or `null`).
        params: Option<&'a [u8]>,
    },
    /// A call without an `id` member.
    Notification {
        /// As for `Request`.
        method: Option<String>,
        /// As for `Request`.
        params: Option<&'a [u8]>,
    },
    /// A well-formed Response object.
    Response {
        /// The id's exact bytes.
        id: &'a [u8],
        /// `Ok(result)` or `Err(error object)`, exact bytes.
        outcome: Result<&'a [u8], &'a [u8]>,
    },
    /// An error response is due.
    Error {
        /// The JSON-RPC code.
        code: Code,
        /// The reason (`None` for parse errors: which grammar rule broke first is
        /// the core's business).
        reason: Option<Reason>,
        /// The id to echo.
        id: &'a [u8],
    },
}

/// The verdict on a whole message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefMessage<'a> {
    /// One object (or one error for the whole message).
    Single(RefItem<'a>),
    /// A valid batch: each element's exact bytes and verdict.
    Batch(Vec<(&'a [u8], RefItem<'a>)>),
}

const NULL: &[u8] = b"null";

fn error<'a>(reason: Reason, id: &'a [u8]) -> RefItem<'a> {
    RefItem::Error {
        code: reason.code(),
        reason: Some(reason),
        id,
    }
}

/// An object's members in order: (raw key with quotes, raw value).
struct Members<'a>(Vec<(&'a RawValue, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Members<'de>, A::Error> {
                let mut v = Vec::new();
                while let Some(kv) = m.next_entry::<&'de RawValue, &'de RawValue>()? {
                    v.push(kv);
                }
                Ok(Members(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// The members of a validated object (`None` if `raw` is not an object).
pub fn members(raw: &str) -> Option<Vec<(&str, &str)>> {
    let m: Members<'_> = serde_json::from_str(raw).ok()?;
    Some(m.0.into_iter().map(|(k, v)| (k.get(), v.get())).collect())
}

/// A JSON string token, unescaped; `None` for a non-string or a lone surrogate.
pub fn unescape(raw: &str) -> Option<String> {
    if !raw.starts_with('"') {
        return None;
    }
    serde_json::from_str::<String>(raw).ok()
}

/// The elements of a validated array (`None` if `raw` is not an array).
pub fn elements(raw: &str) -> Option<Vec<&str>> {
    let v: Vec<&RawValue> = serde_json::from_str(raw).ok()?;
    Some(v.into_iter().map(RawValue::get).collect())
}

/// An integer per the JSON number grammar: a number token with no fraction and no
/// exponent (any magnitude).
fn is_integer_token(raw: &str) -> bool {
    matches!(raw.as_bytes()[0], b'-' | b'0'..=b'9') && !raw.contains(['.', 'e', 'E'])
}

/// `{"code": integer, "message": string, ...}`, the first occurrence of each counting.
fn is_error_object(raw: &str) -> bool {
    let Some(members) = members(raw) else {
        return false;
    };
    let first = |name: &str| {
        members
            .iter()
            .find(|(k, _)| unescape(k).as_deref() == Some(name))
            .map(|(_, v)| *v)
    };
    first("code").is_some_and(is_integer_token)
        && first("message").is_some_and(|m| m.starts_with('"'))
}

const FIELDS: [Field; 6] = [
    Field::Jsonrpc,
    Field::Method,
    Field::Params,
    Field::Id,
    Field::Result,
    Field::Error,
];

/// Classifies one element (`raw`: its exact text, no surrounding whitespace).
pub fn classify_item(raw: &str) -> RefItem<'_> {
    let Some(members) = members(raw) else {
        return error(Reason::NotAnObject, NULL);
    };
    let mut value: [Option<&str>; 6] = [None; 6];
    let mut dup = [false; 6];
    for (k, v) in &members {
        let Some(name) = unescape(k) else { continue };
        if let Some(i) = FIELDS.iter().position(|f| f.name() == name) {
            if value[i].is_some() {
                dup[i] = true;
            } else {
                value[i] = Some(v);
            }
        }
    }
    let [jsonrpc, method, params, id, result, err] = value;
    // Two readers must never see two different calls.
    for i in 0..4 {
        if dup[i] {
            return error(Reason::Duplicate(FIELDS[i]), NULL);
        }
    }
    let id = match id {
        Some(v) if matches!(v.as_bytes()[0], b'"' | b'-' | b'0'..=b'9' | b'n') => {
            Some(v.as_bytes())
        }
        Some(_) => return error(Reason::IdWrongType, NULL),
        None => None,
    };
    let echo = id.unwrap_or(NULL);
    let version = || match jsonrpc {
        None => Err(Reason::MissingVersion),
        Some(v) if unescape(v).as_deref() == Some("2.0") => Ok(()),
        Some(_) => Err(Reason::WrongVersion),
    };

    if method.is_none() && (result.is_some() || err.is_some()) {
        for (i, present) in [(4, result.is_some()), (5, err.is_some())] {
            if present && dup[i] {
                return error(Reason::Duplicate(FIELDS[i]), NULL);
            }
        }
        if let Err(r) = version() {
            return error(r, echo);
        }
        let Some(id) = id else {
            return error(Reason::ResponseWithoutId, NULL);
        };
        return match (result, err) {
            (Some(_), Some(_)) => error(Reason::ResultAndError, id),
            (Some(r), None) => RefItem::Response {
                id,
                outcome: Ok(r.as_bytes()),
            },
            (None, Some(e)) if is_error_object(e) => RefItem::Response {
                id,
                outcome: Err(e.as_bytes()),
            },
            _ => error(Reason::MalformedErrorObject, id),
        };
    }
    if let Err(r) = version() {
        return error(r, echo);
    }
    let Some(method) = method else {
        return error(Reason::MissingMethod, echo);
    };
    if !method.starts_with('"') {
        return error(Reason::MethodNotString, echo);
    }
    let name = unescape(method);
    let params = match params {
        None | Some("null") => None,
        Some(p) if p.starts_with(['[', '{']) => Some(p.as_bytes()),
        Some(_) => return error(Reason::ParamsNotStructured, echo),
    };
    match id {
        Some(id) => RefItem::Request {
            method: name,
            id,
            params,
        },
        None => RefItem::Notification {
            method: name,
            params,
        },
    }
}

/// Classifies a whole message under `cfg`.
pub fn classify<'a>(input: &'a [u8], cfg: &ParserConfig) -> RefMessage<'a> {
    if input.len() > cfg.get_max_message_bytes() {
        return RefMessage::Single(error(Reason::TooLarge, NULL));
    }
    if !switchboard_tests::reference_accepts_with_depth(input, cfg.get_max_depth()) {
        return RefMessage::Single(RefItem::Error {
            code: Code::ParseError,
            reason: None,
            id: NULL,
        });
    }
    let text = std::str::from_utf8(input).expect("accepted text is UTF-8");
    let whole: &RawValue = serde_json::from_str(text).expect("accepted text parses");
    let whole = whole.get();
    match whole.as_bytes()[0] {
        b'{' => RefMessage::Single(classify_item(whole)),
        b'[' => {
            let elems = elements(whole).expect("an array");
            if elems.is_empty() {
                RefMessage::Single(error(Reason::EmptyBatch, NULL))
            } else if !cfg.get_allow_batches() {
                RefMessage::Single(error(Reason::BatchesDisabled, NULL))
            } else if elems.len() > cfg.get_max_batch_len() {
                RefMessage::Single(error(Reason::BatchTooLong, NULL))
            } else {
                RefMessage::Batch(
                    elems
                        .into_iter()
                        .map(|e| (e.as_bytes(), classify_item(e)))
                        .collect(),
                )
            }
        }
        _ => RefMessage::Single(error(Reason::NotAnObject, NULL)),
    }
}
