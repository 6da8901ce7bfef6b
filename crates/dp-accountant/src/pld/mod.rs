//! Privacy-loss-distribution (PLD) accounting (work in progress; see issue 11).
