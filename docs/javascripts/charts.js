// Draw every chart placeholder with the site's own copy of vega-embed (no CDN).
// Runs on DOMContentLoaded (file:// and the first load) and on mkdocs-material's document$ (instant navigation
// swaps the page without a new DOMContentLoaded). A drawn chart is marked so it is never drawn twice.
function benchsiteRenderCharts() {
  if (typeof vegaEmbed === "undefined") return;
  document.querySelectorAll("div.benchsite-chart:not([data-rendered])").forEach(function (el) {
    el.setAttribute("data-rendered", "1");
    var spec = JSON.parse(el.getAttribute("data-spec"));
    vegaEmbed(el, spec, { renderer: "svg", actions: { export: true, source: false, compiled: false, editor: false } })
      .then(function (result) {
        benchsitePickFromHash(el, result.view);
        benchsiteAdvisorAnswers(el, result);
      })
      .catch(function (error) { console.error("benchsite: chart " + el.id + " failed to draw", error); });
  });
}
// The compare page: a machine page links to compare.html#<machine id>, which opens with that machine as A, and B
// another machine (never A itself: the first other one offered).
function benchsitePickFromHash(el, view) {
  var id = decodeURIComponent(window.location.hash.slice(1));
  if (el.id !== "chart-compare" || !/^[0-9a-f]{16}$/.test(id)) return;
  var selects = el.querySelectorAll(".vega-bind select");
  var select = selects[0];
  if (!select || !Array.prototype.some.call(select.options, function (o) { return o.value === id; })) return;
  select.value = id;
  view.signal("a", id);
  if (view.signal("b") === id && selects[1]) {
    var other = Array.prototype.find.call(selects[1].options, function (o) { return o.value !== id; });
    if (other) {
      selects[1].value = other.value;
      view.signal("b", other.value);
    }
  }
  view.runAsync();
}
// The advisor: its answer in the page's text, one sentence per accelerator, from the grid the chart draws and the
// same controls. site_builder/advisor.py (answer) writes the same sentence; the browser tests hold them equal.
function benchsiteAdvisorAnswers(el, result) {
  var box = document.getElementById("advisor-answers");
  if (el.id !== "chart-advisor" || !box) return;
  var datasets = result.spec.datasets || {};
  var grid = datasets[Object.keys(datasets)[0]] || [];
  var view = result.view;
  var fixed = function (v) { return Number(v).toFixed(2); };
  var whole = function (v) { return Number(v).toLocaleString("en-US", { maximumFractionDigits: 0 }); };
  function sentence(row) {
    if (row.g === -2) return { text: "No estimate: " + box.getAttribute("data-nothing") + "." };
    var unit = row.a === 0 ? "parameters" : "batch";
    if (row.g === -1) {
      return { text: row.gpu + ": no estimate, measured from " + whole(row.low) + " to " + whole(row.high) + " " + unit + " only." };
    }
    var machines = row.n + " machine" + (row.n === 1 ? "" : "s");
    var missing = function (v) { return v === null || v === undefined || Number.isNaN(v); };
    var shown = missing(row.lo) || missing(row.hi) ? box.getAttribute("data-no-interval") :
      "95% interval " + fixed(row.lo) + " .. " + fixed(row.hi);
    var how = row.w ? row.w + ", nearest" : "at";
    return {
      text: row.gpu + ": " + fixed(row.s) + "x its machine's CPU speed (" + shown + "), " + row.v + "; from " +
        machines + ", " + how + " measured point ",
      near: row.near, href: row.href,
    };
  }
  // site_builder/advisor.py (usd, money_answer) writes the same money sentence.
  function usd(v) {
    var places = v >= 0.01 ? 2 : (v > 0 ? Math.max(2, Math.ceil(-Math.log10(v)) + 2) : 2);
    return "$" + Number(v).toLocaleString("en-US", { minimumFractionDigits: places, maximumFractionDigits: places });
  }
  function money(row, cpuPrice, gpuPrice) {
    var missing = function (v) { return v === null || v === undefined || Number.isNaN(v); };
    if (row.g < 0 || missing(row.t) || missing(row.s) || !(cpuPrice > 0) || !(gpuPrice > 0)) return "";
    var unit = row.a === 0 ? "epochs" : "steps";
    var hours = row.t * 1000 / 3600, k = cpuPrice / gpuPrice;
    var ratio, said;
    if (missing(row.lo) || missing(row.hi)) {
      ratio = fixed(row.s * k) + "x (" + box.getAttribute("data-no-interval") + ")";
      said = box.getAttribute("data-no-clear");
    } else {
      var lo = row.lo * k, hi = row.hi * k;
      ratio = fixed(row.s * k) + "x (95% interval " + fixed(lo) + " .. " + fixed(hi) + ")";
      said = lo > 1 ? box.getAttribute("data-cheaper-gpu") : hi < 1 ? box.getAttribute("data-cheaper-cpu") :
        box.getAttribute("data-no-clear");
    }
    return row.gpu + ": 1,000 " + unit + " cost " + usd(hours * row.s * cpuPrice) + " on the CPU and " +
      usd(hours * gpuPrice) + " on the accelerator; CPU cost over accelerator cost " + ratio + ": " + said + ".";
  }
  function update() {
    var family = view.signal("family"), framework = view.signal("framework"), loop = view.signal("loop");
    var position = { 0: Math.round(view.signal("log_params") * box.getAttribute("data-steps")), 1: view.signal("log_batch") };
    var perGpu = {};
    grid.forEach(function (row) {
      if (row.f !== family || row.fw !== framework || row.loop !== loop) return;
      if (row.g >= 0 && row.g !== position[row.a]) return;
      var have = perGpu[row.gpu];
      if (!have || (have.g < 0 && row.g >= 0)) perGpu[row.gpu] = row;
    });
    box.textContent = "";
    Object.keys(perGpu).sort().forEach(function (gpu) {
      var said = sentence(perGpu[gpu]);
      var p = document.createElement("p");
      p.className = "benchsite-answer";
      p.appendChild(document.createTextNode(said.text));
      if (said.near) {
        var a = document.createElement("a");
        a.href = box.getAttribute("data-root") + said.href;
        a.textContent = said.near;
        p.appendChild(a);
        p.appendChild(document.createTextNode("."));
      }
      box.appendChild(p);
    });
    var cpuPrice = Number(view.signal("cpu_usd_h")), gpuPrice = Number(view.signal("gpu_usd_h"));
    Object.keys(perGpu).sort().forEach(function (gpu) {
      var text = money(perGpu[gpu], cpuPrice, gpuPrice);
      if (!text) return;
      var p = document.createElement("p");
      p.className = "benchsite-money";
      p.textContent = text;
      box.appendChild(p);
    });
  }
  ["family", "framework", "loop", "log_params", "log_batch", "cpu_usd_h", "gpu_usd_h"].forEach(function (name) {
    view.addSignalListener(name, update);
  });
  update();
}
document.addEventListener("DOMContentLoaded", benchsiteRenderCharts);
if (typeof document$ !== "undefined") {
  document$.subscribe(benchsiteRenderCharts);
}
