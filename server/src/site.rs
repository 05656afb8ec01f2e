//! A small static site served next to the JSON-RPC endpoint: the playground
//! (`switchboard serve --playground DIR`, built by `playground/build.sh`).
//!
//! The directory's regular files (its top level only) are read once, when the
//! [`Site`] is loaded, and kept in memory: a `GET` names one of them or gets 404.
//! No path from a request ever reaches the file system, so no request can read
//! outside the directory (`..`, `%2e%2e`, `//`, symlinks made later: all 404).
//!
//! ```
//! use switchboard_server::site::Site;
//! let dir = std::env::temp_dir().join(format!("site-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! std::fs::write(dir.join("index.html"), "<p>hi</p>").unwrap();
//! std::fs::write(dir.join("core.wasm"), b"\0asm").unwrap();
//! let site = Site::load(&dir).unwrap();
//! assert_eq!(site.get("/").unwrap().content_type, "text/html; charset=utf-8");
//! assert_eq!(site.get("/core.wasm").unwrap().content_type, "application/wasm");
//! assert!(site.get("/../index.html").is_none());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::collections::HashMap;
use std::path::Path;

use bytes::Bytes;

/// One file of a [`Site`]: its bytes and the `Content-Type` it is served with.
#[derive(Clone, Debug)]
pub struct File {
    /// The file's contents, as read at load time.
    pub body: Bytes,
    /// From the file name's extension ([`content_type`]).
    pub content_type: &'static str,
}

/// The files of a directory, in memory, by name; see the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct Site {
    files: HashMap<String, File>,
}

/// The most bytes a [`Site`] loads in all (its files are in memory).
pub const MAX_SITE_BYTES: u64 = 64 << 20;

impl Site {
    /// Reads the regular files at the top of `dir` (subdirectories and other
    /// entries are left out). Fails when `dir` cannot be read, when it has no
    /// `index.html` (what `GET /` serves), or when its files hold more than
    /// [`MAX_SITE_BYTES`].
    pub fn load(dir: &Path) -> std::io::Result<Site> {
        let mut files = HashMap::new();
        let mut total = 0u64;
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            // Follows a symlink made before loading, as a static server would.
            let meta = std::fs::metadata(entry.path())?;
            if !meta.is_file() {
                continue;
            }
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue; // a URL path is UTF-8: no request could name it
            };
            total += meta.len();
            if total > MAX_SITE_BYTES {
                return Err(std::io::Error::other(format!(
                    "{}: more than {MAX_SITE_BYTES} bytes of files",
                    dir.display()
                )));
            }
            let body = Bytes::from(std::fs::read(entry.path())?);
            let content_type = content_type(&name);
            files.insert(name, File { body, content_type });
        }
        if !files.contains_key("index.html") {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{}: no index.html", dir.display()),
            ));
        }
        Ok(Site { files })
    }

    /// The file a request path names: `/` is `index.html`, `/NAME` the file
    /// `NAME`; anything else (a query aside) is `None`.
    #[must_use]
    pub fn get(&self, path: &str) -> Option<&File> {
        let path = path.split_once('?').map_or(path, |(p, _)| p);
        let name = path.strip_prefix('/')?;
        let name = if name.is_empty() { "index.html" } else { name };
        if name.contains('/') {
            return None;
        }
        self.files.get(name)
    }
}

/// The `Content-Type` of a file by its extension: HTML, JavaScript, JSON and
/// CSS as UTF-8 text, `application/wasm` (which `WebAssembly.instantiateStreaming`
/// requires), a few image types, and `application/octet-stream` otherwise.
#[must_use]
pub fn content_type(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "css" => "text/css; charset=utf-8",
        "txt" | "md" => "text/plain; charset=utf-8",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        _ => "application/octet-stream",
    }
}
