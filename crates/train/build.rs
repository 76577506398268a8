//! Makes every binary of this package (tests, benches, examples) find libtorch at run time
//! without `LD_LIBRARY_PATH`, and passes the libtorch directory on to dependents.
//!
//! torch-sys (links = "tch") prints `cargo:libtorch_lib=DIR`; Cargo hands it to immediate
//! dependents as `DEP_TCH_LIBTORCH_LIB`. `rustc-link-arg` only affects this package's own
//! link steps, so packages that depend on xq-train read `DEP_XQTORCH_LIBTORCH_LIB` in their
//! own build.rs and emit the same flags (see the root build.rs).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    let Some(dir) = std::env::var_os("DEP_TCH_LIBTORCH_LIB") else {
        return;
    };
    let dir = dir.to_string_lossy();
    println!("cargo:libtorch_lib={dir}");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        // Rust links with --as-needed, which drops libtorch_cuda.so (nothing references its
        // symbols directly; it registers the CUDA backend from static initialisers), leaving
        // a CPU-only torch. Linking libtorch itself without as-needed keeps it.
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
}
