//! The fixed corpus (`benches/corpus/`, issue 6): one message per file, committed, so
//! that every tool (the `count` race, `callgrind.sh`, `allocs`, the criterion benches,
//! `guard.sh`) and every later run measures exactly the same bytes.
//!
//! The files are made once by the generators listed in [`ENTRIES`] (`cargo run -p
//! switchboard-benches --bin corpus -- write` rewrites them and `corpus/README.md`);
//! a test checks that the committed files are exactly what the generators make, so
//! they cannot drift apart.
//!
//! A corpus workload is named by its file name (`eth_getBalance.json`). On its own the
//! name means request bytes to response bytes (the dispatch stacks of
//! [`crate::dispatch`]); with the prefix `parse:` it means classifying the message
//! only (the parser stacks of the crate root: validate, classify, hand out the method).
//! Any other `*.json` file put into the corpus folder runs too, with switchboard's
//! answer as the reference (the committed ones have their answers pinned by tests).
//!
//! Two lists make the committed files: [`ENTRIES`], the protocol messages, and
//! [`SHAPES`] (issue 21), params of the shapes the field measures parsers on,
//! token-dense and number-dense, generated here. Beside them, not committed, the
//! three real-world documents ([`REALWORLD`]: twitter, citm_catalog, canada, 4.6 MB)
//! are read from `../shared/data/realworld` (or `$SWITCHBOARD_REALWORLD`) and each
//! wrapped as the params of one `ingest` request: workloads
//! `parse:realworld/twitter.json` (classify) and `realworld/twitter.json` (request
//! to response); `realworld` and `parse:realworld` stand for all three, as `corpus`
//! and `parse:corpus` do for the committed files.

use std::path::{Path, PathBuf};

use crate::dispatch::batch_of_subtract;
use crate::payloads;

/// One corpus file: its name (without `.json`), what it is, and its generator.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// File name without the `.json` extension.
    pub stem: &'static str,
    /// What the message is (for `corpus/README.md` and the report).
    pub about: &'static str,
    /// Makes the file's exact bytes.
    pub make: fn() -> Vec<u8>,
}

impl Entry {
    /// The file name (`<stem>.json`), which is also the workload name.
    pub fn file_name(&self) -> String {
        format!("{}.json", self.stem)
    }
}

/// The protocol messages of the corpus, in report order.
pub const ENTRIES: [Entry; 12] = [
    Entry {
        stem: "subtract_positional",
        about: "the specification's positional-params example, `subtract` `[42,23]`",
        make: || payloads::SUBTRACT_POSITIONAL.to_vec(),
    },
    Entry {
        stem: "subtract_named",
        about: "the specification's named-params example, `subtract` `{\"subtrahend\":23,\"minuend\":42}`",
        make: || payloads::SUBTRACT_NAMED.to_vec(),
    },
    Entry {
        stem: "notification",
        about: "the specification's notification example, `update` (no `id`, never answered)",
        make: || payloads::NOTIFICATION.to_vec(),
    },
    Entry {
        stem: "eth_getBalance",
        about: "an Ethereum `eth_getBalance` call, 115 bytes (DESIGN.md's numbers to beat)",
        make: || payloads::ETH_GET_BALANCE.to_vec(),
    },
    Entry {
        stem: "mcp_tools_call",
        about: "an MCP `tools/call` as an agent sends it: string `id` first, arguments nested three deep, `_meta`",
        make: || payloads::MCP_TOOLS_CALL.to_vec(),
    },
    Entry {
        stem: "batch10_eth_getBalance",
        about: "a batch of 10 `eth_getBalance` calls (ids 1-10)",
        make: || payloads::batch_of_eth_get_balance(10),
    },
    Entry {
        stem: "batch100_eth_getBalance",
        about: "a batch of 100 `eth_getBalance` calls (ids 1-100)",
        make: || payloads::batch_of_eth_get_balance(100),
    },
    Entry {
        stem: "batch10_subtract",
        about: "a batch of 10 positional `subtract` calls, every answer different",
        make: || batch_of_subtract(10),
    },
    Entry {
        stem: "params_4k",
        about: "`tools/call` with 4 KB of params: Ethereum logs, escapes, non-ASCII, every kind of number",
        make: || payloads::request("tools/call", &payloads::params_4k(), "4"),
    },
    Entry {
        stem: "params_64k",
        about: "`tools/call` with 64 KB of params, string-heavy (a source file with `\\n`, `\\t`, `\\\"` escapes)",
        make: || payloads::request("tools/call", &payloads::text_64k(), "64"),
    },
    Entry {
        stem: "parse_error",
        about: "the specification's invalid-JSON example (answered -32700, `id` null)",
        make: || payloads::PARSE_ERROR.to_vec(),
    },
    Entry {
        stem: "invalid_request",
        about: "the specification's invalid-request example, `method` a number (answered -32600, `id` null)",
        make: || payloads::INVALID_REQUEST.to_vec(),
    },
];

/// The generated shapes of the corpus (issue 21), after [`ENTRIES`] in report order:
/// the params of one `tools/call` request each (so that request to response reads
/// them too: `tools/call` answers the tool's name and its argument count).
pub const SHAPES: [Entry; 3] = [
    Entry {
        stem: "tokens_4k",
        about: "`tools/call` with 4 KB of token-dense params: `tokens_64k`'s records, fewer",
        make: || payloads::request("tools/call", &payloads::tokens_4k(), "5"),
    },
    Entry {
        stem: "tokens_64k",
        about: "`tools/call` with 64 KB of token-dense params, pretty-printed (two-space indentation): records with many short keys, short strings (some `\\u` escapes, some non-ASCII UTF-8), small ints, `true`/`false`/`null`",
        make: || payloads::request("tools/call", &payloads::tokens_64k(), "65"),
    },
    Entry {
        stem: "numbers_64k",
        about: "`tools/call` with 64 KB of number-dense params, compact: GeoJSON-like features (`[lon,lat]` pairs of 6-16 fraction digits in small nested arrays, 6-35 a feature), integer arrays, negative numbers, floats with exponents",
        make: || payloads::request("tools/call", &payloads::numbers_64k(), "66"),
    },
];

/// Every committed file: [`ENTRIES`] then [`SHAPES`].
pub fn entries() -> impl Iterator<Item = &'static Entry> {
    ENTRIES.iter().chain(SHAPES.iter())
}

/// One real-world document (read, not committed): `shared/data/realworld/<name>.json`.
#[derive(Clone, Copy, Debug)]
pub struct RealWorld {
    /// File name without `.json` (`twitter`).
    pub name: &'static str,
    /// What the document is.
    pub about: &'static str,
}

/// The real-world documents, in report order.
pub const REALWORLD: [RealWorld; 3] = [
    RealWorld {
        name: "twitter",
        about: "a social feed: many short keys, non-ASCII text (Japanese), `\\u` escapes, URLs, nested objects",
    },
    RealWorld {
        name: "citm_catalog",
        about: "an event catalog: deep objects with numeric keys, integers, many nulls, indentation whitespace",
    },
    RealWorld {
        name: "canada",
        about: "GeoJSON coordinates: floating-point numbers almost only, in small arrays",
    },
];

/// The prefix of the real-world workload names (`realworld/twitter.json`).
pub const REALWORLD_PREFIX: &str = "realworld/";

/// The environment variable that overrides where the real-world documents are read.
pub const REALWORLD_ENV: &str = "SWITCHBOARD_REALWORLD";

/// The folder of the real-world documents: `$SWITCHBOARD_REALWORLD`, else
/// `shared/data/realworld` beside the checkout (`../shared/data/realworld` from the
/// repository's root, where the JSONTestSuite corpus is found too).
pub fn realworld_dir() -> PathBuf {
    std::env::var_os(REALWORLD_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/realworld")
        })
}

/// The real-world workload names (`realworld/twitter.json`, ...), in report order.
pub fn realworld_names() -> Vec<String> {
    REALWORLD
        .iter()
        .map(|d| format!("{REALWORLD_PREFIX}{}.json", d.name))
        .collect()
}

/// A document as the params of one `ingest` request:
/// `{"jsonrpc":"2.0","method":"ingest","params":<doc, whitespace trimmed>,"id":1}`.
pub fn ingest_request(doc: &[u8]) -> Vec<u8> {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let start = doc.iter().position(|b| !ws(b)).unwrap_or(doc.len());
    let end = doc.iter().rposition(|b| !ws(b)).map_or(start, |e| e + 1);
    payloads::request("ingest", &doc[start..end], "1")
}

/// The workload-name prefix that selects classification only.
pub const PARSE_PREFIX: &str = "parse:";

/// The workload-name prefix that selects validation only (the same message, every
/// parser stack asked only "is this one valid JSON text": serde_json's
/// `from_slice::<IgnoredAny>`, switchboard's `Parser::validate`, ...).
pub const VALIDATE_PREFIX: &str = "validate:";

/// Whether `name` is a parser-family corpus name (`parse:` or `validate:`).
pub fn is_classify_name(name: &str) -> bool {
    name.starts_with(PARSE_PREFIX) || name.starts_with(VALIDATE_PREFIX)
}

/// The corpus folder: `$SWITCHBOARD_CORPUS`, else `benches/corpus` of this checkout.
pub fn dir() -> PathBuf {
    std::env::var_os("SWITCHBOARD_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"))
}

/// Whether `name` names a corpus workload (`*.json`, with or without `parse:`).
pub fn is_corpus_name(name: &str) -> bool {
    name.strip_prefix(PARSE_PREFIX)
        .or_else(|| name.strip_prefix(VALIDATE_PREFIX))
        .unwrap_or(name)
        .ends_with(".json")
}

/// The file names of the committed corpus ([`entries`]), in report order.
pub fn file_names() -> Vec<String> {
    entries().map(Entry::file_name).collect()
}

/// What a group name stands for: `corpus` every committed file ([`file_names`]),
/// `realworld` the real-world documents ([`realworld_names`]), each with `parse:`
/// for their classify workloads and `validate:` for validation only; `None` for a
/// name that is not a group.
pub fn expand_group(name: &str) -> Option<Vec<String>> {
    let (prefix, group) = [PARSE_PREFIX, VALIDATE_PREFIX]
        .into_iter()
        .find_map(|p| name.strip_prefix(p).map(|g| (p, g)))
        .unwrap_or(("", name));
    let names = match group {
        "corpus" => file_names(),
        "realworld" => realworld_names(),
        _ => return None,
    };
    Some(names.into_iter().map(|f| format!("{prefix}{f}")).collect())
}

/// The bytes of the corpus file `file` (`eth_getBalance.json`), read from [`dir`];
/// for `realworld/NAME.json`, the document `NAME.json` of [`realworld_dir`] as an
/// [`ingest_request`].
pub fn load(file: &str) -> Result<Vec<u8>, String> {
    let (folder, name) = match file.strip_prefix(REALWORLD_PREFIX) {
        Some(name) => (realworld_dir(), name),
        None => (dir(), file),
    };
    if name.contains('/')
        || name.contains('\\')
        || name.starts_with('.')
        || !name.ends_with(".json")
    {
        return Err(format!(
            "{file}: not a corpus file name (NAME.json or {REALWORLD_PREFIX}NAME.json)"
        ));
    }
    let path = folder.join(name);
    let bytes = std::fs::read(&path).map_err(|e| {
        let hint = if folder != dir() {
            format!(
                " (the real-world documents are read from ../shared/data/realworld beside the \
                 checkout, or from ${REALWORLD_ENV})"
            )
        } else {
            String::new()
        };
        format!("{}: {e}{hint}", path.display())
    })?;
    Ok(if folder == dir() {
        bytes
    } else {
        ingest_request(&bytes)
    })
}

/// The entry whose file is `file`, if it is a committed one.
pub fn entry(file: &str) -> Option<&'static Entry> {
    entries().find(|e| e.file_name() == file)
}

/// `corpus/README.md` as the generators describe it.
pub fn readme() -> String {
    let mut s = String::from(
        "# The benchmark corpus\n\n\
         One JSON-RPC message per file, exact bytes (no trailing newline), made by the\n\
         generators in `benches/src/corpus.rs` and `benches/src/payloads.rs`. Do not edit by\n\
         hand: `cargo run -p switchboard-benches --bin corpus -- write` rewrites the files and\n\
         this README, and `cargo test -p switchboard-benches` fails when they differ from\n\
         what the generators make.\n\n\
         Workload names are the file names: `eth_getBalance.json` is request bytes to\n\
         response bytes on every dispatch stack, `parse:eth_getBalance.json` classification\n\
         only on every parser stack (`benches/README.md`).\n\n\
         | file | bytes | what |\n| --- | ---: | --- |\n",
    );
    for e in entries() {
        s.push_str(&format!(
            "| `{}` | {} | {} |\n",
            e.file_name(),
            (e.make)().len(),
            e.about
        ));
    }
    s.push_str(
        "\n## Real-world documents (read, not committed)\n\n\
         The three documents every JSON parser of the field is measured on are read from\n\
         `../shared/data/realworld` beside the checkout (or `$SWITCHBOARD_REALWORLD`), not\n\
         committed (4.6 MB), and each wrapped as the params of one request:\n\
         `{\"jsonrpc\":\"2.0\",\"method\":\"ingest\",\"params\":<document, whitespace trimmed>,\"id\":1}`.\n\
         Workloads `parse:realworld/twitter.json` (classify) and `realworld/twitter.json`\n\
         (request to response; no stack has an `ingest` method, so that is validation and a\n\
         -32601 answer); `realworld` and `parse:realworld` stand for all three.\n\n\
         | workload | document | what |\n| --- | --- | --- |\n",
    );
    for d in &REALWORLD {
        s.push_str(&format!(
            "| `{REALWORLD_PREFIX}{0}.json` | `shared/data/realworld/{0}.json` | {1} |\n",
            d.name, d.about
        ));
    }
    s
}

/// Writes every file and the README into `dir`; the names written.
pub fn write_all(dir: &Path) -> std::io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for e in entries() {
        std::fs::write(dir.join(e.file_name()), (e.make)())?;
        written.push(e.file_name());
    }
    std::fs::write(dir.join("README.md"), readme())?;
    written.push("README.md".to_owned());
    Ok(written)
}

/// The differences between `dir` and what the generators make (empty: none).
pub fn differences(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut expected: Vec<(String, Vec<u8>)> =
        entries().map(|e| (e.file_name(), (e.make)())).collect();
    expected.push(("README.md".to_owned(), readme().into_bytes()));
    for (name, want) in &expected {
        match std::fs::read(dir.join(name)) {
            Ok(got) if &got == want => {}
            Ok(got) => out.push(format!(
                "{name}: {} bytes committed, the generator makes {} (different bytes)",
                got.len(),
                want.len()
            )),
            Err(e) => out.push(format!("{name}: {e}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed files are exactly what the generators make.
    #[test]
    fn committed_corpus_matches_the_generators() {
        let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        let diff = differences(&d);
        assert!(
            diff.is_empty(),
            "benches/corpus differs from its generators (run `cargo run -p \
             switchboard-benches --bin corpus -- write` if the generators changed on purpose):\n{}",
            diff.join("\n")
        );
    }

    #[test]
    fn sizes_and_names() {
        let size = |stem: &str| (entries().find(|e| e.stem == stem).unwrap().make)().len();
        assert_eq!(size("eth_getBalance"), 115);
        assert!((3900..=4500).contains(&size("params_4k")));
        assert!((65_000..=66_000).contains(&size("params_64k")));
        assert!((11_000..=13_000).contains(&size("batch100_eth_getBalance")));
        assert!((3900..=4500).contains(&size("tokens_4k")));
        assert!((65_000..=66_000).contains(&size("tokens_64k")));
        assert!((65_000..=66_000).contains(&size("numbers_64k")));
        let mut stems: Vec<&str> = entries().map(|e| e.stem).collect();
        stems.sort_unstable();
        stems.dedup();
        assert_eq!(stems.len(), ENTRIES.len() + SHAPES.len());
        assert!(is_corpus_name("a.json") && is_corpus_name("parse:a.json"));
        assert!(is_corpus_name("parse:realworld/twitter.json"));
        assert!(!is_corpus_name("rpc_subtract"));
        assert!(load("../Cargo.toml").is_err());
        assert!(load("realworld/../twitter.json").is_err());
        assert!(load("realworld/.hidden.json").is_err());
        assert!(load("realworld/README.md").is_err());
        assert_eq!(
            expand_group("parse:realworld").unwrap()[2],
            "parse:realworld/canada.json"
        );
        assert_eq!(expand_group("corpus").unwrap(), file_names());
        assert_eq!(
            expand_group("parse:corpus").unwrap()[0],
            "parse:subtract_positional.json"
        );
        assert!(expand_group("eth_getBalance.json").is_none());
        assert_eq!(
            expand_group("validate:realworld").unwrap()[0],
            "validate:realworld/twitter.json"
        );
        assert!(is_corpus_name("validate:realworld/twitter.json"));
        assert!(is_classify_name("validate:a.json") && is_classify_name("parse:a.json"));
        assert!(!is_classify_name("a.json"));
        assert_eq!(
            realworld_names(),
            [
                "realworld/twitter.json",
                "realworld/citm_catalog.json",
                "realworld/canada.json"
            ]
        );
    }

    #[test]
    fn ingest_wraps_the_document_trimmed() {
        assert_eq!(
            ingest_request(b" \n\t{\"a\": [1, 2]}\r\n\n"),
            br#"{"jsonrpc":"2.0","method":"ingest","params":{"a": [1, 2]},"id":1}"#
        );
        assert_eq!(
            ingest_request(b"[]"),
            br#"{"jsonrpc":"2.0","method":"ingest","params":[],"id":1}"#
        );
    }

    /// The real-world documents are where the tests and CI expect them (never a
    /// silent skip: a missing folder fails here, with where it was looked for), each
    /// wrapped as one valid request whose params are the document.
    #[test]
    fn the_realworld_documents_load_as_ingest_requests() {
        let sizes = [631_514, 1_727_204, 2_251_051];
        for (name, size) in realworld_names().iter().zip(sizes) {
            let bytes = load(name).unwrap_or_else(|e| panic!("{e}"));
            let prefix = br#"{"jsonrpc":"2.0","method":"ingest","params":"#;
            assert!(bytes.starts_with(prefix), "{name}");
            assert!(bytes.ends_with(br#","id":1}"#), "{name}");
            // Wrapped: prefix + the trimmed document (a byte or two of trailing
            // whitespace at most) + `,"id":1}`.
            let doc = bytes.len() - prefix.len() - 8;
            assert!(
                (size - 4..=size).contains(&doc),
                "{name}: {doc} bytes of {size}"
            );
            let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(v["method"], "ingest", "{name}");
            assert!(v["params"].is_object(), "{name}");
        }
    }

    /// The shapes are what they say: token-dense ones have many short tokens and
    /// indentation, the number-dense one mostly numbers; all are deterministic.
    #[test]
    fn the_shapes_have_their_shapes() {
        for e in &SHAPES {
            assert_eq!((e.make)(), (e.make)(), "{}", e.stem);
        }
        let tokens = (SHAPES[1].make)();
        let text = std::str::from_utf8(&tokens).unwrap();
        assert!(text.contains("\n        \""), "indented");
        assert!(text.contains("\\u"), "\\u escapes");
        assert!(!text.is_ascii(), "non-ASCII UTF-8");
        for lit in ["true", "false", "null"] {
            assert!(text.matches(lit).count() > 50, "{lit}");
        }
        let quotes = tokens.iter().filter(|&&b| b == b'"').count();
        assert!(quotes * 12 > tokens.len(), "short strings: {quotes} quotes");
        let numbers = (SHAPES[2].make)();
        let in_numbers = numbers
            .iter()
            .filter(|b| b.is_ascii_digit() || b"-+.".contains(b))
            .count();
        assert!(
            in_numbers * 10 > numbers.len() * 7,
            "mostly numbers: {in_numbers} bytes of {}",
            numbers.len()
        );
        let text = std::str::from_utf8(&numbers).unwrap();
        for part in ["e-", "E+", "[[[", "],[", ",-"] {
            assert!(text.contains(part), "{part}");
        }
    }

    /// switchboard's answers (request to response) to the shapes and the real-world
    /// documents, pinned; every dispatch stack's agreement on the shapes is checked
    /// with the rest of the corpus (`dispatch`'s tests walk [`file_names`]), on the
    /// real-world documents here.
    #[test]
    fn switchboard_answers_the_shapes_and_the_realworld_documents() {
        use crate::dispatch::{check_by_name, rpc_workload, rpc_workload_of, same_answer};
        let tool = |name: &str, n: usize, id: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":"{name}"}}],"structuredContent":{{"arguments":{n}}},"isError":false}},"id":{id}}}"#
            )
        };
        let pinned = [
            ("tokens_4k", tool("ingest_records", 4, "5")),
            ("tokens_64k", tool("ingest_records", 4, "65")),
            ("numbers_64k", tool("ingest_features", 8, "66")),
        ];
        assert_eq!(pinned.len(), SHAPES.len());
        for ((stem, want), e) in pinned.iter().zip(&SHAPES) {
            assert_eq!(*stem, e.stem);
            let w = rpc_workload_of(e.stem, (e.make)());
            let got = w.expected.expect("an answer");
            assert!(
                same_answer(&got, want.as_bytes()),
                "{stem}: {}",
                String::from_utf8_lossy(&got)
            );
        }
        let not_found =
            br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}"#;
        for name in realworld_names() {
            let w = rpc_workload(&name).unwrap_or_else(|| panic!("{name}: {:?}", load(&name)));
            let got = w.expected.clone().expect("an answer");
            assert!(
                same_answer(&got, not_found),
                "{name}: {}",
                String::from_utf8_lossy(&got)
            );
            for stack in crate::dispatch::SERVER_NAMES {
                let r = check_by_name(stack, &w).unwrap();
                assert!(r.is_ok(), "{stack} on {name}: {}", r.unwrap_err());
            }
        }
    }

    /// Every message but the two error examples is valid JSON, and they are not.
    #[test]
    fn the_messages_are_what_they_say() {
        for e in entries() {
            let ok = serde_json::from_slice::<serde_json::Value>(&(e.make)()).is_ok();
            assert_eq!(ok, e.stem != "parse_error", "{}", e.stem);
        }
    }
}
