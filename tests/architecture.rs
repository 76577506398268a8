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
        ("xq-train", &["xq-core", "xq-nn", "xq-data"]),
        // The CPU inference backend: reads checkpoints without libtorch.
        ("xq-native", &["xq-core", "xq-nn"]),
        // Never libtorch: networks are injected through xq_nn::backend.
        ("xq-eval", &["xq-core", "xq-nn", "xq-data", "xq-mcts"]),
    ];
    for (name, may) in allowed {
        let may: BTreeSet<String> = may.iter().map(|s| (*s).to_owned()).collect();
        let has = internal(name);
        assert!(has.is_subset(&may), "{name} depends on {:?}", &has - &may);
    }
    assert!(!closure(&graph, "xq-eval").contains("tch"));
    assert!(!closure(&graph, "xq-native").contains("tch"));
    // Every crate is in the table or above it.
    for name in graph.keys() {
        assert!(
            allowed.iter().any(|(n, _)| n == name)
                || ["xq-pipeline", "xqzero"].contains(&name.as_str()),
            "{name} is not placed in ARCHITECTURE.md's code map"
        );
    }
}
