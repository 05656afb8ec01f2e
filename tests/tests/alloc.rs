//! Zero allocations: once a parser is warm, parsing a message of a shape it has
//! seen before, and reading everything in it, allocates nothing.
//!
//! This binary installs the counting global allocator of
//! `switchboard_tests::counting` (per-thread counts: tests run on several threads).

use std::fmt::{self, Write as _};
use std::hint::black_box;

use switchboard_tests::counting::{Counting, allocations};

use switchboard::{Code, Field, Item, Message, Params, Parser, ParserConfig, RawValue, Reason};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A `fmt::Write` into a fixed buffer: writing an error's `data` must not allocate.
struct FixedBuf {
    buf: [u8; 512],
    len: usize,
}

impl fmt::Write for FixedBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn fold(acc: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(acc.rotate_left(5), |a, &b| {
        a.wrapping_mul(31).wrapping_add(u64::from(b))
    })
}

/// Reads everything a handler could read from a raw value, recursing into containers.
fn walk_value(v: RawValue<'_>, depth: usize) -> u64 {
    let mut acc = fold(v.kind() as u64, v.as_bytes());
    acc = acc.wrapping_add(v.as_i64().unwrap_or(0) as u64);
    acc = acc.wrapping_add(v.as_u64().unwrap_or(0));
    acc = acc.wrapping_add(v.as_f64().map_or(0, f64::to_bits));
    acc = acc.wrapping_add(u64::from(v.as_bool().unwrap_or(false)) + u64::from(v.is_null()));
    acc = fold(acc, v.as_raw_str().unwrap_or_default());
    acc = fold(acc, v.as_plain_str().unwrap_or_default().as_bytes());
    acc = acc.wrapping_add(u64::from(v.str_eq("subtract")) + u64::from(v.str_eq("é😀\n")));
    acc = fold(acc, v.as_str().as_bytes());
    if depth < 16 {
        if let Some(elems) = v.array_iter() {
            for e in elems {
                acc = acc.wrapping_add(walk_value(e, depth + 1));
            }
        }
        if let Some(members) = v.object_iter() {
            for (k, val) in members {
                acc = fold(acc, k.raw());
                acc = acc.wrapping_add(u64::from(k.eq_str("minuend")));
                acc = acc.wrapping_add(walk_value(val, depth + 1));
            }
        }
    }
    acc
}

fn walk_params(p: Option<Params<'_>>) -> u64 {
    let Some(p) = p else { return 7 };
    let mut acc = fold(
        u64::from(p.is_array()) * 2 + u64::from(p.is_object()),
        p.as_bytes(),
    );
    acc = fold(acc, p.as_str().as_bytes());
    for e in p.iter() {
        acc = acc.wrapping_add(walk_value(e, 0));
    }
    for (k, v) in p.members() {
        acc = fold(acc, k.raw()).wrapping_add(walk_value(v, 0));
    }
    for name in ["minuend", "subtrahend", "s\"x", "absent", "min\u{fc}end"] {
        acc = acc.wrapping_add(p.get(name).map_or(1, |v| walk_value(v, 0)));
    }
    for i in [0, 1, 5, 1000] {
        acc = acc.wrapping_add(p.index(i).map_or(1, |v| walk_value(v, 0)));
    }
    acc.wrapping_add(walk_value(p.raw(), 0))
}

fn walk_error(e: &switchboard::Error<'_>) -> u64 {
    let mut out = FixedBuf {
        buf: [0; 512],
        len: 0,
    };
    write!(
        out,
        "{}|{}|{}|{}",
        e.data(),
        e,
        e.reason(),
        e.code().message()
    )
    .expect("fits the buffer");
    let mut acc = fold(e.code().as_i32() as u64, &out.buf[..out.len]);
    acc = fold(acc, e.id().as_bytes());
    acc = fold(acc, e.id().as_raw().as_bytes());
    acc.wrapping_add(e.offset().unwrap_or(0) as u64 + e.limit().unwrap_or(0) as u64)
}

fn walk_item(item: Item<'_>) -> u64 {
    match item {
        Item::Request(r) => {
            let m = r.method();
            let acc = fold(
                u64::from(m.is_exact()) + u64::from(m.is_reserved()),
                m.as_str().as_bytes(),
            );
            let acc = fold(acc, m.lookup_key().unwrap_or_default().as_bytes());
            let acc = acc.wrapping_add(u64::from(m == "subtract"));
            let id = r.id();
            let acc = fold(acc, id.as_bytes())
                .wrapping_add(u64::from(id.is_string()) + u64::from(id.is_number()));
            fold(acc, id.as_str().as_bytes()).wrapping_add(walk_params(r.params()))
        }
        Item::Notification(n) => {
            let m = n.method();
            let acc = fold(u64::from(m.is_exact()), m.as_str().as_bytes());
            acc.wrapping_add(u64::from(m == "update"))
                .wrapping_add(walk_params(n.params()))
        }
        Item::Response(r) => {
            let acc = fold(3, r.id().as_bytes());
            let acc = acc.wrapping_add(r.result().map_or(0, |v| walk_value(v, 0)));
            let acc = acc.wrapping_add(r.error().map_or(0, |v| walk_value(v, 0)));
            acc.wrapping_add(match r.outcome() {
                Ok(v) | Err(v) => fold(0, v.as_bytes()),
            })
        }
        Item::Error(e) => walk_error(&e),
    }
}

/// Reads everything in a message, the way a server would.
fn walk(msg: Message<'_>) -> u64 {
    match msg {
        Message::Request(r) => walk_item(Item::Request(r)),
        Message::Notification(n) => walk_item(Item::Notification(n)),
        Message::Response(r) => walk_item(Item::Response(r)),
        Message::Error(e) => walk_error(&e),
        Message::Batch(b) => {
            let mut acc = b.len() as u64 + u64::from(b.is_empty());
            for item in b.iter() {
                acc = acc.wrapping_add(walk_item(item));
            }
            for i in 0..b.len() {
                acc = fold(acc, b.raw(i).unwrap_or_default());
            }
            acc.wrapping_add(b.get(0).map_or(0, walk_item))
                .wrapping_add(b.get(b.len() - 1).map_or(0, walk_item))
        }
    }
}

/// What a message was classified as (owned, for assertions outside the measurement).
#[derive(Debug, PartialEq)]
enum Shape {
    Request,
    Notification,
    Response,
    Batch(usize),
    Error(Reason),
}

impl Shape {
    fn of(msg: &Message<'_>) -> Shape {
        match msg {
            Message::Request(_) => Shape::Request,
            Message::Notification(_) => Shape::Notification,
            Message::Response(_) => Shape::Response,
            Message::Batch(b) => Shape::Batch(b.len()),
            Message::Error(e) => Shape::Error(e.reason()),
        }
    }
}

/// Warm `parser` up on `input` once, then parse and read it again (twice) and
/// validate it: none of that may allocate.
fn assert_zero_alloc(parser: &mut Parser, input: &[u8]) {
    let warm = black_box(walk(parser.parse(input)));
    let _ = black_box(parser.validate(input));
    for round in 1..=2 {
        let (sum, n) = allocations(|| black_box(walk(parser.parse(black_box(input)))));
        assert_eq!(
            n, 0,
            "parse + read allocated {n} times (round {round} after warm-up)"
        );
        assert_eq!(sum, warm, "same input, same reading");
        let (_, n) = allocations(|| black_box(parser.validate(black_box(input))));
        assert_eq!(
            n, 0,
            "validate allocated {n} times (round {round} after warm-up)"
        );
    }
}

fn config(f: impl FnOnce(&mut ParserConfig)) -> ParserConfig {
    let mut c = ParserConfig::new();
    f(&mut c);
    c
}

/// One test per message shape: classified as expected, then zero allocations.
macro_rules! zero_alloc {
    ($name:ident, $input:expr, $expect:expr) => {
        zero_alloc!($name, ParserConfig::new(), $input, $expect);
    };
    ($name:ident, $config:expr, $input:expr, $expect:expr) => {
        #[test]
        fn $name() {
            let input: Vec<u8> = AsRef::<[u8]>::as_ref(&$input).to_vec();
            let mut parser = Parser::with_config($config);
            let shape = Shape::of(&parser.parse(&input));
            assert_eq!(shape, $expect);
            assert_zero_alloc(&mut parser, &input);
        }
    };
}

use Shape::Error as E;

// ---- requests, notifications, responses ----
zero_alloc!(
    small_request,
    br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
    Shape::Request
);
zero_alloc!(
    named_params,
    br#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":"abc"}"#,
    Shape::Request
);
zero_alloc!(
    escaped_method_and_keys,
    br#"{"json\u0072pc":"2\u002e0","\u006dethod":"su\u0062tract\u00e9\ud83d\ude00\n","p\u0061rams":{"min\u0075end":42,"s\"x":"\u00e9\ud83d\ude00\n","m\u00fcnd":[1,"\ud800"]},"i\u0064":"a\"b"}"#,
    Shape::Request
);
zero_alloc!(
    lone_surrogate_method,
    br#"{"jsonrpc":"2.0","method":"x\ud800y\udc00","id":null}"#,
    Shape::Request
);
zero_alloc!(params_4k, params_4k_input(), Shape::Request);
zero_alloc!(
    named_params_many_members,
    named_params_many_input(),
    Shape::Request
);
zero_alloc!(
    notification,
    br#"{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}"#,
    Shape::Notification
);
zero_alloc!(
    notification_params_null,
    br#"{"jsonrpc":"2.0","method":"n\u0075ll","params":null}"#,
    Shape::Notification
);
zero_alloc!(
    response_result,
    br#"{"jsonrpc":"2.0","result":{"a":[1,2.5,"x"]},"id":1}"#,
    Shape::Response
);
zero_alloc!(response_error, br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":{"x":1}},"id":"1"}"#, Shape::Response);

// ---- batches ----
zero_alloc!(batch_of_10, batch_input(10), Shape::Batch(10));
zero_alloc!(batch_of_100, batch_input(100), Shape::Batch(100));
zero_alloc!(batch_of_1000, batch_input(1000), Shape::Batch(1000));
// The smallest uniform batch found whose escaped method names outgrow the first
// arena chunks: the second parse must not allocate either.
zero_alloc!(
    batch_of_30_escaped_methods,
    escaped_batch(30),
    Shape::Batch(30)
);

// ---- -32700, one per reason ----
zero_alloc!(parse_empty, b"", E(Reason::Empty));
zero_alloc!(parse_whitespace_only, b" \r\n\t ", E(Reason::Empty));
zero_alloc!(parse_bom, b"\xEF\xBB\xBF{}", E(Reason::ByteOrderMark));
zero_alloc!(
    parse_unexpected_byte,
    br#"{"jsonrpc" "2.0"}"#,
    E(Reason::UnexpectedByte)
);
zero_alloc!(
    parse_unexpected_end,
    br#"{"jsonrpc":"2.0","method":"x","id":1"#,
    E(Reason::UnexpectedEnd)
);
zero_alloc!(
    parse_trailing_bytes,
    br#"{"jsonrpc":"2.0","method":"x","id":1} x"#,
    E(Reason::TrailingBytes)
);
zero_alloc!(
    parse_invalid_utf8,
    b"{\"jsonrpc\":\"2.0\",\"method\":\"\xC0\xAF\",\"id\":1}",
    E(Reason::InvalidUtf8)
);
zero_alloc!(
    parse_control_character,
    b"{\"jsonrpc\":\"2.0\",\"method\":\"a\x01\",\"id\":1}",
    E(Reason::ControlCharacter)
);
zero_alloc!(
    parse_invalid_escape,
    br#"{"jsonrpc":"2.0","method":"\x","id":1}"#,
    E(Reason::InvalidEscape)
);
zero_alloc!(
    parse_invalid_number,
    br#"{"jsonrpc":"2.0","method":"x","id":01}"#,
    E(Reason::InvalidNumber)
);
zero_alloc!(
    parse_invalid_literal,
    br#"{"jsonrpc":"2.0","method":"x","id":nul}"#,
    E(Reason::InvalidLiteral)
);
zero_alloc!(
    parse_too_deep,
    format!("{}{}", "[".repeat(129), "]".repeat(129)),
    E(Reason::TooDeep)
);
zero_alloc!(
    parse_too_deep_params,
    format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":{}1{},"id":1}}"#,
        "[".repeat(500),
        "]".repeat(500)
    ),
    E(Reason::TooDeep)
);
zero_alloc!(
    parse_error_in_batch,
    br#"[{"jsonrpc":"2.0","method":"x","id":1},{"jsonrpc":"2.0","method":"x","id":1]"#,
    E(Reason::UnexpectedByte)
);

// ---- -32600, one per reason ----
zero_alloc!(
    too_large,
    config(|c| {
        c.max_message_bytes(16);
    }),
    br#"{"jsonrpc":"2.0","method":"x","id":1}"#,
    E(Reason::TooLarge)
);
zero_alloc!(empty_batch, b"[ ]", E(Reason::EmptyBatch));
zero_alloc!(batch_too_long, batch_input(1001), E(Reason::BatchTooLong));
zero_alloc!(
    batches_disabled,
    config(|c| {
        c.allow_batches(false);
    }),
    batch_input(10),
    E(Reason::BatchesDisabled)
);
zero_alloc!(not_an_object, br#""jsonrpc""#, E(Reason::NotAnObject));
zero_alloc!(
    not_an_object_in_batch,
    b"[1,true,null,\"x\",[]]",
    Shape::Batch(5)
);
zero_alloc!(
    duplicate_jsonrpc,
    br#"{"jsonrpc":"2.0","method":"x","json\u0072pc":"2.0","id":1}"#,
    E(Reason::Duplicate(Field::Jsonrpc))
);
zero_alloc!(
    duplicate_method,
    br#"{"jsonrpc":"2.0","method":"a","m\u0065thod":"b","id":1}"#,
    E(Reason::Duplicate(Field::Method))
);
zero_alloc!(
    duplicate_params,
    br#"{"jsonrpc":"2.0","method":"a","params":[],"params":{},"id":1}"#,
    E(Reason::Duplicate(Field::Params))
);
zero_alloc!(
    duplicate_id,
    br#"{"jsonrpc":"2.0","method":"a","id":1,"\u0069d":2}"#,
    E(Reason::Duplicate(Field::Id))
);
zero_alloc!(
    duplicate_result,
    br#"{"jsonrpc":"2.0","result":1,"result":2,"id":1}"#,
    E(Reason::Duplicate(Field::Result))
);
zero_alloc!(
    duplicate_error,
    br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"e\u0072ror":{"code":2,"message":"n"},"id":1}"#,
    E(Reason::Duplicate(Field::Error))
);
zero_alloc!(
    missing_version,
    br#"{"method":"x","id":1}"#,
    E(Reason::MissingVersion)
);
zero_alloc!(
    wrong_version,
    br#"{"jsonrpc":"1.0","method":"x","id":1}"#,
    E(Reason::WrongVersion)
);
zero_alloc!(
    wrong_version_number,
    br#"{"jsonrpc":2.0,"method":"x","id":1}"#,
    E(Reason::WrongVersion)
);
zero_alloc!(
    missing_method,
    br#"{"jsonrpc":"2.0","id":1}"#,
    E(Reason::MissingMethod)
);
zero_alloc!(
    method_not_string,
    br#"{"jsonrpc":"2.0","method":1,"id":7}"#,
    E(Reason::MethodNotString)
);
zero_alloc!(
    params_wrong_type,
    br#"{"jsonrpc":"2.0","method":"x","params":"bar","id":1}"#,
    E(Reason::ParamsNotStructured)
);
zero_alloc!(
    id_wrong_type,
    br#"{"jsonrpc":"2.0","method":"x","id":{"a":1}}"#,
    E(Reason::IdWrongType)
);
zero_alloc!(
    id_wrong_type_bool,
    br#"{"jsonrpc":"2.0","method":"x","id":true}"#,
    E(Reason::IdWrongType)
);
zero_alloc!(
    response_without_id,
    br#"{"jsonrpc":"2.0","result":1}"#,
    E(Reason::ResponseWithoutId)
);
zero_alloc!(
    response_result_and_error,
    br#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":1}"#,
    E(Reason::ResultAndError)
);
zero_alloc!(
    response_malformed_error,
    br#"{"jsonrpc":"2.0","error":{"code":1.5,"message":"m"},"id":1}"#,
    E(Reason::MalformedErrorObject)
);

fn params_4k_input() -> Vec<u8> {
    let mut params = String::from("[");
    let mut i = 0;
    while params.len() < 4096 {
        params.push_str(&format!(
            r#"{i},"item\t{i}",{{"k{i}":[{i}.5e-3,null,true]}},"#
        ));
        i += 1;
    }
    params.push_str("\"end\"]");
    format!(r#"{{"jsonrpc":"2.0","method":"bulk","params":{params},"id":42}}"#).into_bytes()
}

fn named_params_many_input() -> Vec<u8> {
    let members: Vec<String> = (0..100).map(|i| format!(r#""k\u00e9{i}":{i}"#)).collect();
    format!(
        r#"{{"jsonrpc":"2.0","method":"m","params":{{{},"minuend":1}},"id":1}}"#,
        members.join(",")
    )
    .into_bytes()
}

/// A batch of `n` mixed elements: requests (some with escaped names), notifications,
/// responses and invalid elements.
fn batch_input(n: usize) -> Vec<u8> {
    let items: Vec<String> = (0..n)
        .map(|i| match i % 6 {
            0 => format!(r#"{{"jsonrpc":"2.0","method":"sum","params":[{i},2,4],"id":"{i}"}}"#),
            1 => r#"{"jsonrpc":"2.0","method":"notify_hello","params":[7]}"#.to_string(),
            2 => format!(r#"{{"jsonrpc":"2.0","method":"su\u0062tract\u00e9\ud83d\ude00_{i}","params":{{"minuend":42,"s\"x":{i}}},"id":{i}}}"#),
            3 => format!(r#"{{"jsonrpc":"2.0","result":[{i}],"id":{i}}}"#),
            4 => r#"{"foo":"boo"}"#.to_string(),
            _ => format!("{i}"),
        })
        .collect();
    format!("[{}]", items.join(",")).into_bytes()
}

/// `n` copies of one request whose method name has an escape (decoded into the arena).
fn escaped_batch(n: usize) -> Vec<u8> {
    let item = r#"{"jsonrpc":"2.0","method":"\u0061bcdefghijklmnopqrstuvwxyz0123456789","id":1}"#;
    format!("[{}]", vec![item; n].join(",")).into_bytes()
}

#[test]
fn counting_allocator_counts() {
    let (v, n) = allocations(|| black_box(vec![1u8; 16]));
    assert_eq!(n, 1, "the counting allocator must see a Vec allocation");
    drop(v);
    let (s, n) = allocations(|| black_box(String::from("x")) + "y");
    assert!(n >= 1);
    drop(s);
    let (_, n) = allocations(|| black_box(1 + 1));
    assert_eq!(n, 0);
}

#[test]
fn one_parser_for_every_shape() {
    // A server reuses one parser for whatever arrives: after one message of each
    // shape, a second round of all of them allocates nothing.
    let inputs: Vec<Vec<u8>> = vec![
        br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#.to_vec(),
        batch_input(100),
        params_4k_input(),
        br#"{"\u006dethod":"su\u0062tract","jsonrpc":"2.0","id":1}"#.to_vec(),
        batch_input(1001),
        b"[]".to_vec(),
        br#"{"jsonrpc":"2.0","method":1,"id":7}"#.to_vec(),
        format!("{}{}", "[".repeat(1000), "]".repeat(1000)).into_bytes(),
        batch_input(10),
        b"\xff".to_vec(),
        named_params_many_input(),
    ];
    let mut parser = Parser::new();
    let warm: Vec<u64> = inputs.iter().map(|i| walk(parser.parse(i))).collect();
    for i in &inputs {
        let _ = parser.validate(i);
    }
    let (sums, n) = allocations(|| {
        let mut sums = [0u64; 16];
        for (s, input) in sums.iter_mut().zip(&inputs) {
            *s = walk(parser.parse(input));
            let _ = black_box(parser.validate(input));
        }
        sums
    });
    assert_eq!(
        n, 0,
        "a warm parser allocated {n} times over a round of every shape"
    );
    assert_eq!(&sums[..inputs.len()], &warm[..]);
    // The classification was what the inputs claim.
    assert!(
        matches!(parser.parse(&inputs[4]), Message::Error(e) if e.reason() == Reason::BatchTooLong)
    );
    assert!(matches!(parser.parse(&inputs[9]), Message::Error(e) if e.code() == Code::ParseError));
}

#[test]
fn iterating_a_batch_again_does_not_allocate() {
    // Items are classified as they are iterated; reading a batch twice (for example
    // once to count requests, once to dispatch) must not allocate either.
    let input = batch_input(100);
    let mut parser = Parser::new();
    let _ = walk(parser.parse(&input));
    let Message::Batch(b) = parser.parse(&input) else {
        panic!("not a batch")
    };
    let first: u64 = b.iter().map(walk_item).fold(0, u64::wrapping_add);
    let (again, n) = allocations(|| {
        let mut acc = 0u64;
        for _ in 0..3 {
            acc = acc.wrapping_add(b.iter().map(walk_item).fold(0, u64::wrapping_add));
        }
        acc
    });
    assert_eq!(again, first.wrapping_mul(3));
    assert_eq!(n, 0, "re-iterating a batch allocated {n} times");
}

/// Typed handlers whose params are only borrowed or `Copy` allocate nothing per
/// message once the session is warm: the params are read once, by the
/// deserializer over the validated bytes, strings borrowed.
#[test]
fn typed_handlers_with_borrowed_or_copy_params_do_not_allocate() {
    use std::borrow::Cow;

    use serde::de::IgnoredAny;
    use switchboard::{BorrowedParams, Router, RpcError, Session};

    #[derive(serde::Deserialize)]
    struct Lookup<'a> {
        #[serde(borrow)]
        key: Cow<'a, str>,
        tag: &'a str,
        #[serde(borrow)]
        body: RawValue<'a>,
        #[serde(default)]
        limit: u32,
    }
    impl BorrowedParams for Lookup<'static> {
        type Of<'de> = Lookup<'de>;
    }

    let router = Router::builder()
        .typed("add", |(a, b): (i64, i64)| {
            a.checked_add(b).ok_or(RpcError::new(1, "overflow"))
        })
        .typed("ignore", |_: IgnoredAny| Ok(true))
        .typed_ref::<(&str,), _, _>("len", |(s,)| Ok(s.len()))
        .typed_ref::<Lookup, _, _>("lookup", |l| {
            Ok(l.key.len() + l.tag.len() + l.body.as_bytes().len() + l.limit as usize)
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"ignore","params":{{"a":[{}],"b":{{"c":"{}"}},"d":"e"}},"id":3}}"#,
        (0..400)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(","),
        "x".repeat(3000)
    );
    let cases: [(&[u8], &str); 5] = [
        (
            br#"{"jsonrpc":"2.0","method":"add","params":[2,3],"id":1}"#,
            r#""result":5"#,
        ),
        (
            br#"{"jsonrpc":"2.0","method":"len","params":["hello"],"id":2}"#,
            r#""result":5"#,
        ),
        (big.as_bytes(), r#""result":true"#),
        (
            br#"{"jsonrpc":"2.0","method":"lookup","params":{"key":"k","tag":"t","body":{"x":[1,2]},"other":[null]},"id":4}"#,
            r#""result":13"#,
        ),
        (
            br#"{"jsonrpc":"2.0","method":"add","params":{"a":1},"id":5}"#,
            r#""code":-32602"#,
        ),
    ];
    for (input, want) in cases {
        for round in 0..3 {
            let (resp, n) = allocations(|| {
                session
                    .handle(black_box(input))
                    .map(|r| String::from_utf8_lossy(r).contains(want))
            });
            assert_eq!(resp, Some(true), "{}", String::from_utf8_lossy(input));
            // The last case is a mismatch: its error's `data` allocates.
            if round > 0 && !want.contains("-32602") {
                assert_eq!(
                    n,
                    0,
                    "{} allocated {n} times (round {round})",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }
}

#[test]
fn typed_handlers_with_borrowed_results_do_not_allocate() {
    use std::borrow::Cow;

    use switchboard::{BorrowedParams, BorrowedResult, Router, Session};

    #[derive(serde::Deserialize)]
    struct Tool<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
        tag: &'a str,
        #[serde(default)]
        limit: u32,
    }
    impl BorrowedParams for Tool<'static> {
        type Of<'de> = Tool<'de>;
    }
    #[derive(serde::Serialize)]
    struct Answer<'a> {
        name: Cow<'a, str>,
        tags: [&'a str; 2],
        limit: u32,
    }
    impl BorrowedResult for Answer<'static> {
        type Of<'de> = Answer<'de>;
    }

    let router = Router::builder()
        // A borrowed echo: the answer is the message's own string.
        .typed_borrowed::<(&str,), &str, _>("echo", |(s,)| Ok(s))
        .typed_borrowed::<Tool, Answer, _>("tool", |t| {
            Ok(Answer {
                name: t.name,
                tags: [t.tag, t.tag],
                limit: t.limit,
            })
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);
    let cases: [(&[u8], &str); 3] = [
        (
            br#"{"jsonrpc":"2.0","method":"echo","params":["hello"],"id":1}"#,
            r#"{"jsonrpc":"2.0","result":"hello","id":1}"#,
        ),
        (
            br#"{"jsonrpc":"2.0","method":"tool","params":{"name":"ls","tag":"t","other":{"x":[1]}},"id":2}"#,
            r#"{"jsonrpc":"2.0","result":{"name":"ls","tags":["t","t"],"limit":0},"id":2}"#,
        ),
        (
            br#"{"jsonrpc":"2.0","method":"tool","params":{"limit":7,"tag":"\u0041","name":"a\"b"},"id":3}"#,
            "",
        ),
    ];
    for (input, want) in cases {
        for round in 0..3 {
            let (same, n) = allocations(|| {
                session.handle(black_box(input)).map(|r| {
                    if want.is_empty() {
                        // An escaped `&str` cannot borrow: a mismatch, -32602.
                        let code = br#""code":-32602"#;
                        r.windows(code.len()).any(|w| w == code)
                    } else {
                        r == want.as_bytes()
                    }
                })
            });
            assert_eq!(same, Some(true), "{}", String::from_utf8_lossy(input));
            // The mismatch's error `data` allocates.
            if round > 0 && !want.is_empty() {
                assert_eq!(
                    n,
                    0,
                    "{} allocated {n} times (round {round})",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }
}
