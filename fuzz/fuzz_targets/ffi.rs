//! The C ABI entry points, called through switchboard-ffi's `extern "C"` functions:
//! `swb_session_handle` with a router built through the C API (callbacks writing
//! results, errors and strings) against a `Session` with the same methods in Rust,
//! byte for byte; `swb_classifier_classify` / `swb_classifier_batch_get` against
//! `Parser::parse`, field by field.
#![no_main]

use core::ffi::{c_char, c_int, c_void};
use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use switchboard::{Item, Message, Parser, Router, RpcError, Session};
use switchboard_ffi::*;

fn view<'a>(s: swb_slice) -> &'a [u8] {
    if s.len == 0 {
        assert!(s.ptr.is_null(), "an empty view has a NULL pointer");
        return &[];
    }
    assert!(!s.ptr.is_null());
    // SAFETY: a non-empty view points to `len` bytes valid until the next call on
    // the handle that produced it; used before that.
    unsafe { core::slice::from_raw_parts(s.ptr, s.len) }
}

unsafe extern "C" fn echo(_: *mut c_void, call: *const swb_call, w: *mut swb_writer) -> c_int {
    // SAFETY: the call view is valid during the callback.
    let params = view(unsafe { *call }.params);
    let rc = if params.is_empty() {
        // SAFETY: the writer of the running callback.
        unsafe { swb_writer_null(w) }
    } else {
        // SAFETY: as above; `params` is readable.
        unsafe { swb_writer_raw_json(w, params.as_ptr().cast::<c_char>(), params.len()) }
    };
    assert_eq!(rc, swb_result::Ok, "params are valid JSON");
    0
}

unsafe extern "C" fn fail(_: *mut c_void, call: *const swb_call, w: *mut swb_writer) -> c_int {
    // SAFETY: the call view is valid during the callback.
    let params = view(unsafe { *call }.params);
    let msg = b"nope";
    // SAFETY: the writer of the running callback; both buffers readable.
    let rc = unsafe {
        swb_writer_error(
            w,
            42,
            msg.as_ptr().cast(),
            msg.len(),
            params.as_ptr().cast(),
            params.len(),
        )
    };
    assert_eq!(rc, swb_result::Ok);
    // A second answer is refused.
    // SAFETY: as above.
    assert_eq!(unsafe { swb_writer_null(w) }, swb_result::AlreadyAnswered);
    1
}

unsafe extern "C" fn name(_: *mut c_void, call: *const swb_call, w: *mut swb_writer) -> c_int {
    // SAFETY: the call view is valid during the callback.
    let m = view(unsafe { *call }.method);
    // SAFETY: the writer of the running callback; `m` readable.
    let rc = unsafe { swb_writer_string(w, m.as_ptr().cast(), m.len()) };
    assert_eq!(rc, swb_result::Ok);
    0
}

unsafe extern "C" fn broken(_: *mut c_void, _: *const swb_call, _: *mut swb_writer) -> c_int {
    -1
}

unsafe extern "C" fn note(_: *mut c_void, _: *const swb_call) {}

struct Ffi {
    session: *mut swb_session,
    classifier: *mut swb_classifier,
    rust: Session,
    parser: Parser,
    /// A session with no methods: what it sends for a bad message.
    empty: Session,
}

fn build() -> Ffi {
    let mut b: *mut swb_router_builder = core::ptr::null_mut();
    // SAFETY: valid out-pointers, names readable, callbacks 'static.
    unsafe {
        assert_eq!(swb_router_builder_new(&mut b), swb_result::Ok);
        type M = unsafe extern "C" fn(*mut c_void, *const swb_call, *mut swb_writer) -> c_int;
        let methods: [(&str, M); 4] = [
            ("echo", echo),
            ("fail", fail),
            ("name", name),
            ("broken", broken),
        ];
        for (n, f) in methods {
            let rc = swb_router_builder_method(
                b,
                n.as_ptr().cast(),
                n.len(),
                Some(f),
                core::ptr::null_mut(),
                None,
            );
            assert_eq!(rc, swb_result::Ok);
        }
        let rc = swb_router_builder_notification(
            b,
            c"note".as_ptr(),
            4,
            Some(note),
            core::ptr::null_mut(),
            None,
        );
        assert_eq!(rc, swb_result::Ok);
        let mut router: *const swb_router = core::ptr::null();
        assert_eq!(swb_router_builder_build(b, &mut router), swb_result::Ok);
        let mut session = core::ptr::null_mut();
        assert_eq!(swb_session_new(router, &mut session), swb_result::Ok);
        swb_router_free(router);
        let mut classifier = core::ptr::null_mut();
        assert_eq!(
            swb_classifier_new(core::ptr::null(), &mut classifier),
            swb_result::Ok
        );
        let rust = Router::builder()
            .method("echo", |c, out| match c.params() {
                Some(p) => out.raw_json(p.as_bytes()),
                None => out.null(),
            })
            .method("fail", |c, _| {
                let e = RpcError::new(42, "nope");
                Err(match c.params() {
                    Some(p) => e.with_data_json(p.as_str().to_owned()),
                    None => e,
                })
            })
            .method("name", |c, out| out.str(c.method().as_str()))
            .method("broken", |_, _| {
                Err(RpcError::new(-32603, "Internal error").with_data_json(
                    r#"{"reason":"the handler failed","detail":"the callback returned a failure code"}"#,
                ))
            })
            .notification("note", |_| {})
            .build()
            .expect("valid registrations");
        Ffi {
            session,
            classifier,
            rust: Session::new(rust),
            parser: Parser::new(),
            empty: Session::new(Router::builder().build().expect("empty router")),
        }
    }
}

thread_local! {
    static FFI: RefCell<Ffi> = RefCell::new(build());
}

fn check_view(m: &swb_message, item: Item<'_>) {
    match item {
        Item::Request(r) => {
            assert_eq!(m.kind, swb_kind::Request);
            assert_eq!(view(m.method), r.method().as_str().as_bytes());
            assert_eq!(m.method_exact, r.method().is_exact());
            assert_eq!(view(m.id), r.id().as_bytes());
            assert_eq!(view(m.params), r.params().map_or(&[][..], |p| p.as_bytes()));
        }
        Item::Notification(n) => {
            assert_eq!(m.kind, swb_kind::Notification);
            assert_eq!(view(m.method), n.method().as_str().as_bytes());
            assert_eq!(view(m.id), b"");
            assert_eq!(view(m.params), n.params().map_or(&[][..], |p| p.as_bytes()));
        }
        Item::Response(r) => {
            assert_eq!(m.kind, swb_kind::Response);
            assert_eq!(view(m.id), r.id().as_bytes());
            assert_eq!(
                view(m.response_result),
                r.result().map_or(&[][..], |v| v.as_bytes())
            );
            assert_eq!(
                view(m.response_error),
                r.error().map_or(&[][..], |v| v.as_bytes())
            );
        }
        Item::Error(e) => {
            assert_eq!(m.kind, swb_kind::Error);
            assert_eq!(m.error_code, e.code().as_i32());
            assert_eq!(view(m.id), e.id().as_bytes());
            assert_eq!(view(m.error_reason), e.reason().as_str().as_bytes());
            assert_eq!(view(m.error_data), e.data().to_string().as_bytes());
            let resp = std::str::from_utf8(view(m.error_response)).expect("UTF-8");
            let (id, code) = switchboard_fuzz::check::check_response_object(resp, b"");
            assert_eq!(id.as_bytes(), e.id().as_bytes());
            assert_eq!(code, Some(i64::from(e.code().as_i32())));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    FFI.with_borrow_mut(|f| {
        // The session, against the same methods in Rust.
        let (mut ptr, mut len) = (core::ptr::null(), 0usize);
        // SAFETY: live session; input readable; outputs writable.
        let rc =
            unsafe { swb_session_handle(f.session, data.as_ptr(), data.len(), &mut ptr, &mut len) };
        assert_eq!(rc, swb_result::Ok);
        let got = view(swb_slice { ptr, len }).to_vec();
        let want = f.rust.handle(data).map(<[u8]>::to_vec);
        match want {
            Some(w) => assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&w),
                "C ABI vs Rust session; input {data:?}"
            ),
            None => assert!(
                got.is_empty(),
                "C ABI answered {:?}",
                String::from_utf8_lossy(&got)
            ),
        }

        // The classifier, against Parser::parse.
        let mut m = core::mem::MaybeUninit::<swb_message>::uninit();
        // SAFETY: live classifier; input readable; `m` writable.
        let rc = unsafe {
            swb_classifier_classify(f.classifier, data.as_ptr(), data.len(), m.as_mut_ptr())
        };
        assert_eq!(rc, swb_result::Ok);
        // SAFETY: written on success.
        let m = unsafe { m.assume_init() };
        let msg = f.parser.parse(data);
        let mut out = core::mem::MaybeUninit::<swb_message>::uninit();
        match msg {
            Message::Batch(b) => {
                assert_eq!(m.kind, swb_kind::Batch);
                assert_eq!(m.batch_len, b.len());
                for (i, item) in b.iter().enumerate() {
                    // SAFETY: live classifier, `out` writable.
                    let rc = unsafe { swb_classifier_batch_get(f.classifier, i, out.as_mut_ptr()) };
                    assert_eq!(rc, swb_result::Ok);
                    // SAFETY: written on success.
                    check_view(unsafe { out.assume_init_ref() }, item);
                }
                // SAFETY: as above.
                let rc =
                    unsafe { swb_classifier_batch_get(f.classifier, b.len(), out.as_mut_ptr()) };
                assert_eq!(rc, swb_result::IndexOutOfRange);
            }
            Message::Request(r) => check_view(&m, Item::Request(r)),
            Message::Notification(n) => check_view(&m, Item::Notification(n)),
            Message::Response(r) => check_view(&m, Item::Response(r)),
            Message::Error(e) => {
                check_view(&m, Item::Error(e));
                // The ready-made error response is the one a session sends.
                let sent = f.empty.handle(data).expect("an error is answered");
                assert_eq!(view(m.error_response), sent);
            }
        }
        if !matches!(m.kind, swb_kind::Batch) {
            // SAFETY: as above.
            let rc = unsafe { swb_classifier_batch_get(f.classifier, 0, out.as_mut_ptr()) };
            assert_eq!(rc, swb_result::NotABatch);
        }
    });
});
