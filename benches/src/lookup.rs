//! Method lookup: a method name to its registration index, in the tables a JSON-RPC
//! server could use, built from the same names ([`crate::names`]).
//!
//! - `switchboard`: the router's perfect-hash table (`_benchable::MethodTable`).
//! - `std_hashmap`: `std::collections::HashMap<String, u32>` (SipHash-1-3, random keys).
//! - `ahash_hashmap`: the same map with `ahash::RandomState`.
//! - `phf`: a `phf::Map<&'static str, u32>` generated at compile time by
//!   `phf_codegen` in `build.rs` (CHD with SipHash-1-3, what `phf_map!` also gives).
//! - `match`: a `match` on the 10-name set only.

use std::collections::HashMap;

use switchboard::_benchable::MethodTable;

use crate::names;

include!(concat!(env!("OUT_DIR"), "/phf_maps.rs"));

/// The compile-time map of `n` names (`n` one of [`names::SIZES`]).
pub fn phf_map(n: usize) -> &'static phf::Map<&'static str, u32> {
    match n {
        10 => &PHF_10,
        100 => &PHF_100,
        1000 => &PHF_1000,
        10_000 => &PHF_10000,
        _ => panic!("no phf map of {n} names"),
    }
}

/// The 10-name set as a `match`, the way a hand-written dispatcher looks.
#[inline]
pub fn match_ten(name: &str) -> Option<u32> {
    Some(match name {
        "eth_blockNumber" => 0,
        "eth_call" => 1,
        "eth_chainId" => 2,
        "eth_estimateGas" => 3,
        "eth_getBalance" => 4,
        "eth_getBlockByHash" => 5,
        "eth_getBlockByNumber" => 6,
        "eth_getFilterChanges" => 7,
        "eth_getLogs" => 8,
        "eth_sendRawTransaction" => 9,
        _ => return None,
    })
}

/// Every table over one name set.
#[derive(Debug)]
pub struct Tables {
    /// The names, index order.
    pub names: Vec<String>,
    /// switchboard's perfect hash.
    pub switchboard: MethodTable,
    /// std's `HashMap` (SipHash).
    pub std: HashMap<String, u32>,
    /// `HashMap` with ahash.
    pub ahash: HashMap<String, u32, ahash::RandomState>,
    /// The compile-time `phf` map.
    pub phf: &'static phf::Map<&'static str, u32>,
}

impl Tables {
    /// All tables over `method_names(n)`.
    pub fn new(n: usize) -> Self {
        let names = names::method_names(n);
        let switchboard = MethodTable::build(&names);
        let std = names
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as u32))
            .collect();
        let ahash = names
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as u32))
            .collect();
        Tables {
            names,
            switchboard,
            std,
            ahash,
            phf: phf_map(n),
        }
    }

    /// The index the tables must give for [`names::PROBE`].
    pub fn probe_index(&self) -> u32 {
        self.names
            .iter()
            .position(|s| s == names::PROBE)
            .expect("PROBE is in every set") as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_finds_every_name_and_no_miss() {
        for n in names::SIZES {
            let t = Tables::new(n);
            assert_eq!(t.names.len(), n);
            assert!(t.switchboard.is_perfect(), "{n} names: fallback map in use");
            assert_eq!(t.phf.len(), n);
            for (i, name) in t.names.iter().enumerate() {
                let i = Some(i as u32);
                assert_eq!(t.switchboard.get(name), i, "{name}");
                assert_eq!(t.std.get(name.as_str()).copied(), i, "{name}");
                assert_eq!(t.ahash.get(name.as_str()).copied(), i, "{name}");
                assert_eq!(t.phf.get(name.as_str()).copied(), i, "{name}");
            }
            for miss in [
                names::MISS,
                "",
                "eth_getBlockByNumber ",
                "eth_getBlockByNumbe",
            ] {
                assert_eq!(t.switchboard.get(miss), None);
                assert_eq!(t.std.get(miss), None);
                assert_eq!(t.ahash.get(miss), None);
                assert_eq!(t.phf.get(miss), None);
            }
            assert_eq!(t.names[t.probe_index() as usize], names::PROBE);
        }
    }

    #[test]
    fn the_match_is_the_ten_names() {
        for (i, name) in names::TEN.iter().enumerate() {
            assert_eq!(match_ten(name), Some(i as u32));
        }
        assert_eq!(match_ten(names::MISS), None);
        assert_eq!(names::PROBE.len(), 20);
        assert_eq!(names::MISS.len(), 20);
    }

    #[test]
    fn names_are_distinct_and_varied() {
        let v = names::method_names(10_000);
        let set: std::collections::HashSet<&String> = v.iter().collect();
        assert_eq!(set.len(), v.len());
        let (min, max) = v.iter().fold((usize::MAX, 0), |(a, b), s| {
            (a.min(s.len()), b.max(s.len()))
        });
        assert!(min <= 10 && max >= 25, "{min}..{max}");
    }
}
