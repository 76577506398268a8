//! The crate boundaries ARCHITECTURE.md states, checked from the manifests: which
//! workspace crates each crate may depend on (directly or not), and that only xq-train
//! depends on `tch`.

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
        // Ratings and competitions on results alone: depends on nothing of ours, so
        // whatever only reads results builds without the rules, networks or search.
        ("xq-rating", &[]),
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
