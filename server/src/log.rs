//! Minimal leveled logging to standard error, `RUST_LOG`-style.
//!
//! The level comes from `SWITCHBOARD_LOG`, else `RUST_LOG`: `off`, `error`, `warn`,
//! `info` (the default), `debug` or `trace`. A `RUST_LOG` list such as
//! `hyper=warn,switchboard=debug` is understood as far as its bare level and its
//! `switchboard…=` entries go; anything else is ignored.

use std::fmt::Arguments;
use std::io::Write;
use std::sync::OnceLock;

/// Verbosity levels, least verbose first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Nothing at all.
    Off,
    /// Failures.
    Error,
    /// Problems the server works around.
    Warn,
    /// Startup and shutdown.
    Info,
    /// Per-connection events.
    Debug,
    /// Everything.
    Trace,
}

impl Level {
    fn parse(s: &str) -> Option<Level> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => Level::Off,
            "error" => Level::Error,
            "warn" | "warning" => Level::Warn,
            "info" => Level::Info,
            "debug" => Level::Debug,
            "trace" => Level::Trace,
            _ => return None,
        })
    }
}

/// The level a `RUST_LOG`-style `spec` selects for switchboard (`None`: it says nothing).
#[must_use]
pub fn level_from_spec(spec: &str) -> Option<Level> {
    let mut bare = None;
    let mut ours = None;
    for part in spec.split(',') {
        match part.split_once('=') {
            Some((target, level)) if target.trim().starts_with("switchboard") => {
                ours = Level::parse(level).or(ours);
            }
            Some(_) => {}
            None => bare = Level::parse(part).or(bare),
        }
    }
    ours.or(bare)
}

/// The level in force (read from the environment once).
pub fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        ["SWITCHBOARD_LOG", "RUST_LOG"]
            .iter()
            .find_map(|v| std::env::var(v).ok().and_then(|s| level_from_spec(&s)))
            .unwrap_or(Level::Info)
    })
}

fn emit(at: Level, tag: &str, args: Arguments<'_>) {
    if level() >= at {
        let _ = writeln!(std::io::stderr().lock(), "switchboard: {tag}{args}");
    }
}

/// Logs an error.
pub fn error(args: Arguments<'_>) {
    emit(Level::Error, "error: ", args);
}

/// Logs a warning.
pub fn warn(args: Arguments<'_>) {
    emit(Level::Warn, "warning: ", args);
}

/// Logs an informational line.
pub fn info(args: Arguments<'_>) {
    emit(Level::Info, "", args);
}

/// Logs a debugging line.
pub fn debug(args: Arguments<'_>) {
    emit(Level::Debug, "debug: ", args);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(level_from_spec("debug"), Some(Level::Debug));
        assert_eq!(level_from_spec("hyper=trace"), None);
        assert_eq!(
            level_from_spec("warn,switchboard=trace"),
            Some(Level::Trace)
        );
        assert_eq!(
            level_from_spec("switchboard_server=error,info"),
            Some(Level::Error)
        );
        assert_eq!(level_from_spec("OFF"), Some(Level::Off));
        assert_eq!(level_from_spec("loud"), None);
    }
}
