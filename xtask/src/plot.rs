//! SVG line plots (plotters, SVG backend only: no system fonts or libraries needed).

use std::path::Path;

use plotters::prelude::*;

/// One named line of `(x, y)` points.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series from a label and points.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            label: label.into(),
            points,
        }
    }
}

/// Axis scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear axis.
    Linear,
    /// Base-10 logarithmic axis (non-positive values are dropped).
    Log,
}

/// Plot description.
#[derive(Debug, Clone)]
pub struct LinePlot<'a> {
    /// Title above the plot.
    pub title: &'a str,
    /// x-axis label.
    pub x_label: &'a str,
    /// y-axis label.
    pub y_label: &'a str,
    /// x-axis scale.
    pub x_scale: Scale,
    /// y-axis scale.
    pub y_scale: Scale,
}

fn transform(v: f64, scale: Scale) -> Option<f64> {
    match scale {
        Scale::Linear => v.is_finite().then_some(v),
        Scale::Log => (v.is_finite() && v > 0.0).then(|| v.log10()),
    }
}

/// Draws `series` as lines with markers into an SVG file at `path`.
///
/// Log axes are drawn by plotting `log10` values with tick labels shown as powers of ten.
pub fn line_plot(path: &Path, spec: &LinePlot<'_>, series: &[Series]) -> anyhow::Result<()> {
    let pts: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .filter_map(|&(x, y)| {
                    Some((transform(x, spec.x_scale)?, transform(y, spec.y_scale)?))
                })
                .collect()
        })
        .collect();
    let all: Vec<(f64, f64)> = pts.iter().flatten().copied().collect();
    anyhow::ensure!(!all.is_empty(), "nothing to plot for {}", spec.title);
    let (mut x0, mut x1) = min_max(all.iter().map(|p| p.0));
    let (mut y0, mut y1) = min_max(all.iter().map(|p| p.1));
    pad(&mut x0, &mut x1);
    pad(&mut y0, &mut y1);

    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(spec.title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    let fmt = |scale: Scale| {
        move |v: &f64| match scale {
            Scale::Linear => format_number(*v),
            Scale::Log => format_number(10f64.powf(*v)),
        }
    };
    chart
        .configure_mesh()
        .x_desc(spec.x_label)
        .y_desc(spec.y_label)
        .x_label_formatter(&fmt(spec.x_scale))
        .y_label_formatter(&fmt(spec.y_scale))
        .draw()?;
    for (i, (s, p)) in series.iter().zip(&pts).enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            p.iter()
                .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}

fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

fn pad(lo: &mut f64, hi: &mut f64) {
    let span = (*hi - *lo).abs();
    let margin = if span > 0.0 {
        0.05 * span
    } else {
        0.5f64.max(lo.abs() * 0.1)
    };
    *lo -= margin;
    *hi += margin;
}

fn format_number(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e4 || v.abs() < 1e-2) {
        format!("{v:.1e}")
    } else {
        format!("{v:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}
