/* GPUscope client-side behaviour that needs no server round trip:
 *  - hovering a legend entry highlights that Category-Action in every chart of the
 *    page and greys out the rest;
 *  - hovering a bar highlights the same task (same key) in both the Task view and the
 *    Component view;
 *  - "PNG" buttons download a chart with Plotly's toImage, named like its SVG export
 *    (one chart of the Overview's grid as a figure of its own);
 *  - links drawn outside Dash navigate like dcc.Link (``gpuscope.link``), except to the
 *    kernel page from a page with plotly.js's cartesian bundle: a full page load;
 *  - graphs follow their container's width, and only that.
 * Bars are Plotly Bar traces whose trace.meta is [kindLabel, role] and whose
 * customdata[i][0] is the task key (see dashapp/daisen/figures.py).
 */
(function () {
  "use strict";
  var DIM = 0.18;
  var ON_LEFT = "right axis";  // figures.py ON_LEFT

  function graphs() {
    return Array.prototype.slice.call(document.querySelectorAll(".gs-linked .js-plotly-plot"));
  }

  function isBarTrace(trace) {
    return !!trace && trace.type === "bar" && Array.isArray(trace.meta);
  }

  // Style the drawn bars directly (no Plotly.restyle, hence no redraw and no new hover
  // events): each trace group is bound to its calcdata, each point to its datum.
  function styleBars(opacityOf) {
    graphs().forEach(function (gd) {
      gd.querySelectorAll(".barlayer .trace").forEach(function (group) {
        var cd = group.__data__;
        var trace = cd && cd[0] && cd[0].trace;
        if (!isBarTrace(trace)) { return; }
        group.querySelectorAll(".point").forEach(function (point) {
          var datum = point.__data__ || {};
          var custom = (trace.customdata || [])[datum.i];
          point.style.opacity = opacityOf(trace, custom ? custom[0] : null);
        });
      });
    });
  }

  function highlightKind(label) {
    styleBars(function (trace) { return trace.meta[0] === label ? 1 : DIM; });
  }

  function highlightTask(key) {
    styleBars(function (trace, taskKey) { return taskKey === key ? 1 : DIM; });
  }

  function clearHighlight() {
    styleBars(function () { return ""; });
  }

  document.addEventListener("mouseover", function (ev) {
    var item = ev.target.closest && ev.target.closest("[data-kind]");
    if (item) { highlightKind(item.getAttribute("data-kind")); }
  });
  document.addEventListener("mouseout", function (ev) {
    var item = ev.target.closest && ev.target.closest("[data-kind]");
    if (item && !(ev.relatedTarget && item.contains(ev.relatedTarget))) { clearHighlight(); }
  });

  function axisKey(ref) {  // a trace's axis reference ("x3", "y") to its layout key
    return ref.charAt(0) + "axis" + ref.slice(1);
  }

  // The axes of chart n (from 1) of the Overview's grid, as its traces refer to them
  // (dashapp/daisen/figures.py, overview_grid): x{n}, y{2n-1} on the left, y{2n}.
  function gridAxes(n) {
    return {x: n > 1 ? "x" + n : "x", y: n > 1 ? "y" + (2 * n - 1) : "y", y2: "y" + 2 * n};
  }

  // Chart n of the Overview's grid (grid.js) as a figure of its own, as it is drawn now.
  function subplotFigure(gd, n) {
    var axes = gridAxes(n), x = axes.x, y = axes.y, y2 = axes.y2;
    function own(ref, extra) {
      var a = Object.assign({}, gd.layout[axisKey(ref)], extra);
      delete a.domain;
      delete a.anchor;
      delete a.matches;
      return a;
    }
    var data = gd.data.filter(function (t) { return (t.xaxis || "x") === x; })
      .map(function (t) {
        // A right axis's line is drawn against the left axis in the grid (figures.py,
        // _on_left: meta ON_LEFT, its own values in customdata): alone, it has its own.
        if (t.meta !== ON_LEFT) { return Object.assign({}, t, {xaxis: "x", yaxis: "y"}); }
        var own = Object.assign({}, t, {xaxis: "x", yaxis: "y2", y: t.customdata,
                                        hovertemplate: t.hovertemplate.replace("%{customdata:", "%{y:")});
        delete own.customdata;
        delete own.meta;
        return own;
      });
    var xa = gd._fullLayout[axisKey(x)];
    // The grid names its axes once for all charts (figures.py, axis_key): this one
    // gets the names back, and its time labels.
    var titles = (gd.layout.meta && gd.layout.meta.axis_titles) || [];
    return {data: data, width: xa._length + 96, height: 190, layout: {
      margin: {l: 48, r: 48, t: 22, b: 28}, plot_bgcolor: "white", showlegend: false,
      xaxis: own(x, {range: xa.range.slice(), showticklabels: true}),
      yaxis: own(y, {title: titles[0]}),
      yaxis2: own(y2, {overlaying: "y", side: "right", title: titles[1]})}};
  }

  document.addEventListener("click", function (ev) {
    var button = ev.target.closest && ev.target.closest(".gs-png");
    if (!button || !window.Plotly) { return; }
    var holder = document.getElementById(button.getAttribute("data-graph"));
    var gd = holder && holder.querySelector(".js-plotly-plot");
    if (!gd) { return; }
    var subplot = button.getAttribute("data-subplot");
    var figure = subplot ? subplotFigure(gd, +subplot) : {
      data: gd.data, layout: gd.layout, width: gd._fullLayout.width, height: gd._fullLayout.height};
    // The saved image says what it shows: a title (trace, component, window) and a
    // legend with one entry per name (the page's own legend is outside the chart).
    var seen = {};
    var data = figure.data.map(function (trace) {
      var copy = Object.assign({}, trace);
      copy.showlegend = !!trace.name && !seen[trace.name];
      seen[trace.name] = true;
      return copy;
    });
    var margin = Object.assign({}, figure.layout.margin || {});
    margin.t = Math.max(margin.t || 0, 50);
    var layout = Object.assign({}, figure.layout, {
      margin: margin, showlegend: true, legend: {orientation: "h", y: -0.25},
      title: {text: button.getAttribute("data-title") || button.getAttribute("data-filename"),
              font: {size: 13}, x: 0.01, xanchor: "left"},
      height: figure.height + 80});
    window.Plotly.downloadImage({data: data, layout: layout},
                               {format: "png", scale: 2, width: figure.width,
                                height: layout.height,
                                filename: button.getAttribute("data-filename")});
  });

  // Bind ``gd``'s Plotly events with ``bindTo(gd)``, once per graph and per ``flag``, as
  // soon as Plotly has made it an event emitter (Dash draws it a little later).
  function bindOnce(gd, flag, bindTo) {
    if (gd[flag] || typeof gd.on !== "function") { return; }
    gd[flag] = true;
    bindTo(gd);
  }

  function bind() {
    document.querySelectorAll(".js-plotly-plot").forEach(function (gd) {
      bindOnce(gd, "gsPinned", function () {
        gd.on("plotly_afterplot", function () { pinWidth(gd); });
        pinWidth(gd);
        widths.observe(gd);
      });
    });
    graphs().forEach(function (gd) {
      bindOnce(gd, "gsBound", bindHover);
    });
  }

  function bindHover(gd) {
    gd.on("plotly_hover", function (data) {
      var point = data && data.points && data.points[0];
      if (point && point.customdata && isBarTrace(point.data)) {
        highlightTask(point.customdata[0]);
      }
    });
    gd.on("plotly_unhover", clearHighlight);
  }

  // Plotly hover events are not DOM events, so each graph is bound once it exists. Dash
  // draws pages and figures by changing the DOM: look again after each change (once per
  // frame at most), instead of polling.
  function whenGraphsChange(callback) {
    var queued = false;
    function start() {
      new MutationObserver(function () {
        if (queued) { return; }
        queued = true;
        window.requestAnimationFrame(function () { queued = false; callback(); });
      }).observe(document.body, {childList: true, subtree: true});
      callback();
    }
    if (document.body) { start(); } else { document.addEventListener("DOMContentLoaded", start); }
  }
  // Dash's graph asks Plotly to fit its container again each time it renders (as the
  // page around it starts loading, say), and Plotly answers with a full redraw unless
  // the layout names both sizes: each navigation redrew the page being left before the
  // next was drawn (0.15 s of a zoom of the Overview). So each graph's drawn width is
  // pinned once drawn (a new figure from Dash is sized afresh), and freed when its
  // container's width really changes (the window, a scroll bar).
  function pinWidth(gd) {
    if (gd.layout && !gd.layout.width && gd._fullLayout) {
      gd.gsWidth = gd.layout.width = gd._fullLayout.width;
    }
  }
  var widths = new ResizeObserver(function (entries) {
    entries.forEach(function (entry) {
      var gd = entry.target, width = Math.round(entry.contentRect.width);
      var pinned = gd.layout && gd.gsWidth && gd.layout.width === gd.gsWidth;
      if (window.Plotly && pinned && width > 0 && width !== gd.gsWidth) {
        delete gd.layout.width;  // a width of the figure's own is left alone
        gd.gsWidth = null;
        window.Plotly.Plots.resize(gd);
      }
    });
  });

  // A page that loaded plotly.js's cartesian bundle (dashapp/plotly_bundle.py) cannot
  // draw the kernel page's WebGL scatter: an in-app navigation there (a dcc.Link, a link
  // of ours, the navbar) becomes a full page load, whose HTML takes the full bundle.
  function needsFullBundle(url) {
    if (!document.getElementById("gs-plotly-cartesian")) { return false; }
    var path = new URL(url, window.location.href).pathname.replace(/\/+$/, "");
    return /\/kernel$/.test(path);
  }
  // Back or Forward to a kernel page entry of this document (made before a reload, which
  // brought the cartesian bundle) is the same: the page is loaded again.
  window.addEventListener("popstate", function () {
    if (needsFullBundle(window.location.href)) { window.location.reload(); }
  });
  ["pushState", "replaceState"].forEach(function (name) {
    var original = window.history[name].bind(window.history);
    window.history[name] = function (state, title, url) {
      if (url != null && needsFullBundle(url)) {
        window.location.assign(url);
        return undefined;
      }
      return original(state, title, url);
    };
  });

  // In-app navigation, as dcc.Link does it: history plus Dash's pushstate event, no reload.
  function go(href) {
    window.history.pushState({}, "", href);
    window.dispatchEvent(new CustomEvent("_dashprivate_pushstate"));
    window.scrollTo(0, 0);
  }

  // A link drawn outside Dash (tree.js, grid.js) that navigates like dcc.Link; a click
  // with a modifier key still opens it the browser's way (a new tab, say).
  function link(text, href, cls, title) {
    var a = document.createElement("a");
    a.textContent = text;
    a.href = href;
    a.className = cls;
    if (title) { a.title = title; }
    a.addEventListener("click", function (ev) {
      if (ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) { return; }
      ev.preventDefault();
      go(href);
    });
    return a;
  }

  // kernel.js and grid.js bind their graphs too; tree.js and grid.js draw links; grid.js
  // places its titles by the grid's axes.
  window.gpuscope = {whenGraphsChange: whenGraphsChange, bindOnce: bindOnce, link: link,
                     gridAxes: gridAxes, axisKey: axisKey};

  whenGraphsChange(bind);
})();
