//! Embeds libtorch's directory as an rpath in the binaries that run networks, so they
//! run without `LD_LIBRARY_PATH`: in the root package `xqz-torch` and the integration
//! tests (never `xqz`, the front end that must not load libtorch); in any other package
//! that names this file as its build script (`xq-pipeline`: `build = "../../build.rs"`),
//! every binary it links.
//!
//! xq-train (the crate that links tch) passes the directory on as `DEP_XQTORCH_LIBTORCH_LIB`
//! (Cargo's `links` metadata reaches immediate dependents only), and `rustc-link-arg` from
//! its own build script does not reach this package's link steps, hence this file. While
//! the root package does not depend on xq-train the variable is absent and this does
//! nothing. Any other package that depends on xq-train and builds binaries or tests should
//! name this file as its build script as well.

fn main() {
    if std::env::var("CARGO_PKG_NAME").as_deref() == Ok("xqzero") {
        build_id();
    }
    // No `rerun-if-changed=build.rs`: Cargo reruns a changed build script anyway, and the
    // path would be relative to each package that names this file.
    println!("cargo:rerun-if-env-changed=DEP_XQTORCH_LIBTORCH_LIB");
    let Some(dir) = std::env::var_os("DEP_XQTORCH_LIBTORCH_LIB") else {
        return;
    };
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let dir = dir.to_string_lossy();
    let root = std::env::var("CARGO_PKG_NAME").as_deref() == Ok("xqzero");
    let emit = |arg: &str| {
        if root {
            println!("cargo:rustc-link-arg-bin=xqz-torch={arg}");
            println!("cargo:rustc-link-arg-tests={arg}");
        } else {
            println!("cargo:rustc-link-arg={arg}");
        }
    };
    emit(&format!("-Wl,-rpath,{dir}"));
    // Keep libtorch_cuda.so although nothing references it by symbol (it registers the
    // CUDA backend when loaded); Rust links with --as-needed, which would drop it.
    emit("-Wl,--no-as-needed");
    emit("-ltorch");
    if std::path::Path::new(dir.as_ref())
        .join("libtorch_cuda.so")
        .exists()
    {
        emit("-ltorch_cuda");
    }
    emit("-Wl,--as-needed");
}

/// `XQZ_BUILD_ID`: a hash of every source file the two root binaries are built from
/// (`src/`, `crates/`, `Cargo.toml`, `Cargo.lock`), so that `xqz` can refuse to exec an
/// `xqz-torch` from another build (`cargo build --bin xqz` alone leaves a stale one).
/// Hashing contents, not times, keeps the id the same for the same sources.
fn build_id() {
    let root = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = Vec::new();
    for top in ["src", "crates"] {
        println!("cargo:rerun-if-changed={top}");
        collect(&root.join(top), &mut files);
    }
    for file in ["Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={file}");
        files.push(root.join(file));
    }
    files.sort();
    // FNV-1a 64 over (path, contents) pairs; a missing file hashes as empty.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap_or(file);
        feed(relative.to_string_lossy().as_bytes());
        feed(&[0]);
        feed(&std::fs::read(file).unwrap_or_default());
        feed(&[0]);
    }
    println!("cargo:rustc-env=XQZ_BUILD_ID={hash:016x}");
}

/// The sources under `dir`: Rust files, manifests and the data files compiled in
/// (`include_str!`), skipping build outputs and tests (which no binary is built from).
fn collect(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if !matches!(name.to_str(), Some("target" | "tests" | "benches")) {
                collect(&path, files);
            }
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("rs" | "toml" | "json")
        ) {
            files.push(path);
        }
    }
}
