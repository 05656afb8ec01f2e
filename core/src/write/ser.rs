//! A serde [`Serializer`](serde::Serializer) that appends compact JSON to a
//! `Vec<u8>`, byte for byte what `serde_json::to_writer` writes for the same value.
//!
//! Why not `serde_json` itself: its strings go through a byte-at-a-time escape-table
//! loop and its structs through a generic `io::Write` + `Formatter` layer; here
//! strings take [`write_str_escaped`](super::write_str_escaped) (a SIMD scan for the
//! bytes to escape, one copy for the runs between them) and everything else pushes
//! straight into the vector.
//!
//! What it matches, from `serde_json` 1.0's `ser.rs` (`Serializer` with
//! `CompactFormatter`, `MapKeySerializer`, `RawValueStrEmitter`):
//! - strings and chars: `\"`, `\\`, `\b \f \n \r \t`, other controls `\u00XX`
//!   (lowercase hex), nothing else escaped;
//! - floats: the formatter's shortest round-trip text; NaN and infinities as `null`;
//! - bytes: an array of numbers; unit, `None` and unit structs: `null`;
//! - unit variants: `"Name"`; newtype, tuple and struct variants: `{"Name":...}`;
//! - a sequence or map announced with length 0 is closed at once (as `serde_json`
//!   does: elements that still follow are written after the brackets);
//! - map keys: strings, chars, unit variants and newtype structs / `Some` of those;
//!   integers, bools and finite floats quoted; anything else an error;
//! - `serde_json::value::RawValue` (the struct named `$serde_json::private::RawValue`):
//!   its text copied verbatim; likewise `serde_json::Number` when some crate in the
//!   build enables serde_json's `arbitrary_precision` feature (features unify, so a
//!   user's dependency can turn it on): it then serializes as the struct
//!   `$serde_json::private::Number` holding its digits, written bare as serde_json does.
//!
//! Errors carry the same messages as `serde_json`'s (`key must be a string`, ...), so
//! whoever prints them prints the same text.

use core::fmt;

use serde::ser::{self, Impossible, Serialize};

use super::{write_bool, write_i64, write_member_key, write_null, write_str_escaped, write_u64};

/// The struct name (and field name) through which `serde_json`'s `RawValue`
/// serializes itself, with its JSON text as the one field's string value.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The struct name (and field name) through which `serde_json::Number` serializes
/// itself under serde_json's `arbitrary_precision` feature, its digits as the one
/// field's string value.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Appends `value` to `out` as compact JSON, exactly as `serde_json::to_writer` would.
///
/// # Errors
/// What `value`'s `Serialize` implementation reports, a map key that JSON cannot
/// express, or a misused raw value; `out` may then hold part of the value (callers
/// truncate it back).
#[inline]
pub(crate) fn to_vec_into<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), Error> {
    value.serialize(Json(out))
}

/// Why a value could not be serialized; `Display` gives `serde_json`'s message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Error {
    /// A map key that is not a string, char, integer, bool or float.
    KeyMustBeAString,
    /// A NaN or infinite float as a map key.
    FloatKeyMustBeFinite,
    /// `RawValue`'s struct with another field than its own.
    ExpectedSomeValue,
    /// A message from a `Serialize` implementation (or `expected RawValue`).
    Custom(Box<str>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::KeyMustBeAString => "key must be a string",
            Error::FloatKeyMustBeFinite => "float key must be finite (got NaN or +/-inf)",
            Error::ExpectedSomeValue => "expected value",
            Error::Custom(msg) => msg,
        })
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Custom(msg.to_string().into_boxed_str())
    }
}

/// Appends `v` in decimal (39 digits at most).
fn write_u128(out: &mut Vec<u8>, v: u128) {
    if let Ok(v) = u64::try_from(v) {
        return write_u64(out, v);
    }
    let mut buf = [0u8; 39]; // u128::MAX has 39 digits
    let mut i = buf.len();
    let mut v = v;
    while v > 0 {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `v` in decimal, with a leading `-` if negative.
fn write_i128(out: &mut Vec<u8>, v: i128) {
    if v < 0 {
        out.push(b'-');
    }
    write_u128(out, v.unsigned_abs());
}

/// Appends a finite `v` as `serde_json`'s formatter does.
#[inline]
fn write_f32(out: &mut Vec<u8>, v: f32) {
    // Writing into a `Vec` cannot fail.
    let _ = serde_json::ser::Formatter::write_f32(&mut serde_json::ser::CompactFormatter, out, v);
}

/// Appends a finite `v` as `serde_json`'s formatter does.
#[inline]
fn write_f64(out: &mut Vec<u8>, v: f64) {
    // Writing into a `Vec` cannot fail.
    let _ = serde_json::ser::Formatter::write_f64(&mut serde_json::ser::CompactFormatter, out, v);
}

/// Appends `"`, the escaped `Display` text of `value`, and `"`.
fn write_display_escaped<T: fmt::Display + ?Sized>(out: &mut Vec<u8>, value: &T) {
    /// Escapes each fragment `Display` hands over.
    struct Escaper<'a>(&'a mut Vec<u8>);
    impl fmt::Write for Escaper<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            super::write_str_contents(self.0, s);
            Ok(())
        }
    }
    out.push(b'"');
    // `Escaper` never fails; an error could only come from `value`'s own `Display`,
    // which `serde_json` ignores likewise (it only reports its writer's errors).
    let _ = fmt::write(&mut Escaper(out), format_args!("{value}"));
    out.push(b'"');
}

/// The serializer: one pointer to the output, passed down by value.
struct Json<'a>(&'a mut Vec<u8>);

/// Where a compound (array or object) stands: closed already (announced empty),
/// before its first element, or after one. A struct's `{` is not written when it
/// opens but with its first member's name (one copy for both): `First` is a
/// struct before anything of it is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Empty,
    First,
    Rest,
}

/// An array or object being written, or `RawValue`'s struct.
struct Compound<'a> {
    out: &'a mut Vec<u8>,
    state: State,
    raw: bool,
}

impl<'a> Compound<'a> {
    /// A struct (or a struct variant's content): `{}` at once if announced empty,
    /// else nothing yet (the `{` comes with the first member, [`Compound::field`]).
    #[inline]
    fn open_struct(out: &'a mut Vec<u8>, len: usize) -> Self {
        let state = if len == 0 {
            out.extend_from_slice(b"{}");
            State::Empty
        } else {
            State::First
        };
        Compound {
            out,
            state,
            raw: false,
        }
    }

    /// Closes a struct opened by [`Compound::open_struct`]: `}`, or `{}` when no
    /// member was written (nothing of it is written yet), or nothing when it was
    /// closed at once.
    #[inline]
    fn close_struct(&mut self) {
        match self.state {
            State::Empty => {}
            State::First => self.out.extend_from_slice(b"{}"),
            State::Rest => self.out.push(b'}'),
        }
    }

    /// Opens with `open`; closes at once with `close` if announced empty.
    #[inline]
    fn open(out: &'a mut Vec<u8>, open: u8, close: u8, len: Option<usize>) -> Self {
        out.push(open);
        let state = if len == Some(0) {
            out.push(close);
            State::Empty
        } else {
            State::First
        };
        Compound {
            out,
            state,
            raw: false,
        }
    }

    /// The separator before an element or key.
    #[inline]
    fn separate(&mut self) {
        if self.state != State::First {
            self.out.push(b',');
        }
        self.state = State::Rest;
    }

    /// Closes with `close` unless already closed.
    #[inline]
    fn close(&mut self, close: u8) {
        if self.state != State::Empty {
            self.out.push(close);
        }
    }

    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.separate();
        value.serialize(Json(self.out))
    }

    /// A struct member: `{` (the struct's own, see [`Compound::open_struct`])
    /// or `,`, the name, `:` and the value.
    #[inline(always)]
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        let prefix = if self.state == State::First {
            b'{'
        } else {
            b','
        };
        self.state = State::Rest;
        write_member_key(self.out, prefix, key);
        value.serialize(Json(self.out))
    }
}

/// Writes `{"variant":` before a variant's content.
#[inline]
fn begin_variant(out: &mut Vec<u8>, variant: &str) {
    out.push(b'{');
    write_str_escaped(out, variant);
    out.push(b':');
}

impl<'a> ser::Serializer for Json<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        write_bool(self.0, v);
        Ok(())
    }

    #[inline]
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }

    #[inline]
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }

    #[inline]
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }

    #[inline]
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        write_i64(self.0, v);
        Ok(())
    }

    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        write_i128(self.0, v);
        Ok(())
    }

    #[inline]
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }

    #[inline]
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }

    #[inline]
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }

    #[inline]
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        write_u64(self.0, v);
        Ok(())
    }

    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        write_u128(self.0, v);
        Ok(())
    }

    #[inline]
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if v.is_finite() {
            write_f32(self.0, v);
        } else {
            write_null(self.0);
        }
        Ok(())
    }

    #[inline]
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if v.is_finite() {
            write_f64(self.0, v);
        } else {
            write_null(self.0);
        }
        Ok(())
    }

    #[inline]
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str_escaped(self.0, v.encode_utf8(&mut [0u8; 4]));
        Ok(())
    }

    #[inline]
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str_escaped(self.0, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.0.push(b'[');
        for (i, &b) in v.iter().enumerate() {
            if i > 0 {
                self.0.push(b',');
            }
            write_u64(self.0, b.into());
        }
        self.0.push(b']');
        Ok(())
    }

    #[inline]
    fn serialize_none(self) -> Result<(), Error> {
        write_null(self.0);
        Ok(())
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    #[inline]
    fn serialize_unit(self) -> Result<(), Error> {
        write_null(self.0);
        Ok(())
    }

    #[inline]
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        write_null(self.0);
        Ok(())
    }

    #[inline]
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        write_str_escaped(self.0, variant);
        Ok(())
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        begin_variant(self.0, variant);
        value.serialize(Json(&mut *self.0))?;
        self.0.push(b'}');
        Ok(())
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(Compound::open(self.0, b'[', b']', len))
    }

    #[inline]
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        Ok(Compound::open(self.0, b'[', b']', Some(len)))
    }

    #[inline]
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(Compound::open(self.0, b'[', b']', Some(len)))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        begin_variant(self.0, variant);
        Ok(Compound::open(self.0, b'[', b']', Some(len)))
    }

    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(Compound::open(self.0, b'{', b'}', len))
    }

    #[inline]
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        if name == RAW_VALUE_TOKEN || name == NUMBER_TOKEN {
            return Ok(Compound {
                out: self.0,
                state: State::First,
                raw: true,
            });
        }
        Ok(Compound::open_struct(self.0, len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        begin_variant(self.0, variant);
        Ok(Compound::open_struct(self.0, len))
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        write_display_escaped(self.0, value);
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    #[inline]
    fn end(mut self) -> Result<(), Error> {
        self.close(b']');
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    #[inline]
    fn end(mut self) -> Result<(), Error> {
        self.close(b']');
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    #[inline]
    fn end(mut self) -> Result<(), Error> {
        self.close(b']');
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }

    #[inline]
    fn end(mut self) -> Result<(), Error> {
        self.close(b']');
        self.out.push(b'}');
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.separate();
        key.serialize(MapKey(self.out))
    }

    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.out.push(b':');
        value.serialize(Json(self.out))
    }

    #[inline]
    fn end(mut self) -> Result<(), Error> {
        self.close(b'}');
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline(always)]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        if self.raw {
            return raw_field(self.out, key, value);
        }
        self.field(key, value)
    }

    #[inline]
    fn end(mut self) -> Result<(), Error> {
        if !self.raw {
            self.close_struct();
        }
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;

    #[inline(always)]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }

    #[inline]
    fn end(mut self) -> Result<(), Error> {
        self.close_struct();
        self.out.push(b'}');
        Ok(())
    }
}

/// `RawValue`'s one field: its JSON text, copied as it is.
#[cold]
fn raw_field<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    key: &'static str,
    value: &T,
) -> Result<(), Error> {
    if key == RAW_VALUE_TOKEN || key == NUMBER_TOKEN {
        value.serialize(RawText(out))
    } else {
        Err(Error::ExpectedSomeValue)
    }
}

/// The error for everything but a string where `RawValue`'s text belongs.
#[cold]
fn expected_raw_value() -> Error {
    Error::Custom("expected RawValue".into())
}

/// Serializes a map key: strings as they are, numbers and bools quoted.
struct MapKey<'a>(&'a mut Vec<u8>);

impl MapKey<'_> {
    /// Writes `"`, whatever `write` appends, and `"`.
    #[inline]
    fn quoted(self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), Error> {
        self.0.push(b'"');
        write(self.0);
        self.0.push(b'"');
        Ok(())
    }
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    #[inline]
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str_escaped(self.0, v);
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        write_str_escaped(self.0, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(|out| write_bool(out, v))
    }

    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.quoted(|out| write_i64(out, v.into()))
    }

    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.quoted(|out| write_i64(out, v.into()))
    }

    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.quoted(|out| write_i64(out, v.into()))
    }

    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.quoted(|out| write_i64(out, v))
    }

    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.quoted(|out| write_i128(out, v))
    }

    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.quoted(|out| write_u64(out, v.into()))
    }

    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.quoted(|out| write_u64(out, v.into()))
    }

    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.quoted(|out| write_u64(out, v.into()))
    }

    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.quoted(|out| write_u64(out, v))
    }

    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.quoted(|out| write_u128(out, v))
    }

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(Error::FloatKeyMustBeFinite);
        }
        self.quoted(|out| write_f32(out, v))
    }

    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(Error::FloatKeyMustBeFinite);
        }
        self.quoted(|out| write_f64(out, v))
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str_escaped(self.0, v.encode_utf8(&mut [0u8; 4]));
        Ok(())
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_none(self) -> Result<(), Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(Error::KeyMustBeAString)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(Error::KeyMustBeAString)
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        write_display_escaped(self.0, value);
        Ok(())
    }
}

/// Serializes `RawValue`'s text: a string, copied without quotes or escapes.
struct RawText<'a>(&'a mut Vec<u8>);

impl ser::Serializer for RawText<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.0.extend_from_slice(v.as_bytes());
        Ok(())
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), Error> {
        use std::io::Write;
        // Same text as `serde_json`'s `value.to_string()`, without the String.
        let _ = write!(self.0, "{value}");
        Ok(())
    }

    fn serialize_bool(self, _v: bool) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_i8(self, _v: i8) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_i16(self, _v: i16) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_i32(self, _v: i32) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_i64(self, _v: i64) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_i128(self, _v: i128) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_u8(self, _v: u8) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_u16(self, _v: u16) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_u32(self, _v: u32) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_u64(self, _v: u64) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_u128(self, _v: u128) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_f32(self, _v: f32) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_f64(self, _v: f64) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_char(self, _v: char) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_none(self) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_unit(self) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
    ) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(expected_raw_value())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(expected_raw_value())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(expected_raw_value())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(expected_raw_value())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(expected_raw_value())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(expected_raw_value())
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(expected_raw_value())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(expected_raw_value())
    }
}

#[cfg(test)]
mod tests;
