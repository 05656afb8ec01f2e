//! JSONTestSuite (nst/JSONTestSuite, `test_parsing/`): every file, every verdict.
//!
//! - `y_` files must be accepted by `Parser::validate`, and `Parser::parse` must not
//!   answer them with -32700 (they are mostly not JSON-RPC objects, so -32600).
//! - `n_` files must get -32700 from both.
//! - `i_` files get the verdict of the table below, each with its reason; a new
//!   `i_` file that the table lacks fails the test.
//!
//! The corpus is found by `switchboard_tests::jsontestsuite_dir`; when it is
//! missing the suite fails loudly instead of passing on nothing.

use std::collections::BTreeSet;

use switchboard::{Code, Message, Parser, Reason};
use switchboard_tests::{json_depth, jsontestsuite_dir, read_corpus, reference_accepts};

/// The verdict SPEC.md gives an implementation-defined (`i_`) file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Valid JSON: `validate` is `Ok`, `parse` is not -32700.
    Accept,
    /// -32700 from both `parse` and `validate`, for this reason.
    Reject(Reason),
}

use Verdict::{Accept, Reject};

/// Every `i_` file of the corpus: file name, verdict, why.
const I_VERDICTS: &[(&str, Verdict, &str)] = &[
    (
        "i_number_double_huge_neg_exp.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_number_huge_exp.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_number_neg_int_huge_exp.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_number_pos_double_huge_exp.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_number_real_neg_overflow.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_number_real_pos_overflow.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_number_real_underflow.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_number_too_big_neg_int.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_number_too_big_pos_int.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_number_very_big_negative_int.json",
        Accept,
        "numbers are passed through untouched (SPEC.md)",
    ),
    (
        "i_object_key_lone_2nd_surrogate.json",
        Accept,
        "escaped lone surrogate is valid JSON (SPEC.md)",
    ),
    (
        "i_string_1st_surrogate_but_2nd_missing.json",
        Accept,
        "escaped lone surrogate is valid JSON (SPEC.md)",
    ),
    (
        "i_string_1st_valid_surrogate_2nd_invalid.json",
        Accept,
        "escaped lone surrogate is valid JSON (SPEC.md)",
    ),
    (
        "i_string_UTF-16LE_with_BOM.json",
        Reject(Reason::UnexpectedByte),
        "UTF-16 is not UTF-8: 0xFF cannot start a JSON text",
    ),
    (
        "i_string_UTF-8_invalid_sequence.json",
        Reject(Reason::InvalidUtf8),
        "invalid UTF-8 is -32700 (SPEC.md)",
    ),
    (
        "i_string_UTF8_surrogate_U+D800.json",
        Reject(Reason::InvalidUtf8),
        "UTF-8-encoded surrogate is invalid UTF-8 (SPEC.md)",
    ),
    (
        "i_string_incomplete_surrogate_and_escape_valid.json",
        Accept,
        "escaped lone surrogate is valid JSON (SPEC.md)",
    ),
    (
        "i_string_incomplete_surrogate_pair.json",
        Accept,
        "escaped lone surrogate is valid JSON (SPEC.md)",
    ),
    (
        "i_string_incomplete_surrogates_escape_valid.json",
        Accept,
        "escaped lone surrogates are valid JSON (SPEC.md)",
    ),
    (
        "i_string_invalid_lonely_surrogate.json",
        Accept,
        "escaped lone surrogate is valid JSON (SPEC.md)",
    ),
    (
        "i_string_invalid_surrogate.json",
        Accept,
        "escaped lone surrogate is valid JSON (SPEC.md)",
    ),
    (
        "i_string_invalid_utf-8.json",
        Reject(Reason::InvalidUtf8),
        "0xFF is invalid UTF-8 (SPEC.md)",
    ),
    (
        "i_string_inverted_surrogates_U+1D11E.json",
        Accept,
        "escaped lone surrogates are valid JSON (SPEC.md)",
    ),
    (
        "i_string_iso_latin_1.json",
        Reject(Reason::InvalidUtf8),
        "Latin-1 0xE9 alone is invalid UTF-8 (SPEC.md)",
    ),
    (
        "i_string_lone_second_surrogate.json",
        Accept,
        "escaped lone surrogate is valid JSON (SPEC.md)",
    ),
    (
        "i_string_lone_utf8_continuation_byte.json",
        Reject(Reason::InvalidUtf8),
        "lone continuation byte is invalid UTF-8 (SPEC.md)",
    ),
    (
        "i_string_not_in_unicode_range.json",
        Reject(Reason::InvalidUtf8),
        "code point above U+10FFFF is invalid UTF-8 (SPEC.md)",
    ),
    (
        "i_string_overlong_sequence_2_bytes.json",
        Reject(Reason::InvalidUtf8),
        "overlong form is invalid UTF-8 (SPEC.md)",
    ),
    (
        "i_string_overlong_sequence_6_bytes.json",
        Reject(Reason::InvalidUtf8),
        "6-byte form is invalid UTF-8 (SPEC.md)",
    ),
    (
        "i_string_overlong_sequence_6_bytes_null.json",
        Reject(Reason::InvalidUtf8),
        "6-byte overlong NUL is invalid UTF-8 (SPEC.md)",
    ),
    (
        "i_string_truncated-utf-8.json",
        Reject(Reason::InvalidUtf8),
        "truncated sequence is invalid UTF-8 (SPEC.md)",
    ),
    (
        "i_string_utf16BE_no_BOM.json",
        Reject(Reason::UnexpectedByte),
        "UTF-16 is not UTF-8: NUL cannot start a JSON text",
    ),
    (
        "i_string_utf16LE_no_BOM.json",
        Reject(Reason::UnexpectedByte),
        "UTF-16 is not UTF-8: NUL after `[` is not JSON",
    ),
    (
        "i_structure_500_nested_arrays.json",
        Reject(Reason::TooDeep),
        "500 levels > max_depth 128 (SPEC.md)",
    ),
    (
        "i_structure_UTF-8_BOM_empty_object.json",
        Reject(Reason::ByteOrderMark),
        "byte-order mark is -32700 (SPEC.md)",
    ),
];

/// What `validate` and `parse` said about one input, checked against a verdict.
fn check(parser: &mut Parser, name: &str, bytes: &[u8], expected: Verdict) -> Result<(), String> {
    let validated = parser.validate(bytes);
    let parsed = match parser.parse(bytes) {
        Message::Error(e) => Some((e.code(), e.reason())),
        _ => None,
    };
    match expected {
        Accept => {
            if let Err(e) = validated {
                return Err(format!("{name}: validate refused valid JSON: {e}"));
            }
            if let Some((Code::ParseError, r)) = parsed {
                return Err(format!(
                    "{name}: parse answered valid JSON with -32700 ({r:?})"
                ));
            }
        }
        Reject(reason) => {
            match validated {
                Ok(()) => return Err(format!("{name}: validate accepted it, expected {reason:?}")),
                Err(e) if e.code() != Code::ParseError || e.reason() != reason => {
                    return Err(format!("{name}: validate said {e}, expected {reason:?}"));
                }
                Err(_) => {}
            }
            if parsed != Some((Code::ParseError, reason)) {
                return Err(format!(
                    "{name}: parse said {parsed:?}, expected -32700 {reason:?}"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn jsontestsuite_test_parsing() {
    let dir = jsontestsuite_dir();
    let files = read_corpus(&dir);
    let mut parser = Parser::new();
    let mut failures = Vec::new();
    let (mut y, mut n, mut i, mut other) = (0, 0, 0, Vec::new());
    let (mut y_rpc_errors, mut y_batches, mut y_deepest) = (0, 0, ("", 0));
    let mut i_seen = BTreeSet::new();

    for (name, bytes) in &files {
        let outcome = if name.starts_with("y_") {
            y += 1;
            let depth = json_depth(bytes);
            if depth > y_deepest.1 {
                y_deepest = (name.as_str(), depth);
            }
            if depth > 128 {
                println!("note: {name} nests {depth} levels, deeper than max_depth 128");
            }
            match parser.parse(bytes) {
                Message::Error(e) if e.code() == Code::InvalidRequest => y_rpc_errors += 1,
                Message::Batch(_) => y_batches += 1,
                _ => {}
            }
            check(&mut parser, name, bytes, Accept)
        } else if name.starts_with("n_") {
            n += 1;
            match parser.validate(bytes) {
                // Any -32700 reason will do for an `n_` file; parse must agree with validate.
                Err(e) if e.code() == Code::ParseError => {
                    check(&mut parser, name, bytes, Reject(e.reason()))
                }
                Err(e) => Err(format!("{name}: validate said {e}, expected -32700")),
                Ok(()) => Err(format!("{name}: validate accepted invalid JSON")),
            }
        } else if name.starts_with("i_") {
            i += 1;
            i_seen.insert(name.as_str());
            match I_VERDICTS.iter().find(|(f, ..)| f == name) {
                Some(&(_, verdict, _)) => check(&mut parser, name, bytes, verdict),
                None => Err(format!(
                    "{name}: a new i_ file that I_VERDICTS lacks: decide its verdict"
                )),
            }
        } else {
            other.push(name.clone());
            Ok(())
        };
        if let Err(msg) = outcome {
            failures.push(msg);
        }
    }
    for (name, ..) in I_VERDICTS {
        if !i_seen.contains(name) {
            failures.push(format!("{name}: in I_VERDICTS but not in the corpus"));
        }
    }

    let i_accepted = I_VERDICTS.iter().filter(|(_, v, _)| *v == Accept).count();
    println!("JSONTestSuite corpus: {}", dir.display());
    println!(
        "y_: {y} files (all accepted; parse: {y_batches} batches of non-requests, {y_rpc_errors} single -32600; \
         deepest {} at {} levels)",
        y_deepest.0, y_deepest.1
    );
    println!("n_: {n} files (all -32700)");
    println!(
        "i_: {i} files ({i_accepted} accepted, {} -32700, per the table)",
        I_VERDICTS.len() - i_accepted
    );
    if !other.is_empty() {
        println!("other files, not checked: {other:?}");
    }
    println!("{} files, {} failures", files.len(), failures.len());
    assert!(
        y > 0 && n > 0 && i > 0,
        "the corpus at {} lacks y_, n_ or i_ files",
        dir.display()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every `test_parsing` file and every `test_transform` file: `validate` agrees with
/// the serde_json-based reference verdict (see `switchboard_tests::reference_accepts`).
#[test]
fn jsontestsuite_agrees_with_reference() {
    let parsing = jsontestsuite_dir();
    let transform = parsing.parent().map(|p| p.join("test_transform"));
    let transform = transform.filter(|p| p.is_dir()).unwrap_or_else(|| {
        panic!(
            "test_transform/ not found beside {}: the corpus is incomplete",
            parsing.display()
        )
    });
    let mut parser = Parser::new();
    let mut failures = Vec::new();
    let mut count = 0;
    for dir in [&parsing, &transform] {
        for (name, bytes) in read_corpus(dir) {
            count += 1;
            let ours = parser.validate(&bytes);
            if ours.is_ok() != reference_accepts(&bytes) {
                failures.push(format!(
                    "{name}: validate {ours:?}, reference {}",
                    reference_accepts(&bytes)
                ));
            }
            // parse says -32700 exactly when validate refuses (the message is small).
            let parse_error =
                matches!(parser.parse(&bytes), Message::Error(e) if e.code() == Code::ParseError);
            if parse_error != ours.is_err() {
                failures.push(format!(
                    "{name}: parse -32700 is {parse_error}, validate {ours:?}"
                ));
            }
        }
    }
    println!(
        "{count} files compared with the reference verdict, {} disagreements",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
