//! RDP answers for validated input: optimise the order and convert to `(epsilon, delta)`,
//! whatever accountant is configured (the PLD accountant uses these as its fallback upper bound).

use crate::answer::{AccountantConfig, DeltaReport, EpsilonReport};
use crate::events::PrivacyEvent;
use crate::optimize::{self, Optimum};
use crate::rdp::RdpEvaluator;

/// `delta` for validated input by RDP (whatever the configured accountant).
pub(crate) fn delta_valid(
    event: &PrivacyEvent,
    epsilon: f64,
    config: &AccountantConfig,
) -> DeltaReport {
    let evaluator = std::cell::RefCell::new(RdpEvaluator::new(event));
    let rdp = |a: f64| evaluator.borrow_mut().eval(a);
    let opt = match config.orders().grid() {
        None => optimize::ln_delta_continuous(&rdp, epsilon, config.conversion()),
        Some(grid) => {
            let curve = crate::rdp::curve_valid(event, &grid);
            optimize::ln_delta_grid(&curve, &grid, epsilon, config.conversion())
        }
    };
    DeltaReport {
        // NaN (never expected) answers 1, the trivial bound
        delta: if opt.value.is_nan() {
            1.0
        } else {
            opt.value.exp().min(1.0)
        },
        epsilon,
        order: opt.order,
        method: config.method(),
        delta_lower: None,
    }
}

/// `epsilon` for validated input by RDP (whatever the configured accountant).
pub(crate) fn epsilon_valid(
    event: &PrivacyEvent,
    delta: f64,
    config: &AccountantConfig,
) -> EpsilonReport {
    let evaluator = std::cell::RefCell::new(RdpEvaluator::new(event));
    let rdp = |a: f64| evaluator.borrow_mut().eval(a);
    let ln_delta = delta.ln();
    let Optimum { value, order } = match config.orders().grid() {
        None => optimize::epsilon_continuous(&rdp, ln_delta, config.conversion()),
        Some(grid) => {
            let curve = crate::rdp::curve_valid(event, &grid);
            optimize::epsilon_grid(&curve, &grid, ln_delta, config.conversion())
        }
    };
    EpsilonReport {
        epsilon: value,
        delta,
        order,
        rdp: rdp(order),
        method: config.method(),
        epsilon_lower: None,
    }
}
