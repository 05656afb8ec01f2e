//! Newline-delimited JSON-RPC over any reader and writer (MCP's stdio transport):
//! one message per line, blank lines skipped, each response on its own line.

use std::io::{self, BufRead, Write};

use switchboard::Session;

/// Answers newline-delimited messages from `input` on `output` until EOF.
/// A line longer than the session's `max_message_bytes` is answered with the
/// -32600 size error without being buffered whole (memory stays bounded).
/// Returns the number of messages handled.
///
/// ```
/// let mut session = switchboard::Session::new(switchboard_server::demo::router());
/// let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}\n\n{\"jsonrpc\":\"2.0\",\"method\":\"update\"}\n";
/// let mut out = Vec::new();
/// let n = switchboard_server::stdio::serve_ndjson(&mut session, &input[..], &mut out).unwrap();
/// assert_eq!(n, 2);
/// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"result\":19,\"id\":1}\n");
/// ```
pub fn serve_ndjson<R: BufRead, W: Write>(
    session: &mut Session,
    mut input: R,
    mut output: W,
) -> io::Result<u64> {
    let limit = session.router().config().get_max_message_bytes();
    let mut line: Vec<u8> = Vec::new();
    let mut handled = 0u64;
    loop {
        line.clear();
        let mut eof = true;
        // Read one line, keeping at most `limit + 1` bytes of it.
        loop {
            let buf = input.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            eof = false;
            let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            let room = (limit + 1).saturating_sub(line.len());
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            let used = chunk.len() + usize::from(found);
            input.consume(used);
            if found {
                break;
            }
        }
        if eof && line.is_empty() {
            break;
        }
        // An over-long line holds `limit + 1` bytes here: the size check answers it.
        let msg = line.strip_suffix(b"\r").unwrap_or(&line);
        if msg.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            continue; // blank line
        }
        handled += 1;
        if let Some(resp) = session.handle(msg) {
            output.write_all(resp)?;
            output.write_all(b"\n")?;
            output.flush()?;
        }
    }
    Ok(handled)
}
