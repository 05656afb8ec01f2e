//! Typed methods: params and results as serde types, a handler that borrows its
//! params from the message (`typed_ref`), and errors mapped to JSON-RPC error
//! objects (`ResultExt`, `From<YourError> for RpcError`), served over HTTP.
//!
//! ```text
//! cargo run -p switchboard-server --example typed
//! ```
//!
//! It binds 127.0.0.1 on a free port, makes its own calls, checks the answers
//! and exits 0.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use switchboard::{BorrowedParams, ResultExt, Router, RpcError};
use switchboard_server::http::{Switchboard, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// By-name params (`{"name":…,"age":…}`); by-position (`["ada", 36]`) fit too.
#[derive(Deserialize)]
struct NewUser {
    name: String,
    age: u8,
}

/// A result, serialized straight into the response.
#[derive(Serialize)]
struct User {
    id: u64,
    name: String,
    adult: bool,
}

/// Params that borrow from the message: `text` is not copied unless it has
/// escapes to undo.
#[derive(Deserialize)]
struct Count<'a> {
    #[serde(borrow)]
    text: Cow<'a, str>,
    of: char,
}

// `typed_ref` names the params type by its `'static` form.
impl BorrowedParams for Count<'static> {
    type Of<'de> = Count<'de>;
}

/// The application's own error, mapped to JSON-RPC error objects in one place.
#[derive(Debug)]
enum AppError {
    TooYoung { min: u8 },
    Closed,
}

impl From<AppError> for RpcError {
    fn from(e: AppError) -> Self {
        match e {
            AppError::TooYoung { min } => {
                RpcError::new(1001, "too young").with_data(&serde_json::json!({ "min": min }))
            }
            AppError::Closed => RpcError::new(1002, "registrations are closed"),
        }
    }
}

fn register(user: NewUser) -> Result<User, AppError> {
    if user.name == "late" {
        return Err(AppError::Closed);
    }
    if user.age < 13 {
        return Err(AppError::TooYoung { min: 13 });
    }
    Ok(User {
        id: 7,
        adult: user.age >= 18,
        name: user.name,
    })
}

fn router() -> Arc<Router> {
    Router::builder()
        // `?` on the application's error: its `From` impl makes the error object.
        .typed("register", |user: NewUser| Ok(register(user)?))
        .typed_ref::<Count<'static>, _, _>("count", |c| {
            Ok(c.text.chars().filter(|&ch| ch == c.of).count())
        })
        // Any `Display` error with a code of your choice (`rpc_error`), or as
        // -32603 with the error in `data` (`internal_error`).
        .typed("port", |(s,): (String,)| s.parse::<u16>().rpc_error(1003))
        .typed("config", |(path,): (String,)| {
            std::fs::read_to_string(&path).internal_error()
        })
        .build()
        .expect("valid registrations")
}

/// One JSON-RPC call over HTTP/1.1 (by hand, to keep the example's
/// dependencies to the server's); the response body.
async fn call(addr: SocketAddr, body: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.unwrap();
    let (_, body) = answer.split_once("\r\n\r\n").expect("a whole answer");
    body.to_owned()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, Switchboard::new(router()), async {
        let _ = stopped.await;
    }));

    let checks = [
        (
            r#"{"jsonrpc":"2.0","method":"register","params":{"name":"ada","age":36},"id":1}"#,
            r#"{"jsonrpc":"2.0","result":{"id":7,"name":"ada","adult":true},"id":1}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"register","params":["tim",9],"id":2}"#,
            r#"{"jsonrpc":"2.0","error":{"code":1001,"message":"too young","data":{"min":13}},"id":2}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"register","params":{"name":"late","age":40},"id":3}"#,
            r#"{"jsonrpc":"2.0","error":{"code":1002,"message":"registrations are closed"},"id":3}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"count","params":{"text":"banana","of":"a"},"id":4}"#,
            r#"{"jsonrpc":"2.0","result":3,"id":4}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"port","params":["80x"],"id":5}"#,
            r#"{"jsonrpc":"2.0","error":{"code":1003,"message":"invalid digit found in string"},"id":5}"#,
        ),
    ];
    for (request, expected) in checks {
        let answer = call(addr, request).await;
        println!("--> {request}\n<-- {answer}");
        assert_eq!(answer, expected);
    }
    // Params that do not fit the type: -32602, saying what did not fit.
    let answer = call(
        addr,
        r#"{"jsonrpc":"2.0","method":"register","params":{"name":"ada"},"id":6}"#,
    )
    .await;
    println!("<-- {answer}");
    assert!(answer.contains(r#""code":-32602"#), "{answer}");
    assert!(answer.contains("age"), "{answer}");
    // An I/O error as -32603, its text in `data`.
    let answer = call(
        addr,
        r#"{"jsonrpc":"2.0","method":"config","params":["/no/such/file"],"id":7}"#,
    )
    .await;
    println!("<-- {answer}");
    assert!(answer.contains(r#""code":-32603"#), "{answer}");

    stop.send(()).expect("the server runs");
    server.await.expect("the server task")
}

#[cfg(test)]
mod tests {
    /// The example runs to completion: its own assertions pass.
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
