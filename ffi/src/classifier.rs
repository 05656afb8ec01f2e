//! The low-level classifier on its own, for C servers that dispatch themselves.

use switchboard::{Error, Item, Message, Parser, envelope};

use crate::boundary::{self, bytes, out_ptr};
use crate::config;
use crate::result::swb_result;
use crate::slice::swb_slice;

/// Classifies whole messages into `swb_message` structs, reusing its state: after
/// warm-up it allocates nothing.
///
/// Ownership: owned by the caller (Box) from `swb_classifier_new` until
/// `swb_classifier_free`.
/// Thread safety: one thread at a time (not safe for concurrent use); it may move
/// between threads between calls.
pub struct swb_classifier {
    _private: [u8; 0],
}

/// What a message (or a batch element) is.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum swb_kind {
    /// A call to answer: `method`, `id`, `params` are set.
    Request = 1,
    /// A call never to answer, not even with an error: `method`, `params` are set.
    Notification = 2,
    /// A Response object from the peer (never answered): `id` and one of
    /// `response_result` / `response_error` are set.
    Response = 3,
    /// A valid, non-empty batch within the limits: `batch_len` is set; get each
    /// element with `swb_classifier_batch_get`. (Never the kind of an element.)
    Batch = 4,
    /// The message (or element) earns this single error response: `id` (the id to
    /// echo, `null` when none is usable) and the `error_*` fields are set.
    Error = 5,
}

/// A classified message or batch element. Every view points into the input given to
/// `swb_classifier_classify` or into the classifier's own memory, and is valid until
/// the next `swb_classifier_classify` on that classifier or its free (and, for views
/// into the input, while the input stays unchanged). Views not set for the kind are
/// empty (NULL, 0).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct swb_message {
    /// What this is.
    pub kind: swb_kind,
    /// Request, notification: the method name, unescaped, UTF-8.
    pub method: swb_slice,
    /// Request, notification: `false` when the name held an escaped lone surrogate
    /// (`"\ud800"`, shown as U+FFFD in `method`): such a name matches no method.
    pub method_exact: bool,
    /// Request, response: the id's exact JSON bytes (`1`, `"a"`, `null`...).
    /// Error: the id to echo in the error response (`null` when none is usable).
    pub id: swb_slice,
    /// Request, notification: the params' exact JSON bytes (an array or an object);
    /// empty when absent or `null`.
    pub params: swb_slice,
    /// Response: the `result` member's exact JSON bytes (`null` included), or empty.
    pub response_result: swb_slice,
    /// Response: the `error` member's exact JSON bytes, or empty.
    pub response_error: swb_slice,
    /// Batch: the number of elements (at least 1).
    pub batch_len: usize,
    /// Error: the JSON-RPC error code (-32700 or -32600); 0 otherwise.
    pub error_code: i32,
    /// Error: the code's message (`Parse error`, `Invalid Request`).
    pub error_message: swb_slice,
    /// Error: why, machine-stable (`must be a string`, `nesting deeper than max_depth`).
    pub error_reason: swb_slice,
    /// Error: the member the reason is about (`method`, `id`...), or empty.
    pub error_field: swb_slice,
    /// Error: the `data` object, as compact JSON.
    pub error_data: swb_slice,
    /// Error: the whole error response to send, ready to write
    /// (`{"jsonrpc":"2.0","error":{...},"id":...}`).
    pub error_response: swb_slice,
}

impl swb_message {
    pub(crate) const EMPTY: swb_message = swb_message {
        kind: swb_kind::Error,
        method: swb_slice::EMPTY,
        method_exact: false,
        id: swb_slice::EMPTY,
        params: swb_slice::EMPTY,
        response_result: swb_slice::EMPTY,
        response_error: swb_slice::EMPTY,
        batch_len: 0,
        error_code: 0,
        error_message: swb_slice::EMPTY,
        error_reason: swb_slice::EMPTY,
        error_field: swb_slice::EMPTY,
        error_data: swb_slice::EMPTY,
        error_response: swb_slice::EMPTY,
    };
}

/// Where an error's data and response landed in the scratch buffer, to point the
/// message's views at once the buffer stops growing.
struct Fixup {
    /// 0: the top-level message; `i + 1`: batch element `i`.
    index: usize,
    data: (usize, usize),
    response: (usize, usize),
}

struct Classifier {
    parser: Parser,
    /// The classified batch elements of the last message.
    items: Vec<swb_message>,
    /// Error responses of the last message.
    scratch: Vec<u8>,
    fixups: Vec<Fixup>,
    batch: bool,
}

/// The view of a classified item; error views are completed by the fixups.
fn item_view(
    item: Item<'_>,
    index: usize,
    scratch: &mut Vec<u8>,
    fixups: &mut Vec<Fixup>,
) -> swb_message {
    let mut m = swb_message::EMPTY;
    match item {
        Item::Request(r) => {
            m.kind = swb_kind::Request;
            m.method = swb_slice::of(r.method().as_str().as_bytes());
            m.method_exact = r.method().is_exact();
            m.id = swb_slice::of(r.id().as_bytes());
            m.params = swb_slice::of_opt(r.params().map(|p| p.as_bytes()));
        }
        Item::Notification(n) => {
            m.kind = swb_kind::Notification;
            m.method = swb_slice::of(n.method().as_str().as_bytes());
            m.method_exact = n.method().is_exact();
            m.params = swb_slice::of_opt(n.params().map(|p| p.as_bytes()));
        }
        Item::Response(r) => {
            m.kind = swb_kind::Response;
            m.id = swb_slice::of(r.id().as_bytes());
            m.response_result = swb_slice::of_opt(r.result().map(|v| v.as_bytes()));
            m.response_error = swb_slice::of_opt(r.error().map(|v| v.as_bytes()));
        }
        Item::Error(e) => {
            m.kind = swb_kind::Error;
            m.id = swb_slice::of(e.id().as_bytes());
            m.error_code = e.code().as_i32();
            m.error_message = swb_slice::of(e.code().message().as_bytes());
            m.error_reason = swb_slice::of(e.reason().as_str().as_bytes());
            m.error_field = swb_slice::of_opt(e.reason().field().map(|f| f.name().as_bytes()));
            fixups.push(write_error(scratch, &e, index));
        }
    }
    m
}

/// Appends the error response for `e` to `scratch`, as a session writes it (the
/// core's writer: [`envelope::core_error_response`]).
fn write_error(scratch: &mut Vec<u8>, e: &Error<'_>, index: usize) -> Fixup {
    let start = scratch.len();
    envelope::core_error_response(scratch, e);
    let end = scratch.len();
    // The response ends `<data>},"id":<id>}`, and its first member named `data`
    // is the data (before it come only the static code and message).
    let data_end = end - e.id().as_bytes().len() - b"},\"id\":}".len();
    const KEY: &[u8] = b"\"data\":";
    let data_start = scratch[start..data_end]
        .windows(KEY.len())
        .position(|w| w == KEY)
        .map_or(data_end, |i| start + i + KEY.len());
    Fixup {
        index,
        data: (data_start, data_end),
        response: (start, end),
    }
}

/// # Safety
/// - `p` must be NULL or a live classifier, used by this thread only.
unsafe fn classifier_mut<'a>(p: *mut swb_classifier) -> Result<&'a mut Classifier, swb_result> {
    if p.is_null() {
        return Err(swb_result::NullParameter);
    }
    // SAFETY: per the contract, a live, exclusively used Box<Classifier>.
    Ok(unsafe { &mut *p.cast::<Classifier>() })
}

/// Creates a classifier.
///
/// - `config`: the limits (copied), or NULL for SPEC.md's defaults.
/// - `out`: receives the classifier; free it with `swb_classifier_free`.
///
/// # Safety
/// - `config` must be NULL or a live config, not mutated concurrently.
/// - `out` must be NULL or point to a writable `swb_classifier *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_classifier_new(
    config: *const config::swb_config,
    out: *mut *mut swb_classifier,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        let cfg = if config.is_null() {
            switchboard::ParserConfig::new()
        } else {
            // SAFETY: forwarded from the caller's contract.
            *unsafe { config::from_ptr(config) }?
        };
        let c = Box::new(Classifier {
            parser: Parser::with_config(cfg),
            items: Vec::new(),
            scratch: Vec::new(),
            fixups: Vec::new(),
            batch: false,
        });
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(Box::into_raw(c).cast()) };
        Ok(())
    })
}

/// Frees a classifier. NULL is a no-op.
///
/// # Safety
/// - `classifier` must be NULL or a live classifier, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_classifier_free(classifier: *mut swb_classifier) {
    boundary::run_or((), || {
        if !classifier.is_null() {
            // SAFETY: per the contract, a Box<Classifier> leaked by
            // `swb_classifier_new`, freed exactly once, here.
            drop(unsafe { Box::from_raw(classifier.cast::<Classifier>()) });
        }
    })
}

/// Classifies one whole message: what it is, per JSON-RPC 2.0 and SPEC.md, with views
/// of its method, id and params, or the exact error it earns (with the error response
/// ready to send). Validates the whole input (UTF-8, grammar, depth, limits) first.
///
/// - `input`, `input_len`: the message; it must stay unchanged while the views are used.
/// - `out`: receives the classification; its views are valid until the next
///   `swb_classifier_classify` on this classifier (or its free). For a batch, get the
///   elements with `swb_classifier_batch_get`.
///
/// Returns `SWB_RESULT_OK` for every message, bad ones included (kind
/// `SWB_KIND_ERROR`).
///
/// # Safety
/// - `classifier` must be NULL or a live classifier, not used by another thread now.
/// - `input` must be NULL or point to `input_len` readable bytes.
/// - `out` must be NULL or point to a writable `swb_message`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_classifier_classify(
    classifier: *mut swb_classifier,
    input: *const u8,
    input_len: usize,
    out: *mut swb_message,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let c = unsafe { classifier_mut(classifier) }?;
        // SAFETY: forwarded from the caller's contract.
        let input = unsafe { bytes(input, input_len) }?;
        let Classifier {
            parser,
            items,
            scratch,
            fixups,
            batch,
        } = c;
        items.clear();
        scratch.clear();
        fixups.clear();
        *batch = false;
        let mut top = match parser.parse(input) {
            Message::Batch(b) => {
                items.extend(
                    b.iter()
                        .enumerate()
                        .map(|(i, item)| item_view(item, i + 1, scratch, fixups)),
                );
                *batch = true;
                let mut m = swb_message::EMPTY;
                m.kind = swb_kind::Batch;
                m.batch_len = b.len();
                m
            }
            Message::Request(r) => item_view(Item::Request(r), 0, scratch, fixups),
            Message::Notification(n) => item_view(Item::Notification(n), 0, scratch, fixups),
            Message::Response(r) => item_view(Item::Response(r), 0, scratch, fixups),
            Message::Error(e) => item_view(Item::Error(e), 0, scratch, fixups),
        };
        for f in fixups.iter() {
            let m = if f.index == 0 {
                &mut top
            } else {
                &mut items[f.index - 1]
            };
            m.error_data = swb_slice::of(&scratch[f.data.0..f.data.1]);
            m.error_response = swb_slice::of(&scratch[f.response.0..f.response.1]);
        }
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(top) };
        Ok(())
    })
}

/// The `index`-th element (from 0) of the batch the classifier last classified.
///
/// - `out`: receives the element (never of kind `SWB_KIND_BATCH`); views valid as for
///   `swb_classifier_classify`.
///
/// Returns `SWB_RESULT_NOT_A_BATCH` if the last message was not a batch (or none was
/// classified), `SWB_RESULT_INDEX_OUT_OF_RANGE` if `index >= batch_len`.
///
/// # Safety
/// - `classifier` must be NULL or a live classifier, not used by another thread now.
/// - `out` must be NULL or point to a writable `swb_message`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_classifier_batch_get(
    classifier: *mut swb_classifier,
    index: usize,
    out: *mut swb_message,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let c = unsafe { classifier_mut(classifier) }?;
        if !c.batch {
            return Err(swb_result::NotABatch);
        }
        let m = *c.items.get(index).ok_or(swb_result::IndexOutOfRange)?;
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(m) };
        Ok(())
    })
}
