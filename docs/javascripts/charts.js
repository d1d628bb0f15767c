// Draw every chart placeholder with the site's own copy of vega-embed (no CDN).
// Runs on DOMContentLoaded (file:// and the first load) and on mkdocs-material's document$ (instant navigation
// swaps the page without a new DOMContentLoaded). A drawn chart is marked so it is never drawn twice.
function benchsiteRenderCharts() {
  if (typeof vegaEmbed === "undefined") return;
  document.querySelectorAll("div.benchsite-chart:not([data-rendered])").forEach(function (el) {
    el.setAttribute("data-rendered", "1");
    var spec = JSON.parse(el.getAttribute("data-spec"));
    vegaEmbed(el, spec, { renderer: "svg", actions: { export: true, source: false, compiled: false, editor: false } })
      .then(function (result) { benchsitePickFromHash(el, result.view); })
      .catch(function (error) { console.error("benchsite: chart " + el.id + " failed to draw", error); });
  });
}
// The compare page: a machine page links to compare.html#<machine id>, which opens with that machine as A.
function benchsitePickFromHash(el, view) {
  var id = decodeURIComponent(window.location.hash.slice(1));
  if (el.id !== "chart-compare" || !/^[0-9a-f]{16}$/.test(id)) return;
  var select = el.querySelector(".vega-bind select");
  if (!select || !Array.prototype.some.call(select.options, function (o) { return o.value === id; })) return;
  select.value = id;
  view.signal("a", id).runAsync();
}
document.addEventListener("DOMContentLoaded", benchsiteRenderCharts);
if (typeof document$ !== "undefined") {
  document$.subscribe(benchsiteRenderCharts);
}
