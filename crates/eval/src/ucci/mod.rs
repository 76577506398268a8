//! The UCCI protocol: a client for external engines and the engine xqzero exports.

pub mod baseline;
pub mod client;
pub mod engine;
pub mod mcts_backend;
pub mod protocol;
