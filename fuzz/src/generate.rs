//! Near-valid JSON-RPC messages from `arbitrary` input: the right members with
//! wrong types, duplicates, escaped spellings, deep nesting, huge numbers, lone
//! surrogates, invalid UTF-8 and batches, so the fuzzer spends its time past the
//! first byte.

use arbitrary::{Arbitrary, Result, Unstructured};

/// Method names worth hitting: the demo router's, reserved ones and near misses.
const METHODS: &[&str] = &[
    "subtract",
    "sum",
    "get_data",
    "eth_getBalance",
    "update",
    "notify_hello",
    "notify_sum",
    "rpc.discover",
    "echo",
    "fail",
    "note",
    "Subtract",
    "subtrac",
    "",
    "rpc.",
    "é",
];

const KEYS: &[&str] = &[
    "jsonrpc",
    "method",
    "params",
    "id",
    "result",
    "error",
    "code",
    "message",
    "data",
    "minuend",
    "subtrahend",
    "a",
];

/// One character of a generated string.
#[derive(Arbitrary, Debug, Clone)]
pub enum GChar {
    /// A plain character.
    Char(char),
    /// `\uXXXX` of a character (surrogate pairs for astral ones).
    UEscape(char),
    /// One of `\" \\ \/ \b \f \n \r \t`.
    Short(u8),
    /// A lone surrogate escape `\uD800`..`\uDFFF`.
    Lone(u16),
    /// A raw byte, perhaps not UTF-8 or a control byte.
    Byte(u8),
    /// A bad escape (`\x`, `\u12`).
    BadEscape(u8),
}

/// A generated string token.
#[derive(Arbitrary, Debug, Clone)]
pub struct GStr(pub Vec<GChar>);

fn render_char(c: &GChar, out: &mut Vec<u8>) {
    match *c {
        GChar::Char(c) => {
            let mut b = [0u8; 4];
            match c {
                '"' | '\\' => out.extend_from_slice(&[b'\\', c as u8]),
                c if (c as u32) < 0x20 => {
                    out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
                }
                c => out.extend_from_slice(c.encode_utf8(&mut b).as_bytes()),
            }
        }
        GChar::UEscape(c) => {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.extend_from_slice(format!("\\u{u:04X}").as_bytes());
            }
        }
        GChar::Short(i) => {
            let e = b"\"\\/bfnrt"[usize::from(i) % 8];
            out.extend_from_slice(&[b'\\', e]);
        }
        GChar::Lone(u) => {
            out.extend_from_slice(format!("\\u{:04x}", 0xD800 + (u % 0x800)).as_bytes());
        }
        GChar::Byte(b) => out.push(b),
        GChar::BadEscape(b) => {
            if b % 2 == 0 {
                out.extend_from_slice(&[b'\\', b]);
            } else {
                out.extend_from_slice(b"\\u12");
            }
        }
    }
}

/// A string token: a known word (perhaps escaped) or arbitrary characters.
#[derive(Arbitrary, Debug, Clone)]
pub enum GName {
    /// A known word; `mask` picks characters to write as `\u` escapes.
    Known(u8, u8),
    /// A known method name; `mask` as above.
    Method(u8, u8),
    /// Anything.
    Any(GStr),
}

fn render_word(word: &str, mask: u8, out: &mut Vec<u8>) {
    out.push(b'"');
    for (i, c) in word.chars().enumerate() {
        if mask & (1 << (i % 8)) != 0 && mask & 0x80 == 0 {
            render_char(&GChar::UEscape(c), out);
        } else {
            render_char(&GChar::Char(c), out);
        }
    }
    out.push(b'"');
}

fn render_name(n: &GName, out: &mut Vec<u8>) {
    match n {
        GName::Known(i, mask) => render_word(KEYS[usize::from(*i) % KEYS.len()], *mask, out),
        GName::Method(i, mask) => {
            render_word(METHODS[usize::from(*i) % METHODS.len()], *mask, out);
        }
        GName::Any(s) => {
            out.push(b'"');
            for c in &s.0 {
                render_char(c, out);
            }
            out.push(b'"');
        }
    }
}

/// A generated JSON value (or almost).
#[derive(Arbitrary, Debug, Clone)]
pub enum GValue {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float, written as Rust prints it (perhaps `NaN` or `inf`: invalid JSON).
    Float(f64),
    /// A number with many digits and perhaps an exponent (`1e400`, 10 000 digits).
    Huge(u16, i16),
    /// A hand-picked number token (some of them invalid).
    NumToken(u8),
    /// A string.
    Str(GName),
    /// An array.
    Arr(Vec<GValue>),
    /// An object (duplicate names welcome).
    Obj(Vec<(GName, GValue)>),
    /// `levels` nested arrays or objects around a value: around the depth limit.
    Deep(u8, bool, Box<GValue>),
    /// A misspelled literal or stray bytes.
    Junk(Vec<u8>),
    /// The string `"2.0"`, perhaps escaped.
    Version(u8),
}

const NUMS: &[&str] = &[
    "0",
    "-0",
    "1.5",
    "1e2",
    "1E+2",
    "-1e-2",
    "9007199254740993",
    "18446744073709551616",
    "-9223372036854775809",
    "0.0000001",
    "1.0",
    "01",
    "1.",
    ".5",
    "-",
    "+1",
    "1e",
    "0x10",
    "2.0",
    "-32700",
    "-32601",
    "1e400",
    "-1e400",
    "123456789012345678901234567890",
];

fn render_value(v: &GValue, depth: usize, out: &mut Vec<u8>) {
    // Past a few hundred levels the input says nothing new; bound recursion here.
    if depth > 300 {
        out.extend_from_slice(b"null");
        return;
    }
    match v {
        GValue::Null => out.extend_from_slice(b"null"),
        GValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        GValue::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
        GValue::Float(f) => out.extend_from_slice(f.to_string().as_bytes()),
        GValue::Huge(digits, exp) => {
            // Mostly short; rarely 10 000+ digits (as SPEC.md's resource bounds).
            let n = if *digits > 65_000 {
                10_000 + usize::from(*digits % 500)
            } else {
                usize::from(*digits % 40)
            }
            .max(1);
            out.push(b'1');
            out.extend(std::iter::repeat_n(b'7', n - 1));
            if *exp != 0 {
                out.extend_from_slice(format!("e{exp}").as_bytes());
            }
        }
        GValue::NumToken(i) => out.extend_from_slice(NUMS[usize::from(*i) % NUMS.len()].as_bytes()),
        GValue::Str(n) => render_name(n, out),
        GValue::Arr(items) => {
            out.push(b'[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                render_value(x, depth + 1, out);
            }
            out.push(b']');
        }
        GValue::Obj(members) => {
            out.push(b'{');
            for (i, (k, x)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                render_name(k, out);
                out.push(b':');
                render_value(x, depth + 1, out);
            }
            out.push(b'}');
        }
        GValue::Deep(levels, objects, inner) => {
            // Mostly right around the default limit of 128.
            let n = 120 + usize::from(*levels % 16);
            for _ in 0..n {
                out.extend_from_slice(if *objects { b"{\"a\":" } else { b"[" });
            }
            render_value(inner, depth + n, out);
            for _ in 0..n {
                out.push(if *objects { b'}' } else { b']' });
            }
        }
        GValue::Junk(b) => out.extend_from_slice(b),
        GValue::Version(mask) => render_word("2.0", *mask, out),
    }
}

/// A member of a generated call.
#[derive(Arbitrary, Debug, Clone)]
pub enum GMember {
    /// `"jsonrpc":"2.0"` (key perhaps escaped).
    Version(u8),
    /// `"method":"<known>"`.
    Method(u8, GName),
    /// `"params":<value>`.
    Params(u8, GValue),
    /// `"id":<value>`.
    Id(u8, GValue),
    /// `"result":<value>`.
    Result(u8, GValue),
    /// `"error":{"code":..,"message":..}` or any value.
    Error(u8, GValue),
    /// Any member.
    Other(GName, GValue),
}

fn render_member(m: &GMember, out: &mut Vec<u8>) {
    let key = |name: &str, mask: &u8, out: &mut Vec<u8>| {
        // Mostly plain keys: escapes only when the mask's top bits say so.
        let mask = if mask & 0x60 == 0x60 {
            *mask & 0x7f
        } else {
            0x80
        };
        render_word(name, mask, out);
        out.push(b':');
    };
    match m {
        GMember::Version(k) => {
            key("jsonrpc", k, out);
            render_word("2.0", if k & 0x18 == 0x18 { k & 0x07 } else { 0x80 }, out);
        }
        GMember::Method(k, n) => {
            key("method", k, out);
            render_name(n, out);
        }
        GMember::Params(k, v) => {
            key("params", k, out);
            render_value(v, 1, out);
        }
        GMember::Id(k, v) => {
            key("id", k, out);
            render_value(v, 1, out);
        }
        GMember::Result(k, v) => {
            key("result", k, out);
            render_value(v, 1, out);
        }
        GMember::Error(k, v) => {
            key("error", k, out);
            if k & 1 == 0 {
                out.extend_from_slice(b"{\"code\":");
                render_value(v, 2, out);
                out.extend_from_slice(b",\"message\":\"m\"}");
            } else {
                render_value(v, 1, out);
            }
        }
        GMember::Other(n, v) => {
            render_name(n, out);
            out.push(b':');
            render_value(v, 1, out);
        }
    }
}

/// One generated batch element or message.
#[derive(Arbitrary, Debug, Clone)]
pub enum GElem {
    /// A well-formed call (`jsonrpc`, `method`, maybe `params`, maybe `id`), then
    /// extra members that may duplicate or break it.
    Call {
        /// Index into the known methods.
        method: u8,
        /// The params, if any.
        params: Option<GValue>,
        /// The id, if any (`None`: a notification).
        id: Option<GValue>,
        /// More members, in any order.
        extra: Vec<GMember>,
        /// Shuffle: rotate the members by this much.
        rotate: u8,
    },
    /// Members in any order.
    Members(Vec<GMember>),
    /// Any value.
    Value(GValue),
}

fn render_elem(e: &GElem, out: &mut Vec<u8>) {
    match e {
        GElem::Call {
            method,
            params,
            id,
            extra,
            rotate,
        } => {
            let mut members = vec![
                GMember::Version(0),
                GMember::Method(0, GName::Method(*method, 0x80)),
            ];
            if let Some(p) = params {
                members.push(GMember::Params(0, p.clone()));
            }
            if let Some(i) = id {
                members.push(GMember::Id(0, i.clone()));
            }
            members.extend(extra.iter().cloned());
            let r = usize::from(*rotate) % members.len();
            members.rotate_left(r);
            render_elem(&GElem::Members(members), out);
        }
        GElem::Members(ms) => {
            out.push(b'{');
            for (i, m) in ms.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                render_member(m, out);
            }
            out.push(b'}');
        }
        GElem::Value(v) => render_value(v, 0, out),
    }
}

/// A whitespace run: `' '`, `'\t'`, `'\n'`, `'\r'` (and rarely a non-JSON one).
fn whitespace(code: u8, out: &mut Vec<u8>) {
    for i in 0..(code % 4) {
        out.push(b" \t\n\r"[usize::from((code >> (2 + i)) & 3)]);
    }
    if code == 0xff {
        out.extend_from_slice("\u{a0}".as_bytes()); // not JSON whitespace
    }
}

/// One generated message.
#[derive(Arbitrary, Debug, Clone)]
pub struct GMessage {
    /// Leading and trailing whitespace codes.
    pub ws: (u8, u8),
    /// A single element, or a batch of them.
    pub batch: Option<Vec<GElem>>,
    /// The single element (ignored for a batch).
    pub single: GElem,
    /// A final mutation: `(kind, position, byte)`.
    pub mutation: Option<(u8, u16, u8)>,
}

impl GMessage {
    /// The message's bytes.
    pub fn render(&self) -> Vec<u8> {
        let mut out = Vec::new();
        whitespace(self.ws.0, &mut out);
        match &self.batch {
            Some(items) => {
                out.push(b'[');
                for (i, e) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    render_elem(e, &mut out);
                }
                out.push(b']');
            }
            None => render_elem(&self.single, &mut out),
        }
        whitespace(self.ws.1, &mut out);
        if let Some((kind, pos, byte)) = self.mutation {
            let pos = if out.is_empty() {
                0
            } else {
                usize::from(pos) % out.len()
            };
            match kind % 8 {
                0 => out.truncate(pos),
                1 => out.insert(pos, byte),
                2 if !out.is_empty() => out[pos] = byte,
                3 if !out.is_empty() => {
                    out.remove(pos);
                }
                _ => {}
            }
        }
        out
    }
}

/// A message from raw fuzzer bytes (for targets that take `&[u8]`).
pub fn message(data: &[u8]) -> Result<Vec<u8>> {
    let u = Unstructured::new(data);
    Ok(GMessage::arbitrary_take_rest(u)?.render())
}
