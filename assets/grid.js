/* GPUscope: the Overview's small multiples are one Plotly figure of subplots
 * (dashapp/daisen/figures.py, overview_grid: chart i on axes x{i+1}, y{2i+1}, y{2i+2}).
 * Each chart's title, a link to its Component view, and its PNG button are drawn here in
 * the strip above its plot, and its right axis's labels beside it (its line is drawn
 * against the left axis: figures.py, right_ticks), from the holder's data-charts:
 * [[name, href, pngTitle, pngFilename, [[fraction, label], ...]], ...] in chart order.
 * They are placed again after every redraw of the figure (a new page, a zoom, a resize),
 * where Plotly has just placed the axes.
 */
(function () {
  "use strict";
  var STRIP_PX = 22;  // figures.py TITLE_PX less a little air above the plot
  var LABEL_GAP_PX = 3;  // between a plot's right edge and its right axis's labels, as Plotly

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
        fresh.appendChild(rightLabels(gd, i + 1, chart[4] || []));
      });
      if (layer) { holder.replaceChild(fresh, layer); } else { holder.appendChild(fresh); }
      layer = fresh;
    }
    var children = layer.children;
    for (var i = 0; 2 * i + 1 < children.length; i++) {
      var strip = children[2 * i], right = children[2 * i + 1];
      var axes = window.gpuscope.gridAxes(i + 1), x = axis(gd, axes.x), y = axis(gd, axes.y);
      strip.style.display = right.style.display = x && y ? "" : "none";
      if (!x || !y) { continue; }
      strip.style.left = (gd.offsetLeft + x._offset) + "px";
      strip.style.top = (gd.offsetTop + y._offset - STRIP_PX) + "px";
      strip.style.width = x._length + "px";
      right.style.left = (gd.offsetLeft + x._offset + x._length + LABEL_GAP_PX) + "px";
      right.style.top = (gd.offsetTop + y._offset) + "px";
      right.style.height = y._length + "px";
    }
  }

  // The labels of chart n's right axis, in its tick font: [[fraction of the height, text]].
  function rightLabels(gd, n, ticks) {
    var box = document.createElement("div");
    box.className = "gs-grid-right";
    // The axis draws nothing, so Plotly completes nothing of it: its font as given.
    var own = gd.layout[window.gpuscope.axisKey(window.gpuscope.gridAxes(n).y2)] || {};
    var font = own.tickfont || {};
    box.style.color = font.color || "";
    box.style.fontFamily = font.family || gd._fullLayout.font.family;
    box.style.fontSize = font.size ? font.size + "px" : "";
    ticks.forEach(function (tick) {
      var label = document.createElement("span");
      label.textContent = tick[1];
      label.style.top = (100 * (1 - tick[0])) + "%";
      box.appendChild(label);
    });
    return box;
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
