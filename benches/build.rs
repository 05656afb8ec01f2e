//! Generates the `phf` maps of the lookup benches (one per set size) from the same
//! names as the other tables, with `phf_codegen`: what a user of `phf` gets at
//! compile time. Nothing to do without the `peers` feature (no lookup benches then).

#[cfg(feature = "peers")]
use std::fmt::Write as _;
#[cfg(feature = "peers")]
use std::path::PathBuf;

#[cfg(feature = "peers")]
#[path = "src/names.rs"]
#[allow(dead_code)]
mod names;

#[cfg(not(feature = "peers"))]
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
}

#[cfg(feature = "peers")]
fn main() {
    println!("cargo::rerun-if-changed=src/names.rs");
    println!("cargo::rerun-if-changed=build.rs");
    let mut code = String::new();
    for n in names::SIZES {
        let names = names::method_names(n);
        let mut map = phf_codegen::Map::new();
        for (i, name) in names.iter().enumerate() {
            map.entry(name.as_str(), i.to_string());
        }
        writeln!(
            code,
            "/// The {n} names, each to its index.\npub static PHF_{n}: phf::Map<&'static str, u32> = {};",
            map.build()
        )
        .unwrap();
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("phf_maps.rs");
    std::fs::write(out, code).unwrap();
}
