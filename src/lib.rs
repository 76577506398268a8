//! The `xqz` command line's shared half: the commands that run without libtorch, error
//! formatting, and the hand-over to `xqz-torch`.
//!
//! Two binaries share this library (ARCHITECTURE.md, "Which processes load libtorch"):
//!
//! - `xqz`, the front end, links no libtorch. It runs `report` and the
//!   [`LocalCommand`]s itself: those whose players need no network as they are, and
//!   those with network players (`net:` players, a UCCI engine over a checkpoint or an
//!   exported player's network) on the native CPU backend (`xq_native::NativeBackend`),
//!   unless `XQZ_BACKEND` asks for libtorch (`torch`, or `auto` on a machine with an
//!   NVIDIA GPU and `xqz-torch` beside it). Then, and for the training-run commands
//!   (`run`, `selfplay`, `train`, `gate`, `export`, `bench`), it replaces itself with
//!   `xqz-torch` ([`exec_backend`]: the same arguments, `exec`). Exported players carry
//!   this binary as their `xqz`.
//! - `xqz-torch` (built with the `torch` feature) registers the network backend that
//!   `XQZ_BACKEND` chooses ([`xq_nn::backend`]) and runs every command in-process; the
//!   training-run commands live with xq-pipeline, which links libtorch through
//!   xq-train.
//!
//! So `xqz perft`, an alpha-beta UCCI engine or a network player on the CPU start in
//! milliseconds without mapping libtorch, and only `xqz-torch` pays for it.

pub mod cmd;

use std::{ffi::OsString, path::PathBuf};

use anyhow::{Context, Result};
use clap::Subcommand;
use xq_eval::spec::PlayerSpec;

/// The file name of the network-capable binary, next to `xqz`.
pub const BACKEND_BINARY: &str = "xqz-torch";

/// The commands both binaries run with the same code.
#[derive(Subcommand, Debug)]
pub enum LocalCommand {
    /// Count leaf nodes of the legal move tree (move-generator check and benchmark).
    Perft(cmd::perft::Args),
    /// Play ICCS moves from a position and write them in Chinese, WXF or ICCS notation.
    Notation(cmd::notation::Args),
    /// Play ICCS moves and print the position and the game result as JSON.
    Status(cmd::status::Args),
    /// Play a match between two players (paired openings, Elo, optional SPRT).
    Match(cmd::matches::Args),
    /// Run a round robin, Swiss or knockout tournament from a TOML file.
    Tournament(cmd::tournament::Args),
    /// Rate players by maximum likelihood from PGN files or from games it plays.
    Ladder(cmd::ladder::Args),
    /// Rate players on the anchored strength scale (or calibrate the anchors).
    Strength(Box<cmd::strength::Args>),
    /// Run the UCCI engine (also UCI) on stdin/stdout.
    Ucci(cmd::ucci::Args),
}

impl LocalCommand {
    /// Whether this invocation loads a network in-process (a `net:` player, an exported
    /// player's or a checkpoint's network in the UCCI engine), so that `xqz` must hand
    /// it to `xqz-torch`. Unparsable inputs say `false`: the command then reports them
    /// itself.
    pub fn needs_backend(&self) -> bool {
        let spec_needs = |text: &str| {
            text.parse::<PlayerSpec>()
                .is_ok_and(|s| s.needs_network_backend())
        };
        match self {
            LocalCommand::Perft(_) | LocalCommand::Notation(_) | LocalCommand::Status(_) => false,
            LocalCommand::Match(a) => a.player_texts().into_iter().any(spec_needs),
            LocalCommand::Ladder(a) => a.player_texts().iter().any(|p| spec_needs(p)),
            LocalCommand::Strength(a) => a.loads_network(),
            LocalCommand::Ucci(a) => a.loads_network(),
            LocalCommand::Tournament(a) => a.player_texts().iter().any(|p| spec_needs(p)),
        }
    }

    /// Runs the command in this process.
    ///
    /// # Errors
    /// The command's error, for [`format_error`].
    pub fn run(self) -> Result<()> {
        match self {
            LocalCommand::Perft(a) => cmd::perft::run(a),
            LocalCommand::Notation(a) => cmd::notation::run(a),
            LocalCommand::Status(a) => cmd::status::run(a),
            LocalCommand::Match(a) => cmd::matches::run(a),
            LocalCommand::Tournament(a) => cmd::tournament::run(a),
            LocalCommand::Ladder(a) => cmd::ladder::run(a),
            LocalCommand::Strength(a) => cmd::strength::run(*a),
            LocalCommand::Ucci(a) => cmd::ucci::run(a),
        }
    }
}

/// The `xqz-torch` binary next to the running one.
///
/// # Errors
/// When it is missing, saying how to build it.
pub fn backend_binary() -> Result<PathBuf> {
    let me = std::env::current_exe().context("cannot find the running xqz binary")?;
    let path = me.with_file_name(BACKEND_BINARY);
    anyhow::ensure!(
        path.is_file(),
        "this command needs the network backend, but {} is missing \
         (build both binaries: cargo build --release --bins, or scripts/setup)",
        path.display()
    );
    Ok(path)
}

/// The build this binary is part of (`build.rs`: a hash of the sources).
pub const BUILD_ID: &str = env!("XQZ_BUILD_ID");

/// How `xqz` tells `xqz-torch` its build, so that a stale backend refuses to run.
const BUILD_ID_VAR: &str = "XQZ_FRONT_BUILD_ID";

/// In `xqz-torch`: fails when the `xqz` that exec'd it comes from another build of the
/// sources (a partial `cargo build --bin xqz` leaves an older `xqz-torch` beside it),
/// naming both builds and how to rebuild. Run directly, there is nothing to compare.
pub fn check_front_build() -> Result<()> {
    match std::env::var(BUILD_ID_VAR) {
        Ok(front) if front != BUILD_ID => anyhow::bail!(
            "{} is from build {BUILD_ID} but xqz is from build {front}: rebuild both \
             binaries (cargo build --release --bins, or scripts/setup)",
            std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| BACKEND_BINARY.to_owned())
        ),
        _ => Ok(()),
    }
}

/// Replaces this process with `xqz-torch`, passing `args` (the arguments after the
/// program name) unchanged, so stdin/stdout (a UCCI session) and the exit status are
/// the backend's own. Returns only on failure.
pub fn exec_backend(args: impl IntoIterator<Item = OsString>) -> anyhow::Error {
    use std::os::unix::process::CommandExt;
    match backend_binary() {
        Ok(path) => {
            let err = std::process::Command::new(&path)
                .args(args)
                .env(BUILD_ID_VAR, BUILD_ID)
                .exec();
            anyhow::Error::new(err).context(format!("cannot start {}", path.display()))
        }
        Err(e) => e,
    }
}

/// Parses the command line; help and version go to stdout and exit 0, anything else
/// becomes one line naming the problem and exit status 2, as for every bad input.
pub fn parse_or_exit<C: clap::Parser>() -> C {
    match C::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                std::process::exit(0);
            }
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("error: {first} (see xqz --help)");
            std::process::exit(2);
        }
    }
}

/// The environment variable that makes a command print its peak resident memory
/// (`peak_rss_kib N` on stderr) as it exits, for `xqz bench startup`. A parent cannot
/// measure it from outside: a child's `ru_maxrss` includes the memory of the parent it
/// was forked from, while `VmHWM` is reset by `exec`.
pub const PEAK_RSS_ENV: &str = "XQZ_REPORT_PEAK_RSS";

/// This process's peak resident memory in KiB (`VmHWM` of `/proc/self/status`).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Turns a command's result into the exit status, printing an error on one line.
pub fn finish(result: Result<()>) -> std::process::ExitCode {
    if std::env::var_os(PEAK_RSS_ENV).is_some()
        && let Some(kib) = peak_rss_kib()
    {
        eprintln!("peak_rss_kib {kib}");
    }
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", format_error(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, skipping causes whose text the message
/// before them already ends with. Multi-line messages (TOML's, which draw the source
/// line with a caret) are folded: their source-drawing lines are dropped.
pub fn format_error(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain().map(|c| one_line(&c.to_string())) {
        if line.is_empty() {
            line = cause;
        } else if !line.ends_with(&cause) {
            line = format!("{line}: {cause}");
        }
    }
    line
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with('|')
                && !l.split_once('|').is_some_and(|(n, _)| {
                    !n.is_empty() && n.trim().chars().all(|c| c.is_ascii_digit())
                })
        })
        .collect::<Vec<_>>()
        .join(": ")
}
