//! The one-hidden-layer sigmoid belief network on the VIPS engine (000 Sec. 7, Algorithm 6,
//! Appendices B and C).

use dp_core::{ContributionBuffer, MatrixBlock, Release, ReleaseSpec, SymmetricBlock, VectorBlock};
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;

use super::estep::LocalPosterior;
use super::params::{SbnGlobal, SbnNatural};
use super::tpbn::Tpbn;
use super::{BinaryImage, GRelease, SbnBounds, SbnConfig, SbnError, SbnStatistics};
use crate::engine::{EngineError, RecordError, VipsModel};

/// The sigmoid belief network `p(z_k = 1) = sigma(b_k)`, `p(y_j = 1 | z) = sigma(w_j^T z + c_j)`
/// with a TPBN prior on `W` and broad Gaussian priors on `b` and `c` (000 Sec. 7, Gan et al.
/// 2015), made conjugate by Pólya-Gamma variables for both layers, as a [`VipsModel`].
///
/// Records are [`BinaryImage`]s. The release carries the seven statistics of 000 Eq. 61-68 (or
/// the six of [`SbnStatistics::Residual`]) as sums with the bounds of [`SbnBounds`] (see
/// [`GRelease`] for how `G_j` goes out).
///
/// # Example
/// ```
/// use vips_models::engine::{fit, Privacy, Stop, StepSize, SviConfig};
/// use vips_models::sbn::{Sbn, SbnConfig, SyntheticSbn};
/// let truth = SyntheticSbn::random(16, 3, 1);
/// let train = truth.sample(300, 2);
/// let model = Sbn::new(SbnConfig::builder(16, 3).build()?)?;
/// let svi = SviConfig::builder()
///     .expected_batch_size(100.0)
///     .step(StepSize::robbins_monro(1.0, 0.6)?)
///     .stop(Stop::Iterations { iterations: 3 })
///     .privacy(Privacy::Target { epsilon: 1.0, delta: 1e-5 })
///     .noise_seed(Some(3))
///     .population(Some(300)) // the generator's configured size: public
///     .build()?;
/// let result = fit(&model, train, &svi, |_, _| {})?.result;
/// assert!(result.privacy.epsilon.unwrap() <= 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Privacy
/// Every block is a sum of per-record contributions clipped by the wall to its declared bound;
/// all blocks go out in one Gaussian release per iteration (rescale-noise-rescale, 003 Eq. 63;
/// Analyze-Gauss with PSD projection on the symmetric blocks), charged as one Poisson-subsampled
/// Gaussian event under add/remove-one neighbouring. The M-step (with its noise-level
/// eigenvalue floor and Wiener filter of the `W` shifts, which use only the release and its
/// public noise levels) and the TPBN updates are post-processing.
#[derive(Debug)]
pub struct Sbn {
    config: SbnConfig,
    bounds: SbnBounds,
    /// The release spec (built once, checked in [`Sbn::new`]) and the handles to its blocks.
    spec: ReleaseSpec,
    blocks: SbnBlocks,
}

/// The SBN's handles to the blocks of its release, in spec order.
#[derive(Clone, Debug)]
pub struct SbnBlocks {
    /// `s1 = <z> - 1/2` (`K`).
    pub s1: VectorBlock,
    /// `s2 = <xi1>` (`K`).
    pub s2: VectorBlock,
    /// The visible layer's shift statistics (third and fifth blocks, and the sixth in the paper's
    /// layout).
    pub shift: SbnShiftBlocks,
    /// `s4 = <xi0>` (`J`, the fourth block).
    pub s4: VectorBlock,
    /// `G_j` (`J` blocks, [`GRelease::PerUnit`]) or the pooled `Z` (one block).
    pub g: Vec<SymmetricBlock>,
}

/// The shift statistics of `q(c)` and `q(W)`, by [`SbnStatistics`].
#[derive(Clone, Copy, Debug)]
pub enum SbnShiftBlocks {
    /// The paper's `s3 = y - 1/2`, `s5 = <xi0> <z>^T`, `s6 = (y - 1/2) <z>^T`.
    Paper {
        /// `s3` (`J`).
        s3: VectorBlock,
        /// `s5` (`J x K`).
        s5: MatrixBlock,
        /// `s6` (`J x K`).
        s6: MatrixBlock,
    },
    /// The residual shifts `u` (of `q(c)`) and `r` (of `q(W)`).
    Residual {
        /// `u` (`J`).
        u: VectorBlock,
        /// `r` (`J x K`).
        r: MatrixBlock,
    },
}

/// SBN's M-step target from one release: the natural parameters of `q(W)`, `q(b)` and `q(c)`
/// (the TPBN hyper-posteriors are derived after the blend, [`VipsModel::after_blend`]).
#[derive(Clone, Debug)]
pub struct SbnTarget {
    w_precision: Vec<DMatrix<f64>>,
    w_shift: DMatrix<f64>,
    b_precision: DVector<f64>,
    b_shift: DVector<f64>,
    c_precision: DVector<f64>,
    c_shift: DVector<f64>,
}

impl Sbn {
    /// The images of a store of binary vectors ([`crate::store::convert_idx`],
    /// [`crate::store::write_images`]) as a record source for [`crate::engine::fit_source`]:
    /// each image is read when a batch draws it.
    ///
    /// # Errors
    /// [`SbnError::Store`] for a store of another kind or whose images do not have the model's
    /// number of visible units; [`SbnError::Empty`] for an empty store.
    ///
    /// # Privacy
    /// The records read are the stored images (binarised at conversion, a per-record
    /// transform): same seeds, same releases as in memory. An image that does not decode is
    /// replaced by zero in a private release ([`Self::check_images`] is not run over a store).
    /// The store's count is private under add/remove-one: declare the public `N`.
    ///
    /// # Example
    /// ```
    /// use vips_models::engine::{fit_source, Privacy, Stop, SviConfig};
    /// use vips_models::sbn::{BinaryImage, Sbn, SbnConfig};
    /// use vips_models::store::{RecordStore, write_images};
    /// # let dir = std::env::temp_dir().join(format!("sbn-store-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// let images = (0..100).map(|i| Ok(BinaryImage { pixels: (0..16).map(|p| u8::from((p + i) % 3 == 0)).collect() }));
    /// write_images(dir.join("images.store"), 16, images)?;
    /// let sbn = Sbn::new(SbnConfig::builder(16, 4).build()?)?;
    /// let source = sbn.store_source(RecordStore::open(dir.join("images.store"))?)?;
    /// let svi = SviConfig::builder()
    ///     .expected_batch_size(20.0)
    ///     .stop(Stop::Iterations { iterations: 2 })
    ///     .privacy(Privacy::NonPrivate)
    ///     .population(Some(100))
    ///     .build()?;
    /// let fitted = fit_source(&sbn, source, &svi, |_, _| {})?;
    /// assert_eq!(fitted.result.iterations, 2);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn store_source(
        &self,
        store: crate::store::RecordStore,
    ) -> Result<crate::store::SbnStoreSource, SbnError> {
        use crate::store::{RecordKind, StoreError};
        if store.kind() != RecordKind::BinaryVector {
            return Err(SbnError::Store(Box::new(StoreError::WrongKind {
                path: store.path().to_path_buf(),
                expected: RecordKind::BinaryVector,
                found: store.kind(),
            })));
        }
        if store.dim() != self.config.visible as u64 {
            return Err(SbnError::Store(Box::new(StoreError::Dimension {
                path: store.path().to_path_buf(),
                found: store.dim(),
                model: self.config.visible,
            })));
        }
        if store.is_empty() {
            return Err(SbnError::Empty("no images in the store"));
        }
        Ok(crate::store::SbnStoreSource::new(store))
    }

    /// A model with the given settings.
    ///
    /// # Errors
    /// [`SbnError::InvalidParameter`] as [`crate::sbn::SbnConfigBuilder::build`] (a deserialised config is
    /// checked again here);
    /// [`SbnError::Engine`] if dp-core refuses a block of the release spec.
    pub fn new(config: SbnConfig) -> Result<Self, SbnError> {
        config.check()?;
        let bounds =
            SbnBounds::new(config.visible, config.hidden).with_clip_fraction(config.clip_fraction);
        let (spec, blocks) = build_spec(&config, bounds).map_err(EngineError::from)?;
        Ok(Self {
            bounds,
            config,
            spec,
            blocks,
        })
    }

    /// The release spec (the blocks with their per-record bounds, in release order).
    pub fn spec(&self) -> &ReleaseSpec {
        &self.spec
    }

    /// The handles to the release's blocks.
    pub fn blocks(&self) -> &SbnBlocks {
        &self.blocks
    }

    /// The settings.
    pub fn config(&self) -> &SbnConfig {
        &self.config
    }

    /// The declared per-record bounds (worst case, with the large blocks scaled by
    /// [`SbnConfig::clip_fraction`]).
    pub fn bounds(&self) -> SbnBounds {
        self.bounds
    }

    /// Checks that every image has `J` binary pixels.
    ///
    /// # Errors
    /// [`SbnError::Empty`], [`SbnError::DimensionMismatch`], [`SbnError::NotBinary`].
    pub fn check_images(&self, images: &[BinaryImage]) -> Result<(), SbnError> {
        if images.is_empty() {
            return Err(SbnError::Empty("no images"));
        }
        for (index, im) in images.iter().enumerate() {
            if im.pixels.len() != self.config.visible {
                return Err(SbnError::DimensionMismatch {
                    index,
                    found: im.pixels.len(),
                    expected: self.config.visible,
                });
            }
            if let Some(&value) = im.pixels.iter().find(|&&v| v > 1) {
                return Err(SbnError::NotBinary { index, value });
            }
        }
        Ok(())
    }

    /// The E-step for one image (public so that evaluation and tests can use it).
    pub fn local_posterior(&self, natural: &SbnNatural, image: &BinaryImage) -> LocalPosterior {
        let mut local = LocalPosterior::default();
        local.fit(natural, &image.pixels, self.config.estep_sweeps);
        local
    }

    /// The record's contribution to each of the release's blocks, as dense vectors (matrix
    /// blocks column-major, symmetric blocks as full `K x K` column-major). For tests and audits:
    /// the wall receives exactly these numbers and clips each block to its declared bound (a
    /// no-op with `clip_fraction = 1`, where the bounds are the worst case).
    pub fn record_blocks(&self, natural: &SbnNatural, image: &BinaryImage) -> Vec<Vec<f64>> {
        let mut buf = ContributionBuffer::new(&self.spec);
        let mut scratch = self.new_scratch();
        scratch.fit(natural, &image.pixels, self.config.estep_sweeps);
        let bl = &self.blocks;
        self.write_statistic(bl, natural, image, &scratch, &mut buf);
        let mut out = vec![buf.dense(bl.s1).to_vec(), buf.dense(bl.s2).to_vec()];
        match bl.shift {
            SbnShiftBlocks::Paper { s3, s5, s6 } => {
                out.push(buf.dense(s3).to_vec());
                out.push(buf.dense(bl.s4).to_vec());
                out.push(buf.dense(s5).to_vec());
                out.push(buf.dense(s6).to_vec());
            }
            SbnShiftBlocks::Residual { u, r } => {
                out.push(buf.dense(u).to_vec());
                out.push(buf.dense(bl.s4).to_vec());
                out.push(buf.dense(r).to_vec());
            }
        }
        for &g in &bl.g {
            out.push(unpack_symmetric(buf.dense(g), g.dim()));
        }
        out
    }

    fn write_statistic(
        &self,
        bl: &SbnBlocks,
        nat: &SbnNatural,
        image: &BinaryImage,
        local: &LocalPosterior,
        out: &mut ContributionBuffer,
    ) {
        let (j_dim, k_dim) = (nat.visible, nat.hidden);
        let p = &local.p;
        let xi = &local.xi;
        let y = &image.pixels;
        for (v, &pk) in out.dense(bl.s1).iter_mut().zip(p) {
            *v = pk - 0.5;
        }
        out.dense(bl.s2).copy_from_slice(&nat.xi1);
        out.dense(bl.s4).copy_from_slice(xi);
        match bl.shift {
            SbnShiftBlocks::Residual { u, r } => {
                {
                    let u = out.dense(u);
                    for j in 0..j_dim {
                        let row = &nat.mu_w[j * k_dim..(j + 1) * k_dim];
                        let wp: f64 = row.iter().zip(p).map(|(w, pk)| w * pk).sum();
                        u[j] = f64::from(y[j]) - 0.5 - xi[j] * wp;
                    }
                }
                let r = out.dense(r);
                for k in 0..k_dim {
                    let col = &mut r[k * j_dim..(k + 1) * j_dim];
                    for j in 0..j_dim {
                        col[j] = (f64::from(y[j]) - 0.5 - nat.mu_c[j] * xi[j]) * p[k];
                    }
                }
            }
            SbnShiftBlocks::Paper { s3, s5, s6 } => {
                for (v, &yj) in out.dense(s3).iter_mut().zip(y) {
                    *v = f64::from(yj) - 0.5;
                }
                write_paper_w_blocks(nat, image, local, (s5, s6), out);
            }
        }
        let write_zz = |values: &mut [f64], weight: f64| {
            for b in 0..k_dim {
                let base = b * (b + 1) / 2;
                let wb = weight * p[b];
                for a in 0..b {
                    values[base + a] = wb * p[a];
                }
                values[base + b] = weight * p[b];
            }
        };
        match (self.config.g_release, bl.g.as_slice()) {
            (GRelease::PerUnit, g) => {
                for (&gj, &xij) in g.iter().zip(xi) {
                    write_zz(out.dense(gj), xij);
                }
            }
            (GRelease::Pooled, g) => {
                for &gj in g {
                    write_zz(out.dense(gj), 1.0);
                }
            }
        }
    }
}

/// `s5 = <xi0> p^T` and `s6 = (y - 1/2) p^T` (the paper's layout).
fn write_paper_w_blocks(
    nat: &SbnNatural,
    image: &BinaryImage,
    local: &LocalPosterior,
    (s5, s6): (MatrixBlock, MatrixBlock),
    out: &mut ContributionBuffer,
) {
    let (j_dim, k_dim) = (nat.visible, nat.hidden);
    let (p, xi, y) = (&local.p, &local.xi, &image.pixels);
    {
        let s5 = out.dense(s5);
        for k in 0..k_dim {
            let col = &mut s5[k * j_dim..(k + 1) * j_dim];
            for j in 0..j_dim {
                col[j] = xi[j] * p[k];
            }
        }
    }
    {
        let s6 = out.dense(s6);
        for k in 0..k_dim {
            let col = &mut s6[k * j_dim..(k + 1) * j_dim];
            for j in 0..j_dim {
                col[j] = (f64::from(y[j]) - 0.5) * p[k];
            }
        }
    }
}

/// Full column-major `dim x dim` matrix from a packed upper triangle.
fn unpack_symmetric(packed: &[f64], dim: usize) -> Vec<f64> {
    let mut full = vec![0.0; dim * dim];
    for j in 0..dim {
        for i in 0..=j {
            let v = packed[j * (j + 1) / 2 + i];
            full[j * dim + i] = v;
            full[i * dim + j] = v;
        }
    }
    full
}

/// A released symmetric block with its eigenvalues raised to at least the expected spectral norm
/// `2 sqrt(K) s` of its Analyze-Gauss noise (`s` = per-entry noise std of the released block).
///
/// The wall's projection only makes the noised matrix positive definite (floor `1e-6`); where
/// the noise dominates (private runs with `S` small against `sigma sqrt(7) K`), eigenvalues
/// near the floor turn into directions in which `q(w_j)` has almost no precision, and the noise
/// on `s5`/`s6` (amplified by `N`) then sets `<w_j>` to thousands. Flooring at the noise level
/// treats those directions as "at most as informative as the noise", a conservative
/// regularisation of the precision. Post-processing of the release and its public noise
/// level: no privacy cost. A no-op without noise.
fn noise_floored(
    release: &Release,
    handle: SymmetricBlock,
    k_dim: usize,
) -> Result<DMatrix<f64>, dp_core::CoreError> {
    let block = release.released(handle)?;
    let mut z = release.symmetric(handle)?.clone();
    let floor = 2.0 * (k_dim as f64).sqrt() * block.noise_std;
    if floor > 0.0 && floor.is_finite() {
        // A failure (non-finite entries) leaves the wall's projection in place.
        let _ = dp_core::project_to_positive_definite(&mut z, floor);
    }
    Ok(z)
}

/// Smallest prior variance of `w_jk` the filter of [`denoised_shift`] assumes: the TPBN prior's
/// data-independent initial value. Without it the filter feeds on its own shrinkage (small
/// `<w>` -> the TPBN shrinks the prior variances -> the filter shrinks harder).
const PRIOR_VARIANCE_FLOOR: f64 = 1.0;

/// The noise-aware estimate of the shifts `h_j = Sigma_j^-1 mu_j` of `q(w_j)` (private runs).
///
/// The released shift is `h~_j = P_j mu_j + e_j` with `P_j = Sigma_j^-1` and noise
/// `e_j ~ N(0, (N tau_j)^2 I)` of public std (`tau_j` the per-entry noise std of the released
/// statistic behind row `j`). Under the TPBN prior `mu_j ~ N(0, V_j)`, `V_j = diag(<zeta_j>)`
/// (the current prior variances), the posterior mean of `mu_j` given `h~_j` is
/// `V P (P V P + (N tau)^2 I)^-1 h~` (a Wiener filter); the returned shift is `P` times it, so
/// `q(w_j)` keeps its precision and gets the filtered mean. Where the data precision is large
/// against the noise this is `h~`; where it is small (rows whose `s4~_j` is tiny: always-off
/// pixels) the noise is filtered out instead of being amplified by `Sigma_j`. Without noise
/// (`tau = 0`) the shift is returned unchanged. Post-processing of the release with public noise
/// levels: no privacy cost.
fn denoised_shift(
    precision: &[DMatrix<f64>],
    mut shift: DMatrix<f64>,
    tau: &[f64],
    population: f64,
    prior_precision: &[f64],
) -> DMatrix<f64> {
    let k_dim = shift.ncols();
    let rows: Vec<Option<DVector<f64>>> = precision
        .par_iter()
        .enumerate()
        .map(|(j, p)| {
            let noise_var = (population * tau[j]).powi(2);
            if !(noise_var > 0.0 && noise_var.is_finite()) {
                return None;
            }
            let v = DVector::from_fn(k_dim, |k, _| {
                (1.0 / prior_precision[j * k_dim + k]).max(PRIOR_VARIANCE_FLOOR)
            });
            let h = shift.row(j).transpose();
            // P V P + s^2 I, with P V = P scaled column-wise by v.
            let mut pv = p.clone();
            for k in 0..k_dim {
                pv.column_mut(k).scale_mut(v[k]);
            }
            let mut m = &pv * p;
            for k in 0..k_dim {
                m[(k, k)] += noise_var;
            }
            let x = m.cholesky()?.solve(&h);
            Some(&pv * (p * x))
        })
        .collect();
    for (j, row) in rows.into_iter().enumerate() {
        if let Some(r) = row {
            shift.set_row(j, &r.transpose());
        }
    }
    shift
}

/// An `N(0, s^2)` sampler for `s >= 0` (a point mass at 0 for `s = 0`).
fn normal(scale: f64) -> Normal<f64> {
    Normal::new(0.0, scale.max(0.0)).unwrap_or_else(|_| Normal::new(0.0, 0.0).expect("std 0"))
}

/// The release spec of `config` (blocks in release order, the per-record bounds of `bounds`)
/// and the handles to its blocks.
fn build_spec(
    config: &SbnConfig,
    bounds: SbnBounds,
) -> Result<(ReleaseSpec, SbnBlocks), dp_core::CoreError> {
    let (j, k) = (config.visible, config.hidden);
    let b = bounds;
    let mut spec = ReleaseSpec::builder("sbn");
    let s1 = spec.vector("s1_z", k, b.s1)?;
    let s2 = spec.vector("s2_xi1", k, b.s2)?;
    let (shift, s4) = match config.statistics {
        SbnStatistics::Paper => {
            let s3 = spec.vector("s3_y", j, b.s3)?;
            let s4 = spec.vector("s4_xi0", j, b.s4)?;
            let s5 = spec.matrix("s5_xi0_z", j, k, b.s5)?;
            let s6 = spec.matrix("s6_y_z", j, k, b.s6)?;
            (SbnShiftBlocks::Paper { s3, s5, s6 }, s4)
        }
        SbnStatistics::Residual => {
            let u = spec.vector("u_c_shift", j, b.u)?;
            let s4 = spec.vector("s4_xi0", j, b.s4)?;
            let r = spec.matrix("r_w_shift", j, k, b.r)?;
            (SbnShiftBlocks::Residual { u, r }, s4)
        }
    };
    let floor = config.eigenvalue_floor;
    let mut g = Vec::new();
    match config.g_release {
        GRelease::PerUnit => {
            for jj in 0..j {
                g.push(spec.symmetric(format!("s7_G_{jj}"), k, b.g_per_unit)?);
            }
        }
        GRelease::Pooled => g.push(spec.symmetric("s7_Z", k, b.g_pooled)?),
    }
    for &h in &g {
        spec.eigenvalue_floor(h, floor)?;
    }
    Ok((
        spec.build()?,
        SbnBlocks {
            s1,
            s2,
            shift,
            s4,
            g,
        },
    ))
}

impl VipsModel for Sbn {
    type Record = BinaryImage;
    type Global = SbnGlobal;
    type Target = SbnTarget;
    type Natural = SbnNatural;
    type Scratch = LocalPosterior;
    type Blocks = SbnBlocks;

    fn name(&self) -> &str {
        "sbn"
    }

    fn release_spec(&self) -> Result<(ReleaseSpec, SbnBlocks), EngineError> {
        Ok((self.spec.clone(), self.blocks.clone()))
    }

    fn init_global(&self, rng: &mut dyn Rng) -> Result<SbnGlobal, EngineError> {
        let (j, k) = (self.config.visible, self.config.hidden);
        let tpbn = Tpbn::new(j, k);
        let prior = DMatrix::from_diagonal(&DVector::from_fn(k, |kk, _| tpbn.zeta_inv[kk]));
        let init = normal(self.config.init_scale);
        let mut w_shift = DMatrix::zeros(j, k);
        let mut w_precision = Vec::with_capacity(j);
        for jj in 0..j {
            let mut prec = prior.clone();
            for kk in 0..k {
                prec[(kk, kk)] =
                    tpbn.zeta_inv[jj * k + kk] + 1.0 / (self.config.init_scale.powi(2) + 1e-4);
                w_shift[(jj, kk)] = prec[(kk, kk)] * init.sample(rng);
            }
            w_precision.push(prec);
        }
        Ok(SbnGlobal {
            w_precision,
            w_shift,
            b_precision: DVector::from_element(k, 1.0 / self.config.prior_var_b),
            b_shift: DVector::zeros(k),
            c_precision: DVector::from_element(j, 1.0 / self.config.prior_var_c),
            c_shift: DVector::zeros(j),
            tpbn,
        })
    }

    fn expected_natural(&self, global: &SbnGlobal) -> Result<SbnNatural, EngineError> {
        Ok(SbnNatural::from_global(global))
    }

    fn new_scratch(&self) -> LocalPosterior {
        LocalPosterior::default()
    }

    /// Rejects images with the wrong number of pixels or non-binary pixels (before any release).
    fn check_records(&self, records: &[BinaryImage]) -> Result<(), EngineError> {
        self.check_images(records)
            .map_err(|e| EngineError::InvalidRecords {
                model: "sbn".into(),
                reason: e.to_string(),
            })
    }

    fn record_statistic(
        &self,
        blocks: &SbnBlocks,
        natural: &SbnNatural,
        record: &BinaryImage,
        scratch: &mut LocalPosterior,
        out: &mut ContributionBuffer,
    ) -> Result<(), RecordError> {
        if record.pixels.len() != natural.visible {
            // Unreachable through `fit` (`check_records` runs before any release).
            return Err(RecordError::new("an image with the wrong number of pixels"));
        }
        scratch.fit(natural, &record.pixels, self.config.estep_sweeps);
        self.write_statistic(blocks, natural, record, scratch, out);
        Ok(())
    }

    /// The M-step of 000 Eq. 69-72 and Appendix C, with the `<W>` and `<c>` of `natural` (the
    /// moments the E-step used).
    fn global_target(
        &self,
        blocks: &SbnBlocks,
        release: &Release,
        natural: &SbnNatural,
        population: f64,
    ) -> Result<SbnTarget, EngineError> {
        let (j_dim, k_dim) = (self.config.visible, self.config.hidden);
        let n = population;
        let cur = natural;
        let s1 = release.vector(blocks.s1)?;
        let s2 = release.vector(blocks.s2)?;
        let s4 = release.vector(blocks.s4)?;
        // q(b): Eq. 69-70.
        let b_precision = DVector::from_fn(k_dim, |k, _| {
            1.0 / self.config.prior_var_b + n * s2[k].max(0.0)
        });
        let b_shift = s1 * n;
        // q(c): Eq. 71-72.
        let c_precision = DVector::from_fn(j_dim, |j, _| {
            1.0 / self.config.prior_var_c + n * s4[j].max(0.0)
        });
        // Shifts of q(c) and q(w_j) and the per-entry noise std tau_j of row j of the latter.
        let (c_shift, w_shift, tau): (DVector<f64>, DMatrix<f64>, Vec<f64>) = match blocks.shift {
            SbnShiftBlocks::Paper { s3, s5, s6 } => {
                let (t5, t6) = (
                    release.released(s5)?.noise_std,
                    release.released(s6)?.noise_std,
                );
                let (s3, s5, s6) = (
                    release.vector(s3)?,
                    release.matrix(s5)?,
                    release.matrix(s6)?,
                );
                // The cross term of -xi (w_j^T z + c_j)^2 / 2 in c_j is -xi c_j w_j^T z
                // with coefficient 1 (Eq. 72 prints 1/2; the W update of Appendix C and the
                // E-step use 1).
                let c_shift = DVector::from_fn(j_dim, |j, _| {
                    let cross: f64 = (0..k_dim)
                        .map(|k| s5[(j, k)] * cur.mu_w[j * k_dim + k])
                        .sum();
                    n * (s3[j] - cross)
                });
                // Appendix C: shift N (s6_j - <c_j> s5_j).
                let w_shift = DMatrix::from_fn(j_dim, k_dim, |j, k| {
                    n * (s6[(j, k)] - cur.mu_c[j] * s5[(j, k)])
                });
                // s5 enters multiplied by <c_j> (|c_j| ~ 10 on always-off pixels).
                let tau = (0..j_dim)
                    .map(|j| (t6 * t6 + cur.mu_c[j].powi(2) * t5 * t5).sqrt())
                    .collect();
                (c_shift, w_shift, tau)
            }
            SbnShiftBlocks::Residual { u, r } => {
                let tau = vec![release.released(r)?.noise_std; j_dim];
                (release.vector(u)? * n, release.matrix(r)? * n, tau)
            }
        };
        let precision_blocks: Vec<DMatrix<f64>> = blocks
            .g
            .par_iter()
            .map(|&g| noise_floored(release, g, k_dim))
            .collect::<Result<_, _>>()?;
        let w_precision: Vec<DMatrix<f64>> = (0..j_dim)
            .into_par_iter()
            .map(|j| {
                let mut prec = match self.config.g_release {
                    GRelease::Pooled => &precision_blocks[0] * (n * s4[j].max(0.0)),
                    GRelease::PerUnit => &precision_blocks[j] * n,
                };
                for k in 0..k_dim {
                    prec[(k, k)] += cur.w_prior_precision[j * k_dim + k];
                }
                prec
            })
            .collect();
        let w_shift = denoised_shift(&w_precision, w_shift, &tau, n, &cur.w_prior_precision);
        Ok(SbnTarget {
            w_precision,
            w_shift,
            b_precision,
            b_shift,
            c_precision,
            c_shift,
        })
    }

    fn blend(&self, global: &mut SbnGlobal, target: &SbnTarget, rho: f64) {
        let mix = |a: f64, b: f64| (1.0 - rho) * a + rho * b;
        for (g, t) in global.w_precision.iter_mut().zip(&target.w_precision) {
            g.zip_apply(t, |a, b| *a = mix(*a, b));
        }
        global
            .w_shift
            .zip_apply(&target.w_shift, |a, b| *a = mix(*a, b));
        global
            .b_precision
            .zip_apply(&target.b_precision, |a, b| *a = mix(*a, b));
        global
            .b_shift
            .zip_apply(&target.b_shift, |a, b| *a = mix(*a, b));
        global
            .c_precision
            .zip_apply(&target.c_precision, |a, b| *a = mix(*a, b));
        global
            .c_shift
            .zip_apply(&target.c_shift, |a, b| *a = mix(*a, b));
    }

    /// TPBN hyper-posteriors from the blended `q(W)` (000 Appendix C; post-processing).
    fn after_blend(&self, global: &mut SbnGlobal) -> Result<(), EngineError> {
        self.after_blend_natural(global).map(drop)
    }

    /// The TPBN update needs the moments of the blended `q(W)` (784 Cholesky inverses at MNIST's
    /// size), which are also the next iteration's natural parameters: returned with the updated
    /// prior precisions, equal to `expected_natural` of the updated `global` bit for bit.
    fn after_blend_natural(
        &self,
        global: &mut SbnGlobal,
    ) -> Result<Option<SbnNatural>, EngineError> {
        let mut nat = SbnNatural::from_global(global);
        global.tpbn.update(&nat.w2);
        nat.w_prior_precision.clone_from(&global.tpbn.zeta_inv);
        Ok(Some(nat))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The natural parameters `after_blend_natural` hands the engine equal a fresh
    /// `expected_natural` of the updated global bit for bit (the TPBN prior included).
    #[test]
    fn natural_after_blend_equals_a_fresh_computation() {
        use rand::SeedableRng;
        let model = Sbn::new(SbnConfig::builder(12, 3).build().unwrap()).unwrap();
        let mut global = model
            .init_global(&mut rand::rngs::ChaCha8Rng::seed_from_u64(5))
            .unwrap();
        for _ in 0..2 {
            let before = global.tpbn.zeta_inv.clone();
            let carried = model.after_blend_natural(&mut global).unwrap().unwrap();
            assert_ne!(global.tpbn.zeta_inv, before, "the TPBN posterior moved");
            assert_eq!(carried, model.expected_natural(&global).unwrap());
        }
    }

    #[test]
    fn denoised_shift_is_a_wiener_filter() {
        let k = 3;
        let p = DMatrix::<f64>::identity(k, k) * 4.0;
        let h = DMatrix::from_row_slice(2, k, &[1.0, -2.0, 3.0, 0.5, 0.5, 0.5]);
        // Prior variance 1 (the floor), P = 4 I: shift' = P (P^2 + s^2)^-1 P h = 16 / (16 + s^2) h.
        let prior = vec![1.0; 2 * k];
        let out = denoised_shift(&[p.clone(), p.clone()], h.clone(), &[0.0, 0.5], 6.0, &prior);
        // Row 0 has no noise: unchanged.
        assert_eq!(out.row(0), h.row(0));
        let s2 = (6.0f64 * 0.5).powi(2);
        for c in 0..k {
            assert!((out[(1, c)] - 16.0 / (16.0 + s2) * h[(1, c)]).abs() < 1e-12);
        }
        // Overwhelming noise filters the shift out.
        let out = denoised_shift(&[p.clone(), p], h.clone(), &[1e6, 1e6], 6.0, &prior);
        assert!(out.iter().all(|x| x.abs() < 1e-9));
    }
}
