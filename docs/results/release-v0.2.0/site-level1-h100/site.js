/* kforge site: sorting and filtering of the leaderboard. Progressive: the
 * page is complete without this file; it only adds header buttons that
 * sort (by data-v, numbers or text; empty values last) and a filter box. */
(function () {
  "use strict";
  function key(td, num) {
    if (!td) return num ? NaN : "";
    var v = td.getAttribute("data-v");
    if (v === null) v = td.textContent.trim();
    return num ? (v === "" ? NaN : parseFloat(v)) : v.toLowerCase();
  }
  function sortBy(table, col, th) {
    var num = th.getAttribute("data-sort") === "num";
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col], num), y = key(b.cells[col], num);
      if (num) {
        if (isNaN(x) !== isNaN(y)) return isNaN(x) ? 1 : -1;
        if (isNaN(x)) return 0;
        return (x - y) * dir;
      }
      return x < y ? -dir : x > y ? dir : 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
  }
  function sortable(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      if (!th.hasAttribute("data-sort")) return;
      var b = document.createElement("button");
      b.type = "button";
      b.className = "sort";
      while (th.firstChild) b.appendChild(th.firstChild);
      th.appendChild(b);
      b.addEventListener("click", function () { sortBy(table, col, th); });
    });
  }
  function filter(table) {
    var box = document.createElement("p");
    box.className = "filter";
    var label = document.createElement("label");
    label.textContent = "Filter problems ";
    var input = document.createElement("input");
    input.type = "search";
    input.id = table.id + "-filter";
    input.setAttribute("autocomplete", "off");
    label.appendChild(input);
    var count = document.createElement("span");
    count.className = "note";
    count.setAttribute("aria-live", "polite");
    box.appendChild(label);
    box.appendChild(document.createTextNode(" "));
    box.appendChild(count);
    var wrap = table.parentNode.classList.contains("scroll") ? table.parentNode : table;
    wrap.parentNode.insertBefore(box, wrap);
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase(), shown = 0, rows = table.tBodies[0].rows;
      Array.prototype.forEach.call(rows, function (r) {
        var hit = !q || (r.getAttribute("data-problem") || r.textContent).toLowerCase().indexOf(q) >= 0;
        r.hidden = !hit;
        shown += hit;
      });
      count.textContent = q ? shown + " of " + rows.length + " problems" : "";
    });
  }
  document.querySelectorAll("table[data-sortable]").forEach(function (t) {
    if (!t.tHead || !t.tBodies.length) return;
    sortable(t);
    if (t.id === "leaderboard-table") filter(t);
  });
})();
