/* Klein's linked highlighting on the kernel page (dashapp/pages/kernel.py), in the browser:
 *  - hovering an access highlights its bank in the bank panel and its source line, and
 *    says its address and conflict degree;
 *  - hovering a bank highlights every access to it (orange) and says how many;
 *  - hovering a pattern bin or a donut region colours the source (taken green, not taken
 *    red, unexecuted faded), highlights the accesses of those work-items and, for a 2-D
 *    launch, paints their pixels.
 * Access points carry customdata [bank, address, line, element, degree]
 * (dashapp/klein/figures.py MEMORY_CUSTOM); #kv-branch-data holds each pattern's line states and
 * each work-item's pattern and proxy warp. Nothing here talks to the server.
 */
(function () {
  "use strict";
  var TYPES = {i1: Int8Array, u1: Uint8Array, i2: Int16Array, u2: Uint16Array,
               i4: Int32Array, u4: Uint32Array, f4: Float32Array, f8: Float64Array};
  var STATES = ["kv-taken", "kv-not-taken", "kv-mixed", "kv-faded"];
  var decoded = new WeakMap();

  // A Plotly data array as {values, cols}: a base64 typed-array spec, nested rows or flat.
  function flat(v) {
    if (v && typeof v === "object" && v.bdata !== undefined) {
      if (decoded.has(v)) { return decoded.get(v); }
      var bin = atob(v.bdata), bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
      var shape = v.shape ? String(v.shape).split(",") : [];
      var out = {values: new TYPES[v.dtype](bytes.buffer),
                 cols: shape.length > 1 ? parseInt(shape[1], 10) : 1};
      decoded.set(v, out);
      return out;
    }
    if (v && v.length && (Array.isArray(v[0]) || ArrayBuffer.isView(v[0]))) {
      var values = [];
      for (var r = 0; r < v.length; r++) {
        for (var c = 0; c < v[r].length; c++) { values.push(v[r][c]); }
      }
      return {values: values, cols: v[0].length};
    }
    return {values: v || [], cols: 1};
  }

  function plot(scope, cls) {
    return scope.querySelector("." + cls + " .js-plotly-plot") ||
      (scope.classList && scope.classList.contains(cls) ? scope.querySelector(".js-plotly-plot")
                                                          : null);
  }

  function memviews() {
    return Array.prototype.slice.call(document.querySelectorAll(".kv-memview"));
  }

  // [value, count, value, count, ...] (dashapp/klein/views.py run_lengths) as one value per item.
  function expandRuns(runs) {
    var total = 0, i, at = 0;
    for (i = 1; i < runs.length; i += 2) { total += runs[i]; }
    var out = new Int32Array(total);
    for (i = 0; i < runs.length; i += 2) {
      out.fill(runs[i], at, at + runs[i + 1]);
      at += runs[i + 1];
    }
    return out;
  }

  function branchData() {
    var el = document.getElementById("kv-branch-data");
    if (!el) { return null; }
    if (!el.kvParsed) {
      var items = JSON.parse(el.dataset.workItems || "{}");
      el.kvParsed = {states: JSON.parse(el.dataset.states || "{}"),
                     items: {pattern: expandRuns(items.pattern || []),
                             proxy: expandRuns(items.proxy || [])},
                     width: parseInt(el.dataset.width || "0", 10)};
    }
    return el.kvParsed;
  }

  // -- source lines ---------------------------------------------------------------------
  function lines() {
    return Array.prototype.slice.call(document.querySelectorAll("#kv-source .kv-line"));
  }

  function showStates(states) {
    lines().forEach(function (el) {
      STATES.forEach(function (c) { el.classList.remove(c); });
      var state = states && states[el.getAttribute("data-line")];
      if (state) { el.classList.add("kv-" + state); }
    });
  }

  function hotLine(line) {
    lines().forEach(function (el) {
      el.classList.toggle("kv-hot", line !== null && el.getAttribute("data-line") === String(line));
    });
  }

  // -- memory view ----------------------------------------------------------------------
  // Highlight the accesses for which keep(workItem, customRow, at) is true; returns count.
  function highlightAccesses(gd, keep) {
    if (!gd || !gd.data || !window.Plotly) { return 0; }
    var count = 0, selections = [], traces = [];
    gd.data.forEach(function (trace, t) {
      if (!trace.meta || trace.meta[0] !== "access") { return; }
      var custom = flat(trace.customdata), picked = [];
      var n = custom.values.length / custom.cols;
      for (var i = 0; i < n; i++) {
        // Column 5 of an access's custom data is its work-item id (x is its column).
        var item = custom.values[i * custom.cols + 5];
        if (keep === null || keep(item, custom.values, i * custom.cols)) { picked.push(i); }
      }
      count += picked.length;
      selections.push(keep === null ? null : picked);
      traces.push(t);
    });
    if (traces.length) { window.Plotly.restyle(gd, {selectedpoints: selections}, traces); }
    return count;
  }

  function highlightBank(view, bank) {
    var gd = plot(view, "kv-banks");
    if (gd && window.Plotly) {
      window.Plotly.restyle(gd, {selectedpoints: [bank === null ? null : [bank]]}, [0]);
    }
  }

  function say(view, text, count) {
    var info = view.querySelector(".kv-hover-info");
    if (info) {
      info.textContent = text;
      info.setAttribute("data-highlighted", String(count || 0));
    }
  }

  // -- image ----------------------------------------------------------------------------
  function paintImage(keep) {
    var gd = plot(document, "kv-image");
    if (!gd || !gd.data || !window.Plotly) { return; }
    var layer = function (name) {
      for (var i = 0; i < gd.data.length; i++) {
        if ((gd.data[i].meta || [])[0] === name) { return i; }
      }
      return -1;
    };
    var image = layer("image"), paint = layer("paint");
    if (image < 0 || paint < 0) { return; }
    var base = flat(gd.data[image].z), width = base.cols, height = base.values.length / width;
    var rows = [];
    for (var y = 0; y < height; y++) {
      var row = new Array(width);
      for (var x = 0; x < width; x++) { row[x] = keep !== null && keep(y * width + x) ? 1 : 0; }
      rows.push(row);
    }
    window.Plotly.restyle(gd, {z: [rows]}, [paint]);
  }

  // -- patterns -------------------------------------------------------------------------
  function showPattern(pattern, proxy) {
    var data = branchData();
    if (!data) { return; }
    var pat = data.items.pattern || [], prox = data.items.proxy || [];
    var keep = function (item) {
      return pat[item] === pattern && (proxy === null || prox[item] === proxy);
    };
    showStates(data.states[String(pattern)]);
    memviews().forEach(function (view) {
      var n = highlightAccesses(plot(view, "kv-memory"), function (item) { return keep(item); });
      say(view, n + " accesses by work-items of this pattern", n);
    });
    paintImage(keep);
  }

  function clearAll() {
    showStates(null);
    hotLine(null);
    memviews().forEach(function (view) {
      highlightAccesses(plot(view, "kv-memory"), null);
      highlightBank(view, null);
      say(view, "Hover over an access or a bank.", 0);
    });
    paintImage(null);
  }

  // -- hover handlers -------------------------------------------------------------------
  function onMemoryHover(view, point) {
    var meta = point.data.meta || [];
    if (meta[0] === "barrier") {
      hotLine(point.customdata);
      say(view, "barrier at line " + point.customdata, 0);
      return;
    }
    if (meta[0] !== "access") { return; }
    var custom = flat(point.data.customdata), at = point.pointIndex * custom.cols;
    var bank = custom.values[at], address = custom.values[at + 1], line = custom.values[at + 2];
    var element = custom.values[at + 3], degree = custom.values[at + 4];
    highlightBank(view, bank >= 0 ? bank : null);
    hotLine(line);
    say(view, "work-item " + custom.values[at + 5] + ": " + meta[1] + " " + view.getAttribute("data-array") +
        "[" + element + "] at address " + address + (bank >= 0 ? ", bank " + bank +
        ", conflict degree " + degree : "") + ", line " + line, 0);
  }

  function onBankHover(view, point) {
    var bank = point.x, custom = point.customdata || [];
    var n = highlightAccesses(plot(view, "kv-memory"), function (_item, values, at) {
      return values[at] === bank;
    });
    highlightBank(view, bank);
    say(view, "bank " + bank + ": " + n + " accesses highlighted, conflict degree " +
        custom[1] + (custom[1] > 1 ? " (" + custom[2] + " accesses serialised)" : ""), n);
  }

  function bindOne(gd, handler) {
    window.gpuscope.bindOnce(gd, "kvBound", function () {
      gd.on("plotly_hover", function (ev) {
        var point = ev && ev.points && ev.points[0];
        if (point) { handler(point); }
      });
      gd.on("plotly_unhover", clearAll);
    });
  }

  // The line a link points at (?line=, a finding's evidence), scrolled to the middle of
  // the source panel once (the panel only: the page stays where it is).
  function showTarget() {
    var source = document.getElementById("kv-source");
    var line = source && source.querySelector(".kv-target");
    if (line && !line.kvShown) {
      line.kvShown = true;
      source.scrollTop += line.getBoundingClientRect().top - source.getBoundingClientRect().top -
        source.clientHeight / 2;
    }
  }

  function bind() {
    showTarget();
    memviews().forEach(function (view) {
      var mem = plot(view, "kv-memory"), banks = plot(view, "kv-banks");
      if (mem) { bindOne(mem, function (p) { onMemoryHover(view, p); }); }
      if (banks) { bindOne(banks, function (p) { onBankHover(view, p); }); }
    });
    var hist = plot(document, "kv-histogram");
    if (hist) {
      bindOne(hist, function (p) { if (p.customdata) { showPattern(p.customdata[0], null); } });
    }
    var donuts = plot(document, "kv-donuts");
    if (donuts) {
      bindOne(donuts, function (p) {
        var c = p.customdata && (Array.isArray(p.customdata[0]) ? p.customdata[0] : p.customdata);
        if (c) { showPattern(c[0], c[1]); }
      });
    }
  }
  // gpuscope.js (loaded first: Dash serves assets in name order) binds as graphs appear.
  window.gpuscope.whenGraphsChange(bind);
})();
