//! The trainer consumes xq-data's batches as they are: supervised batches from the game
//! records in tests/data train without reshaping and the loss falls.

use xq_data::supervised::add_game;
use xq_data::{BatchConfig, Chunk, ChunkMeta, Window, assemble, read_pgn};
use xq_train::{DeviceChoice, HostBatch, NetConfig, TrainConfig, Trainer};

#[test]
fn supervised_batches_from_game_records_train_and_the_loss_falls() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/hu_ronghua_1391_iccs.pgn"
    ))
    .unwrap();
    let mut chunk = Chunk::new(ChunkMeta {
        encoding_version: xq_nn::encode::ENCODING_VERSION,
        policy_index_version: xq_nn::policy::POLICY_INDEX_VERSION,
        creator: "xq-train test".into(),
        seed: 0,
    });
    for game in read_pgn(&text).into_iter().filter_map(Result::ok).take(10) {
        add_game(&mut chunk, &game.start, &game.moves, game.result).unwrap();
    }
    let window = Window::from_chunk("hu", chunk);
    assert!(window.len() > 300, "{} positions", window.len());

    let cfg = TrainConfig {
        net: NetConfig {
            blocks: 2,
            channels: 16,
            history: 2,
            global_pool: true,
            value_channels: 2,
            value_hidden: 16,
        },
        lr: 0.05,
        warmup_steps: 2,
        device: DeviceChoice::Cpu,
        threads: 1,
        log_every: 0,
        ..TrainConfig::default()
    };
    let dir = std::env::temp_dir().join(format!("xq-train-test-data-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut t = Trainer::new(&dir, cfg.clone()).unwrap();
    let bcfg = BatchConfig {
        batch_size: 32,
        encoder: cfg.net.encoder(),
        mirror: true,
        seed: 3,
        value: xq_data::ValueTarget::RESULT,
        leaf_wdl: None,
    };
    let mut batch = xq_data::Batch::new(bcfg.batch_size, &bcfg.encoder);
    // A small fixed pool of batches, revisited, so 30 steps are enough to see learning.
    let mut losses = Vec::new();
    for step in 0..30u64 {
        assemble(&window, &bcfg, step % 4, &mut batch).unwrap();
        let host = HostBatch::from_data(&batch).unwrap();
        assert_eq!(host.planes().unwrap(), cfg.net.input_planes());
        losses.push(t.step(&host).unwrap().total_loss);
    }
    let first: f64 = losses[..4].iter().sum::<f64>() / 4.0;
    let last: f64 = losses[26..].iter().sum::<f64>() / 4.0;
    eprintln!("loss {first:.3} -> {last:.3}");
    assert!(last < 0.8 * first, "loss {first:.3} -> {last:.3}");
    std::fs::remove_dir_all(&dir).unwrap();
}
