//! A small WebSocket server for the client's tests, on the client's own
//! WebSocket crate (fastwebsockets) and hyper: each text message goes through a
//! switchboard `Session` attached to the socket's `Connection`, so handlers can
//! push notifications and requests to the client through its `Peer`. (The real
//! server transport is `switchboard serve`'s; this one has only what the tests
//! need.)

use std::sync::Arc;

use bytes::Bytes;
use fastwebsockets::{Frame, OpCode, Payload};
use http_body_util::Empty;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use switchboard::connection::{Connection, ConnectionConfig};
use switchboard::{Router, Session};
use tokio::sync::mpsc;

/// Serves `router` on a free port until the test ends; its `ws://` URL. With
/// `token`, the upgrade needs `Authorization: Bearer TOKEN` (else 401).
pub async fn start(router: Arc<Router>, token: Option<&'static str>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let router = router.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |req| upgrade(req, router.clone(), token));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .with_upgrades()
                    .await;
            });
        }
    });
    format!("ws://{addr}/")
}

async fn upgrade(
    mut req: Request<Incoming>,
    router: Arc<Router>,
    token: Option<&'static str>,
) -> Result<Response<Empty<Bytes>>, std::convert::Infallible> {
    if let Some(t) = token {
        let given = req
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .map(|v| v.as_bytes().to_vec());
        if given.as_deref() != Some(format!("Bearer {t}").as_bytes()) {
            let mut r = Response::new(Empty::new());
            *r.status_mut() = StatusCode::UNAUTHORIZED;
            return Ok(r);
        }
    }
    let Ok((resp, fut)) = fastwebsockets::upgrade::upgrade(&mut req) else {
        let mut r = Response::new(Empty::new());
        *r.status_mut() = StatusCode::BAD_REQUEST;
        return Ok(r);
    };
    tokio::spawn(async move {
        if let Ok(ws) = fut.await {
            connection(ws, router).await;
        }
    });
    Ok(resp)
}

enum Out {
    Text(Vec<u8>),
    Control(OpCode, Vec<u8>),
}

async fn connection(
    ws: fastwebsockets::WebSocket<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>>,
    router: Arc<Router>,
) {
    let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
    let mut session = Session::new(router);
    session.attach(conn.clone());
    let (rd, mut wr) = ws.split(tokio::io::split);
    let mut rd = fastwebsockets::FragmentCollectorRead::new(rd);
    let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
    let writer = tokio::spawn(async move {
        loop {
            // Pushed messages first: what a handler pushed before its answer
            // is written before it.
            let frame = tokio::select! {
                biased;
                m = outgoing.recv() => match m {
                    Some(m) => Frame::text(Payload::Owned(m)),
                    None => break,
                },
                m = rx.recv() => match m {
                    Some(Out::Text(m)) => Frame::text(Payload::Owned(m)),
                    Some(Out::Control(op, p)) => Frame::new(true, op, None, Payload::Owned(p)),
                    None => break,
                },
            };
            if wr.write_frame(frame).await.is_err() {
                break;
            }
        }
    });
    loop {
        let mut obliged = |f: Frame<'_>| {
            let sent = tx.send(Out::Control(f.opcode, f.payload.to_vec()));
            std::future::ready(sent.map_err(|_| "gone"))
        };
        let Ok(frame) = rd.read_frame(&mut obliged).await else {
            break;
        };
        match frame.opcode {
            OpCode::Text => {
                if let Some(answer) = session.handle_async(&frame.payload).await {
                    let _ = tx.send(Out::Text(answer.to_vec()));
                }
            }
            OpCode::Close => break,
            _ => {}
        }
        if conn.is_closed() {
            break;
        }
    }
    conn.close();
    drop(tx);
    let _ = writer.await;
}

/// The `Connection` handlers run on, as they see it: handlers record their
/// connection's peer here so that tests can push to that client.
#[allow(dead_code)] // not every test file pushes
pub type Peers = Arc<std::sync::Mutex<Vec<switchboard::connection::Peer>>>;
