//! Embeds libtorch's directory as an rpath in the `xqz` binary and the test binaries of
//! the package it builds, so they run without `LD_LIBRARY_PATH`. Shared: `xq-eval` names
//! this file as its build script too (`build = "../../build.rs"`).
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
    println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    // Keep libtorch_cuda.so although nothing references it by symbol (it registers the
    // CUDA backend when loaded); Rust links with --as-needed, which would drop it.
    println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
    println!("cargo:rustc-link-arg=-ltorch");
    if std::path::Path::new(dir.as_ref())
        .join("libtorch_cuda.so")
        .exists()
    {
        println!("cargo:rustc-link-arg=-ltorch_cuda");
    }
    println!("cargo:rustc-link-arg=-Wl,--as-needed");
}
