//! The boundaries ARCHITECTURE.md states, checked from the manifests and sources:
//! which workspace crates each crate may depend on (directly or not), that only
//! xq-train depends on `tch`, that run-directory paths, fixed hashes and printing each
//! stay where the page says, and that nothing cites a path outside the repository.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

/// Each workspace crate's dependencies (names, all kinds but dev), from its manifest.
fn manifests() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = BTreeMap::new();
    let mut paths = vec![root.join("Cargo.toml")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        paths.push(entry.unwrap().path().join("Cargo.toml"));
    }
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: toml::Table = text.parse().unwrap();
        let name = doc["package"]["name"].as_str().unwrap().to_owned();
        let deps = doc
            .get("dependencies")
            .and_then(toml::Value::as_table)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        out.insert(name, deps);
    }
    out
}

/// Every crate `name` depends on, following workspace crates.
fn closure(graph: &BTreeMap<String, BTreeSet<String>>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_owned()];
    while let Some(n) = todo.pop() {
        for d in graph.get(&n).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn only_xq_train_depends_on_tch() {
    let graph = manifests();
    for (name, deps) in &graph {
        let direct = deps.iter().any(|d| d == "tch" || d == "torch-sys");
        assert_eq!(direct, name == "xq-train", "{name}: {deps:?}");
    }
}

#[test]
fn crates_depend_only_on_the_crates_below_them() {
    let graph = manifests();
    let internal = |name: &str| -> BTreeSet<String> {
        closure(&graph, name)
            .into_iter()
            .filter(|d| graph.contains_key(d))
            .collect()
    };
    let allowed: &[(&str, &[&str])] = &[
        ("xq-core", &[]),
        ("xq-nn", &["xq-core"]),
        ("xq-data", &["xq-core", "xq-nn"]),
        ("xq-mcts", &["xq-core", "xq-nn"]),
        ("xq-selfplay", &["xq-core", "xq-nn", "xq-data", "xq-mcts"]),
        // The one crate that links libtorch reaches no run directory, players or matches
        // (not xq-run, not xq-eval); its TensorBoard writer is xq-data's.
        ("xq-train", &["xq-core", "xq-nn", "xq-data"]),
        // The CPU inference backend: reads checkpoints without libtorch.
        ("xq-native", &["xq-core", "xq-nn"]),
        // Ratings and competitions on results alone: of ours only xq-core, for its
        // fixed hashes, so whatever only reads results needs no network or search.
        ("xq-rating", &["xq-core"]),
        // Never libtorch: networks are injected through xq_nn::backend.
        (
            "xq-eval",
            &["xq-core", "xq-nn", "xq-data", "xq-mcts", "xq-rating"],
        ),
        // The run directory above the torch line (`xqz report` runs without libtorch);
        // xq-eval for which player an anchor is and a network player's budget.
        (
            "xq-run",
            &[
                "xq-core",
                "xq-nn",
                "xq-data",
                "xq-mcts",
                "xq-rating",
                "xq-eval",
            ],
        ),
    ];
    for (name, may) in allowed {
        let may: BTreeSet<String> = may.iter().map(|s| (*s).to_owned()).collect();
        let has = internal(name);
        assert!(has.is_subset(&may), "{name} depends on {:?}", &has - &may);
    }
    assert!(!closure(&graph, "xq-eval").contains("tch"));
    assert!(!closure(&graph, "xq-native").contains("tch"));
    assert!(!closure(&graph, "xq-run").contains("tch"));
    // Every crate is in the table or above it.
    for name in graph.keys() {
        assert!(
            allowed.iter().any(|(n, _)| n == name)
                || ["xq-pipeline", "xqzero"].contains(&name.as_str()),
            "{name} is not placed in ARCHITECTURE.md's code map"
        );
    }
}

/// The workspace's crates: package name and directory (the root package is `xqzero`).
fn packages() -> Vec<(String, std::path::PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.to_path_buf()];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        dirs.push(entry.unwrap().path());
    }
    dirs.into_iter()
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            let doc: toml::Table = text.parse().unwrap();
            (doc["package"]["name"].as_str().unwrap().to_owned(), dir)
        })
        .collect()
}

#[test]
fn only_the_root_package_draws_progress_bars_and_only_the_pipeline_and_binaries_use_anyhow() {
    for (name, deps) in manifests() {
        if name != "xqzero" {
            assert!(!deps.contains("indicatif"), "{name} depends on indicatif");
        }
        if !["xqzero", "xq-pipeline"].contains(&name.as_str()) {
            assert!(!deps.contains("anyhow"), "{name} depends on anyhow");
        }
    }
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A source file's text up to its unit tests (`#[cfg(test)]`), which may spell paths.
fn non_test_source(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// The string constants of `xq_data::layout`: the run directory's paths.
fn layout_paths() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("crates/data/src/layout.rs")).unwrap();
    let paths: Vec<String> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("pub const"))
        .filter_map(|l| l.split('"').nth(1).map(str::to_owned))
        .collect();
    assert!(paths.len() >= 10, "layout.rs has too few paths: {paths:?}");
    paths
}

#[test]
fn no_code_outside_xq_data_layout_spells_a_run_directory_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let layout = root.join("crates/data/src/layout.rs");
    let paths = layout_paths();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for (_, dir) in packages().iter().filter(|(n, _)| n != "xqzero") {
        rust_files(&dir.join("src"), &mut files);
    }
    let mut found = Vec::new();
    for file in files.iter().filter(|f| **f != layout) {
        let text = non_test_source(file);
        // Every string literal of the file (a rough scan: escaped quotes are rare here).
        for literal in text.split('"').skip(1).step_by(2) {
            // TensorBoard tags share the `data/` prefix (`data/window_size`).
            let tag = literal.starts_with("data/") && !literal.contains('.');
            let spells = !tag
                && paths.iter().any(|p| {
                    // Directory names that double as plain words only count as a path prefix.
                    let word = !p.contains(['/', '.']);
                    literal.starts_with(&format!("{p}/")) || (!word && literal == p)
                });
            if spells {
                found.push(format!(
                    "{}: {literal:?}",
                    file.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "run-directory paths spelled outside xq_data::layout:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_crate_has_an_import_circle_between_its_top_level_modules() {
    for (name, dir) in packages() {
        let src = dir.join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        // Top-level module of each file: `src/x.rs` and `src/x/**` are module `x`.
        let module_of = |file: &Path| -> Option<String> {
            let rel = file.strip_prefix(&src).ok()?;
            let first = rel.components().next()?.as_os_str().to_str()?;
            let m = first.strip_suffix(".rs").unwrap_or(first);
            (!["lib", "main", "bin"].contains(&m)).then(|| m.to_owned())
        };
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in &files {
            let Some(from) = module_of(file) else {
                continue;
            };
            let entry = graph.entry(from.clone()).or_default();
            let text = non_test_source(file);
            for (i, _) in text.match_indices("crate::") {
                let rest = &text[i + "crate::".len()..];
                let to: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !to.is_empty() && to != from && to.chars().next().is_some_and(char::is_lowercase)
                {
                    entry.insert(to);
                }
            }
            // `use crate::{a, b::c}` groups.
            for (i, _) in text.match_indices("crate::{") {
                let group = &text[i + "crate::{".len()..];
                let group = &group[..group.find("};").unwrap_or(group.len())];
                for item in group.split(',') {
                    let to: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !to.is_empty()
                        && to != from
                        && to.chars().next().is_some_and(char::is_lowercase)
                    {
                        entry.insert(to);
                    }
                }
            }
        }
        let modules: BTreeSet<String> = graph.keys().cloned().collect();
        for deps in graph.values_mut() {
            deps.retain(|d| modules.contains(d));
        }
        for m in &modules {
            let reach = closure(&graph, m);
            assert!(
                !reach.contains(m),
                "{name}: module `{m}` imports itself through {:?}",
                graph[m]
                    .iter()
                    .filter(|d| closure(&graph, d).contains(m))
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// Every package's `src/` (the root package's included): the code the workspace ships.
fn source_files() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for (_, dir) in packages() {
        rust_files(&dir.join("src"), &mut files);
    }
    files
}

/// The numeric literals of `text`, normalised: lower case, without `_` separators or a
/// type suffix (`0x9E37_79B9u64` → `0x9e3779b9`).
fn numeric_literals(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()))
        .map(|t| {
            let t = t.to_ascii_lowercase().replace('_', "");
            // No hex digit is `u` or `i`, so a suffix never eats digits.
            let end = ["u8", "u16", "u32", "u64", "u128", "usize", "i32", "i64"]
                .iter()
                .find_map(|s| t.strip_suffix(s))
                .unwrap_or(&t);
            end.to_owned()
        })
        .collect()
}

#[test]
fn every_fixed_hash_comes_from_xq_core_hash() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hash = root.join("crates/core/src/hash.rs");
    // The constants of the hashes xq_core::hash implements (SplitMix64's increment and
    // finaliser, FNV-1a 64, the linear seed's multiplier) and of the ones people reach
    // for instead (FNV-1a 32, Knuth's MMIX LCG, MurmurHash3's finaliser).
    let constants = [
        "0x9e3779b97f4a7c15",
        "0xbf58476d1ce4e5b9",
        "0x94d049bb133111eb",
        "0xcbf29ce484222325",
        "0x100000001b3",
        "0x00000100000001b3",
        "1000003",
        "0x811c9dc5",
        "0x01000193",
        "6364136223846793005",
        "1442695040888963407",
        "0xff51afd7ed558ccd",
        "0xc4ceb9fe1a85ec53",
    ];
    // std's hashers promise no value across releases; a `RandomState` (random on
    // purpose) is no fixed hash and stays allowed.
    let hashers = ["DefaultHasher", "SipHasher"];
    let mut found = Vec::new();
    for file in source_files().iter().filter(|f| **f != hash) {
        let text = non_test_source(file);
        let rel = file.strip_prefix(root).unwrap().display().to_string();
        for literal in numeric_literals(&text) {
            if constants.contains(&literal.as_str()) {
                found.push(format!("{rel}: {literal}"));
            }
        }
        for h in hashers.iter().filter(|h| text.contains(*h)) {
            found.push(format!("{rel}: {h}"));
        }
    }
    assert!(
        found.is_empty(),
        "fixed hashes outside xq_core::hash (use its functions):\n{}",
        found.join("\n")
    );
}

#[test]
fn library_crates_print_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Where a library may still write to the terminal, and why.
    let allowed: &[(&str, &str)] = &[(
        "crates/eval/src/ucci/mcts_backend.rs",
        "the UCCI engine's last resort when its search fails: stderr is the engine \
         process's diagnostic channel (stdout is the protocol's)",
    )];
    let mut found = Vec::new();
    for (name, dir) in packages().iter().filter(|(n, _)| n != "xqzero") {
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for file in files {
            let rel = file.strip_prefix(root).unwrap().display().to_string();
            // A crate's own binaries print; its library does not.
            let binary = rel.contains("/src/bin/") || rel.ends_with("/src/main.rs");
            if binary || allowed.iter().any(|(path, _)| *path == rel) {
                continue;
            }
            let text = non_test_source(&file);
            for (i, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                if ["println!", "print!", "dbg!"]
                    .iter()
                    .any(|m| code.contains(m))
                {
                    found.push(format!("{name}: {rel}:{}: {code}", i + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "library code that prints (return it as data; the binaries print):\n{}",
        found.join("\n")
    );
}

/// Every text file of the repository that docs or code live in: Markdown, Rust, TOML,
/// shell, Python, YAML and the scripts (build outputs, `.venv` and hidden folders
/// left out).
fn text_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !(name.starts_with('.') || name == "target") {
                text_files(&path, out);
            }
        } else {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            let script = path.components().any(|c| c.as_os_str() == "scripts");
            if script || ["md", "rs", "toml", "sh", "py", "yaml", "yml", "txt"].contains(&ext) {
                out.push(path);
            }
        }
    }
}

#[test]
fn nothing_cites_a_path_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    text_files(root, &mut files);
    assert!(files.len() > 100, "too few files found: {}", files.len());
    // Spelled in pieces so that this file does not cite them itself.
    let outside = [concat!("..", "/shared"), concat!("/work", "/shared")];
    let mut found = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if outside.iter().any(|p| line.contains(p)) {
                let rel = file.strip_prefix(root).unwrap().display();
                found.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "paths outside the repository (cite the rules' articles or the source instead):\n{}",
        found.join("\n")
    );
}
