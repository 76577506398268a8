//! Exported player directories, read side: the files `xqz export` (xq-pipeline's
//! `export`) writes and what `xqz ucci --player DIR` reads back. The network itself is
//! loaded through the process's network backend ([`xq_nn::backend`]).

use std::{
    fs,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::{
    net::{NetError, NetSettings},
    ucci::mcts_backend::MctsBackend,
};

/// The launcher's file name.
pub const LAUNCHER: &str = "xqzero-engine";
/// The player configuration's file name.
pub const ENGINE_TOML: &str = "engine.toml";
/// The weights' file name.
pub const NETWORK_WEIGHTS: &str = "network.safetensors";
/// The network sidecar's file name.
pub const NETWORK_META: &str = "network.json";
/// The copied binary's file name.
pub const BINARY: &str = "xqz";

/// `engine.toml`: what the launcher's `xqz ucci --player DIR` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerConfig {
    /// The engine's `id name`.
    pub name: String,
    /// The network's sidecar, relative to the player directory.
    pub network: String,
    /// Search settings (defaults for anything left out).
    #[serde(default)]
    pub search: NetSettings,
    /// Where the network came from (informational).
    #[serde(default)]
    pub source: Source,
}

/// The origin of an exported network.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Source {
    pub run: String,
    pub checkpoint: String,
    pub step: u64,
}

/// What can go wrong loading a player directory.
#[derive(Debug, thiserror::Error)]
pub enum PlayerDirError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("bad player configuration {path}: {why}")]
    Config { path: PathBuf, why: String },
    #[error("{0}")]
    Net(#[from] NetError),
}

/// Reads a player directory's `engine.toml`.
///
/// # Errors
/// [`PlayerDirError::Config`] naming the problem.
pub fn load_player_config(dir: &Path) -> Result<PlayerConfig, PlayerDirError> {
    let path = dir.join(ENGINE_TOML);
    let text = fs::read_to_string(&path).map_err(|source| PlayerDirError::Io {
        path: path.clone(),
        source,
    })?;
    let config: PlayerConfig = toml::from_str(&text).map_err(|e| PlayerDirError::Config {
        path: path.clone(),
        why: e.to_string().trim().replace('\n', " "),
    })?;
    config
        .search
        .validate()
        .map_err(|e| PlayerDirError::Config {
            path: path.clone(),
            why: e.to_string(),
        })?;
    Ok(config)
}

/// The UCCI backend of a player directory: its configuration and network.
///
/// # Errors
/// A bad `engine.toml` or a network that cannot be loaded.
pub fn load_player_backend(dir: &Path) -> Result<MctsBackend, PlayerDirError> {
    let config = load_player_config(dir)?;
    let network = dir.join(&config.network);
    Ok(MctsBackend::from_checkpoint(
        &network,
        config.search,
        config.name,
    )?)
}
