//! A run's config file, parsed once into each crate's typed section: [`RunConfig`].
//!
//! `[run]`, `[gate]` and `[rating]` are this crate's ([`RunSection`], [`GateSection`],
//! [`RatingSection`]), `[selfplay]` is xq-selfplay's `SelfplayConfig`, and `[train]` is
//! split between xq-train's `TrainConfig` and the pipeline's data keys by the structs'
//! own field lists ([`train::TrainSection`]). Every function of the run gets the
//! section it needs, not the whole file.
//!
//! The structs refuse unknown keys (`deny_unknown_fields`), and every error says where
//! it is: the file, the line and the key path
//! (`config.toml:12: [train.net] unknown key "blocs"`,
//! `config.toml:3: train.net.blocks: invalid type: string "four", expected usize`).
//!
//! serde reads the tree through a deserializer of this module's own (`config/de.rs`)
//! rather than toml's, so that every error is a [`ConfigError`] placed at its key, also
//! inside the internally tagged enums (`[train.window]`) that serde reads from a buffer.

mod de;
pub mod train;

use std::{
    fmt,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use toml::{Spanned, de::DeValue};
use xq_eval::spec::PlayerSpec;
use xq_run::{RunDir, RunError};
use xq_selfplay::SelfplayConfig;

pub use self::de::{ConfigError, Node, Problem, deserialize, fields_of, parse, split_table};
use self::train::TrainSection;

/// Everything a run needs, validated: the whole config file, parsed once. Every
/// command that reads a run's config (`xqz run`, `selfplay`, `train`, `gate`) reads it
/// through this, so an unknown section or key is refused by all of them alike.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The file's text, which `xqz run` copies into the run directory.
    pub text: String,
    /// The directory the file's relative paths (`[train.pretrain] pgn`) resolve
    /// against: the config file's own. `xqz run` records it beside its copy, so that the
    /// copy resolves them the same way. None for text parsed without a file.
    pub base: Option<PathBuf>,
    /// The file it was read from (a command's log names it). None for text parsed
    /// without a file.
    pub file: Option<PathBuf>,
    pub run: RunSection,
    pub selfplay: SelfplayConfig,
    pub train: TrainSection,
    pub gate: GateSection,
    pub rating: RatingSection,
}

/// How the phases of `xqz run` share the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Sync,
    Concurrent,
}

/// The `[run]` section: the scheduler's budget and pace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Run directory when `--run` is not given (relative to the working directory).
    pub dir: Option<PathBuf>,
    /// Seeds self-play: each generation's seed is derived from it (`xqz run`'s
    /// `RunState::next_generation`).
    pub seed: u64,
    pub mode: Mode,
    /// Wall-time budget in minutes, counted across restarts (0 = none).
    pub budget_minutes: f64,
    /// Stop after this many self-play games (0 = no limit).
    pub max_games: u64,
    /// Stop after this many training steps (0 = no limit).
    pub max_steps: u64,
    /// Self-play games between training phases (sync mode).
    pub games_per_generation: u64,
    /// Minutes kept back from the budget for the final rating match.
    pub final_reserve_minutes: f64,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            dir: None,
            seed: 1,
            mode: Mode::Sync,
            budget_minutes: 25.0,
            max_games: 0,
            max_steps: 0,
            games_per_generation: 32,
            final_reserve_minutes: 4.0,
        }
    }
}

/// The `[gate]` section: the match of each candidate against the accepted network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GateSection {
    /// Most games of a gating match.
    pub games: usize,
    /// Stop early with a GSPRT on game pairs.
    pub sprt: bool,
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    /// Score needed when the SPRT is off or undecided at the game limit.
    pub threshold: f64,
    /// MCTS visits per move of both networks.
    pub visits: u32,
    /// Time control (`own` = the visits above).
    pub time_control: String,
    pub concurrency: usize,
    /// `builtin`, `start`, `random:N` or an openings file.
    pub openings: String,
    pub seed: u64,
}

impl Default for GateSection {
    fn default() -> Self {
        GateSection {
            games: 40,
            sprt: true,
            elo0: 0.0,
            elo1: 35.0,
            alpha: 0.1,
            beta: 0.1,
            threshold: 0.55,
            visits: 64,
            time_control: "own".into(),
            concurrency: 1,
            openings: "builtin".into(),
            seed: 1,
        }
    }
}

/// The `[rating]` section: short matches of each accepted network against fixed
/// baselines, and the final match of the best player.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RatingSection {
    /// Player specifications of the baselines (see `xqz match --help`).
    pub opponents: Vec<String>,
    /// Games against each baseline after each promotion (0 = no rating).
    pub games: usize,
    /// MCTS visits per move of the network in rating games.
    pub visits: u32,
    /// Baselines of the final match of the best player.
    pub final_opponents: Vec<String>,
    /// Games against each final baseline at the end of the run (0 = none).
    pub final_games: usize,
    /// MCTS visits per move of the final match and the default of every exported
    /// player (default: `visits`). The short ratings after each promotion use `visits`
    /// to keep the loop's time for self-play; the final figure is the player users get.
    pub final_visits: Option<u32>,
    /// Weight in percent of the quiescence search mixed into every leaf
    /// ([`xq_eval::tactics`]) in the final match and in every exported player; 0 (the
    /// default) is the plain AlphaZero search. Self-play has its own weight,
    /// `[selfplay.search] leaf_quiescence`.
    pub final_quiescence: u8,
    /// Games per pair of the end-of-run round robin at `final_visits` that chooses the
    /// exported player among the pre-trained network and the last three accepted ones
    /// (0 = off: the accepted network is the one exported and rated).
    pub final_gauntlet_games: usize,
    /// Leaf quiescence weights in percent among which the round robin's winner then
    /// chooses its own, in a second round robin of `final_gauntlet_games` a pair
    /// (empty = `final_quiescence`).
    pub final_quiescence_choices: Vec<u8>,
    pub time_control: String,
    pub concurrency: usize,
    pub openings: String,
    pub seed: u64,
}

impl Default for RatingSection {
    fn default() -> Self {
        RatingSection {
            opponents: vec!["random".into(), "greedy".into(), "alphabeta:depth=1".into()],
            games: 10,
            visits: 32,
            final_opponents: vec!["random".into(), "greedy".into()],
            final_games: 100,
            final_visits: None,
            final_quiescence: 0,
            final_gauntlet_games: 0,
            final_quiescence_choices: Vec::new(),
            time_control: "own".into(),
            concurrency: 2,
            openings: "builtin".into(),
            seed: 11,
        }
    }
}

impl RunConfig {
    /// The leaf quiescence weight in percent that the loop's gates and short ratings
    /// search with: self-play's (`[selfplay.search] leaf_quiescence`), so that the
    /// networks are judged in the search that makes their training data, and a value
    /// trained for the blend (`[train] value_quiescence`, which must equal it) is used
    /// in it.
    pub fn loop_quiescence(&self) -> u8 {
        (self.selfplay.search.leaf_quiescence * 100.0).round() as u8
    }
}

impl RatingSection {
    /// Visits of the final match and of exported players.
    pub fn final_visits(&self) -> u32 {
        self.final_visits.unwrap_or(self.visits)
    }
}

/// The sections serde reads straight into their owners' structs. `[train]` is not
/// among them: it mixes two structs' keys, and [`TrainSection::from_node`] splits it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Sections {
    #[serde(default)]
    run: RunSection,
    #[serde(default)]
    selfplay: SelfplayConfig,
    #[serde(default)]
    gate: GateSection,
    #[serde(default)]
    rating: RatingSection,
}

impl RunConfig {
    /// Reads and validates every section.
    ///
    /// # Errors
    /// The first problem, naming the file, the key path and (for bad TOML, unknown keys
    /// and values of the wrong type) the line.
    pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
        // Pre-training files are named relative to the config file.
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        RunConfig::load_relative_to(path, dir.unwrap_or(Path::new(".")))
    }

    /// [`RunConfig::load`], with relative paths resolved against `base`.
    fn load_relative_to(path: &Path, base: &Path) -> Result<RunConfig, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::read(&e).locate("", Some(path)))?;
        let mut cfg = RunConfig::parse_file(&text, Some(path))?;
        cfg.train.resolve_paths(base);
        cfg.base = Some(base.to_path_buf());
        cfg.file = Some(path.to_path_buf());
        Ok(cfg)
    }

    /// The config of a command working on `run`: the file given on its command line,
    /// else the run's copy (`config.toml`, its relative paths resolved against the
    /// directory it was copied from, where recorded, else the run's), else the built-in
    /// defaults.
    ///
    /// # Errors
    /// As [`RunConfig::load`], and an unreadable record of the copy's directory.
    pub fn for_run(run: &RunDir, given: Option<&Path>) -> Result<RunConfig, ConfigError> {
        if let Some(path) = given {
            return RunConfig::load(path);
        }
        let copy = run.config_path();
        if !copy.is_file() {
            return RunConfig::parse("");
        }
        let base = match run.config_base() {
            Ok(base) => base.unwrap_or_else(|| run.root().to_path_buf()),
            Err(RunError::Read { path, source }) => {
                return Err(ConfigError::read(&source).locate("", Some(&path)));
            }
            Err(e) => return Err(ConfigError::invalid(e.to_string())),
        };
        RunConfig::load_relative_to(&copy, &base)
    }

    /// Parses and validates config text (errors give lines, not a file name).
    ///
    /// # Errors
    /// As [`RunConfig::load`].
    pub fn parse(text: &str) -> Result<RunConfig, ConfigError> {
        RunConfig::parse_file(text, None)
    }

    fn parse_file(text: &str, file: Option<&Path>) -> Result<RunConfig, ConfigError> {
        RunConfig::read(text).map_err(|e| e.locate(text, file))
    }

    fn read(text: &str) -> Result<RunConfig, ConfigError> {
        let mut root = parse(text)?;
        let train = root.get_mut().remove("train");
        let span = root.span();
        let sections: Sections =
            deserialize(Spanned::new(span, DeValue::Table(root.into_inner())), "")?;
        sections
            .selfplay
            .validate()
            .map_err(|e| ConfigError::invalid(e.to_string()))?;
        let train = match train {
            Some(node) => TrainSection::from_node(node)?,
            None => TrainSection::default(),
        };
        let Sections {
            run,
            selfplay,
            gate,
            rating,
        } = sections;
        let invalid =
            |what: &str, e: &dyn fmt::Display| ConfigError::invalid(format!("{what}: {e}"));
        for o in &rating.opponents {
            o.parse::<PlayerSpec>()
                .map_err(|e| invalid("[rating] opponents", &e))?;
        }
        for o in &rating.final_opponents {
            o.parse::<PlayerSpec>()
                .map_err(|e| invalid("[rating] final_opponents", &e))?;
        }
        rating
            .time_control
            .parse::<xq_eval::clock::TimeControl>()
            .map_err(|e| invalid("[rating] time_control", &e))?;
        gate.time_control
            .parse::<xq_eval::clock::TimeControl>()
            .map_err(|e| invalid("[gate] time_control", &e))?;
        if rating.final_quiescence > 100 {
            return Err(ConfigError::invalid(
                "[rating] final_quiescence must be a percentage, 0-100",
            ));
        }
        if rating.final_quiescence_choices.iter().any(|&q| q > 100) {
            return Err(ConfigError::invalid(
                "[rating] final_quiescence_choices must be percentages, 0-100",
            ));
        }
        if rating.visits == 0 || rating.final_visits == Some(0) {
            return Err(ConfigError::invalid(
                "[rating] visits and final_visits must be at least 1",
            ));
        }
        if run.games_per_generation == 0 {
            return Err(ConfigError::invalid(
                "[run] games_per_generation must be at least 1",
            ));
        }
        // A fixed threshold resigns games the side could still save, and each such game
        // trains the value head on the wrong result: issue #45's zero run resigned hard at
        // -0.9, 537 of its 566 would-be resignations in played-out games were wrong, and
        // every generation relabelled its games as Black wins.
        if selfplay.resign_enabled()
            && !selfplay.resign_soft
            && selfplay.resign_target_false_positives == 0.0
        {
            return Err(ConfigError::invalid(format!(
                "[selfplay] resign_soft = false resigns hard at a fixed resign_threshold ({}), \
                 which labels every wrongly resigned game with the wrong result: set \
                 resign_soft = true, calibrate the threshold with \
                 resign_target_false_positives, or turn resignation off with \
                 resign_threshold = -1",
                selfplay.resign_threshold
            )));
        }
        if selfplay.book_plies > 0 && train.data.pretrain.is_none() {
            return Err(ConfigError::invalid(
                "[selfplay] book_plies takes its openings from the games of \
                 [train.pretrain] pgn, and there is no [train.pretrain] section",
            ));
        }
        let blend = train.data.value_quiescence;
        if blend > 0.0 && (f64::from(selfplay.search.leaf_quiescence) - blend).abs() > 1e-6 {
            return Err(ConfigError::invalid(format!(
                "[train] value_quiescence ({blend}) trains the network's value for the blend \
                 self-play searches with: set [selfplay.search] leaf_quiescence to the same \
                 weight (it is {})",
                selfplay.search.leaf_quiescence
            )));
        }
        let non_negative = |x: f64| x.is_finite() && x >= 0.0;
        if !non_negative(run.budget_minutes) || !non_negative(run.final_reserve_minutes) {
            return Err(ConfigError::invalid(
                "[run] budget_minutes and final_reserve_minutes must be non-negative",
            ));
        }
        Ok(RunConfig {
            text: text.to_owned(),
            base: None,
            file: None,
            run,
            selfplay,
            train,
            gate,
            rating,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_resignation_without_calibration_is_refused_naming_the_ways_out() {
        let err =
            RunConfig::parse("[selfplay]\nresign_soft = false\nresign_disabled_fraction = 0.2\n")
                .unwrap_err()
                .to_string();
        for key in [
            "resign_soft",
            "resign_target_false_positives",
            "resign_threshold = -1",
        ] {
            assert!(err.contains(key), "{err}");
        }
        for ok in [
            "",
            "[selfplay]\nresign_threshold = -1\nresign_soft = false\n",
            "[selfplay]\nresign_soft = false\nresign_disabled_fraction = 0.1\n\
             resign_target_false_positives = 0.05\n",
        ] {
            assert!(RunConfig::parse(ok).is_ok(), "{ok:?}");
        }
        assert!(RunConfig::parse("").unwrap().selfplay.resign_soft);
    }

    #[test]
    fn a_value_trained_for_the_blend_needs_self_play_to_search_in_it() {
        let err = RunConfig::parse("[train]\nvalue_quiescence = 0.75\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("[train] value_quiescence (0.75)")
                && err.contains("[selfplay.search] leaf_quiescence")
                && err.contains("(it is 0)"),
            "{err}"
        );
        let cfg = RunConfig::parse(
            "[train]\nvalue_quiescence = 0.75\n[selfplay.search]\nleaf_quiescence = 0.75\n",
        )
        .unwrap();
        // Gates and short ratings search as self-play does.
        assert_eq!(cfg.loop_quiescence(), 75);
        assert_eq!(RunConfig::parse("").unwrap().loop_quiescence(), 0);
    }

    #[test]
    fn a_self_play_book_needs_the_pretraining_games() {
        let err = RunConfig::parse("[selfplay]\nbook_plies = 8\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("book_plies") && err.contains("[train.pretrain]"),
            "{err}"
        );
        let cfg = RunConfig::parse(
            "[selfplay]\nbook_plies = 8\n[train.pretrain]\npgn = [\"a.pgn\"]\nsteps = 10\n",
        )
        .unwrap();
        assert_eq!(cfg.selfplay.book_plies, 8);
    }
    #[test]
    fn every_shipped_config_is_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            // Tournament files (`tournament-*.toml`) are `xqz tournament`'s, not runs.
            let tournament = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("tournament-"));
            if path.extension().is_some_and(|e| e == "toml") && !tournament {
                let cfg =
                    RunConfig::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
                if let Some(p) = &cfg.train.data.pretrain {
                    for f in &p.pgn {
                        assert!(
                            f.exists(),
                            "{}: pre-training file {} is missing",
                            path.display(),
                            f.display()
                        );
                    }
                }
                n += 1;
            }
        }
        assert!(n >= 6, "only {n} configs");
    }

    #[test]
    fn the_end_of_run_round_robin_is_off_by_default_and_its_weights_are_percentages() {
        let cfg = RunConfig::parse("").unwrap();
        assert_eq!(cfg.rating.final_gauntlet_games, 0);
        assert!(cfg.rating.final_quiescence_choices.is_empty());
        let cfg = RunConfig::parse(
            "[rating]\nfinal_gauntlet_games = 20\nfinal_quiescence_choices = [50, 75, 100]\n",
        )
        .unwrap();
        assert_eq!(cfg.rating.final_gauntlet_games, 20);
        assert_eq!(cfg.rating.final_quiescence_choices, [50, 75, 100]);
        let err = RunConfig::parse("[rating]\nfinal_quiescence_choices = [50, 101]\n").unwrap_err();
        assert!(
            err.to_string().contains("final_quiescence_choices"),
            "{err}"
        );
    }

    #[test]
    fn final_quiescence_is_a_percentage() {
        let cfg = RunConfig::parse("[rating]\nfinal_quiescence = 75\n").unwrap();
        assert_eq!(cfg.rating.final_quiescence, 75);
        assert_eq!(RunConfig::parse("").unwrap().rating.final_quiescence, 0);
        let err = RunConfig::parse("[rating]\nfinal_quiescence = 101\n").unwrap_err();
        assert!(err.to_string().contains("final_quiescence"), "{err}");
    }

    #[test]
    fn final_visits_default_to_visits_and_are_at_least_one() {
        let cfg = RunConfig::parse("[rating]\nvisits = 24\nfinal_visits = 200\n").unwrap();
        assert_eq!(cfg.rating.final_visits(), 200);
        let cfg = RunConfig::parse("[rating]\nvisits = 24\n").unwrap();
        assert_eq!(cfg.rating.final_visits(), 24);
        let err = RunConfig::parse("[rating]\nfinal_visits = 0\n").unwrap_err();
        assert!(err.to_string().contains("final_visits"), "{err}");
    }

    #[test]
    fn unknown_keys_are_named_in_every_section() {
        for (text, needle) in [
            ("[run]\nbudget_minuts = 3\n", "budget_minuts"),
            ("[runn]\n", "runn"),
            ("[selfplay]\nparalel_games = 3\n", "paralel_games"),
            ("[train]\nlerning_rate = 0.1\n", "lerning_rate"),
            ("[gate]\nvisit = 3\n", "visit"),
            ("[rating]\nopponents = [\"randm\"]\n", "randm"),
            ("[run]\ngames_per_generation = 0\n", "games_per_generation"),
            ("[gate]\ntime_control = \"fast\"\n", "time_control"),
        ] {
            let e = format!("{:#}", RunConfig::parse(text).unwrap_err());
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_key_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        for (text, want) in [
            (
                "[run]\nseed = 2\n\n[runn]\nseed = 3\n",
                "config.toml:4: unknown section [runn]",
            ),
            (
                "[run]\nbudget_minuts = 3\n",
                "config.toml:2: [run] unknown key \"budget_minuts\" (did you mean \"budget_minutes\"?)",
            ),
            (
                "[selfplay]\nmax_batch = 8\n[selfplay.search]\nc_puct = 3\n",
                "config.toml:4: [selfplay.search] unknown key \"c_puct\"",
            ),
            (
                "[selfplay]\nparallel_games = \"many\"\n",
                "config.toml:2: selfplay.parallel_games: invalid type: string \"many\"",
            ),
            (
                "[gate]\nvisit = 3\n",
                "config.toml:2: [gate] unknown key \"visit\"",
            ),
            (
                "[rating]\nopponents = [\"random\", 3]\n",
                "config.toml:2: rating.opponents[1]: invalid type: integer `3`",
            ),
            (
                "[run]\nmode = \"fast\"\n",
                "config.toml:2: run.mode: unknown variant `fast`",
            ),
            ("[run]\nseed = \n", "config.toml:2: "),
            (
                "[selfplay]\nmax_batch = 0\n",
                "config.toml: selfplay.max_batch must be",
            ),
            (
                "[train]\nlr = 0.0\n",
                "config.toml: [train] lr must be a positive number",
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = RunConfig::load(&path).unwrap_err().to_string();
            let err = err
                .strip_prefix(&format!("{}", dir.path().display()))
                .unwrap_or(&err);
            assert!(err.starts_with(&format!("/{want}")), "{text:?}: {err}");
            assert!(!err.contains('\n'), "{text:?}: multi-line {err:?}");
        }
    }

    #[test]
    fn every_command_reads_the_whole_file_given_or_the_runs_copy() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path().join("run")).unwrap();
        // No file anywhere: the defaults.
        let cfg = RunConfig::for_run(&run, None).unwrap();
        assert_eq!(cfg.selfplay, SelfplayConfig::default());
        // The run's copy, whole: a section the command does not use is still checked.
        std::fs::write(run.config_path(), "[selfplay]\nparallel_games = 3\n").unwrap();
        assert_eq!(
            RunConfig::for_run(&run, None)
                .unwrap()
                .selfplay
                .parallel_games,
            3
        );
        std::fs::write(
            run.config_path(),
            "[train]\nbatch_size = 8\n[gate]\nvisit = 3\n",
        )
        .unwrap();
        let err = RunConfig::for_run(&run, None).unwrap_err().to_string();
        assert!(err.contains("[gate] unknown key \"visit\""), "{err}");
        // A file given on the command line wins over the run's copy.
        let given = dir.path().join("given.toml");
        std::fs::write(&given, "[gate]\nvisits = 7\n").unwrap();
        let cfg = RunConfig::for_run(&run, Some(&given)).unwrap();
        assert_eq!(cfg.gate.visits, 7);
        let err = RunConfig::for_run(&run, Some(&dir.path().join("missing.toml")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing.toml: cannot read config"), "{err}");
    }

    #[test]
    fn the_runs_copy_names_pgn_files_relative_to_the_file_it_was_copied_from() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path().join("run")).unwrap();
        let pgn = |cfg: RunConfig| cfg.train.data.pretrain.unwrap().pgn;
        std::fs::write(
            run.config_path(),
            "[train.pretrain]\nsteps = 10\npgn = [\"games/master.pgn\", \"/abs/other.pgn\"]\n",
        )
        .unwrap();
        // No record of where it came from: relative to the run.
        assert_eq!(
            pgn(RunConfig::for_run(&run, None).unwrap()),
            [run.root().join("games/master.pgn"), "/abs/other.pgn".into()]
        );
        std::fs::write(run.config_base_path(), "/home/me/configs\n").unwrap();
        let cfg = RunConfig::for_run(&run, None).unwrap();
        assert_eq!(cfg.base.as_deref(), Some(Path::new("/home/me/configs")));
        assert_eq!(
            pgn(cfg),
            [
                PathBuf::from("/home/me/configs/games/master.pgn"),
                "/abs/other.pgn".into()
            ]
        );
        // A file given on the command line resolves against its own directory.
        let given = dir.path().join("given.toml");
        std::fs::copy(run.config_path(), &given).unwrap();
        assert_eq!(
            pgn(RunConfig::for_run(&run, Some(&given)).unwrap())[0],
            dir.path().join("games/master.pgn")
        );
        // The copy's config names itself; an unreadable record is a read error naming it.
        assert_eq!(
            RunConfig::for_run(&run, None).unwrap().file,
            Some(run.config_path())
        );
        std::fs::remove_file(run.config_base_path()).unwrap();
        std::fs::create_dir(run.config_base_path()).unwrap();
        let err = RunConfig::for_run(&run, None).unwrap_err().to_string();
        assert!(
            err.contains("cannot read") && err.contains("config.base"),
            "{err}"
        );
    }
}
