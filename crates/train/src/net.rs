//! The residual network: a tower of 3×3 residual blocks with batch norm, a convolutional
//! policy head over the fixed 2,086-move index and a win/draw/loss value head.
//!
//! Layers are written out here (rather than using `tch::nn::Conv2D` and friends) so the
//! forward pass can run its convolutions and matrix products in bf16 while the weights,
//! batch-norm statistics and optimiser state stay f32 (manual mixed precision: tch's
//! `autocast` only offers CUDA fp16, which would need loss scaling).
//!
//! **Policy head.** Instead of a fully connected layer over the whole board (6M weights for
//! 32 channels), the head predicts, for every source point, one logit per move *shape*
//! (the 50 distinct (file, rank) displacements of the index: 34 straight lines, 8 horse
//! jumps, 4 advisor and 4 elephant diagonals) and gathers the 2,086 legal-somewhere
//! (from, to) pairs from that `50 × 90` map, as lc0's convolutional policy head does. The
//! gather table is derived from `xq_nn::policy`, so it follows the index by construction.

use tch::nn::{self, Init};
use tch::{Device, Kind, TchError, Tensor};
use xq_nn::encode::{BOARD_FILES, BOARD_RANKS, PLANE_SIZE};
use xq_nn::policy::{HeadShapes, head_shapes};

use crate::config::NetConfig;

/// Batch-norm momentum and epsilon (PyTorch's defaults, so the Python reference matches).
const BN_MOMENTUM: f64 = 0.1;
const BN_EPS: f64 = 1e-5;

/// Serialises weight initialisation. torch's RNG is global to the process: a trainer
/// seeds it and draws its initial weights while holding this lock, and everything else
/// that builds a network (drawing random values it then overwrites) holds it too, so a
/// seed gives the same weights whatever other threads do meanwhile.
pub(crate) fn init_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Casts `t` to `kind` unless it already is (a no-op costs nothing then).
fn cast(t: &Tensor, kind: Kind) -> Result<Tensor, TchError> {
    if t.kind() == kind {
        Ok(t.shallow_clone())
    } else {
        t.f_to_kind(kind)
    }
}

#[derive(Debug)]
struct Conv {
    w: Tensor,
    b: Option<Tensor>,
    padding: i64,
}

impl Conv {
    fn new(
        p: nn::Path<'_>,
        cin: usize,
        cout: usize,
        k: usize,
        bias: bool,
    ) -> Result<Conv, TchError> {
        let (cin, cout, k) = (cin as i64, cout as i64, k as i64);
        let w = p.f_var(
            "weight",
            &[cout, cin, k, k],
            nn::init::DEFAULT_KAIMING_NORMAL,
        )?;
        let b = if bias {
            Some(p.f_var("bias", &[cout], Init::Const(0.0))?)
        } else {
            None
        };
        Ok(Conv {
            w,
            b,
            padding: k / 2,
        })
    }

    fn forward(&self, x: &Tensor, kind: Kind) -> Result<Tensor, TchError> {
        let w = cast(&self.w, kind)?;
        let b = self.b.as_ref().map(|b| cast(b, kind)).transpose()?;
        x.f_conv2d(
            &w,
            b.as_ref(),
            [1, 1],
            [self.padding, self.padding],
            [1, 1],
            1,
        )
    }
}

#[derive(Debug)]
struct Linear {
    w: Tensor,
    b: Tensor,
}

impl Linear {
    fn new(p: nn::Path<'_>, cin: usize, cout: usize, init: Init) -> Result<Linear, TchError> {
        Ok(Linear {
            w: p.f_var("weight", &[cout as i64, cin as i64], init)?,
            b: p.f_var("bias", &[cout as i64], Init::Const(0.0))?,
        })
    }

    fn forward(&self, x: &Tensor, kind: Kind) -> Result<Tensor, TchError> {
        x.f_linear(&cast(&self.w, kind)?, Some(&cast(&self.b, kind)?))
    }
}

#[derive(Debug)]
struct BatchNorm {
    w: Tensor,
    b: Tensor,
    mean: Tensor,
    var: Tensor,
}

impl BatchNorm {
    /// `gamma` is the initial scale: 1, or 0 for the last norm of a residual branch so
    /// every block starts as the identity (stabilises early training of deep towers).
    fn new(p: nn::Path<'_>, c: usize, gamma: f64) -> Result<BatchNorm, TchError> {
        let c = c as i64;
        Ok(BatchNorm {
            w: p.f_var("weight", &[c], Init::Const(gamma))?,
            b: p.f_var("bias", &[c], Init::Const(0.0))?,
            mean: p.f_zeros_no_train("running_mean", &[c])?,
            var: p.f_ones_no_train("running_var", &[c])?,
        })
    }

    fn forward(&self, x: &Tensor, train: bool) -> Result<Tensor, TchError> {
        x.f_batch_norm(
            Some(&self.w),
            Some(&self.b),
            Some(&self.mean),
            Some(&self.var),
            train,
            BN_MOMENTUM,
            BN_EPS,
            true,
        )
    }
}

#[derive(Debug)]
struct Block {
    conv1: Conv,
    bn1: BatchNorm,
    gpool: Option<Linear>,
    conv2: Conv,
    bn2: BatchNorm,
}

impl Block {
    fn forward(&self, x: &Tensor, train: bool, kind: Kind) -> Result<Tensor, TchError> {
        let mut y = self
            .bn1
            .forward(&self.conv1.forward(x, kind)?, train)?
            .f_relu()?;
        if let Some(fc) = &self.gpool {
            let bias = fc.forward(&global_pool(&y)?, kind)?;
            let (n, c) = (bias.size()[0], bias.size()[1]);
            y = y.f_add(&bias.f_view([n, c, 1, 1])?)?;
        }
        let y = self.bn2.forward(&self.conv2.forward(&y, kind)?, train)?;
        x.f_add(&y)?.f_relu()
    }
}

/// Mean and max over the board, concatenated: `N×C×10×9 → N×2C`.
fn global_pool(x: &Tensor) -> Result<Tensor, TchError> {
    let mean = x.f_mean_dim([2i64, 3].as_slice(), false, None::<Kind>)?;
    let max = x.f_amax([2i64, 3], false)?;
    Tensor::f_cat(&[mean, max], 1)
}

/// The distinct (file, rank) displacements of the policy index, sorted, and for every
/// policy entry its position in the flattened `shapes × 90` logit map
/// (`shape × 90 + from`), from [`xq_nn::policy::head_shapes`].
pub fn policy_gather_table() -> (Vec<(i32, i32)>, Vec<i64>) {
    let HeadShapes { shapes, entries } = head_shapes();
    let gather = entries
        .into_iter()
        .map(|(shape, from)| (shape * PLANE_SIZE + from) as i64)
        .collect();
    (shapes, gather)
}

/// The network. Variables live in the `VarStore` it was built on; names are stable
/// (`stem.conv.weight`, `blocks.3.bn2.running_var`, `policy.out.bias`, …) because
/// checkpoints are keyed by them.
#[derive(Debug)]
pub struct Net {
    config: NetConfig,
    stem: Conv,
    stem_bn: BatchNorm,
    blocks: Vec<Block>,
    policy_conv: Conv,
    policy_bn: BatchNorm,
    policy_out: Conv,
    gather: Tensor,
    value_conv: Conv,
    value_bn: BatchNorm,
    value_fc1: Linear,
    value_fc2: Linear,
}

impl Net {
    /// Builds the network's variables under `p` (random initialisation from torch's RNG:
    /// call `tch::manual_seed` first for reproducible weights).
    pub fn new(p: &nn::Path<'_>, config: &NetConfig) -> Result<Net, TchError> {
        let ch = config.channels;
        let (shapes, gather) = policy_gather_table();
        let stem = Conv::new(p / "stem" / "conv", config.input_planes(), ch, 3, false)?;
        let stem_bn = BatchNorm::new(p / "stem" / "bn", ch, 1.0)?;
        let mut blocks = Vec::with_capacity(config.blocks);
        for i in 0..config.blocks {
            let b = p / "blocks" / i;
            let gpool = if config.global_pool && i % 3 == 2 {
                Some(Linear::new(&b / "gpool", 2 * ch, ch, Init::Const(0.0))?)
            } else {
                None
            };
            blocks.push(Block {
                conv1: Conv::new(&b / "conv1", ch, ch, 3, false)?,
                bn1: BatchNorm::new(&b / "bn1", ch, 1.0)?,
                gpool,
                conv2: Conv::new(&b / "conv2", ch, ch, 3, false)?,
                bn2: BatchNorm::new(&b / "bn2", ch, 0.0)?,
            });
        }
        let vh = config.value_channels;
        let fc_init = nn::init::DEFAULT_KAIMING_UNIFORM;
        Ok(Net {
            config: config.clone(),
            stem,
            stem_bn,
            blocks,
            policy_conv: Conv::new(p / "policy" / "conv", ch, ch, 3, false)?,
            policy_bn: BatchNorm::new(p / "policy" / "bn", ch, 1.0)?,
            policy_out: Conv::new(p / "policy" / "out", ch, shapes.len(), 1, true)?,
            gather: Tensor::f_from_slice(&gather)?.f_to_device(p.device())?,
            value_conv: Conv::new(p / "value" / "conv", ch, vh, 1, false)?,
            value_bn: BatchNorm::new(p / "value" / "bn", vh, 1.0)?,
            value_fc1: Linear::new(
                p / "value" / "fc1",
                vh * PLANE_SIZE,
                config.value_hidden,
                fc_init,
            )?,
            value_fc2: Linear::new(p / "value" / "fc2", config.value_hidden, 3, fc_init)?,
        })
    }

    /// The architecture this network was built with.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// The device the variables live on.
    pub fn device(&self) -> Device {
        self.gather.device()
    }

    /// Forward pass. `x` is `N × planes × 10 × 9` (any float kind; it is cast to `kind`,
    /// the compute precision). Returns `(policy logits N×2086, value logits N×3)`, both
    /// f32. `train` selects batch statistics (and updates the running ones) in batch norm.
    pub fn forward(
        &self,
        x: &Tensor,
        train: bool,
        kind: Kind,
    ) -> Result<(Tensor, Tensor), TchError> {
        let n = check_input(x, &self.config)?;
        let x = cast(x, kind)?;
        let mut h = self
            .stem_bn
            .forward(&self.stem.forward(&x, kind)?, train)?
            .f_relu()?;
        for block in &self.blocks {
            h = block.forward(&h, train, kind)?;
        }
        let p = self
            .policy_bn
            .forward(&self.policy_conv.forward(&h, kind)?, train)?
            .f_relu()?;
        let p = self.policy_out.forward(&p, kind)?.f_view([n, -1])?;
        let policy = p.f_index_select(1, &self.gather)?.f_to_kind(Kind::Float)?;
        let v = self
            .value_bn
            .forward(&self.value_conv.forward(&h, kind)?, train)?
            .f_relu()?
            .f_view([n, -1])?;
        let v = self.value_fc1.forward(&v, kind)?.f_relu()?;
        let value = self.value_fc2.forward(&v, kind)?.f_to_kind(Kind::Float)?;
        Ok((policy, value))
    }

    /// This network (its current weights and batch-norm statistics) prepared for
    /// inference in `kind` and `layout` ([`InferenceNet`]). Folding is done in f32
    /// whatever the weights' kind, then cast, so an f16 or bf16 network rounds once.
    pub fn fold(&self, kind: Kind, layout: Layout) -> Result<InferenceNet, TchError> {
        let _guard = tch::no_grad_guard();
        let conv = |c: &Conv, bn: Option<&BatchNorm>| FoldedConv::new(c, bn, kind, layout);
        let blocks = self
            .blocks
            .iter()
            .map(|b| {
                Ok(FoldedBlock {
                    conv1: conv(&b.conv1, Some(&b.bn1))?,
                    gpool: b
                        .gpool
                        .as_ref()
                        .map(|l| KindLinear::new(l, kind))
                        .transpose()?,
                    conv2: conv(&b.conv2, Some(&b.bn2))?,
                })
            })
            .collect::<Result<Vec<_>, TchError>>()?;
        Ok(InferenceNet {
            config: self.config.clone(),
            kind,
            layout,
            stem: conv(&self.stem, Some(&self.stem_bn))?,
            blocks,
            policy_conv: conv(&self.policy_conv, Some(&self.policy_bn))?,
            policy_out: conv(&self.policy_out, None)?,
            gather: self.gather.shallow_clone(),
            value_conv: conv(&self.value_conv, Some(&self.value_bn))?,
            value_fc1: KindLinear::new(&self.value_fc1, kind)?,
            value_fc2: KindLinear::new(&self.value_fc2, kind)?,
        })
    }
}

/// How an [`InferenceNet`] lays out its activations in memory. The shape is
/// `N × C × 10 × 9` either way; channels-last stores each point's channels together
/// (NHWC strides), which tensor cores and oneDNN's bf16 kernels prefer. tch has no
/// memory-format API, so the layout is made by permuting to NHWC, making that
/// contiguous and permuting back: libtorch reads a layout off the strides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `N × C × H × W` contiguous (libtorch's default).
    Nchw,
    /// `N × H × W × C` in memory.
    ChannelsLast,
}

impl Layout {
    /// `t` (4-D) in this layout; a view when it already is.
    fn apply(self, t: &Tensor) -> Result<Tensor, TchError> {
        match self {
            Layout::Nchw => t.f_contiguous(),
            Layout::ChannelsLast => t
                .f_permute([0, 2, 3, 1])?
                .f_contiguous()?
                .f_permute([0, 3, 1, 2]),
        }
    }
}

/// A convolution with the batch norm after it folded in, `bn(conv(x)) = conv'(x) + b'`
/// (scale `γ / √(σ² + ε)` on each output channel's weights, shift `β − μ·scale`), its
/// weights in the compute kind and layout.
#[derive(Debug)]
struct FoldedConv {
    w: Tensor,
    b: Tensor,
    padding: i64,
}

impl FoldedConv {
    fn new(
        conv: &Conv,
        bn: Option<&BatchNorm>,
        kind: Kind,
        layout: Layout,
    ) -> Result<FoldedConv, TchError> {
        let w = conv.w.f_to_kind(Kind::Float)?;
        let cout = w.size()[0];
        let b = match &conv.b {
            Some(b) => b.f_to_kind(Kind::Float)?,
            None => Tensor::f_zeros([cout], (Kind::Float, w.device()))?,
        };
        let (w, b) = match bn {
            Some(bn) => {
                let f = |t: &Tensor| t.f_to_kind(Kind::Float);
                let scale = f(&bn.w)?.f_div(&f(&bn.var)?.f_add_scalar(BN_EPS)?.f_sqrt()?)?;
                let w = w.f_mul(&scale.f_view([cout, 1, 1, 1])?)?;
                let b = b.f_sub(&f(&bn.mean)?)?.f_mul(&scale)?.f_add(&f(&bn.b)?)?;
                (w, b)
            }
            None => (w, b),
        };
        Ok(FoldedConv {
            w: layout.apply(&own(&w, kind)?)?,
            b: own(&b, kind)?,
            padding: conv.padding,
        })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor, TchError> {
        x.f_conv2d(
            &self.w,
            Some(&self.b),
            [1, 1],
            [self.padding, self.padding],
            [1, 1],
            1,
        )
    }
}

/// A copy of `t` in `kind` that shares no storage with it (a cast to the kind a tensor
/// already has would return the tensor itself).
fn own(t: &Tensor, kind: Kind) -> Result<Tensor, TchError> {
    t.f_to_kind(kind)?.f_detach_copy()
}

/// A linear layer's weights in the compute kind.
#[derive(Debug)]
struct KindLinear {
    w: Tensor,
    b: Tensor,
}

impl KindLinear {
    fn new(l: &Linear, kind: Kind) -> Result<KindLinear, TchError> {
        Ok(KindLinear {
            w: own(&l.w, kind)?,
            b: own(&l.b, kind)?,
        })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor, TchError> {
        x.f_linear(&self.w, Some(&self.b))
    }
}

#[derive(Debug)]
struct FoldedBlock {
    conv1: FoldedConv,
    gpool: Option<KindLinear>,
    conv2: FoldedConv,
}

/// The network prepared for inference ([`Net::fold`]): every batch norm folded into the
/// convolution before it, every weight already in the compute kind, the activations in
/// a chosen [`Layout`]. A forward pass is then a convolution (bias fused), a ReLU and,
/// in each block, an addition: about 40% fewer operations than [`Net::forward`] in
/// inference mode, and no per-call casts of the weights. Its tensors are its own
/// copies, so it outlives the `VarStore` it was folded from.
#[derive(Debug)]
pub struct InferenceNet {
    config: NetConfig,
    kind: Kind,
    layout: Layout,
    stem: FoldedConv,
    blocks: Vec<FoldedBlock>,
    policy_conv: FoldedConv,
    policy_out: FoldedConv,
    gather: Tensor,
    value_conv: FoldedConv,
    value_fc1: KindLinear,
    value_fc2: KindLinear,
}

impl InferenceNet {
    /// The architecture this network was built with.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// The kind it computes in.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The layout of its activations.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Forward pass, as [`Net::forward`] in inference mode: `x` is
    /// `N × planes × 10 × 9` in any float kind and layout; returns `(policy logits
    /// N×2086, value logits N×3)`, both f32.
    pub fn forward(&self, x: &Tensor) -> Result<(Tensor, Tensor), TchError> {
        let n = check_input(x, &self.config)?;
        let x = self.layout.apply(&cast(x, self.kind)?)?;
        let mut h = self.stem.forward(&x)?.f_relu()?;
        for block in &self.blocks {
            let mut y = block.conv1.forward(&h)?.f_relu()?;
            if let Some(fc) = &block.gpool {
                let bias = fc.forward(&global_pool(&y)?)?;
                let c = bias.size()[1];
                y = y.f_add(&bias.f_view([n, c, 1, 1])?)?;
            }
            h = h.f_add(&block.conv2.forward(&y)?)?.f_relu()?;
        }
        let p = self.policy_conv.forward(&h)?.f_relu()?;
        // `reshape`: a view in NCHW, a copy of the small logit map in channels-last.
        let p = self.policy_out.forward(&p)?.f_reshape([n, -1])?;
        let policy = p.f_index_select(1, &self.gather)?.f_to_kind(Kind::Float)?;
        let v = self.value_conv.forward(&h)?.f_relu()?.f_reshape([n, -1])?;
        let v = self.value_fc1.forward(&v)?.f_relu()?;
        let value = self.value_fc2.forward(&v)?.f_to_kind(Kind::Float)?;
        Ok((policy, value))
    }
}

/// The batch size of `x`, after checking it is `N × planes × 10 × 9` for `config`.
fn check_input(x: &Tensor, config: &NetConfig) -> Result<i64, TchError> {
    let n = x.size().first().copied().unwrap_or(0);
    let expected = [
        n,
        config.input_planes() as i64,
        BOARD_RANKS as i64,
        BOARD_FILES as i64,
    ];
    if x.size() != expected {
        return Err(TchError::Shape(format!(
            "network input must be {expected:?}, got {:?}",
            x.size()
        )));
    }
    Ok(n)
}

/// Redraws, from torch's RNG and in the order of the variables' names, every batch
/// norm's scale and running variance from U(0.5, 1.5), every running mean and bias from
/// N(0, 0.1²) and the global-pooling layers' weights from N(0, 0.05²); convolutions and
/// linear layers keep their initialisation. For tests and benchmarks that compare two
/// ways of computing a network (folded and not, bf16 and f32, native and libtorch): a
/// fresh network's identity batch norms, zero biases and zeroed residual branches would
/// hide a wrong fold or conversion.
pub fn randomise_for_comparison(vs: &nn::VarStore) -> Result<(), TchError> {
    let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    let _guard = tch::no_grad_guard();
    for (name, t) in &mut vars {
        let size = t.size();
        let options = (Kind::Float, t.device());
        let uniform = |lo: f64, hi: f64| -> Result<Tensor, TchError> {
            Tensor::f_rand(&size, options)?
                .f_mul_scalar(hi - lo)?
                .f_add_scalar(lo)
        };
        let normal = |sd: f64| Tensor::f_randn(&size, options)?.f_mul_scalar(sd);
        let batch_norm = name.split('.').any(|p| p.starts_with("bn"));
        let value = if name.ends_with("running_var") || (batch_norm && name.ends_with(".weight")) {
            uniform(0.5, 1.5)?
        } else if name.ends_with("running_mean") || name.ends_with(".bias") {
            normal(0.1)?
        } else if name.contains("gpool") {
            normal(0.05)?
        } else {
            continue;
        };
        t.f_copy_(&value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_nn::policy::POLICY_SIZE;

    #[test]
    fn gather_table_covers_the_index_with_fifty_move_shapes() {
        let (shapes, gather) = policy_gather_table();
        assert_eq!(shapes.len(), 50, "{shapes:?}");
        assert_eq!(gather.len(), POLICY_SIZE);
        let mut seen = gather.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), POLICY_SIZE, "two policy entries share a logit");
        assert!(gather.iter().all(|&g| g >= 0 && g < 50 * PLANE_SIZE as i64));
    }

    #[test]
    fn forward_gives_policy_and_value_logits_of_the_right_shape() {
        tch::manual_seed(3);
        let vs = nn::VarStore::new(Device::Cpu);
        let cfg = NetConfig {
            blocks: 3,
            channels: 8,
            history: 2,
            value_channels: 2,
            value_hidden: 8,
            global_pool: true,
        };
        let net = Net::new(&vs.root(), &cfg).unwrap();
        let x = Tensor::zeros(
            [5, cfg.input_planes() as i64, 10, 9],
            (Kind::Float, Device::Cpu),
        );
        let (p, v) = net.forward(&x, false, Kind::Float).unwrap();
        assert_eq!(p.size(), [5, POLICY_SIZE as i64]);
        assert_eq!(v.size(), [5, 3]);
        let bad = Tensor::zeros([5, 7, 10, 9], (Kind::Float, Device::Cpu));
        assert!(net.forward(&bad, false, Kind::Float).is_err());
        let (p16, _) = net.forward(&x, false, Kind::BFloat16).unwrap();
        assert_eq!(p16.kind(), Kind::Float);
    }

    /// A network of `cfg` with random batch-norm statistics ([`randomise_for_comparison`])
    /// and inputs of random 0/1 planes.
    fn random_net(cfg: &NetConfig, seed: i64) -> (nn::VarStore, Net, Tensor) {
        tch::manual_seed(seed);
        let vs = nn::VarStore::new(Device::Cpu);
        let net = Net::new(&vs.root(), cfg).unwrap();
        randomise_for_comparison(&vs).unwrap();
        let x = Tensor::rand(
            [7, cfg.input_planes() as i64, 10, 9],
            (Kind::Float, Device::Cpu),
        )
        .ge(0.8)
        .to_kind(Kind::Float);
        (vs, net, x)
    }

    fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
        (a - b).abs().max().double_value(&[])
    }

    #[test]
    fn a_folded_network_computes_what_the_network_does_in_inference_mode() {
        let cfg = NetConfig {
            blocks: 3,
            channels: 16,
            history: 2,
            value_channels: 2,
            value_hidden: 8,
            global_pool: true,
        };
        let (_vs, net, x) = random_net(&cfg, 11);
        let (p, v) = tch::no_grad(|| net.forward(&x, false, Kind::Float)).unwrap();
        let scale = 1.0 + p.abs().max().double_value(&[]);
        for layout in [Layout::Nchw, Layout::ChannelsLast] {
            let folded = net.fold(Kind::Float, layout).unwrap();
            let (fp, fv) = tch::no_grad(|| folded.forward(&x)).unwrap();
            assert_eq!(fp.size(), p.size());
            assert!(max_abs_diff(&fp, &p) < 1e-4 * scale, "{layout:?} policy");
            assert!(max_abs_diff(&fv, &v) < 1e-4 * scale, "{layout:?} value");
        }
        let folded = net.fold(Kind::BFloat16, Layout::ChannelsLast).unwrap();
        let (bp, bv) = tch::no_grad(|| folded.forward(&x)).unwrap();
        assert_eq!(bp.kind(), Kind::Float);
        assert!(max_abs_diff(&bp, &p) < 0.03 * scale, "bf16 policy");
        assert!(max_abs_diff(&bv, &v) < 0.03 * scale, "bf16 value");
    }

    #[test]
    fn a_folded_network_keeps_its_weights_when_the_network_changes() {
        let cfg = NetConfig {
            blocks: 1,
            channels: 8,
            history: 1,
            value_channels: 2,
            value_hidden: 4,
            global_pool: false,
        };
        let (vs, net, x) = random_net(&cfg, 12);
        let folded = net.fold(Kind::Float, Layout::Nchw).unwrap();
        let (before, _) = tch::no_grad(|| folded.forward(&x)).unwrap();
        tch::no_grad(|| {
            for (_, mut t) in vs.variables() {
                let _ = t.fill_(0.5);
            }
        });
        let (after, _) = tch::no_grad(|| folded.forward(&x)).unwrap();
        assert_eq!(max_abs_diff(&before, &after), 0.0);
        let bad = Tensor::zeros([2, 7, 10, 9], (Kind::Float, Device::Cpu));
        assert!(folded.forward(&bad).is_err());
    }
}
