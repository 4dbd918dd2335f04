//! `tfreq load`'s report ([`LoadReport`]) for people: [`write_load`] for a terminal,
//! [`load_html`] as a self-contained HTML page with inline SVG plots (no scripts,
//! nothing fetched).

use std::io::{self, Write};

use crate::analysis::load::{CurvePoint, LoadReport};

/// The report for a terminal (`tfreq load`'s default output): the run, its errors by
/// kind, the latency percentiles with a histogram, and the first call of each key.
/// (An example: `net::load`.)
pub fn write_load(out: &mut dyn Write, r: &LoadReport) -> io::Result<()> {
    let mode = match r.rate {
        Some(rate) => format!("open loop at {}/s", trim(rate)),
        None => "closed loop".to_string(),
    };
    writeln!(
        out,
        "load: {} requests to {} ({}), {} at once, {mode}",
        r.requests,
        crate::escape::sanitize(&r.to),
        r.protocol,
        r.concurrency
    )?;
    writeln!(
        out,
        "  elapsed {:.3} s, throughput {:.1}/s, sent at {:.1}/s",
        r.elapsed_s, r.throughput_per_s, r.send_rate_per_s
    )?;
    writeln!(out, "  answers {}, errors {}", r.answers, r.errors_total)?;
    if r.interrupted {
        writeln!(out, "  interrupted (Ctrl-C): no request started after it")?;
    }
    for (status, e) in &r.errors {
        writeln!(
            out,
            "  {}: {} (first: {})",
            crate::escape::sanitize(status),
            e.count,
            crate::escape::sanitize(&e.example)
        )?;
    }
    let p = &r.latency_ms;
    writeln!(
        out,
        "\nlatency of {} answers (ms, the first call of each key left out):",
        p.count
    )?;
    if p.count > 0 {
        writeln!(
            out,
            "  min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
            m(p.min_ms),
            m(p.mean_ms),
            m(p.p50_ms),
            m(p.p90_ms),
            m(p.p99_ms),
            m(p.p999_ms),
            m(p.max_ms)
        )?;
        writeln!(out, "  histogram (each bin: latencies up to its bound):")?;
        let most = r.histogram.iter().map(|b| b.count).max().unwrap_or(0);
        let width = r
            .histogram
            .iter()
            .map(|b| b.count.to_string().len())
            .max()
            .unwrap_or(1);
        for b in &r.histogram {
            writeln!(
                out,
                "  {:>12} ms [{:>width$}] {}",
                m(b.to_ms),
                b.count,
                bar(b.count, most, 40)
            )?;
        }
    }
    if !r.first_calls.is_empty() {
        writeln!(out, "\nfirst call of each executor key:")?;
        for f in &r.first_calls {
            let what = match &f.error {
                None => format!("{} ms", m(f.latency_ms)),
                Some(e) => format!("failed: {}", crate::escape::sanitize(e)),
            };
            writeln!(
                out,
                "  {what}  {}  ({})",
                crate::escape::sanitize(&f.key),
                crate::escape::sanitize(&f.request)
            )?;
        }
    }
    Ok(())
}

/// Milliseconds with three decimals.
fn m(ms: f64) -> String {
    format!("{ms:.3}")
}

/// A number without a needless `.0`.
fn trim(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// Text for HTML and SVG: shown safe ([`tfreq::escape`]), then `&`, `<`, `>`, `"` and
/// `'` as character references, so the page is well-formed XML as well as HTML.
fn x(s: &str) -> String {
    crate::escape::sanitize(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The plot's width and height, and its margin for the axes' labels.
const W: f64 = 640.0;
const H: f64 = 320.0;
const MARGIN: f64 = 56.0;

/// x of a percentile on the HdrHistogram plots' scale: log10 of 1 / (1 - p), so
/// 90, 99, 99.9 and 99.99 % are evenly spaced (100 % drawn at 99.999 %).
fn nines(p: f64) -> f64 {
    let q = (1.0 - p / 100.0).max(1e-5);
    (1.0 / q).log10()
}

/// The report as a self-contained page: the numbers, an SVG plot of latency by
/// percentile (a circle a point, its values in `data-percentile` and
/// `data-latency-ms`), and one of latency over the run.
pub fn load_html(r: &LoadReport) -> String {
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    s.push_str(&format!("<title>tfreq load: {}</title>\n", x(&r.to)));
    s.push_str("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}svg{background:#fff;border:1px solid #ccc}.grid{stroke:#ddd}.line{fill:none;stroke:#1f77b4;stroke-width:2}.dot{fill:#1f77b4}.pt{fill:#d62728;fill-opacity:0.5}</style>\n</head>\n<body>\n");
    s.push_str(&format!(
        "<h1>tfreq load</h1>\n<p>{} requests to <code>{}</code> ({}), {} at once, {}; elapsed {:.3} s, throughput {:.1}/s, sent at {:.1}/s; answers {}, errors {}.</p>\n",
        r.requests,
        x(&r.to),
        r.protocol,
        r.concurrency,
        match r.rate {
            Some(v) => format!("open loop at {}/s", trim(v)),
            None => "closed loop".into(),
        },
        r.elapsed_s,
        r.throughput_per_s,
        r.send_rate_per_s,
        r.answers,
        r.errors_total
    ));
    let p = &r.latency_ms;
    s.push_str("<h2>Latency (ms), the first call of each key left out</h2>\n<table>\n<tr><th>answers</th><th>min</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>\n");
    s.push_str(&format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n</table>\n",
        p.count,
        m(p.min_ms),
        m(p.mean_ms),
        m(p.p50_ms),
        m(p.p90_ms),
        m(p.p99_ms),
        m(p.p999_ms),
        m(p.max_ms)
    ));
    s.push_str(&curve_svg(&r.curve));
    s.push_str("<h2>Latency over the run</h2>\n");
    s.push_str(&time_svg(&r.points));
    if !r.errors.is_empty() {
        s.push_str(
            "<h2>Errors</h2>\n<table>\n<tr><th>status</th><th>count</th><th>first</th></tr>\n",
        );
        for (status, e) in &r.errors {
            s.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td style=\"text-align:left\">{}</td></tr>\n",
                x(status),
                e.count,
                x(&e.example)
            ));
        }
        s.push_str("</table>\n");
    }
    if !r.first_calls.is_empty() {
        s.push_str("<h2>First call of each executor key</h2>\n<table>\n<tr><th>ms</th><th>key</th><th>request</th></tr>\n");
        for f in &r.first_calls {
            let v = match &f.error {
                None => m(f.latency_ms),
                Some(e) => format!("failed: {}", e),
            };
            s.push_str(&format!(
                "<tr><td>{}</td><td style=\"text-align:left\">{}</td><td style=\"text-align:left\">{}</td></tr>\n",
                x(&v),
                x(&f.key),
                x(&f.request)
            ));
        }
        s.push_str("</table>\n");
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// The latency-by-percentile plot.
fn curve_svg(curve: &[CurvePoint]) -> String {
    let mut s = format!(
        "<h2>Latency by percentile</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"curve\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\">\n"
    );
    let top = curve.iter().map(|c| c.latency_ms).fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.05 } else { 1.0 };
    let x_max = nines(100.0);
    let px = |p: f64| MARGIN + (W - 2.0 * MARGIN) * nines(p) / x_max;
    let py = |v: f64| H - MARGIN - (H - 2.0 * MARGIN) * v / top;
    for (p, label) in [
        (0.0, "0%"),
        (90.0, "90%"),
        (99.0, "99%"),
        (99.9, "99.9%"),
        (99.99, "99.99%"),
        (100.0, "100%"),
    ] {
        let xx = px(p);
        s.push_str(&format!(
            "<line class=\"grid\" x1=\"{xx:.1}\" y1=\"{:.1}\" x2=\"{xx:.1}\" y2=\"{:.1}\"/><text x=\"{xx:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{label}</text>\n",
            MARGIN,
            H - MARGIN,
            H - MARGIN + 16.0
        ));
    }
    for k in 0..=4 {
        let v = top * f64::from(k) / 4.0;
        let yy = py(v);
        s.push_str(&format!(
            "<line class=\"grid\" x1=\"{MARGIN}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{v:.3}</text>\n",
            W - MARGIN,
            MARGIN - 4.0,
            yy + 4.0
        ));
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">percentile</text><text x=\"14\" y=\"{:.1}\" font-size=\"12\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">latency (ms)</text>\n",
        W / 2.0,
        H - 12.0,
        H / 2.0,
        H / 2.0
    ));
    let pts: Vec<String> = curve
        .iter()
        .map(|c| format!("{:.1},{:.1}", px(c.percentile), py(c.latency_ms)))
        .collect();
    s.push_str(&format!(
        "<polyline class=\"line\" points=\"{}\"/>\n",
        pts.join(" ")
    ));
    for c in curve {
        s.push_str(&format!(
            "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" data-percentile=\"{}\" data-latency-ms=\"{}\"><title>p{}: {} ms</title></circle>\n",
            px(c.percentile),
            py(c.latency_ms),
            c.percentile,
            c.latency_ms,
            c.percentile,
            m(c.latency_ms)
        ));
    }
    s.push_str("</svg>\n");
    s
}

/// The latency of every request kept in [`LoadReport::points`] by its scheduled send time.
fn time_svg(points: &[(f32, f32)]) -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"over-time\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\">\n"
    );
    let t_max = points
        .iter()
        .map(|p| f64::from(p.0))
        .fold(0.0, f64::max)
        .max(1e-3);
    let v_max = points
        .iter()
        .map(|p| f64::from(p.1))
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.05;
    let px = |t: f64| MARGIN + (W - 2.0 * MARGIN) * t / t_max;
    let py = |v: f64| H - MARGIN - (H - 2.0 * MARGIN) * v / v_max;
    for k in 0..=4 {
        let v = v_max * f64::from(k) / 4.0;
        let t = t_max * f64::from(k) / 4.0;
        s.push_str(&format!(
            "<line class=\"grid\" x1=\"{MARGIN}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{v:.3}</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{t:.2} s</text>\n",
            py(v),
            W - MARGIN,
            py(v),
            MARGIN - 4.0,
            py(v) + 4.0,
            px(t),
            H - MARGIN + 16.0
        ));
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">scheduled send time (s)</text><text x=\"14\" y=\"{:.1}\" font-size=\"12\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">latency (ms)</text>\n",
        W / 2.0,
        H - 12.0,
        H / 2.0,
        H / 2.0
    ));
    // One path of tiny squares: small enough for 100 000 points.
    let mut d = String::with_capacity(points.len() * 20);
    for &(t, v) in points {
        d.push_str(&format!(
            "M{:.1} {:.1}h2v2h-2z",
            px(f64::from(t)),
            py(f64::from(v))
        ));
    }
    s.push_str(&format!("<path class=\"pt\" d=\"{d}\"/>\n</svg>\n"));
    s
}

/// A bar of `count` out of `most` at most `width` characters wide (at least one
/// character for a count above 0).
fn bar(count: u64, most: u64, width: usize) -> String {
    if count == 0 || most == 0 {
        return String::new();
    }
    let w = ((count as f64 / most as f64) * width as f64).round() as usize;
    "■".repeat(w.clamp(1, width.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars() {
        assert_eq!(bar(0, 10, 40), "");
        assert_eq!(bar(10, 10, 40).chars().count(), 40);
        assert_eq!(bar(1, 1000, 40).chars().count(), 1);
        assert_eq!(bar(5, 10, 40).chars().count(), 20);
    }
}
