/* GPUscope: the Overview's small multiples are one Plotly figure of subplots
 * (dashapp/daisen/figures.py, overview_grid: chart i on axes x{i+1}, y{2i+1}, y{2i+2}).
 * Each chart's title, a link to its Component view, and its PNG button are drawn here in
 * the strip above its plot, from the holder's data-charts: [[name, href, pngTitle,
 * pngFilename], ...] in chart order. They are drawn again after every redraw of the
 * figure (a new page, a zoom, a resize), where Plotly has just placed the axes.
 */
(function () {
  "use strict";
  var STRIP_PX = 22;  // figures.py TITLE_PX less a little air above the plot

  function axis(gd, ref) {
    return gd._fullLayout[window.gpuscope.axisKey(ref)];
  }

  function pngButton(holder, n, chart) {
    var button = document.createElement("button");
    button.textContent = "PNG";
    button.className = "btn btn-link btn-sm p-0 gs-png";
    button.title = "Save this chart as a PNG, titled and with its legend";
    button.setAttribute("data-graph", holder.id);
    button.setAttribute("data-subplot", String(n));
    button.setAttribute("data-title", chart[2]);
    button.setAttribute("data-filename", chart[3]);
    return button;
  }

  // Strips are built once per set of charts and only moved on later redraws (a zoom, a
  // resize): a link being clicked is never swapped for a copy under the pointer.
  function draw(gd) {
    var holder = gd.closest(".gs-grid");
    if (!holder || !gd._fullLayout) { return; }
    var text = holder.getAttribute("data-charts") || "[]";
    var layer = holder.querySelector(".gs-grid-titles");
    if (!layer || layer.gsCharts !== text) {
      var fresh = document.createElement("div");
      fresh.className = "gs-grid-titles";
      fresh.gsCharts = text;
      JSON.parse(text).forEach(function (chart, i) {
        var strip = document.createElement("div");
        strip.className = "gs-grid-title";
        strip.appendChild(window.gpuscope.link(chart[0], chart[1], "gs-chart-title",
                                               "Open the Component view at this window"));
        strip.appendChild(pngButton(holder, i + 1, chart));
        fresh.appendChild(strip);
      });
      if (layer) { holder.replaceChild(fresh, layer); } else { holder.appendChild(fresh); }
      layer = fresh;
    }
    Array.prototype.forEach.call(layer.children, function (strip, i) {
      var axes = window.gpuscope.gridAxes(i + 1), x = axis(gd, axes.x), y = axis(gd, axes.y);
      strip.style.display = x && y ? "" : "none";
      if (!x || !y) { return; }
      strip.style.left = (gd.offsetLeft + x._offset) + "px";
      strip.style.top = (gd.offsetTop + y._offset - STRIP_PX) + "px";
      strip.style.width = x._length + "px";
    });
  }

  function bind() {
    document.querySelectorAll(".gs-grid .js-plotly-plot").forEach(function (gd) {
      window.gpuscope.bindOnce(gd, "gsGridBound", function () {
        gd.on("plotly_afterplot", function () { draw(gd); });
        draw(gd);
      });
    });
  }

  window.gpuscope.whenGraphsChange(bind);
})();
