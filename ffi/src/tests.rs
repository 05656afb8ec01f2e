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
        assert_eq!(unsafe { e.id.as_bytes() }, i.to_string().as_bytes());
    }
    // SAFETY: live classifier, freed once.
    unsafe { swb_classifier_free(c) };
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
    let mut b = ptr::null_mut();
    let mut r = ptr::null();
    let mut s = ptr::null_mut();
    // SAFETY: valid arguments throughout; every handle freed once.
    unsafe {
        assert_eq!(swb_router_builder_new(&mut b), swb_result::Ok);
        assert_eq!(
            swb_router_builder_method(b, c"w".as_ptr(), 1, Some(cb), ptr::null_mut(), None),
            swb_result::Ok
        );
        assert_eq!(swb_router_builder_build(b, &mut r), swb_result::Ok);
        assert_eq!(swb_session_new(r, &mut s), swb_result::Ok);
    }
    assert_eq!(
        handle(s, br#"{"jsonrpc":"2.0","method":"w","id":1}"#).unwrap(),
        br#"{"jsonrpc":"2.0","result":2.5,"id":1}"#
    );
    // SAFETY: live handles, freed once.
    unsafe {
        swb_session_free(s);
        swb_router_free(r);
    }
}
