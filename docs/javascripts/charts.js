// Draw every chart placeholder with the site's own copy of vega-embed (no CDN).
// Runs on DOMContentLoaded (file:// and first load) and on mkdocs-material's document$ (instant navigation).
function benchsiteRenderCharts() {
  if (typeof vegaEmbed === "undefined") return;
  document.querySelectorAll("div.benchsite-chart:not([data-rendered])").forEach(function (el) {
    el.setAttribute("data-rendered", "1");
    var spec = JSON.parse(el.getAttribute("data-spec"));
    vegaEmbed(el, spec, { actions: { export: true, source: false, compiled: false, editor: false } });
  });
}
document.addEventListener("DOMContentLoaded", benchsiteRenderCharts);
if (typeof document$ !== "undefined") {
  document$.subscribe(benchsiteRenderCharts);
}
