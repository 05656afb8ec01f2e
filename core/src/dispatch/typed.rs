//! [`BorrowedParams`]: the params types a borrowing typed handler
//! ([`RouterBuilder::typed_ref`](crate::RouterBuilder::typed_ref)) reads, as a
//! family over the lifetime of the message.

use std::borrow::Cow;
use std::marker::PhantomData;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};

use crate::{RawValue, RpcError};

/// A params type that may borrow from the message, named by its `'static`
/// form: `(&'static str, i64)` stands for `(&'de str, i64)` for each message's
/// `'de`. The handlers of [`RouterBuilder::typed_ref`](crate::RouterBuilder::typed_ref)
/// take [`BorrowedParams::Of`].
///
/// Implemented for the primitives, `String`, `&str`, `Cow<str>`,
/// [`RawValue`], serde_json's `Value` and `&RawValue`, [`IgnoredAny`],
/// `Option`, `Vec`, `Box` and tuples of up to six of these, and
/// [`Owned<T>`] for any owned type. A struct of your own that borrows needs
/// one line:
///
/// ```
/// use std::borrow::Cow;
/// #[derive(serde::Deserialize)]
/// struct Hello<'a> {
///     #[serde(borrow)]
///     name: Cow<'a, str>,
///     times: u32,
/// }
/// impl switchboard::BorrowedParams for Hello<'static> {
///     type Of<'de> = Hello<'de>;
/// }
/// ```
pub trait BorrowedParams: 'static {
    /// The type for params borrowed for `'de`.
    type Of<'de>: Deserialize<'de>;
}

/// Any owned params type as a [`BorrowedParams`] (which borrows nothing):
/// `typed_ref::<(Owned<MyArgs>, &str), _, _>`.
///
/// ```
/// use switchboard::{Owned, Router, Session};
/// #[derive(serde::Deserialize)]
/// struct Point {
///     x: i64,
///     y: i64,
/// }
/// let router = Router::builder()
///     // The label is borrowed from the message; the point is deserialized as usual.
///     .typed_ref::<(&str, Owned<Point>), _, _>("place", |(label, p)| {
///         Ok(format!("{label} at ({}, {})", p.x, p.y))
///     })
///     .build()
///     .unwrap();
/// let mut session = Session::new(router);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"place","params":["home",{"x":1,"y":2}],"id":1}"#);
/// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":"home at (1, 2)","id":1}"#);
/// ```
pub struct Owned<T>(PhantomData<fn() -> T>);

impl<T: DeserializeOwned + 'static> BorrowedParams for Owned<T> {
    type Of<'de> = T;
}

/// The impls both families share (for [`BorrowedParams`] and
/// [`BorrowedResult`]): owned types stand for themselves, `&str`, `Cow<str>`
/// and serde_json's `&RawValue` borrow, and `Option`, `Vec`, `Box` and tuples
/// of up to six carry the lifetime to their members.
macro_rules! family {
    ($family:ident) => {
        family!(@owned $family: (), bool, char, i8, i16, i32, i64, i128, isize, u8, u16, u32,
            u64, u128, usize, f32, f64, String, serde_json::Value);

        impl $family for &'static str {
            type Of<'de> = &'de str;
        }

        impl $family for Cow<'static, str> {
            type Of<'de> = Cow<'de, str>;
        }

        impl $family for &'static serde_json::value::RawValue {
            type Of<'de> = &'de serde_json::value::RawValue;
        }

        impl<T: $family> $family for Option<T> {
            type Of<'de> = Option<T::Of<'de>>;
        }

        impl<T: $family> $family for Vec<T> {
            type Of<'de> = Vec<T::Of<'de>>;
        }

        impl<T: $family> $family for Box<T> {
            type Of<'de> = Box<T::Of<'de>>;
        }

        family!(@tuples $family: (A) (A, B) (A, B, C) (A, B, C, D) (A, B, C, D, E)
            (A, B, C, D, E, F));
    };
    (@owned $family:ident: $($t:ty),*) => {
        $(impl $family for $t {
            type Of<'de> = $t;
        })*
    };
    (@tuples $family:ident: $(($($t:ident),+))*) => {
        $(impl<$($t: $family),+> $family for ($($t,)+) {
            type Of<'de> = ($($t::Of<'de>,)+);
        })*
    };
}

family!(BorrowedParams);

impl BorrowedParams for IgnoredAny {
    type Of<'de> = IgnoredAny;
}

impl BorrowedParams for RawValue<'static> {
    type Of<'de> = RawValue<'de>;
}

/// A result type that may borrow from the params, named by its `'static` form
/// as [`BorrowedParams`] names params: `&'static str` stands for the `&'de str`
/// a handler of [`RouterBuilder::typed_borrowed`](crate::RouterBuilder::typed_borrowed)
/// returns for each message's `'de`.
///
/// Implemented for the primitives, `String`, `&str`, `Cow<str>`, serde_json's
/// `Value` and `&RawValue`, `Option`, `Vec`, `Box` and tuples of up to six
/// of these, and [`Owned<T>`] for any owned
/// `Serialize` type. A struct of your own that borrows needs one line:
///
/// ```
/// #[derive(serde::Serialize)]
/// struct Greeting<'a> {
///     to: &'a str,
///     times: u32,
/// }
/// impl switchboard::BorrowedResult for Greeting<'static> {
///     type Of<'de> = Greeting<'de>;
/// }
/// ```
pub trait BorrowedResult: 'static {
    /// The result type for params borrowed for `'de`.
    type Of<'de>: Serialize;
}

impl<T: Serialize + 'static> BorrowedResult for Owned<T> {
    type Of<'de> = T;
}

family!(BorrowedResult);

/// The handlers of [`RouterBuilder::typed_borrowed`](crate::RouterBuilder::typed_borrowed):
/// `Fn(P::Of<'de>) -> Result<R::Of<'de>, RpcError>` for one `'de`, implemented
/// for every such closure. (A bound `for<'de> Fn(P::Of<'de>) -> Result<R::Of<'de>, _>`
/// cannot be written: the result would name a lifetime that the argument names
/// only through `P`; this trait carries `'de` itself.) Closures and functions
/// implement it when their result may borrow from their params:
///
/// ```
/// use switchboard::{BorrowingFn, RpcError};
/// fn first_word<'de>((s,): (&'de str,)) -> Result<&'de str, RpcError> {
///     Ok(s.split(' ').next().unwrap_or(""))
/// }
/// fn handler<F>(f: F) -> F
/// where
///     F: for<'de> BorrowingFn<'de, (&'static str,), &'static str>,
/// {
///     f
/// }
/// let f = handler(first_word);
/// assert_eq!(f(("hello world",)).unwrap(), "hello");
/// ```
pub trait BorrowingFn<'de, P: BorrowedParams, R: BorrowedResult>:
    Fn(P::Of<'de>) -> Result<R::Of<'de>, RpcError>
{
}

impl<'de, P, R, F> BorrowingFn<'de, P, R> for F
where
    P: BorrowedParams,
    R: BorrowedResult,
    F: Fn(P::Of<'de>) -> Result<R::Of<'de>, RpcError>,
{
}
