//! The stdio NDJSON server (`serve_ndjson`) over arbitrary bytes: its output equals
//! one `Session::handle` per non-blank line, each answer on its own line; with a
//! small size limit, an over-long line gets the -32600 size error, whatever it holds.
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use switchboard::Session;
use switchboard_server::stdio::serve_ndjson;

thread_local! {
    static S: RefCell<[(Session, Session); 2]> = RefCell::new([
        (switchboard_fuzz::demo_session(), switchboard_fuzz::demo_session()),
        (switchboard_fuzz::small_demo_session(), switchboard_fuzz::small_demo_session()),
    ]);
}

/// What the server should write: each line (LF-separated, a trailing CR dropped,
/// blank lines of spaces/tabs skipped) handled on its own.
fn expected(session: &mut Session, input: &[u8]) -> (Vec<u8>, u64) {
    let limit = session.router().config().get_max_message_bytes();
    let mut out = Vec::new();
    let mut n = 0;
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if input.ends_with(b"\n") || input.is_empty() {
        lines.pop();
    }
    for line in lines {
        let msg = line.strip_suffix(b"\r").unwrap_or(line);
        if msg.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            continue;
        }
        n += 1;
        // The size error is about the whole line, even if the server only keeps
        // `limit + 1` bytes of it.
        let msg = if msg.len() > limit { line } else { msg };
        if let Some(resp) = session.handle(msg) {
            out.extend_from_slice(resp);
            out.push(b'\n');
        }
    }
    (out, n)
}

fuzz_target!(|data: &[u8]| {
    S.with_borrow_mut(|sessions| {
        for (server, reference) in sessions.iter_mut() {
            let mut out = Vec::new();
            let n = serve_ndjson(server, data, &mut out).expect("writing to a Vec cannot fail");
            let (want, want_n) = expected(reference, data);
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&want),
                "stdio output; input {:?}",
                String::from_utf8_lossy(data)
            );
            assert_eq!(n, want_n, "messages handled");
            assert_eq!(
                out.iter().filter(|&&b| b == b'\n').count(),
                want.iter().filter(|&&b| b == b'\n').count()
            );
        }
    });
});
