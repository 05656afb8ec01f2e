//! Writes or checks the benchmark corpus (`benches/corpus/`, see
//! `switchboard_benches::corpus`).
//!
//! ```text
//! corpus write [DIR]   # regenerate the files and README.md (default: benches/corpus)
//! corpus check [DIR]   # exit 1 if the files differ from what the generators make
//! corpus list          # file, bytes, what it is
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use switchboard_benches::corpus;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args.get(1).map_or_else(corpus::dir, PathBuf::from);
    match args.first().map(String::as_str) {
        Some("write") => match corpus::write_all(&dir) {
            Ok(names) => {
                println!("wrote {} files into {}", names.len(), dir.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{}: {e}", dir.display());
                ExitCode::FAILURE
            }
        },
        Some("check") => {
            let diff = corpus::differences(&dir);
            if diff.is_empty() {
                println!("{}: as the generators make it", dir.display());
                ExitCode::SUCCESS
            } else {
                eprintln!("{}:\n{}", dir.display(), diff.join("\n"));
                ExitCode::FAILURE
            }
        }
        Some("list") => {
            for e in corpus::entries() {
                println!("{:<30} {:>7}  {}", e.file_name(), (e.make)().len(), e.about);
            }
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: corpus write [DIR] | check [DIR] | list");
            ExitCode::from(2)
        }
    }
}
