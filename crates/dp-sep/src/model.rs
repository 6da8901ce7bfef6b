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

    /// Whether the model supplies the metric [`SepModel::whiten`] uses, which
    /// [`crate::Clipping::Whitened`] needs (default `false`: that clipping is refused).
    fn has_metric(&self) -> bool {
        false
    }

    /// Maps a change of natural parameters `v` into whitened coordinates at the valid point
    /// `at`: `v <- L^T v`, where `L L^T` is the family's Fisher information at `at` (the
    /// covariance of its sufficient statistics), so `||L^T v||^2 = v^T F v` is the local
    /// squared distance the change moves `at` by (twice the KL divergence to second order).
    /// Default: no change. `at` must be public under DP-SEP (it is the step's repaired cavity).
    fn whiten(&self, at: &[f64], v: &mut [f64]) {
        let _ = (at, v);
    }

    /// The inverse of [`SepModel::whiten`] at the same point: `v <- L^-T v`. Default: no change.
    fn unwhiten(&self, at: &[f64], v: &mut [f64]) {
        let _ = (at, v);
    }

    /// Hook at the end of each epoch: may refine the prior's approximating factors `prior`
    /// given the current posterior `posterior` (e.g. PBP's EP refinement of the Gamma prior on
    /// the weight precision). Depends on the data only through `posterior`, so under DP-SEP it
    /// is post-processing. Default: no change.
    fn refine_prior(&mut self, prior: &mut [f64], posterior: &[f64]) {
        let _ = (prior, posterior);
    }
}
