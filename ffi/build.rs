//! Sets the version string `swb_version()` returns and the shared library's soname.

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    let major: u32 = env_u32("CARGO_PKG_VERSION_MAJOR");
    let minor: u32 = env_u32("CARGO_PKG_VERSION_MINOR");
    // The string `swb_version()` returns, NUL-terminated.
    let out_dir =
        std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(
        out_dir.join("version.rs"),
        format!("/// The crate version with a NUL.\nconst VERSION_NUL: &str = \"{version}\\0\";\n"),
    )
    .expect("OUT_DIR is writable");

    // The ABI may break at every 0.x minor release and at every major release after
    // 1.0: the soname carries exactly what must match. `ffi/install.sh` installs the
    // library under this name with `libswitchboard.so` as a symlink to it.
    let soname = if major == 0 {
        format!("libswitchboard.so.0.{minor}")
    } else {
        format!("libswitchboard.so.{major}")
    };
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" || target_os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

fn env_u32(name: &str) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("cargo sets {name}"))
}
