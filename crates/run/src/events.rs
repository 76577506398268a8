//! The run's event log, `events.jsonl`: one typed [`Event`] a line, tagged by `kind`,
//! shared by every writer (self-play, trainer, gatekeeper, rating, export) and every
//! reader (`xqz report`, the run summary).
//!
//! Each line is a JSON object `{"time": UNIX_SECONDS, "kind": KIND, ...fields}`,
//! appended with one `write` of the whole line so that concurrent writers never
//! interleave. Readers are tolerant, because a log is most wanted when something went
//! wrong: a line that is not a JSON object (a write torn by a full disk or a kill) is
//! unreadable and counted, a line of a known kind without its key fields is counted as
//! incomplete, and kinds this version does not know are passed over (a newer writer).

use std::{collections::BTreeMap, path::PathBuf};

use serde::{Deserialize, Serialize};
use xq_rating::summary::MatchSummary;

/// One line of `events.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Unix seconds when it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<u64>,
    #[serde(flatten)]
    pub event: Event,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// A self-play worker's counters (cumulative: the latest of a worker holds its
    /// totals).
    Selfplay(SelfplayEvent),
    /// The trainer's means over the last `event_every` steps.
    Train(TrainEvent),
    /// The EMA network's losses on positions it never trains on.
    Holdout(HoldoutEvent),
    /// A network was published for gating.
    Candidate { model: String, step: u64 },
    /// A gating decision.
    Gate(GateEvent),
    /// A candidate became the accepted network.
    Promote {
        model: String,
        #[serde(default)]
        step: u64,
        /// The gating result that promoted it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<serde_json::Value>,
    },
    /// A network was exported as a UCCI player.
    Export {
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        step: Option<u64>,
        /// The player directory (relative paths are relative to the run directory).
        #[serde(alias = "out", alias = "dir", alias = "player")]
        path: PathBuf,
    },
    /// A match of a network against a rating opponent.
    Rating(RatingEvent),
    /// A round robin at the end of a run that chose the exported player.
    Gauntlet(GauntletEvent),
    /// Something failed without stopping the run: a file skipped or repaired, a
    /// network not exported. The typed fields (absent in logs of earlier versions) let
    /// `xqz report` count warnings by what they were about.
    Warning {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        what: Option<WarningWhat>,
        /// The file concerned, relative to the run directory when it lies inside it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<WarningAction>,
    },
}

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningWhat {
    /// A self-play data chunk (`data/*.xqc`) that is corrupt or truncated.
    Chunk,
    /// Games of a PGN file that could not be read.
    PgnGame,
    /// A line of `events.jsonl` torn by a full disk or a kill.
    Events,
    /// A checkpoint's saved state (data cursor, replay window) that cannot be used.
    Checkpoint,
    /// A TensorBoard event file that cannot be written.
    Tensorboard,
    /// A network that could not be exported or rated.
    Model,
    /// Self-play in which one colour wins far less than the other: the run has learnt
    /// the colour, not the game.
    ColourBalance,
    /// A kind a newer version wrote.
    #[serde(other)]
    Other,
}

impl WarningWhat {
    /// The name written in `events.jsonl`, also the label `xqz report` counts under.
    pub const fn as_str(self) -> &'static str {
        match self {
            WarningWhat::Chunk => "chunk",
            WarningWhat::PgnGame => "pgn_game",
            WarningWhat::Events => "events",
            WarningWhat::Checkpoint => "checkpoint",
            WarningWhat::Tensorboard => "tensorboard",
            WarningWhat::Model => "model",
            WarningWhat::ColourBalance => "colour_balance",
            WarningWhat::Other => "other",
        }
    }
}

/// What the run did about a warning's subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningAction {
    /// Left out (a chunk, a game); the run goes on without it.
    Skipped,
    /// Mended in place (a torn line ended so the next event starts on its own).
    Repaired,
    /// Not used; the run starts that part afresh (a saved cursor or window).
    Ignored,
    /// A side activity stopped for the rest of the process (TensorBoard logging).
    Stopped,
    /// Deleted: a temporary file left by a write that a kill cut short.
    Removed,
    /// An action a newer version wrote.
    #[serde(other)]
    Other,
}

impl Event {
    /// A warning about one file (or a part of one) that the run skipped or repaired.
    pub fn file_warning(
        what: WarningWhat,
        path: impl Into<PathBuf>,
        action: WarningAction,
        message: impl Into<String>,
    ) -> Event {
        Event::Warning {
            model: None,
            message: message.into(),
            what: Some(what),
            path: Some(path.into()),
            action: Some(action),
        }
    }
}

impl Event {
    /// The `kind` tag of this event.
    pub const fn kind(&self) -> &'static str {
        match self {
            Event::Selfplay(_) => "selfplay",
            Event::Train(_) => "train",
            Event::Holdout(_) => "holdout",
            Event::Candidate { .. } => "candidate",
            Event::Gate(_) => "gate",
            Event::Promote { .. } => "promote",
            Event::Export { .. } => "export",
            Event::Rating(_) => "rating",
            Event::Gauntlet(_) => "gauntlet",
            Event::Warning { .. } => "warning",
        }
    }
}

/// Every `kind` this version reads.
pub const KINDS: [&str; 10] = [
    "selfplay",
    "train",
    "holdout",
    "candidate",
    "gate",
    "promote",
    "export",
    "rating",
    "gauntlet",
    "warning",
];

/// A self-play worker's counters since it started.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SelfplayEvent {
    pub worker: String,
    pub seconds: f64,
    pub games: u64,
    pub positions: u64,
    pub records: u64,
    /// Plies per game (`avg_length` in logs of earlier versions).
    #[serde(alias = "avg_length")]
    pub average_length: f64,
    pub red_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
    pub resignations: u64,
    pub games_per_second: f64,
    pub positions_per_second: f64,
    /// Positions per evaluator call (`avg_batch` in logs of earlier versions).
    #[serde(alias = "avg_batch")]
    pub average_batch: f64,
    pub cache_hit_rate: f64,
    /// Share of the worker's wall time since it started spent inside the evaluator.
    pub evaluator_busy: f64,
    /// The same share over the stretch since the worker's previous event (the whole
    /// session for its first): what the evaluator does now, not averaged with a start
    /// that may have been different (a first generation, a warm-up). Absent in logs of
    /// earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluator_busy_recent: Option<f64>,
    /// Positions the evaluator was asked for (network evaluations; cache hits are
    /// not), and per second. A move costs a search of many evaluations, so these, not
    /// `positions_per_second`, measure the evaluator's throughput. 0 in logs of earlier
    /// versions.
    #[serde(default)]
    pub evaluations: u64,
    #[serde(default)]
    pub evaluations_per_second: f64,
    pub no_resign_games: u64,
    pub would_resign: u64,
    pub resign_false_positives: u64,
    pub resign_false_positive_rate: f64,
    /// Of `positions`, those searched while soft resignation (`[selfplay] resign_soft`)
    /// held the game decided. 0 without it and in logs of earlier versions.
    pub decided_positions: u64,
    /// The resignation threshold new games started with at this event: the configured
    /// one, or the one calibrated from the played-out games. Absent in logs of earlier
    /// versions.
    pub resign_threshold: Option<f32>,
    pub model_swaps: u64,
    /// Of `games`, those held out of training (`[selfplay] held_out_permille`), whose
    /// chunks went to `data/held-out/`. 0 in logs of earlier versions.
    pub held_out_games: u64,
    /// Where the worker evaluates its networks: `cpu` or `cuda:N`. Absent in logs of
    /// earlier versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The backend and precision its networks run with, as `xq_nn::Inference` names
    /// them: `native-f32`, `torch-f32`, `torch-bf16`, `torch-cuda-f16`. With
    /// `XQZ_BACKEND=auto` on the CPU it is what the start-up measurement chose, which is
    /// why it is recorded: the same config runs at different speeds (and, in bf16, with
    /// slightly different numerics) on different machines. Absent in logs of earlier
    /// versions and before the worker's first network is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
}

/// Which data a training stretch used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrainPhase {
    /// Game records (pre-training).
    Supervised,
    /// Self-play chunks.
    #[default]
    Selfplay,
}

/// The trainer's interval means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainEvent {
    pub step: u64,
    #[serde(default)]
    pub samples: u64,
    #[serde(default)]
    pub policy_loss: Option<f64>,
    #[serde(default)]
    pub value_loss: Option<f64>,
    #[serde(default)]
    pub total_loss: Option<f64>,
    #[serde(default)]
    pub policy_accuracy: Option<f64>,
    #[serde(default)]
    pub value_accuracy: Option<f64>,
    #[serde(default)]
    pub lr: Option<f64>,
    #[serde(default)]
    pub grad_norm: Option<f64>,
    #[serde(default)]
    pub samples_per_second: Option<f64>,
    /// Positions in the replay window.
    #[serde(default)]
    pub window: u64,
    /// Share of the wall time spent waiting for batches.
    #[serde(default)]
    pub data_wait_share: Option<f64>,
    #[serde(default)]
    pub phase: TrainPhase,
    /// Steps since the previous `train` event that trained on record batches
    /// (`mix_every`), the pauses for self-play and a resume included (the means cover
    /// the steps since training last resumed). In logs before 80d518d each pause
    /// dropped the count of the interval's steps before it.
    #[serde(default)]
    pub record_steps: u64,
    /// Where the steps ran: `cpu` or `cuda:N`. Absent in logs of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Fields of newer writers, kept for readers that chart every number.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Which positions a held-out evaluation used: both splits are by game hash, so no
/// position of a held-out game is ever trained on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldoutSplit {
    /// The held-out games of the PGN records (`[train.pretrain] held_out_permille`).
    Records,
    /// The held-out self-play games (`[selfplay] held_out_permille`, `data/held-out/`).
    Selfplay,
    /// A split a newer version wrote.
    #[serde(other)]
    Other,
}

/// The EMA network's mean losses and top-1 move agreement on a held-out split: the
/// curve that shows memorisation, which the training losses cannot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldoutEvent {
    pub step: u64,
    pub split: HoldoutSplit,
    /// Positions evaluated.
    pub positions: u64,
    pub policy_loss: f64,
    /// `None` when no evaluated position has a value target.
    #[serde(default)]
    pub value_loss: Option<f64>,
    pub policy_top1: f64,
}

/// A gating decision: the candidate's match against the accepted network (no games
/// for the first network, which is accepted outright).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateEvent {
    pub candidate: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opponent: Option<String>,
    #[serde(default)]
    pub step: u64,
    pub accepted: bool,
    /// `first`, `sprt_h1`, `sprt_h0`, `threshold_met` or `threshold_missed`.
    #[serde(default)]
    pub reason: String,
    #[serde(flatten)]
    pub result: MatchSummary,
}

/// A rating match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatingEvent {
    pub model: String,
    pub opponent: String,
    #[serde(default)]
    pub step: Option<u64>,
    /// The final match of the run (not a short rating after a promotion).
    #[serde(default, rename = "final")]
    pub is_final: bool,
    #[serde(default)]
    pub visits: u32,
    /// Leaf quiescence weight of the network, in percent (0: plain AlphaZero search).
    #[serde(default)]
    pub quiescence: u8,
    #[serde(flatten)]
    pub result: MatchSummary,
}

/// What a round robin at the end of a run compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GauntletStage {
    /// Networks (the pre-trained one and the last accepted ones) at one leaf quiescence.
    Networks,
    /// One network at each leaf quiescence weight of `[rating] final_quiescence_choices`.
    Quiescence,
}

/// One player of a [`GauntletEvent`]: a network searched with a leaf quiescence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GauntletEntry {
    pub model: String,
    pub step: u64,
    /// Leaf quiescence weight, in percent.
    pub quiescence: u8,
    /// The network self-play started from (the end of pre-training).
    #[serde(default)]
    pub pretrained: bool,
    /// Points (a win 1, a draw ½) over `games` counted games.
    pub points: f64,
    pub games: u64,
}

/// The end-of-run round robin at the exported budget (`[rating] final_gauntlet_games`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GauntletEvent {
    pub stage: GauntletStage,
    /// Root visits of every player.
    pub visits: u32,
    pub entries: Vec<GauntletEntry>,
    /// Every pair's match, `a` and `b` named as in `entries` (`MODEL@qPCT`).
    pub matches: Vec<MatchSummary>,
    /// Index in `entries` of the player chosen: the most points, the newer network or
    /// the higher weight on a tie.
    pub winner: usize,
}

/// What a reader got out of `events.jsonl`.
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    pub records: Vec<Record>,
    /// 1-based numbers of lines that are not JSON objects (torn or garbled writes).
    pub unreadable: Vec<usize>,
    /// Lines of a known kind without their key fields, counted by kind.
    pub incomplete: BTreeMap<&'static str, usize>,
}

impl EventLog {
    /// Reads the text of an event log (see the module documentation).
    pub fn parse(text: &str) -> EventLog {
        let mut log = EventLog::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value = match serde_json::from_str::<serde_json::Value>(line) {
                Ok(v @ serde_json::Value::Object(_)) => v,
                _ => {
                    log.unreadable.push(i + 1);
                    continue;
                }
            };
            let kind = value
                .get("kind")
                .and_then(serde_json::Value::as_str)
                .and_then(|k| KINDS.iter().find(|known| **known == k).copied());
            match (serde_json::from_value::<Record>(value), kind) {
                (Ok(r), _) => log.records.push(r),
                (Err(_), Some(kind)) => *log.incomplete.entry(kind).or_default() += 1,
                (Err(_), None) => {}
            }
        }
        log
    }

    /// The events, in order.
    pub fn events(&self) -> impl DoubleEndedIterator<Item = &Event> {
        self.records.iter().map(|r| &r.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_through_a_line() {
        let events = [
            Event::Candidate {
                model: "s0000000100".into(),
                step: 100,
            },
            Event::file_warning(
                WarningWhat::Chunk,
                "data/w-1.xqc",
                WarningAction::Skipped,
                "truncated",
            ),
            Event::Gate(GateEvent {
                candidate: "s0000000200".into(),
                opponent: Some("s0000000100".into()),
                step: 200,
                accepted: false,
                reason: "sprt_h0".into(),
                result: MatchSummary {
                    games: 16,
                    wins: 3,
                    draws: 2,
                    losses: 11,
                    score: Some(0.25),
                    ..MatchSummary::default()
                },
            }),
        ];
        for event in events {
            let r = Record {
                time: Some(7),
                event,
            };
            let line = serde_json::to_string(&r).unwrap();
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(v["kind"], r.event.kind(), "{line}");
            assert_eq!(EventLog::parse(&line).records, [r]);
        }
    }

    #[test]
    fn a_selfplay_events_backend_round_trips_and_is_optional() {
        let event = Event::Selfplay(SelfplayEvent {
            worker: "w".into(),
            games: 3,
            device: Some("cpu".into()),
            backend: Some("torch-bf16".into()),
            ..SelfplayEvent::default()
        });
        let line = serde_json::to_string(&Record { time: None, event }).unwrap();
        assert!(line.contains(r#""backend":"torch-bf16""#), "{line}");
        let read = EventLog::parse(&line).records;
        let Event::Selfplay(back) = &read[0].event else {
            panic!("{line}")
        };
        assert_eq!(back.backend.as_deref(), Some("torch-bf16"));
        // Without one (an earlier version, no network yet) it is absent, and a line
        // without it reads as none.
        let none = Event::Selfplay(SelfplayEvent::default());
        let line = serde_json::to_string(&none).unwrap();
        assert!(!line.contains("backend"), "{line}");
        let old = r#"{"kind":"selfplay","worker":"w","games":2,"device":"cpu"}"#;
        let read = EventLog::parse(old).records;
        let Event::Selfplay(back) = &read[0].event else {
            panic!("{old}")
        };
        assert_eq!((back.games, back.backend.as_deref()), (2, None));
    }

    #[test]
    fn every_kind_is_read() {
        let one_of_each = [
            Event::Selfplay(SelfplayEvent::default()),
            Event::Train(TrainEvent {
                step: 1,
                samples: 0,
                policy_loss: None,
                value_loss: None,
                total_loss: None,
                policy_accuracy: None,
                value_accuracy: None,
                lr: None,
                grad_norm: None,
                samples_per_second: None,
                window: 0,
                data_wait_share: None,
                phase: TrainPhase::Selfplay,
                record_steps: 0,
                device: Some("cpu".into()),
                extra: BTreeMap::new(),
            }),
            Event::Holdout(HoldoutEvent {
                step: 1,
                split: HoldoutSplit::Records,
                positions: 10,
                policy_loss: 3.0,
                value_loss: None,
                policy_top1: 0.2,
            }),
            Event::Candidate {
                model: "m".into(),
                step: 1,
            },
            Event::Gate(GateEvent {
                candidate: "m".into(),
                opponent: None,
                step: 1,
                accepted: true,
                reason: "first".into(),
                result: MatchSummary::default(),
            }),
            Event::Promote {
                model: "m".into(),
                step: 1,
                details: None,
            },
            Event::Export {
                model: None,
                step: None,
                path: "players/m".into(),
            },
            Event::Rating(RatingEvent {
                model: "m".into(),
                opponent: "random".into(),
                step: None,
                is_final: false,
                visits: 1,
                quiescence: 0,
                result: MatchSummary::default(),
            }),
            Event::Gauntlet(GauntletEvent {
                stage: GauntletStage::Networks,
                visits: 800,
                entries: Vec::new(),
                matches: Vec::new(),
                winner: 0,
            }),
            Event::Warning {
                model: None,
                message: "w".into(),
                what: None,
                path: None,
                action: None,
            },
        ];
        let kinds: Vec<&str> = one_of_each.iter().map(Event::kind).collect();
        assert_eq!(kinds, KINDS, "KINDS lists every variant, in order");
        for event in one_of_each {
            let v = serde_json::to_value(&event).unwrap();
            assert_eq!(v["kind"], event.kind());
        }
    }

    #[test]
    fn torn_incomplete_and_unknown_lines_are_told_apart() {
        let text = "{\"time\":1,\"kind\":\"candidate\",\"model\":\"m\",\"step\":1}\n\
                    {\"time\":2,\"ki\n\
                    [1, 2]\n\
                    {\"kind\":\"rating\",\"score\":0.5}\n\
                    {\"kind\":\"from_the_future\",\"x\":1}\n";
        let log = EventLog::parse(text);
        assert_eq!(log.records.len(), 1);
        assert_eq!(log.unreadable, [2, 3]);
        assert_eq!(log.incomplete.get("rating"), Some(&1));
        assert_eq!(log.incomplete.len(), 1);
    }

    #[test]
    fn a_warning_of_an_earlier_version_or_of_an_unknown_what_is_still_read() {
        let text = "{\"kind\":\"warning\",\"message\":\"old\"}\n\
                    {\"kind\":\"warning\",\"message\":\"new\",\"what\":\"gpu\",\"action\":\"melted\"}\n";
        let log = EventLog::parse(text);
        let whats: Vec<_> = log
            .events()
            .map(|e| match e {
                Event::Warning { what, action, .. } => (*what, *action),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            whats,
            [
                (None, None),
                (Some(WarningWhat::Other), Some(WarningAction::Other))
            ]
        );
    }

    #[test]
    fn a_train_event_keeps_fields_it_does_not_name() {
        let line = r#"{"time":3,"kind":"train","step":10,"holdout_accuracy":0.4}"#;
        let log = EventLog::parse(line);
        let Event::Train(t) = &log.records[0].event else {
            panic!("{:?}", log.records)
        };
        assert_eq!(t.step, 10);
        assert_eq!(
            t.extra.get("holdout_accuracy"),
            Some(&serde_json::json!(0.4))
        );
    }
}
