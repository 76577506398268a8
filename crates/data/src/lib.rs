//! Training data for xqzero: the chunk file format, its atomic writer and validating
//! reader, the replay window over the newest chunks, batch assembly and prefetching,
//! a supervised source from PGN game records, and PGN itself: the one reader and the
//! one writer ([`PgnRecord`]) of the workspace. Also the TensorBoard scalar writer
//! every process of a run logs through ([`tensorboard`]), kept here so the trainer
//! gets it without depending on anything above this crate.
//!
//! # Example
//!
//! A self-play worker writes chunks; a trainer windows them and draws batches.
//!
//! ```
//! use std::sync::Arc;
//! use xq_core::{Move, Position};
//! use xq_data::*;
//!
//! let dir = std::env::temp_dir().join(format!("xq-data-doc-{}", std::process::id()));
//! let meta = ChunkMeta {
//!     encoding_version: xq_nn::encode::ENCODING_VERSION,
//!     policy_index_version: xq_nn::policy::POLICY_INDEX_VERSION,
//!     creator: "xqz selfplay 0.1 model=doc".into(),
//!     seed: 1,
//! };
//! let mut chunk = Chunk::new(meta);
//! let moves = vec![Move::from_iccs("h2e2")?, Move::from_iccs("h9g7")?];
//! // The root's visit counts become the policy target.
//! let visits = quantize_policy(&[(moves[0], 600.0), (Move::from_iccs("b2e2")?, 200.0)]);
//! let targets = [PlyTarget { ply: 0, policy: &visits, root_wdl: [0.4, 0.4, 0.2], weight: 1.0 }];
//! chunk.add_game_with_targets(Position::startpos(), moves, Some(Outcome::Draw), &targets)?;
//! ChunkWriter::new(&dir, "worker0")?.write(&chunk)?; // dir/worker0-00000000.xqc
//!
//! let mut loader = WindowLoader::new(&dir, WindowSize::Fixed(100_000));
//! let (window, report) = loader.refresh()?;
//! assert!(report.skipped.is_empty());
//! let window = Arc::new(window);
//! let cfg = BatchConfig { batch_size: 4, encoder: Default::default(), mirror: true, seed: 7, value: ValueTarget::RESULT, leaf_wdl: None };
//! let cursor = DataCursor::start(cfg.seed, &window);
//! let mut batches = Prefetcher::new(Arc::clone(&window), cfg, cursor, PrefetchConfig::default())?;
//! let batch = batches.next_batch()?;
//! assert_eq!(batch.inputs.shape(), &[4, cfg.encoder.planes(), 10, 9]);
//! batches.recycle(batch);
//! let saved = batches.cursor(); // goes into the checkpoint sidecar, with window.manifest()
//! assert_eq!(saved.step, 1);
//! # drop(batches);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The chunk format (version 1)
//!
//! A chunk file (`*.xqc`) is a fixed 56-byte header followed by a raw-DEFLATE
//! (RFC 1951) compressed payload. All integers are little-endian; `f32` is IEEE 754.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `89 58 51 43 0D 0A 1A 0A` (`\x89XQC\r\n\x1a\n`) |
//! | 8 | 2 | format version (`u16`, = 1) |
//! | 10 | 2 | compression (`u16`, 1 = raw DEFLATE) |
//! | 12 | 4 | encoding version of the producing net (`u32`, provenance) |
//! | 16 | 4 | policy-index version (`u32`, provenance) |
//! | 20 | 4 | number of games `G` (`u32`) |
//! | 24 | 4 | number of position records `R` (`u32`) |
//! | 28 | 8 | seed of the writer's RNG (`u64`) |
//! | 36 | 4 | uncompressed payload length (`u32`, at most 256 MiB) |
//! | 40 | 4 | compressed payload length `L` (`u32`); the file is exactly `56 + L` bytes |
//! | 44 | 4 | CRC-32 (IEEE) of the uncompressed payload |
//! | 48 | 4 | CRC-32 of the `L` compressed bytes (catches damage in DEFLATE padding bits, which decompression ignores) |
//! | 52 | 4 | CRC-32 of header bytes 0..52 |
//! | 56 | `L` | compressed payload |
//!
//! The payload, uncompressed:
//!
//! | size | field |
//! |---|---|
//! | 2 + n | creator: `u16` length `n`, then `n` bytes of UTF-8 (`xqz selfplay 0.1 model=...`) |
//! | | then `G` games, each: |
//! | 45 | start board, 90 nibbles: square `2k` (a0 = 0 … i9 = 89) in the low nibble of byte `k`, `2k+1` in the high; 0 empty, 1-7 Red General, Advisor, Elephant, Horse, Chariot, Cannon, Soldier; 9-15 the same for Black |
//! | 1 | side to move (0 Red, 1 Black) |
//! | 2 | plies since the last capture (`u16`) |
//! | 2 | move number (`u16`) |
//! | 2 + 2m | move count `m` (`u16`), then `m` moves (`u16`, `from + (to << 7)`, squares as above) |
//! | | then `R` records, each 27 + 4k bytes: |
//! | 4 | game index (`u32`, < `G`) |
//! | 2 | ply: the record's position is the game's start after its first `ply` moves |
//! | 1 | final result for the side to move: 0 win, 1 draw, 2 loss, 3 unknown (no value target) |
//! | 2 | plies from this position to the end of the game (`u16`) |
//! | 4 | weight (`f32`, finite, >= 0) |
//! | 12 | root value from the search, `[win, draw, loss]` (`3 × f32`; all 0 = no search) |
//! | 2 + 4k | policy: count `k >= 1` (`u16`), then `k` pairs of move (`u16`) and share (`u16`; relative, normalized by their sum) |
//!
//! Positions are stored as a game's start and its moves rather than as planes: the
//! history the encoder needs (previous positions, repetitions, the no-capture counter)
//! is replayed exactly, a record costs about 30 + 4k bytes before compression, and
//! the data does not depend on the input encoding or the policy index, which can change
//! without invalidating old data (their versions are kept for provenance).
//!
//! A reader accepts a file only if the magic, version, compression, header CRC, exact
//! length, compressed-data CRC, decompressed length, payload CRC and structure all
//! check out, and every game move and policy move is legal where it is played;
//! otherwise it returns a [`ChunkError`] and the window skips the file and lists it,
//! with the error, in its refresh report (the pipeline turns that into a warning). No
//! input makes the reader panic or allocate beyond the checked payload
//! length.

pub mod batch;
pub mod compact;
pub mod format;
pub mod io;
pub mod layout;
pub mod pgn;
pub mod prefetch;
pub mod record;
pub mod supervised;
pub mod tensorboard;
pub mod window;

pub use batch::{
    Batch, BatchConfig, BatchError, DataCursor, LeafWdl, Sample, ValueTarget, assemble,
    assemble_range, assemble_samples, draw_samples,
};
pub use compact::{CompactError, CompactReport};
pub use format::{ChunkError, FORMAT_VERSION, FileHeader, decode_chunk, encode_chunk};
pub use io::{
    ChunkFileError, ChunkWriter, WriterError, read_chunk, read_chunk_header, write_chunk_atomic,
};
pub use pgn::{PgnError, PgnGame, PgnRecord, read_pgn};
pub use prefetch::{PrefetchConfig, Prefetcher};
pub use record::{
    Chunk, ChunkMeta, GameRecord, NewRecord, Outcome, PlyTarget, PolicyEntry, PositionRecord,
    RecordError, Wdl, quantize_policy,
};
pub use supervised::{
    LoadError, SkippedGame, SplitConfig, SupervisedData, game_hash, games_to_chunks,
    load_pgn_files, read_pgn_files,
};
pub use window::{
    ManifestEntry, RefreshReport, ReuseCap, ReuseCapError, STALE_TEMPORARY, Window, WindowChunk,
    WindowLoader, WindowManifest, WindowSize,
};
