//! Random variates the search needs (Dirichlet, Gumbel), written out here so they come
//! from the search's own seeded RNG with no extra dependency.

use rand::Rng;

/// A standard normal variate (Box–Muller; one of the pair is discarded, which is fine at
/// root-noise rates).
fn normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Gamma(shape, 1) variate (Marsaglia & Tsang 2000; shape < 1 through the
/// Gamma(shape + 1) · U^(1/shape) boost).
pub(crate) fn gamma<R: Rng + ?Sized>(rng: &mut R, shape: f64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - rng.random::<f64>();
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = 1.0 - rng.random::<f64>();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// Fills `out` with a Dirichlet(alpha, …, alpha) sample. If every gamma underflows
/// (tiny alpha) the mass goes to one uniformly chosen entry, the limit of the
/// distribution.
pub(crate) fn dirichlet<R: Rng + ?Sized>(rng: &mut R, alpha: f64, out: &mut [f32]) {
    if out.is_empty() {
        return;
    }
    let mut sum = 0.0f64;
    let mut g = Vec::with_capacity(out.len());
    for _ in 0..out.len() {
        let x = gamma(rng, alpha);
        sum += x;
        g.push(x);
    }
    if sum > 0.0 && sum.is_finite() {
        for (o, x) in out.iter_mut().zip(&g) {
            *o = (x / sum) as f32;
        }
    } else {
        out.fill(0.0);
        let i = rng.random_range(0..out.len());
        out[i] = 1.0;
    }
}

/// A standard Gumbel variate: −ln(−ln U).
pub(crate) fn gumbel<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    // U in (0, 1): both logs finite.
    let u = (rng.random::<f64>() * (1.0 - 2e-12)) + 1e-12;
    (-(-u.ln()).ln()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn gamma_has_the_right_mean_and_variance() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for shape in [0.05, 0.3, 1.0, 2.5] {
            let n = 40_000;
            let xs: Vec<f64> = (0..n).map(|_| gamma(&mut rng, shape)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
            assert!(
                (mean - shape).abs() < 0.05 * shape.max(0.2),
                "shape {shape}: mean {mean}"
            );
            assert!(
                (var - shape).abs() < 0.15 * shape.max(0.2),
                "shape {shape}: var {var}"
            );
            assert!(xs.iter().all(|&x| x >= 0.0 && x.is_finite()));
        }
    }

    #[test]
    fn dirichlet_sums_to_one_and_small_alpha_is_spiky() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut out = vec![0.0f32; 40];
        dirichlet(&mut rng, 0.03, &mut out);
        let sum: f32 = out.iter().sum();
        assert!((sum - 1.0).abs() < 1e-4);
        let max = out.iter().cloned().fold(0.0, f32::max);
        assert!(
            max > 0.3,
            "alpha 0.03 over 40 moves should concentrate, max {max}"
        );
        dirichlet(&mut rng, 50.0, &mut out);
        let max = out.iter().cloned().fold(0.0, f32::max);
        assert!(max < 0.05, "alpha 50 should be near uniform, max {max}");
    }

    #[test]
    fn gumbel_has_the_euler_mascheroni_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 50_000;
        let mean = (0..n).map(|_| gumbel(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean - 0.5772).abs() < 0.02, "mean {mean}");
    }
}
