//! `xqz export`: turns a network of a training run into a self-contained UCCI player
//! directory that a GUI can start.
//!
//! The directory holds:
//! - `network.safetensors`: the network's EMA weights;
//! - `network.json`: its checkpoint sidecar (architecture, encoding and policy-index
//!   versions, step; no optimiser state) plus `source_run` (the run directory's name),
//!   `source_checkpoint` (its path inside the run) and `exported_unix`, so the player
//!   says where it came from without naming the exporting machine's paths;
//! - `engine.toml`: the player's name and search settings ([`PlayerConfig`]);
//! - `xqz`: a hard link to (or copy of) the libtorch-free front end `xqz` next to the
//!   binary that exported it ([`player_binary`]), which runs the network on the native
//!   CPU backend (xq-native): the player needs no libtorch, no `.venv` and no project;
//! - `xqzero-engine`: the launcher, a shell script that runs
//!   `xqz ucci --player <its directory>`; a GUI starts it with no arguments;
//! - `README.txt`: what the player is and what it needs on another machine.
//!
//! By default it is `RUN/players/<model>`, the model's name in the run (`xqz run`
//! exports there too), so a player directory is found by the network it holds.
//!
//! The directory is built under a temporary name next to `OUT`
//! ([`xq_data::io::write_dir_atomic`]) and renamed into place, so `OUT` is either
//! absent, the old player or the complete new one.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
};

use xq_eval::{
    net::{NetError, NetSettings},
    player_dir::{
        BINARY, ENGINE_TOML, LAUNCHER, NETWORK_META, NETWORK_WEIGHTS, PlayerConfig, PlayerDirError,
        Source, load_player_backend,
    },
};
use xq_nn::checkpoint::Sidecar;
use xq_run::{ModelRef, RunDir, RunError};

/// What can go wrong exporting a player.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no network to export in {run}: {why}")]
    NoModel { run: PathBuf, why: String },
    /// The run directory: a model not found, a pointer that cannot be read.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The checkpoint's sidecar (read by the one torch-free reader, `xq_nn::checkpoint`).
    #[error("{0}")]
    Sidecar(#[from] xq_nn::checkpoint::CheckpointError),
    #[error("{path} already exists (pass --force to replace it)")]
    Exists { path: PathBuf },
    #[error("bad player configuration {path}: {why}")]
    Config { path: PathBuf, why: String },
    #[error("{0}")]
    Net(#[from] NetError),
    #[error("{0}")]
    Player(#[from] PlayerDirError),
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The network `xqz export --run RUN [--model NAME]` exports: the one named
/// ([`RunDir::find_model`]), else the run's accepted network, else its newest
/// checkpoint ([`RunDir::latest_model`]).
///
/// # Errors
/// [`ExportError::NoModel`] for a run with neither; the run's own errors.
pub fn model_to_export(run: &RunDir, name: Option<&str>) -> Result<ModelRef, ExportError> {
    if let Some(name) = name {
        return Ok(run.find_model(name)?);
    }
    run.latest_model()?.ok_or_else(|| ExportError::NoModel {
        run: run.root().to_path_buf(),
        why: format!(
            "neither {} nor a checkpoint in {}",
            run.pointer_path().display(),
            run.checkpoints_dir().display()
        ),
    })
}

/// How to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The player directory; `None`: `RUN/players/<model name>`.
    pub out: Option<PathBuf>,
    /// The `xqz` binary to copy into the player (usually the running one).
    pub binary: PathBuf,
    pub settings: NetSettings,
    /// The engine's name; default `xqzero-<run name>-<step>`.
    pub name: Option<String>,
    /// Replace an existing `out`.
    pub force: bool,
}

/// What was exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSummary {
    pub out: PathBuf,
    pub name: String,
    pub source_checkpoint: PathBuf,
    pub step: u64,
}

/// Writes the player directory of `model`, a network of `run` (see the module
/// documentation).
///
/// # Errors
/// A model without a checkpoint, an unreadable checkpoint, an existing `out` without
/// `force`, I/O.
pub fn export_player(
    run: &RunDir,
    model: &ModelRef,
    opts: &ExportOptions,
) -> Result<ExportSummary, ExportError> {
    opts.settings.validate()?;
    if let Some(out) = &opts.out
        && out.exists()
        && !opts.force
    {
        return Err(ExportError::Exists { path: out.clone() });
    }
    let sidecar_path = run.sidecar(model)?;
    let sidecar = Sidecar::read(&sidecar_path)?;
    let ema = sidecar_path
        .parent()
        .unwrap_or(Path::new("."))
        .join(&sidecar.ema);
    if !ema.is_file() {
        return Err(ExportError::NoModel {
            run: run.root().to_path_buf(),
            why: format!(
                "{} names EMA weights {}, which do not exist",
                sidecar_path.display(),
                ema.display()
            ),
        });
    }
    let name = opts
        .name
        .clone()
        .unwrap_or_else(|| format!("xqzero-{}-{}", run_name(run), sidecar.step));
    let out = match &opts.out {
        Some(o) => o.clone(),
        None => {
            let players = run.players_dir();
            let o = players.join(&model.name);
            if o.exists() && !opts.force {
                return Err(ExportError::Exists { path: o });
            }
            fs::create_dir_all(&players).map_err(io(&players))?;
            o
        }
    };

    // Built under a temporary name and renamed into place (an existing player is
    // replaced whole), after checking it loads as the launcher will load it.
    xq_data::io::write_dir_atomic(
        &out,
        opts.force,
        |tmp| {
            write_player(tmp, run, opts, &sidecar, &sidecar_path, &ema, &name)?;
            load_player_backend(tmp).map(drop)?;
            Ok(())
        },
        io(&out),
    )?;
    Ok(ExportSummary {
        out,
        name,
        source_checkpoint: sidecar_path,
        step: sidecar.step,
    })
}

/// The run directory's own name (`quickstart` for `runs/quickstart`): how a player
/// names its run without the exporting machine's paths.
fn run_name(run: &RunDir) -> String {
    fs::canonicalize(run.root())
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "run".into())
}

/// The binary a player gets for `binary` (the running one): the libtorch-free `xqz`
/// beside it when there is one, so the player starts in milliseconds and runs where
/// libtorch is absent (its network runs on the native CPU backend); `binary` itself
/// otherwise (a test harness, a lone `xqz-torch`).
pub fn player_binary(binary: &Path) -> PathBuf {
    let front = binary.with_file_name(BINARY);
    if front != binary && front.is_file() {
        front
    } else {
        binary.to_path_buf()
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    let mut f = fs::File::create(path).map_err(io(path))?;
    f.write_all(bytes).map_err(io(path))?;
    f.sync_all().map_err(io(path))
}

fn write_player(
    dir: &Path,
    run: &RunDir,
    opts: &ExportOptions,
    sidecar: &Sidecar,
    sidecar_path: &Path,
    ema: &Path,
    name: &str,
) -> Result<(), ExportError> {
    fs::create_dir_all(dir).map_err(io(dir))?;
    let weights = dir.join(NETWORK_WEIGHTS);
    xq_data::io::copy_file_synced(ema, &weights).map_err(io(&weights))?;

    let mut meta = sidecar.clone();
    meta.weights = NETWORK_WEIGHTS.into();
    meta.ema = NETWORK_WEIGHTS.into();
    meta.optimizer = None;
    meta.data_cursor = None;
    let mut value = serde_json::to_value(&meta).map_err(|e| ExportError::Config {
        path: dir.join(NETWORK_META),
        why: e.to_string(),
    })?;
    let source = Source {
        run: run_name(run),
        checkpoint: run.relative(sidecar_path).display().to_string(),
        step: sidecar.step,
    };
    if let Some(obj) = value.as_object_mut() {
        obj.insert("source_run".into(), source.run.clone().into());
        obj.insert("source_checkpoint".into(), source.checkpoint.clone().into());
        obj.insert("exported_unix".into(), xq_run::now().into());
    }
    let text = serde_json::to_string_pretty(&value).expect("JSON values serialise");
    write_file(&dir.join(NETWORK_META), text.as_bytes())?;

    let config = PlayerConfig {
        name: name.to_owned(),
        network: NETWORK_META.into(),
        search: opts.settings.clone(),
        source,
    };
    let toml = toml::to_string(&config).map_err(|e| ExportError::Config {
        path: dir.join(ENGINE_TOML),
        why: e.to_string(),
    })?;
    let header = "\
# xqzero exported player: read by `xqz ucci --player DIR` (the launcher runs that).
# [search]: visits = root visits per move when the GUI gives no time or node limit
# (and for `go depth N`); batch = leaves per network call; threads = CPU threads
# that evaluate each batch of the network (0 = one); tree_mb = search tree memory cap (MiB); c_puct and
# fpu_reduction = PUCT exploration; resign_cp (0 = never) and draw_cp apply to the
# in-process player only (the UCCI engine uses its resignscore/drawscore options);
# leaf_quiescence = weight (0-1) of a quiescence search in every leaf's value and of a
# winning-capture prior in its policy (0 = plain AlphaZero search).
";
    write_file(&dir.join(ENGINE_TOML), format!("{header}{toml}").as_bytes())?;

    let binary = dir.join(BINARY);
    let source = player_binary(&opts.binary);
    // A hard link when the player is on the binary's filesystem: a run exports every
    // accepted network. The linker writes a new file on each build, so the link keeps
    // the bytes it was made from.
    if fs::hard_link(&source, &binary).is_err() {
        xq_data::io::copy_file_synced(&source, &binary).map_err(io(&binary))?;
    }
    let launcher = dir.join(LAUNCHER);
    write_file(&launcher, LAUNCHER_SCRIPT.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for p in [&launcher, &binary] {
            fs::set_permissions(p, fs::Permissions::from_mode(0o755)).map_err(io(p))?;
        }
    }
    let readme = readme(name, sidecar, &config.source);
    write_file(&dir.join("README.txt"), readme.as_bytes())
}

/// The launcher: finds its own directory (through a symlink too) and runs the copied
/// binary on it. A `lib/` directory beside it, if present, is searched for libtorch.
pub const LAUNCHER_SCRIPT: &str = r#"#!/bin/sh
# xqzero UCCI engine launcher, written by `xqz export`. Start it with no arguments:
# it speaks UCCI (and UCI) on stdin/stdout. See README.txt.
self="$0"
if command -v readlink >/dev/null 2>&1; then
    self=$(readlink -f -- "$0" 2>/dev/null || printf '%s' "$0")
fi
dir=$(CDPATH= cd -- "$(dirname -- "$self")" && pwd) || exit 1
if [ -d "$dir/lib" ]; then
    LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
fi
exec "$dir/xqz" ucci --player "$dir" "$@"
"#;

fn readme(name: &str, sidecar: &Sidecar, source: &Source) -> String {
    let net = &sidecar.net;
    format!(
        "\
{name}: an xqzero Xiangqi engine (AlphaZero-style network + Monte-Carlo tree search).

Start `xqzero-engine` with no arguments; it speaks UCCI 3.0 (and UCI) on stdin/stdout,
so a Xiangqi GUI (or a match runner) can use it directly. Try it by hand:
    ./xqzero-engine
    ucci
    position startpos
    go time 10000
(it answers `bestmove h2e2`-style moves; `quit` ends it).

Files:
  xqzero-engine        the launcher (a shell script running ./xqz ucci --player <this dir>)
  xqz                  the xqzero binary
  network.safetensors  the network's weights (EMA)
  network.json         architecture ({blocks} blocks x {channels} channels, history {history}),
                       encoding version {enc}, policy index version {pol}, training step {step}
  engine.toml          name and search settings (visits, batch, threads, tree size); edit freely

Engine options (setoption): threads, batch, hashsize (search tree MiB), nodes (default
visits per move), networkfile, usemillisec, resignscore, drawscore.

Scores (`info ... score`) are for the side to move, in centipawns (a horse or cannon is
about 100), or `mate N` for a checkmate or stalemate (困毙, a loss) the search has proven.
A game won or lost only by the rules (perpetual check or chase) is +5000 or -5000,
never `mate` (nor 9800 or more, a mate in ElephantEye's UCCI convention): GUIs and
adapters take those for checkmate on the board (XBoard's uci2wb claims the game after
`score mate 1`, and XBoard forfeits a false claim).

Source: run {run}, checkpoint {ckpt} in it (step {step}).

On another machine: Linux x86-64 with a glibc at least as new as the build machine's.
Nothing else: the binary links no libtorch and runs the network on the CPU itself
(xqzero's native backend); copy this directory anywhere and start the launcher.
",
        blocks = net.blocks,
        channels = net.channels,
        history = net.history,
        enc = sidecar.encoding_version,
        pol = sidecar.policy_index_version,
        step = sidecar.step,
        run = source.run,
        ckpt = source.checkpoint,
    )
}
