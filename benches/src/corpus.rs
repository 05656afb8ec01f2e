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

/// The corpus, in report order.
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

/// The workload-name prefix that selects classification only.
pub const PARSE_PREFIX: &str = "parse:";

/// The corpus folder: `$SWITCHBOARD_CORPUS`, else `benches/corpus` of this checkout.
pub fn dir() -> PathBuf {
    std::env::var_os("SWITCHBOARD_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"))
}

/// Whether `name` names a corpus workload (`*.json`, with or without `parse:`).
pub fn is_corpus_name(name: &str) -> bool {
    name.strip_prefix(PARSE_PREFIX)
        .unwrap_or(name)
        .ends_with(".json")
}

/// The file names of the committed corpus, in report order.
pub fn file_names() -> Vec<String> {
    ENTRIES.iter().map(Entry::file_name).collect()
}

/// The bytes of the corpus file `file` (`eth_getBalance.json`), read from [`dir`].
pub fn load(file: &str) -> Result<Vec<u8>, String> {
    if file.contains('/') || !file.ends_with(".json") {
        return Err(format!("{file}: not a corpus file name (NAME.json)"));
    }
    let path = dir().join(file);
    std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The entry whose file is `file`, if it is a committed one.
pub fn entry(file: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.file_name() == file)
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
    for e in &ENTRIES {
        s.push_str(&format!(
            "| `{}` | {} | {} |\n",
            e.file_name(),
            (e.make)().len(),
            e.about
        ));
    }
    s
}

/// Writes every file and the README into `dir`; the names written.
pub fn write_all(dir: &Path) -> std::io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for e in &ENTRIES {
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
    let mut expected: Vec<(String, Vec<u8>)> = ENTRIES
        .iter()
        .map(|e| (e.file_name(), (e.make)()))
        .collect();
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
        let size = |stem: &str| (ENTRIES.iter().find(|e| e.stem == stem).unwrap().make)().len();
        assert_eq!(size("eth_getBalance"), 115);
        assert!((3900..=4500).contains(&size("params_4k")));
        assert!((65_000..=66_000).contains(&size("params_64k")));
        assert!((11_000..=13_000).contains(&size("batch100_eth_getBalance")));
        let mut stems: Vec<&str> = ENTRIES.iter().map(|e| e.stem).collect();
        stems.sort_unstable();
        stems.dedup();
        assert_eq!(stems.len(), ENTRIES.len());
        assert!(is_corpus_name("a.json") && is_corpus_name("parse:a.json"));
        assert!(!is_corpus_name("rpc_subtract"));
        assert!(load("../Cargo.toml").is_err());
    }

    /// Every message but the two error examples is valid JSON, and they are not.
    #[test]
    fn the_messages_are_what_they_say() {
        for e in &ENTRIES {
            let ok = serde_json::from_slice::<serde_json::Value>(&(e.make)()).is_ok();
            assert_eq!(ok, e.stem != "parse_error", "{}", e.stem);
        }
    }
}
