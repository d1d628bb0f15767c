// Sortable tables, written for benchsite (no CDN, no dependency): a click on a column heading (or Enter on it)
// sorts the table by that column, numerically where every cell reads as a number with an optional unit
// ("12.3 ms", "4.2 s", "0.83x", "1,010"), as text otherwise; "-" (no value) always sorts last.
(function () {
  var NUMBER = /^(-?[\d,]*\.?\d+(?:e[-+]?\d+)?)\s*(µs|ms|s|x|%|GiB|MHz)?(?:\s|$)/i;
  var SCALE = { "µs": 1e-6, ms: 1e-3 };

  function key(text) {
    var match = NUMBER.exec(text.trim());
    if (!match) return null;
    return parseFloat(match[1].replace(/,/g, "")) * (SCALE[match[2]] || 1);
  }

  function compare(a, b, direction) {
    var empty = function (t) { return t === "" || t === "-"; };
    if (empty(a) || empty(b)) return empty(a) - empty(b);
    var ka = key(a), kb = key(b);
    if (ka !== null && kb !== null) return direction * (ka - kb);
    return direction * a.localeCompare(b, undefined, { numeric: true });
  }

  function sortBy(table, column, heading) {
    var body = table.tBodies[0];
    var direction = heading.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (x, y) {
      return compare(x.cells[column].textContent.trim(), y.cells[column].textContent.trim(), direction);
    });
    Array.prototype.forEach.call(heading.parentNode.cells, function (cell) { cell.removeAttribute("aria-sort"); });
    heading.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function enable() {
    document.querySelectorAll("article table:not([data-sortable])").forEach(function (table) {
      if (!table.tHead || !table.tBodies.length || table.tBodies[0].rows.length < 2) return;
      table.setAttribute("data-sortable", "1");
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (heading, column) {
        heading.setAttribute("tabindex", "0");
        heading.setAttribute("role", "button");
        heading.title = "Sort by this column";
        heading.classList.add("benchsite-sortable");
        heading.addEventListener("click", function () { sortBy(table, column, heading); });
        heading.addEventListener("keydown", function (event) {
          if (event.key === "Enter") sortBy(table, column, heading);
        });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", enable);
  if (typeof document$ !== "undefined") document$.subscribe(enable);
})();
