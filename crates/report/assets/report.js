// pgrig report: optional interaction. The page is complete without it.
// Hover shows the table rows nearest the pointer, legend buttons hide or show a series (found by
// its colour), dragging across a time chart zooms to that range (double-click resets).
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  function num(s) { return parseFloat(s); }
  function svgX(svg, clientX) {
    var r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
    return (clientX - r.left) * vb.width / r.width;
  }
  function setup(fig) {
    var svg = fig.querySelector(".plot svg");
    if (!svg) return;
    var f = fig.dataset.frame.split(" ").map(num);
    var st = { px0: f[0], px1: f[1], py0: f[2], py1: f[3], x0: f[4], x1: f[5], a: f[4], b: f[5] };
    var plot = fig.querySelector(".plot");
    var rows = Array.prototype.slice.call(fig.querySelectorAll("tbody tr[data-x]"));
    var heads = Array.prototype.map.call(fig.querySelectorAll("thead th"), function (t) { return t.textContent; });
    var tip = document.createElement("div"); tip.className = "tip"; tip.hidden = true; plot.appendChild(tip);
    function dataX(px) { return st.a + (px - st.px0) / (st.px1 - st.px0) * (st.b - st.a); }
    svg.addEventListener("mousemove", function (ev) {
      var px = svgX(svg, ev.clientX);
      rows.forEach(function (r) { r.classList.remove("hl"); });
      if (px < st.px0 || px > st.px1 || !rows.length) { tip.hidden = true; return; }
      var x = dataX(px), best = Infinity;
      rows.forEach(function (r) { var d = Math.abs(num(r.dataset.x) - x); if (d < best) best = d; });
      var near = rows.filter(function (r) { return Math.abs(num(r.dataset.x) - x) - best < 1e-9 && r.style.display !== "none"; });
      var lines = near.slice(0, 12).map(function (r) {
        r.classList.add("hl");
        return Array.prototype.map.call(r.children, function (c, i) { return (heads[i] || "") + ": " + c.textContent; }).join("  ");
      });
      tip.textContent = lines.join("\n");
      tip.hidden = !lines.length;
      var pr = plot.getBoundingClientRect();
      tip.style.left = Math.min(ev.clientX - pr.left + 14, pr.width - 260) + "px";
      tip.style.top = (ev.clientY - pr.top + 14) + "px";
    });
    svg.addEventListener("mouseleave", function () { tip.hidden = true; rows.forEach(function (r) { r.classList.remove("hl"); }); });
    fig.querySelectorAll(".legend button").forEach(function (b) {
      b.addEventListener("click", function () {
        var on = b.getAttribute("aria-pressed") !== "true";
        b.setAttribute("aria-pressed", on ? "true" : "false");
        var c = b.dataset.color.toLowerCase();
        svg.querySelectorAll("[stroke],[fill]").forEach(function (el) {
          var s = (el.getAttribute("stroke") || "").toLowerCase(), fl = (el.getAttribute("fill") || "").toLowerCase();
          if (s === c || fl === c) el.style.display = on ? "" : "none";
        });
      });
    });
    var leg = fig.querySelector(".legend"); if (leg) leg.hidden = false;
    if (fig.dataset.zoom === "true") zoom(fig, svg, plot, st, rows);
  }
  var clips = 0;
  function clipId(svg, st) {
    if (svg.dataset.clip) return svg.dataset.clip;
    var ns = "http://www.w3.org/2000/svg", cp = document.createElementNS(ns, "clipPath"), r = document.createElementNS(ns, "rect");
    cp.id = "pgrig-clip-" + (++clips);
    r.setAttribute("x", st.px0); r.setAttribute("y", st.py0);
    r.setAttribute("width", st.px1 - st.px0); r.setAttribute("height", st.py1 - st.py0);
    cp.appendChild(r); svg.appendChild(cp);
    svg.dataset.clip = cp.id;
    return cp.id;
  }
  function zoom(fig, svg, plot, st, rows) {
    var note = document.createElement("p"); note.className = "zoomnote";
    note.textContent = "Drag across the chart to zoom into a time range; double-click to reset.";
    plot.appendChild(note);
    var sel = document.createElement("div"); sel.className = "sel"; sel.hidden = true; plot.appendChild(sel);
    var start = null;
    var data = Array.prototype.filter.call(svg.querySelectorAll("polyline,circle,rect"), function (el) {
      var x = num(el.getAttribute("x") || el.getAttribute("cx") || st.px0);
      return x >= st.px0 - 1 && x <= st.px1 + 1 && !(el.tagName === "rect" && el.getAttribute("fill") === "#FFFFFF");
    });
    data.forEach(function (el) { el.dataset.orig = el.getAttribute("points") || el.getAttribute("cx") || (el.getAttribute("x") + " " + el.getAttribute("width")); });
    var ticks = Array.prototype.filter.call(svg.querySelectorAll("text"), function (t) {
      var y = num(t.getAttribute("y")); return y > st.py1 && y < st.py1 + 24;
    });
    function apply() {
      var k = (st.x1 - st.x0) / (st.b - st.a);
      function m(px) { return st.px0 + (px - toOrig(st.a)) * k; }
      function toOrig(x) { return st.px0 + (x - st.x0) / (st.x1 - st.x0) * (st.px1 - st.px0); }
      var clip = clipId(svg, st);
      data.forEach(function (el) {
        var o = el.dataset.orig;
        if (el.tagName === "polyline") {
          el.setAttribute("points", o.trim().split(/\s+/).map(function (p) { var q = p.split(","); return m(num(q[0])) + "," + q[1]; }).join(" "));
        } else if (el.tagName === "circle") {
          el.setAttribute("cx", m(num(o)));
        } else {
          var q = o.split(" "), x = num(q[0]), w = num(q[1]);
          el.setAttribute("x", m(x)); el.setAttribute("width", w * k);
        }
        if (k === 1) el.removeAttribute("clip-path"); else el.setAttribute("clip-path", "url(#" + clip + ")");
      });
      ticks.forEach(function (t) { t.style.visibility = k === 1 ? "" : "hidden"; });
      rows.forEach(function (r) { var x = num(r.dataset.x); r.style.display = x >= st.a - 1e-9 && x <= st.b + 1e-9 ? "" : "none"; });
      note.textContent = k === 1 ? "Drag across the chart to zoom into a time range; double-click to reset."
        : "Zoomed to seconds " + st.a.toFixed(1) + " – " + st.b.toFixed(1) + " (table filtered); double-click to reset.";
    }
    svg.addEventListener("mousedown", function (ev) { start = svgX(svg, ev.clientX); ev.preventDefault(); });
    svg.addEventListener("mousemove", function (ev) {
      if (start === null) return;
      var r = svg.getBoundingClientRect(), pr = plot.getBoundingClientRect(), s = r.width / svg.viewBox.baseVal.width;
      var a = Math.min(start, svgX(svg, ev.clientX)), b = Math.max(start, svgX(svg, ev.clientX));
      sel.hidden = false; sel.style.left = (r.left - pr.left + a * s) + "px"; sel.style.width = ((b - a) * s) + "px";
      sel.style.top = (st.py0 * s) + "px"; sel.style.height = ((st.py1 - st.py0) * s) + "px";
    });
    window.addEventListener("mouseup", function (ev) {
      if (start === null) return;
      var end = svgX(svg, ev.clientX), a = Math.max(Math.min(start, end), st.px0), b = Math.min(Math.max(start, end), st.px1);
      start = null; sel.hidden = true;
      if (b - a < 6) return;
      var na = st.a + (a - st.px0) / (st.px1 - st.px0) * (st.b - st.a), nb = st.a + (b - st.px0) / (st.px1 - st.px0) * (st.b - st.a);
      st.a = na; st.b = nb; apply();
    });
    svg.addEventListener("dblclick", function () { st.a = st.x0; st.b = st.x1; apply(); });
  }
  document.querySelectorAll("figure.chart[data-frame]").forEach(setup);
  document.documentElement.dataset.charts = String(document.querySelectorAll("figure.chart svg").length);
  // what was fetched (nothing, by the page's Content-Security-Policy): the tests read this
  function resources() {
    document.documentElement.dataset.resources = String(performance.getEntriesByType("resource").length);
  }
  resources();
  window.addEventListener("load", resources);
}());
