//! The static site next to the JSON-RPC endpoint (`Switchboard::site`, `serve
//! --playground DIR`): the files with their content types, 404 for anything else
//! (path traversal included), and the endpoint's other answers unchanged: POST is
//! JSON-RPC, `GET` + `Upgrade: websocket` a WebSocket, the bearer token first.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use switchboard_server::http::Switchboard;
use switchboard_server::{demo, site::Site};
use tower_service::Service;

const SUBTRACT: &str = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;
const INDEX: &str = "<!doctype html><title>playground</title>";
const WASM: &[u8] = b"\0asm\x01\0\0\0";

/// A fresh site directory (removed when dropped), with a secret one level up
/// that no request may reach.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let root =
            std::env::temp_dir().join(format!("switchboard-site-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let site = root.join("site");
        std::fs::create_dir_all(site.join("sub")).unwrap();
        std::fs::write(root.join("secret.txt"), "secret").unwrap();
        std::fs::write(site.join("index.html"), INDEX).unwrap();
        std::fs::write(site.join("app.js"), "export {};").unwrap();
        std::fs::write(site.join("examples.json"), "{}").unwrap();
        std::fs::write(site.join("core_bg.wasm"), WASM).unwrap();
        std::fs::write(site.join("sub").join("inner.txt"), "inner").unwrap();
        Dir(root)
    }

    fn site(&self) -> PathBuf {
        self.0.join("site")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn req(method: &str, uri: &str, ct: Option<&str>, body: &str) -> Request<Full<Bytes>> {
    let mut b = Request::builder().method(method).uri(uri);
    if let Some(ct) = ct {
        b = b.header("content-type", ct);
    }
    b.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
}

/// Status, content type and body.
async fn call(svc: &mut Switchboard, r: Request<Full<Bytes>>) -> (StatusCode, String, Vec<u8>) {
    let resp = Service::call(svc, r).await.unwrap();
    let status = resp.status();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, ct, body.to_vec())
}

async fn get(svc: &mut Switchboard, uri: &str) -> (StatusCode, String, Vec<u8>) {
    call(svc, req("GET", uri, None, "")).await
}

#[tokio::test]
async fn files_with_their_content_types() {
    let dir = Dir::new("types");
    let mut svc = Switchboard::new(demo::router()).site(Some(Site::load(&dir.site()).unwrap()));
    let (s, ct, b) = get(&mut svc, "/").await;
    assert_eq!(
        (s, ct.as_str(), b.as_slice()),
        (StatusCode::OK, "text/html; charset=utf-8", INDEX.as_bytes())
    );
    assert_eq!(get(&mut svc, "/index.html").await.2, INDEX.as_bytes());
    let (s, ct, b) = get(&mut svc, "/core_bg.wasm").await;
    assert_eq!(
        (s, ct.as_str(), b.as_slice()),
        (StatusCode::OK, "application/wasm", WASM)
    );
    let (s, ct, _) = get(&mut svc, "/app.js").await;
    assert_eq!(
        (s, ct.as_str()),
        (StatusCode::OK, "text/javascript; charset=utf-8")
    );
    let (s, ct, _) = get(&mut svc, "/examples.json?v=2").await;
    assert_eq!((s, ct.as_str()), (StatusCode::OK, "application/json"));
    // HEAD: the same status and type.
    let (s, ct, _) = call(&mut svc, req("HEAD", "/core_bg.wasm", None, "")).await;
    assert_eq!((s, ct.as_str()), (StatusCode::OK, "application/wasm"));
}

#[tokio::test]
async fn unknown_files_and_traversal_are_404() {
    let dir = Dir::new("traversal");
    let mut svc = Switchboard::new(demo::router()).site(Some(Site::load(&dir.site()).unwrap()));
    for uri in [
        "/missing.html",
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/..%5csecret.txt",
        "/..",
        "//secret.txt",
        "/sub/inner.txt", // the top level only
        "/sub",
        "/site/index.html",
        "/./index.html",
        "/%69ndex.html", // names are matched as sent, not decoded
    ] {
        let (s, _, b) = get(&mut svc, uri).await;
        assert_eq!(
            s,
            StatusCode::NOT_FOUND,
            "{uri}: {}",
            String::from_utf8_lossy(&b)
        );
        assert!(!String::from_utf8_lossy(&b).contains("secret"), "{uri}");
    }
}

#[tokio::test]
async fn the_endpoint_stays_json_rpc() {
    let dir = Dir::new("endpoint");
    let mut svc = Switchboard::new(demo::router()).site(Some(Site::load(&dir.site()).unwrap()));
    let (s, ct, b) = call(
        &mut svc,
        req("POST", "/", Some("application/json"), SUBTRACT),
    )
    .await;
    assert_eq!(
        (s, ct.as_str(), b.as_slice()),
        (
            StatusCode::OK,
            "application/json",
            &br#"{"jsonrpc":"2.0","result":19,"id":1}"#[..]
        )
    );
    let (s, _, _) = call(&mut svc, req("PUT", "/", None, "")).await;
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
    // Without a site, GET is 405 as before.
    let mut bare = Switchboard::new(demo::router());
    assert_eq!(get(&mut bare, "/").await.0, StatusCode::METHOD_NOT_ALLOWED);
    // The bearer token comes first, for the files too.
    let mut locked = Switchboard::new(demo::router())
        .bearer_token("s3cret")
        .site(Some(Site::load(&dir.site()).unwrap()));
    assert_eq!(get(&mut locked, "/").await.0, StatusCode::UNAUTHORIZED);
}

#[test]
fn load_needs_an_index_and_a_directory() {
    let dir = Dir::new("load");
    std::fs::remove_file(dir.site().join("index.html")).unwrap();
    let e = Site::load(&dir.site()).unwrap_err();
    assert!(e.to_string().contains("no index.html"), "{e}");
    assert!(Site::load(&dir.0.join("nowhere")).is_err());
}

/// One request over a fresh connection (`Connection: close`): the raw answer.
fn raw(addr: &str, request: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let mut buf = [0; 4096];
    // Until the server closes, or (for a 101) until the headers are in.
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        if out.starts_with(b"HTTP/1.1 101") && out.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn serve_playground_dir() {
    let dir = Dir::new("serve");
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--threads",
            "1",
            "--playground",
        ])
        .arg(dir.site())
        .env("SWITCHBOARD_LOG", "warn")
        .env_remove("SWITCHBOARD_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("switchboard listening on http://")
        .and_then(|s| s.strip_suffix('/'))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });

    let page = raw(
        &addr,
        "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(
        page.to_ascii_lowercase()
            .contains("content-type: text/html; charset=utf-8"),
        "{page}"
    );
    assert!(page.ends_with(INDEX), "{page}");
    let wasm = raw(
        &addr,
        "GET /core_bg.wasm HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(
        wasm.to_ascii_lowercase()
            .contains("content-type: application/wasm"),
        "{wasm}"
    );
    let up = raw(
        &addr,
        "GET /../secret.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(up.starts_with("HTTP/1.1 404"), "{up}");
    let rpc = raw(
        &addr,
        &format!(
            "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{SUBTRACT}",
            SUBTRACT.len()
        ),
    );
    assert!(
        rpc.starts_with("HTTP/1.1 200") && rpc.ends_with(r#"{"jsonrpc":"2.0","result":19,"id":1}"#),
        "{rpc}"
    );
    // GET / with Upgrade: websocket is still the WebSocket endpoint.
    let ws = raw(
        &addr,
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    assert!(ws.starts_with("HTTP/1.1 101"), "{ws}");
    // Streamable HTTP stays at /mcp (a GET without a session: not the site's 404).
    let mcp = raw(
        &addr,
        "GET /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(
        !mcp.starts_with("HTTP/1.1 404") && !mcp.starts_with("HTTP/1.1 200"),
        "{mcp}"
    );

    child.kill().unwrap();
    child.wait().unwrap();
    let printed = rest.join().unwrap();
    assert!(printed.contains("playground: http://"), "{printed}");
}

#[test]
fn serve_refuses_a_missing_playground() {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--playground",
            "/nonexistent/switchboard-playground",
        ])
        .env("SWITCHBOARD_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--playground"), "{err}");
}
