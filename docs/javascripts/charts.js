// Draw every chart placeholder with the site's own copy of vega-embed (no CDN).
// Runs on DOMContentLoaded (file:// and the first load) and on mkdocs-material's document$ (instant navigation
// swaps the page without a new DOMContentLoaded). A drawn chart is marked so it is never drawn twice.
function benchsiteRenderCharts() {
  if (typeof vegaEmbed === "undefined") return;
  document.querySelectorAll("div.benchsite-chart:not([data-rendered])").forEach(function (el) {
    el.setAttribute("data-rendered", "1");
    var spec = JSON.parse(el.getAttribute("data-spec"));
    vegaEmbed(el, spec, { renderer: "svg", actions: { export: true, source: false, compiled: false, editor: false } })
      .catch(function (error) { console.error("benchsite: chart " + el.id + " failed to draw", error); });
  });
}
document.addEventListener("DOMContentLoaded", benchsiteRenderCharts);
if (typeof document$ !== "undefined") {
  document$.subscribe(benchsiteRenderCharts);
}
