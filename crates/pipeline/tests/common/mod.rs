//! Fixtures shared by this crate's integration tests (and the root package's
//! `tests/it/main.rs`, which includes this file by path).
#![allow(dead_code)]

use xq_train::{DeviceChoice, NetConfig, TrainConfig};

/// A 1 × 8 network with two history steps on the CPU, one thread: the smallest
/// trainer that exercises every part of a checkpoint.
pub fn tiny_train_config(seed: u64) -> TrainConfig {
    TrainConfig {
        net: NetConfig {
            blocks: 1,
            channels: 8,
            history: 2,
            global_pool: false,
            value_channels: 1,
            value_hidden: 8,
        },
        device: DeviceChoice::Cpu,
        threads: 1,
        seed,
        ..TrainConfig::default()
    }
}
