//! The small trait a model implements to be fitted by ADF, EP, SEP and DP-SEP.

/// A model whose approximating family is an exponential family with a flat natural-parameter
/// vector of length [`SepModel::dim`] (e.g. a product of Gaussians in natural parameters, diagonal
/// or full, possibly with Gamma factors).
///
/// The engine supplies cavities; the model supplies the moment-matched tilted distribution
/// (`proj[q_cavity(theta) p(x_n | theta)]`, 002 Algorithms 1-3, step "moment matching").
pub trait SepModel {
    /// One data record (what the privacy wall protects).
    type Record: Sync;

    /// Length of the natural-parameter vector.
    fn dim(&self) -> usize;

    /// Writes into `out` the natural parameters of `proj[cavity * p(record | theta)]`.
    /// Returns `false` if the tilted moments could not be computed or matched (the caller then
    /// keeps the current factor; under DP-SEP this is still a bounded function of the record).
    fn tilted(&self, cavity: &[f64], record: &Self::Record, out: &mut [f64]) -> bool;

    /// Whether `theta` is a proper distribution of the family (positive precisions, ...).
    fn is_valid(&self, theta: &[f64]) -> bool;

    /// Projects `theta` back into the valid set (e.g. floors precisions). Used only as
    /// post-processing of already released parameters (a noised posterior can be improper).
    fn repair(&self, theta: &mut [f64]);

    /// Whether the model supplies a metric ([`SepModel::metric`]), which
    /// [`crate::Clipping::Whitened`] needs (default `false`: that clipping is refused).
    fn has_metric(&self) -> bool {
        false
    }

    /// The model's whitening at the valid point `at`: `v <- L^T v` for a change of natural
    /// parameters `v`, where `L L^T` is the family's Fisher information at `at` (the covariance
    /// of its sufficient statistics), so `||L^T v||^2 = v^T F v` is the local squared distance
    /// the change moves `at` by (twice the KL divergence to second order), and its inverse. A
    /// DP-SEP step calls it once at its cavity (public: earlier releases only) and applies it to
    /// every record. Default: the identity.
    fn metric<'a>(&'a self, at: &'a [f64]) -> Metric<'a> {
        let _ = at;
        Metric::new(|_: &mut [f64]| {}, |_: &mut [f64]| {})
    }

    /// Hook at the end of each epoch: may refine the prior's approximating factors `prior`
    /// given the current posterior `posterior` (e.g. PBP's EP refinement of the Gamma prior on
    /// the weight precision). Depends on the data only through `posterior`, so under DP-SEP it
    /// is post-processing. Default: no change.
    fn refine_prior(&mut self, prior: &mut [f64], posterior: &[f64]) {
        let _ = (prior, posterior);
    }
}

/// A model's whitening at one public point ([`SepModel::metric`]): a linear map and its inverse.
///
/// # Example
/// ```
/// use dp_sep::model::Metric;
/// let m = Metric::new(|v: &mut [f64]| v[0] *= 2.0, |v: &mut [f64]| v[0] /= 2.0);
/// let mut v = [3.0];
/// m.whiten(&mut v);
/// assert_eq!(v, [6.0]);
/// m.unwhiten(&mut v);
/// assert_eq!(v, [3.0]);
/// ```
pub struct Metric<'a> {
    whiten: LinearMap<'a>,
    unwhiten: LinearMap<'a>,
}

/// A linear map applied in place.
type LinearMap<'a> = Box<dyn Fn(&mut [f64]) + 'a>;

impl<'a> Metric<'a> {
    /// The map `whiten` and its inverse `unwhiten`.
    pub fn new(whiten: impl Fn(&mut [f64]) + 'a, unwhiten: impl Fn(&mut [f64]) + 'a) -> Self {
        Self {
            whiten: Box::new(whiten),
            unwhiten: Box::new(unwhiten),
        }
    }

    /// `v <- L^T v`.
    pub fn whiten(&self, v: &mut [f64]) {
        (self.whiten)(v)
    }

    /// `v <- L^-T v`.
    pub fn unwhiten(&self, v: &mut [f64]) {
        (self.unwhiten)(v)
    }
}
