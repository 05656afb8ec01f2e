//! The install story: `ffi/install.sh PREFIX` lays out the libraries (with the soname),
//! the headers and `switchboard.pc`, and `cc $(pkg-config --cflags --libs switchboard)`
//! builds a program that runs against the installed shared library; the static library
//! links with the `.pc`'s private libraries.
//!
//! The libraries installed are the ones cargo built for these tests (`--lib-dir`): a
//! nested `cargo build` would wait forever on the lock this `cargo test` holds. The
//! script's own release build is exercised by `ffi/check.sh`.

mod common;

use std::process::Command;

use common::*;

const HELLO: &str = r#"
#include <stdio.h>
#include <string.h>
#include <switchboard.h>

static int hello(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud; (void)call;
  return (int)swb_writer_string(w, "installed", 9);
}

int main(void) {
  swb_router_builder *b; const swb_router *r; swb_session *s;
  const uint8_t *out; size_t n;
  const char *msg = "{\"jsonrpc\":\"2.0\",\"method\":\"hello\",\"id\":1}";
  if (strcmp(swb_version(), SWB_VERSION) != 0) return 3;
  if (swb_router_builder_new(&b) || swb_router_builder_method(b, "hello", 5, hello, NULL, NULL) ||
      swb_router_builder_build(b, &r) || swb_session_new(r, &s) ||
      swb_session_handle(s, (const uint8_t *)msg, strlen(msg), &out, &n)) return 2;
  printf("%.*s\n", (int)n, (const char *)out);
  swb_session_free(s);
  swb_router_free(r);
  return 0;
}
"#;

const EXPECTED: &str = "{\"jsonrpc\":\"2.0\",\"result\":\"installed\",\"id\":1}\n";

fn sh(script: &str, envs: &[(&str, &std::path::Path)]) -> String {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    String::from_utf8(run_ok(&mut cmd).stdout).unwrap()
}

#[test]
fn install_script_and_pkg_config() {
    let dir = out_dir("install");
    let prefix = dir.join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    run_ok(
        Command::new("bash")
            .arg(ffi_dir().join("install.sh"))
            .arg(&prefix)
            .arg("--lib-dir")
            .arg(lib_dir()),
    );
    let v = env!("CARGO_PKG_VERSION");
    let (major, minor) = (
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
    );
    let soname = if major == "0" {
        format!("libswitchboard.so.0.{minor}")
    } else {
        format!("libswitchboard.so.{major}")
    };
    let lib = prefix.join("lib");
    for f in [
        "libswitchboard.a".to_string(),
        format!("libswitchboard.so.{v}"),
        soname.clone(),
        "libswitchboard.so".into(),
        "pkgconfig/switchboard.pc".into(),
    ] {
        assert!(lib.join(&f).exists(), "{f} not installed");
    }
    assert_eq!(
        std::fs::read_link(lib.join("libswitchboard.so")).unwrap(),
        std::path::Path::new(&soname)
    );
    assert!(prefix.join("include/switchboard.h").is_file());
    assert!(prefix.join("include/switchboard.hpp").is_file());

    // The shared library carries the soname; it exports the swb_ functions only.
    let dynamic = sh(
        &format!(
            "readelf -d '{}'",
            lib.join(format!("libswitchboard.so.{v}")).display()
        ),
        &[],
    );
    assert!(
        dynamic.contains(&format!("Library soname: [{soname}]")),
        "{dynamic}"
    );
    let exported = sh(
        &format!(
            "nm -D --defined-only '{}' | awk '{{print $3}}'",
            lib.join("libswitchboard.so").display()
        ),
        &[],
    );
    let names: Vec<&str> = exported.lines().collect();
    assert!(names.len() > 30, "{exported}");
    assert!(
        names.iter().all(|n| n.starts_with("swb_")),
        "non-swb exports: {:?}",
        names
            .iter()
            .filter(|n| !n.starts_with("swb_"))
            .collect::<Vec<_>>()
    );
    // ...every function the header declares.
    let header = std::fs::read_to_string(ffi_dir().join("include/switchboard.h")).unwrap();
    let mut declared = 0;
    for line in header.lines() {
        let declares = line.contains('(') && !line.starts_with(' ') && !line.starts_with("typedef");
        if let Some(i) = line.find(" swb_").or_else(|| line.find(" *swb_"))
            && declares
        {
            let name: String = line[i..]
                .trim_start_matches([' ', '*'])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            assert!(names.contains(&name.as_str()), "{name} not exported");
            declared += 1;
        }
    }
    assert_eq!(declared, names.len(), "the header declares every export");

    let pc = std::fs::read_to_string(lib.join("pkgconfig/switchboard.pc")).unwrap();
    assert!(pc.contains(&format!("prefix={}", prefix.display())), "{pc}");
    assert!(pc.contains(&format!("Version: {v}")), "{pc}");

    let src = dir.join("hello.c");
    std::fs::write(&src, HELLO).unwrap();
    let pkg = lib.join("pkgconfig");
    let envs = [("PKG_CONFIG_PATH", pkg.as_path()), ("DIR", dir.as_path())];
    assert_eq!(sh("pkg-config --modversion switchboard", &envs).trim(), v);

    // Dynamic: exactly the documented command line.
    sh(
        "cd \"$DIR\" && cc -std=c99 -Wall -Wextra -Werror -pedantic hello.c \
         $(pkg-config --cflags --libs switchboard) -o hello_dynamic",
        &envs,
    );
    let envs_run = [
        ("LD_LIBRARY_PATH", lib.as_path()),
        ("DIR", dir.as_path()),
        ("PKG_CONFIG_PATH", pkg.as_path()),
    ];
    assert_eq!(sh("\"$DIR/hello_dynamic\"", &envs_run), EXPECTED);
    let ldd = sh("ldd \"$DIR/hello_dynamic\"", &envs_run);
    assert!(
        ldd.contains(&format!("{soname} => {}", lib.display())),
        "{ldd}"
    );

    // Static: the archive plus the .pc's private libraries; no run-time dependency.
    sh(
        "cd \"$DIR\" && cc -std=c99 hello.c $(pkg-config --cflags switchboard) \
         \"$(pkg-config --variable=libdir switchboard)/libswitchboard.a\" \
         $(pkg-config --libs-only-l --static switchboard | sed 's/-lswitchboard//') -o hello_static",
        &envs,
    );
    assert_eq!(sh("\"$DIR/hello_static\"", &envs), EXPECTED);
    let ldd = sh("ldd \"$DIR/hello_static\"", &envs);
    assert!(!ldd.contains("libswitchboard"), "{ldd}");

    // DESTDIR stages the files without changing the prefix written in the .pc.
    let stage = dir.join("stage");
    let _ = std::fs::remove_dir_all(&stage);
    run_ok(
        Command::new("bash")
            .arg(ffi_dir().join("install.sh"))
            .arg("/usr/local")
            .arg("--lib-dir")
            .arg(lib_dir())
            .env("DESTDIR", &stage),
    );
    let pc = std::fs::read_to_string(stage.join("usr/local/lib/pkgconfig/switchboard.pc")).unwrap();
    assert!(pc.contains("prefix=/usr/local\n"), "{pc}");
}
