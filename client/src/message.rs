//! Writing the messages the client sends: requests and notifications, one at a
//! time or in a batch.

use std::io::Write as _;

use serde::Serialize;

use crate::Error;

/// Appends `{"jsonrpc":"2.0","method":M` and, unless `params` serializes to
/// `null` (`()`, `None`), `,"params":P`: everything but the id and the closing
/// brace. Params that are neither an array nor an object are refused, and
/// `buf` is left as it was.
pub(crate) fn start<P: Serialize + ?Sized>(
    buf: &mut Vec<u8>,
    method: &str,
    params: &P,
) -> Result<(), Error> {
    let mark = buf.len();
    buf.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    // A `str` always serializes.
    serde_json::to_writer(&mut *buf, method).expect("a string serializes");
    buf.extend_from_slice(br#","params":"#);
    let at = buf.len();
    if let Err(e) = serde_json::to_writer(&mut *buf, params) {
        buf.truncate(mark);
        return Err(Error::InvalidParams(e.to_string()));
    }
    match buf[at] {
        b'[' | b'{' => Ok(()),
        b'n' => {
            // `null`: no params member at all.
            buf.truncate(at - br#","params":"#.len());
            Ok(())
        }
        _ => {
            let what = String::from_utf8_lossy(&buf[at..]).into_owned();
            buf.truncate(mark);
            Err(Error::InvalidParams(format!(
                "params must be a JSON array or object, not {what}"
            )))
        }
    }
}

/// Closes a request begun by [`start`] with its id.
pub(crate) fn finish_request(buf: &mut Vec<u8>, id: u64) {
    // Writing to a `Vec` cannot fail.
    let _ = write!(buf, r#","id":{id}}}"#);
}

/// Closes a notification begun by [`start`].
pub(crate) fn finish_notification(buf: &mut Vec<u8>) {
    buf.push(b'}');
}

/// A whole request.
pub(crate) fn request<P: Serialize + ?Sized>(
    method: &str,
    params: &P,
    id: u64,
) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::with_capacity(64 + method.len());
    start(&mut buf, method, params)?;
    finish_request(&mut buf, id);
    Ok(buf)
}

/// A whole notification.
pub(crate) fn notification<P: Serialize + ?Sized>(
    method: &str,
    params: &P,
) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::with_capacity(64 + method.len());
    start(&mut buf, method, params)?;
    finish_notification(&mut buf);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_notifications_are_written_compactly() {
        assert_eq!(
            request("subtract", &[42, 23], 7).unwrap(),
            br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":7}"#
        );
        assert_eq!(
            notification("a\"b", &serde_json::json!({"x": 1})).unwrap(),
            br#"{"jsonrpc":"2.0","method":"a\"b","params":{"x":1}}"#
        );
        assert_eq!(
            request("ping", &(), 1).unwrap(),
            br#"{"jsonrpc":"2.0","method":"ping","id":1}"#
        );
        assert_eq!(
            request("ping", &None::<Vec<u8>>, 1).unwrap(),
            br#"{"jsonrpc":"2.0","method":"ping","id":1}"#
        );
    }

    #[test]
    fn scalar_params_are_refused_and_leave_the_buffer_as_it_was() {
        let mut buf = b"[".to_vec();
        let e = start(&mut buf, "m", &5).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidParams(w) if w.contains("not 5")),
            "{e}"
        );
        assert_eq!(buf, b"[");
        let e = start(&mut buf, "m", &"s").unwrap_err();
        assert!(matches!(e, Error::InvalidParams(_)));
        assert_eq!(buf, b"[");
    }

    #[test]
    fn unserializable_params_are_refused() {
        let mut m = std::collections::HashMap::new();
        m.insert(vec![1u8], 1); // a map with non-string keys
        let e = request("m", &m, 1).unwrap_err();
        assert!(matches!(e, Error::InvalidParams(_)), "{e}");
    }
}
