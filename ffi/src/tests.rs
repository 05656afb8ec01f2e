//! Unit tests of the exports, called from Rust (they also run under miri, which checks
//! the pointer handling: handles, the writer on the callback's frame, the views).

use core::ffi::{c_int, c_void};
use core::ptr;

use crate::*;

unsafe extern "C" fn answer(ud: *mut c_void, call: *const swb_call, w: *mut swb_writer) -> c_int {
    // SAFETY: the session passes a valid call and writer; `ud` is the counter below.
    unsafe {
        *ud.cast::<u32>() += 1;
        let call = &*call;
        match call.params.as_bytes() {
            b"[1]" => swb_writer_int64(w, -5) as c_int,
            b"[2]" => {
                let e = b"{\"why\":1}";
                swb_writer_error(w, 7, c"seven".as_ptr(), 5, e.as_ptr().cast(), e.len()) as c_int
            }
            b"[3]" => 1,
            _ => {
                let m = call.method.as_bytes();
                swb_writer_string(w, m.as_ptr().cast(), m.len()) as c_int
            }
        }
    }
}

unsafe extern "C" fn count_free(ud: *mut c_void) {
    // SAFETY: `ud` is the counter below.
    unsafe { *ud.cast::<u32>() += 100 };
}

fn handle(s: *mut swb_session, msg: &[u8]) -> Option<Vec<u8>> {
    let mut out = ptr::null();
    let mut n = 0usize;
    // SAFETY: live session, valid buffers.
    let rc = unsafe { swb_session_handle(s, msg.as_ptr(), msg.len(), &mut out, &mut n) };
    assert_eq!(rc, swb_result::Ok);
    // SAFETY: the response view is valid until the next call on the session.
    (n > 0).then(|| unsafe { core::slice::from_raw_parts(out, n) }.to_vec())
}

#[test]
fn builder_router_session_callbacks() {
    let mut calls = 0u32;
    let ud = (&raw mut calls).cast::<c_void>();
    let mut b = ptr::null_mut();
    // SAFETY: valid out pointers, names, callbacks and user data (which outlives the router).
    unsafe {
        assert_eq!(swb_router_builder_new(&mut b), swb_result::Ok);
        assert_eq!(
            swb_router_builder_method(
                b,
                c"m\u{e9}".as_ptr(),
                3,
                Some(answer),
                ud,
                Some(count_free)
            ),
            swb_result::Ok
        );
        assert_eq!(
            swb_router_builder_method(b, c"m\u{e9}".as_ptr(), 3, Some(answer), ud, None),
            swb_result::DuplicateMethod
        );
    }
    let mut r = ptr::null();
    // SAFETY: `b` is live and consumed here.
    let rc = unsafe { swb_router_builder_build(b, &mut r) };
    assert_eq!(rc, swb_result::Ok);
    let mut s = ptr::null_mut();
    // SAFETY: live router.
    assert_eq!(unsafe { swb_session_new(r, &mut s) }, swb_result::Ok);
    // SAFETY: our reference, released once; the session keeps its own.
    unsafe { swb_router_free(r) };

    let m = |p: &str, id: &str| {
        format!(r#"{{"jsonrpc":"2.0","method":"m\u00e9","params":{p},"id":{id}}}"#).into_bytes()
    };
    assert_eq!(
        handle(s, &m("[1]", "1")).unwrap(),
        br#"{"jsonrpc":"2.0","result":-5,"id":1}"#
    );
    assert_eq!(
        handle(s, &m("[2]", "\"x\"")).unwrap(),
        br#"{"jsonrpc":"2.0","error":{"code":7,"message":"seven","data":{"why":1}},"id":"x"}"#
    );
    let failed = handle(s, &m("[3]", "3")).unwrap();
    assert!(
        String::from_utf8(failed)
            .unwrap()
            .contains(r#""code":-32603"#)
    );
    assert_eq!(
        handle(s, &m("[4]", "4")).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"result\":\"m\u{e9}\",\"id\":4}".as_bytes()
    );
    assert_eq!(handle(s, br#"{"jsonrpc":"2.0","method":"m\u00e9"}"#), None);
    assert_eq!(calls, 5);
    // SAFETY: live session, freed once: the router's last reference goes with it.
    unsafe { swb_session_free(s) };
    assert_eq!(calls, 105);
}

#[test]
fn classifier_views_survive_scratch_growth() {
    let mut c = ptr::null_mut();
    // SAFETY: NULL config is the defaults; valid out pointer.
    let rc = unsafe { swb_classifier_new(ptr::null(), &mut c) };
    assert_eq!(rc, swb_result::Ok);
    let mut input = b"[".to_vec();
    for i in 0..40 {
        if i > 0 {
            input.push(b',');
        }
        input.extend_from_slice(format!(r#"{{"jsonrpc":"2.0","method":{i},"id":{i}}}"#).as_bytes());
    }
    input.push(b']');
    let mut top = swb_message::EMPTY;
    // SAFETY: live classifier, valid input and out pointer.
    let rc = unsafe { swb_classifier_classify(c, input.as_ptr(), input.len(), &mut top) };
    assert_eq!(rc, swb_result::Ok);
    assert_eq!(top.kind, swb_kind::Batch);
    assert_eq!(top.batch_len, 40);
    for i in 0..40 {
        let mut e = swb_message::EMPTY;
        // SAFETY: live classifier, valid out pointer.
        let rc = unsafe { swb_classifier_batch_get(c, i, &mut e) };
        assert_eq!(rc, swb_result::Ok);
        assert_eq!(e.kind, swb_kind::Error);
        // SAFETY: views valid until the next classify.
        let resp = unsafe { e.error_response.as_bytes() };
        let want = format!(
            r#"{{"jsonrpc":"2.0","error":{{"code":-32600,"message":"Invalid Request","data":{{"field":"method","reason":"must be a string"}}}},"id":{i}}}"#
        );
        assert_eq!(resp, want.as_bytes());
        // SAFETY: as above.
        let data = unsafe { e.error_data.as_bytes() };
        assert_eq!(data, br#"{"field":"method","reason":"must be a string"}"#);
        // SAFETY: as above.
        assert_eq!(unsafe { e.id.as_bytes() }, i.to_string().as_bytes());
    }
    // SAFETY: live classifier, freed once.
    unsafe { swb_classifier_free(c) };
}

/// A router with one method, `w`, answered by `cb`, and a session on it.
fn method_w(cb: swb_method_fn) -> (*const swb_router, *mut swb_session) {
    let mut b = ptr::null_mut();
    let mut r = ptr::null();
    let mut s = ptr::null_mut();
    // SAFETY: valid arguments throughout; the caller frees both with `free_w`.
    unsafe {
        assert_eq!(swb_router_builder_new(&mut b), swb_result::Ok);
        assert_eq!(
            swb_router_builder_method(b, c"w".as_ptr(), 1, cb, ptr::null_mut(), None),
            swb_result::Ok
        );
        assert_eq!(swb_router_builder_build(b, &mut r), swb_result::Ok);
        assert_eq!(swb_session_new(r, &mut s), swb_result::Ok);
    }
    (r, s)
}

/// Frees what `method_w` made.
fn free_w(r: *const swb_router, s: *mut swb_session) {
    // SAFETY: live handles from `method_w`, freed once.
    unsafe {
        swb_session_free(s);
        swb_router_free(r);
    }
}

#[test]
fn writer_refuses_second_answers_and_bad_values() {
    unsafe extern "C" fn cb(_: *mut c_void, _: *const swb_call, w: *mut swb_writer) -> c_int {
        // SAFETY: `w` is the running callback's writer.
        unsafe {
            assert_eq!(swb_writer_double(w, f64::NAN), swb_result::NotFinite);
            assert_eq!(
                swb_writer_raw_json(w, c"[1,".as_ptr(), 3),
                swb_result::InvalidJson
            );
            assert_eq!(swb_writer_double(w, 2.5), swb_result::Ok);
            assert_eq!(swb_writer_bool(w, true), swb_result::AlreadyAnswered);
            assert_eq!(
                swb_writer_error(w, 1, c"x".as_ptr(), 1, ptr::null(), 0),
                swb_result::AlreadyAnswered
            );
        }
        0
    }
    let (r, s) = method_w(Some(cb));
    assert_eq!(
        handle(s, br#"{"jsonrpc":"2.0","method":"w","id":1}"#).unwrap(),
        br#"{"jsonrpc":"2.0","result":2.5,"id":1}"#
    );
    free_w(r, s);
}

#[test]
fn writer_builds_nested_values_and_detailed_errors() {
    unsafe extern "C" fn cb(_: *mut c_void, call: *const swb_call, w: *mut swb_writer) -> c_int {
        // SAFETY: `w` and `call` are the running callback's.
        unsafe {
            let k = |s: &str| (s.as_ptr().cast(), s.len());
            match (*call).params.as_bytes() {
                b"[1]" => {
                    assert_eq!(swb_writer_begin_object(w), swb_result::Ok);
                    assert_eq!(swb_writer_int64(w, 1), swb_result::WriterState);
                    let (p, n) = k("a\"\u{1}\u{e9}");
                    assert_eq!(swb_writer_key(w, p, n), swb_result::Ok);
                    assert_eq!(swb_writer_begin_array(w), swb_result::Ok);
                    let (p, n) = k("\\\n");
                    assert_eq!(swb_writer_string(w, p, n), swb_result::Ok);
                    assert_eq!(swb_writer_null(w), swb_result::Ok);
                    assert_eq!(swb_writer_end_object(w), swb_result::WriterState);
                    assert_eq!(swb_writer_end_array(w), swb_result::Ok);
                    assert_eq!(swb_writer_end_object(w), swb_result::Ok);
                    assert_eq!(swb_writer_null(w), swb_result::AlreadyAnswered);
                }
                b"[2]" => {
                    assert_eq!(swb_writer_begin_array(w), swb_result::Ok);
                }
                _ => {
                    let (p, n) = k("missing field `x`");
                    assert_eq!(swb_writer_invalid_params(w, p, n), swb_result::Ok);
                    assert_eq!(
                        swb_writer_handler_failed(w, p, n),
                        swb_result::AlreadyAnswered
                    );
                }
            }
        }
        0
    }
    let (r, s) = method_w(Some(cb));
    assert_eq!(
        handle(s, br#"{"jsonrpc":"2.0","method":"w","params":[1],"id":1}"#).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"result\":{\"a\\\"\\u0001\u{e9}\":[\"\\\\\\n\",null]},\"id\":1}"
            .as_bytes()
    );
    assert_eq!(
        handle(s, br#"{"jsonrpc":"2.0","method":"w","params":[2],"id":2}"#).unwrap(),
        br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":{"detail":"the handler left an array or object open","reason":"the handler failed"}},"id":2}"#
    );
    assert_eq!(
        handle(s, br#"{"jsonrpc":"2.0","method":"w","id":3}"#).unwrap(),
        br#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":{"detail":"missing field `x`","field":"params","reason":"do not fit the method"}},"id":3}"#
    );
    free_w(r, s);
}

// ---- Reading params: swb_call_params and the swb_value_* readers ----

type Body<'f> = &'f mut dyn FnMut(&swb_call);

unsafe extern "C" fn run_body(ud: *mut c_void, call: *const swb_call, w: *mut swb_writer) -> c_int {
    // SAFETY: `ud` is the `Body` of `in_callback`, alive while the session handles
    // the message; `call` and `w` are the running callback's.
    unsafe {
        (*ud.cast::<Body<'_>>())(&*call);
        swb_writer_null(w) as c_int
    }
}

/// Runs `f` inside the callback of a call to `p` with these params (`None`: absent).
fn in_callback(params: Option<&str>, mut f: impl FnMut(&swb_call)) {
    let mut body: Body<'_> = &mut f;
    let mut b = ptr::null_mut();
    let mut r = ptr::null();
    let mut s = ptr::null_mut();
    // SAFETY: valid arguments; `body` outlives the router (freed below).
    unsafe {
        assert_eq!(swb_router_builder_new(&mut b), swb_result::Ok);
        let ud = (&raw mut body).cast::<c_void>();
        let rc = swb_router_builder_method(b, c"p".as_ptr(), 1, Some(run_body), ud, None);
        assert_eq!(rc, swb_result::Ok);
        assert_eq!(swb_router_builder_build(b, &mut r), swb_result::Ok);
        assert_eq!(swb_session_new(r, &mut s), swb_result::Ok);
    }
    let msg = match params {
        Some(p) => format!(r#"{{"jsonrpc":"2.0","method":"p","params":{p},"id":1}}"#),
        None => r#"{"jsonrpc":"2.0","method":"p","id":1}"#.to_owned(),
    };
    assert_eq!(
        handle(s, msg.as_bytes()).unwrap(),
        br#"{"jsonrpc":"2.0","result":null,"id":1}"#,
        "{msg}"
    );
    // SAFETY: live handles, freed once.
    unsafe {
        swb_session_free(s);
        swb_router_free(r);
    }
}

const ABSENT: swb_value = swb_value {
    json: swb_slice::EMPTY,
    kind: swb_value_kind::Absent,
};

fn params_of(call: &swb_call) -> swb_value {
    let mut v = ABSENT;
    // SAFETY: the running callback's call, a valid out pointer.
    assert_eq!(unsafe { swb_call_params(call, &mut v) }, swb_result::Ok);
    v
}

fn index(v: &swb_value, i: usize) -> swb_value {
    let mut e = ABSENT;
    // SAFETY: a live value, a valid out pointer.
    assert_eq!(unsafe { swb_value_index(v, i, &mut e) }, swb_result::Ok);
    e
}

fn json(v: &swb_value) -> &[u8] {
    // SAFETY: called only inside the callback the value came from.
    unsafe { v.json.as_bytes() }
}

/// Calls `f(out)` and gives the result code and, on success, the output.
fn read<T: Copy>(init: T, f: impl FnOnce(*mut T) -> swb_result) -> Result<T, swb_result> {
    let mut out = init;
    match f(&mut out) {
        swb_result::Ok => Ok(out),
        rc => Err(rc),
    }
}

/// What each reader answers on `v`, a live value or the absent one.
#[derive(Debug, PartialEq)]
struct Answers {
    bool_: Result<bool, swb_result>,
    i64_: Result<i64, swb_result>,
    u64_: Result<u64, swb_result>,
    f64_: Result<f64, swb_result>,
    plain: Result<Vec<u8>, swb_result>,
    copy: Result<Vec<u8>, swb_result>,
    str_eq: Result<bool, swb_result>,
    count: Result<usize, swb_result>,
    get: Result<Vec<u8>, swb_result>,
    index: Result<Vec<u8>, swb_result>,
    iterate: Result<(), swb_result>,
}

fn answers(v: &swb_value) -> Answers {
    // SAFETY: for every call below, `v` is live or absent and every pointer valid.
    unsafe {
        let mut buf = [0 as core::ffi::c_char; 64];
        let mut n = 0usize;
        let copy = match swb_value_copy_str(v, buf.as_mut_ptr(), buf.len(), &mut n) {
            swb_result::Ok => Ok(buf[..n].iter().map(|&c| c as u8).collect()),
            rc => Err(rc),
        };
        Answers {
            bool_: read(false, |o| swb_value_as_bool(v, o)),
            i64_: read(0, |o| swb_value_as_int64(v, o)),
            u64_: read(0, |o| swb_value_as_uint64(v, o)),
            f64_: read(0.0, |o| swb_value_as_double(v, o)),
            plain: read(swb_slice::EMPTY, |o| swb_value_as_plain_str(v, o))
                .map(|s| s.as_bytes().to_vec()),
            copy,
            str_eq: read(false, |o| swb_value_str_eq(v, c"a".as_ptr(), 1, o)),
            count: read(0, |o| swb_value_count(v, o)),
            get: read(ABSENT, |o| swb_value_get(v, c"a".as_ptr(), 1, o))
                .map(|m| m.json.as_bytes().to_vec()),
            index: read(ABSENT, |o| swb_value_index(v, 0, o)).map(|e| e.json.as_bytes().to_vec()),
            iterate: read(swb_value_iter::EMPTY, |o| swb_value_iterate(v, o)).map(|_| ()),
        }
    }
}

/// What each reader should answer on `v`, from the core's accessors on the same
/// bytes (the reference) and the kind rules of the header.
fn expected(v: &swb_value) -> Answers {
    use swb_result::{IndexOutOfRange, NotFound, NotRepresentable, StringEscaped, WrongKind};
    let Some(r) = switchboard::RawValue::from_validated(json(v)) else {
        return Answers {
            bool_: Err(WrongKind),
            i64_: Err(WrongKind),
            u64_: Err(WrongKind),
            f64_: Err(WrongKind),
            plain: Err(WrongKind),
            copy: Err(WrongKind),
            str_eq: Err(WrongKind),
            count: Err(WrongKind),
            get: Err(WrongKind),
            index: Err(WrongKind),
            iterate: Err(WrongKind),
        };
    };
    let k = r.kind();
    let number = |got: Option<f64>| match (k, got) {
        (Kind::Number, Some(x)) => Ok(x),
        (Kind::Number, None) => Err(NotRepresentable),
        _ => Err(WrongKind),
    };
    let string = k == Kind::String;
    let container = matches!(k, Kind::Array | Kind::Object);
    Answers {
        bool_: r.as_bool().ok_or(WrongKind),
        i64_: number(r.as_i64().map(|x| x as f64)).map(|_| r.as_i64().unwrap()),
        u64_: number(r.as_u64().map(|x| x as f64)).map(|_| r.as_u64().unwrap()),
        f64_: number(r.as_f64()),
        plain: if string {
            r.as_plain_str()
                .map(|s| s.as_bytes().to_vec())
                .ok_or(StringEscaped)
        } else {
            Err(WrongKind)
        },
        copy: if string {
            let mut out = vec![0u8; r.unescaped_len().unwrap()];
            r.unescape_into(&mut out).unwrap();
            Ok(out)
        } else {
            Err(WrongKind)
        },
        str_eq: if string {
            Ok(r.str_eq("a"))
        } else {
            Err(WrongKind)
        },
        count: match (r.array_iter(), r.object_iter()) {
            (Some(e), _) => Ok(e.count()),
            (_, Some(m)) => Ok(m.count()),
            _ => Err(WrongKind),
        },
        get: match r.object_iter() {
            Some(mut m) => m
                .find(|(k, _)| k.eq_str("a"))
                .map(|(_, v)| v.as_bytes().to_vec())
                .ok_or(NotFound),
            None => Err(WrongKind),
        },
        index: match r.array_iter() {
            Some(mut e) => e
                .next()
                .map(|v| v.as_bytes().to_vec())
                .ok_or(IndexOutOfRange),
            None => Err(WrongKind),
        },
        iterate: if container { Ok(()) } else { Err(WrongKind) },
    }
}

use switchboard::Kind;

/// Every reader on every kind of value: the answers are the core accessors' on the
/// same bytes, with the documented codes (a fraction or exponent is no integer,
/// overflow is refused, numbers beyond a double's range too); the absent params
/// answer `WRONG_KIND` everywhere.
#[test]
fn every_reader_on_every_kind() {
    let elements = [
        "null",
        "true",
        "false",
        "0",
        "-0",
        "-7",
        "42",
        "1.0",
        "1e2",
        "-1.5",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "1e400",
        "\"\"",
        "\"a\"",
        "\"caf\\u00e9\"",
        "\"line\\n\"",
        "[]",
        "[\"a\",[2]]",
        "{}",
        "{\"a\":{\"b\":1},\"c\":2}",
        "{\"b\":1}",
    ];
    let params = format!("[{}]", elements.join(" , "));
    let mut seen = 0;
    in_callback(Some(&params), |call| {
        let p = params_of(call);
        assert_eq!(p.kind, swb_value_kind::Array);
        assert_eq!(json(&p), params.as_bytes());
        assert_eq!(answers(&p), expected(&p));
        for (i, text) in elements.iter().enumerate() {
            let e = index(&p, i);
            assert_eq!(json(&e), text.as_bytes());
            assert_eq!(answers(&e), expected(&e), "{text}");
            seen += 1;
        }
        let mut e = ABSENT;
        // SAFETY: live value, valid out pointer.
        let rc = unsafe { swb_value_index(&p, elements.len(), &mut e) };
        assert_eq!(rc, swb_result::IndexOutOfRange);
        // Spot checks of the rules, beyond agreeing with the core.
        let a = |i: usize| answers(&index(&p, i));
        assert_eq!(a(4).i64_, Ok(0));
        assert_eq!(a(4).u64_, Err(swb_result::NotRepresentable));
        assert_eq!(a(7).i64_, Err(swb_result::NotRepresentable));
        assert_eq!(a(7).f64_, Ok(1.0));
        assert_eq!(a(8).u64_, Err(swb_result::NotRepresentable));
        assert_eq!(a(10).i64_, Ok(i64::MAX));
        assert_eq!(a(11).i64_, Err(swb_result::NotRepresentable));
        assert_eq!(a(11).u64_, Ok(1 << 63));
        assert_eq!(a(12).i64_, Ok(i64::MIN));
        assert_eq!(a(13).i64_, Err(swb_result::NotRepresentable));
        assert_eq!(a(14).u64_, Ok(u64::MAX));
        assert_eq!(a(15).u64_, Err(swb_result::NotRepresentable));
        assert_eq!(a(16).f64_, Err(swb_result::NotRepresentable));
        assert_eq!(a(0).bool_, Err(swb_result::WrongKind));
        assert_eq!(a(1).bool_, Ok(true));
        assert_eq!(a(2).bool_, Ok(false));
        assert_eq!(a(19).plain, Err(swb_result::StringEscaped));
        assert_eq!(a(19).copy, Ok("café".as_bytes().to_vec()));
        assert_eq!(a(18).str_eq, Ok(true));
        assert_eq!(a(24).get, Ok(br#"{"b":1}"#.to_vec()));
        assert_eq!(a(25).get, Err(swb_result::NotFound));
        assert_eq!(a(22).count, Ok(2));
        assert_eq!(a(21).index, Err(swb_result::IndexOutOfRange));
    });
    assert_eq!(seen, elements.len());
    for params in [None, Some("null")] {
        in_callback(params, |call| {
            let p = params_of(call);
            assert_eq!((p.kind, p.json), (swb_value_kind::Absent, swb_slice::EMPTY));
            assert_eq!(answers(&p), expected(&ABSENT));
            assert_eq!(answers(&ABSENT), expected(&ABSENT));
            assert_eq!(answers(&p).count, Err(swb_result::WrongKind));
        });
    }
}

/// `swb_value_copy_str` for every buffer length (snprintf-style: the length is
/// reported when too small, nothing written then, never past `len`, a NUL after
/// the text); unescaping of `\u00e9`, surrogate pairs, `\n`, a lone surrogate.
#[test]
fn copy_str_every_buffer_length() {
    let cases: [(&str, &str); 7] = [
        (r#""caf\u00e9""#, "café"),
        (r#""\ud83d\ude00!""#, "😀!"),
        (r#""a\nb\t\"\\\/""#, "a\nb\t\"\\/"),
        (r#""plain""#, "plain"),
        (r#""lone\ud800""#, "lone\u{FFFD}"),
        (r#""""#, ""),
        (r#""nul\u0000x""#, "nul\0x"),
    ];
    let params = format!("[{}]", cases.map(|c| c.0).join(","));
    in_callback(Some(&params), |call| {
        let p = params_of(call);
        for (i, (raw, want)) in cases.iter().enumerate() {
            let v = index(&p, i);
            for len in 0..want.len() + 3 {
                let mut buf = vec![b'#' as core::ffi::c_char; len + 4];
                let mut n = 9999usize;
                // SAFETY: live value; `buf` has `len` (and more) writable bytes.
                let rc = unsafe { swb_value_copy_str(&v, buf.as_mut_ptr(), len, &mut n) };
                let got: Vec<u8> = buf.iter().map(|&c| c as u8).collect();
                assert_eq!(n, want.len(), "{raw} into {len}");
                if len <= want.len() {
                    assert_eq!(rc, swb_result::BufferTooSmall, "{raw} into {len}");
                    assert!(got.iter().all(|&c| c == b'#'), "{raw} into {len}");
                } else {
                    assert_eq!(rc, swb_result::Ok, "{raw} into {len}");
                    assert_eq!(&got[..n], want.as_bytes(), "{raw} into {len}");
                    assert_eq!(got[n], 0);
                    assert!(got[len..].iter().all(|&c| c == b'#'), "{raw} into {len}");
                }
            }
            let mut n = 0usize;
            // SAFETY: NULL with length 0 asks for the length.
            let rc = unsafe { swb_value_copy_str(&v, ptr::null_mut(), 0, &mut n) };
            assert_eq!((rc, n), (swb_result::BufferTooSmall, want.len()));
            // SAFETY: NULL with a length is refused before any write.
            let rc = unsafe { swb_value_copy_str(&v, ptr::null_mut(), 8, &mut n) };
            assert_eq!(rc, swb_result::NullParameter);
            let plain = !raw.contains('\\');
            let a = answers(&v);
            assert_eq!(a.plain.is_ok(), plain, "{raw}");
            if plain {
                assert_eq!(a.plain.unwrap(), want.as_bytes());
            } else {
                assert_eq!(a.plain, Err(swb_result::StringEscaped));
            }
            let mut eq = false;
            // SAFETY: live value, `want` readable, valid out pointer.
            let rc = unsafe { swb_value_str_eq(&v, want.as_ptr().cast(), want.len(), &mut eq) };
            assert_eq!(rc, swb_result::Ok);
            assert_eq!(eq, !want.contains('\u{FFFD}'), "{raw}"); // a lone surrogate is no U+FFFD
        }
    });
}

/// Renders `v` as compact JSON through the readers alone (iteration, keys copied
/// unescaped, scalars as their bytes), checking `count` against the iteration
/// and that the end repeats.
fn render(v: &swb_value, out: &mut String) {
    match v.kind {
        swb_value_kind::Array | swb_value_kind::Object => {
            let object = v.kind == swb_value_kind::Object;
            let mut it = swb_value_iter::EMPTY;
            // SAFETY: live value, valid out pointer.
            assert_eq!(unsafe { swb_value_iterate(v, &mut it) }, swb_result::Ok);
            out.push(if object { '{' } else { '[' });
            let mut n = 0;
            loop {
                let (mut k, mut e) = (ABSENT, ABSENT);
                // SAFETY: a live iterator, valid out pointers.
                match unsafe { swb_value_iter_next(&mut it, &mut k, &mut e) } {
                    swb_result::Ok => {}
                    swb_result::IterEnd => break,
                    rc => panic!("{rc:?}"),
                }
                if n > 0 {
                    out.push(',');
                }
                if object {
                    assert_eq!(k.kind, swb_value_kind::String);
                    let mut buf = [0 as core::ffi::c_char; 64];
                    let mut len = 0usize;
                    // SAFETY: a live key, `buf` writable.
                    let rc = unsafe { swb_value_copy_str(&k, buf.as_mut_ptr(), 64, &mut len) };
                    assert_eq!(rc, swb_result::Ok);
                    let name: Vec<u8> = buf[..len].iter().map(|&c| c as u8).collect();
                    out.push_str(&format!("{:?}:", String::from_utf8(name).unwrap()));
                } else {
                    assert_eq!(k.kind, swb_value_kind::Absent);
                }
                render(&e, out);
                n += 1;
            }
            let (mut k, mut e) = (ABSENT, ABSENT);
            // SAFETY: as above; the end repeats, nothing written.
            let rc = unsafe { swb_value_iter_next(&mut it, &mut k, &mut e) };
            assert_eq!(
                (rc, k.kind, e.kind),
                (
                    swb_result::IterEnd,
                    swb_value_kind::Absent,
                    swb_value_kind::Absent
                )
            );
            // SAFETY: a NULL key is allowed.
            let rc = unsafe { swb_value_iter_next(&mut it, ptr::null_mut(), &mut e) };
            assert_eq!(rc, swb_result::IterEnd);
            assert_eq!(answers(v).count, Ok(n));
            out.push(if object { '}' } else { ']' });
        }
        _ => out.push_str(std::str::from_utf8(json(v)).unwrap()),
    }
}

/// Lookup by key (after unescaping), index, count and iteration of nested arrays
/// and objects, rebuilt into the same JSON through the readers alone.
#[test]
fn lookup_and_iteration_of_nested_values() {
    let params = r#"{ "a" : [1, {"b":[true,null,[]]}, "x,]"] , "c\u0064" : {"e":{"f":{}}}, "g":-2.5e3, "h\"":"\u00e9" }"#;
    let want =
        r#"{"a":[1,{"b":[true,null,[]]},"x,]"],"cd":{"e":{"f":{}}},"g":-2.5e3,"h\"":"\u00e9"}"#;
    in_callback(Some(params), |call| {
        let p = params_of(call);
        let mut got = String::new();
        render(&p, &mut got);
        assert_eq!(got, want);
        let get = |v: &swb_value, key: &str| {
            let mut m = ABSENT;
            // SAFETY: live value, `key` readable, valid out pointer.
            match unsafe { swb_value_get(v, key.as_ptr().cast(), key.len(), &mut m) } {
                swb_result::Ok => Ok(m),
                rc => Err(rc),
            }
        };
        let cd = get(&p, "cd").unwrap();
        assert_eq!(json(&cd), br#"{"e":{"f":{}}}"#);
        assert_eq!(json(&get(&cd, "e").unwrap()), br#"{"f":{}}"#);
        assert_eq!(json(&get(&p, "h\"").unwrap()), br#""\u00e9""#);
        assert_eq!(get(&p, "c\\u0064").err(), Some(swb_result::NotFound));
        assert_eq!(get(&p, "zz").err(), Some(swb_result::NotFound));
        assert_eq!(get(&p, "").err(), Some(swb_result::NotFound));
        let a = get(&p, "a").unwrap();
        assert_eq!(get(&a, "a").err(), Some(swb_result::WrongKind));
        assert_eq!(json(&index(&a, 2)), br#""x,]""#);
        let b = get(&index(&a, 1), "b").unwrap();
        assert_eq!(json(&index(&b, 2)), b"[]");
        assert_eq!(answers(&index(&b, 2)).count, Ok(0));
        let mut m = ABSENT;
        // SAFETY: invalid UTF-8 key is refused.
        let rc = unsafe { swb_value_get(&p, c"\xff".as_ptr(), 1, &mut m) };
        assert_eq!(rc, swb_result::InvalidUtf8);
        // An iterator copied goes on from the same place.
        let mut it = swb_value_iter::EMPTY;
        // SAFETY: live values, valid pointers.
        unsafe {
            assert_eq!(swb_value_iterate(&a, &mut it), swb_result::Ok);
            let mut e = ABSENT;
            assert_eq!(
                swb_value_iter_next(&mut it, ptr::null_mut(), &mut e),
                swb_result::Ok
            );
            let mut copy = it;
            assert_eq!(
                swb_value_iter_next(&mut copy, ptr::null_mut(), &mut e),
                swb_result::Ok
            );
            assert_eq!(json(&e), br#"{"b":[true,null,[]]}"#);
            assert_eq!(
                swb_value_iter_next(&mut it, ptr::null_mut(), &mut e),
                swb_result::Ok
            );
            assert_eq!(json(&e), br#"{"b":[true,null,[]]}"#);
        }
    });
}

/// Values and iterators are refused, before any read, once their callback has
/// returned, when made up from other memory, with another kind or length, or a
/// kind number that is no kind; a nested callback (another session, same thread)
/// has its own params, and the outer ones are live again afterwards.
#[test]
fn values_only_live_in_their_callback() {
    let mut kept = (ABSENT, swb_value_iter::EMPTY, None::<swb_call>);
    in_callback(Some(r#"{"a":[1,2],"s":"x"}"#), |call| {
        let p = params_of(call);
        let mut it = swb_value_iter::EMPTY;
        // SAFETY: live value, valid out pointer.
        assert_eq!(unsafe { swb_value_iterate(&p, &mut it) }, swb_result::Ok);
        kept = (p, it, Some(*call));
        let not_live = Err(swb_result::ValueNotLive);
        // Other memory with the same bytes.
        let copy = json(&p).to_vec();
        let elsewhere = swb_value {
            json: swb_slice::of(&copy),
            kind: p.kind,
        };
        assert_eq!(answers(&elsewhere).count, not_live);
        // The wrong kind, a kind number that is none, the absent kind with bytes,
        // no bytes with a kind, one byte too many.
        let wrong = swb_value {
            kind: swb_value_kind::Array,
            ..p
        };
        assert_eq!(answers(&wrong).count, not_live);
        let mut bad_kind = p;
        // SAFETY: writes a number that is no `swb_value_kind`, as C could.
        unsafe { (&raw mut bad_kind.kind).cast::<u32>().write(77) };
        assert_eq!(answers(&bad_kind).count, not_live);
        let absent_with_bytes = swb_value {
            kind: swb_value_kind::Absent,
            ..p
        };
        assert_eq!(answers(&absent_with_bytes).count, not_live);
        let empty = swb_value {
            json: swb_slice::EMPTY,
            ..p
        };
        assert_eq!(answers(&empty).count, not_live);
        let longer = swb_value {
            json: swb_slice {
                ptr: p.json.ptr,
                len: p.json.len + 1,
            },
            ..p
        };
        assert_eq!(answers(&longer).count, not_live);
        // A call whose params are not the live ones.
        let other = swb_call {
            params: elsewhere.json,
            ..*call
        };
        let mut v = ABSENT;
        // SAFETY: valid pointers; the view is refused.
        let rc = unsafe { swb_call_params(&other, &mut v) };
        assert_eq!(rc, swb_result::ValueNotLive);
        // A nested callback on this thread, through another session.
        in_callback(Some("[7]"), |inner| {
            let q = params_of(inner);
            assert_eq!(answers(&index(&q, 0)).i64_, Ok(7));
            assert_eq!(answers(&p).count, not_live);
        });
        assert_eq!(answers(&p).count, Ok(2));
        // Another thread does not see this callback's params.
        let (addr, len) = (p.json.ptr as usize, p.json.len);
        std::thread::scope(|t| {
            t.spawn(move || {
                let v = swb_value {
                    json: swb_slice {
                        ptr: ptr::without_provenance(addr),
                        len,
                    },
                    kind: swb_value_kind::Object,
                };
                assert_eq!(answers(&v).count, Err(swb_result::ValueNotLive));
            });
        });
    });
    let (p, mut it, call) = kept;
    assert_eq!(answers(&p).get, Err(swb_result::ValueNotLive));
    let mut e = ABSENT;
    // SAFETY: valid pointers; the stale iterator and call are refused.
    unsafe {
        assert_eq!(
            swb_value_iter_next(&mut it, ptr::null_mut(), &mut e),
            swb_result::ValueNotLive
        );
        assert_eq!(
            swb_call_params(&call.unwrap(), &mut e),
            swb_result::ValueNotLive
        );
    }
    assert_eq!(e.kind, swb_value_kind::Absent);
}

/// Every pointer parameter NULL: `NULL_PARAMETER`, nothing written.
#[test]
fn value_readers_refuse_null_pointers() {
    in_callback(Some(r#"{"a":"b"}"#), |call| {
        let p = params_of(call);
        let s = member_a(&p);
        let null = swb_result::NullParameter;
        let nv: *const swb_value = ptr::null();
        let mut v = ABSENT;
        let mut it = swb_value_iter::EMPTY;
        let (mut b, mut i, mut u, mut f, mut n) = (false, 0i64, 0u64, 0f64, 0usize);
        let mut sl = swb_slice::EMPTY;
        // SAFETY: every pointer is valid or NULL.
        unsafe {
            assert_eq!(swb_call_params(ptr::null(), &mut v), null);
            assert_eq!(swb_call_params(call, ptr::null_mut()), null);
            assert_eq!(swb_value_as_bool(nv, &mut b), null);
            assert_eq!(swb_value_as_bool(&p, ptr::null_mut()), null);
            assert_eq!(swb_value_as_int64(nv, &mut i), null);
            assert_eq!(swb_value_as_int64(&p, ptr::null_mut()), null);
            assert_eq!(swb_value_as_uint64(nv, &mut u), null);
            assert_eq!(swb_value_as_uint64(&p, ptr::null_mut()), null);
            assert_eq!(swb_value_as_double(nv, &mut f), null);
            assert_eq!(swb_value_as_double(&p, ptr::null_mut()), null);
            assert_eq!(swb_value_as_plain_str(nv, &mut sl), null);
            assert_eq!(swb_value_as_plain_str(&s, ptr::null_mut()), null);
            let mut buf = [0 as core::ffi::c_char; 4];
            assert_eq!(swb_value_copy_str(nv, buf.as_mut_ptr(), 4, &mut n), null);
            assert_eq!(
                swb_value_copy_str(&s, buf.as_mut_ptr(), 4, ptr::null_mut()),
                null
            );
            assert_eq!(swb_value_str_eq(nv, c"b".as_ptr(), 1, &mut b), null);
            assert_eq!(swb_value_str_eq(&s, ptr::null(), 1, &mut b), null);
            assert_eq!(
                swb_value_str_eq(&s, c"b".as_ptr(), 1, ptr::null_mut()),
                null
            );
            assert_eq!(swb_value_get(nv, c"a".as_ptr(), 1, &mut v), null);
            assert_eq!(swb_value_get(&p, ptr::null(), 1, &mut v), null);
            assert_eq!(swb_value_get(&p, c"a".as_ptr(), 1, ptr::null_mut()), null);
            assert_eq!(swb_value_index(nv, 0, &mut v), null);
            assert_eq!(swb_value_count(nv, &mut n), null);
            assert_eq!(swb_value_count(&p, ptr::null_mut()), null);
            assert_eq!(swb_value_iterate(nv, &mut it), null);
            assert_eq!(swb_value_iterate(&p, ptr::null_mut()), null);
            assert_eq!(swb_value_iter_next(ptr::null_mut(), &mut v, &mut v), null);
            assert_eq!(swb_value_iterate(&p, &mut it), swb_result::Ok);
            assert_eq!(swb_value_iter_next(&mut it, &mut v, ptr::null_mut()), null);
            // A NULL key of length 0 is the empty name.
            assert_eq!(
                swb_value_get(&p, ptr::null(), 0, &mut v),
                swb_result::NotFound
            );
        }
        assert_eq!(
            (b, i, u, f, n, v.kind),
            (false, 0, 0, 0.0, 0, swb_value_kind::Absent)
        );
    });
}

fn member_a(p: &swb_value) -> swb_value {
    let mut m = ABSENT;
    // SAFETY: live value, valid pointers.
    let rc = unsafe { swb_value_get(p, c"a".as_ptr(), 1, &mut m) };
    assert_eq!(rc, swb_result::Ok);
    m
}

/// Views a caller could forge inside the live params (any slice of them, with the
/// kind its first byte says: no JSON value in general) make no reader read outside
/// them (Miri checks it): each returns a code, wrong answers or `PANIC` included.
#[test]
fn forged_views_inside_the_params_stay_inside() {
    let params =
        r#"{"a":[1,{"b":"x\"]}"},-2.5e3],"c\u0064":{"e":"\ud83d\ude00\n"},"f":[true,null]}"#;
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut tried = 0;
    in_callback(Some(params), |call| {
        let p = params_of(call);
        let step = if cfg!(miri) { 9 } else { 1 };
        for i in (0..p.json.len).step_by(step) {
            for j in (i + 1..=p.json.len).step_by(step) {
                let bytes = &json(&p)[i..j];
                let kind = kind_of_first(bytes[0]);
                let v = swb_value {
                    json: swb_slice {
                        ptr: bytes.as_ptr(),
                        len: bytes.len(),
                    },
                    kind,
                };
                let _ = answers(&v);
                let mut it = swb_value_iter::EMPTY;
                // SAFETY: valid pointers (the view is forged, the memory live).
                if unsafe { swb_value_iterate(&v, &mut it) } == swb_result::Ok {
                    let (mut k, mut e) = (ABSENT, ABSENT);
                    for _ in 0..50 {
                        // SAFETY: as above.
                        if unsafe { swb_value_iter_next(&mut it, &mut k, &mut e) } != swb_result::Ok
                        {
                            break;
                        }
                        let _ = (answers(&k), answers(&e));
                    }
                }
                tried += 1;
            }
        }
    });
    std::panic::set_hook(prev);
    assert!(tried > 0);
}

fn kind_of_first(c: u8) -> swb_value_kind {
    match c {
        b'n' => swb_value_kind::Null,
        b't' | b'f' => swb_value_kind::Bool,
        b'"' => swb_value_kind::String,
        b'[' => swb_value_kind::Array,
        b'{' => swb_value_kind::Object,
        _ => swb_value_kind::Number,
    }
}

/// A live value of each kind given any other kind number (every other kind, the
/// absent one, numbers that are no kind): every reader answers `VALUE_NOT_LIVE`,
/// not `WRONG_KIND` or a reading of the bytes as the claimed kind; an iterator
/// whose kind was changed likewise.
#[test]
fn relabelled_values_are_not_live() {
    let all_not_live = || {
        let e = swb_result::ValueNotLive;
        Answers {
            bool_: Err(e),
            i64_: Err(e),
            u64_: Err(e),
            f64_: Err(e),
            plain: Err(e),
            copy: Err(e),
            str_eq: Err(e),
            count: Err(e),
            get: Err(e),
            index: Err(e),
            iterate: Err(e),
        }
    };
    in_callback(
        Some(r#"[null,true,false,-1.5,7,"a","x\n",[1,"a"],{"a":1},[],{}]"#),
        |call| {
            let p = params_of(call);
            let mut tried = 0;
            for i in 0..11 {
                let v = index(&p, i);
                for k in [0u32, 1, 2, 3, 4, 5, 6, 7, 255, u32::MAX] {
                    if k == v.kind as u32 {
                        continue;
                    }
                    let mut forged = v;
                    // SAFETY: writes a kind number as C could (any `u32`).
                    unsafe { (&raw mut forged.kind).cast::<u32>().write(k) };
                    assert_eq!(answers(&forged), all_not_live(), "{i} as {k}");
                    tried += 1;
                }
                let mut it = swb_value_iter::EMPTY;
                // SAFETY: live value, valid out pointer.
                if unsafe { swb_value_iterate(&v, &mut it) } == swb_result::Ok {
                    for k in [0u32, 1, 2, 3, 4, 7] {
                        let mut forged = it;
                        // SAFETY: the field is a plain number.
                        unsafe { (&raw mut forged._kind).write(k) };
                        let (mut key, mut e) = (ABSENT, ABSENT);
                        // SAFETY: valid pointers; the iterator is refused.
                        let rc = unsafe { swb_value_iter_next(&mut forged, &mut key, &mut e) };
                        assert_eq!(rc, swb_result::ValueNotLive, "{i} iterated as {k}");
                        assert_eq!(e.kind, swb_value_kind::Absent);
                        tried += 1;
                    }
                }
            }
            assert!(tried > 100);
        },
    );
}
