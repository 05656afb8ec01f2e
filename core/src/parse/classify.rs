//! Spans to [`Item`]: every rule of JSON-RPC 2.0 and every decision of SPEC.md.

use super::scan::{ObjSpans, Span};
use super::{Error, Field, Id, Item, Method, Notification, Reason, Request, Response};
use crate::params::{Kind, ParamsBytes, RawValue};
use crate::unescape;

/// Classifies one recorded object (or non-object batch element).
///
/// `names` holds the decoded escaped method names (see `ObjSpans::decoded_method`).
pub(crate) fn classify<'a>(input: &'a [u8], s: &ObjSpans, names: &'a [u8]) -> Item<'a> {
    if s.compact {
        return classify_compact(input, s);
    }
    classify_general(input, s, names)
}

/// [`classify`] of an object the compact path recorded: an object, with
/// `"jsonrpc":"2.0"`, an ASCII method string without escapes, no duplicate and no
/// `result` or `error` (the compact path declines all else), so only the id's and
/// the params' types are left to check. Small enough to inline into the parser.
#[inline(always)]
pub(crate) fn classify_compact<'a>(input: &'a [u8], s: &ObjSpans) -> Item<'a> {
    debug_assert!(s.compact && s.is_object && s.dup == 0);
    debug_assert!(!s.get(Field::Result).is_present() && !s.get(Field::Error).is_present());
    let Ok(id) = id_of(input, s) else {
        return Item::Error(Error::new(Reason::IdWrongType, Id::NULL));
    };
    let echo = id.unwrap_or(Id::NULL);
    let fail = |r: Reason| Item::Error(Error::new(r, echo));
    let raw = s.get(Field::Method).of(input);
    // SAFETY: the compact path checked every byte of the method string's body
    // is below 0x80 (see `Scanner::scan_ascii_string`), and ASCII is UTF-8.
    let name = unsafe { core::str::from_utf8_unchecked(&raw[1..raw.len() - 1]) };
    finish(input, s, Method { name, exact: true }, id, fail)
}

/// [`classify`] of anything the compact path did not record.
fn classify_general<'a>(input: &'a [u8], s: &ObjSpans, names: &'a [u8]) -> Item<'a> {
    if !s.is_object {
        return Item::Error(Error::new(Reason::NotAnObject, Id::NULL));
    }
    // Two readers must never see two different calls: any duplicate of the four
    // request members, and of result/error in a response, answers with a null id.
    const CALL_DUPS: u8 = 0b1111;
    if s.dup & CALL_DUPS != 0 {
        let f = Field::ALL[s.dup.trailing_zeros() as usize];
        return Item::Error(Error::new(Reason::Duplicate(f), Id::NULL));
    }
    let Ok(id) = id_of(input, s) else {
        return Item::Error(Error::new(Reason::IdWrongType, Id::NULL));
    };
    let echo = id.unwrap_or(Id::NULL);
    let fail = |r: Reason| Item::Error(Error::new(r, echo));

    let method = s.get(Field::Method);
    let (result, error) = (s.get(Field::Result), s.get(Field::Error));
    if !method.is_present() && (result.is_present() || error.is_present()) {
        return classify_response(input, s, id, result, error);
    }

    if let Err(r) = check_version(input, s) {
        return fail(r);
    }
    if !method.is_present() {
        return fail(Reason::MissingMethod);
    }
    let mraw = method.of(input);
    if mraw[0] != b'"' {
        return fail(Reason::MethodNotString);
    }
    let method = if s.escaped & (1 << Field::Method as u8) != 0 {
        match core::str::from_utf8(s.decoded_method.of(names)) {
            Ok(name) => Method {
                name,
                exact: !s.method_inexact,
            },
            Err(_) => Method {
                name: "",
                exact: false,
            },
        }
    } else {
        let raw = &mraw[1..mraw.len() - 1];
        if raw.is_ascii() {
            // SAFETY: every byte is ASCII (just checked), and ASCII is valid UTF-8.
            let name = unsafe { core::str::from_utf8_unchecked(raw) };
            Method { name, exact: true }
        } else {
            // The scanner validated the string as UTF-8; never trust that blindly.
            match core::str::from_utf8(raw) {
                Ok(name) => Method { name, exact: true },
                Err(_) => Method {
                    name: "",
                    exact: false,
                },
            }
        }
    };
    finish(input, s, method, id, fail)
}

/// The id, if present (`Ok(None)` if absent); `Err` if it is not a string,
/// number or null (then the answer's id is null).
#[inline(always)]
fn id_of<'a>(input: &'a [u8], s: &ObjSpans) -> Result<Option<Id<'a>>, ()> {
    let id_span = s.get(Field::Id);
    if !id_span.is_present() {
        return Ok(None);
    }
    let raw = id_span.of(input);
    match raw[0] {
        b'"' | b'-' | b'0'..=b'9' | b'n' => Ok(Some(Id::new_validated(raw))),
        _ => Err(()),
    }
}

/// The params and the call's kind, once the method is known.
#[inline(always)]
fn finish<'a>(
    input: &'a [u8],
    s: &ObjSpans,
    method: Method<'a>,
    id: Option<Id<'a>>,
    fail: impl Fn(Reason) -> Item<'a>,
) -> Item<'a> {
    let params = s.get(Field::Params);
    let params = if params.is_present() {
        let raw = params.of(input);
        match raw[0] {
            b'[' | b'{' => Some(ParamsBytes::new_validated(raw)),
            b'n' => None, // `params: null` is treated as absent
            _ => return fail(Reason::ParamsNotStructured),
        }
    } else {
        None
    };

    match id {
        Some(id) => Item::Request(Request { method, params, id }),
        None => Item::Notification(Notification { method, params }),
    }
}

fn check_version(input: &[u8], s: &ObjSpans) -> Result<(), Reason> {
    let v = s.get(Field::Jsonrpc);
    if !v.is_present() {
        return Err(Reason::MissingVersion);
    }
    let raw = v.of(input);
    let ok = matches!(raw, [b'"', b'2', b'.', b'0', b'"'])
        || (s.escaped & (1 << Field::Jsonrpc as u8) != 0
            && unescape::escaped_eq(&raw[1..raw.len() - 1], b"2.0"));
    if ok {
        Ok(())
    } else {
        Err(Reason::WrongVersion)
    }
}

fn classify_response<'a>(
    input: &'a [u8],
    s: &ObjSpans,
    id: Option<Id<'a>>,
    result: Span,
    error: Span,
) -> Item<'a> {
    let echo = id.unwrap_or(Id::NULL);
    let fail = |r: Reason| Item::Error(Error::new(r, echo));
    for f in [Field::Result, Field::Error] {
        if s.dup & (1 << f as u8) != 0 {
            return Item::Error(Error::new(Reason::Duplicate(f), Id::NULL));
        }
    }
    if let Err(r) = check_version(input, s) {
        return fail(r);
    }
    let Some(id) = id else {
        return fail(Reason::ResponseWithoutId);
    };
    if result.is_present() && error.is_present() {
        return fail(Reason::ResultAndError);
    }
    if result.is_present() {
        let outcome = Ok(RawValue::new_validated(result.of(input)));
        return Item::Response(Response { id, outcome });
    }
    let err = RawValue::new_validated(error.of(input));
    if !is_error_object(err) {
        return fail(Reason::MalformedErrorObject);
    }
    Item::Response(Response {
        id,
        outcome: Err(err),
    })
}

/// `{"code": <integer>, "message": <string>, ...}` (first occurrence of each counts).
fn is_error_object(v: RawValue<'_>) -> bool {
    let Some(members) = v.object_iter() else {
        return false;
    };
    let (mut code, mut message) = (None, None);
    for (k, val) in members {
        if code.is_none() && k.eq_str("code") {
            code = Some(val);
        } else if message.is_none() && k.eq_str("message") {
            message = Some(val);
        }
    }
    let int = code.is_some_and(|c| {
        c.kind() == Kind::Number && !c.as_bytes().iter().any(|b| matches!(b, b'.' | b'e' | b'E'))
    });
    int && message.is_some_and(|m| m.kind() == Kind::String)
}
