//! `xqz bench`: speed benchmarks of the pieces of xqzero.
//!
//! `xqz bench perft` measures single-threaded perft nodes/second on the starting
//! position and on the 49 positions of `tests/data/bench49.tsv`, and in the same run
//! the Debian Fairy-Stockfish's `go perft` on the same positions, so the ratio is
//! measured under the same machine load. Both count the last ply in bulk (its moves are
//! generated and counted, not played). Measurements alternate between the two engines
//! position by position and are repeated; the report gives medians. The method and the
//! recorded figures are in `docs/BENCHMARKS.md`. `xqz bench rundir` is in `rundir`.

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

mod rundir;
mod targets;

use anyhow::{Context, Result, ensure};
use xq_core::{Position, perft::perft};
use xq_eval::ucci::client::{Dialect, EngineConfig, UcciEngine};

/// The 49 reference positions, built into the binary so the benchmark runs from any
/// directory.
const BENCH49: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/bench49.tsv"
));

/// Perft of the starting position at depths 0-6, to check the measured runs.
const START_COUNTS: [u64; 7] = [1, 44, 1_920, 79_666, 3_290_240, 133_312_995, 5_392_831_844];

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand, Debug)]
enum What {
    /// Perft nodes/second, single-threaded, against Fairy-Stockfish's `go perft`.
    Perft(PerftArgs),
    /// Trainer samples/second against the same PyTorch loop, and evaluator positions/second.
    Train(TrainBenchArgs),
    /// Start-up cost of a network-free command: `xqz perft --depth 1`, wall time and
    /// peak memory, against the same command run by `xqz-torch` (which maps libtorch).
    Startup(StartupArgs),
    /// Self-play on a shared machine: the evaluator's peak positions/s, then self-play
    /// idle and beside a CPU-bound process pinned to one core, alternating, in one run.
    Contention(ContentionArgs),
    /// The run directory at scale: opening, the trainer's scans, `xqz report` and
    /// compaction at 10,000 to 1,000,000 chunk files.
    Rundir(rundir::RundirArgs),
    /// Policy and value targets against a cached Fairy-Stockfish oracle on fixed
    /// positions (master held-out and self-play): the prior, the master move, and the
    /// PUCT and Gumbel self-play targets of the shipped configs, with a noise floor.
    Targets(targets::TargetsArgs),
}

#[derive(clap::Args, Debug)]
struct ContentionArgs {
    /// Run config whose `[selfplay]` settings and `[train] net` are measured (the
    /// network is randomly initialised).
    #[arg(long, default_value = "configs/quickstart.toml")]
    config: PathBuf,
    /// Seconds of each self-play measurement.
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    /// Rounds of (idle, contended); the report gives medians.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Evaluator intra-op threads (default: the config's `[selfplay] threads`).
    #[arg(long)]
    threads: Option<usize>,
    /// Copies of the network evaluating parts of each batch (default: the config's
    /// `[selfplay] eval_workers`; 0 = one per usable core).
    #[arg(long)]
    eval_workers: Option<usize>,
    /// Evaluation servers, each with its own copy of the network (default: the
    /// config's `[selfplay] servers`).
    #[arg(long)]
    servers: Option<usize>,
    /// The core the competing process is pinned to.
    #[arg(long, default_value_t = 1)]
    core: usize,
    /// Also measure idle self-play with the native CPU backend (xq-native) in every
    /// round, on the same network, one thread per evaluator copy, and report it
    /// against libtorch's (the same as adding `native-f32` to `--backends`).
    #[arg(long)]
    native: bool,
    /// Backends whose idle self-play is measured in every round, on the same network
    /// and settings, comma-separated: `torch-f32` (libtorch, the reference: the first
    /// one is what the others are reported against, and what the contended arm runs),
    /// `native-f32`, `torch-bf16`, and `auto` (what `XQZ_BACKEND=auto` chooses by its
    /// start-up measurement, which is printed).
    #[arg(long, value_delimiter = ',', default_value = "torch-f32")]
    backends: Vec<BenchBackend>,
}

/// One backend `xqz bench contention` measures: a fixed one, or the automatic choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BenchBackend {
    Fixed(xq_nn::Inference),
    Auto,
}

impl std::str::FromStr for BenchBackend {
    type Err = xq_nn::BadInference;

    fn from_str(s: &str) -> Result<BenchBackend, xq_nn::BadInference> {
        match s.trim() {
            "auto" => Ok(BenchBackend::Auto),
            other => other.parse().map(BenchBackend::Fixed),
        }
    }
}

impl std::fmt::Display for BenchBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BenchBackend::Fixed(i) => i.fmt(f),
            BenchBackend::Auto => f.write_str("auto"),
        }
    }
}

#[derive(clap::Args, Debug)]
struct StartupArgs {
    /// Runs of each binary (alternating); the report gives medians.
    #[arg(long, default_value_t = 20)]
    runs: usize,
}

#[derive(clap::Args, Debug)]
struct TrainBenchArgs {
    /// Network preset: small (4x48), medium (10x128) or large (20x256).
    #[arg(long, default_value = "small")]
    net: String,
    /// Samples per training step.
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// Timed training steps per round.
    #[arg(long, default_value_t = 20)]
    steps: usize,
    /// Rounds of each side, alternating; the best of each is compared.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Intra-op threads of both sides (0 = libtorch's default).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Evaluator batch sizes, comma-separated.
    #[arg(long, default_value = "1,16,64,256", value_delimiter = ',')]
    eval_batches: Vec<usize>,
    /// Seconds per evaluator batch size.
    #[arg(long, default_value_t = 2.0)]
    eval_seconds: f64,
    /// Also time each stage of an evaluator call (encode, copy in, forward, copy out,
    /// gather) at the --eval-batches sizes, against the unpacked input path in the same
    /// run.
    #[arg(long)]
    eval_stages: bool,
    /// Measure the Rust trainer only (no PyTorch reference).
    #[arg(long)]
    no_python: bool,
}

#[derive(clap::Args, Debug)]
struct PerftArgs {
    /// Depth for the starting position.
    #[arg(long, default_value_t = 5)]
    depth: u32,
    /// Depth for each position of the set (1-5; the set has counts for these).
    #[arg(long, default_value_t = 4)]
    set_depth: u32,
    /// Measurements per position and engine; the report gives medians.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Tab-separated positions (`idx`, `fen`, `d1`..`d5`); default: the built-in bench49.
    #[arg(long)]
    positions: Option<PathBuf>,
    /// The Fairy-Stockfish binary to compare with.
    #[arg(long, default_value = xq_eval::spec::FAIRY_STOCKFISH)]
    fsf: PathBuf,
    /// Measure xqzero only.
    #[arg(long)]
    no_fsf: bool,
}

pub fn run(args: Args) -> Result<()> {
    match args.what {
        What::Perft(a) => bench_perft(&a),
        What::Train(a) => bench_train(&a),
        What::Startup(a) => bench_startup(&a),
        What::Contention(a) => bench_contention(&a),
        What::Rundir(a) => rundir::bench_rundir(&a),
        What::Targets(a) => targets::bench_targets(&a),
    }
}

/// One run of `bin perft --depth 1`: wall seconds (spawn to exit) and peak resident
/// memory in KiB, which the child reports itself ([`xqzero::PEAK_RSS_ENV`]).
fn startup_once(bin: &std::path::Path) -> Result<(f64, u64)> {
    let start = Instant::now();
    let out = Command::new(bin)
        .args(["perft", "--depth", "1"])
        .env(xqzero::PEAK_RSS_ENV, "1")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start {}", bin.display()))?;
    let secs = start.elapsed().as_secs_f64();
    ensure!(
        out.status.success(),
        "{} perft --depth 1 failed: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let kib = String::from_utf8_lossy(&out.stderr)
        .lines()
        .find_map(|l| l.strip_prefix("peak_rss_kib ")?.trim().parse().ok())
        .with_context(|| format!("{} did not report its peak memory", bin.display()))?;
    Ok((secs, kib))
}

fn bench_startup(a: &StartupArgs) -> Result<()> {
    ensure!(a.runs >= 1, "--runs must be at least 1");
    let me = std::env::current_exe().context("cannot find the running binary")?;
    let front = me.with_file_name("xqz");
    let backend = me.with_file_name(xqzero::BACKEND_BINARY);
    let mut runs: [(Vec<f64>, Vec<f64>); 2] = Default::default();
    for _ in 0..a.runs {
        for (i, bin) in [&front, &backend].into_iter().enumerate() {
            let (secs, kib) = startup_once(bin)?;
            runs[i].0.push(secs);
            runs[i].1.push(kib as f64);
        }
    }
    println!(
        "start-up of `perft --depth 1`, {} runs each, medians:",
        a.runs
    );
    let mut rows = Vec::new();
    for (i, name) in ["xqz", "xqz-torch"].into_iter().enumerate() {
        let (secs, kib) = (median(&runs[i].0), median(&runs[i].1));
        println!(
            "  {name:<10} {:>8.1} ms wall  {:>8.1} MB peak RSS",
            secs * 1e3,
            kib / 1024.0
        );
        rows.push((secs, kib));
    }
    println!(
        "  ratio      {:>8.1}x wall  {:>8.1}x memory (xqz-torch / xqz)",
        rows[1].0 / rows[0].0.max(1e-9),
        rows[1].1 / rows[0].1.max(1.0)
    );
    Ok(())
}

/// One benchmark position: its name, position, depth and expected count when known.
struct Case {
    name: String,
    position: Position,
    depth: u32,
    nodes: Option<u64>,
}

fn load_cases(a: &PerftArgs) -> Result<Vec<Case>> {
    ensure!(a.repeats > 0, "--repeats must be at least 1");
    ensure!(
        (1..=5).contains(&a.set_depth),
        "--set-depth must be 1-5, not {}",
        a.set_depth
    );
    let text = match &a.positions {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?
        }
        None => BENCH49.to_string(),
    };
    let mut cases = vec![Case {
        name: "start".into(),
        position: Position::startpos(),
        depth: a.depth,
        nodes: START_COUNTS.get(a.depth as usize).copied(),
    }];
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let col = |k: usize| {
            cols.get(k).copied().with_context(|| {
                format!(
                    "line {}: expected idx, fen, d1..d5 separated by tabs",
                    i + 1
                )
            })
        };
        let fen = col(1)?;
        let position =
            Position::from_fen(fen).with_context(|| format!("line {}: bad FEN {fen:?}", i + 1))?;
        let want = col(1 + a.set_depth as usize)?;
        let nodes = want
            .parse()
            .with_context(|| format!("line {}: bad node count {want:?}", i + 1))?;
        cases.push(Case {
            name: format!("#{}", col(0)?),
            position,
            depth: a.set_depth,
            nodes: Some(nodes),
        });
    }
    ensure!(cases.len() > 1, "no positions in the set");
    Ok(cases)
}

/// The median of every `xqz bench` report: the middle value, or for an even count the
/// mean of the two middle values (so that no one of them is favoured); NaN for an
/// empty list (every caller measures at least once: its flags are checked first).
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Seconds for xqzero's perft of one case (checking the count).
fn time_ours(case: &Case) -> Result<(u64, f64)> {
    let start = Instant::now();
    let nodes = perft(std::hint::black_box(&case.position), case.depth);
    let secs = start.elapsed().as_secs_f64();
    if let Some(want) = case.nodes {
        ensure!(
            nodes == want,
            "xqzero counts {nodes} at {} depth {}, expected {want}",
            case.name,
            case.depth
        );
    }
    Ok((nodes, secs))
}

fn bench_perft(a: &PerftArgs) -> Result<()> {
    let cases = load_cases(a)?;
    let mut fsf = if a.no_fsf {
        None
    } else {
        Some(start_fsf(&a.fsf)?)
    };
    // Per case: our times and Fairy-Stockfish's times.
    let mut ours: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut theirs: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut counts = vec![0u64; cases.len()];
    eprintln!(
        "measuring {} positions, {} runs each{}",
        cases.len(),
        a.repeats,
        if fsf.is_some() {
            ", alternating with Fairy-Stockfish"
        } else {
            ""
        }
    );
    for _ in 0..a.repeats {
        for (i, case) in cases.iter().enumerate() {
            let (nodes, secs) = time_ours(case)?;
            counts[i] = nodes;
            ours[i].push(secs);
            if let Some(fsf) = fsf.as_mut() {
                let (n, time) = fsf
                    .perft(&case.position, case.depth, FSF_PERFT_TIMEOUT)
                    .with_context(|| {
                        format!(
                            "Fairy-Stockfish's perft of {} at depth {}",
                            case.name, case.depth
                        )
                    })?;
                ensure!(
                    n == nodes,
                    "Fairy-Stockfish counts {n} at {} depth {}, xqzero {nodes}",
                    case.name,
                    case.depth
                );
                theirs[i].push(time.as_secs_f64());
            }
        }
    }

    let has_fsf = fsf.is_some();
    println!(
        "{:<6} {:>5} {:>12} {:>9} {:>9} {:>7}",
        "pos", "depth", "nodes", "xqz Mnps", "FSF Mnps", "ratio"
    );
    let mut ratios = Vec::new();
    let (mut set_nodes, mut set_ours, mut set_theirs) = (0u64, 0.0, 0.0);
    for (i, case) in cases.iter().enumerate() {
        let n = counts[i] as f64;
        let t_ours = median(&ours[i]);
        let ours_mnps = n / t_ours / 1e6;
        if has_fsf {
            let t_theirs = median(&theirs[i]);
            let ratio = t_theirs / t_ours;
            println!(
                "{:<6} {:>5} {:>12} {:>9.1} {:>9.1} {:>7.2}",
                case.name,
                case.depth,
                counts[i],
                ours_mnps,
                n / t_theirs / 1e6,
                ratio
            );
            if i > 0 {
                ratios.push(ratio);
                set_theirs += t_theirs;
            }
        } else {
            println!(
                "{:<6} {:>5} {:>12} {:>9.1}",
                case.name, case.depth, counts[i], ours_mnps
            );
        }
        if i > 0 {
            set_nodes += counts[i];
            set_ours += t_ours;
        }
    }
    println!();
    let start_ours = counts[0] as f64 / median(&ours[0]) / 1e6;
    let set_n = cases.len() - 1;
    print!(
        "start depth {}: xqzero {start_ours:.1} Mnps",
        cases[0].depth
    );
    if has_fsf {
        let start_theirs = counts[0] as f64 / median(&theirs[0]) / 1e6;
        print!(
            ", Fairy-Stockfish {start_theirs:.1} Mnps, ratio {:.2}",
            start_ours / start_theirs
        );
    }
    println!();
    print!(
        "set of {set_n} at depth {}: {set_nodes} nodes, xqzero {:.1} Mnps",
        a.set_depth,
        set_nodes as f64 / set_ours / 1e6
    );
    if has_fsf {
        print!(
            ", Fairy-Stockfish {:.1} Mnps, ratio of totals {:.2}, median ratio per position {:.2} (min {:.2}, max {:.2})",
            set_nodes as f64 / set_theirs / 1e6,
            set_theirs / set_ours,
            median(&ratios),
            ratios.iter().copied().fold(f64::INFINITY, f64::min),
            ratios.iter().copied().fold(0.0, f64::max),
        );
    }
    println!();
    Ok(())
}

/// How long one `go perft` of Fairy-Stockfish may take: far above the slowest
/// measurement of the defaults (the start at depth 5, about 17 s under load) and the
/// start at depth 6 (minutes), so only a hung engine fails the run instead of hanging it.
const FSF_PERFT_TIMEOUT: Duration = Duration::from_secs(3600);

/// Fairy-Stockfish over UCI in its xiangqi variant, through xq-eval's engine client
/// (whose [`UcciEngine::perft`] times `go perft`), its search thread warmed up.
fn start_fsf(binary: &std::path::Path) -> Result<UcciEngine> {
    let mut config = EngineConfig::new(binary, Dialect::Uci);
    config
        .options
        .push(("UCI_Variant".into(), "xiangqi".into()));
    config.one_based_ranks = true;
    let mut fsf = UcciEngine::start(config).with_context(|| {
        format!(
            "cannot start Fairy-Stockfish {} (install it with scripts/setup, or pass --no-fsf)",
            binary.display()
        )
    })?;
    fsf.perft(&Position::startpos(), 2, FSF_PERFT_TIMEOUT)
        .context("Fairy-Stockfish's warm-up perft failed")?;
    Ok(fsf)
}

/// The Python that runs `xqz bench train`'s PyTorch reference: `$XQZ_PYTHON` (which
/// `scripts/env.sh` sets), else the project's `.venv/bin/python`, the project being the
/// current directory when it has a `.venv`, else the source tree this binary was built
/// from. The one place in xqzero's code that knows where the virtualenv is: the
/// libraries take the interpreter as an argument.
fn project_python() -> PathBuf {
    if let Some(python) = std::env::var_os("XQZ_PYTHON") {
        return python.into();
    }
    let here = std::env::current_dir().unwrap_or_default();
    let root = if here.join(".venv").is_dir() {
        here
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    };
    root.join(".venv/bin/python")
}

/// `xqz bench train`: see [`What::Train`]; the PyTorch side runs with
/// [`project_python`].
fn bench_train(a: &TrainBenchArgs) -> Result<()> {
    use xq_train::bench::{
        TrainBenchOptions, compare_train, evaluator_throughput, rust_train_throughput,
    };
    let net = xq_train::NetConfig::preset(&a.net)
        .with_context(|| format!("--net {:?}: expected small, medium or large", a.net))?;
    let device: xq_train::DeviceChoice = a
        .device
        .parse()
        .with_context(|| format!("--device {:?}", a.device))?;
    ensure!(
        a.batch > 0 && a.steps > 0 && a.rounds > 0,
        "--batch, --steps and --rounds must be at least 1"
    );
    ensure!(
        a.eval_batches.iter().all(|&b| b > 0),
        "--eval-batches must be positive"
    );
    xq_train::set_num_threads(a.threads);
    let opts = TrainBenchOptions {
        net: net.clone(),
        batch_size: a.batch,
        steps: a.steps,
        rounds: a.rounds,
        threads: a.threads,
        device,
        ..TrainBenchOptions::default()
    };
    println!(
        "train: net {}x{} batch {} steps {} rounds {} device {device}",
        net.blocks, net.channels, opts.batch_size, opts.steps, opts.rounds
    );
    if a.no_python {
        let r = rust_train_throughput(&opts)?;
        println!("train: rust {:.0} samples/s", r.samples_per_sec);
    } else {
        let c = compare_train(&project_python(), &opts)?;
        println!(
            "train: rust {:.0} samples/s, pytorch {:.0} samples/s, ratio {:.2}x (both on {})",
            c.rust.samples_per_sec, c.python.samples_per_sec, c.ratio, c.rust.device
        );
    }
    if !a.eval_batches.is_empty() {
        let options = xq_train::EvaluatorOptions {
            device,
            threads: a.threads,
            ..Default::default()
        };
        let cuda = xq_train::tch_device(device).is_cuda();
        let inference = xq_nn::Inference {
            backend: if cuda {
                xq_nn::InferenceBackend::TorchCuda
            } else {
                xq_nn::InferenceBackend::Torch
            },
            precision: xq_train::evaluator::resolve_precision(xq_nn::Precision::Auto, None, cuda),
        };
        for r in evaluator_throughput(&net, options, &a.eval_batches, a.eval_seconds)? {
            println!(
                "evaluator ({inference}): batch {:>4}: {:>9.0} positions/s",
                r.batch_size, r.positions_per_sec
            );
        }
        if a.eval_stages {
            let stages =
                xq_train::bench::evaluator_stages(&net, options, &a.eval_batches, a.eval_seconds)?;
            println!(
                "stages ({inference}), ms per call: batch | encode | copy in | forward | copy out | gather | packed pos/s | unpacked pos/s | packed/unpacked | logit diff"
            );
            for r in stages {
                println!(
                    "stages: {:>5} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} | {:.0} | {:.2}x | {:.1e}",
                    r.batch_size,
                    r.encode_ms,
                    r.copy_in_ms,
                    r.forward_ms,
                    r.copy_out_ms,
                    r.gather_ms,
                    r.positions_per_sec,
                    r.unpacked_positions_per_sec,
                    r.positions_per_sec / r.unpacked_positions_per_sec,
                    r.logit_diff
                );
                match &r.eager {
                    None => println!("stages: {:>5} | CUDA graphs replayed", r.batch_size),
                    Some(why) => println!("stages: {:>5} | calls ran eagerly: {why}", r.batch_size),
                }
            }
        }
    }
    Ok(())
}

/// A CPU-bound process (a shell busy loop) pinned to one core with `taskset`, killed
/// when dropped.
struct Hog(Child);

impl Hog {
    fn start(core: usize) -> Result<Hog> {
        let child = Command::new("taskset")
            .args(["-c", &core.to_string(), "sh", "-c", "while :; do :; done"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .context("cannot start the competing process (taskset, from util-linux)")?;
        Ok(Hog(child))
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `xqz bench contention`: see [`What::Contention`]. Every arm loads the same randomly
/// initialised network, written once as a checkpoint, through the backend it names
/// ([`xq_pipeline::backend::load_as`]; `auto` through a [`ProcessBackend`] of its own,
/// whose decision is printed), so the arms differ in the backend alone.
///
/// [`ProcessBackend`]: xq_pipeline::backend::ProcessBackend
fn bench_contention(a: &ContentionArgs) -> Result<()> {
    use xq_nn::{Inference, InferenceBackend, NetworkBackend};
    use xq_pipeline::backend::{ProcessBackend, load_as};
    use xq_selfplay::{RunOptions, Snapshot};
    ensure!(
        a.seconds > 0.0 && a.rounds > 0,
        "--seconds and --rounds must be positive"
    );
    let mut backends = a.backends.clone();
    if a.native && !backends.contains(&BenchBackend::Fixed(Inference::NATIVE_F32)) {
        backends.push(BenchBackend::Fixed(Inference::NATIVE_F32));
    }
    ensure!(!backends.is_empty(), "--backends names none");
    for b in &backends {
        if let BenchBackend::Fixed(i) = b {
            ensure!(
                i.backend != InferenceBackend::TorchCuda,
                "--backends {i}: this benchmark runs on the CPU"
            );
        }
    }
    let cfg = xq_pipeline::config::RunConfig::load(&a.config)?;
    let mut selfplay = cfg.selfplay.clone();
    if let Some(t) = a.threads {
        selfplay.threads = t;
    }
    if let Some(w) = a.eval_workers {
        selfplay.eval_workers = w;
    }
    if let Some(n) = a.servers {
        selfplay.servers = n;
    }
    let net = cfg.train.trainer.net.clone();
    let load_options = xq_nn::LoadOptions {
        device: xq_nn::DeviceChoice::Cpu,
        ..xq_pipeline::selfplay::evaluator_options(&selfplay)
    };
    let options = xq_train::EvaluatorOptions::from(&load_options);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "contention: {} ({}x{} network, {} games at once, {} search threads, {} servers, \
         max batch {}, evaluator: {} copies of {} threads), {} cores available, {} s a \
         measurement, {} rounds, backends {}",
        a.config.display(),
        net.blocks,
        net.channels,
        selfplay.parallel_games,
        selfplay.search_threads,
        selfplay.servers,
        selfplay.max_batch,
        options.workers.max(1),
        // With several copies the evaluator runs each on at least one thread.
        if options.workers > 1 {
            options.threads.max(1)
        } else {
            options.threads
        },
        cores,
        a.seconds,
        a.rounds,
        backends
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let dir = std::env::temp_dir().join(format!("xqz-bench-contention-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = (|| -> Result<()> {
        let peak = xq_train::bench::evaluator_throughput(
            &net,
            options,
            &[selfplay.max_batch],
            a.seconds.min(5.0),
        )?;
        let peak = peak.first().map_or(0.0, |r| r.positions_per_sec);
        // One checkpoint for every arm: the same weights whatever the backend.
        let net_dir = dir.join("net");
        drop(xq_train::bench::scratch_evaluator(&net_dir, &net, options)?);
        // `auto` measures once, as a process does, and keeps its decision.
        let auto = ProcessBackend::new(
            xq_nn::BackendChoice::Auto,
            xq_nn::Precision::Auto,
            false,
            xq_nn::cpu_has_bf16(),
        )?;
        let measure = |seed: u64, backend: BenchBackend| -> Result<(Snapshot, Inference)> {
            let (evaluator, inference) = match backend {
                BenchBackend::Fixed(i) => (load_as(&net_dir, &load_options, i)?, i),
                BenchBackend::Auto => {
                    let ev = auto.load(&net_dir, &load_options)?;
                    let chosen = auto
                        .inference(&load_options)
                        .context("the automatic choice named no backend")?;
                    (ev, chosen)
                }
            };
            let options = RunOptions {
                run_dir: None,
                games: None,
                seed,
                worker_id: Some("bench".into()),
                deadline: Some(Instant::now() + std::time::Duration::from_secs_f64(a.seconds)),
                ..RunOptions::default()
            };
            let stats = xq_selfplay::run(
                &selfplay,
                &options,
                evaluator,
                Box::new(xq_selfplay::NoModelUpdates),
            )?
            .stats;
            Ok((stats, inference))
        };
        let reference = backends[0];
        let mut idle: Vec<Vec<f64>> = vec![Vec::new(); backends.len()];
        let (mut busy, mut evals) = (Vec::new(), Vec::new());
        let mut used: Vec<Option<Inference>> = vec![None; backends.len()];
        for round in 0..a.rounds {
            for (k, &b) in backends.iter().enumerate() {
                let (s, inference) = measure(round as u64, b)?;
                if b == BenchBackend::Auto && used[k].is_none() {
                    for d in auto.decisions() {
                        println!("auto: chose {d}");
                    }
                }
                used[k] = Some(inference);
                println!(
                    "round {}: idle {:<10} ({inference}) {}",
                    round + 1,
                    b.to_string(),
                    xq_selfplay::bench::report(&s)
                );
                idle[k].push(s.positions_per_sec());
                if k == 0 {
                    evals.push(s.evals_per_sec());
                }
            }
            let hog = Hog::start(a.core)?;
            let (s, inference) = measure(round as u64, reference)?;
            drop(hog);
            println!(
                "round {}: contended {:<10} ({inference}) {}",
                round + 1,
                reference.to_string(),
                xq_selfplay::bench::report(&s)
            );
            busy.push(s.positions_per_sec());
        }
        let idle: Vec<f64> = idle.iter().map(|v| median(v)).collect();
        let (busy, evals) = (median(&busy), median(&evals));
        for (k, b) in backends.iter().enumerate() {
            let name = used[k].map_or_else(|| b.to_string(), |i| i.to_string());
            println!(
                "self-play idle, {b} ({name}): {:.1} positions/s = {:.2}x {reference}'s \
                 (medians of {} rounds)",
                idle[k],
                idle[k] / idle[0].max(f64::MIN_POSITIVE),
                a.rounds
            );
        }
        println!(
            "evaluator peak at batch {} (torch-f32): {:.0} positions/s",
            selfplay.max_batch, peak
        );
        println!(
            "self-play idle, {reference}: {:.1} positions/s, {evals:.0} network positions/s \
             = {:.0}% of the torch-f32 evaluator's peak",
            idle[0],
            100.0 * evals / peak.max(f64::MIN_POSITIVE)
        );
        println!(
            "self-play beside a CPU-bound process on core {}, {reference}: {busy:.1} \
             positions/s = {:.0}% of idle (medians of {} rounds)",
            a.core,
            100.0 * busy / idle[0].max(f64::MIN_POSITIVE),
            a.rounds
        );
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
