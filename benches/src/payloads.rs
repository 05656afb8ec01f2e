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

/// Writes `text` as a JSON string body: ASCII as is (`"` and `\` escaped), and each
/// char above ASCII as a `\u` escape when `escape_non_ascii` (a surrogate pair above
/// the BMP), else as its UTF-8 bytes.
fn push_json_str(out: &mut String, text: &str, escape_non_ascii: bool) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii() || !escape_non_ascii => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
}

/// A line break and `level` levels of two-space indentation.
fn newline(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// ~64 KB, token-dense: a pretty-printed `tools/call` params object (two-space
/// indentation, as `JSON.stringify(v, null, 2)` writes it) whose arguments hold an
/// array of small records of a few kinds (contacts, events, messages): many short
/// keys, short strings (some `\u` escapes, some non-ASCII UTF-8: accents, Cyrillic,
/// Greek, Japanese, an emoji), small integers, `true`/`false`/`null`, nested small
/// objects and arrays.
pub fn tokens_64k() -> Vec<u8> {
    tokens_params(65_000)
}

/// [`tokens_64k`]'s shape at about 4 KB.
pub fn tokens_4k() -> Vec<u8> {
    tokens_params(4_000)
}

/// [`tokens_64k`]'s params, records added until the text reaches `len` bytes.
pub fn tokens_params(len: usize) -> Vec<u8> {
    const NAMES: &[&str] = &[
        "Ana Souza",
        "Zoë Müller",
        "Jörg Björnsson",
        "Łukasz Wójcik",
        "Олег Петров",
        "Νίκος Παππάς",
        "山田 太郎",
        "佐藤 花子",
        "Chloé Dubois",
        "Sam O'Neil",
        "Mia Chen",
        "José Núñez",
    ];
    const TAGS: &[&str] = &[
        "vip", "beta", "eu", "us", "trial", "churn", "b2b", "mobile", "web", "api",
    ];
    const CITIES: &[(&str, &str)] = &[
        ("Zürich", "CH"),
        ("São Paulo", "BR"),
        ("Kraków", "PL"),
        ("東京", "JP"),
        ("Αθήνα", "GR"),
        ("Москва", "RU"),
        ("Lyon", "FR"),
        ("Austin", "US"),
    ];
    const TEXTS: &[&str] = &[
        "ok",
        "see you at 5",
        "café at noon?",
        "déjà vu — again",
        "merci 👍",
        "ありがとう",
        "done: 3/4",
        "Привет!",
        "\"quoted\" reply",
        "line one\nline two",
        "tab\tseparated",
        "naïve approach",
    ];
    const KINDS: &[&str] = &["contact", "event", "message"];
    let mut r = Rng(0x70ce_75de_45e0_0021);
    let mut s = String::new();
    let pick = |r: &mut Rng, list: &[&'static str]| list[r.below(list.len() as u64) as usize];
    // A string member `"key": "value"` at `level`, the value `\u`-escaped 1 time in 4.
    let str_member = |s: &mut String, r: &mut Rng, level: usize, key: &str, value: &str| {
        newline(s, level);
        s.push_str(&format!("\"{key}\": \""));
        push_json_str(s, value, r.below(4) == 0);
        s.push('"');
    };
    s.push('{');
    newline(&mut s, 1);
    s.push_str("\"name\": \"ingest_records\",");
    newline(&mut s, 1);
    s.push_str("\"arguments\": {");
    newline(&mut s, 2);
    s.push_str("\"source\": \"crm-export\",");
    newline(&mut s, 2);
    s.push_str("\"version\": 3,");
    newline(&mut s, 2);
    s.push_str("\"dryRun\": false,");
    newline(&mut s, 2);
    s.push_str("\"records\": [");
    let mut i = 0u64;
    while s.len() < len {
        if i > 0 {
            s.push(',');
        }
        newline(&mut s, 3);
        s.push('{');
        let kind = pick(&mut r, KINDS);
        newline(&mut s, 4);
        s.push_str(&format!("\"id\": {},", 1000 + i * 7 + r.below(7)));
        str_member(&mut s, &mut r, 4, "type", kind);
        s.push(',');
        match kind {
            "contact" => {
                let name = pick(&mut r, NAMES);
                str_member(&mut s, &mut r, 4, "name", name);
                s.push(',');
                newline(&mut s, 4);
                s.push_str(&format!("\"age\": {},", 18 + r.below(60)));
                newline(&mut s, 4);
                s.push_str(&format!("\"active\": {},", r.below(3) != 0));
                newline(&mut s, 4);
                s.push_str("\"tags\": [");
                let n = r.below(4);
                for t in 0..n {
                    s.push_str(if t > 0 { ", \"" } else { "\"" });
                    s.push_str(pick(&mut r, TAGS));
                    s.push('"');
                }
                s.push_str("],");
                let (city, cc) = CITIES[r.below(CITIES.len() as u64) as usize];
                newline(&mut s, 4);
                s.push_str("\"address\": {");
                str_member(&mut s, &mut r, 5, "city", city);
                s.push(',');
                str_member(&mut s, &mut r, 5, "cc", cc);
                s.push(',');
                newline(&mut s, 5);
                s.push_str(&format!(
                    "\"zip\": {}",
                    if r.below(5) == 0 {
                        "null".to_string()
                    } else {
                        format!("\"{:05}\"", r.below(100_000))
                    }
                ));
                newline(&mut s, 4);
                s.push_str("},");
                newline(&mut s, 4);
                s.push_str(&format!(
                    "\"manager\": {}",
                    if r.below(2) == 0 {
                        "null".to_string()
                    } else {
                        (1000 + r.below(i * 7 + 1)).to_string()
                    }
                ));
            }
            "event" => {
                newline(&mut s, 4);
                s.push_str(&format!(
                    "\"at\": \"2026-{:02}-{:02}T{:02}:{:02}:{:02}Z\",",
                    1 + r.below(12),
                    1 + r.below(28),
                    r.below(24),
                    r.below(60),
                    r.below(60)
                ));
                let action = pick(
                    &mut r,
                    &["login", "logout", "view", "click", "purchase", "refund"],
                );
                str_member(&mut s, &mut r, 4, "action", action);
                s.push(',');
                newline(&mut s, 4);
                s.push_str(&format!("\"count\": {},", r.below(20)));
                newline(&mut s, 4);
                s.push_str(&format!("\"ok\": {},", r.below(8) != 0));
                newline(&mut s, 4);
                s.push_str(&format!("\"ms\": {},", r.below(2_000)));
                newline(&mut s, 4);
                s.push_str("\"ctx\": {");
                let ua = pick(&mut r, &["ios", "android", "firefox", "chrome", "safari"]);
                str_member(&mut s, &mut r, 5, "ua", ua);
                s.push(',');
                newline(&mut s, 5);
                s.push_str(&format!(
                    "\"v\": [{}, {}, {}],",
                    1 + r.below(3),
                    r.below(20),
                    r.below(100)
                ));
                newline(&mut s, 5);
                s.push_str(&format!(
                    "\"ab\": {}",
                    ["null", "\"a\"", "\"b\""][r.below(3) as usize]
                ));
                newline(&mut s, 4);
                s.push('}');
            }
            _ => {
                newline(&mut s, 4);
                s.push_str(&format!("\"from\": {},", 1000 + r.below(500)));
                newline(&mut s, 4);
                s.push_str(&format!(
                    "\"to\": [{}, {}],",
                    1000 + r.below(500),
                    1000 + r.below(500)
                ));
                let text = pick(&mut r, TEXTS);
                str_member(&mut s, &mut r, 4, "text", text);
                s.push(',');
                newline(&mut s, 4);
                s.push_str(&format!("\"read\": {},", r.below(2) == 0));
                newline(&mut s, 4);
                s.push_str(&format!(
                    "\"reply\": {}",
                    if r.below(3) == 0 {
                        "null".to_string()
                    } else {
                        (1000 + r.below(i * 7 + 1)).to_string()
                    }
                ));
            }
        }
        newline(&mut s, 3);
        s.push('}');
        i += 1;
    }
    newline(&mut s, 2);
    s.push(']');
    newline(&mut s, 1);
    s.push('}');
    newline(&mut s, 0);
    s.push('}');
    s.into_bytes()
}

/// `digits` decimal digits, the first not `0` when `lead` (no leading zero).
fn digits(r: &mut Rng, n: usize, lead: bool) -> String {
    (0..n)
        .map(|i| {
            let d = if i == 0 && lead {
                1 + r.below(9)
            } else {
                r.below(10)
            };
            char::from(b'0' + d as u8)
        })
        .collect()
}

/// A coordinate as GeoJSON tools print them: `-`? integer part, `.`, 6 to 16 digits.
fn coordinate(r: &mut Rng, around: i64, spread: u64) -> String {
    let whole = around + r.below(spread) as i64 - (spread / 2) as i64;
    let n = 6 + r.below(11) as usize;
    let frac = digits(r, n, false);
    format!("{whole}.{frac}")
}

/// A float in exponent form: `-`? one digit, up to 16 fraction digits, `e`/`E`, a
/// signed or unsigned exponent (1 to 24, one in eight up to 300).
fn exponent_float(r: &mut Rng) -> String {
    let sign = if r.below(3) == 0 { "-" } else { "" };
    let mant = digits(r, 1, true);
    let n = 1 + r.below(16) as usize;
    let frac = digits(r, n, false);
    let e = ["e", "E", "e"][r.below(3) as usize];
    let esign = ["-", "+", ""][r.below(3) as usize];
    // Mostly small exponents (measurements, money, physics), now and then a large one.
    let exp = if r.below(8) == 0 {
        1 + r.below(300)
    } else {
        1 + r.below(24)
    };
    format!("{sign}{mant}.{frac}{e}{esign}{exp}")
}

/// ~64 KB, number-dense: a compact `tools/call` params object of GeoJSON-like
/// features (polygons and line strings of `[lon, lat]` pairs with 6 to 16 fraction
/// digits, some with an elevation), integer properties, then integer arrays
/// (histograms, timestamps, negative deltas) and floats with exponents.
pub fn numbers_64k() -> Vec<u8> {
    numbers_params(65_000)
}

/// [`numbers_64k`]'s params, features added until the text reaches about `len` bytes.
pub fn numbers_params(len: usize) -> Vec<u8> {
    let mut r = Rng(0x0b5e_55ed_9e0d_a7a1);
    let mut s = String::from(
        r#"{"name":"ingest_features","arguments":{"crs":"EPSG:4326","precision":-1,"type":"FeatureCollection","features":["#,
    );
    // The integer and exponent arrays after the features take about a fifth.
    let features_end = len - len / 5;
    let mut i = 0u64;
    while s.len() < features_end {
        if i > 0 {
            s.push(',');
        }
        let (lon, lat) = (-120 + r.below(240) as i64, -60 + r.below(120) as i64);
        let polygon = r.below(3) != 0;
        let with_z = r.below(4) == 0;
        s.push_str(&format!(
            r#"{{"type":"Feature","id":{i},"properties":{{"pop":{},"area":{},"rank":{},"delta":-{}}},"geometry":{{"type":"{}","coordinates":"#,
            r.below(10_000_000),
            coordinate(&mut r, 500, 1000),
            r.below(10),
            r.below(100_000),
            if polygon { "Polygon" } else { "LineString" }
        ));
        if polygon {
            s.push_str("[[");
        } else {
            s.push('[');
        }
        let points = 6 + r.below(30);
        for p in 0..points {
            if p > 0 {
                s.push(',');
            }
            s.push('[');
            s.push_str(&coordinate(&mut r, lon, 2));
            s.push(',');
            s.push_str(&coordinate(&mut r, lat, 2));
            if with_z {
                s.push_str(&format!(",{}", r.below(4000) as i64 - 100));
            }
            s.push(']');
        }
        s.push_str(if polygon { "]]}}" } else { "]}}" });
        i += 1;
    }
    s.push_str(r#"],"histogram":["#);
    for k in 0..200 {
        if k > 0 {
            s.push(',');
        }
        let bits = r.below(20) + 1;
        s.push_str(&r.below(1 << bits).to_string());
    }
    s.push_str(r#"],"timestamps":["#);
    let mut t = 1_764_633_600_000u64;
    for k in 0..120 {
        if k > 0 {
            s.push(',');
        }
        t += r.below(60_000);
        s.push_str(&t.to_string());
    }
    s.push_str(r#"],"deltas":["#);
    for k in 0..200 {
        if k > 0 {
            s.push(',');
        }
        let v = r.below(2_000) as i64 - 1_000;
        s.push_str(&v.to_string());
    }
    s.push_str(r#"],"samples":["#);
    let mut k = 0;
    while s.len() < len {
        if k > 0 {
            s.push(',');
        }
        match r.below(4) {
            0 => s.push_str(&coordinate(&mut r, 0, 2000)),
            1 => {
                let n = 1 + r.below(17) as usize;
                s.push_str(&format!("-0.{}", digits(&mut r, n, false)));
            }
            _ => s.push_str(&exponent_float(&mut r)),
        }
        k += 1;
    }
    s.push_str("]}}");
    s.into_bytes()
}
