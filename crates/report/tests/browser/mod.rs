//! The real-browser oracle for reports: headless Chromium (Debian's `chromium`, or `$CHROMIUM`)
//! loads a report from disk with networking disabled (a dead proxy, no name resolution, no
//! background services, a fresh profile) and the page's own CSP. Checked: no console message at
//! all (errors, CSP violations), no resource fetched (the Resource Timing list the page's script
//! copies into `data-resources`), the script ran, each expected chart has a drawn series and a
//! table, the page is the same without JavaScript, and a screenshot is kept and is not blank.
//! Also used by the CLI tests (`#[path]`), so it needs nothing but std, roxmltree, png and
//! serde_json.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser binary; a missing browser fails the test (the oracle must exist).
pub fn chromium() -> PathBuf {
    let p = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        p.exists(),
        "the browser oracle {} is missing: install Debian's chromium package (.ci/run does)",
        p.display()
    );
    p
}

/// One browser launch with a fresh profile (under `base`).
fn run_chromium(base: &Path, extra: &[String], url: &str) -> (String, String) {
    let profile = tempfile::tempdir_in(base).unwrap();
    let profile = profile.path();
    let mut c = Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--no-first-run",
        "--no-default-browser-check",
        "--proxy-server=127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--enable-logging=stderr",
        "--v=0",
        "--hide-scrollbars",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c.args(extra);
    c.arg(url);
    c.env("HOME", profile);
    let out = c.output().expect("start chromium");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Console messages (`INFO:CONSOLE`) from Chromium's log.
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// The `<figure class="chart" id=ID>` element's text in a dumped DOM.
fn figure<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let start = dom.find(&format!("<figure class=\"chart\" id=\"{id}\""))?;
    let end = dom[start..].find("</figure>")? + start;
    Some(&dom[start..end])
}

/// A PNG with more than a sliver of non-background pixels in more than two colours.
pub fn assert_png_not_blank(path: &Path) {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut dec = png::Decoder::new(f);
    dec.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = dec.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png data");
    let px = info.color_type.samples();
    let data = &buf[..info.buffer_size()];
    let bg = &data[..px];
    let mut other = 0usize;
    let mut colours = std::collections::HashSet::new();
    for p in data.chunks(px) {
        if p != bg {
            other += 1;
        }
        if colours.len() < 64 {
            colours.insert(p.to_vec());
        }
    }
    let total = data.len() / px;
    assert!(
        other * 200 > total && colours.len() > 2,
        "{} looks blank: {other} of {total} pixels differ from the background, {} colours",
        path.display(),
        colours.len()
    );
}

/// Loads `html` in the browser and checks it (see the module header); keeps `screenshot`.
pub fn check_report(html: &Path, charts: &[&str], screenshot: &Path) {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.canonicalize().unwrap().display());
    let budget = "--virtual-time-budget=3000".to_string();
    let (dom, err) = run_chromium(profile.path(), &[budget.clone(), "--dump-dom".into()], &url);
    let console = console_lines(&err);
    assert!(
        console.is_empty(),
        "{}: console messages:\n{}",
        html.display(),
        console.join("\n")
    );
    assert!(
        dom.contains("data-resources=\"0\""),
        "{}: resources were requested, or the script did not run:\n{}",
        html.display(),
        &dom[..dom.len().min(600)]
    );
    let n = dom.matches("<figure class=\"chart\"").count();
    assert!(
        dom.contains(&format!("data-charts=\"{n}\"")),
        "{}: the script did not see {n} charts",
        html.display()
    );
    for id in charts {
        let fig = figure(&dom, id).unwrap_or_else(|| {
            panic!(
                "{}: chart {id} missing; charts: {:?}",
                html.display(),
                ids(&dom)
            )
        });
        assert!(
            fig.contains("<svg")
                && (0..64).any(|i| fig.contains(&pgrig_report::chart::render::hex(i))),
            "{}: chart {id} has no drawn series",
            html.display()
        );
        assert!(
            fig.contains("<tbody><tr"),
            "{}: chart {id} has no table rows",
            html.display()
        );
    }
    // without JavaScript (the page with its script element removed): the same charts and tables
    let text = std::fs::read_to_string(html).unwrap();
    let (i, j) = (
        text.find("<script>").expect("script"),
        text.find("</script>").expect("script end"),
    );
    let nojs = profile.path().join("nojs.html");
    std::fs::write(&nojs, format!("{}{}", &text[..i], &text[j + 9..])).unwrap();
    let (plain, _) = run_chromium(
        profile.path(),
        &["--dump-dom".into()],
        &format!("file://{}", nojs.display()),
    );
    assert!(
        !plain.contains("data-charts="),
        "the script was not removed"
    );
    assert_eq!(plain.matches("<figure class=\"chart\"").count(), n);
    assert_eq!(
        plain.matches("<tbody><tr").count(),
        dom.matches("<tbody><tr").count()
    );
    if let Some(d) = screenshot.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    let height = 900 + 560 * n.min(20);
    run_chromium(
        profile.path(),
        &[
            budget,
            format!("--screenshot={}", screenshot.display()),
            format!("--window-size=1400,{height}"),
        ],
        &url,
    );
    assert_png_not_blank(screenshot);
}

/// The chart ids in a dumped DOM (for failure messages and tests).
pub fn ids(dom: &str) -> Vec<String> {
    dom.match_indices("<figure class=\"chart\" id=\"")
        .map(|(i, m)| {
            let rest = &dom[i + m.len()..];
            rest[..rest.find('"').unwrap_or(0)].to_string()
        })
        .collect()
}

/// Each SVG file parses as XML with an `<svg>` root carrying `<title>` and `<desc>`, and renders
/// (in the browser) to a PNG that is not blank; PNGs go to `png_dir`.
pub fn check_svgs(dir: &Path, png_dir: &Path) -> usize {
    let profile = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(png_dir).unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("svg") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let doc = roxmltree::Document::parse(&text)
            .unwrap_or_else(|e| panic!("{}: not well-formed: {e}", p.display()));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg", "{}", p.display());
        for want in ["title", "desc"] {
            assert!(
                root.children().any(|c| c.tag_name().name() == want),
                "{}: no <{want}>",
                p.display()
            );
        }
        let png = png_dir.join(p.with_extension("png").file_name().unwrap());
        let url = format!("file://{}", p.canonicalize().unwrap().display());
        run_chromium(
            profile.path(),
            &[
                format!("--screenshot={}", png.display()),
                "--window-size=860,430".into(),
            ],
            &url,
        );
        assert_png_not_blank(&png);
        n += 1;
    }
    n
}

/// Where screenshots are kept: `target/report-screenshots/` of the workspace.
pub fn artefact_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("report-screenshots")
}

/// Drives the page's script like a reader would (synthetic pointer events): hovering over the
/// first chart shows a tooltip and highlights table rows, a legend button hides its series, and
/// dragging across a time chart zooms it (the table is filtered and the note says the range).
/// Returns the dumped DOM's markers.
pub fn check_interaction(html: &Path) {
    let probe = r#"<script>
(function () {
  var d = document.documentElement.dataset;
  function at(svg, fx, type, target) {
    var r = svg.getBoundingClientRect();
    (target || svg).dispatchEvent(new MouseEvent(type, {bubbles: true, clientX: r.left + r.width * fx, clientY: r.top + r.height * 0.5}));
  }
  var first = document.querySelector("figure.chart .plot svg");
  at(first, 0.45, "mousemove");
  var tip = document.querySelector("figure.chart .tip");
  d.tip = tip && !tip.hidden ? String(tip.textContent.length) : "0";
  d.highlighted = String(document.querySelectorAll("tr.hl").length);
  var b = document.querySelector(".legend button");
  if (b) {
    var svg = b.closest("figure").querySelector(".plot svg");
    b.click();
    d.toggled = b.getAttribute("aria-pressed") + ":" + Array.prototype.filter.call(svg.querySelectorAll("*"), function (e) { return e.style.display === "none"; }).length;
  }
  var z = document.querySelector('figure.chart[data-zoom="true"]');
  if (z) {
    var zs = z.querySelector(".plot svg");
    var before = z.querySelectorAll("tbody tr").length;
    at(zs, 0.35, "mousedown"); at(zs, 0.55, "mousemove"); at(zs, 0.55, "mouseup", window);
    var shown = Array.prototype.filter.call(z.querySelectorAll("tbody tr"), function (r) { return r.style.display !== "none"; }).length;
    d.zoom = shown + "/" + before + ":" + z.querySelector(".zoomnote").textContent.slice(0, 20);
    zs.dispatchEvent(new MouseEvent("dblclick", {bubbles: true}));
    d.unzoom = String(Array.prototype.filter.call(z.querySelectorAll("tbody tr"), function (r) { return r.style.display !== "none"; }).length);
  }
}());
</script>"#;
    let profile = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(html).unwrap();
    let page = profile.path().join("probe.html");
    std::fs::write(&page, text.replace("</body>", &format!("{probe}</body>"))).unwrap();
    let (dom, err) = run_chromium(
        profile.path(),
        &["--window-size=1400,1200".into(), "--dump-dom".into()],
        &format!("file://{}", page.display()),
    );
    let console = console_lines(&err);
    assert!(console.is_empty(), "console: {}", console.join("\n"));
    let attr = |name: &str| -> Option<String> {
        let k = format!("data-{name}=\"");
        let i = dom.find(&k)? + k.len();
        Some(dom[i..i + dom[i..].find('"')?].to_string())
    };
    eprintln!(
        "{}: tip {:?}, highlighted {:?}, toggled {:?}, zoom {:?}, unzoom {:?}",
        html.display(),
        attr("tip"),
        attr("highlighted"),
        attr("toggled"),
        attr("zoom"),
        attr("unzoom")
    );
    let tip: usize = attr("tip").expect("probe ran").parse().unwrap();
    assert!(tip > 0, "hover shows the nearest values");
    assert!(
        attr("highlighted").unwrap() != "0",
        "hover highlights table rows"
    );
    if let Some(t) = attr("toggled") {
        let (pressed, hidden) = t.split_once(':').unwrap();
        assert_eq!(pressed, "false");
        assert!(
            hidden.parse::<usize>().unwrap() > 0,
            "the series' elements are hidden"
        );
    }
    if let Some(z) = attr("zoom") {
        let (counts, note) = z.split_once(':').unwrap();
        let (shown, all) = counts.split_once('/').unwrap();
        let (shown, all): (usize, usize) = (shown.parse().unwrap(), all.parse().unwrap());
        assert!(shown > 0 && shown < all, "zoom filters the table: {z}");
        assert!(note.starts_with("Zoomed to seconds"), "{z}");
        assert_eq!(
            attr("unzoom").unwrap(),
            all.to_string(),
            "double-click resets"
        );
    }
}

/// The rows of the compare view's tables (`<section id="compare">`) in the page as the browser
/// shows it; panics when the section is missing.
pub fn compare_rows(html: &Path) -> usize {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.canonicalize().unwrap().display());
    let (dom, _) = run_chromium(profile.path(), &["--dump-dom".into()], &url);
    let start = dom
        .find("<section id=\"compare\"")
        .unwrap_or_else(|| panic!("{}: no compare section", html.display()));
    let end = dom[start..]
        .find("</section>")
        .map_or(dom.len(), |e| e + start);
    let body = &dom[start..end];
    body.split("<tbody>")
        .skip(1)
        .map(|t| {
            t.split("</tbody>")
                .next()
                .unwrap_or("")
                .matches("<tr")
                .count()
        })
        .sum()
}

/// The x-axis labels of every chart on the page as the browser lays them out: per chart, the
/// labels (the text elements just under the plot frame, the lines of one label joined) and the
/// pairs of labels whose boxes overlap. Returns (chart id, labels, overlapping pairs).
pub fn axis_labels(html: &Path) -> Vec<(String, Vec<String>, Vec<String>)> {
    let probe = r#"<script>
(function () {
  var out = [];
  document.querySelectorAll("figure.chart").forEach(function (fig) {
    var f = (fig.dataset.frame || "").split(" ").map(Number);
    var svg = fig.querySelector(".plot svg");
    if (!svg || f.length < 4) return;
    var px0 = f[0], px1 = f[1], py1 = f[3];
    var byX = {};
    var boxes = [];
    svg.querySelectorAll("text").forEach(function (t) {
      var x = parseFloat(t.getAttribute("x")), y = parseFloat(t.getAttribute("y"));
      if (!(y > py1 && y < py1 + 52 && x >= px0 - 30 && x <= px1 + 30)) return;
      var k = String(Math.round(x));
      byX[k] = (byX[k] ? byX[k] + " " : "") + t.textContent.trim();
      var b = t.getBBox();
      boxes.push({k: k, x0: b.x, x1: b.x + b.width, y0: b.y, y1: b.y + b.height, s: t.textContent.trim()});
    });
    var over = [];
    for (var i = 0; i < boxes.length; i++) for (var j = i + 1; j < boxes.length; j++) {
      var a = boxes[i], b = boxes[j];
      if (a.k === b.k) continue;
      if (a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5 && a.y0 < b.y1 - 0.5 && b.y0 < a.y1 - 0.5) over.push(a.s + " / " + b.s);
    }
    var labels = Object.keys(byX).sort(function (a, b) { return a - b; }).map(function (k) { return byX[k]; });
    out.push({id: fig.id, labels: labels, over: over});
  });
  var pre = document.createElement("pre");
  pre.id = "axis-probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}());
</script>"#;
    let profile = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(html).unwrap();
    let page = profile.path().join("axis.html");
    std::fs::write(&page, text.replace("</body>", &format!("{probe}</body>"))).unwrap();
    let (dom, _) = run_chromium(
        profile.path(),
        &["--window-size=1400,1200".into(), "--dump-dom".into()],
        &format!("file://{}", page.display()),
    );
    let start = dom.find("<pre id=\"axis-probe\">").expect("the probe ran") + 21;
    let end = dom[start..].find("</pre>").expect("probe end") + start;
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let v: Vec<serde_json::Value> = serde_json::from_str(&json).expect("probe JSON");
    let strs = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    v.iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or("").to_string(),
                strs(&c["labels"]),
                strs(&c["over"]),
            )
        })
        .collect()
}
