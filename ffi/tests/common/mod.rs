//! Helpers for the tests that compile and run C, C++ and Python against the libraries
//! cargo just built (wherever the target directory is).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `ffi/` folder.
pub fn ffi_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder holding the libraries built with these tests: the test binary lives in
/// `<target>/<profile>/deps/`, and so do the staticlib and cdylib cargo (re)built for
/// it (the copies in `<target>/<profile>/` are only refreshed by `cargo build`).
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe.parent().expect("test binary in a folder").to_path_buf();
    assert!(
        dir.join("libswitchboard_ffi.a").is_file() && dir.join("libswitchboard_ffi.so").is_file(),
        "libswitchboard_ffi.a/.so not found in {} (cargo builds them with the tests)",
        dir.display()
    );
    dir
}

/// The static library cargo built for these tests.
pub fn static_lib() -> PathBuf {
    lib_dir().join("libswitchboard_ffi.a")
}

/// The shared library cargo built for these tests.
pub fn shared_lib() -> PathBuf {
    lib_dir().join("libswitchboard_ffi.so")
}

/// A scratch folder for this test's outputs.
pub fn out_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("switchboard-ffi")
        .join(name);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

/// The system libraries a Rust static library needs on Linux.
pub const NATIVE_LIBS: &[&str] = &["-lpthread", "-ldl", "-lm", "-lrt", "-lutil"];

/// The warnings every C and C++ compile uses.
pub const STRICT: &[&str] = &["-Wall", "-Wextra", "-Werror", "-pedantic"];

/// Runs a command, panicking with its output if it fails.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{cmd:?} failed ({})\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// Compiles C sources (C99, strict warnings) into `out`, statically linked with the
/// library.
pub fn compile_c(srcs: &[PathBuf], out: &Path, extra: &[&str]) {
    compile_c_libs(srcs, out, extra, &[]);
}

/// As [`compile_c`], with more libraries to link (after the sources).
pub fn compile_c_libs(srcs: &[PathBuf], out: &Path, extra: &[&str], libs: &[&str]) {
    let mut cmd = Command::new("gcc");
    cmd.arg("-std=c99")
        .args(STRICT)
        .arg("-g")
        .arg("-D_POSIX_C_SOURCE=200809L")
        .arg("-I")
        .arg(ffi_dir().join("include"))
        .arg("-I")
        .arg(ffi_dir().join("tests/c"))
        .args(extra)
        .args(srcs)
        .args(libs)
        .arg(static_lib())
        .args(NATIVE_LIBS)
        .arg("-o")
        .arg(out);
    run_ok(&mut cmd);
}

/// Compiles C++17 sources (strict warnings) into `out`, statically linked with the
/// library.
pub fn compile_cpp(srcs: &[PathBuf], out: &Path, extra: &[&str]) {
    let mut cmd = Command::new("g++");
    cmd.arg("-std=c++17")
        .args(STRICT)
        .arg("-g")
        .arg("-I")
        .arg(ffi_dir().join("include"))
        .arg("-I")
        .arg(ffi_dir().join("tests/c"))
        .args(extra)
        .args(srcs)
        .arg(static_lib())
        .args(NATIVE_LIBS)
        .arg("-o")
        .arg(out);
    run_ok(&mut cmd);
}

/// Runs a test program and checks it reported passing checks.
pub fn run_c_test(bin: &Path) -> String {
    let out = run_ok(&mut Command::new(bin));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.contains("checks passed"),
        "{} printed no pass line:\n{stdout}",
        bin.display()
    );
    stdout
}

/// The C test programs in `tests/c/` (each one `main`).
pub const C_TESTS: &[&str] = &[
    "test_version.c",
    "test_session.c",
    "test_classifier.c",
    "test_errors.c",
    "test_threads.c",
    "test_params.c",
    "test_writer.c",
];

/// Whether a tool the test needs is missing; in CI (CI set) that is a failure, on a
/// developer machine a loud skip.
pub fn missing(what: &str, why: &str) -> bool {
    let msg = format!(
        "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
         !!! SKIPPED: {what}: {why}\n\
         !!! (install it: see ffi/README.md; in CI this is a failure)\n\
         !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
    );
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{msg}");
    }
    eprintln!("{msg}");
    true
}
