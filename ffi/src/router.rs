//! The router builder, the router, C callbacks adapted into core handlers, and the
//! writer a callback answers through.

use core::ffi::{c_char, c_int, c_void};
use std::collections::HashSet;
use std::sync::Arc;

use switchboard::{
    BuildError, Call, Parser, Response, ResultWriter, Router, RouterBuilder, RpcError,
};

use crate::boundary::{self, bytes, out_ptr, text};
use crate::config;
use crate::result::swb_result;
use crate::slice::swb_slice;
use crate::value::LiveParams;

/// Collects method registrations and limits; `swb_router_builder_build` turns it
/// into a router.
///
/// Ownership: owned by the caller (Box) from `swb_router_builder_new` until
/// `swb_router_builder_build` consumes it, or `swb_router_builder_free`.
/// Thread safety: not safe for concurrent mutation; it may move between threads.
pub struct swb_router_builder {
    _private: [u8; 0],
}

/// The built method table: immutable, reference counted (Arc).
///
/// Thread safety: immutable; may be shared by any number of threads, each with its
/// own sessions. The callbacks registered on it are then called from those threads,
/// concurrently: they must be thread-safe if the router is shared.
/// Ownership: each reference (from `swb_router_builder_build` or `swb_router_clone`)
/// is released once with `swb_router_free`; sessions hold their own reference, so a
/// router may be freed while its sessions live on.
pub struct swb_router {
    _private: [u8; 0],
}

/// Where a method callback writes its answer: a result value or an error.
///
/// Ownership: borrowed; valid only until the callback that received it returns.
/// Never store it, never use it from another thread.
pub struct swb_writer {
    _private: [u8; 0],
}

/// One call as a callback sees it. All views are borrowed from the message (or the
/// session's scratch memory) and valid only until the callback returns. Read the
/// params with `swb_call_params` and the `swb_value_*` readers.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct swb_call {
    /// The method name, unescaped (`"su\u0062tract"` arrives as `subtract`), UTF-8.
    pub method: swb_slice,
    /// The id's exact JSON bytes as received (`1`, `"abc"`, `1e2`, `null`...); empty
    /// for a notification.
    pub id: swb_slice,
    /// The params' exact JSON bytes (an array or an object); empty when absent or
    /// `null`.
    pub params: swb_slice,
    /// Whether the call is a notification: its answer, result or error, is discarded.
    pub is_notification: bool,
}

/// A Response object received from the peer (it is never answered). Views valid only
/// until the callback returns.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct swb_response {
    /// The id's exact JSON bytes.
    pub id: swb_slice,
    /// The `result` member's exact JSON bytes (`null` included); empty for an error.
    pub result: swb_slice,
    /// The `error` member's exact JSON bytes (an object with an integer `code` and a
    /// string `message`); empty for a success.
    pub error: swb_slice,
}

/// A method callback. It answers through `writer` with one `swb_writer_*` call (a
/// result value or an error) and returns 0. Writing nothing and returning 0 answers
/// `null`. Returning non-zero without an error written answers -32603 Internal error;
/// an error written is answered whatever the return value.
///
/// `user_data` is the pointer given at registration. `call` and `writer` are valid
/// only during the call. For a notification (`call->is_notification`) the answer is
/// discarded. The callback must not unwind (C++ exceptions, longjmp) out of itself.
/// On the session that runs it, `swb_session_handle` returns `SWB_RESULT_SESSION_BUSY`
/// and `swb_session_free` does nothing.
pub type swb_method_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        call: *const swb_call,
        writer: *mut swb_writer,
    ) -> c_int,
>;

/// A notification callback: dispatched, never answered. (A request with an id to such
/// a method is answered `"result":null` once the callback ran.) Same rules as
/// `swb_method_fn`.
pub type swb_notification_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, call: *const swb_call)>;

/// Receives well-formed Response objects from the peer. Same rules as `swb_method_fn`.
pub type swb_response_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, response: *const swb_response)>;

/// Frees a `user_data` pointer; called exactly once, when the registration that got
/// it is dropped (the last router reference is released, or the builder is freed or
/// fails to build), on the thread that drops it. May be NULL where accepted: nothing
/// is called then.
pub type swb_free_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// A callback's `user_data`, freed with its `swb_free_fn` when dropped.
struct UserData {
    ptr: *mut c_void,
    free: swb_free_fn,
}

// SAFETY: the header documents that callbacks of a router shared by several threads
// are called from those threads concurrently, and that `user_data` and the callbacks
// must then be thread-safe: the C side takes on Send + Sync for them.
unsafe impl Send for UserData {}
// SAFETY: as for Send above.
unsafe impl Sync for UserData {}

impl UserData {
    /// The pointer (a method, so that closures capture the whole `UserData`).
    fn get(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for UserData {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            // SAFETY: the registration contract: `free` is a valid function that
            // accepts this `user_data`; it is called exactly once, here.
            unsafe { free(self.ptr) };
        }
    }
}

struct Builder {
    inner: RouterBuilder,
    names: HashSet<Box<str>>,
}

impl Builder {
    fn update(&mut self, f: impl FnOnce(RouterBuilder) -> RouterBuilder) {
        let b = std::mem::replace(&mut self.inner, Router::builder());
        self.inner = f(b);
    }

    /// Checks a method name for registration.
    fn check_name(&self, name: &str) -> Result<(), swb_result> {
        if name.is_empty() {
            Err(swb_result::EmptyMethodName)
        } else if name.starts_with("rpc.") {
            Err(swb_result::ReservedMethodName)
        } else if self.names.contains(name) {
            Err(swb_result::DuplicateMethod)
        } else {
            Ok(())
        }
    }
}

/// The builder behind a handle.
///
/// # Safety
/// - `p` must be NULL or a live builder from `swb_router_builder_new`, not used
///   concurrently.
unsafe fn builder_mut<'a>(p: *mut swb_router_builder) -> Result<&'a mut Builder, swb_result> {
    if p.is_null() {
        return Err(swb_result::NullParameter);
    }
    // SAFETY: per the contract, a live, exclusively used Box<Builder>.
    Ok(unsafe { &mut *p.cast::<Builder>() })
}

/// The router behind a handle.
///
/// # Safety
/// - `p` must be NULL or a live router reference (not released).
pub(crate) unsafe fn router_ref<'a>(p: *const swb_router) -> Result<&'a Router, swb_result> {
    if p.is_null() {
        return Err(swb_result::NullParameter);
    }
    // SAFETY: per the contract, `p` came from `Arc::into_raw` and a strong count it
    // stands for is still held, so the Router is alive.
    Ok(unsafe { &*p.cast::<Router>() })
}

/// A new strong reference to the router behind a handle.
///
/// # Safety
/// - As for [`router_ref`].
pub(crate) unsafe fn router_arc(p: *const swb_router) -> Result<Arc<Router>, swb_result> {
    // SAFETY: forwarded; checks for NULL.
    unsafe { router_ref(p) }?;
    let p = p.cast::<Router>();
    // SAFETY: `p` came from `Arc::into_raw` and is alive (above): adding a strong
    // count and taking it back as an Arc leaves the caller's reference untouched.
    unsafe {
        Arc::increment_strong_count(p);
        Ok(Arc::from_raw(p))
    }
}

/// The views a callback gets for `call`. (A method that reaches a callback has a
/// registered, hence non-empty, name; ids and params are never empty JSON.)
#[inline(always)]
fn call_view(call: &Call<'_>) -> swb_call {
    let whole = |b: &[u8]| swb_slice {
        ptr: b.as_ptr(),
        len: b.len(),
    };
    swb_call {
        method: whole(call.method().as_str().as_bytes()),
        id: call
            .id()
            .map_or(swb_slice::EMPTY, |id| whole(id.as_bytes())),
        params: call
            .params()
            .map_or(swb_slice::EMPTY, |p| whole(p.as_bytes())),
        is_notification: call.is_notification(),
    }
}

/// The params' bytes, empty when the call has none (for [`LiveParams`]: the
/// values a callback reads must lie inside them).
#[inline(always)]
fn params_bytes<'a>(call: &Call<'a>) -> &'a [u8] {
    call.params().map_or(&[], |p| p.as_bytes())
}

/// -32603 for a callback that returned a failure code without writing an error
/// (static text: no allocation).
fn callback_failed() -> RpcError {
    RpcError::new(-32603, "Internal error").with_data_json(
        r#"{"reason":"the handler failed","detail":"the callback returned a failure code"}"#,
    )
}

/// -32603 for a callback that returned with an array or object still open.
fn left_open() -> RpcError {
    RpcError::internal("the handler left an array or object open")
}

/// What a callback's writer handle points to, on the stack of the call.
struct Writer<'a, 'o> {
    out: &'a mut ResultWriter<'o>,
    error: Option<RpcError>,
    nest: Nest,
}

/// The result being built inside `swb_writer_begin_object`/`_array`: written into
/// the call's answer when the outermost one ends (no allocation until one begins).
#[derive(Default)]
struct Nest {
    /// The JSON so far, from the outermost `[` or `{`.
    doc: Vec<u8>,
    /// The arrays and objects begun and not ended, innermost last.
    open: Vec<Open>,
    /// The innermost object has a key waiting for its value.
    after_key: bool,
}

#[derive(Clone, Copy)]
struct Open {
    object: bool,
    empty: bool,
}

impl Nest {
    /// What goes before the next value (a comma or nothing), if a value may come
    /// next: not inside an object before its key.
    fn value_prefix(&self) -> Result<&'static [u8], swb_result> {
        match self.open.last() {
            None => Ok(b""),
            Some(o) if o.object && !self.after_key => Err(swb_result::WriterState),
            Some(o) if o.object || o.empty => Ok(b""),
            Some(_) => Ok(b","),
        }
    }

    /// Records that a value was written.
    fn commit_value(&mut self) {
        if let Some(o) = self.open.last_mut() {
            o.empty = false;
        }
        self.after_key = false;
    }
}

impl Writer<'_, '_> {
    fn answered(&self) -> bool {
        self.error.is_some() || self.out.is_written()
    }

    /// Writes one value with `f`: the call's result, or the next value of the open
    /// array or object. On failure (`on_err`) nothing is written.
    fn value(
        &mut self,
        on_err: swb_result,
        f: impl FnOnce(&mut ResultWriter<'_>) -> Result<(), RpcError>,
    ) -> Result<(), swb_result> {
        if self.nest.open.is_empty() {
            return f(self.out).map_err(|_| on_err);
        }
        let prefix = self.nest.value_prefix()?;
        let mark = self.nest.doc.len();
        self.nest.doc.extend_from_slice(prefix);
        if f(&mut ResultWriter::new(&mut self.nest.doc)).is_err() {
            self.nest.doc.truncate(mark);
            return Err(on_err);
        }
        self.nest.commit_value();
        Ok(())
    }

    /// Begins an array or object where a value may come.
    fn begin(&mut self, object: bool) -> Result<(), swb_result> {
        let prefix = self.nest.value_prefix()?;
        self.nest.doc.extend_from_slice(prefix);
        self.nest.doc.push(if object { b'{' } else { b'[' });
        self.nest.commit_value();
        self.nest.open.push(Open {
            object,
            empty: true,
        });
        Ok(())
    }

    /// Ends the innermost array or object; the outermost one becomes the result.
    fn end(&mut self, object: bool) -> Result<(), swb_result> {
        match self.nest.open.last() {
            Some(o) if o.object == object && !self.nest.after_key => {}
            _ => return Err(swb_result::WriterState),
        }
        self.nest.open.pop();
        self.nest.doc.push(if object { b'}' } else { b']' });
        if self.nest.open.is_empty() {
            // Checked as any raw result (it is valid by construction, but not more
            // than 128 levels deep): refused, the whole value is dropped.
            let done = self.out.raw_json(&self.nest.doc);
            self.nest.doc = Vec::new();
            done.map_err(|_| swb_result::InvalidJson)?;
        }
        Ok(())
    }

    /// Writes a member's key in the innermost object.
    fn key(&mut self, key: &str) -> Result<(), swb_result> {
        let empty = match self.nest.open.last() {
            Some(o) if o.object && !self.nest.after_key => o.empty,
            _ => return Err(swb_result::WriterState),
        };
        if !empty {
            self.nest.doc.push(b',');
        }
        // A string never fails to write.
        let _ = ResultWriter::new(&mut self.nest.doc).str(key);
        self.nest.doc.push(b':');
        if let Some(o) = self.nest.open.last_mut() {
            o.empty = false;
        }
        self.nest.after_key = true;
        Ok(())
    }
}

/// Creates an empty router builder with SPEC.md's default limits.
///
/// - `out`: receives the builder; pass it to `swb_router_builder_build` (which
///   consumes it) or `swb_router_builder_free`.
///
/// # Safety
/// - `out` must be NULL or point to a writable `swb_router_builder *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_builder_new(out: *mut *mut swb_router_builder) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        let b = Box::new(Builder {
            inner: Router::builder(),
            names: HashSet::new(),
        });
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(Box::into_raw(b).cast()) };
        Ok(())
    })
}

/// Frees a builder that was not built, with its registrations (each `user_data_free`
/// is called). NULL is a no-op.
///
/// # Safety
/// - `builder` must be NULL or a live builder, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_builder_free(builder: *mut swb_router_builder) {
    boundary::run_or((), || {
        if !builder.is_null() {
            // SAFETY: per the contract, a Box<Builder> leaked by
            // `swb_router_builder_new`, freed exactly once, here.
            drop(unsafe { Box::from_raw(builder.cast::<Builder>()) });
        }
    })
}

/// Registers a method answered by `callback`.
///
/// - `name`, `name_len`: the method name, UTF-8, not empty, not starting `rpc.`, not
///   registered before on this builder (copied).
/// - `callback`: called for each request (and notification) to `name`.
/// - `user_data`: passed to `callback` as its first argument.
/// - `user_data_free`: NULL, or called once with `user_data` when the registration is
///   dropped. Only on `SWB_RESULT_OK` does the builder take `user_data` over.
///
/// Returns `SWB_RESULT_EMPTY_METHOD_NAME`, `SWB_RESULT_RESERVED_METHOD_NAME`,
/// `SWB_RESULT_DUPLICATE_METHOD`, `SWB_RESULT_INVALID_UTF8` or
/// `SWB_RESULT_NULL_PARAMETER` (also for a NULL `callback`) without registering.
///
/// # Safety
/// - `builder` must be NULL or a live builder, not used concurrently.
/// - `name` must be NULL or point to `name_len` readable bytes.
/// - `callback` and `user_data_free` must stay callable, and `user_data` usable by
///   them, until the registration is dropped; with a router shared by several
///   threads, `callback` is called from them concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_builder_method(
    builder: *mut swb_router_builder,
    name: *const c_char,
    name_len: usize,
    callback: swb_method_fn,
    user_data: *mut c_void,
    user_data_free: swb_free_fn,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let b = unsafe { builder_mut(builder) }?;
        // SAFETY: forwarded from the caller's contract.
        let name = unsafe { text(name, name_len) }?;
        let cb = callback.ok_or(swb_result::NullParameter)?;
        b.check_name(name)?;
        let ud = UserData {
            ptr: user_data,
            free: user_data_free,
        };
        let f = move |call: &Call<'_>, out: &mut ResultWriter<'_>| -> Result<(), RpcError> {
            let view = call_view(call);
            let _live = LiveParams::enter(params_bytes(call));
            let mut w = Writer {
                out,
                error: None,
                nest: Nest::default(),
            };
            // SAFETY: the registration contract keeps `cb` callable with `ud.get()`;
            // `view` and `w` live on this frame until the callback returns, which is
            // as long as the callback may use them (documented).
            let rc = unsafe { cb(ud.get(), &view, (&raw mut w).cast::<swb_writer>()) };
            if let Some(e) = w.error {
                return Err(e);
            }
            if rc != 0 {
                return Err(callback_failed());
            }
            if !w.nest.open.is_empty() {
                return Err(left_open());
            }
            Ok(())
        };
        b.update(|inner| inner.method(name, f));
        b.names.insert(name.into());
        Ok(())
    })
}

/// Registers a notification method: `callback` runs for each call to `name`, which
/// is never answered (a request with an id gets `"result":null`).
///
/// Arguments, ownership and errors as for `swb_router_builder_method`.
///
/// # Safety
/// - As for `swb_router_builder_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_builder_notification(
    builder: *mut swb_router_builder,
    name: *const c_char,
    name_len: usize,
    callback: swb_notification_fn,
    user_data: *mut c_void,
    user_data_free: swb_free_fn,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let b = unsafe { builder_mut(builder) }?;
        // SAFETY: forwarded from the caller's contract.
        let name = unsafe { text(name, name_len) }?;
        let cb = callback.ok_or(swb_result::NullParameter)?;
        b.check_name(name)?;
        let ud = UserData {
            ptr: user_data,
            free: user_data_free,
        };
        let f = move |call: &Call<'_>| {
            let view = call_view(call);
            let _live = LiveParams::enter(params_bytes(call));
            // SAFETY: as in `swb_router_builder_method`.
            unsafe { cb(ud.get(), &view) };
        };
        b.update(|inner| inner.notification(name, f));
        b.names.insert(name.into());
        Ok(())
    })
}

/// Sets where well-formed Response objects received from the peer go (they are never
/// answered). Without a sink they are dropped and counted
/// (`swb_session_dropped_responses`). A second call replaces the first sink (its
/// `user_data_free` is called).
///
/// Ownership of `user_data` as for `swb_router_builder_method`.
///
/// # Safety
/// - As for `swb_router_builder_method` (without the name).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_builder_response_sink(
    builder: *mut swb_router_builder,
    callback: swb_response_fn,
    user_data: *mut c_void,
    user_data_free: swb_free_fn,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let b = unsafe { builder_mut(builder) }?;
        let cb = callback.ok_or(swb_result::NullParameter)?;
        let ud = UserData {
            ptr: user_data,
            free: user_data_free,
        };
        let f = move |r: &Response<'_>| {
            let view = swb_response {
                id: swb_slice::of(r.id().as_bytes()),
                result: swb_slice::of_opt(r.result().map(|v| v.as_bytes())),
                error: swb_slice::of_opt(r.error().map(|v| v.as_bytes())),
            };
            // SAFETY: as in `swb_router_builder_method`.
            unsafe { cb(ud.get(), &view) };
        };
        b.update(|inner| inner.response_sink(f));
        Ok(())
    })
}

/// Sets the limits the router's sessions parse with (copied from `config`).
///
/// # Safety
/// - `builder` must be NULL or a live builder, not used concurrently.
/// - `config` must be NULL or a live config, not mutated concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_builder_set_config(
    builder: *mut swb_router_builder,
    config: *const crate::config::swb_config,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let b = unsafe { builder_mut(builder) }?;
        // SAFETY: forwarded from the caller's contract.
        let cfg = *unsafe { config::from_ptr(config) }?;
        b.update(|inner| inner.config(cfg));
        Ok(())
    })
}

/// Sets the title the built-in `rpc.discover` reports (default `switchboard`);
/// UTF-8, copied.
///
/// # Safety
/// - `builder` must be NULL or a live builder, not used concurrently.
/// - `title` must be NULL or point to `title_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_builder_set_title(
    builder: *mut swb_router_builder,
    title: *const c_char,
    title_len: usize,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let b = unsafe { builder_mut(builder) }?;
        // SAFETY: forwarded from the caller's contract.
        let title = unsafe { text(title, title_len) }?;
        b.update(|inner| inner.title(title));
        Ok(())
    })
}

/// Describes a registered method for the built-in `rpc.discover` (OpenRPC): `params`
/// a JSON array of content descriptors, `result` one content descriptor (a JSON
/// object). A length of 0 leaves that part out. Register the method first.
///
/// Returns `SWB_RESULT_UNKNOWN_METHOD` if `name` is not registered on this builder,
/// `SWB_RESULT_INVALID_SCHEMA` if a schema is not valid JSON of the right shape.
///
/// # Safety
/// - `builder` must be NULL or a live builder, not used concurrently.
/// - Each pointer must be NULL or point to its length in readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_builder_schema(
    builder: *mut swb_router_builder,
    name: *const c_char,
    name_len: usize,
    params: *const c_char,
    params_len: usize,
    result: *const c_char,
    result_len: usize,
) -> swb_result {
    boundary::run(|| {
        // SAFETY: forwarded from the caller's contract.
        let b = unsafe { builder_mut(builder) }?;
        // SAFETY: forwarded from the caller's contract.
        let name = unsafe { text(name, name_len) }?;
        // SAFETY: forwarded from the caller's contract.
        let params = unsafe { text(params, params_len) }?;
        // SAFETY: forwarded from the caller's contract.
        let result = unsafe { text(result, result_len) }?;
        if !b.names.contains(name) {
            return Err(swb_result::UnknownMethod);
        }
        let mut parser = Parser::new();
        let mut valid = |json: &str, open: u8| {
            json.is_empty()
                || (json.trim_start().as_bytes().first() == Some(&open)
                    && parser.validate(json.as_bytes()).is_ok())
        };
        if !valid(params, b'[') || !valid(result, b'{') {
            return Err(swb_result::InvalidSchema);
        }
        let params = (!params.is_empty()).then_some(params);
        let result = (!result.is_empty()).then_some(result);
        b.update(|inner| inner.schema(name, params, result));
        Ok(())
    })
}

/// Freezes the registrations into a router (the method table is built once).
///
/// - `builder`: consumed by this call whatever it returns: never use or free it
///   afterwards. (On failure its registrations are dropped, calling each
///   `user_data_free`.)
/// - `out`: receives the router; release it with `swb_router_free`.
///
/// # Safety
/// - `builder` must be NULL or a live builder, not used concurrently.
/// - `out` must be NULL or point to a writable `const swb_router *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_builder_build(
    builder: *mut swb_router_builder,
    out: *mut *const swb_router,
) -> swb_result {
    boundary::run(|| {
        if builder.is_null() {
            return Err(swb_result::NullParameter);
        }
        // SAFETY: per the contract, a Box<Builder> leaked by `swb_router_builder_new`;
        // taken back exactly once, here (the builder is consumed in every case).
        let b = unsafe { Box::from_raw(builder.cast::<Builder>()) };
        let out = out_ptr(out)?;
        let router = b.inner.build().map_err(|e| match e {
            BuildError::Duplicate(_) => swb_result::DuplicateMethod,
            BuildError::EmptyName => swb_result::EmptyMethodName,
            BuildError::Reserved(_) => swb_result::ReservedMethodName,
            BuildError::InvalidSchema(_) => swb_result::InvalidSchema,
            BuildError::UnknownMethod(_) => swb_result::UnknownMethod,
            _ => swb_result::BuildFailed,
        })?;
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(Arc::into_raw(router).cast()) };
        Ok(())
    })
}

/// Takes another reference to a router (the same pointer, its count incremented),
/// for example to hand to another thread that will release it on its own.
///
/// - `out`: receives the router again; release it with `swb_router_free`.
///
/// # Safety
/// - `router` must be NULL or a live router reference.
/// - `out` must be NULL or point to a writable `const swb_router *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_clone(
    router: *const swb_router,
    out: *mut *const swb_router,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let arc = unsafe { router_arc(router) }?;
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(Arc::into_raw(arc).cast()) };
        Ok(())
    })
}

/// Releases one reference to a router; the last release (sessions hold references
/// too) frees it and its registrations (calling each `user_data_free`). NULL is a
/// no-op. Thread safety: any thread may release its own reference.
///
/// # Safety
/// - `router` must be NULL or a router reference not released before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_router_free(router: *const swb_router) {
    boundary::run_or((), || {
        if !router.is_null() {
            // SAFETY: per the contract, `router` came from `Arc::into_raw` and the
            // strong count it stands for is given back exactly once, here.
            drop(unsafe { Arc::from_raw(router.cast::<Router>()) });
        }
    })
}

/// Runs `f` on the writer behind a handle.
///
/// # Safety
/// - `w` must be NULL or the writer of a callback that is still running, used on its
///   thread.
unsafe fn with_writer(
    w: *mut swb_writer,
    f: impl FnOnce(&mut Writer<'_, '_>) -> Result<(), swb_result>,
) -> swb_result {
    boundary::run(|| {
        if w.is_null() {
            return Err(swb_result::NullParameter);
        }
        // SAFETY: per the contract, `w` points to the `Writer` on the frame of a
        // running callback adapter, which does not touch it until the callback
        // returns; the lifetimes given here do not outlive this call.
        let w = unsafe { &mut *w.cast::<Writer<'_, '_>>() };
        if w.answered() {
            return Err(swb_result::AlreadyAnswered);
        }
        f(w)
    })
}

/// Answers with `json` as the result, verbatim: `json_len` bytes that must be exactly
/// one JSON value (checked; `SWB_RESULT_INVALID_JSON` otherwise, nothing written).
///
/// Every `swb_writer_*` function returns `SWB_RESULT_ALREADY_ANSWERED` (and writes
/// nothing) once the call has its answer: a callback answers once. Each value writer
/// writes the result, or the next value inside an open array or object (see
/// `swb_writer_begin_object`).
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
/// - `json` must be NULL or point to `json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_raw_json(
    writer: *mut swb_writer,
    json: *const c_char,
    json_len: usize,
) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            let json = bytes(json.cast(), json_len)?;
            w.value(swb_result::InvalidJson, |out| out.raw_json(json))
        })
    }
}

/// Answers with `null` as the result.
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_null(writer: *mut swb_writer) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            w.value(swb_result::AlreadyAnswered, |out| out.null())
        })
    }
}

/// Answers with `true` or `false` as the result.
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_bool(writer: *mut swb_writer, value: bool) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            w.value(swb_result::AlreadyAnswered, |out| out.bool(value))
        })
    }
}

/// Answers with a signed integer as the result.
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_int64(writer: *mut swb_writer, value: i64) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            w.value(swb_result::AlreadyAnswered, |out| out.i64(value))
        })
    }
}

/// Answers with an unsigned integer as the result.
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_uint64(writer: *mut swb_writer, value: u64) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            w.value(swb_result::AlreadyAnswered, |out| out.u64(value))
        })
    }
}

/// Answers with a finite double as the result (the shortest form that reads back the
/// same). NaN and infinities give `SWB_RESULT_NOT_FINITE` and write nothing.
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_double(writer: *mut swb_writer, value: f64) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            if !value.is_finite() {
                return Err(swb_result::NotFinite);
            }
            w.value(swb_result::AlreadyAnswered, |out| out.f64(value))
        })
    }
}

/// Answers with a string as the result: `len` bytes of UTF-8 (not NUL-terminated;
/// `SWB_RESULT_INVALID_UTF8` otherwise), escaped as JSON needs.
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
/// - `str` must be NULL or point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_string(
    writer: *mut swb_writer,
    str: *const c_char,
    len: usize,
) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            let s = text(str, len)?;
            w.value(swb_result::AlreadyAnswered, |out| out.str(s))
        })
    }
}

/// Begins an object as the result (or as the next value inside an open array or
/// object, or after a key): then `swb_writer_key` and a value for each member, and
/// `swb_writer_end_object`. The result is the outermost value once it ends; a callback
/// that returns with an array or object still open answers -32603 Internal error.
///
/// Keys and strings are escaped as JSON needs (quotes, backslashes, control
/// characters; UTF-8 is kept as it is), so a result never needs JSON built by hand.
/// Inside an array or object, every value writer (`swb_writer_null`, `_bool`,
/// `_int64`, `_uint64`, `_double`, `_string`, `_raw_json`, `_begin_array`,
/// `_begin_object`) appends the next value; a value where a key is due, a key outside
/// an object or after a key, or an end that does not match its begin gives
/// `SWB_RESULT_WRITER_STATE` and writes nothing. The outermost end checks the whole
/// value as `swb_writer_raw_json` does: deeper than 128 levels, `SWB_RESULT_INVALID_JSON`,
/// and the value is dropped. `swb_writer_error` (or `_invalid_params`,
/// `_handler_failed`) stays allowed while a value is open: the error is the answer.
///
/// ```c
/// swb_writer_begin_object(w);
/// swb_writer_key(w, "name", 4);  swb_writer_string(w, name, name_len);
/// swb_writer_key(w, "tags", 4);  swb_writer_begin_array(w);
///   swb_writer_int64(w, 1);  swb_writer_int64(w, 2);
/// swb_writer_end_array(w);
/// swb_writer_end_object(w);    // {"name":"...","tags":[1,2]}
/// ```
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_begin_object(writer: *mut swb_writer) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { with_writer(writer, |w| w.begin(true)) }
}

/// Ends the innermost object (see `swb_writer_begin_object`).
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_end_object(writer: *mut swb_writer) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { with_writer(writer, |w| w.end(true)) }
}

/// Begins an array: then its values, and `swb_writer_end_array` (see
/// `swb_writer_begin_object`).
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_begin_array(writer: *mut swb_writer) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { with_writer(writer, |w| w.begin(false)) }
}

/// Ends the innermost array (see `swb_writer_begin_object`).
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_end_array(writer: *mut swb_writer) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { with_writer(writer, |w| w.end(false)) }
}

/// Writes the key of the next member of the innermost object: `len` bytes of UTF-8
/// (`SWB_RESULT_INVALID_UTF8` otherwise), escaped; a value must follow. Outside an
/// object, or right after another key, `SWB_RESULT_WRITER_STATE`.
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
/// - `key` must be NULL or point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_key(
    writer: *mut swb_writer,
    key: *const c_char,
    len: usize,
) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            let key = text(key, len)?;
            w.key(key)
        })
    }
}

/// Answers -32602 Invalid params with `detail` (UTF-8, copied) in `data`, as the Rust
/// API's typed methods do: `{"detail":"...","field":"params","reason":"do not fit the
/// method"}`, the detail for example "missing field `minuend`".
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
/// - `detail` must be NULL or point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_invalid_params(
    writer: *mut swb_writer,
    detail: *const c_char,
    len: usize,
) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { error_with_detail(writer, detail, len, |d| RpcError::invalid_params(d)) }
}

/// Answers -32603 Internal error with `detail` (UTF-8, copied; say what failed) in
/// `data`, as the Rust API does for a failed handler: `{"detail":"...","reason":"the
/// handler failed"}`.
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
/// - `detail` must be NULL or point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_handler_failed(
    writer: *mut swb_writer,
    detail: *const c_char,
    len: usize,
) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { error_with_detail(writer, detail, len, |d| RpcError::internal(d)) }
}

/// Answers with the error `make` builds from `detail` (`len` bytes of UTF-8).
///
/// # Safety
/// - As for `swb_writer_invalid_params`.
unsafe fn error_with_detail(
    writer: *mut swb_writer,
    detail: *const c_char,
    len: usize,
    make: fn(&str) -> RpcError,
) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            w.error = Some(make(text(detail, len)?));
            Ok(())
        })
    }
}

/// Answers with an error object: `code`, `message` (UTF-8, copied) and optionally
/// `data` (`data_len` bytes of exactly one JSON value, or length 0 for none).
///
/// Applications use codes outside -32768..-32000 and put machine-readable detail in
/// `data`. Returns `SWB_RESULT_INVALID_UTF8` or `SWB_RESULT_INVALID_JSON` (nothing
/// written) for a bad message or data. For a notification the error is discarded, as
/// every answer.
///
/// # Safety
/// - `writer` must be NULL or the writer of the running callback, on its thread.
/// - `message` and `data` must each be NULL or point to their length in readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_writer_error(
    writer: *mut swb_writer,
    code: i32,
    message: *const c_char,
    message_len: usize,
    data: *const c_char,
    data_len: usize,
) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        with_writer(writer, |w| {
            let message = text(message, message_len)?;
            let data = bytes(data.cast(), data_len)?;
            let mut e = RpcError::new(code, message.to_owned());
            if !data.is_empty() {
                let data = core::str::from_utf8(data).map_err(|_| swb_result::InvalidJson)?;
                e = e
                    .try_with_data_json(data.to_owned())
                    .map_err(|_| swb_result::InvalidJson)?;
            }
            w.error = Some(e);
            Ok(())
        })
    }
}
