//! `Parser::parse` on arbitrary bytes, walking everything it hands out: batch
//! elements, params (elements, members, lookups, accessors), ids and methods.
//! Nothing may panic, loop or read out of bounds.
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use switchboard::{Item, Message, Params, Parser, RawValue};

thread_local! {
    // Reused across inputs, as a server reuses it: stale state must never leak.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

fn walk_value(v: RawValue<'_>, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let _ = (
        v.kind(),
        v.is_null(),
        v.as_bool(),
        v.as_i64(),
        v.as_u64(),
        v.as_f64(),
    );
    let _ = (
        v.as_raw_str(),
        v.as_plain_str(),
        v.str_eq("method"),
        v.as_str(),
    );
    if let Some(items) = v.array_iter() {
        for x in items {
            walk_value(x, budget);
        }
    }
    if let Some(members) = v.object_iter() {
        for (k, x) in members {
            let _ = (k.raw(), k.eq_str("id"));
            walk_value(x, budget);
        }
    }
}

fn walk_params(p: Option<Params<'_>>) {
    let Some(p) = p else { return };
    let mut budget = 10_000;
    let _ = (p.as_bytes(), p.as_str(), p.is_array(), p.is_object());
    let n = p.iter().count();
    for (i, v) in p.iter().enumerate() {
        assert_eq!(p.index(i), Some(v));
        walk_value(v, &mut budget);
    }
    assert_eq!(p.index(n), None);
    for (k, v) in p.members() {
        walk_value(v, &mut budget);
        if let Ok(name) = std::str::from_utf8(k.raw()) {
            // A key without escapes finds its first occurrence.
            if !name.contains('\\') {
                assert!(p.get(name).is_some());
            }
        }
    }
    let _ = p.get("minuend");
    walk_value(p.raw(), &mut budget);
}

fn walk_item(item: Item<'_>) {
    match item {
        Item::Request(r) => {
            let m = r.method();
            let _ = (m.as_str(), m.is_exact(), m.lookup_key(), m.is_reserved());
            let id = r.id();
            let _ = (
                id.as_str(),
                id.is_null(),
                id.is_string(),
                id.is_number(),
                id.as_raw(),
            );
            walk_params(r.params());
        }
        Item::Notification(n) => {
            let _ = (n.method().as_str(), n.method().lookup_key());
            walk_params(n.params());
        }
        Item::Response(r) => {
            let _ = r.id().as_str();
            let mut budget = 10_000;
            match r.outcome() {
                Ok(v) | Err(v) => walk_value(v, &mut budget),
            }
        }
        Item::Error(e) => {
            let _ = (
                e.code().as_i32(),
                e.reason().as_str(),
                e.id().as_bytes(),
                e.offset(),
            );
            let data = e.data().to_string();
            assert!(
                serde_json::from_str::<serde_json::Value>(&data).is_ok(),
                "{data}"
            );
            let _ = e.to_string();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    PARSER.with_borrow_mut(|parser| match parser.parse(data) {
        Message::Batch(b) => {
            assert!(!b.is_empty());
            for (i, item) in b.iter().enumerate() {
                assert!(b.raw(i).is_some());
                walk_item(item);
            }
        }
        Message::Request(r) => walk_item(Item::Request(r)),
        Message::Notification(n) => walk_item(Item::Notification(n)),
        Message::Response(r) => walk_item(Item::Response(r)),
        Message::Error(e) => walk_item(Item::Error(e)),
    });
});
