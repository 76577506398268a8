use std::path::Path;

use xq_data::Outcome;
use xq_run::events::{HoldoutEvent, HoldoutSplit};

use super::{records::chunk_meta, *};
use crate::{config::train::PretrainSection, progress::testing::Recorder};

/// An observer that drops everything.
fn quiet() -> SharedObserver {
    Recorder::new(false).1
}

fn tiny() -> TrainSection {
    crate::config::RunConfig::parse(
        r#"
        [train]
        batch_size = 16
        device = "cpu"
        threads = 1
        log_every = 0
        min_positions = 50
        checkpoint_every = 0
        event_every = 0
        [train.net]
        blocks = 1
        channels = 8
        history = 2
        value_channels = 2
        value_hidden = 8
        "#,
    )
    .unwrap()
    .train
}

#[test]
fn record_batches_get_the_pretrain_value_weight_and_self_play_batches_their_own() {
    let data = crate::config::RunConfig::parse(
        "[train]\nvalue_quiescence = 0.75\n[train.pretrain]\npgn = [\"x.pgn\"]\nsteps = 10\nvalue_weight = 0.25\n[selfplay.search]\nleaf_quiescence = 0.75\n",
    )
    .unwrap()
    .train
    .data;
    let weights = |policy, value, leaf| LossWeights {
        policy,
        value,
        leaf,
    };
    assert_eq!(loss_scales(&data, true), weights(1.0, 0.25, 0.0));
    assert_eq!(loss_scales(&data, false), weights(1.0, 1.0, 0.75));
    // Without a pretrain section (`xqz train --pgn`) records weigh the value by 1.
    let plain = tiny().data;
    assert_eq!(loss_scales(&plain, true), LossWeights::PLAIN);
    assert_eq!(loss_scales(&plain, false), LossWeights::PLAIN);
    // Self-play's own weights leave the records' weights as they were.
    for (keys, selfplay) in [
        ("selfplay_value_weight = 0", weights(1.0, 0.0, 0.0)),
        ("selfplay_policy_weight = 0", weights(0.0, 1.0, 0.0)),
    ] {
        let data = crate::config::RunConfig::parse(&format!(
            "[train]\n{keys}\n[train.pretrain]\npgn = [\"x.pgn\"]\nsteps = 10\nvalue_weight = 0.25\n"
        ))
        .unwrap()
        .train
        .data;
        assert_eq!(loss_scales(&data, false), selfplay, "{keys}");
        assert_eq!(loss_scales(&data, true), weights(1.0, 0.25, 0.0), "{keys}");
    }
}

/// The first `n` games of the master collection in a file of their own.
fn master_games(dir: &Path, n: usize) -> PathBuf {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/hu_ronghua_1391_iccs.pgn"
    ))
    .unwrap();
    let games: Vec<&str> = text.split("[Event ").skip(1).take(n).collect();
    let path = dir.join("masters.pgn");
    std::fs::write(&path, format!("[Event {}", games.join("[Event "))).unwrap();
    path
}

#[test]
fn pretraining_labels_records_without_a_result_and_ends_on_a_held_out_plateau() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path().join("run")).unwrap();
    let mut cfg = tiny();
    cfg.data.pretrain = Some(PretrainSection {
        pgn: vec![master_games(dir.path(), 40)],
        steps: 400,
        held_out_permille: 250,
        mix_every: 0,
        value_labels: ValueLabels {
            depth: 2,
            margin_cp: 180,
        },
        eval_every: 1,
        patience: 1,
        lr_drop: 0.5,
        value_weight: 1.0,
    });
    // A rate this high cannot improve the held-out loss every step.
    cfg.trainer.lr = 0.5;
    cfg.trainer.ema_decay = 0.0;
    cfg.trainer.warmup_steps = 0;
    let (recorder, obs) = Recorder::new(false);
    let mut session = TrainSession::open(&run, &cfg, &[], &obs).unwrap();
    // Paced: once pre-training ends there is no self-play data, and the call returns.
    let done = session
        .train(
            TrainTarget::Paced {
                max_steps: Some(400),
            },
            &AtomicBool::new(false),
        )
        .unwrap();
    assert_eq!(done.reason, StopReason::NeedData);
    let lines = recorder.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("value labels for 40 PGN games")),
        "{lines:?}"
    );
    let ended = lines
        .iter()
        .find(|l| l.contains("pre-training ends at step"))
        .unwrap_or_else(|| panic!("pre-training ran its 400 steps: {lines:?}"));
    let log = run.events().unwrap();
    let holdouts: Vec<&HoldoutEvent> = log
        .records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Holdout(h) => Some(h),
            _ => None,
        })
        .collect();
    assert!(!holdouts.is_empty(), "{ended}");
    for h in &holdouts {
        assert_eq!(h.split, HoldoutSplit::Records);
        assert!(h.value_loss.is_some_and(f64::is_finite), "{h:?}");
    }
    let end = holdouts.last().unwrap().step;
    assert!(end < 400 && session.step() == end, "{ended}");
}

#[test]
fn records_are_read_and_labelled_once_per_run_until_their_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path().join("run")).unwrap();
    let pgn = master_games(dir.path(), 6);
    let source = SupervisedSource {
        files: vec![pgn.clone()],
        held_out_permille: 0,
        labels: ValueLabels {
            depth: 1,
            margin_cp: 180,
        }
        .adjudicator(),
    };
    let loads = |run: &RunDir| {
        let (recorder, obs) = Recorder::new(false);
        let records = load_supervised(&source, run, &obs).unwrap();
        let read = recorder.lines().iter().any(|l| l.contains("PGN records"));
        (records.train.len(), read)
    };
    let (positions, read) = loads(&run);
    assert!(read);
    assert_eq!(loads(&run), (positions, false), "read again");
    // Another run directory reads afresh (its log gets its own warnings).
    let other = RunDir::open(dir.path().join("other")).unwrap();
    assert_eq!(loads(&other), (positions, true));
    assert_eq!(loads(&run), (positions, false), "each run keeps its own");
    // A changed file is read again.
    let fewer = master_games(&dir.path().join("other"), 3);
    std::fs::rename(fewer, &pgn).unwrap();
    let (changed, read) = loads(&run);
    assert!(read && changed < positions, "{changed} of {positions}");
}

#[test]
fn records_without_labels_have_no_held_out_value_loss() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path().join("run")).unwrap();
    let mut cfg = tiny();
    cfg.data.pretrain = Some(PretrainSection {
        pgn: vec![master_games(dir.path(), 20)],
        steps: 2,
        held_out_permille: 500,
        mix_every: 0,
        value_labels: ValueLabels {
            depth: 0,
            margin_cp: 180,
        },
        eval_every: 0,
        patience: 0,
        lr_drop: 1.0,
        value_weight: 1.0,
    });
    let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
    session
        .train(TrainTarget::Steps(2), &AtomicBool::new(false))
        .unwrap();
    assert_eq!(session.holdout().unwrap().value_loss, None);
}

/// One chunk of seeded random games (no MCTS: uniform visit targets over the legal
/// moves) in `RUN/data`, without value targets.
fn random_games(run: &RunDir, games: usize, seed: u64) -> usize {
    random_games_in(&run.data_dir(), games, seed, None)
}

/// The same, drawn, in `RUN/data/held-out`: the games a worker holds out.
fn held_out_games(run: &RunDir, games: usize, seed: u64) -> usize {
    random_games_in(
        &run.selfplay_held_out_dir(),
        games,
        seed,
        Some(Outcome::Draw),
    )
}

/// One chunk of `games` seeded random games of `result` in `dir`; returns its
/// records.
fn random_games_in(dir: &Path, games: usize, seed: u64, result: Option<Outcome>) -> usize {
    let mut rng = xq_core::hash::SplitMix64::new(seed);
    let mut next = |n: usize| rng.below(n as u64) as usize;
    let mut chunk = xq_data::Chunk::new(chunk_meta());
    for _ in 0..games {
        let start = xq_core::Position::startpos();
        let mut pos = start.clone();
        let mut moves = Vec::new();
        for _ in 0..40 {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[next(legal.len())];
            moves.push(m);
            pos.play_unchecked(m);
        }
        xq_data::supervised::add_game(&mut chunk, &start, &moves, result).unwrap();
    }
    xq_data::ChunkWriter::new(dir, "t")
        .unwrap()
        .write(&chunk)
        .unwrap();
    chunk.records.len()
}

#[test]
fn held_out_selfplay_games_are_evaluated_once_a_call_trains_and_none_is_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let mut cfg = tiny();
    cfg.data.samples_per_position = 0.5;
    let selfplay_holdouts = || -> Vec<HoldoutEvent> {
        run.events()
            .unwrap()
            .events()
            .filter_map(|e| match e {
                Event::Holdout(h) if h.split == HoldoutSplit::Selfplay => Some(h.clone()),
                _ => None,
            })
            .collect()
    };
    let p1 = random_games(&run, 2, 1) as u64;
    let stop = AtomicBool::new(false);
    let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
    let paced = TrainTarget::Paced { max_steps: None };
    // No held-out game yet (not even their directory): nothing to evaluate.
    let first = session.train(paced, &stop).unwrap();
    assert!(first.steps_taken > 0);
    assert!(selfplay_holdouts().is_empty());
    let held_out = held_out_games(&run, 2, 9) as u64;
    let p2 = random_games(&run, 2, 2) as u64;
    let second = session.train(paced, &stop).unwrap();
    assert!(second.steps_taken > 0);
    let h = selfplay_holdouts();
    assert_eq!(h.len(), 1, "one evaluation at the end of the call: {h:?}");
    assert_eq!((h[0].step, h[0].positions), (second.step, held_out));
    assert!(
        h[0].policy_loss.is_finite() && h[0].policy_loss > 0.0,
        "{h:?}"
    );
    assert!(h[0].value_loss.is_some_and(f64::is_finite), "{h:?}");
    // The replay window never saw them.
    assert_eq!((first.positions, second.positions), (p1, p1 + p2));
}

#[test]
fn the_self_play_rate_is_its_share_of_lr_annealed_by_the_runs_progress() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let mut cfg = tiny();
    cfg.trainer.warmup_steps = 0;
    cfg.trainer.lr = 0.1;
    cfg.data.event_every = 1;
    cfg.data.lr_anneal = crate::config::train::LrAnneal::Cosine;
    cfg.data.lr_anneal_final = 0.2;
    cfg.data.selfplay_lr_scale = 0.5;
    random_games(&run, 4, 1);
    let stop = AtomicBool::new(false);
    let step = train_until(&run, &cfg, Some(4), &Progress::steps(4), &stop, &quiet()).unwrap();
    assert_eq!(step, 4);
    let lrs: Vec<f64> = run
        .events()
        .unwrap()
        .events()
        .filter_map(|e| match e {
            Event::Train(t) => t.lr,
            _ => None,
        })
        .collect();
    // Step k (1-based) is taken k − 1 quarters of the way through.
    let want: Vec<f64> = (0..4)
        .map(|k| 0.1 * cfg.data.lr_factor(f64::from(k) / 4.0))
        .collect();
    assert_eq!(lrs.len(), 4, "{lrs:?}");
    assert!(
        lrs.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12),
        "{lrs:?} {want:?}"
    );
    // The first step at half of `lr`, the last above half of its final share.
    assert!((lrs[0] - 0.05).abs() < 1e-12, "{lrs:?}");
    assert!(lrs[3] < lrs[0] && lrs[3] > 0.05 * cfg.data.lr_anneal_final);
}

#[test]
fn max_reuse_caps_the_self_play_window_at_its_share_of_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let mut cfg = tiny();
    cfg.data.samples_per_position = 0.5;
    cfg.data.max_reuse = Some(1.0);
    let positions = random_games(&run, 4, 1) as u64;
    let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
    let p = session
        .train(
            TrainTarget::Paced { max_steps: None },
            &AtomicBool::new(false),
        )
        .unwrap();
    let cap = xq_data::ReuseCap::new(0.5, 1.0).unwrap();
    assert!(p.steps_taken > 0);
    assert_eq!(p.positions, positions);
    assert_eq!(p.window, cap.size(positions));
    assert!(p.window < positions, "{} of {positions}", p.window);
}

#[test]
fn train_until_stops_at_the_step_limit_and_the_next_call_continues() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    random_games(&run, 4, 1);
    let stop = AtomicBool::new(false);
    let cfg = tiny();
    assert_eq!(current_step(&run).unwrap(), 0);
    assert_eq!(
        train_until(&run, &cfg, Some(3), &Progress::constant(), &stop, &quiet()).unwrap(),
        3
    );
    assert_eq!(current_step(&run).unwrap(), 3);
    assert_eq!(
        train_until(&run, &cfg, Some(5), &Progress::constant(), &stop, &quiet()).unwrap(),
        5
    );
    // A raised stop flag returns at once, keeping the step count.
    stop.store(true, Ordering::Relaxed);
    assert_eq!(
        train_until(&run, &cfg, None, &Progress::constant(), &stop, &quiet()).unwrap(),
        5
    );
}

/// The sync loop opens a session a phase. `refresh_every` counts from the step the
/// window was adopted, in whichever session: phases of fewer steps than it still
/// train on new data (counted from each session's start, such phases trained on
/// their first window for the rest of the run).
#[test]
fn phases_shorter_than_refresh_every_still_adopt_new_data() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let mut cfg = tiny();
    cfg.data.samples_per_position = 0.5;
    cfg.data.event_every = 1;
    cfg.data.refresh_every = 4;
    let stop = AtomicBool::new(false);
    let mut written = 0;
    let mut phases = Vec::new();
    for seed in 1..=8 {
        written += random_games(&run, 2, seed) as u64;
        let before = current_step(&run).unwrap();
        let after = train_until(&run, &cfg, None, &Progress::constant(), &stop, &quiet()).unwrap();
        phases.push(after - before);
    }
    assert!(
        phases.iter().all(|&n| n > 0 && n < cfg.data.refresh_every),
        "steps a phase: {phases:?}"
    );
    let windows: Vec<u64> = run
        .events()
        .unwrap()
        .events()
        .filter_map(|e| match e {
            Event::Train(t) => Some(t.window),
            _ => None,
        })
        .collect();
    let (first, last) = (windows[0], *windows.last().unwrap());
    // The last adoption came at most `refresh_every` steps (two phases' data) ago.
    assert!(
        last > first && last * 2 >= written,
        "windows {windows:?} of {written} positions"
    );
}

#[test]
fn a_session_returns_when_the_pacing_needs_data_and_continues_when_it_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let mut cfg = tiny();
    cfg.data.samples_per_position = 0.5;
    let p1 = random_games(&run, 2, 1) as u64;
    let stop = AtomicBool::new(false);
    let mut s = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
    let a = s
        .train(TrainTarget::Paced { max_steps: None }, &stop)
        .unwrap();
    assert_eq!(a.reason, StopReason::NeedData);
    assert_eq!(a.step, p1 / 2 / 16);
    assert_eq!(a.selfplay_samples, a.step * 16);
    assert_eq!(a.positions, p1);
    let p2 = random_games(&run, 2, 2) as u64;
    let b = s
        .train(TrainTarget::Paced { max_steps: None }, &stop)
        .unwrap();
    assert_eq!(b.step, (p1 + p2) / 2 / 16);
    assert_eq!(
        b.checkpoint,
        Some(
            run.checkpoints_dir()
                .join(format!("ckpt-{:010}.json", b.step))
        )
    );
    // train_until's cheap look agrees: no step until more data arrives.
    drop(s);
    assert!(!may_train(&run, &cfg, None).unwrap());
    assert_eq!(
        train_until(&run, &cfg, None, &Progress::constant(), &stop, &quiet()).unwrap(),
        b.step
    );
    random_games(&run, 2, 3);
    assert!(may_train(&run, &cfg, None).unwrap());
    assert!(!may_train(&run, &cfg, Some(b.step)).unwrap());
    assert!(
        train_until(&run, &cfg, None, &Progress::constant(), &stop, &quiet()).unwrap() > b.step
    );
}

/// The first 30 master games, written to `dir/few.pgn`: a pre-training set that takes
/// a few steps.
fn few_master_games(dir: &Path) -> std::path::PathBuf {
    let master = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/hu_ronghua_1391_iccs.pgn"
    ))
    .unwrap();
    let cut = master.match_indices("[Event").nth(30).unwrap().0;
    let pgn = dir.join("few.pgn");
    std::fs::write(&pgn, &master[..cut]).unwrap();
    pgn
}

#[test]
fn record_steps_are_mixed_in_after_pretraining_without_counting_against_the_pacing() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let pgn = few_master_games(dir.path());
    let mut cfg = tiny();
    cfg.data.samples_per_position = 0.5;
    cfg.data.event_every = 8;
    cfg.data.pretrain = Some(PretrainSection {
        pgn: vec![pgn],
        steps: 4,
        held_out_permille: 0,
        mix_every: 3,
        value_labels: ValueLabels::default(),
        eval_every: 0,
        patience: 0,
        lr_drop: 1.0,
        value_weight: 1.0,
    });
    let positions = random_games(&run, 2, 1) as u64;
    let selfplay_steps = positions / 2 / 16;
    let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
    let stop = AtomicBool::new(false);
    let p = session
        .train(TrainTarget::Paced { max_steps: None }, &stop)
        .unwrap();
    assert_eq!(p.reason, StopReason::NeedData);
    // Steps 1-4 pre-train; after that every third step (6, 9, …) is on records.
    let record_steps = |step: u64| (step / 3).saturating_sub(1);
    assert_eq!(p.selfplay_samples, selfplay_steps * 16);
    assert_eq!(
        p.step - 4 - record_steps(p.step),
        selfplay_steps,
        "step {}",
        p.step
    );
    assert!(record_steps(p.step) >= 1, "no record step was mixed in");
    // The first event after a new session (the sync loop opens one a phase) counts
    // the record steps of its whole interval, the cut session's included.
    assert!(
        p.step < 8,
        "the first session must end inside the first interval"
    );
    drop(session);
    random_games(&run, 4, 2);
    let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
    session
        .train(TrainTarget::Paced { max_steps: None }, &stop)
        .unwrap();
    let events: Vec<(u64, u64)> = run
        .events()
        .unwrap()
        .events()
        .filter_map(|e| match e {
            Event::Train(t) if t.phase == TrainPhase::Selfplay => Some((t.step, t.record_steps)),
            _ => None,
        })
        .collect();
    let last = events.last().unwrap().0;
    assert!(
        events.iter().any(|(step, _)| *step > p.step),
        "no event after the resume at step {}: {events:?}",
        p.step
    );
    assert_eq!(
        events.iter().map(|(_, n)| n).sum::<u64>(),
        record_steps(last),
        "{events:?}"
    );
}

/// `[train] policy_anchor`: the anchor is the network pre-training left, written once
/// to the run directory and kept by a resumed session, and its pull changes what the
/// self-play steps train.
#[test]
fn the_policy_anchor_is_the_pretrained_network_kept_across_sessions() {
    let train = |anchor: f64| {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let pgn = few_master_games(dir.path());
        let mut cfg = tiny();
        cfg.data.samples_per_position = 0.5;
        cfg.data.policy_anchor = anchor;
        cfg.data.pretrain = Some(PretrainSection {
            pgn: vec![pgn],
            steps: 4,
            held_out_permille: 0,
            mix_every: 0,
            value_labels: ValueLabels::default(),
            eval_every: 0,
            patience: 0,
            lr_drop: 1.0,
            value_weight: 1.0,
        });
        random_games(&run, 2, 1);
        let stop = AtomicBool::new(false);
        let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
        session
            .train(TrainTarget::Paced { max_steps: None }, &stop)
            .unwrap();
        let file = dir.path().join(POLICY_ANCHOR_FILE);
        let first = std::fs::read(&file).ok();
        drop(session);
        random_games(&run, 4, 2);
        let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
        session
            .train(TrainTarget::Paced { max_steps: None }, &stop)
            .unwrap();
        assert_eq!(
            std::fs::read(&file).ok(),
            first,
            "the anchor changed on resume"
        );
        let weights: Vec<Vec<f32>> = session
            .trainer
            .weights()
            .into_iter()
            .map(|(_, t)| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap())
            .collect();
        (first.is_some(), weights)
    };
    let (with_file, anchored) = train(1.0);
    assert!(with_file, "no anchor file");
    let (without_file, free) = train(0.0);
    assert!(!without_file);
    // Training is deterministic, so a difference below is the anchor's.
    assert_eq!(free, train(0.0).1, "training is not deterministic");
    assert_ne!(anchored, free, "the anchor's pull changed nothing");
}

#[test]
fn the_observer_sees_every_step_and_where_the_pacing_ends() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let mut cfg = tiny();
    cfg.data.samples_per_position = 0.5;
    cfg.trainer.log_every = 2;
    let p = random_games(&run, 2, 1) as u64;
    let stop = AtomicBool::new(false);
    let (recorder, obs) = Recorder::new(false);
    let step = train_until(&run, &cfg, None, &Progress::constant(), &stop, &obs).unwrap();
    assert_eq!(step, p / 2 / 16);
    let seen = recorder.steps.lock().unwrap().clone();
    assert_eq!(
        seen.iter().map(|v| v.step).collect::<Vec<_>>(),
        (1..=step).collect::<Vec<_>>()
    );
    assert!(seen.iter().all(|v| !v.supervised && v.end == Some(step)));
    assert_eq!(seen.last().unwrap().samples, step * 16);
    // The trainer's logging intervals end every `log_every` steps.
    assert!(
        seen.iter()
            .all(|v| v.logged.is_some() == v.step.is_multiple_of(2)),
        "{seen:?}"
    );
    // One task, begun at the first step and ended with the session.
    let lines = recorder.lines();
    assert_eq!(lines.first().unwrap(), "begin Train");
    assert_eq!(lines.last().unwrap(), "end Train");
    // A step limit bounds the stretch too.
    random_games(&run, 4, 2);
    let (recorder, obs) = Recorder::new(false);
    let limit = step + 2;
    train_until(&run, &cfg, Some(limit), &Progress::constant(), &stop, &obs).unwrap();
    assert!(
        recorder
            .steps
            .lock()
            .unwrap()
            .iter()
            .all(|v| v.end == Some(limit))
    );
}

#[test]
fn a_resumed_session_says_where_it_resumed_and_warnings_go_to_the_observer() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let cfg = tiny();
    random_games(&run, 4, 1);
    let stop = AtomicBool::new(false);
    train_until(&run, &cfg, Some(2), &Progress::constant(), &stop, &quiet()).unwrap();
    std::fs::write(run.data_dir().join("bad-00000001.xqc"), b"not a chunk").unwrap();
    let (recorder, obs) = Recorder::new(false);
    train_until(&run, &cfg, Some(3), &Progress::constant(), &stop, &obs).unwrap();
    let lines = recorder.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("log resumed ") && l.ends_with(" at step 2")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("warn ") && l.contains("bad-00000001.xqc")),
        "{lines:?}"
    );
}

#[test]
fn the_concurrent_phase_keeps_one_session_and_trains_as_data_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let mut cfg = tiny();
    cfg.data.samples_per_position = 0.5;
    let stop = AtomicBool::new(false);
    let (recorder, obs) = Recorder::new(false);
    let steps = || -> Vec<u64> {
        recorder
            .steps
            .lock()
            .unwrap()
            .iter()
            .map(|v| v.step)
            .collect()
    };
    let wait_for = |n: u64| {
        let t = Instant::now();
        while steps().last().copied().unwrap_or(0) < n {
            assert!(t.elapsed() < Duration::from_secs(60), "no step {n}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let step = std::thread::scope(|scope| {
        let h = scope.spawn(|| {
            train_concurrently(
                &run,
                &cfg,
                None,
                &Progress::constant(),
                &stop,
                Duration::from_millis(50),
                &obs,
            )
        });
        // No data yet: it waits without opening a trainer.
        std::thread::sleep(Duration::from_millis(300));
        assert!(steps().is_empty());
        let p1 = random_games(&run, 2, 1) as u64;
        wait_for(p1 / 2 / 16);
        let p2 = random_games(&run, 2, 2) as u64;
        wait_for((p1 + p2) / 2 / 16);
        stop.store(true, Ordering::SeqCst);
        h.join().unwrap().unwrap()
    });
    // Every step seen once, in order: one session (and one task) for the phase, and a
    // checkpoint at its end.
    assert_eq!(steps(), (1..=step).collect::<Vec<_>>());
    let tasks = recorder.lines();
    let begun = tasks.iter().filter(|l| *l == "begin Train").count();
    assert_eq!(begun, 1, "{tasks:?}");
    assert_eq!(current_step(&run).unwrap(), step);
    // With a step limit it returns at the limit, from the same checkpoint.
    random_games(&run, 8, 3);
    let limit = step + 3;
    let stop = AtomicBool::new(false);
    let end = train_concurrently(
        &run,
        &cfg,
        Some(limit),
        &Progress::constant(),
        &stop,
        Duration::from_millis(50),
        &quiet(),
    )
    .unwrap();
    assert_eq!(end, limit);
    assert_eq!(current_step(&run).unwrap(), limit);
}

#[test]
fn the_concurrent_trainer_saves_and_evaluates_on_schedule_not_at_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path()).unwrap();
    let mut cfg = tiny();
    cfg.data.samples_per_position = 0.5;
    cfg.trainer.checkpoint_every = 4;
    cfg.trainer.keep_checkpoints = 1000;
    cfg.data.holdout_every = 1000;
    held_out_games(&run, 2, 9);
    let stop = AtomicBool::new(false);
    let saved = || -> Vec<u64> {
        xq_train::checkpoint::list_checkpoints(&run.checkpoints_dir())
            .unwrap()
            .into_iter()
            .map(|(s, _)| s)
            .collect()
    };
    let (recorder, obs) = Recorder::new(false);
    let last_step = || recorder.steps.lock().unwrap().last().map_or(0, |v| v.step);
    let (step, mid_phase, caught_up) = std::thread::scope(|scope| {
        let h = scope.spawn(|| {
            train_concurrently(
                &run,
                &cfg,
                None,
                &Progress::constant(),
                &stop,
                Duration::from_millis(20),
                &obs,
            )
        });
        // Many calls, each ending when the data runs out: a few games at a time. (No
        // assertion before `stop`: a panic here would leave the trainer running.)
        let mut positions = 0;
        let mut caught_up = true;
        for seed in 0..4 {
            positions += random_games(&run, 2, 10 + seed) as u64;
            let t = Instant::now();
            while last_step() < positions / 2 / 16 && t.elapsed() < Duration::from_secs(60) {
                std::thread::sleep(Duration::from_millis(10));
            }
            caught_up &= last_step() >= positions / 2 / 16;
            std::thread::sleep(Duration::from_millis(60));
        }
        let mid_phase = saved();
        stop.store(true, Ordering::SeqCst);
        (h.join().unwrap().unwrap(), mid_phase, caught_up)
    });
    assert!(caught_up, "the trainer did not keep up with the data");
    // Mid-phase: checkpoints only at multiples of checkpoint_every.
    assert!(mid_phase.iter().all(|s| s % 4 == 0), "{mid_phase:?}");
    let saved = saved();
    assert!(
        saved.len() as u64 <= step / 4 + 1,
        "{saved:?} by step {step}"
    );
    assert_eq!(saved.last(), Some(&step), "the end of the phase saves");
    let holdouts = run
        .events()
        .unwrap()
        .events()
        .filter(|e| matches!(e, Event::Holdout(h) if h.split == HoldoutSplit::Selfplay))
        .count();
    assert_eq!(holdouts, 0, "held-out looks only every holdout_every steps");
}
