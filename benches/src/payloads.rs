//! The bench inputs: fixed messages from the specification and the design notes,
//! and deterministic generators for the larger params payloads (no randomness
//! between runs: the same bytes every time).

/// The 115-byte `eth_getBalance` Request of DESIGN.md's "numbers to beat".
pub const ETH_GET_BALANCE: &[u8] = br#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":1}"#;

/// The specification's positional-params example.
pub const SUBTRACT_POSITIONAL: &[u8] =
    br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;

/// The specification's named-params example.
pub const SUBTRACT_NAMED: &[u8] =
    br#"{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":3}"#;

/// The specification's notification example (`update`, never answered).
pub const NOTIFICATION: &[u8] = br#"{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}"#;

/// An MCP `tools/call` Request as an agent client sends it: `id` first, a string id,
/// arguments nested three deep (objects, arrays, numbers, a literal, non-ASCII text)
/// and a `_meta` member beside them.
pub const MCP_TOOLS_CALL: &[u8] = concat!(
    r#"{"jsonrpc":"2.0","id":"call-42","method":"tools/call","params":{"name":"get_forecast","#,
    r#""arguments":{"location":{"city":"Zürich","country":"CH","coordinates":{"lat":47.3769,"lon":8.5417}},"#,
    r#""days":3,"units":"metric","include":["hourly","alerts","air_quality"],"#,
    r#""options":{"language":"de-CH","cache":true,"maxAgeSeconds":600}},"#,
    r#""_meta":{"progressToken":"p-42"}}}"#
)
.as_bytes();

/// The specification's parse-error example (invalid JSON: answered -32700, `id` null).
pub const PARSE_ERROR: &[u8] = br#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#;

/// The specification's invalid-request example (valid JSON, `method` not a string:
/// answered -32600, `id` null).
pub const INVALID_REQUEST: &[u8] = br#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#;

/// A Request calling `method` with `params` (raw JSON) and the raw `id`.
pub fn request(method: &str, params: &[u8], id: &str) -> Vec<u8> {
    let mut out = format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":"#).into_bytes();
    out.extend_from_slice(params);
    out.extend_from_slice(format!(r#","id":{id}}}"#).as_bytes());
    out
}

/// A batch of `n` `eth_getBalance` Requests with ids `1..=n` (10 make ~1.2 KB).
pub fn batch_of_eth_get_balance(n: usize) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for i in 1..=n {
        if i > 1 {
            out.push(b',');
        }
        out.extend_from_slice(
            format!(
                r#"{{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":{i}}}"#
            )
            .as_bytes(),
        );
    }
    out.push(b']');
    out
}

/// A tiny deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn hex(&mut self, digits: usize) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        (0..digits)
            .map(|_| HEX[(self.next() % 16) as usize] as char)
            .collect()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One Ethereum log entry as `eth_getLogs` returns it, plus a few numbers.
fn eth_log(r: &mut Rng, i: usize) -> String {
    format!(
        concat!(
            r#"{{"address":"0x{}","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","#,
            r#""0x000000000000000000000000{}","0x000000000000000000000000{}"],"data":"0x{}","#,
            r#""blockNumber":"0x{:x}","blockHash":"0x{}","transactionHash":"0x{}","#,
            r#""transactionIndex":{},"logIndex":{},"removed":false,"gasUsed":{},"value":{}.{:04},"#,
            r#""meta":{{"decimals":6,"symbol":"USDC","price":-0.99e-2,"verified":true,"note":null}}}}"#
        ),
        r.hex(40),
        r.hex(40),
        r.hex(40),
        r.hex(64),
        19_500_000 + i * 3,
        r.hex(64),
        r.hex(64),
        r.below(300),
        r.below(900),
        21_000 + r.below(200_000),
        r.below(100_000),
        r.below(10_000),
    )
}

/// ~4 KB of realistic params: an MCP `tools/call` params object whose arguments
/// mix strings (with escapes and non-ASCII), numbers (integers, fractions,
/// exponents, negatives), literals, nested objects and arrays of Ethereum logs.
pub fn params_4k() -> Vec<u8> {
    let mut r = Rng(0x5eed_1234_abcd_ef01);
    let mut s = String::from(concat!(
        r#"{"name":"index_logs","arguments":{"chainId":1,"fromBlock":"0x12a05f2","#,
        r#""toBlock":"latest","includeRemoved":false,"maxResults":250,"minValue":1.5e-3,"#,
        r#""label":"Transfers \u2192 treasury (Q3) \u2014 \"weekly\" caf\u00e9 — naïve","#,
        r#""tags":["erc20","usdc","treasury",null,true],"window":{"days":7,"tz":"Europe/Zürich"},"#,
        r#""logs":["#
    ));
    let mut i = 0;
    while s.len() < 3600 {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&eth_log(&mut r, i));
        i += 1;
    }
    s.push_str(r#"]},"_meta":{"progressToken":17}}"#);
    s.into_bytes()
}

/// ~64 KB, string-heavy: an MCP `tools/call` writing a source file, whose content
/// has a `\n` escape every line, some `\"` and `\t`, and a little non-ASCII.
pub fn text_64k() -> Vec<u8> {
    text_params(65_000)
}

/// [`text_64k`]'s params at about `len` bytes (a little more, never less than ~100):
/// the same text, cut after the first line that reaches `len`.
pub fn text_params(len: usize) -> Vec<u8> {
    let mut r = Rng(0x0dd_ba11_cafe_f00d);
    let mut s = String::from(
        r#"{"name":"write_file","arguments":{"path":"src/handlers/transfer.rs","content":""#,
    );
    const WORDS: &[&str] = &[
        "let",
        "value",
        "match",
        "self.state",
        "return",
        "Ok(())",
        "balance",
        "account",
        "&mut",
        "transfer",
        "amount",
        "into()",
        "if",
        "else",
        "for",
        "in",
        "iter()",
        "+=",
    ];
    let mut line = 0u64;
    while s.len() < len {
        s.push_str(r"\t");
        let words = 3 + r.below(8);
        for w in 0..words {
            if w > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[r.below(WORDS.len() as u64) as usize]);
        }
        match line % 17 {
            3 => s.push_str(r#" // \"quoted\" note"#),
            11 => s.push_str(" // café — naïve"),
            _ => s.push(';'),
        }
        s.push_str(r"\n");
        line += 1;
    }
    s.push_str(r#"","overwrite":true}}"#);
    s.into_bytes()
}

/// ~64 KB, one long escape-free ASCII string: an MCP `tools/call` uploading a
/// base64 blob (the best case for a SIMD string scan).
pub fn base64_64k() -> Vec<u8> {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut r = Rng(0xb64b_64b6_4b64_b64b);
    let mut s = String::from(
        r#"{"name":"upload","arguments":{"filename":"blob.bin","encoding":"base64","data":""#,
    );
    while s.len() < 65_400 {
        s.push(B64[r.below(64) as usize] as char);
    }
    s.push_str(r#"=="}}"#);
    s.into_bytes()
}
