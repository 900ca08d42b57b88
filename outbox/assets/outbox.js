// The outbox page: codes revealed on click, the list kept current through
// the server's event stream. No framework, no build step.
(function () {
  "use strict";
  var base = document.body.dataset.base;
  var mask = "\u2022\u2022\u2022\u2022\u2022\u2022";

  document.addEventListener("click", function (e) {
    var code = e.target.closest("button.code");
    if (code) {
      e.preventDefault();
      var shown = code.getAttribute("aria-pressed") === "true";
      code.textContent = shown ? mask : code.dataset.code;
      code.setAttribute("aria-pressed", shown ? "false" : "true");
      return;
    }
    var reveal = e.target.closest("[data-reveal]");
    if (reveal) {
      var frame = document.getElementById(reveal.dataset.reveal);
      var on = reveal.getAttribute("aria-pressed") !== "true";
      frame.src = frame.dataset.src + (on ? "?reveal=1" : "");
      reveal.setAttribute("aria-pressed", on ? "true" : "false");
      reveal.textContent = on ? "Hide codes" : "Show codes";
    }
  });

  var list = document.getElementById("list");
  var live = document.getElementById("live");
  var busy = false, again = false;

  // refresh reloads the list for the page's filter, one request at a time;
  // changes during a request cause one more.
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(base + "/list" + location.search, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html !== null) { list.innerHTML = html; } })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }

  if (!window.EventSource) { return; }
  var events = new EventSource(base + "/events");
  // "ready" comes first on every connection: catch up on what changed
  // while disconnected.
  events.addEventListener("ready", function () { live.className = "on"; refresh(); });
  events.addEventListener("change", refresh);
  events.onerror = function () { live.className = "off"; };
})();
