//! The HTTP transport: one POST per message on hyper's pooled keep-alive client.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use hyper::{Request, StatusCode, Uri};
use hyper_util::client::legacy::Client as Pool;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::Error;

/// How much of an error status's body is kept.
const ERROR_BODY_BYTES: usize = 1024;

pub(crate) struct Http {
    pool: Pool<HttpConnector, Full<Bytes>>,
    uri: Uri,
    auth: Option<HeaderValue>,
    max_response_bytes: usize,
}

impl Http {
    pub(crate) fn new(
        uri: Uri,
        token: Option<&str>,
        max_response_bytes: usize,
    ) -> Result<Self, Error> {
        let auth = token
            .map(|t| {
                HeaderValue::try_from(format!("Bearer {t}"))
                    .map_err(|_| Error::Unsupported("the token is not a valid header value".into()))
            })
            .transpose()?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let pool = Pool::builder(TokioExecutor::new()).build(connector);
        Ok(Http {
            pool,
            uri,
            auth,
            max_response_bytes,
        })
    }

    /// Posts `body`; the answer's body, or `None` for 204 No Content (what a
    /// server answers to notifications only).
    pub(crate) async fn post(&self, body: Vec<u8>) -> Result<Option<Bytes>, Error> {
        let mut req = Request::post(self.uri.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| Error::Transport(e.to_string()))?;
        if let Some(a) = &self.auth {
            req.headers_mut().insert(AUTHORIZATION, a.clone());
        }
        let resp = self
            .pool
            .request(req)
            .await
            .map_err(|e| Error::Transport(describe(&e)))?;
        let status = resp.status();
        if status == StatusCode::NO_CONTENT {
            return Ok(None);
        }
        if status != StatusCode::OK {
            let body = Limited::new(resp.into_body(), ERROR_BODY_BYTES)
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            return Err(Error::Http {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&body).into_owned(),
            });
        }
        let body = Limited::new(resp.into_body(), self.max_response_bytes)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    Error::InvalidResponse(format!(
                        "the response is larger than {} bytes",
                        self.max_response_bytes
                    ))
                } else {
                    Error::Transport(format!("reading the response: {e}"))
                }
            })?;
        Ok(Some(body.to_bytes()))
    }
}

/// The error and its causes, one after the other (hyper's own message is
/// terse: "client error (Connect)").
fn describe(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}
