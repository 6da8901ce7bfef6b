use super::*;

#[test]
fn q_one_is_exactly_gaussian() {
    for a in [1.5, 2.0, 7.25, 64.0] {
        assert_eq!(
            rdp_poisson_subsampled_gaussian(1.3, 1.0, a).unwrap(),
            a / (2.0 * 1.3 * 1.3)
        );
    }
}

#[test]
fn order_two_closed_form() {
    // A_2 = 1 + q^2 expm1(1/sigma^2)
    let (s, q) = (1.5f64, 0.03f64);
    let exact = (q * q * (1.0 / (s * s)).exp_m1()).ln_1p();
    let got = rdp_poisson_subsampled_gaussian(s, q, 2.0).unwrap();
    // an upper bound (up to the few ulps of the closed form's own rounding), whose rounding
    // margin is a few dozen ulps
    assert!(
        got >= exact * (1.0 - 4.0 * f64::EPSILON) && got <= exact * (1.0 + 1e-13),
        "{got} vs {exact}"
    );
}

#[test]
fn fractional_sits_between_integers() {
    for (s, q) in [(0.7, 0.2), (1.1, 0.01), (3.0, 0.5), (0.9, 0.8)] {
        for a in [2.0, 3.0, 5.0, 9.0] {
            let lo = rdp_poisson_subsampled_gaussian(s, q, a).unwrap();
            let mid = rdp_poisson_subsampled_gaussian(s, q, a + 0.5).unwrap();
            let hi = rdp_poisson_subsampled_gaussian(s, q, a + 1.0).unwrap();
            assert!(
                lo <= mid * (1.0 + 1e-12) && mid <= hi * (1.0 + 1e-12),
                "{s} {q} {a}: {lo} {mid} {hi}"
            );
        }
    }
}

#[test]
fn bad_input_is_typed() {
    assert!(rdp_poisson_subsampled_gaussian(0.0, 0.1, 2.0).is_err());
    assert!(rdp_poisson_subsampled_gaussian(1.0, 0.0, 2.0).is_err());
    assert!(rdp_poisson_subsampled_gaussian(1.0, 0.1, 1.0).is_err());
    assert!(rdp_poisson_subsampled_gaussian(1.0, 0.1, f64::NAN).is_err());
    assert!(rdp_fixed_size_subsampled_gaussian(1.0, 10, 5, 2.0).is_err());
    assert!(compose_rdp(&[]).is_err());
}

#[test]
fn fixed_size_is_below_full_batch() {
    for a in [1.5, 2.0, 3.0, 10.0, 40.0, 300.0] {
        let full = a / (2.0 * 0.8 * 0.8);
        let sub = rdp_fixed_size_subsampled_gaussian(0.8, 6, 60_000, a).unwrap();
        assert!(sub > 0.0 && sub < full, "{a}: {sub}");
    }
}

#[test]
fn shared_curve_is_bit_identical_to_order_by_order() {
    let mut orders = crate::dp_accounting_default_orders();
    orders.extend([1.25, 2.75, 17.3, 255.5, 300.25]);
    for (s, q) in [
        (1.1, 0.01),
        (0.5, 1e-4),
        (10.0, 0.2),
        (0.8, 0.7),
        (2.0, 1.0),
    ] {
        let step = PrivacyEvent::poisson_subsampled_gaussian(s, q).unwrap();
        let run = PrivacyEvent::compose(vec![
            step.clone().self_composed(7).unwrap(),
            PrivacyEvent::gaussian(3.0, crate::Neighbouring::AddRemoveOne).unwrap(),
        ])
        .unwrap();
        for event in [&step, &run] {
            let curve = rdp_curve(event, &orders).unwrap();
            let mut evaluator = RdpEvaluator::new(event);
            for (&a, &v) in orders.iter().zip(&curve) {
                let single = rdp_event(event, a).unwrap();
                assert_eq!(v.to_bits(), single.to_bits(), "sigma {s} q {q} order {a}");
                let shared = evaluator.eval(a);
                assert_eq!(
                    shared.to_bits(),
                    single.to_bits(),
                    "sigma {s} q {q} order {a}"
                );
            }
        }
    }
}

/// The integer-order sum stops early once the rest is bounded by `expm1(c_k)`; it must stay
/// on the safe side of (and within rounding of) the full sum over every `k`.
#[test]
fn pruned_integer_sum_bounds_the_full_sum() {
    use crate::numeric::{ln_binom_int, ln_expm1};
    for (s, q) in [
        (1.1f64, 0.01f64),
        (0.5, 1e-4),
        (10.0, 0.2),
        (0.8, 0.7),
        (3.0, 0.05),
    ] {
        let mut cache = poisson_int::IntCache::new();
        for a in [2u64, 3, 7, 16, 63, 128, 256, 512, 1024] {
            let terms: Vec<f64> = (2..=a)
                .map(|k| {
                    let kf = k as f64;
                    ln_binom_int(a, k)
                        + kf * q.ln()
                        + (a - k) as f64 * (-q).ln_1p()
                        + ln_expm1((kf * kf - kf) / (2.0 * s * s))
                })
                .collect();
            let max = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let full = max + terms.iter().map(|t| (t - max).exp()).sum::<f64>().ln();
            let pruned = poisson_int::ln_a_minus_one(q, s, a, &mut cache);
            // ln values: absolute differences are relative differences of A - 1; beyond
            // |ln| = 1 the rounding of the logarithm itself sets the scale
            let tol = 1e-12 * full.abs().max(1.0);
            assert!(
                pruned >= full - tol && pruned <= full + tol,
                "sigma {s} q {q} order {a}: pruned {pruned} full {full}"
            );
        }
    }
}

/// A never_low property-test case (random seed): replace-one, 1 of 2, sigma 1.32e-154, one step.
/// With probability 1/2 the record is in the batch and the noise cannot hide it, so delta stays
/// at least 1/2 until `e^eps Phi(-1/(2 sigma)) ~ 1`, i.e. eps >~ 7.1e306. The bound's terms
/// `c k (k - 1)` overflow from order 3 on; they used to drop out and leave `ln A` saturated at
/// the order-2 term, an RDP that *decreased* with the order and an epsilon of 2.2e305 (low).
#[test]
fn fixed_size_with_overflowing_terms_is_not_low() {
    let e =
        PrivacyEvent::fixed_size_subsampled_gaussian(1.324_614_654_593_144_6e-154, 1, 2).unwrap();
    let orders = crate::dp_accounting_default_orders();
    let c = curve_valid(&e, &orders);
    for w in c.windows(2).zip(orders.windows(2)) {
        assert!(
            w.0[1] >= w.0[0],
            "RDP decreases from order {} to {}",
            w.1[0],
            w.1[1]
        );
    }
    let eps = crate::epsilon_for_event(
        &e,
        2.752_965_206_691_895e-265,
        &crate::AccountantConfig::default(),
    )
    .unwrap()
    .epsilon;
    assert!(eps >= 7.0e306, "epsilon {eps:e}");
}
