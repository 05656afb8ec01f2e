//! The library's version, as macros in the header and as a function.

use core::ffi::c_char;

/// The major version of the header (`SWB_VERSION` is the whole version as a string).
pub const SWB_VERSION_MAJOR: u32 = 0;
/// The minor version of the header.
pub const SWB_VERSION_MINOR: u32 = 1;
/// The patch version of the header.
pub const SWB_VERSION_PATCH: u32 = 0;

// `VERSION_NUL`: the crate version with a NUL, written by `build.rs` from Cargo.toml.
include!(concat!(env!("OUT_DIR"), "/version.rs"));

// The header's constants come from the source above (cbindgen reads no build
// output): refuse to build when they drift from Cargo.toml's version.
const _: () = {
    assert!(SWB_VERSION_MAJOR == parse_u32(env!("CARGO_PKG_VERSION_MAJOR")));
    assert!(SWB_VERSION_MINOR == parse_u32(env!("CARGO_PKG_VERSION_MINOR")));
    assert!(SWB_VERSION_PATCH == parse_u32(env!("CARGO_PKG_VERSION_PATCH")));
    // The header's SWB_VERSION string is "MAJOR.MINOR.PATCH" made from the macros.
    let v = VERSION_NUL.as_bytes();
    let c = env!("CARGO_PKG_VERSION").as_bytes();
    assert!(v.len() == c.len() + 1 && v[v.len() - 1] == 0);
    assert!(bytes_eq(c, VERSION_NUL.split_at(c.len()).0.as_bytes()));
};

const fn parse_u32(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut n = 0u32;
    let mut i = 0;
    while i < b.len() {
        assert!(b[i].is_ascii_digit());
        n = n * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    n
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The library's version, `"MAJOR.MINOR.PATCH"`, as a static NUL-terminated string
/// (never NULL, never to be freed). Compare it with `SWB_VERSION` to detect a header
/// that does not match the library linked at run time.
///
/// Thread safety: may be called from any thread at any time.
#[unsafe(no_mangle)]
pub extern "C" fn swb_version() -> *const c_char {
    VERSION_NUL.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_string_matches_cargo() {
        // SAFETY: swb_version returns a static NUL-terminated string.
        let v = unsafe { core::ffi::CStr::from_ptr(swb_version()) };
        assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        assert_eq!(
            format!("{SWB_VERSION_MAJOR}.{SWB_VERSION_MINOR}.{SWB_VERSION_PATCH}"),
            v.to_str().unwrap()
        );
    }
}
