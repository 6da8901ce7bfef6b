//! `ln Phi` for calibration and audits: the accountant's, re-exported under this crate's
//! historical name.
//!
//! The workspace's one normal-tail implementation is [`dp_accountant::normal`] (libm's `erfc`,
//! accurate in both tails, with the asymptotic series where `Phi` underflows; tested there
//! against mpmath). dp-core already depends on the accountant, so it keeps no copy.

pub(crate) use dp_accountant::normal::ln_normal_cdf as ln_ndtr;
