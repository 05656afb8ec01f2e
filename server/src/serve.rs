//! `switchboard serve`: options, then HTTP (tokio + hyper), stdio or a Unix socket
//! (both on the duplex driver).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use switchboard::{ParserConfig, Router};
use switchboard_server::duplex::{Duplex, DuplexConfig};
use switchboard_server::http::{ServeConfig, Switchboard, serve_with, serve_with_layer};
use switchboard_server::stdio::Framing;
use switchboard_server::streamable::{Streamable, StreamableConfig};
use switchboard_server::ws::WsConfig;
use switchboard_server::{chain, demo, log};

struct Options {
    stdio: bool,
    unix: Option<std::path::PathBuf>,
    framing: Framing,
    listen: String,
    token: Option<String>,
    config: ParserConfig,
    threads: Option<usize>,
    body_timeout: Duration,
    header_timeout: Duration,
    write_timeout: Duration,
    max_connections: usize,
    ws: WsConfig,
    heads_interval: Duration,
    /// Where Streamable HTTP is mounted (`None`: nowhere).
    stream_path: Option<String>,
    /// `--bench`: the load tool's subscription too ([`crate::bench`]).
    bench: bool,
    /// `--cors`: the origins allowed (tower-http's CORS layer), `*` for any.
    cors: Vec<String>,
    /// `--health`: the path answered 200 on GET and HEAD.
    health: Option<String>,
    /// `--http1-only`: no HTTP/2 ([`ServeConfig::http2`]).
    http1_only: bool,
}

fn parse(args: &[&str]) -> Result<Options, String> {
    let mut o = Options {
        stdio: false,
        unix: None,
        framing: Framing::Ndjson,
        listen: "127.0.0.1:8080".into(),
        token: std::env::var("SWITCHBOARD_TOKEN")
            .ok()
            .filter(|t| !t.is_empty()),
        config: ParserConfig::new(),
        threads: None,
        body_timeout: Switchboard::DEFAULT_BODY_READ_TIMEOUT,
        header_timeout: ServeConfig::default().header_read_timeout,
        write_timeout: ServeConfig::default().write_timeout,
        max_connections: ServeConfig::default().max_connections,
        ws: WsConfig::default(),
        heads_interval: Duration::from_secs(1),
        stream_path: Some(StreamableConfig::default().path),
        bench: false,
        cors: Vec::new(),
        health: None,
        http1_only: false,
    };
    let mut framing_given = false;
    let mut it = args.iter().copied();
    while let Some(arg) = it.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (arg, None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            inline
                .map(str::to_owned)
                .or_else(|| it.next().map(str::to_owned))
                .ok_or_else(|| format!("{name} needs {what}"))
        };
        fn number(name: &str, v: &str) -> Result<usize, String> {
            v.parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{name}: {v:?} is not a positive integer"))
        }
        match name {
            "--stdio" => o.stdio = true,
            "--http1-only" => o.http1_only = true,
            "--bench" => o.bench = true,
            "--unix" => o.unix = Some(value("a socket path")?.into()),
            "--framing" => {
                o.framing = value("ndjson or lsp")?.parse()?;
                framing_given = true;
            }
            "--listen" => o.listen = value("an address")?,
            "--stream-path" => {
                let p = value("a path, or off")?;
                o.stream_path = match p.as_str() {
                    "off" => None,
                    p if p.starts_with('/') => Some(p.into()),
                    _ => return Err("--stream-path takes a path starting with / (or off)".into()),
                };
            }
            "--cors" => {
                let v = value("an origin, or *")?;
                let _valid =
                    switchboard_server::http::cors(&[&v]).map_err(|e| format!("--cors: {e}"))?;
                o.cors.push(v);
            }
            "--health" => {
                let p = value("a path")?;
                if !p.starts_with('/') {
                    return Err("--health takes a path starting with /".into());
                }
                o.health = Some(p);
            }
            "--token" => o.token = Some(value("a token")?).filter(|t| !t.is_empty()),
            "--max-message-bytes" => {
                let n = number(name, &value("a number")?)?;
                if n > ParserConfig::MAX_MESSAGE_BYTES_CAP {
                    return Err(format!(
                        "{name}: at most {}",
                        ParserConfig::MAX_MESSAGE_BYTES_CAP
                    ));
                }
                o.config.max_message_bytes(n);
            }
            "--max-batch-len" => {
                o.config.max_batch_len(number(name, &value("a number")?)?);
            }
            "--threads" => o.threads = Some(number(name, &value("a number")?)?),
            "--max-connections" => o.max_connections = number(name, &value("a number")?)?,
            "--ws-max-frame-bytes" => o.ws.max_frame_bytes = number(name, &value("a number")?)?,
            "--body-timeout" | "--header-timeout" | "--write-timeout" | "--ws-ping-interval"
            | "--ws-idle-timeout" | "--heads-interval" => {
                let v = value("seconds")?;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s < 1e9)
                    .ok_or_else(|| format!("{name}: {v:?} is not a positive number"))?;
                let d = Duration::from_secs_f64(secs);
                match name {
                    "--body-timeout" => o.body_timeout = d,
                    "--header-timeout" => o.header_timeout = d,
                    "--write-timeout" => {
                        o.write_timeout = d;
                        o.ws.duplex.write_timeout = d;
                    }
                    "--ws-ping-interval" => o.ws.ping_interval = d,
                    "--ws-idle-timeout" => o.ws.idle_timeout = d,
                    _ if d < Duration::from_millis(1) => {
                        return Err(format!("{name}: at least 0.001 seconds"));
                    }
                    _ => o.heads_interval = d,
                }
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    if framing_given && !o.stdio && o.unix.is_none() {
        return Err("--framing goes with --stdio or --unix".into());
    }
    if o.stdio && o.unix.is_some() {
        return Err("--stdio and --unix exclude each other".into());
    }
    Ok(o)
}

fn router(o: &Options) -> Arc<Router> {
    let chain = Arc::new(chain::Chain::new(o.heads_interval));
    let demo = demo::register(Router::builder(), Arc::new(demo::Counters::default()));
    let demo = demo::register_countdown(demo, Duration::from_millis(100));
    let demo = if o.bench {
        crate::bench::register(demo)
    } else {
        demo
    };
    chain::register(demo, chain)
        .config(o.config)
        .build()
        .expect("the demo registrations are valid")
}

pub(crate) fn run(args: &[&str]) -> ExitCode {
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("switchboard: {e}");
            eprint!("{}", crate::USAGE);
            return ExitCode::from(2);
        }
    };
    if o.stdio || o.unix.is_some() {
        return duplex(o);
    }
    http(o)
}

/// `--stdio` and `--unix`: the duplex driver, calls of a connection concurrent.
fn duplex(o: Options) -> ExitCode {
    // stdio is one connection: one thread serves it best (no cross-thread
    // wake-ups); a socket serves many, on `--threads` workers.
    let built = if o.unix.is_none() && o.threads.is_none() {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(o.threads.unwrap_or(2))
            .enable_all()
            .build()
    };
    let runtime = match built {
        Ok(r) => r,
        Err(e) => {
            log::error(format_args!("cannot start the runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    let config = DuplexConfig {
        framing: o.framing,
        write_timeout: o.write_timeout,
        ..DuplexConfig::default()
    };
    let router = router(&o);
    let code = runtime.block_on(async move {
        match &o.unix {
            None => {
                let (stdin, stdout) = switchboard_server::duplex::stdio();
                let served = Duplex::new(router, config).serve(stdin, stdout).await;
                match served {
                    Ok(_) => ExitCode::SUCCESS,
                    Err(e) => {
                        log::error(format_args!("stdio: {e}"));
                        ExitCode::from(1)
                    }
                }
            }
            Some(path) => unix(path, router, config).await,
        }
    });
    // stdin's reader thread may be blocked in read(2): do not wait for it.
    runtime.shutdown_background();
    code
}

#[cfg(unix)]
async fn unix(path: &std::path::Path, router: Arc<Router>, config: DuplexConfig) -> ExitCode {
    use std::os::unix::fs::FileTypeExt;
    // A socket left by an earlier run is replaced; any other file is not touched.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            log::error(format_args!(
                "{} exists and is not a socket",
                path.display()
            ));
            return ExitCode::from(1);
        }
        let _ = std::fs::remove_file(path);
    }
    let shutdown = shutdown_signal();
    let listener = match tokio::net::UnixListener::bind(path) {
        Ok(l) => l,
        Err(e) => {
            log::error(format_args!("cannot listen on {}: {e}", path.display()));
            return ExitCode::from(1);
        }
    };
    println!("switchboard listening on unix:{}", path.display());
    log::info(format_args!(
        "unix socket {} ({:?} framing), demo methods",
        path.display(),
        config.framing
    ));
    let mut shutdown = std::pin::pin!(shutdown);
    let mut connections = tokio::task::JoinSet::new();
    let mut open: Vec<switchboard::connection::Connection> = Vec::new();
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let duplex = Duplex::new(router.clone(), config);
                    open.retain(|c| !c.is_closed());
                    open.push(duplex.connection().clone());
                    let (r, w) = stream.into_split();
                    connections.spawn(async move {
                        if let Err(e) = duplex.serve(r, w).await {
                            log::warn(format_args!("unix connection: {e}"));
                        }
                    });
                }
                Err(e) => {
                    log::warn(format_args!("accept: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    // Graceful: every connection winds up (calls drained, then cancelled).
    for c in &open {
        c.close();
    }
    while connections.join_next().await.is_some() {}
    let _ = std::fs::remove_file(path);
    log::info(format_args!("stopped"));
    ExitCode::SUCCESS
}

#[cfg(not(unix))]
async fn unix(_: &std::path::Path, _: Arc<Router>, _: DuplexConfig) -> ExitCode {
    log::error(format_args!("--unix needs a Unix system"));
    ExitCode::from(2)
}

fn http(o: Options) -> ExitCode {
    let threads = o
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            log::error(format_args!("cannot start the runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    runtime.block_on(async move {
        // The signal handlers are installed now, before anyone can connect: a
        // Ctrl-C right after the first answer must stop the server gracefully,
        // not kill it by default action.
        let shutdown = shutdown_signal();
        let listener = match tokio::net::TcpListener::bind(&o.listen).await {
            Ok(l) => l,
            Err(e) => {
                log::error(format_args!("cannot listen on {}: {e}", o.listen));
                return ExitCode::from(1);
            }
        };
        let addr: SocketAddr = match listener.local_addr() {
            Ok(a) => a,
            Err(e) => {
                log::error(format_args!("cannot read the bound address: {e}"));
                return ExitCode::from(1);
            }
        };
        let router = router(&o);
        let stream = o.stream_path.as_ref().map(|path| {
            let config = StreamableConfig {
                path: path.clone(),
                body_read_timeout: o.body_timeout,
                stateless: true,
                allowed_origins: o.cors.clone(),
                ..StreamableConfig::default()
            };
            Streamable::new(router.clone(), config)
        });
        let mut service = Switchboard::new(router)
            .body_read_timeout(o.body_timeout)
            .websocket(Some(o.ws))
            .streamable(stream)
            .health(o.health.as_deref());
        if let Some(t) = &o.token {
            service = service.bearer_token(t);
        }
        let auth = if o.token.is_some() {
            " -H \"Authorization: Bearer $SWITCHBOARD_TOKEN\""
        } else {
            ""
        };
        // stdout: what a person (or a test) needs; stderr: the one startup log line.
        println!("switchboard listening on http://{addr}/");
        println!(
            "try: curl -s{auth} -H 'Content-Type: application/json' -d '{{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}}' http://{addr}/"
        );
        println!("websocket: ws://{addr}/ (the same endpoint)");
        if let Some(p) = &o.stream_path {
            println!("streamable http (server-sent events): http://{addr}{p}");
        }
        log::info(format_args!(
            "http on {addr}: {threads} thread(s), max_message_bytes {}, max_batch_len {}, token {}, demo methods",
            o.config.get_max_message_bytes(),
            o.config.get_max_batch_len(),
            if o.token.is_some() { "required" } else { "off" },
        ));
        let config = ServeConfig {
            header_read_timeout: o.header_timeout,
            write_timeout: o.write_timeout,
            max_connections: o.max_connections,
            http2: !o.http1_only,
            ..ServeConfig::default()
        };
        let result = if o.cors.is_empty() {
            serve_with(listener, service, config, shutdown).await
        } else {
            match switchboard_server::http::cors(&o.cors) {
                Ok(cors) => serve_with_layer(listener, service, cors, config, shutdown).await,
                Err(e) => {
                    log::error(format_args!("--cors: {e}"));
                    return ExitCode::from(2);
                }
            }
        };
        match result {
            Ok(()) => {
                log::info(format_args!("stopped"));
                ExitCode::SUCCESS
            }
            Err(e) => {
                log::error(format_args!("{e}"));
                ExitCode::from(1)
            }
        }
    })
}

/// Ctrl-C (SIGINT), or SIGTERM on Unix. The handlers are installed when this is
/// called (inside the runtime), not when the future is first polled.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let int = signal(SignalKind::interrupt());
        let term = signal(SignalKind::terminate());
        async move {
            match (int, term) {
                (Ok(mut i), Ok(mut t)) => {
                    tokio::select! {
                        _ = i.recv() => {}
                        _ = t.recv() => {}
                    }
                }
                (Ok(mut i), Err(_)) => {
                    i.recv().await;
                }
                (Err(_), Ok(mut t)) => {
                    t.recv().await;
                }
                (Err(_), Err(_)) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
