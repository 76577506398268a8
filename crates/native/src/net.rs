//! The residual policy/value network of `xq_train::net`, evaluated natively for inference.
//!
//! Loading folds every batch norm into the convolution before it (inference uses the
//! running statistics, so `γ(Wx − μ)/√(σ²+ε) + β` is one convolution with scaled weights
//! and a bias), so a forward pass is convolutions, biases and ReLUs only.
//!
//! **Layout.** Activations are `channels × (batch · 90)`: one row per channel, the
//! positions of the whole batch side by side. A 3×3 convolution is then one GEMM
//! (`cout × 9·cin` weights, exactly torch's `[cout][cin][3][3]` order, times the
//! `9·cin × batch·90` im2col matrix), whose wide right-hand side keeps the GEMM
//! efficient from batch 1 (90 columns) up; a batch is taken in parts whose im2col
//! matrix fits the L2 cache ([`NativeNet::chunk`]). Winograd F(2×2,3×3) was built
//! and measured against this in the same runs (`examples/native_speed`, AMD EPYC,
//! transforms in plain Rust, 16 GEMMs a layer over 5 × 5 tiles of the board): at batch
//! 16-64 it reached 2,000-3,160 positions/s against 2,980-3,360 for the 3×32 network
//! and 78-92 against 90-100 for 10×128. On a 10×9 board it saves 810/400 ≈ 2× of the
//! multiplies, not 2.25× (a tenth file is computed and dropped), and at these channel
//! counts the tile transforms and the sixteen small GEMMs cost more than that.
//!
//! **Sparse input layer.** The first convolution reads `15·history + 11` planes that
//! are almost all zero (piece planes hold at most 32 ones per history step) or constant
//! over the board (side to move, counters, ones, material). It runs as a gather-add, as
//! NNUE's first layer does: each non-zero point of a plane adds its value times one
//! weight column to the (at most) nine outputs it touches; a plane that is constant over
//! the board adds its value times a precomputed sum of the kernel taps that land on the
//! board, which depends only on whether the output point is on an edge.
//!
//! The GEMMs are the `gemm` crate's, whose kernels are chosen at run time for the CPU:
//! AVX-512 where it exists (the `x86-v4` feature), AVX2/FMA otherwise. On the Intel Xeon
//! with AVX-512 they took the native backend from 0.81-0.85× of libtorch f32 (MKL) to
//! 1.1-1.2× for the 4×48 network, and from 0.51× to 0.95× for 10×128, against
//! matrixmultiply's AVX2 kernels (docs/BENCHMARKS.md, "Native CPU inference").

use xq_nn::checkpoint::NetConfig;
use xq_nn::encode::{BOARD_FILES, BOARD_RANKS, FULL_MASK, PLANE_SIZE, PackedPlane};
use xq_nn::policy::{HeadShapes, POLICY_SIZE, head_shapes};

use crate::error::NativeError;
use crate::weights::Tensors;

/// Batch-norm epsilon (PyTorch's default, as the trainer uses).
const BN_EPS: f64 = 1e-5;
/// Taps of a 3×3 kernel.
const TAPS: usize = 9;
/// The most bytes of im2col matrix a forward pass builds at once (see
/// [`NativeNet::chunk`]). Swept with `examples/native_speed` and a local edit of this
/// constant (the outputs were not kept) on the Intel Xeon (AVX-512, 2 MiB of L2 a core)
/// with the `gemm` crate's kernels, 256 KiB to 8 MiB, 0.6 s a measurement: at
/// batch 16-64, 512 KiB gave 5.3-5.5k positions/s for 3×32 and 2.5k for 4×48, 1 MiB
/// 4.6-5.1k and 2.4-2.5k, 8 MiB (whole batches) 4.0-5.5k and 1.6-2.6k. On the AMD
/// EPYC (1 MiB of L2, matrixmultiply) 1 MiB parts ran at 95-98% of batch 16's speed
/// where whole batches of 64 ran at 64-88%.
const COL_BYTES: usize = 1 << 19;

/// `c = a · b + c` for row-major `a` (`m × k`), `b` (`k × n`) and `c` (`m × n`).
fn gemm_acc(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    // Row-major: element (i, j) of an `r × cols` matrix is at `i · cols + j`.
    sgemm_acc(m, k, n, a, (k, 1), b, (n, 1), c);
}

/// `c = a · wᵀ + c` for row-major `a` (`m × k`), `w` (`n × k`: a linear layer's weight)
/// and `c` (`m × n`).
fn gemm_acc_bt(m: usize, k: usize, n: usize, a: &[f32], w: &[f32], c: &mut [f32]) {
    // wᵀ's element (i, j) is w's (j, i), at `j · k + i`.
    sgemm_acc(m, k, n, a, (k, 1), w, (1, k), c);
}

/// `c = a · b + c` for `a` (`m × k`) and `b` (`k × n`) with the given (row, column)
/// strides and a row-major `c` (`m × n`), through the `gemm` crate, whose kernels are
/// chosen at run time for the CPU (AVX-512 where it exists, AVX2/FMA otherwise).
#[allow(clippy::too_many_arguments)]
fn sgemm_acc(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    (a_rs, a_cs): (usize, usize),
    b: &[f32],
    (b_rs, b_cs): (usize, usize),
    c: &mut [f32],
) {
    if m == 0 || n == 0 || k == 0 {
        // Nothing to write, or `c += 0`.
        return;
    }
    // The last element each matrix is read or written at must be in its slice; these
    // checks are what make the raw-pointer call below sound.
    let last = |rows: usize, cols: usize, rs: usize, cs: usize| (rows - 1) * rs + (cols - 1) * cs;
    assert!(last(m, k, a_rs, a_cs) < a.len(), "a is not {m} × {k}");
    assert!(last(k, n, b_rs, b_cs) < b.len(), "b is not {k} × {n}");
    assert!(m * n <= c.len(), "c is not {m} × {n}");
    let stride = |s: usize| isize::try_from(s).expect("a stride fits isize");
    // SAFETY: the asserts above keep every element the call reads (a, b) or reads and
    // writes (c) inside its slice; `c` is borrowed mutably, so it aliases neither input.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            stride(n),
            true,
            a.as_ptr(),
            stride(a_cs),
            stride(a_rs),
            b.as_ptr(),
            stride(b_cs),
            stride(b_rs),
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Fills each row `r` of `x` (`rows × cols`) with `bias[r]`.
fn fill_rows(x: &mut [f32], bias: &[f32], cols: usize) {
    for (row, &b) in x.chunks_exact_mut(cols).zip(bias) {
        row.fill(b);
    }
}

/// Adds `bias[r]` to each row `r` of `x` (`rows × cols`).
fn add_rows(x: &mut [f32], bias: &[f32], cols: usize) {
    for (row, &b) in x.chunks_exact_mut(cols).zip(bias) {
        row.iter_mut().for_each(|v| *v += b);
    }
}

fn relu(x: &mut [f32]) {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
}

/// A batch norm's scale and shift: `y = scale · x + shift`.
fn batch_norm(t: &mut Tensors, name: &str, c: usize) -> Result<(Vec<f32>, Vec<f32>), NativeError> {
    let gamma = t.take(&format!("{name}.weight"), &[c])?;
    let beta = t.take(&format!("{name}.bias"), &[c])?;
    let mean = t.take(&format!("{name}.running_mean"), &[c])?;
    let var = t.take(&format!("{name}.running_var"), &[c])?;
    let scale: Vec<f32> = (0..c)
        .map(|i| (f64::from(gamma[i]) / (f64::from(var[i]) + BN_EPS).sqrt()) as f32)
        .collect();
    let shift = (0..c)
        .map(|i| (f64::from(beta[i]) - f64::from(mean[i]) * f64::from(scale[i])) as f32)
        .collect();
    Ok((scale, shift))
}

/// A convolution (`cout × cin × k × k` weights, no bias) with its batch norm folded in:
/// weights `cout × (cin · k²)` and a bias per output channel.
fn folded_conv(
    t: &mut Tensors,
    conv: &str,
    bn: &str,
    cin: usize,
    cout: usize,
    k: usize,
) -> Result<Dense, NativeError> {
    let mut w = t.take(&format!("{conv}.weight"), &[cout, cin, k, k])?;
    let (scale, shift) = batch_norm(t, bn, cout)?;
    for (row, s) in w.chunks_exact_mut(cin * k * k).zip(&scale) {
        row.iter_mut().for_each(|v| *v *= s);
    }
    Ok(Dense {
        rows: cout,
        cols: cin * k * k,
        w,
        b: shift,
    })
}

/// A weight matrix `rows × cols` (row-major) and a bias per row: a linear layer, a 1×1
/// convolution, or a 3×3 convolution over im2col columns.
#[derive(Debug, Clone)]
struct Dense {
    rows: usize,
    cols: usize,
    w: Vec<f32>,
    b: Vec<f32>,
}

impl Dense {
    fn linear(t: &mut Tensors, name: &str, cin: usize, cout: usize) -> Result<Dense, NativeError> {
        Ok(Dense {
            rows: cout,
            cols: cin,
            w: t.take(&format!("{name}.weight"), &[cout, cin])?,
            b: t.take(&format!("{name}.bias"), &[cout])?,
        })
    }

    /// `out (rows × m) = w · x (cols × m) + b`.
    fn apply_cols(&self, x: &[f32], m: usize, out: &mut [f32]) {
        let out = &mut out[..self.rows * m];
        fill_rows(out, &self.b, m);
        gemm_acc(self.rows, self.cols, m, &self.w, x, out);
    }

    /// `out (n × rows) = x (n × cols) · wᵀ + b`: a linear layer over `n` row vectors.
    fn apply_rows(&self, x: &[f32], n: usize, out: &mut [f32]) {
        let out = &mut out[..n * self.rows];
        for row in out.chunks_exact_mut(self.rows) {
            row.copy_from_slice(&self.b);
        }
        gemm_acc_bt(n, self.cols, self.rows, x, &self.w, out);
    }
}

/// The edge class of a board point: which of its 3×3 neighbours exist depends only on
/// whether it is on the first, an inner or the last rank and file (nine classes).
const fn edge_class(point: usize) -> usize {
    let (rank, file) = (point / BOARD_FILES, point % BOARD_FILES);
    let r = if rank == 0 {
        0
    } else if rank == BOARD_RANKS - 1 {
        2
    } else {
        1
    };
    let f = if file == 0 {
        0
    } else if file == BOARD_FILES - 1 {
        2
    } else {
        1
    };
    r * 3 + f
}

/// The first convolution as a gather-add (see the module documentation).
#[derive(Debug, Clone)]
struct SparseStem {
    planes: usize,
    channels: usize,
    /// `planes × 9 taps × channels`: the weights one input point adds through each tap.
    taps: Vec<f32>,
    /// `planes × 9 edge classes × channels`: what a plane of ones adds at a point of
    /// each edge class.
    constant: Vec<f32>,
    bias: Vec<f32>,
}

impl SparseStem {
    fn new(conv: Dense, planes: usize) -> SparseStem {
        let c = conv.rows;
        let mut taps = vec![0.0; planes * TAPS * c];
        for co in 0..c {
            for ci in 0..planes {
                for k in 0..TAPS {
                    taps[(ci * TAPS + k) * c + co] = conv.w[co * planes * TAPS + ci * TAPS + k];
                }
            }
        }
        let mut constant = vec![0.0; planes * TAPS * c];
        for class in 0..TAPS {
            // A representative point of the class.
            let rank = [0, 1, BOARD_RANKS - 1][class / 3] as isize;
            let file = [0, 1, BOARD_FILES - 1][class % 3] as isize;
            for ci in 0..planes {
                let dst = &mut constant[(ci * TAPS + class) * c..][..c];
                for k in 0..TAPS {
                    let (r, f) = (rank + (k / 3) as isize - 1, file + (k % 3) as isize - 1);
                    if (0..BOARD_RANKS as isize).contains(&r)
                        && (0..BOARD_FILES as isize).contains(&f)
                    {
                        let src = &taps[(ci * TAPS + k) * c..][..c];
                        dst.iter_mut().zip(src).for_each(|(d, s)| *d += s);
                    }
                }
            }
        }
        SparseStem {
            planes,
            channels: c,
            taps,
            constant,
            bias: conv.b,
        }
    }

    /// The layer's output (after ReLU) for `n` packed positions ([`PackedPlane`]s,
    /// `planes` each), into `out` (`channels × n·90`); `acc` is scratch.
    fn forward(&self, x: &[PackedPlane], n: usize, acc: &mut Vec<f32>, out: &mut [f32]) {
        let c = self.channels;
        let m = n * PLANE_SIZE;
        acc.resize(PLANE_SIZE * c + TAPS * c, 0.0);
        let (acc, edge) = acc.split_at_mut(PLANE_SIZE * c);
        for (img, input) in x.chunks_exact(self.planes).take(n).enumerate() {
            edge.fill(0.0);
            for p in acc.chunks_exact_mut(c) {
                p.copy_from_slice(&self.bias);
            }
            let mut any_constant = false;
            for (ci, plane) in input.iter().enumerate() {
                let v = plane.value;
                if v == 0.0 {
                    continue;
                }
                if plane.mask == FULL_MASK {
                    any_constant = true;
                    let src = &self.constant[ci * TAPS * c..][..TAPS * c];
                    edge.iter_mut().zip(src).for_each(|(d, s)| *d += v * s);
                    continue;
                }
                let mut bits = plane.mask & FULL_MASK;
                while bits != 0 {
                    let q = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let (qr, qf) = ((q / BOARD_FILES) as isize, (q % BOARD_FILES) as isize);
                    for k in 0..TAPS {
                        // Output p reads input p + (k/3 - 1, k%3 - 1); this input is q.
                        let r = qr - (k / 3) as isize + 1;
                        let f = qf - (k % 3) as isize + 1;
                        if !(0..BOARD_RANKS as isize).contains(&r)
                            || !(0..BOARD_FILES as isize).contains(&f)
                        {
                            continue;
                        }
                        let p = r as usize * BOARD_FILES + f as usize;
                        let w = &self.taps[(ci * TAPS + k) * c..][..c];
                        acc[p * c..][..c]
                            .iter_mut()
                            .zip(w)
                            .for_each(|(a, w)| *a += v * w);
                    }
                }
            }
            if any_constant {
                for (p, a) in acc.chunks_exact_mut(c).enumerate() {
                    let e = &edge[edge_class(p) * c..][..c];
                    a.iter_mut().zip(e).for_each(|(a, e)| *a += e);
                }
            }
            // Transpose to channel rows, with the ReLU.
            for (p, a) in acc.chunks_exact(c).enumerate() {
                for (co, &v) in a.iter().enumerate() {
                    out[co * m + img * PLANE_SIZE + p] = v.max(0.0);
                }
            }
        }
    }
}

/// The im2col matrix of `x` (`c × n·90`, zero padding of one): `9c × n·90`, row
/// `ci · 9 + tap`, in torch's weight order.
fn im2col(x: &[f32], c: usize, n: usize, col: &mut [f32]) {
    let m = n * PLANE_SIZE;
    for ci in 0..c {
        let src_c = &x[ci * m..][..m];
        for k in 0..TAPS {
            let (dr, df) = (k / 3, k % 3);
            let row = &mut col[(ci * TAPS + k) * m..][..m];
            for (dst, src) in row
                .chunks_exact_mut(PLANE_SIZE)
                .zip(src_c.chunks_exact(PLANE_SIZE))
            {
                for (r, d) in dst.chunks_exact_mut(BOARD_FILES).enumerate() {
                    let sr = r + dr;
                    if sr == 0 || sr > BOARD_RANKS {
                        d.fill(0.0);
                        continue;
                    }
                    let s = &src[(sr - 1) * BOARD_FILES..][..BOARD_FILES];
                    match df {
                        0 => {
                            d[0] = 0.0;
                            d[1..].copy_from_slice(&s[..BOARD_FILES - 1]);
                        }
                        1 => d.copy_from_slice(s),
                        _ => {
                            d[..BOARD_FILES - 1].copy_from_slice(&s[1..]);
                            d[BOARD_FILES - 1] = 0.0;
                        }
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Block {
    conv1: Dense,
    gpool: Option<Dense>,
    conv2: Dense,
}

/// Buffers a forward pass reuses from batch to batch (one per evaluating thread).
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    h: Vec<f32>,
    y: Vec<f32>,
    col: Vec<f32>,
    stem: Vec<f32>,
    pooled: Vec<f32>,
    head: Vec<f32>,
    flat: Vec<f32>,
    hidden: Vec<f32>,
}

/// A loaded network; see the module documentation. Immutable: threads share one.
#[derive(Debug, Clone)]
pub struct NativeNet {
    config: NetConfig,
    stem: SparseStem,
    blocks: Vec<Block>,
    policy_conv: Dense,
    policy_out: Dense,
    /// For every policy entry, its row and column in the `shapes × 90` logit map.
    gather: Vec<(u32, u32)>,
    value_conv: Dense,
    value_fc1: Dense,
    value_fc2: Dense,
}

/// The number of move shapes and, for every policy entry, its (shape, from) in the
/// `shapes × 90` logit map ([`xq_nn::policy::head_shapes`], as the trainer's head).
fn policy_gather() -> (usize, Vec<(u32, u32)>) {
    let HeadShapes { shapes, entries } = head_shapes();
    let gather = entries
        .into_iter()
        .map(|(shape, from)| (shape as u32, from as u32))
        .collect();
    (shapes.len(), gather)
}

impl NativeNet {
    /// Builds the network of `config` from the tensors of a trainer's weights file.
    pub(crate) fn from_tensors(
        config: &NetConfig,
        mut t: Tensors,
    ) -> Result<NativeNet, NativeError> {
        let ch = config.channels;
        let planes = config.input_planes();
        let stem = SparseStem::new(
            folded_conv(&mut t, "stem.conv", "stem.bn", planes, ch, 3)?,
            planes,
        );
        let mut blocks = Vec::with_capacity(config.blocks);
        for i in 0..config.blocks {
            let b = format!("blocks.{i}");
            let conv1 = folded_conv(
                &mut t,
                &format!("{b}.conv1"),
                &format!("{b}.bn1"),
                ch,
                ch,
                3,
            )?;
            let gpool = if config.global_pool && i % 3 == 2 {
                Some(Dense::linear(&mut t, &format!("{b}.gpool"), 2 * ch, ch)?)
            } else {
                None
            };
            let conv2 = folded_conv(
                &mut t,
                &format!("{b}.conv2"),
                &format!("{b}.bn2"),
                ch,
                ch,
                3,
            )?;
            blocks.push(Block {
                conv1,
                gpool,
                conv2,
            });
        }
        let (shapes, gather) = policy_gather();
        let policy_conv = folded_conv(&mut t, "policy.conv", "policy.bn", ch, ch, 3)?;
        let policy_out = Dense {
            rows: shapes,
            cols: ch,
            w: t.take("policy.out.weight", &[shapes, ch, 1, 1])?,
            b: t.take("policy.out.bias", &[shapes])?,
        };
        let vh = config.value_channels;
        let value_conv = folded_conv(&mut t, "value.conv", "value.bn", ch, vh, 1)?;
        let value_fc1 = Dense::linear(&mut t, "value.fc1", vh * PLANE_SIZE, config.value_hidden)?;
        let value_fc2 = Dense::linear(&mut t, "value.fc2", config.value_hidden, 3)?;
        t.finish()?;
        Ok(NativeNet {
            config: config.clone(),
            stem,
            blocks,
            policy_conv,
            policy_out,
            gather,
            value_conv,
            value_fc1,
            value_fc2,
        })
    }

    /// The architecture.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Packed planes of one position ([`PackedPlane`], `config().encoder().planes()`).
    pub fn input_len(&self) -> usize {
        self.config.encoder().planes()
    }

    /// Policy logits (`n × 2086`) and value logits (`n × 3`) of `n` packed positions
    /// (`n × planes` [`PackedPlane`]s, as `xq_nn::encode::encode_packed_into` writes
    /// them), the same outputs as the trainer's `Net::forward` in inference mode. The
    /// first layer reads the packed planes as they are (see the module documentation).
    ///
    /// # Errors
    /// [`NativeError::BadBatch`] when `inputs` does not hold `n` positions.
    pub fn forward(
        &self,
        inputs: &[PackedPlane],
        n: usize,
        s: &mut Scratch,
    ) -> Result<(Vec<f32>, Vec<f32>), NativeError> {
        if inputs.len() != n * self.input_len() {
            return Err(NativeError::BadBatch(format!(
                "{} packed planes for {n} positions of {} planes each",
                inputs.len(),
                self.input_len()
            )));
        }
        let mut policy = Vec::with_capacity(n * POLICY_SIZE);
        let mut value = Vec::with_capacity(n * 3);
        let chunk = self.chunk();
        for part in inputs.chunks(chunk * self.input_len()) {
            self.forward_part(
                part,
                part.len() / self.input_len(),
                s,
                &mut policy,
                &mut value,
            );
        }
        Ok((policy, value))
    }

    /// Positions a forward pass takes at once: as many as keep a layer's im2col matrix
    /// within [`COL_BYTES`], so that it and the activations stay in the core's L2
    /// cache (a whole batch of 64 would stream them from memory, at about half the
    /// speed).
    fn chunk(&self) -> usize {
        let per_position = TAPS * self.config.channels * PLANE_SIZE * size_of::<f32>();
        (COL_BYTES / per_position).max(1)
    }

    /// [`NativeNet::forward`] of `n` positions, appending their outputs.
    fn forward_part(
        &self,
        inputs: &[PackedPlane],
        n: usize,
        s: &mut Scratch,
        policy: &mut Vec<f32>,
        value: &mut Vec<f32>,
    ) {
        let ch = self.config.channels;
        let m = n * PLANE_SIZE;
        s.h.resize(ch * m, 0.0);
        s.y.resize(ch * m, 0.0);
        s.col.resize(TAPS * ch * m, 0.0);
        self.stem.forward(inputs, n, &mut s.stem, &mut s.h);
        for block in &self.blocks {
            im2col(&s.h, ch, n, &mut s.col);
            block.conv1.apply_cols(&s.col, m, &mut s.y);
            relu(&mut s.y);
            if let Some(fc) = &block.gpool {
                self.global_pool_bias(fc, n, s);
            }
            im2col(&s.y, ch, n, &mut s.col);
            // h ← relu(h + conv2(y)): the residual is the GEMM's accumulator.
            add_rows(&mut s.h, &block.conv2.b, m);
            gemm_acc(ch, block.conv2.cols, m, &block.conv2.w, &s.col, &mut s.h);
            relu(&mut s.h);
        }
        // Policy head: 3×3 conv, ReLU, 1×1 conv to one logit per (shape, from), gather.
        im2col(&s.h, ch, n, &mut s.col);
        self.policy_conv.apply_cols(&s.col, m, &mut s.y);
        relu(&mut s.y);
        s.head.resize(self.policy_out.rows * m, 0.0);
        self.policy_out.apply_cols(&s.y, m, &mut s.head);
        for img in 0..n {
            let base = img * PLANE_SIZE;
            policy.extend(
                self.gather
                    .iter()
                    .map(|&(shape, from)| s.head[shape as usize * m + base + from as usize]),
            );
        }
        // Value head: 1×1 conv, ReLU, flatten (channel-major per position), two linears.
        let vh = self.value_conv.rows;
        s.head.resize(vh * m, 0.0);
        self.value_conv.apply_cols(&s.h, m, &mut s.head);
        relu(&mut s.head[..vh * m]);
        s.flat.resize(n * vh * PLANE_SIZE, 0.0);
        for (img, dst) in s.flat.chunks_exact_mut(vh * PLANE_SIZE).enumerate() {
            for (c, d) in dst.chunks_exact_mut(PLANE_SIZE).enumerate() {
                d.copy_from_slice(&s.head[c * m + img * PLANE_SIZE..][..PLANE_SIZE]);
            }
        }
        let hidden = self.value_fc1.rows;
        s.hidden.resize(n * hidden, 0.0);
        self.value_fc1.apply_rows(&s.flat, n, &mut s.hidden);
        relu(&mut s.hidden);
        let at = value.len();
        value.resize(at + n * 3, 0.0);
        self.value_fc2.apply_rows(&s.hidden, n, &mut value[at..]);
    }

    /// KataGo's global pooling bias: each position's per-channel mean and max of `s.y`
    /// through `fc`, added to every point of that channel.
    fn global_pool_bias(&self, fc: &Dense, n: usize, s: &mut Scratch) {
        let ch = self.config.channels;
        let m = n * PLANE_SIZE;
        s.pooled.resize(n * 2 * ch, 0.0);
        for c in 0..ch {
            for img in 0..n {
                let plane = &s.y[c * m + img * PLANE_SIZE..][..PLANE_SIZE];
                let sum: f32 = plane.iter().sum();
                let max = plane.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                s.pooled[img * 2 * ch + c] = sum / PLANE_SIZE as f32;
                s.pooled[img * 2 * ch + ch + c] = max;
            }
        }
        s.hidden.resize(n * ch, 0.0);
        fc.apply_rows(&s.pooled, n, &mut s.hidden);
        for c in 0..ch {
            for img in 0..n {
                let b = s.hidden[img * ch + c];
                s.y[c * m + img * PLANE_SIZE..][..PLANE_SIZE]
                    .iter_mut()
                    .for_each(|v| *v += b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gather_covers_the_index_with_fifty_move_shapes() {
        let (shapes, gather) = policy_gather();
        assert_eq!(shapes, 50);
        assert_eq!(gather.len(), POLICY_SIZE);
        let mut seen: Vec<_> = gather.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), POLICY_SIZE, "two policy entries share a logit");
    }

    #[test]
    fn gemms_accumulate_row_major_and_transposed_products() {
        // a = [[1, 2, 3], [4, 5, 6]], b = [[1, 0], [0, 1], [1, 1]].
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let mut c = [1.0; 4];
        gemm_acc(2, 3, 2, &a, &b, &mut c);
        assert_eq!(c, [5.0, 6.0, 11.0, 12.0]);
        // w = bᵀ (2 × 3), so a · wᵀ = a · b.
        let w = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0];
        let mut c = [1.0; 4];
        gemm_acc_bt(2, 3, 2, &a, &w, &mut c);
        assert_eq!(c, [5.0, 6.0, 11.0, 12.0]);
        // Empty products change nothing and do not panic.
        let mut c = [7.0; 4];
        gemm_acc(2, 0, 2, &[], &[], &mut c);
        gemm_acc(0, 3, 2, &[], &b, &mut c);
        assert_eq!(c, [7.0; 4]);
    }

    #[test]
    fn edge_classes_tell_corners_edges_and_inside_apart() {
        assert_eq!(edge_class(0), 0);
        assert_eq!(edge_class(4), 1);
        assert_eq!(edge_class(8), 2);
        assert_eq!(edge_class(40), 4);
        assert_eq!(edge_class(89), 8);
    }

    #[test]
    fn im2col_shifts_with_zero_padding() {
        // One channel, one position: x[p] = p + 1.
        let x: Vec<f32> = (0..PLANE_SIZE).map(|p| p as f32 + 1.0).collect();
        let mut col = vec![f32::NAN; TAPS * PLANE_SIZE];
        im2col(&x, 1, 1, &mut col);
        let at = |k: usize, r: usize, f: usize| col[k * PLANE_SIZE + r * BOARD_FILES + f];
        assert_eq!(at(4, 3, 3), x[3 * 9 + 3], "centre tap");
        assert_eq!(
            at(0, 3, 3),
            x[2 * 9 + 2],
            "up-left tap reads rank-1, file-1"
        );
        assert_eq!(at(8, 3, 3), x[4 * 9 + 4]);
        assert_eq!(at(0, 0, 3), 0.0, "above the board");
        assert_eq!(at(2, 3, 8), 0.0, "right of the board");
        assert!(col.iter().all(|v| !v.is_nan()));
    }
}
