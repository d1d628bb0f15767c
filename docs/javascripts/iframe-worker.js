// A stand-in for Web Workers on file:// pages, written for benchsite. Chromium refuses `new Worker()` for a
// file:// script, and mkdocs-material runs its search in a worker; this runs the worker script in a hidden
// iframe of the same origin instead and passes messages as events. The file name contains "iframe-worker" so
// that mkdocs-material's offline plugin sees a shim is present and adds no CDN copy of its own.
(function () {
  if (location.protocol !== "file:") return;

  function FrameWorker(url) {
    var worker = this;
    this.onmessage = null;
    this.onerror = null;
    this._listeners = { message: [], error: [] };
    this._queue = [];
    this._ready = false;
    this._frame = document.createElement("iframe");
    this._frame.hidden = true;
    this._frame.setAttribute("aria-hidden", "true");
    this._frame.tabIndex = -1;
    this._frame.srcdoc = "<!doctype html><meta charset='utf-8'><title>worker</title>";
    this._frame.addEventListener("load", function () {
      var scope = worker._frame.contentWindow;
      scope.postMessage = function (data) { worker._emit("message", data); };
      scope.importScripts = function () {
        throw new Error("importScripts is not available in the file:// worker stand-in");
      };
      var script = scope.document.createElement("script");
      script.src = new URL(url, location.href).href;
      script.onload = function () {
        worker._ready = true;
        worker._queue.splice(0).forEach(function (data) { worker._deliver(data); });
      };
      script.onerror = function () { worker._emit("error", new Error("cannot load worker script " + url)); };
      scope.document.head.appendChild(script);
    }, { once: true });
    (document.body || document.documentElement).appendChild(this._frame);
  }

  FrameWorker.prototype.postMessage = function (data) {
    if (this._ready) this._deliver(data);
    else this._queue.push(data);
  };

  FrameWorker.prototype._deliver = function (data) {
    var scope = this._frame.contentWindow;
    setTimeout(function () { scope.dispatchEvent(new scope.MessageEvent("message", { data: data })); }, 0);
  };

  FrameWorker.prototype._emit = function (type, data) {
    var worker = this;
    setTimeout(function () {
      var event = type === "message" ? { type: type, data: data, target: worker } : { type: type, error: data, message: String(data), target: worker };
      var handler = type === "message" ? worker.onmessage : worker.onerror;
      if (handler) handler.call(worker, event);
      worker._listeners[type].slice().forEach(function (listener) { listener.call(worker, event); });
    }, 0);
  };

  FrameWorker.prototype.addEventListener = function (type, listener) {
    if (this._listeners[type]) this._listeners[type].push(listener);
  };

  FrameWorker.prototype.removeEventListener = function (type, listener) {
    if (this._listeners[type]) this._listeners[type] = this._listeners[type].filter(function (l) { return l !== listener; });
  };

  FrameWorker.prototype.terminate = function () { this._frame.remove(); };

  window.Worker = FrameWorker;
})();
