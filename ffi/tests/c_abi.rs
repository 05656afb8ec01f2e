//! The C tests (`tests/c/*.c`) compiled with gcc against the static library cargo
//! built, and run; the header compiled as C99, C11 and C++17 with strict warnings;
//! the C++ wrapper compiled and exercised.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::*;

fn c_test(name: &str) {
    let dir = out_dir("c_abi");
    let bin = dir.join(name.trim_end_matches(".c"));
    compile_c(&[ffi_dir().join("tests/c").join(name)], &bin, &[]);
    let out = run_c_test(&bin);
    print!("{out}");
}

#[test]
fn c_version_macros_match_the_library() {
    c_test("test_version.c");
}

#[test]
fn c_session_spec_examples_decisions_and_callbacks() {
    c_test("test_session.c");
}

#[test]
fn c_classifier() {
    c_test("test_classifier.c");
}

#[test]
fn c_result_codes_null_pointers_and_zero_lengths() {
    c_test("test_errors.c");
}

#[test]
fn c_router_shared_by_four_threads() {
    c_test("test_threads.c");
}

#[test]
fn c_params_read_in_callbacks() {
    c_test("test_params.c");
}

#[test]
fn c_writer_objects_arrays_and_detailed_errors() {
    c_test("test_writer.c");
}

#[test]
fn every_c_test_is_run() {
    // The list the sanitizer and valgrind script (check.sh) also uses must hold every
    // program in tests/c/.
    let mut found: Vec<String> = std::fs::read_dir(ffi_dir().join("tests/c"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("test_") && n.ends_with(".c"))
        .collect();
    found.sort();
    let mut listed: Vec<String> = C_TESTS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
    let check = std::fs::read_to_string(ffi_dir().join("check.sh")).unwrap();
    for t in C_TESTS {
        assert!(check.contains(t), "check.sh does not run {t}");
    }
}

/// The header alone, in every language mode we promise, with strict warnings.
#[test]
fn header_is_c99_c11_and_cpp17_clean() {
    let dir = out_dir("header");
    let src = dir.join("include_only.c");
    std::fs::write(
        &src,
        "#include \"switchboard.h\"\n\
         #include \"switchboard.h\" /* include guard */\n\
         int main(void) { swb_slice s = {0, 0}; return (int)s.len + (int)SWB_RESULT_OK; }\n",
    )
    .unwrap();
    let inc = ffi_dir().join("include");
    for (compiler, std, lang) in [
        ("gcc", "-std=c99", "c"),
        ("gcc", "-std=c11", "c"),
        ("g++", "-std=c++17", "c++"),
        ("g++", "-std=c++11", "c++"),
    ] {
        let obj: PathBuf = dir.join(format!(
            "include_only.{}.o",
            std.trim_start_matches("-std=")
        ));
        run_ok(
            Command::new(compiler)
                .arg(std)
                .args(STRICT)
                .arg("-Wconversion")
                .arg("-Wshadow")
                .args(["-x", lang])
                .arg("-I")
                .arg(&inc)
                .arg("-c")
                .arg(&src)
                .arg("-o")
                .arg(&obj),
        );
    }
}

#[test]
fn cpp_wrapper_compiles_and_works() {
    let dir = out_dir("cpp");
    let bin = dir.join("test_cpp");
    compile_cpp(
        &[ffi_dir().join("tests/c/test_cpp.cpp")],
        &bin,
        &["-pthread"],
    );
    let out = run_c_test(&bin);
    print!("{out}");
}
