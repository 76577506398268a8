//! Makes every binary of this package (tests, benches, examples) find libtorch at run time
//! without `LD_LIBRARY_PATH`, and passes the libtorch directory on to dependents.
//!
//! torch-sys (links = "tch") prints `cargo:libtorch_lib=DIR`; Cargo hands it to immediate
//! dependents as `DEP_TCH_LIBTORCH_LIB`. `rustc-link-arg` only affects this package's own
//! link steps, so packages that depend on xq-train read `DEP_XQTORCH_LIBTORCH_LIB` in their
//! own build.rs and emit the same flags (see the root build.rs).
//!
//! It also compiles the CUDA stream and graph shim (`cuda/shim.cpp`, see `src/cuda.rs`)
//! when libtorch has CUDA and the CUDA runtime headers are found: in `XQZ_CUDA_INCLUDE`
//! (directories separated by `:`), `$CUDA_HOME/include`, `/usr/local/cuda/include`, or
//! the `nvidia/*/include` directories of the Python environment libtorch came from
//! (`scripts/setup` installs `nvidia-cuda-crt` there for the compiler headers that the
//! runtime headers include). Then it sets the `xq_cuda_shim` cfg.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cuda/shim.cpp");
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    println!("cargo:rerun-if-env-changed=XQZ_CUDA_INCLUDE");
    println!("cargo:rerun-if-env-changed=CUDA_HOME");
    println!("cargo::rustc-check-cfg=cfg(xq_cuda_shim)");
    let Some(dir) = std::env::var_os("DEP_TCH_LIBTORCH_LIB") else {
        return;
    };
    build_cuda_shim(Path::new(&dir));
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

/// Compiles `cuda/shim.cpp` against the libtorch in `lib` (its `../include`) when that
/// libtorch has CUDA and the CUDA headers are found; otherwise leaves the cfg unset, with
/// a warning when only the headers are missing.
fn build_cuda_shim(lib: &Path) {
    if !lib.join("libtorch_cuda.so").exists() {
        return;
    }
    let mut candidates: Vec<PathBuf> = std::env::var_os("XQZ_CUDA_INCLUDE")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        candidates.push(Path::new(&home).join("include"));
    }
    candidates.push("/usr/local/cuda/include".into());
    // .../site-packages/torch/lib -> .../site-packages/nvidia/*/include
    if let Some(site) = lib.parent().and_then(Path::parent)
        && let Ok(entries) = std::fs::read_dir(site.join("nvidia"))
    {
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path().join("include"))
            .collect();
        found.sort();
        candidates.extend(found);
    }
    let has = |file: &str| candidates.iter().any(|d| d.join(file).exists());
    if !has("cuda_runtime_api.h") || !has("crt/host_config.h") {
        println!(
            "cargo:warning=libtorch has CUDA but the CUDA runtime headers were not found: \
             built without CUDA streams and graphs (run scripts/setup, or set XQZ_CUDA_INCLUDE)"
        );
        return;
    }
    let include = lib.parent().map(|p| p.join("include")).unwrap_or_default();
    cc::Build::new()
        .cpp(true)
        .pic(true)
        .warnings(false)
        .include(&include)
        .include(include.join("torch/csrc/api/include"))
        .includes(candidates.iter().filter(|d| d.exists()))
        .flag("-std=c++17")
        .flag("-D_GLIBCXX_USE_CXX11_ABI=1")
        .flag("-DGLOG_USE_GLOG_EXPORT")
        .file("cuda/shim.cpp")
        .compile("xqcuda");
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-lib=dylib=c10_cuda");
    println!("cargo:rustc-link-lib=dylib=torch_cuda");
    println!("cargo:rustc-cfg=xq_cuda_shim");
}
