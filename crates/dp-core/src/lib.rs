//! # dp-core
//!
//! Differential-privacy mechanisms on top of `dp-accountant`'s events: the Gaussian mechanism
//! (classic and analytic calibration), Analyze-Gauss symmetric noise with positive-definite
//! projection, L2 / Frobenius clipping, the samplers the accountant assumes, and the privacy wall.
