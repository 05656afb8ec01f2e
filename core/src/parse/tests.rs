//! Table tests of the classifier: one macro line per case.

use super::*;

macro_rules! case {
    ($name:ident, $input:expr, |$m:ident| $check:expr) => {
        #[test]
        fn $name() {
            let mut p = Parser::new();
            let input: Vec<u8> = ($input).to_vec();
            let $m = p.parse(&input);
            assert!($check, "{:?}", $m);
        }
    };
}

fn err(m: &Message<'_>) -> (i32, Reason, String) {
    match m {
        Message::Error(e) => (e.code().as_i32(), e.reason(), e.id().as_str().to_string()),
        other => panic!("not an error: {other:?}"),
    }
}

case!(
    request,
    br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
    |m| matches!(m, Message::Request(r) if r.method() == "subtract" && r.id().as_bytes() == b"1")
);
case!(
    notification,
    br#"{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}"#,
    |m| matches!(m, Message::Notification(n) if n.method() == "update")
);
case!(
    escaped_method,
    br#"{"jsonrpc":"2.0","method":"su\u0062tract","id":"a\"b"}"#,
    |m| matches!(m, Message::Request(r) if r.method() == "subtract" && r.id().as_bytes() == br#""a\"b""#)
);
case!(
    escaped_key,
    br#"{"json\u0072pc":"2.0","\u006dethod":"x","i\u0064":-0}"#,
    |m| matches!(m, Message::Request(r) if r.method() == "x" && r.id().as_bytes() == b"-0")
);
case!(
    dup_escaped,
    br#"{"jsonrpc":"2.0","method":"a","m\u0065thod":"b","id":1}"#,
    |m| err(&m) == (-32600, Reason::Duplicate(Field::Method), "null".into())
);
case!(
    lone_surrogate_method,
    br#"{"jsonrpc":"2.0","method":"\ud800","id":1}"#,
    |m| matches!(m, Message::Request(r) if !r.method().is_exact() && r.method().lookup_key().is_none())
);
case!(
    parse_error,
    br#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#,
    |m| err(&m).0 == -32700
);
case!(empty_batch, b"[]", |m| err(&m)
    == (-32600, Reason::EmptyBatch, "null".into()));
case!(
    bad_batch,
    b"[1,2,3]",
    |m| matches!(m, Message::Batch(b) if b.len() == 3
    && b.iter().all(|i| matches!(i, Item::Error(e) if e.reason() == Reason::NotAnObject)))
);
case!(
    deep_ok,
    format!("{}{}", "[".repeat(128), "]".repeat(128)).as_bytes(),
    |m| matches!(m, Message::Batch(b) if b.len() == 1)
);
case!(
    deep_fail,
    format!("{}{}", "[".repeat(129), "]".repeat(129)).as_bytes(),
    |m| err(&m).1 == Reason::TooDeep
);
case!(
    deep_obj,
    format!("{}1{}", r#"{"a":"#.repeat(129), "}".repeat(129)).as_bytes(),
    |m| err(&m).1 == Reason::TooDeep
);
case!(mixed_nesting, br#"{"jsonrpc":"2.0","method":"m","params":[{"a":[1,{"b":[]},{}],"c":{"d":"e"}},[[],[{}]]],"id":null}"#,
    |m| matches!(m, Message::Request(r) if r.id().is_null()));
case!(
    nested_bad_comma,
    br#"{"jsonrpc":"2.0","method":"m","params":[{"a":1,}],"id":1}"#,
    |m| err(&m).0 == -32700
);
case!(
    response_ok,
    br#"{"jsonrpc":"2.0","result":19,"id":1}"#,
    |m| matches!(m, Message::Response(r) if r.result().unwrap().as_bytes() == b"19")
);
case!(
    response_err,
    br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"1"}"#,
    |m| matches!(m, Message::Response(r) if r.error().is_some())
);
case!(
    response_bad_err,
    br#"{"jsonrpc":"2.0","error":{"code":1.5,"message":"x"},"id":"1"}"#,
    |m| err(&m) == (-32600, Reason::MalformedErrorObject, "\"1\"".into())
);
case!(
    escaped_method_with_dup_extra,
    br#"{"jsonrpc":"2.0","method":"\u0061b","result":1,"result":2,"id":1}"#,
    |m| matches!(m, Message::Request(r) if r.method() == "ab")
);
case!(escaped_methods_in_batch, br#"[{"jsonrpc":"2.0","method":"\u0061b","id":1},{"jsonrpc":"2.0","method":"cd","id":2},{"jsonrpc":"2.0","method":"e\u0066","id":3}]"#,
    |m| matches!(m, Message::Batch(b) if b.iter().map(|i| match i { Item::Request(r) => r.method().as_str(), _ => "?" }).collect::<Vec<_>>() == ["ab", "cd", "ef"]));

/// One scan of `input` (the compact path allowed, or the general path alone): its
/// verdict and every span recorded, as text to compare.
fn scan_verdict(input: &[u8], general: bool, max_depth: usize) -> String {
    use super::scan::{ElemSink, ObjSpans, Scanner};
    struct Sink(Vec<ObjSpans>);
    impl ElemSink for Sink {
        fn clear(&mut self) {
            self.0.clear();
        }
        fn push(&mut self, s: ObjSpans) {
            self.0.push(s);
        }
    }
    let mut stack = vec![0u64; max_depth / 64 + 1];
    let mut top = ObjSpans::default();
    let mut sink = Sink(Vec::new());
    let mut long = crate::long::LongValues::default();
    let sc = Scanner::new(input, max_depth, &mut stack, &mut long);
    let mut sc = if general { sc.general_only() } else { sc };
    let r = sc.scan_message(&mut top, &mut sink, 10);
    // What `compact` promises the classifier must hold; then it is left out of
    // the comparison (only the compact path sets it).
    for o in std::iter::once(&mut top).chain(sink.0.iter_mut()) {
        if o.compact {
            assert!(!general);
            assert_eq!(o.get(Field::Jsonrpc).of(input), br#""2.0""#);
            let m = o.get(Field::Method).of(input);
            assert!(m.len() >= 2 && m[0] == b'"' && m[m.len() - 1] == b'"');
            let body = &m[1..m.len() - 1];
            assert!(
                body.iter()
                    .all(|&c| (0x20..0x80).contains(&c) && c != b'\\' && c != b'"')
            );
            o.compact = false;
        }
    }
    format!("{r:?} {top:?} {:?}", sink.0)
}

/// The compact fast path and the general path record the same spans and give the
/// same verdict, on compact messages, every truncation of them, and byte mutations.
#[test]
#[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
fn compact_path_matches_general_path() {
    let run = scan_verdict;
    let methods = [
        r#""eth_getBalance""#,
        r#""abcdefghijklmnopqrstuvwxyz0123456789""#,
        r#""abcdefghijklmnopqé""#,
        "\"abcdefghijklmnopq\tr\"",
        r#""abcdefghijklmnop\"""#,
        r#""su\u0062tract""#,
        r#""héllo""#,
        r#""""#,
        r#""\ud800""#,
        "7",
        r#""a"#,
    ];
    let params = [
        "",
        r#","params":[42,23]"#,
        r#","params":[1,"a",true,false,null,-1,0.5,1e3,0,-0]"#,
        r#","params":[]"#,
        r#","params":[1,[2]]"#,
        r#","params":[1 ,2]"#,
        r#","params":["\u00e9","x\"y","é"]"#,
        r#","params":[1,]"#,
        r#","params":[01]"#,
        r#","params":[1x]"#,
        r#","params":[tru]"#,
        r#","params":[123456789012345678901234567890]"#,
        r#","params":[1.]"#,
        r#","params":[{}]"#,
        r#","params":{"a":[1,{"b":null}],"c":"d"}"#,
        r#","params":null"#,
        r#","params":"x""#,
        r#","params":[1,]"#,
        r#","params":[[[[[[1]]]]]]"#,
        r#","params":[],"params":[]"#,
        r#","params" :[1]"#,
        r#","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"]"#,
        r#","params":{"subtrahend":23,"minuend":42}"#,
        r#","params":{}"#,
        r#","params":{"a":1,"a":2}"#,
        r#","params":{"\u0061":"x\"y","é":true,"n":null,"f":false,"x":-0.5e3}"#,
        r#","params":{"a":1,}"#,
        r#","params":{"a" :1}"#,
        r#","params":{"a": 1}"#,
        r#","params":{"a":1 }"#,
        r#","params":{"a"}"#,
        r#","params":{"a"1}"#,
        r#","params":{"a","b":1}"#,
        r#","params":{"a":}"#,
        r#","params":{a:1}"#,
        r#","params":{"a":01}"#,
        r#","params":{"a":[1],"b":2}"#,
        r#","params":{"a":1,"b":{"c":2}}"#,
        r#","params":{"a":"\x"}"#,
        r#","params":{"\x":1}"#,
        r#","params":{"a":1"#,
        r#","params":{"a":1,"#,
        r#","params":{"#,
    ];
    let ids = [
        "",
        r#","id":1"#,
        r#","id":"x\"y""#,
        r#","id":-0.5e3"#,
        r#","id":null"#,
        r#","id":[1]"#,
        r#","id":1,"id":2"#,
        r#","id":01"#,
    ];
    let tails = ["}", "} ", "}x", ",\"x\":1}", "", "}}"];
    let mut n = 0;
    for m in methods {
        for p in params {
            for id in ids {
                for t in tails {
                    for order in 0..2 {
                        let body = if order == 0 {
                            format!("{p}{id}")
                        } else {
                            format!("{id}{p}")
                        };
                        let msg = format!(r#"{{"jsonrpc":"2.0","method":{m}{body}{t}"#);
                        let b = msg.as_bytes();
                        for depth in [1, 2, 3, 128] {
                            assert_eq!(
                                run(b, false, depth),
                                run(b, true, depth),
                                "{msg} depth {depth}"
                            );
                        }
                        // The same object as batch elements (depth 2).
                        for batch in [
                            format!("[{msg},{msg}]"),
                            format!("[1, {msg}]"),
                            format!("[{msg}"),
                        ] {
                            let bb = batch.as_bytes();
                            for depth in [2, 3, 128] {
                                assert_eq!(
                                    run(bb, false, depth),
                                    run(bb, true, depth),
                                    "{batch} depth {depth}"
                                );
                            }
                        }
                        if m == methods[0] && t == "}" {
                            for cut in 0..b.len() {
                                assert_eq!(run(&b[..cut], false, 128), run(&b[..cut], true, 128));
                            }
                            for i in 0..b.len() {
                                for x in [b'"', b'\\', b'}', b',', 0x80, b' '] {
                                    let mut v = b.to_vec();
                                    v[i] = x;
                                    assert_eq!(run(&v, false, 128), run(&v, true, 128), "{v:?}");
                                }
                            }
                        }
                        n += 1;
                    }
                }
            }
        }
    }
    assert!(n > 1000);
}

/// Where the compact path declines, the general path goes on from there
/// ([`Compact::Resume`](super::scan)) or from the start: either way the verdict (the
/// error's reason and offset) and the spans equal the general path's alone, on small
/// messages (the corpus's among them) with every truncation, every byte of a set
/// written over and inserted at every position, and every byte deleted; alone and as
/// batch elements.
#[test]
#[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
fn compact_declines_match_general_path() {
    let messages: [&[u8]; 16] = [
        br#"{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}"#,
        br#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#,
        br#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
        br#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":1}"#,
        br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
        br#"{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":3}"#,
        br#"{"jsonrpc":"2.0","method":"sum","params":[1,2,{"a":[3]}],"id":"x"}"#,
        br#"{"jsonrpc":"2.0","method":"a\u0062","params":{"k":"v"},"id":1}"#,
        br#"{"jsonrpc":"2.0","method":"m","id":1,"id":2}"#,
        br#"{"jsonrpc":"2.0","method":"m","params":[],"params":{}}"#,
        br#"{"jsonrpc":"2.0","method":"m","params":"s","x":[1]}"#,
        br#"{"jsonrpc":"2.0","method":"m","id":null}"#,
        br#"{"jsonrpc":"2.0","method":"m","params":[true,false,null,-1.5e3,"\n"]}"#,
        br#"{"jsonrpc":"2.0","method":"m","params":[[1],{}],"id":-0}"#,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"\xc3\xa9\",\"id\":[]}",
        br#"{"jsonrpc":"2.0","method":"m"}"#,
    ];
    let bytes = [
        b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'1', b'-', b'.', b'e', b'E', b't',
        b'f', b'n', b'u', b'x', b'a', b'/', b' ', b'\t', b'\n', b'\r', 0x00, 0x1f, 0x7f, 0x80,
        0xc3, 0xed, 0xff,
    ];
    let check = |m: &[u8]| {
        let mut batch = br#"[{"jsonrpc":"2.0","method":"m","id":1},"#.to_vec();
        batch.extend_from_slice(m);
        batch.push(b']');
        for input in [m, &batch[..]] {
            assert_eq!(
                scan_verdict(input, false, 128),
                scan_verdict(input, true, 128),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    };
    let mut n = 0;
    for m in messages {
        for depth in [1, 2, 3, 128] {
            assert_eq!(scan_verdict(m, false, depth), scan_verdict(m, true, depth));
        }
        for cut in 0..m.len() {
            check(&m[..cut]);
        }
        for i in 0..m.len() {
            let mut v = m.to_vec();
            v.remove(i);
            check(&v);
            for &x in &bytes {
                let mut v = m.to_vec();
                v[i] = x;
                check(&v);
                v[i] = m[i];
                v.insert(i, x);
                check(&v);
                n += 1;
            }
        }
    }
    assert!(n > 10_000);
}

/// The compact path takes the four request members in any order: on every order of
/// every subset of them (variants of each value included: `"2.0"` and what is not
/// quite it, methods it declines, params and ids of every shape), with a duplicate
/// or another member (`result`, `error`, an escaped or unknown name, whitespace)
/// at every position, it records the same spans and gives the same verdict as the
/// general path, alone and as a batch element, at several depth limits; and it
/// does record the ordinary orders (so the fast path is really taken).
#[test]
#[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
fn compact_path_any_member_order_matches_general_path() {
    let jsonrpcs = [
        r#""jsonrpc":"2.0""#,
        r#""jsonrpc":"2.1""#,
        r#""jsonrpc":"2.0 ""#,
        r#""jsonrpc":"2\u002e0""#,
        r#""jsonrpc":2.0"#,
        r#""jsonrpc":"2.0"#,
    ];
    let methods = [
        r#""method":"tools/call""#,
        r#""method":"""#,
        r#""method":"su\u0062tract""#,
        r#""method":"héllo""#,
        r#""method":7"#,
        r#""method":"a"#,
    ];
    let params = [
        r#""params":{"name":"get_forecast","arguments":{"location":{"city":"Zürich"},"days":3}}"#,
        r#""params":[42,23]"#,
        r#""params":{}"#,
        r#""params":null"#,
        r#""params":"x""#,
        r#""params":[1 ]"#,
        r#""params":{"a":1,}"#,
    ];
    let ids = [
        r#""id":"call-42""#,
        r#""id":1"#,
        r#""id":"x\"y""#,
        r#""id":null"#,
        r#""id":[1]"#,
        r#""id":01"#,
    ];
    let extras = [
        r#""result":1"#,
        r#""error":{"code":1,"message":"m"}"#,
        r#""x":1"#,
        r#""\u0069d":2"#,
        r#""idx":1"#,
        r#""jsonrpcx":"2.0""#,
        r#""params" :[]"#,
        r#" "id":3"#,
    ];
    fn permutations(items: &[String]) -> Vec<Vec<String>> {
        if items.len() <= 1 {
            return vec![items.to_vec()];
        }
        let mut out = Vec::new();
        for i in 0..items.len() {
            let mut rest = items.to_vec();
            let first = rest.remove(i);
            for mut p in permutations(&rest) {
                p.insert(0, first.clone());
                out.push(p);
            }
        }
        out
    }
    let check = |members: &[String]| {
        let msg = format!("{{{}}}", members.join(","));
        let b = msg.as_bytes();
        for depth in [1, 2, 3, 128] {
            assert_eq!(
                scan_verdict(b, false, depth),
                scan_verdict(b, true, depth),
                "{msg} depth {depth}"
            );
        }
        let batch = format!(r#"[{msg},{{"jsonrpc":"2.0","method":"m","id":1}}]"#);
        let bb = batch.as_bytes();
        for depth in [2, 128] {
            assert_eq!(
                scan_verdict(bb, false, depth),
                scan_verdict(bb, true, depth),
                "{batch} depth {depth}"
            );
        }
    };
    let mut n = 0;
    // Each member absent or one of a few values (the first value of each, the one
    // the compact path takes, in every combination with the others).
    for j in std::iter::once(None).chain(jsonrpcs.iter().map(Some)) {
        for m in std::iter::once(None).chain(methods.iter().map(Some)) {
            for (pi, p) in std::iter::once(None)
                .chain(params.iter().map(Some))
                .enumerate()
            {
                for (ii, i) in std::iter::once(None)
                    .chain(ids.iter().map(Some))
                    .enumerate()
                {
                    // Keep the product small: odd params with plain ids and the reverse.
                    if pi > 2 && ii > 2 {
                        continue;
                    }
                    let set: Vec<String> = [j, m, p, i]
                        .into_iter()
                        .flatten()
                        .map(|s| s.to_string())
                        .collect();
                    for order in permutations(&set) {
                        check(&order);
                        n += 1;
                    }
                }
            }
        }
    }
    // Duplicates and other members at every position of every order of the four.
    let four: Vec<String> = [jsonrpcs[0], methods[0], params[0], ids[0]]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let others: Vec<String> = extras
        .iter()
        .map(|s| s.to_string())
        .chain(four.iter().cloned())
        .chain([
            jsonrpcs[1].to_string(),
            methods[2].to_string(),
            params[1].to_string(),
            ids[1].to_string(),
        ])
        .collect();
    for order in permutations(&four) {
        for x in &others {
            for at in 0..=order.len() {
                let mut v = order.clone();
                v.insert(at, x.clone());
                check(&v);
                n += 1;
            }
        }
    }
    assert!(n > 10_000, "{n}");
    // The fast path is taken on every order of the request members.
    for order in permutations(&four) {
        let msg = format!("{{{}}}", order.join(","));
        let mut stack = vec![0u64; 3];
        let mut top = super::scan::ObjSpans::default();
        struct Drop0;
        impl super::scan::ElemSink for Drop0 {
            fn clear(&mut self) {}
            fn push(&mut self, _: super::scan::ObjSpans) {}
        }
        let r = super::scan::Scanner::new(msg.as_bytes(), 128, &mut stack, &mut Default::default())
            .scan_message(&mut top, &mut Drop0, 10);
        assert!(r.is_ok() && top.compact, "{msg}");
    }
}

/// The allocation-free writer of `data` gives the same bytes as `Display`, and valid JSON.
#[test]
fn error_data_writer_matches_display() {
    let reasons = [
        Reason::Empty,
        Reason::TooDeep,
        Reason::WrongVersion,
        Reason::Duplicate(Field::Params),
        Reason::BatchTooLong,
        Reason::UnknownMethod,
        Reason::MalformedErrorObject,
    ];
    for r in reasons {
        for (offset, limit) in [
            (None, None),
            (Some(7), None),
            (None, Some(1000)),
            (Some(0), Some(128)),
        ] {
            let mut e = Error::new(r, Id::NULL);
            e.offset = offset;
            e.limit = limit;
            let mut out = Vec::new();
            e.data().write_to(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), e.data().to_string());
            let v: serde_json::Value = serde_json::from_str(&e.data().to_string()).unwrap();
            assert_eq!(v["reason"], r.as_str());
        }
    }
}

/// The whole error response (its fast fixed-size ends included) is the head, the
/// closing braces and the id member, for every reason, offsets around the fast
/// path's bound, limits, and ids other than `null`.
#[test]
fn whole_error_responses_match_head_and_id() {
    let ids: &[&[u8]] = &[b"null", b"1", br#""x""#, b"nul", br#""null""#];
    let offsets = (0..=120)
        .map(Some)
        .chain([None, Some(999), Some(usize::MAX)]);
    let mut offsets: Vec<Option<usize>> = offsets.collect();
    let (mut ids, mut limits) = (ids, &[None, Some(5), Some(1000)][..]);
    if cfg!(miri) {
        // Every reason still, but only the digit-count edges (63 000 cases
        // take many minutes under Miri).
        offsets = [0, 9, 10, 99, 100, usize::MAX].map(Some).to_vec();
        offsets.push(None);
        (ids, limits) = (&ids[..1], &limits[1..2]);
    }
    for &r in Reason::ALL.iter() {
        for &offset in &offsets {
            for &limit in limits {
                for &id in ids {
                    let mut e = Error::new(r, Id::new_validated(id));
                    e.offset = offset;
                    e.limit = limit;
                    let mut want = b"x".to_vec();
                    crate::envelope::core_error_response_head(&mut want, &e);
                    want.extend_from_slice(b",\"id\":");
                    want.extend_from_slice(id);
                    want.push(b'}');
                    let mut got = b"x".to_vec();
                    crate::envelope::core_error_response(&mut got, &e);
                    assert_eq!(
                        String::from_utf8_lossy(&got),
                        String::from_utf8_lossy(&want),
                        "{r:?} {offset:?} {limit:?}"
                    );
                }
            }
        }
    }
}

/// The static response heads (laid out at compile time) give the bytes the
/// piecewise writer gives, for every reason, with and without offset and limit;
/// `Reason::index` is `Reason::ALL`'s order.
#[test]
fn static_error_responses_match_the_piecewise_writer() {
    use crate::envelope::HEAD as RESPONSE_PREFIX;
    for (i, &r) in Reason::ALL.iter().enumerate() {
        assert_eq!(r.index(), i, "{r:?}");
        for (offset, limit) in [
            (None, None),
            (Some(7), None),
            (None, Some(1000)),
            (Some(0), Some(128)),
            (Some(usize::MAX), Some(u32::MAX as usize)),
        ] {
            let mut e = Error::new(r, Id::NULL);
            e.offset = offset;
            e.limit = limit;
            let mut want = RESPONSE_PREFIX.to_vec();
            want.extend_from_slice(b"\"error\":{\"code\":");
            want.extend_from_slice(r.code().as_i32().to_string().as_bytes());
            want.extend_from_slice(b",\"message\":");
            want.extend_from_slice(
                serde_json::to_string(r.code().message())
                    .unwrap()
                    .as_bytes(),
            );
            want.extend_from_slice(b",\"data\":");
            e.data().write_to(&mut want);
            want.push(b'}');
            let mut head = Vec::new();
            crate::envelope::core_error_response_head(&mut head, &e);
            assert_eq!(
                String::from_utf8_lossy(&head),
                String::from_utf8_lossy(&want)
            );
            let mut member = b"x".to_vec();
            crate::envelope::core_error_member(&mut member, &e);
            assert_eq!(member[1..], want[RESPONSE_PREFIX.len()..]);
            let v: serde_json::Value = serde_json::from_slice(&[&head[..], b"}"].concat()).unwrap();
            assert_eq!(v["error"]["data"]["reason"], r.as_str());
        }
    }
}

/// Messages long enough for the window loop whose params nest after flat members
/// (the corpus's MCP call among them): the compact path hands the nesting loop the
/// container it was in, at the nested value ([`Flat::Nested`](super::scan)), in the
/// usual member order and with `id` first, with the nested value near the start
/// and near the end of the input (its rest copied and padded, or not); the spans
/// and the verdict equal the general path's alone, on the message, every
/// truncation, a set of bytes written over every position, and as a batch element,
/// at several depth limits.
#[test]
#[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
fn compact_nested_params_in_long_messages_match_general_path() {
    let mcp: &[u8] = include_bytes!("../../../benches/corpus/mcp_tools_call.json");
    let long = format!(r#""{}""#, "x".repeat(420));
    let messages: Vec<Vec<u8>> = vec![
        mcp.to_vec(),
        String::from_utf8_lossy(mcp)
            .replace(r#""id":"call-42","method":"tools/call""#, r#""method":"tools/call","id":"call-42""#)
            .into_bytes(),
        format!(r#"{{"jsonrpc":"2.0","method":"m","id":{long},"params":[1,"a",[2,{{"k":[]}}],3]}}"#)
            .into_bytes(),
        format!(r#"{{"id":{long},"params":{{"a":1,"b":{{"c":[true,null]}},"d":"e"}},"jsonrpc":"2.0","method":"m"}}"#)
            .into_bytes(),
        format!(r#"{{"jsonrpc":"2.0","method":"m","params":[[{}0]],"id":7}}"#, "1,".repeat(300))
            .into_bytes(),
    ];
    let bytes = [
        b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'1', b' ', 0x00, 0x80,
    ];
    let check = |m: &[u8], depths: &[usize]| {
        for &depth in depths {
            assert_eq!(
                scan_verdict(m, false, depth),
                scan_verdict(m, true, depth),
                "{} depth {depth}",
                String::from_utf8_lossy(m)
            );
        }
    };
    for m in &messages {
        check(m, &[1, 2, 3, 4, 128]);
        let mut batch = br#"[{"jsonrpc":"2.0","method":"m","id":1},"#.to_vec();
        batch.extend_from_slice(m);
        batch.push(b']');
        check(&batch, &[2, 3, 128]);
        for cut in 0..m.len() {
            check(&m[..cut], &[128]);
        }
        for i in 0..m.len() {
            for &x in &bytes {
                let mut v = m.clone();
                v[i] = x;
                check(&v, &[128]);
            }
        }
    }
    // The fast path records them.
    for m in &messages {
        let mut stack = vec![0u64; 3];
        let mut top = super::scan::ObjSpans::default();
        struct Drop0;
        impl super::scan::ElemSink for Drop0 {
            fn clear(&mut self) {}
            fn push(&mut self, _: super::scan::ObjSpans) {}
        }
        let r = super::scan::Scanner::new(m, 128, &mut stack, &mut Default::default())
            .scan_message(&mut top, &mut Drop0, 10);
        assert!(r.is_ok() && top.compact, "{}", String::from_utf8_lossy(m));
    }
}
