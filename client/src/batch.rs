//! Several requests and notifications sent as one message.

use serde::Serialize;

use crate::{Error, message};

/// A batch being built: requests and notifications in the order they are
/// added; sent by [`Client::batch`](crate::Client::batch), which answers the
/// requests in the order they were added, whatever order the server answered
/// them in.
///
/// ```
/// use switchboard_client::BatchRequest;
/// let mut b = BatchRequest::new();
/// assert_eq!(b.request("subtract", &[42, 23]).unwrap(), 0);
/// b.notify("update", &[1, 2]).unwrap();
/// assert_eq!(b.request("sum", &[1, 2, 3]).unwrap(), 1);
/// assert_eq!((b.len(), b.requests()), (3, 2));
/// assert!(b.request("bad", &5).is_err()); // params must be an array or object
/// ```
#[derive(Clone, Debug, Default)]
pub struct BatchRequest {
    /// Each element without its id and closing brace, back to back.
    buf: Vec<u8>,
    /// Where each element ends in `buf`, and whether it is a request.
    ends: Vec<(usize, bool)>,
    requests: usize,
}

impl BatchRequest {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a request; returns its index among the batch's requests (where its
    /// answer will be).
    ///
    /// # Errors
    /// [`Error::InvalidParams`] when `params` is not a JSON array or object
    /// (`()` or `None`: no params).
    pub fn request<P: Serialize + ?Sized>(
        &mut self,
        method: &str,
        params: &P,
    ) -> Result<usize, Error> {
        message::start(&mut self.buf, method, params)?;
        self.ends.push((self.buf.len(), true));
        self.requests += 1;
        Ok(self.requests - 1)
    }

    /// Adds a notification (never answered).
    ///
    /// # Errors
    /// As [`BatchRequest::request`].
    pub fn notify<P: Serialize + ?Sized>(&mut self, method: &str, params: &P) -> Result<(), Error> {
        message::start(&mut self.buf, method, params)?;
        self.ends.push((self.buf.len(), false));
        Ok(())
    }

    /// How many elements.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether nothing was added (an empty batch is not sent).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// How many of the elements are requests.
    pub fn requests(&self) -> usize {
        self.requests
    }

    /// The message, the requests numbered `base`, `base + 1`... in order.
    pub(crate) fn encode(&self, base: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buf.len() + self.ends.len() * 16 + 2);
        out.push(b'[');
        let (mut from, mut id) = (0, base);
        for (i, &(end, is_request)) in self.ends.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&self.buf[from..end]);
            if is_request {
                message::finish_request(&mut out, id);
                id += 1;
            } else {
                message::finish_notification(&mut out);
            }
            from = end;
        }
        out.push(b']');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_numbers_its_requests_from_the_base() {
        let mut b = BatchRequest::new();
        b.request("a", &[1]).unwrap();
        b.notify("n", &()).unwrap();
        b.request("b", &serde_json::json!({"k": true})).unwrap();
        assert_eq!(
            String::from_utf8(b.encode(41)).unwrap(),
            concat!(
                r#"[{"jsonrpc":"2.0","method":"a","params":[1],"id":41},"#,
                r#"{"jsonrpc":"2.0","method":"n"},"#,
                r#"{"jsonrpc":"2.0","method":"b","params":{"k":true},"id":42}]"#
            )
        );
        assert!(b.notify("x", &true).is_err());
        assert_eq!(b.len(), 3, "a refused element is not added");
    }
}
