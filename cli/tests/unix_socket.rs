//! `switchboard serve --unix PATH` end to end: the real binary, clients on the
//! socket (NDJSON, the way Ethereum clients use IPC), a graceful stop.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    path: std::path::PathBuf,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let dir = std::env::temp_dir().join(format!("swb-unix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}.sock", extra.len()));
        let child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["serve", "--unix", path.to_str().unwrap()])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut child = child;
        // It says where it listens once it does.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("switchboard listening on unix:"), "{line}");
        Server { child, path }
    }

    fn connect(&self) -> (UnixStream, BufReader<UnixStream>) {
        let s = UnixStream::connect(&self.path).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let r = BufReader::new(s.try_clone().unwrap());
        (s, r)
    }

    /// SIGTERM, then waits (bounded) for a clean exit.
    fn stop(mut self) -> i32 {
        // SAFETY: kill(2) with a pid we own and a valid signal number.
        let rc = unsafe { kill(self.child.id() as i32, 15) };
        assert_eq!(rc, 0);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "the server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

fn line(r: &mut BufReader<UnixStream>) -> String {
    let mut l = String::new();
    r.read_line(&mut l).unwrap();
    l.trim_end().to_owned()
}

#[test]
fn clients_on_the_socket_are_served_until_sigterm() {
    let server = Server::start(&[]);
    let (mut a, mut ra) = server.connect();
    let (mut b, mut rb) = server.connect();
    a.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}\n")
        .unwrap();
    b.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"eth_getBalance\",\"params\":[\"0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045\",\"latest\"],\"id\":\"b\"}\n")
        .unwrap();
    assert_eq!(line(&mut ra), r#"{"jsonrpc":"2.0","result":19,"id":1}"#);
    assert_eq!(
        line(&mut rb),
        r#"{"jsonrpc":"2.0","result":"0x1bdb569fa3c2565cc","id":"b"}"#
    );
    // Bad input gets its exact answer; the connection goes on.
    a.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":1,\"id\":2}\nnot json\n")
        .unwrap();
    assert!(line(&mut ra).contains(r#""code":-32600"#));
    assert!(line(&mut ra).contains(r#""code":-32700"#));
    // A client that goes away leaves the others served.
    drop((a, ra));
    b.write_all(b"[{\"jsonrpc\":\"2.0\",\"method\":\"sum\",\"params\":[1,2,4],\"id\":3}]\n")
        .unwrap();
    assert_eq!(line(&mut rb), r#"[{"jsonrpc":"2.0","result":7,"id":3}]"#);
    let path = server.path.clone();
    assert_eq!(server.stop(), 0);
    // The open connection was closed, the socket file removed.
    assert_eq!(line(&mut rb), "");
    assert!(!path.exists());
}

#[test]
fn a_stale_socket_is_replaced_and_other_files_are_not() {
    let server = Server::start(&["--framing", "ndjson"]);
    let path = server.path.clone();
    // Killed without cleanup: the socket file stays behind.
    let mut child = server.child;
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(path.exists());
    let again = Server::start(&["--framing", "ndjson"]);
    let (mut s, mut r) = again.connect();
    s.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":1}\n")
        .unwrap();
    assert!(line(&mut r).starts_with(r#"{"jsonrpc":"2.0","result":"#));
    assert_eq!(again.stop(), 0);
    // A regular file at the path is an error, left alone.
    std::fs::write(&path, b"keep me").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args([
            "serve",
            "--unix",
            path.to_str().unwrap(),
            "--framing",
            "ndjson",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(&path).unwrap(), b"keep me");
    std::fs::remove_file(&path).unwrap();
}
