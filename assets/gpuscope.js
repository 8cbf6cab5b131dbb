/* GPUscope client-side behaviour that needs no server round trip:
 *  - hovering a legend entry highlights that Category-Action in every chart of the
 *    page and greys out the rest;
 *  - hovering a bar highlights the same task (same key) in both the Task view and the
 *    Component view;
 *  - "PNG" buttons download a chart with Plotly's toImage, named like its SVG export.
 * Bars are Plotly Bar traces whose trace.meta is [kindLabel, role] and whose
 * customdata[i][0] is the task key (see dashapp/daisen/figures.py).
 */
(function () {
  "use strict";
  var DIM = 0.18;

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

  document.addEventListener("click", function (ev) {
    var button = ev.target.closest && ev.target.closest(".gs-png");
    if (!button || !window.Plotly) { return; }
    var holder = document.getElementById(button.getAttribute("data-graph"));
    var gd = holder && holder.querySelector(".js-plotly-plot");
    if (gd) {
      // The saved image says what it shows: a title (trace, component, window) and a
      // legend with one entry per name (the page's own legend is outside the chart).
      var seen = {};
      var data = gd.data.map(function (trace) {
        var copy = Object.assign({}, trace);
        copy.showlegend = !!trace.name && !seen[trace.name];
        seen[trace.name] = true;
        return copy;
      });
      var margin = Object.assign({}, gd.layout.margin || {});
      margin.t = Math.max(margin.t || 0, 50);
      var layout = Object.assign({}, gd.layout, {
        margin: margin, showlegend: true, legend: {orientation: "h", y: -0.25},
        title: {text: button.getAttribute("data-title") || button.getAttribute("data-filename"),
                font: {size: 13}, x: 0.01, xanchor: "left"},
        height: gd._fullLayout.height + 80});
      window.Plotly.downloadImage({data: data, layout: layout},
                                  {format: "png", scale: 2, width: gd._fullLayout.width,
                                   height: layout.height,
                                   filename: button.getAttribute("data-filename")});
    }
  });

  function bind() {
    graphs().forEach(function (gd) {
      if (gd.gsBound || typeof gd.on !== "function") { return; }
      gd.gsBound = true;
      gd.on("plotly_hover", function (data) {
        var point = data && data.points && data.points[0];
        if (point && point.customdata && isBarTrace(point.data)) {
          highlightTask(point.customdata[0]);
        }
      });
      gd.on("plotly_unhover", clearHighlight);
    });
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
  window.gpuscope = {whenGraphsChange: whenGraphsChange};  // kernel.js binds its graphs too

  whenGraphsChange(bind);
})();
