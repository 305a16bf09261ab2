//! The self-contained HTML page: inline CSS, every chart as inline SVG (with `<title>`/`<desc>`)
//! beside a `<table>` of its numbers, notes and flags under it, provenance in `<details>`, a slot
//! for the compare view, and a small inline script (hover values, series toggles, time-range
//! zoom) that the page does not need to be read. A Content-Security-Policy forbids every fetch.

use std::fmt::Write;

use crate::chart::render::{hex, Frame};
use crate::chart::{Chart, Table};
use crate::choose::Section;
use crate::flags;
use crate::model::Run;

const CSS: &str = include_str!("../assets/report.css");
const JS: &str = include_str!("../assets/report.js");

/// Standard base64 (RFC 4648, with padding), for pictures embedded as data URLs.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Adds `role`, `aria-labelledby`, `<title>` and `<desc>` to plotters' SVG.
pub fn accessible_svg(svg: &str, c: &Chart) -> String {
    let Some(start) = svg.find("<svg") else {
        return svg.to_string();
    };
    let Some(end) = svg[start..].find('>').map(|i| start + i) else {
        return svg.to_string();
    };
    let open = &svg[start..end];
    format!(
        "{}{open} role=\"img\" aria-labelledby=\"{id}-t {id}-d\"><title id=\"{id}-t\">{}</title><desc id=\"{id}-d\">{}</desc>{}",
        &svg[..start],
        esc(&c.title),
        esc(&c.desc),
        &svg[end + 1..],
        id = esc(&c.id),
    )
}

fn table(out: &mut String, t: &Table, id: &str, fx: &dyn Fn(f64) -> f64) {
    let _ = write!(
        out,
        "<div class=\"numbers\"><table id=\"{}-table\"{}><caption>{}</caption><thead><tr>",
        esc(id),
        if t.text { " class=\"text\"" } else { "" },
        esc(&t.caption)
    );
    for h in &t.headers {
        let _ = write!(out, "<th scope=\"col\">{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for (k, r) in t.rows.iter().enumerate() {
        match t.x.get(k).map(|x| fx(*x)).filter(|x| x.is_finite()) {
            Some(x) => {
                let _ = write!(out, "<tr data-x=\"{x}\">");
            }
            None => out.push_str("<tr>"),
        }
        for (i, c) in r.iter().enumerate() {
            if i == 0 {
                let _ = write!(out, "<th scope=\"row\">{}</th>", esc(c));
            } else {
                let _ = write!(out, "<td>{}</td>", esc(c));
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn figure(out: &mut String, c: &Chart, svg: &str, f: &Frame) {
    let _ = write!(
        out,
        "<figure class=\"chart\" id=\"{id}\" data-frame=\"{} {} {} {} {} {}\" data-zoom=\"{}\"><figcaption><h3>{}</h3><p class=\"desc\">{}</p></figcaption><div class=\"pair\"><div class=\"plot\">{svg}",
        f.px0,
        f.px1,
        f.py0,
        f.py1,
        f.x0,
        f.x1,
        c.zoomable,
        esc(&c.title),
        esc(&c.desc),
        id = esc(&c.id),
    );
    if c.series.len() > 1 {
        out.push_str("<div class=\"legend\" hidden>");
        for (i, s) in c.series.iter().enumerate() {
            let _ = write!(out, "<button type=\"button\" aria-pressed=\"true\" data-color=\"{}\"><span style=\"background:{}\"></span>{}</button>", hex(c.color(i)), hex(c.color(i)), esc(&s.name));
        }
        out.push_str("</div>");
    }
    out.push_str("</div>");
    table(out, &c.table, &c.id, &crate::chart::render::x_transform(c));
    out.push_str("</div>");
    if !c.notes.is_empty() {
        out.push_str("<ul class=\"notes\">");
        for n in &c.notes {
            let flag = flags::ALL.iter().any(|f| n.contains(f));
            let class = if flag { " class=\"flag\"" } else { "" };
            let _ = write!(out, "<li{class}>{}</li>", esc(n));
        }
        out.push_str("</ul>");
    }
    out.push_str("</figure>\n");
}

fn flag_legend(out: &mut String, charts: &[Chart]) {
    let mut used: Vec<&str> = Vec::new();
    for n in charts.iter().flat_map(|c| &c.notes) {
        for &f in flags::ALL {
            if n.contains(f) && !used.contains(&f) {
                used.push(f);
            }
        }
    }
    if used.is_empty() {
        return;
    }
    out.push_str("<div class=\"flags\" role=\"note\"><strong>Flagged points</strong> (ringed in red on the charts):<ul>");
    for f in used {
        let _ = write!(out, "<li><b>{f}</b>: {}</li>", esc(flags::meaning(f)));
    }
    out.push_str("</ul></div>");
}

/// Provenance lines common to every run, and each run's own.
fn provenance(out: &mut String, runs: &[Run]) {
    let common: Vec<&(String, String)> = runs
        .first()
        .map(|r| {
            r.provenance
                .iter()
                .filter(|p| runs.iter().all(|o| o.provenance.contains(p)))
                .collect()
        })
        .unwrap_or_default();
    out.push_str("<details><summary>Provenance common to all runs</summary><table class=\"prov\"><caption>versions, settings, host, workload</caption><thead><tr><th scope=\"col\">key</th><th scope=\"col\">value</th></tr></thead><tbody>");
    for (k, v) in &common {
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{}</th><td>{}</td></tr>",
            esc(k),
            esc(&with_unit(k, v))
        );
    }
    out.push_str("</tbody></table></details>");
    let _ = write!(out, "<details><summary>Every run ({})</summary><table class=\"runs\"><caption>runs with their own provenance (what differs from the common part)</caption><thead><tr>", runs.len());
    for h in [
        "run",
        "target",
        "point",
        "rep",
        "round",
        "tps",
        "p99 ms",
        "flags",
        "own provenance",
    ] {
        let _ = write!(out, "<th scope=\"col\">{h}</th>");
    }
    out.push_str("</tr></thead><tbody>");
    let mut texts: Vec<&str> = Vec::new();
    for r in runs {
        let own: Vec<String> = r
            .provenance
            .iter()
            .filter(|p| !common.contains(p))
            .map(|(k, v)| format!("{k} = {}", long_text(v, &mut texts)))
            .collect();
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            esc(&r.id),
            esc(&r.target),
            esc(&r.point_label()),
            r.repetition,
            r.round,
            crate::chart::fmt(r.tps),
            r.latency.p99.map(crate::chart::fmt).unwrap_or_default(),
            flags::of(&[r]).join(","),
            esc(&own.join("; "))
        );
    }
    out.push_str("</tbody></table>");
    for (i, t) in texts.iter().enumerate() {
        let _ = write!(out, "<p>text {}:</p><pre>{}</pre>", i + 1, esc(t));
    }
    out.push_str("</details>");
}

/// A value longer than a table cell should hold (a script's text) is shown once below the table
/// and named here `text N`.
fn long_text<'a>(v: &'a str, texts: &mut Vec<&'a str>) -> String {
    if v.chars().count() <= 100 {
        return with_unit("", v);
    }
    let n = match texts.iter().position(|t| *t == v) {
        Some(i) => i + 1,
        None => {
            texts.push(v);
            texts.len()
        }
    };
    format!("text {n} (below)")
}

/// A value with its size in readable units: byte counts (`…_bytes`) and server settings in
/// pages or kB (`16384 8kB` → `128 MB (16384 8kB)`).
pub fn with_unit(key: &str, v: &str) -> String {
    let unit_bytes = |u: &str| match u {
        "B" => Some(1.0),
        "kB" => Some(1024.0),
        "8kB" => Some(8192.0),
        "MB" => Some(1024.0 * 1024.0),
        "GB" => Some(1024.0 * 1024.0 * 1024.0),
        _ => None,
    };
    if let Some((n, u)) = v.split_once(' ') {
        if let (Ok(n), Some(b)) = (n.parse::<f64>(), unit_bytes(u)) {
            return format!("{} ({v})", crate::chart::fmt_bytes(n * b));
        }
    }
    match v.parse::<f64>() {
        Ok(n) if key.ends_with("_bytes") && n >= 1024.0 => {
            format!("{} ({v})", crate::chart::fmt_bytes(n))
        }
        _ => v.to_string(),
    }
}

/// A section with its charts (already rendered, in the same order).
pub fn section(
    out: &mut String,
    s: &Section,
    rendered: &[(String, Frame)],
    flames: &[(crate::choose::flames::Flame, String)],
) {
    let _ = write!(
        out,
        "<section id=\"{}\"><h2>{}</h2>",
        esc(&s.id),
        esc(&s.title)
    );
    for p in &s.intro {
        let _ = write!(out, "<p>{}</p>", esc(p));
    }
    flag_legend(out, &s.charts);
    for (c, (svg, f)) in s.charts.iter().zip(rendered) {
        figure(out, c, svg, f);
    }
    if !flames.is_empty() {
        out.push_str("<h3>Flame graphs</h3>");
    }
    for (f, svg) in flames {
        // a picture: the flame graph's own script does not run here
        let _ = writeln!(
            out,
            "<figure class=\"flame\" id=\"{}\"><figcaption><h3>{}</h3></figcaption><img alt=\"{}\" src=\"data:image/svg+xml;base64,{}\"></figure>",
            esc(&f.id),
            esc(&f.title),
            esc(&f.title),
            base64(svg.as_bytes())
        );
    }
    out.push_str("<h3>Provenance</h3>");
    if !s.study_text.is_empty() {
        let _ = write!(
            out,
            "<details><summary>Study file</summary><pre>{}</pre></details>",
            esc(&s.study_text)
        );
    }
    provenance(out, &s.runs);
    out.push_str("</section>\n");
}

/// The whole page around the sections' HTML.
pub fn page(
    title: &str,
    sources: &[String],
    toc: &[(String, String)],
    body: &str,
    compare: Option<&str>,
) -> String {
    let mut out = String::with_capacity(body.len() + 16_384);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"pgrig {}\"><title>{}</title><style>{CSS}</style></head><body>\
         <header><h1>{}</h1><p>From {}. Every chart has its numbers in the table beside it; flagged points are ringed in red.</p><nav><ul>",
        env!("CARGO_PKG_VERSION"),
        esc(title),
        esc(title),
        esc(&sources.join(", ")),
    );
    for (id, t) in toc {
        let _ = write!(out, "<li><a href=\"#{}\">{}</a></li>", esc(id), esc(t));
    }
    out.push_str("</ul></nav></header><main>");
    // the compare view (`pgrig compare` tables), when given, answers the page's question: first
    if let Some(c) = compare {
        out.push_str("<section id=\"compare\"><h2>Compare</h2>");
        out.push_str(c);
        out.push_str("</section>");
    }
    out.push_str(body);
    let _ = writeln!(out, "</main><script>{JS}</script></body></html>");
    out
}

#[cfg(test)]
mod tests {
    use super::with_unit;

    #[test]
    fn base64_is_rfc_4648() {
        use super::base64;
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn sizes_in_provenance_read_in_units() {
        assert_eq!(
            with_unit("server_settings.shared_buffers", "16384 8kB"),
            "128 MB (16384 8kB)"
        );
        assert_eq!(
            with_unit("host.memory_bytes", "25276063744"),
            "23.54 GB (25276063744)"
        );
        assert_eq!(
            with_unit("server_settings.work_mem", "4096 kB"),
            "4 MB (4096 kB)"
        );
        assert_eq!(with_unit("host.cpus", "2"), "2");
        assert_eq!(
            with_unit("server_settings.datestyle", "ISO, MDY"),
            "ISO, MDY"
        );
    }
}
