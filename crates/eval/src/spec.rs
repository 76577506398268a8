//! Player specifications: the text form that names a player on the command line, in
//! tournament configs and in reports.
//!
//! `KIND[:ARG,key=value,...]`:
//! - `random`, `greedy`: the baselines;
//! - `alphabeta[:depth=N,hash=MB]`: the built-in alpha-beta engine (default depth 3);
//! - `ucci:PATH[,option.NAME=VALUE…][,name=NAME]`, `uci:PATH[,…][,ranks=1]`: an
//!   external engine (`ranks=1` for engines whose UCI moves use ranks 1-10, as
//!   Fairy-Stockfish does in UCI mode);
//! - `fsf[:skill=N]`: shorthand for Debian's Fairy-Stockfish over UCCI at a Skill
//!   Level (default 20);
//! - `player:DIR`: an exported xqzero player, run through its launcher over UCCI.
//! - `net:CHECKPOINT[,visits=N][,quiescence=PCT][,root=gumbel]`: a network checkpoint
//!   with MCTS (in-process); `quiescence` mixes a quiescence search into every leaf's
//!   value with that weight in percent ([`crate::tactics`]; default 0, plain
//!   AlphaZero); `root=gumbel` searches the root with Gumbel sequential halving (without
//!   noise) instead of PUCT.

use std::{fmt, path::PathBuf, str::FromStr};

use crate::{
    player::{AlphaBetaPlayer, GreedyPlayer, Player, PlayerError, RandomPlayer},
    ucci::client::{Dialect, EngineConfig, UcciEngine},
};

/// Debian's Fairy-Stockfish.
pub const FAIRY_STOCKFISH: &str = "/usr/games/fairy-stockfish";

/// The alpha-beta player's transposition table when `hash` is not given (MiB).
const DEFAULT_HASH_MB: usize = 16;

/// A parsed player specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlayerSpec {
    Random,
    Greedy,
    AlphaBeta {
        depth: u32,
        hash_mb: usize,
    },
    Engine(EngineConfig),
    /// An exported player directory.
    Exported(PathBuf),
    /// A network checkpoint searched with MCTS.
    Net {
        checkpoint: PathBuf,
        visits: u32,
        /// Weight of the leaf quiescence search, in percent (0-100).
        quiescence_pct: u8,
        /// Gumbel sequential halving at the root instead of PUCT.
        gumbel: bool,
    },
}

/// A specification that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid player {spec:?}: {why}")]
pub struct ParseSpecError {
    pub spec: String,
    pub why: String,
}

impl FromStr for PlayerSpec {
    type Err = ParseSpecError;

    fn from_str(s: &str) -> Result<PlayerSpec, ParseSpecError> {
        let err = |why: String| ParseSpecError {
            spec: s.to_owned(),
            why,
        };
        let (kind, args) = match s.trim().split_once(':') {
            Some((k, a)) => (k, a),
            None => (s.trim(), ""),
        };
        let mut positional = Vec::new();
        let mut pairs = Vec::new();
        for part in args.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.split_once('=') {
                Some((k, v)) => pairs.push((k.trim().to_owned(), v.trim().to_owned())),
                None => positional.push(part.to_owned()),
            }
        }
        let number = |key: &str, v: &str, min: u64, max: u64| -> Result<u64, ParseSpecError> {
            match v.parse::<u64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(n),
                _ => Err(err(format!(
                    "{key} must be a number in {min}..={max}, got {v:?}"
                ))),
            }
        };
        let no_positional = |positional: &[String]| -> Result<(), ParseSpecError> {
            match positional.first() {
                Some(p) => Err(err(format!("unexpected argument {p:?}"))),
                None => Ok(()),
            }
        };
        match kind {
            "random" | "greedy" => {
                no_positional(&positional)?;
                if let Some((k, _)) = pairs.first() {
                    return Err(err(format!("{kind} takes no option {k:?}")));
                }
                Ok(if kind == "random" {
                    PlayerSpec::Random
                } else {
                    PlayerSpec::Greedy
                })
            }
            "alphabeta" => {
                no_positional(&positional)?;
                let (mut depth, mut hash_mb) = (3, DEFAULT_HASH_MB);
                for (k, v) in &pairs {
                    match k.as_str() {
                        "depth" => depth = number(k, v, 1, 64)? as u32,
                        "hash" => hash_mb = number(k, v, 1, 4096)? as usize,
                        _ => {
                            return Err(err(format!(
                                "unknown alphabeta option {k:?} (depth, hash)"
                            )));
                        }
                    }
                }
                Ok(PlayerSpec::AlphaBeta { depth, hash_mb })
            }
            "ucci" | "uci" | "fsf" => {
                let dialect = if kind == "uci" {
                    Dialect::Uci
                } else {
                    Dialect::Ucci
                };
                let command = if kind == "fsf" {
                    no_positional(&positional)?;
                    FAIRY_STOCKFISH.to_owned()
                } else {
                    match positional.as_slice() {
                        [p] => p.clone(),
                        [] => {
                            return Err(err(format!(
                                "{kind} needs the engine's path: {kind}:PATH"
                            )));
                        }
                        _ => return Err(err("more than one engine path".into())),
                    }
                };
                let mut cfg = EngineConfig::new(command, dialect);
                let mut skill = None;
                for (k, v) in &pairs {
                    if let Some(opt) = k.strip_prefix("option.") {
                        cfg.options.push((opt.to_owned(), v.clone()));
                        continue;
                    }
                    match (kind, k.as_str()) {
                        (_, "name") => cfg.name = Some(v.clone()),
                        ("uci", "ranks") => match v.as_str() {
                            "0" => cfg.one_based_ranks = false,
                            "1" => cfg.one_based_ranks = true,
                            _ => return Err(err("ranks must be 0 or 1".into())),
                        },
                        ("fsf", "skill") => skill = Some(number(k, v, 0, 20)? as i64),
                        _ => return Err(err(format!("unknown {kind} option {k:?}"))),
                    }
                }
                if kind == "fsf" {
                    let skill = skill.unwrap_or(20);
                    cfg.options.push(("Skill_Level".into(), skill.to_string()));
                    cfg.name.get_or_insert_with(|| format!("fsf-skill{skill}"));
                }
                Ok(PlayerSpec::Engine(cfg))
            }
            "player" => match positional.as_slice() {
                [p] if pairs.is_empty() => Ok(PlayerSpec::Exported(PathBuf::from(p))),
                _ => Err(err("player needs exactly one directory: player:DIR".into())),
            },
            "net" => {
                let checkpoint = match positional.as_slice() {
                    [p] => PathBuf::from(p),
                    _ => return Err(err("net needs exactly one checkpoint path: net:PATH".into())),
                };
                let (mut visits, mut quiescence_pct, mut gumbel) = (200, 0, false);
                for (k, v) in &pairs {
                    match (k.as_str(), v.as_str()) {
                        ("visits", _) => visits = number(k, v, 1, 10_000_000)? as u32,
                        ("quiescence", _) => quiescence_pct = number(k, v, 0, 100)? as u8,
                        ("root", "puct") => gumbel = false,
                        ("root", "gumbel") => gumbel = true,
                        ("root", _) => {
                            return Err(err(format!("root must be puct or gumbel, got {v:?}")));
                        }
                        _ => {
                            return Err(err(format!(
                                "unknown net option {k:?} (visits, quiescence, root)"
                            )));
                        }
                    }
                }
                Ok(PlayerSpec::Net {
                    checkpoint,
                    visits,
                    quiescence_pct,
                    gumbel,
                })
            }
            "" => Err(err("empty player specification".into())),
            other => Err(err(format!(
                "unknown player kind {other:?} (random, greedy, alphabeta, ucci, uci, fsf, player, net)"
            ))),
        }
    }
}

impl PlayerSpec {
    /// Whether building this player loads a network in this process (through the
    /// registered [`xq_nn::backend`]); every other kind is torch-free here (an exported
    /// player runs as its own engine process).
    pub const fn needs_network_backend(&self) -> bool {
        matches!(self, PlayerSpec::Net { .. })
    }

    /// Builds a fresh player. Engines are started (and their handshake done) here, so
    /// a missing binary is reported before any game.
    ///
    /// # Errors
    /// If the player cannot be created (engine missing or silent, network unreadable).
    pub fn build(&self) -> Result<Box<dyn Player>, PlayerError> {
        Ok(match self {
            PlayerSpec::Random => Box::new(RandomPlayer::new()),
            PlayerSpec::Greedy => Box::new(GreedyPlayer::new()),
            PlayerSpec::AlphaBeta { depth, hash_mb } => {
                Box::new(AlphaBetaPlayer::new(*depth, *hash_mb))
            }
            PlayerSpec::Engine(cfg) => Box::new(UcciEngine::start(cfg.clone())?),
            PlayerSpec::Exported(dir) => {
                let launcher = dir.join(crate::player_dir::LAUNCHER);
                if !launcher.is_file() {
                    return Err(PlayerError::Process(format!(
                        "{} has no launcher {} (not an exported player?)",
                        dir.display(),
                        crate::player_dir::LAUNCHER
                    )));
                }
                let mut cfg = EngineConfig::new(launcher, Dialect::Ucci);
                cfg.name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
                // Loading a network can take a while on a busy machine.
                cfg.startup_timeout = std::time::Duration::from_secs(60);
                Box::new(UcciEngine::start(cfg)?)
            }
            PlayerSpec::Net {
                checkpoint,
                visits,
                quiescence_pct,
                gumbel,
            } => {
                let settings = crate::net::NetSettings {
                    visits: *visits,
                    leaf_quiescence: f32::from(*quiescence_pct) / 100.0,
                    gumbel_root: *gumbel,
                    ..crate::net::NetSettings::default()
                };
                Box::new(crate::net::NetPlayer::load(checkpoint, settings)?)
            }
        })
    }

    /// Parses and builds in one step, for [`crate::player::PlayerBuilder`].
    ///
    /// # Errors
    /// A bad specification or a player that cannot be created.
    pub fn build_from_text(text: &str) -> Result<Box<dyn Player>, PlayerError> {
        let spec: PlayerSpec = text
            .parse()
            .map_err(|e: ParseSpecError| PlayerError::Other(e.to_string()))?;
        spec.build()
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Random => f.write_str("random"),
            PlayerSpec::Greedy => f.write_str("greedy"),
            PlayerSpec::AlphaBeta { depth, hash_mb } => {
                write!(f, "alphabeta:depth={depth}")?;
                if *hash_mb != DEFAULT_HASH_MB {
                    write!(f, ",hash={hash_mb}")?;
                }
                Ok(())
            }
            PlayerSpec::Engine(cfg) => {
                let kind = match cfg.dialect {
                    Dialect::Ucci => "ucci",
                    Dialect::Uci => "uci",
                };
                write!(f, "{kind}:{}", cfg.command.display())?;
                for (k, v) in &cfg.options {
                    write!(f, ",option.{k}={v}")?;
                }
                if cfg.one_based_ranks {
                    f.write_str(",ranks=1")?;
                }
                if let Some(n) = &cfg.name {
                    write!(f, ",name={n}")?;
                }
                Ok(())
            }
            PlayerSpec::Exported(dir) => write!(f, "player:{}", dir.display()),
            PlayerSpec::Net {
                checkpoint,
                visits,
                quiescence_pct,
                gumbel,
            } => {
                write!(f, "net:{},visits={visits}", checkpoint.display())?;
                if *quiescence_pct > 0 {
                    write!(f, ",quiescence={quiescence_pct}")?;
                }
                if *gumbel {
                    f.write_str(",root=gumbel")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_through_text() {
        for text in [
            "random",
            "greedy",
            "alphabeta:depth=4,hash=8",
            "alphabeta:depth=2",
            "ucci:/usr/games/fairy-stockfish,option.Skill_Level=3,name=fsf3",
            "uci:/opt/pikafish,option.Threads=1",
            "uci:/usr/games/fairy-stockfish,option.UCI_Variant=xiangqi,ranks=1",
            "player:/tmp/exported",
            "net:/runs/a/models/accepted.safetensors,visits=50",
            "net:/runs/a/models/accepted.safetensors,visits=800,quiescence=50",
            "net:/runs/a/models/accepted.safetensors,visits=16,root=gumbel",
        ] {
            let spec: PlayerSpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
        }
        assert_eq!(
            "alphabeta".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::AlphaBeta {
                depth: 3,
                hash_mb: 16
            }
        );
        let PlayerSpec::Engine(cfg) = "fsf:skill=5".parse().unwrap() else {
            panic!()
        };
        assert_eq!(
            cfg.options,
            vec![("Skill_Level".to_owned(), "5".to_owned())]
        );
        assert_eq!(cfg.name.as_deref(), Some("fsf-skill5"));
        let Ok(PlayerSpec::Net { gumbel: false, .. }) = "net:a,root=puct".parse() else {
            panic!("root=puct is the default search")
        };
    }

    #[test]
    fn bad_specs_name_the_problem() {
        for (text, needle) in [
            ("", "empty"),
            ("randm", "unknown player kind"),
            ("alphabeta:depth=0", "depth must be"),
            ("alphabeta:speed=3", "unknown alphabeta option"),
            ("ucci", "needs the engine's path"),
            ("fsf:skill=99", "skill must be"),
            ("random:depth=3", "takes no option"),
            ("net:a,b", "exactly one checkpoint"),
            ("net:a,root=mcts", "root must be puct or gumbel"),
        ] {
            let e = text.parse::<PlayerSpec>().unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
