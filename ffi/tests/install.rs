//! The install story: `ffi/install.sh PREFIX` lays out the libraries (with the soname),
//! the headers, `switchboard.pc` and the CMake package, and `cc $(pkg-config --cflags
//! --libs switchboard)` builds a program that runs against the installed shared library;
//! `switchboard-static.pc` links the archive into a dynamic program; a CMake
//! project's `find_package(switchboard CONFIG REQUIRED)` links either; `--libdir`
//! (multiarch, lib64) and `DESTDIR` are honoured, and `uninstall` leaves nothing behind.
//!
//! The libraries installed are the ones cargo built for these tests (`--from`): a
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
            .arg("--from")
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
        "pkgconfig/switchboard-static.pc".into(),
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

    // Static in a dynamic program: switchboard-static.pc names the archive and
    // the system libraries it needs; no run-time dependency on libswitchboard.
    sh(
        "cd \"$DIR\" && cc -std=c99 -Wall -Wextra -Werror -pedantic hello.c \
         $(pkg-config --cflags --libs switchboard-static) -o hello_static",
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
            .arg("--from")
            .arg(lib_dir())
            .env("DESTDIR", &stage),
    );
    let pc = std::fs::read_to_string(stage.join("usr/local/lib/pkgconfig/switchboard.pc")).unwrap();
    assert!(pc.contains("prefix=/usr/local\n"), "{pc}");
}

/// The shared library's soname (the major and minor while 0.x, the major after).
fn soname() -> String {
    let (major, minor) = (
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
    );
    if major == "0" {
        format!("libswitchboard.so.0.{minor}")
    } else {
        format!("libswitchboard.so.{major}")
    }
}

/// Runs `ffi/install.sh` with `args` (and `envs`), from the libraries cargo built.
fn install_sh(args: &[&str], envs: &[(&str, &std::path::Path)]) {
    let mut cmd = Command::new("bash");
    cmd.arg(ffi_dir().join("install.sh"))
        .args(args)
        .arg("--from")
        .arg(lib_dir());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    run_ok(&mut cmd);
}

/// Every file and folder under `dir`, relative to it, sorted.
fn tree(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            found.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() && !p.is_symlink() {
                todo.push(p);
            }
        }
    }
    found.sort();
    found
}

/// The files `install` writes under LIBDIR (as `uninstall` must remove them).
fn installed_under(libdir: &str) -> Vec<String> {
    let v = env!("CARGO_PKG_VERSION");
    let mut files: Vec<String> = [
        "libswitchboard.a".to_string(),
        format!("libswitchboard.so.{v}"),
        soname(),
        "libswitchboard.so".into(),
        "pkgconfig/switchboard.pc".into(),
        "pkgconfig/switchboard-static.pc".into(),
        "cmake/switchboard/switchboardConfig.cmake".into(),
        "cmake/switchboard/switchboardConfigVersion.cmake".into(),
    ]
    .into_iter()
    .map(|f| format!("{libdir}/{f}"))
    .collect();
    files.extend([
        "include/switchboard.h".into(),
        "include/switchboard.hpp".into(),
    ]);
    files
}

#[test]
fn libdir_variants_destdir_and_uninstall() {
    let dir = out_dir("install-libdirs");
    for (libdir, how) in [
        ("lib", "default"),
        ("lib/x86_64-linux-gnu", "option"),
        ("lib64", "variable"),
    ] {
        let prefix = dir.join(libdir.replace('/', "_"));
        let _ = std::fs::remove_dir_all(&prefix);
        let p = prefix.to_str().unwrap();
        match how {
            "default" => install_sh(&[p], &[]),
            "option" => install_sh(&["install", p, "--libdir", libdir], &[]),
            _ => install_sh(
                &[],
                &[
                    ("PREFIX", prefix.as_path()),
                    ("LIBDIR", std::path::Path::new(libdir)),
                ],
            ),
        }
        for f in installed_under(libdir) {
            assert!(prefix.join(&f).exists(), "{libdir}: {f} not installed");
        }
        let pc =
            std::fs::read_to_string(prefix.join(libdir).join("pkgconfig/switchboard.pc")).unwrap();
        assert!(
            pc.contains(&format!("libdir=${{exec_prefix}}/{libdir}\n")),
            "{pc}"
        );
        let envs = [("PKG_CONFIG_PATH", prefix.join(libdir).join("pkgconfig"))];
        let envs: Vec<(&str, &std::path::Path)> =
            envs.iter().map(|(k, v)| (*k, v.as_path())).collect();
        assert_eq!(
            sh("pkg-config --variable=libdir switchboard", &envs).trim(),
            prefix.join(libdir).display().to_string()
        );
        // uninstall: the same PREFIX and LIBDIR; nothing is left under the prefix.
        let mut cmd = Command::new("bash");
        cmd.arg(ffi_dir().join("install.sh"))
            .args(["uninstall", p, "--libdir", libdir]);
        run_ok(&mut cmd);
        assert_eq!(tree(&prefix), Vec::<String>::new(), "{libdir}: left behind");
    }

    // DESTDIR: staged under it, the prefix written without it; uninstall empties it.
    let stage = dir.join("stage");
    let _ = std::fs::remove_dir_all(&stage);
    let libdir = "lib/x86_64-linux-gnu";
    install_sh(
        &["/usr", "--libdir", libdir],
        &[("DESTDIR", stage.as_path())],
    );
    let mut want: Vec<String> = installed_under(libdir)
        .into_iter()
        .map(|f| format!("usr/{f}"))
        .collect();
    for d in [
        "usr",
        "usr/include",
        "usr/lib",
        "usr/lib/x86_64-linux-gnu",
        "usr/lib/x86_64-linux-gnu/pkgconfig",
        "usr/lib/x86_64-linux-gnu/cmake",
        "usr/lib/x86_64-linux-gnu/cmake/switchboard",
    ] {
        want.push(d.into());
    }
    want.sort();
    assert_eq!(tree(&stage), want, "exactly these files, nothing else");
    let pc = std::fs::read_to_string(
        stage
            .join("usr")
            .join(libdir)
            .join("pkgconfig/switchboard.pc"),
    )
    .unwrap();
    assert!(pc.starts_with("prefix=/usr\n"), "{pc}");
    let cfg = std::fs::read_to_string(
        stage
            .join("usr")
            .join(libdir)
            .join("cmake/switchboard/switchboardConfig.cmake"),
    )
    .unwrap();
    assert!(
        !cfg.contains(stage.to_str().unwrap()),
        "DESTDIR written into the CMake config"
    );
    let mut cmd = Command::new("bash");
    cmd.arg(ffi_dir().join("install.sh"))
        .args(["uninstall", "/usr", "--libdir", libdir])
        .env("DESTDIR", &stage);
    run_ok(&mut cmd);
    assert_eq!(
        tree(&stage),
        Vec::<String>::new(),
        "DESTDIR uninstall left files"
    );

    // A LIBDIR outside the prefix, or climbing out of it, is refused.
    for bad in ["/elsewhere/lib", "lib/../../x"] {
        let out = Command::new("bash")
            .arg(ffi_dir().join("install.sh"))
            .args([dir.join("bad").to_str().unwrap(), "--libdir", bad, "--from"])
            .arg(lib_dir())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "LIBDIR {bad} accepted");
    }
}

#[test]
fn pkg_config_static_links_the_archive() {
    let dir = out_dir("install-static");
    let prefix = dir.join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    install_sh(&[prefix.to_str().unwrap()], &[]);
    std::fs::write(dir.join("hello.c"), HELLO).unwrap();
    let pkg = prefix.join("lib/pkgconfig");
    let envs = [("PKG_CONFIG_PATH", pkg.as_path()), ("DIR", dir.as_path())];
    // A fully static program: the linker can only take libswitchboard.a, and the .pc's
    // Libs.private must hold everything the archive needs.
    sh(
        "cd \"$DIR\" && cc -std=c99 -Wall -Wextra -Werror -pedantic hello.c -static \
         $(pkg-config --static --cflags --libs switchboard) -o hello_full_static 2>link.log",
        &envs,
    );
    assert_eq!(sh("\"$DIR/hello_full_static\"", &envs), EXPECTED);
    let file = sh(
        "LC_ALL=C ldd \"$DIR/hello_full_static\" 2>&1 || true",
        &envs,
    );
    assert!(file.contains("not a dynamic executable"), "{file}");
    // ...and they are what rustc names for the archive (--print native-static-libs, less
    // -lgcc_s and -lc, which the compiler driver adds).
    let libs = sh("pkg-config --static --libs switchboard", &envs);
    for l in NATIVE_LIBS {
        assert!(libs.contains(l), "{l} missing from {libs}");
    }
}

#[test]
fn cmake_package_shared_and_static() {
    if Command::new("cmake").arg("--version").output().is_err()
        && missing("the CMake package test", "cmake is not installed")
    {
        return;
    }
    let dir = out_dir("install-cmake");
    let prefix = dir.join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    // Multiarch, so the config has to find its files two levels down.
    install_sh(
        &[prefix.to_str().unwrap(), "--libdir", "lib/x86_64-linux-gnu"],
        &[],
    );
    let soname = soname();
    let project = ffi_dir().join("tests/cmake-consumer");
    let configure = |build: &std::path::Path, extra: &[&str]| {
        let _ = std::fs::remove_dir_all(build);
        Command::new("cmake")
            .arg("-S")
            .arg(&project)
            .arg("-B")
            .arg(build)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
            .args(extra)
            .output()
            .unwrap()
    };
    for (name, extra, default_shared) in [
        ("default", &[][..], true),
        ("use-static", &["-DSWITCHBOARD_USE_STATIC=ON"][..], false),
    ] {
        let build = dir.join(name);
        let out = configure(&build, extra);
        assert!(
            out.status.success(),
            "cmake configure ({name}) failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        run_ok(Command::new("cmake").arg("--build").arg(&build));
        for (bin, shared) in [
            ("consumer_c", default_shared),
            ("consumer_cpp", default_shared),
            ("consumer_c_shared", true),
            ("consumer_c_static", false),
        ] {
            // No LD_LIBRARY_PATH: CMake gives the program the run path of the
            // imported shared library.
            let exe = build.join(bin);
            let out = run_ok(&mut Command::new(&exe));
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(stdout.contains("\"id\":1}"), "{name}/{bin}: {stdout}");
            let ldd = String::from_utf8(run_ok(Command::new("ldd").arg(&exe)).stdout).unwrap();
            assert_eq!(
                ldd.contains(&soname),
                shared,
                "{name}/{bin} links the {} library:\n{ldd}",
                if shared { "shared" } else { "static" }
            );
        }
    }
    // The version file: 0.MINOR at an equal or later patch, nothing else while 0.x.
    let v = env!("CARGO_PKG_VERSION");
    let minor: u32 = env!("CARGO_PKG_VERSION_MINOR").parse().unwrap();
    for (wanted, ok) in [
        (v.to_string(), true),
        (format!("0.{minor}"), true),
        (format!("0.{}", minor + 1), false),
        ("1.0".to_string(), false),
    ] {
        let out = configure(
            &dir.join("version"),
            &[&format!("-DSWB_VERSION_WANTED={wanted}")],
        );
        assert_eq!(
            out.status.success(),
            ok,
            "find_package(switchboard {wanted}):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
