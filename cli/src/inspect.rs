//! `switchboard inspect`: one JSON object describing what the parser sees in a
//! message, for each message of the input.
//!
//! The input is one message, or an NDJSON stream (one message per line, as
//! `serve --stdio` frames them): `--ndjson` and `--single` say which; without
//! either, an input of several non-blank lines whose first line is on its own a
//! complete JSON value is a stream, anything else one message (a pretty-printed
//! message's first line, `{` or `{"jsonrpc":"2.0",`, is not a complete value).
//! Blank lines of a stream are skipped.
//!
//! Exit codes: 0 every message is valid JSON-RPC (responses carrying an error
//! object included), 1 the parser rejected at least one message or batch item
//! (its description is `"kind":"error"`), 2 usage or the input cannot be read.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use switchboard::Parser;

use crate::describe::{Found, describe_into};

/// `switchboard inspect`'s command line.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The message, or messages one per line (standard input when absent or -)
    file: Option<PathBuf>,
    /// Indented output; under a parse error, the input's line with a caret (^) at
    /// the byte where the error was found
    #[arg(short, long)]
    pretty: bool,
    /// Read the input as NDJSON: one message per line, whatever its first line
    #[arg(long, conflicts_with = "single")]
    ndjson: bool,
    /// Read the whole input as one message, whatever its lines
    #[arg(long)]
    single: bool,
}

/// `switchboard inspect`.
pub(crate) fn run(args: Args) -> ExitCode {
    let Some(input) = crate::read_input_or_report(args.file.as_deref()) else {
        return ExitCode::from(2);
    };
    let mode = match (args.ndjson, args.single) {
        (true, _) => Split::Lines,
        (_, true) => Split::Whole,
        _ => Split::Detect,
    };
    let mut parser = Parser::new();
    let mut rejected = false;
    let mut out = std::io::stdout().lock();
    for message in messages(&input, mode) {
        let mut found = Found::default();
        let line = describe_into(&mut parser, message, &mut found);
        rejected |= found.rejected;
        let text = if args.pretty {
            let mut t = pretty(&line);
            for &at in &found.offsets {
                t.push('\n');
                t.push_str(&caret(message, at));
            }
            t
        } else {
            line
        };
        if writeln!(out, "{text}").is_err() {
            return ExitCode::from(1);
        }
    }
    if out.flush().is_err() || rejected {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// How the input is cut into messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Split {
    /// One message per non-blank line.
    Lines,
    /// The whole input is one message.
    Whole,
    /// Lines when there are several and the first is a complete JSON value.
    Detect,
}

/// The messages of `input` (see the [module docs](self)).
pub(crate) fn messages(input: &[u8], mode: Split) -> Vec<&[u8]> {
    let lines = || {
        input
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .filter(|l| !l.trim_ascii().is_empty())
    };
    let stream = match mode {
        Split::Lines => true,
        Split::Whole => false,
        Split::Detect => {
            let mut it = lines();
            match (it.next(), it.next()) {
                (Some(first), Some(_)) => {
                    serde_json::from_slice::<Box<serde_json::value::RawValue>>(first).is_ok()
                }
                _ => false,
            }
        }
    };
    if stream {
        lines().collect()
    } else {
        vec![input]
    }
}

/// `json` (valid JSON) indented by two spaces, its strings and numbers kept
/// byte for byte (a round trip through a JSON value would rewrite `1.0`,
/// `1e2` or `\u0062`); empty objects and arrays stay `{}` and `[]`.
pub(crate) fn pretty(json: &str) -> String {
    fn newline(out: &mut String, depth: usize) {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
    let mut out = String::with_capacity(json.len() * 2);
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            ' ' | '\t' | '\n' | '\r' => {}
            '{' | '[' => {
                out.push(c);
                while chars
                    .next_if(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
                    .is_some()
                {}
                if let Some(close) = chars.next_if(|&n| n == if c == '{' { '}' } else { ']' }) {
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            '"' => {
                in_string = true;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Where byte `at` of `input` is: `line L, byte B:`, then the line (at most
/// [`CARET_WINDOW`] characters either side of the byte, cut ends marked `…`,
/// control characters shown as spaces) and a `^` under the byte.
pub(crate) fn caret(input: &[u8], at: usize) -> String {
    let at = at.min(input.len());
    let start = input[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let end = input[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(input.len(), |i| at + i);
    let line_no = input[..start].iter().filter(|&&b| b == b'\n').count() + 1;
    let shown = |bytes: &[u8]| -> Vec<char> {
        String::from_utf8_lossy(bytes)
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    let before = shown(&input[start..at]);
    let after = shown(&input[at..end]);
    let cut_before = before.len() > CARET_WINDOW;
    let before = &before[before.len().saturating_sub(CARET_WINDOW)..];
    let cut_after = after.len() > CARET_WINDOW;
    let after = &after[..after.len().min(CARET_WINDOW)];
    let mut out = format!("line {line_no}, byte {at}:\n  ");
    let mut column = 2;
    if cut_before {
        out.push('…');
        column += 1;
    }
    out.extend(before);
    column += before.len();
    out.extend(after);
    if cut_after {
        out.push('…');
    }
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', column));
    out.push('^');
    out
}

/// Characters shown either side of the byte a caret points at.
const CARET_WINDOW: usize = 60;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::describe::describe;

    #[test]
    fn describes_the_exact_bytes() {
        let mut parser = Parser::new();
        let out = describe(
            &mut parser,
            br#"{"jsonrpc":"2.0","method":"su\u0062tract","params":[42,23],"id":1.0}"#,
        );
        assert_eq!(
            out,
            r#"{"kind":"request","method":"subtract","id":1.0,"params":[42,23]}"#
        );
    }

    #[test]
    fn pretty_indents_and_keeps_bytes() {
        assert_eq!(
            pretty(r#"{"kind":"request","id":1.0,"params":[1e2,"a, b: {c}",{ }, [],{"x":"\"]"}]}"#),
            "{\n  \"kind\": \"request\",\n  \"id\": 1.0,\n  \"params\": [\n    1e2,\n    \"a, b: {c}\",\n    {},\n    [],\n    {\n      \"x\": \"\\\"]\"\n    }\n  ]\n}"
        );
        // Whitespace of raw params (a pretty-printed input) is redone, not doubled.
        assert_eq!(pretty("[1,\n   2]"), "[\n  1,\n  2\n]");
    }

    #[test]
    fn the_caret_points_at_the_byte() {
        assert_eq!(
            caret(b"{\"a\":,}", 5),
            "line 1, byte 5:\n  {\"a\":,}\n       ^"
        );
        assert_eq!(caret(b"[1,\n 2 x]", 7), "line 2, byte 7:\n   2 x]\n     ^");
        // At the end of the input (an unterminated message).
        assert_eq!(caret(b"[1,", 3), "line 1, byte 3:\n  [1,\n     ^");
        // A long line is cut around the byte.
        let long = format!("[{}x]", "1,".repeat(100));
        let c = caret(long.as_bytes(), 201);
        let lines: Vec<&str> = c.lines().collect();
        assert!(lines[1].starts_with("  …"), "{c}");
        let col = lines[2].chars().count() - 1;
        assert_eq!(lines[1].chars().nth(col), Some('x'), "{c}");
    }

    #[test]
    fn streams_are_told_from_one_pretty_message() {
        let stream =
            b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\r\n";
        assert_eq!(messages(stream, Split::Detect).len(), 2);
        assert_eq!(messages(stream, Split::Whole).len(), 1);
        let pretty = b"{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"a\"\n}\n";
        assert_eq!(messages(pretty, Split::Detect), vec![&pretty[..]]);
        assert_eq!(messages(pretty, Split::Lines).len(), 4);
        assert_eq!(messages(b"{\"a\":1}\n", Split::Detect).len(), 1);
        assert_eq!(messages(b"", Split::Detect), vec![&b""[..]]);
    }
}
