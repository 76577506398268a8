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
