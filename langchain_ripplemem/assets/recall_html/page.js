// The recollection page (recall_html.py): click or hover a memory to read it and why it was kept.
// Inlined into each page: no network. The drawing itself is static SVG; this only adds interaction
// and a self-check of the layout (overlapping labels), recorded on <body> for tests.
(function () {
  "use strict";
  var details = document.getElementById("details");
  var byLabel = {};
  document.querySelectorAll("template[data-for]").forEach(function (t) { byLabel[t.dataset.label] = t.dataset.for; });

  function select(id) {
    var template = document.querySelector('template[data-for="' + id + '"]');
    if (!template) { return false; }
    document.querySelectorAll(".selected").forEach(function (e) { e.classList.remove("selected"); });
    document.querySelectorAll('[data-id="' + id + '"]').forEach(function (e) { e.classList.add("selected"); });
    document.querySelectorAll("#recall-graph .edge").forEach(function (e) {
      var ends = (e.dataset.ends || "").split(" ");
      e.classList.toggle("lit", e.dataset.src === id || e.dataset.dst === id || ends.indexOf(id) >= 0);
    });
    details.replaceChildren(template.content.cloneNode(true));
    details.dataset.id = id;
    return true;
  }

  document.addEventListener("click", function (event) {
    var target = event.target.closest("[data-id]");
    if (target && select(target.dataset.id)) {
      history.replaceState(null, "", "#" + document.querySelector('template[data-for="' + target.dataset.id + '"]').dataset.label);
    }
  });
  document.addEventListener("keydown", function (event) {
    var target = event.target.closest && event.target.closest("[data-id]");
    if (target && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); select(target.dataset.id); }
  });
  function fromHash() {
    var id = byLabel[decodeURIComponent(location.hash.slice(1))];
    if (id) { select(id); }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();

  function overlapping(selector) {
    var boxes = Array.prototype.map.call(document.querySelectorAll(selector), function (e) {
      return e.getBoundingClientRect();
    }).filter(function (r) { return r.width > 0 && r.height > 0; });
    var count = 0;
    for (var i = 0; i < boxes.length; i++) {
      for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i], b = boxes[j];
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
          count++;
        }
      }
    }
    return count;
  }
  document.body.dataset.labelOverlaps = String(overlapping("#recall-graph text"));
  document.body.dataset.nodeOverlaps = String(overlapping("#recall-graph .node .core"));
  document.body.dataset.renderMs = performance.now().toFixed(1);
  document.body.dataset.ready = "1";
})();
