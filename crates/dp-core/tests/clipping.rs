//! Clipping never increases a norm, enforces the bound, and leaves in-bound records bit-identical.

use dp_core::{UnitBallTransform, clip_l2, clip_norm};
use nalgebra::DMatrix;
use proptest::prelude::*;

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

fn entries() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![-1e3f64..1e3, -1e-3f64..1e-3, Just(0.0), -1e150f64..1e150],
        1..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn l2_clip_never_increases_the_norm_and_enforces_the_bound(x in entries(), bound in 1e-6f64..1e6) {
        let before = x.clone();
        let mut y = x.clone();
        let out = clip_l2(&mut y, bound).unwrap();
        let (nb, na) = (norm(&before), norm(&y));
        if nb.is_finite() {
            prop_assert!(na <= nb, "norm grew: {nb} -> {na}");
        }
        prop_assert!(na <= bound, "norm {na} above bound {bound}");
        if out.was_clipped() {
            prop_assert!(out.original_norm > bound);
            // direction kept: y = scale * x
            for (a, b) in y.iter().zip(&before) {
                prop_assert_eq!(*a, b * out.scale);
            }
        } else {
            prop_assert_eq!(out.scale, 1.0);
            for (a, b) in y.iter().zip(&before) {
                prop_assert_eq!(a.to_bits(), b.to_bits());
            }
        }
    }

    #[test]
    fn in_bound_records_are_bit_identical(x in prop::collection::vec(-1.0f64..1.0, 1..30)) {
        let bound = norm(&x).max(1e-300) * 1.000_001;
        let mut y = x.clone();
        let out = clip_l2(&mut y, bound).unwrap();
        prop_assert!(!out.was_clipped());
        prop_assert!(y.iter().zip(&x).all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn frobenius_clip_never_increases_the_norm(x in prop::collection::vec(-10.0f64..10.0, 12), bound in 0.01f64..100.0) {
        let m = DMatrix::from_vec(3, 4, x);
        let mut c = m.clone();
        let out = clip_norm(&mut c, bound).unwrap();
        prop_assert!(c.norm() <= m.norm());
        prop_assert!(c.norm() <= bound);
        if !out.was_clipped() {
            prop_assert_eq!(c, m);
        }
    }

    #[test]
    fn unit_ball_transform_lands_in_the_ball(x in prop::collection::vec(-500.0f64..500.0, 5)) {
        let t = UnitBallTransform::from_public_box(&[0.0; 5], &[255.0; 5]).unwrap();
        let mut y = x.clone();
        let out = t.apply(&mut y).unwrap();
        prop_assert!(norm(&y) <= 1.0);
        let inside = x.iter().all(|v| (0.0..=255.0).contains(v));
        if inside {
            prop_assert!(!out.was_clipped());
        }
    }
}
