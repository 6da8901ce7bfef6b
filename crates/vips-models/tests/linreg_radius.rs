//! The released radius (issue 19): its per-record statistic moves by at most 1 between
//! neighbouring files (from loading on), the fit's ledger holds both releases within the budget
//! under every accountant, the non-private path uses the exact root-mean-square norm, and
//! prediction uses the unscaled row (a weighted training row keeps `y = w^T x` exact).

mod common;

use std::path::Path;

use dp_accountant::AccountantKind;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{PublicRange, PublicRanges, Standardizer};
use vips_models::engine::{Privacy, SviConfig};
use vips_models::linreg::{
    LinregOptions, RADIUS_BUDGET_SHARE, RadiusChoice, TargetMap, batch_config, batch_config_with,
    fit_mapped, mean_square_of_row, radius_for_mean_square, release_radius,
};

const D: usize = 3;

fn base_rows() -> Vec<[f64; D + 1]> {
    (0..40)
        .map(|i| {
            let t = f64::from(i);
            let (a, b, c) = ((t * 0.7).sin() * 4.0, (t * 0.3).cos() * 3.0, t % 5.0);
            [a, b, c, 0.5 * a - 0.2 * b + 0.1 * c]
        })
        .collect()
}

/// The released mean of `||z||^2 / d` times the public population (the released sum), from
/// the files through the loader and the declared ranges, non-private (no noise).
fn released_sum(dir: &Path, population: usize) -> f64 {
    let data = SplitFolder::load(dir).unwrap();
    let ranges = PublicRanges::uniform(
        D,
        PublicRange::new(-10.0, 10.0).unwrap(),
        PublicRange::new(-20.0, 20.0).unwrap(),
    );
    let (train, _) = data.split(0).unwrap();
    let z = Standardizer::from_public_ranges(&ranges).transform(&train);
    let svi = batch_config(population, Privacy::NonPrivate, None).unwrap();
    let r = release_radius(D, (0..z.len()).map(|i| z.row(i)), &svi).unwrap();
    r.mean_square * population as f64
}

#[test]
fn the_radius_statistic_moves_by_at_most_one_between_neighbouring_files() {
    let base = base_rows();
    let guard = common::dir("linreg-radius", "base");
    // The last row is the test split; the rest train.
    common::write_uci_folder(guard.path(), &base, base.len() - 1);
    let n = base.len(); // training rows of the neighbour: public, the same on both sides
    let s = released_sum(guard.path(), n);
    let mut largest = 0.0_f64;
    for (k, adv) in [
        [1e300, -1e300, 1e300, 0.0],
        [0.0, 0.0, 0.0, 1e3],
        [10.0, -10.0, 10.0, 5.0],
        [-3.0, 2.0, 1e9, -1e9],
    ]
    .iter()
    .enumerate()
    {
        let mut rows = base.clone();
        rows.insert(7, *adv);
        let g = common::dir("linreg-radius", &format!("adv{k}"));
        common::write_uci_folder(g.path(), &rows, rows.len() - 1);
        let moved = (released_sum(g.path(), n) - s).abs();
        assert!(
            moved <= 1.0 + 1e-9,
            "adversary {k} moved the sum by {moved}"
        );
        largest = largest.max(moved);
    }
    // The corners of the box reach the bound: a map that let a record past it would show.
    assert!(largest > 0.999, "{largest}");
}

#[test]
fn a_record_contributes_its_own_clamped_mean_square_only() {
    assert_eq!(mean_square_of_row(2, &[0.5, -0.5]).unwrap(), 0.25);
    assert_eq!(mean_square_of_row(2, &[7.0, 0.0]).unwrap(), 0.5);
    assert!(mean_square_of_row(2, &[f64::NAN, 0.0]).is_err());
    assert!(mean_square_of_row(2, &[0.0]).is_err());
}

fn rows_in_box(n: usize) -> Vec<(Vec<f64>, f64)> {
    (0..n)
        .map(|i| {
            let t = i as f64;
            let z = vec![0.4 * (t * 0.37).sin(), 0.3 * (t * 0.11).cos()];
            let y = 0.5 * z[0] - 0.8 * z[1] + 0.1 + 0.02 * (t * 1.7).sin();
            (z, y)
        })
        .collect()
}

fn fit_rows(rows: &[(Vec<f64>, f64)], svi: &SviConfig) -> vips_models::linreg::MappedFit {
    fit_mapped(
        2,
        rows.iter().map(|(z, y)| (z.as_slice(), *y)),
        rows.iter().take(5).map(|(z, _)| z.as_slice()),
        &rows.iter().take(5).map(|(_, y)| *y).collect::<Vec<_>>(),
        TargetMap::from_range(-1.0, 1.0).unwrap(),
        &LinregOptions::default(),
        svi,
    )
    .unwrap()
}

#[test]
fn every_accountant_holds_both_releases_within_the_budget() {
    let rows = rows_in_box(3000);
    for kind in AccountantKind::ALL {
        let target = Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        };
        let svi = batch_config_with(rows.len(), target, Some(5), kind).unwrap();
        let out = fit_rows(&rows, &svi);
        let privacy = &out.fit.result.privacy;
        let ledger = out
            .fit
            .result
            .privacy
            .ledger
            .as_ref()
            .expect("a private fit has a ledger");
        assert_eq!(ledger.entries().len(), 2, "{kind:?}");
        assert!(ledger.entries()[0].label.contains("radius"), "{kind:?}");
        let eps = privacy.epsilon.unwrap();
        assert!(eps <= 1.0 && eps > 0.5, "{kind:?}: {eps}");
        assert_eq!(ledger.epsilon(1e-5).unwrap(), eps, "{kind:?}");
        // The radius release gets the smaller share: a larger noise multiplier.
        let radius_sigma = out.radius_noise_multiplier.unwrap();
        let fit_sigma = privacy.noise_multiplier.unwrap();
        assert!(radius_sigma > fit_sigma, "{kind:?}");
    }
}

#[test]
fn the_split_costs_the_fit_the_share_of_the_budget_and_no_more() {
    // Under RDP two Gaussians compose exactly as one with 1/s^2 = 1/s1^2 + 1/s2^2, so the fit's
    // multiplier is the whole-budget multiplier over sqrt(1 - share), up to the calibration's
    // tolerance.
    let rows = rows_in_box(3000);
    let target = Privacy::Target {
        epsilon: 1.0,
        delta: 1e-5,
    };
    let declared = LinregOptions {
        radius: Some(1.2),
        ..LinregOptions::default()
    };
    let svi = batch_config_with(rows.len(), target, Some(5), AccountantKind::Rdp).unwrap();
    let whole = fit_mapped(
        2,
        rows.iter().map(|(z, y)| (z.as_slice(), *y)),
        std::iter::empty(),
        &[],
        TargetMap::from_range(-1.0, 1.0).unwrap(),
        &declared,
        &svi,
    )
    .unwrap();
    assert!(whole.radius_noise_multiplier.is_none());
    assert_eq!(
        whole
            .fit
            .result
            .privacy
            .ledger
            .as_ref()
            .unwrap()
            .entries()
            .len(),
        1
    );
    let s = whole.fit.result.privacy.noise_multiplier.unwrap();
    let split = fit_rows(&rows, &svi);
    let s2 = split.fit.result.privacy.noise_multiplier.unwrap();
    let s1 = split.radius_noise_multiplier.unwrap();
    let expect2 = s / (1.0 - RADIUS_BUDGET_SHARE).sqrt();
    assert!((s2 / expect2 - 1.0).abs() < 1e-3, "{s2} vs {expect2}");
    assert!((s1 / (s / RADIUS_BUDGET_SHARE.sqrt()) - 1.0).abs() < 1e-3);
}

#[test]
fn non_private_radius_is_the_exact_root_mean_square_norm() {
    let rows = rows_in_box(500);
    let out = fit_rows(
        &rows,
        &batch_config(500, Privacy::NonPrivate, None).unwrap(),
    );
    let m = rows
        .iter()
        .map(|(z, _)| mean_square_of_row(2, z).unwrap())
        .sum::<f64>()
        / 500.0;
    assert!((out.rows.radius() - radius_for_mean_square(2, m)).abs() < 1e-12);
    assert_eq!(out.radius_noise_multiplier, Some(0.0));
    assert!(out.fit.result.privacy.ledger.is_none());
}

#[test]
fn prediction_uses_the_unscaled_row() {
    // Exact linear data, a declared radius so small that every row is rescaled (weighted) into
    // the unit ball: the fit recovers the line, and a test row far outside the ball is
    // predicted on the line (scaling it into the ball would shrink the prediction).
    let rows: Vec<(Vec<f64>, f64)> = (0..400)
        .map(|i| {
            let t = f64::from(i);
            let z = vec![(t * 0.37).sin(), (t * 0.11).cos()];
            let y = 0.3 * z[0] - 0.2 * z[1] + 0.1;
            (z, y)
        })
        .collect();
    let test = [vec![1.0, -1.0]];
    let truth = 0.3 + 0.2 + 0.1;
    let options = LinregOptions {
        radius: Some(0.3),
        prior_precision: Some(1e-9),
        ..LinregOptions::default()
    };
    let out = fit_mapped(
        2,
        rows.iter().map(|(z, y)| (z.as_slice(), *y)),
        test.iter().map(Vec::as_slice),
        &[truth],
        TargetMap::from_range(-1.0, 1.0).unwrap(),
        &options,
        &batch_config(400, Privacy::NonPrivate, None).unwrap(),
    )
    .unwrap();
    assert_eq!(out.rows_clamped_or_rescaled, 400);
    let rmse = out.metrics.unwrap().rmse;
    assert!(rmse < 1e-6, "{rmse}");
}

#[test]
fn refused_settings_are_typed_errors() {
    let rows = rows_in_box(100);
    let zs = || rows.iter().map(|(z, _)| z.as_slice());
    // A private fit without a declared population.
    let undeclared = SviConfig::builder()
        .expected_batch_size(100.0)
        .privacy(Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        })
        .build()
        .unwrap();
    assert!(release_radius(2, zs(), &undeclared).is_err());
    // A budget too small for any split (epsilon 1e-9 with delta 1e-300 needs enormous noise:
    // either the calibration or the split search refuses; no silent fallback).
    let tiny = batch_config(
        100,
        Privacy::Target {
            epsilon: 1e-9,
            delta: 1e-300,
        },
        None,
    )
    .unwrap();
    assert!(release_radius(2, zs(), &tiny).is_err());
    // No rows; rows of the wrong width.
    let svi = batch_config(100, Privacy::NonPrivate, None).unwrap();
    assert!(release_radius(2, std::iter::empty(), &svi).is_err());
    assert!(release_radius(3, zs(), &svi).is_err());
    // The flag's values.
    assert_eq!(
        "released".parse::<RadiusChoice>().unwrap(),
        RadiusChoice::Released
    );
    for bad in ["0", "-2", "NaN", "inf", "wide"] {
        assert!(bad.parse::<RadiusChoice>().is_err(), "{bad}");
    }
}

#[test]
fn a_given_noise_multiplier_keeps_the_fits_and_the_wall_refuses_past_the_budget() {
    let rows = rows_in_box(2000);
    let given = |sigma: f64| {
        batch_config(
            rows.len(),
            Privacy::NoiseMultiplier {
                noise_multiplier: sigma,
                epsilon: 1.0,
                delta: 1e-5,
            },
            Some(9),
        )
        .unwrap()
    };
    // Room for both: the fit keeps sigma, the radius release gets sigma sqrt(0.95 / 0.05).
    let out = fit_rows(&rows, &given(8.0));
    let p = &out.fit.result.privacy;
    assert_eq!(p.noise_multiplier, Some(8.0));
    let r = out.radius_noise_multiplier.unwrap();
    assert!((r / (8.0 * (0.95_f64 / 0.05).sqrt()) - 1.0).abs() < 1e-12);
    assert_eq!(p.ledger.as_ref().unwrap().entries().len(), 2);
    assert!(p.epsilon.unwrap() <= 1.0);
    // A multiplier that spends the whole budget alone leaves no room for the radius release:
    // the fit's wall refuses its release (typed), nothing is silently dropped.
    let err = fit_mapped(
        2,
        rows.iter().map(|(z, y)| (z.as_slice(), *y)),
        std::iter::empty(),
        &[],
        TargetMap::from_range(-1.0, 1.0).unwrap(),
        &LinregOptions::default(),
        &given(3.7),
    )
    .unwrap_err();
    assert!(err.to_string().contains("budget"), "{err}");
}
