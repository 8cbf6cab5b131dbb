/* GPUscope: the Overview's component tree (GPU > SA[3] > CU[12] > SIMD[1]), drawn in the
 * browser from the nested lists in #ov-tree's data-tree (dashapp/daisen/tree.py:
 * [name, path, filter, isComponent, count, children]). Each node's name filters the
 * Overview to its subtree; "open" opens a component's view. Links navigate like dcc.Link
 * (gpuscope.js), without reloading the app.
 */
(function () {
  "use strict";

  function link(text, href, cls, title) {
    return window.gpuscope.link(text, href, cls, title);
  }

  function overviewHref(filter) {
    var params = new URLSearchParams(window.location.search);
    params.set("filter", filter);
    params.delete("page");
    return "/overview?" + params.toString();
  }

  function componentHref(holder, path) {
    var params = new URLSearchParams();
    if (holder.getAttribute("data-trace")) { params.set("trace", holder.getAttribute("data-trace")); }
    params.set("loc", path);
    var win = holder.getAttribute("data-window");
    if (win) {
      params.set("t0", win.split(",")[0]);
      params.set("t1", win.split(",")[1]);
    }
    return "/component?" + params.toString();
  }

  function node(holder, item) {
    var name = item[0], path = item[1], filter = item[2], isComponent = item[3];
    var count = item[4], children = item[5];
    var parts = [link(name, overviewHref(filter), "gs-tree-filter me-1",
                      "Show " + path + " and everything below it in the Overview")];
    if (children.length) {
      var n = document.createElement("span");
      n.className = "text-muted me-1";
      n.textContent = "(" + count + ")";
      parts.push(n);
    }
    if (isComponent) { parts.push(link("open", componentHref(holder, path), "gs-tree-open")); }
    if (!children.length) {
      var leaf = document.createElement("div");
      leaf.className = "gs-tree-leaf";
      parts.forEach(function (p) { leaf.appendChild(p); });
      return leaf;
    }
    var details = document.createElement("details");
    details.className = "gs-tree-node";
    details.setAttribute("data-path", path);
    var summary = document.createElement("summary");
    parts.forEach(function (p) { summary.appendChild(p); });
    details.appendChild(summary);
    var box = document.createElement("div");
    box.className = "gs-tree-children";
    // Children are drawn when a node is first opened: a big machine has thousands.
    details.addEventListener("toggle", function () {
      if (details.open && !box.childNodes.length) {
        children.forEach(function (c) { box.appendChild(node(holder, c)); });
      }
    });
    details.appendChild(box);
    return details;
  }

  function draw() {
    var holder = document.getElementById("ov-tree");
    if (!holder) { return; }
    var key = holder.getAttribute("data-tree") + "|" + holder.getAttribute("data-window") +
      "|" + window.location.search;
    if (holder.gsTreeKey === key) { return; }
    holder.gsTreeKey = key;
    holder.textContent = "";
    JSON.parse(holder.getAttribute("data-tree") || "[]").forEach(function (item) {
      holder.appendChild(node(holder, item));
    });
  }

  window.gpuscope.whenGraphsChange(draw);
})();
