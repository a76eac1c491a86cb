// The sample app: shows the release it runs, offers a newer one when the daemon commits it,
// and confirms its own generation once it has rendered (remove the Cenarius.ready() call and
// publish to watch the daemon roll the release back by itself).
(function () {
  "use strict";
  var release = "1.0.0";
  var loaded = Cenarius.generation();

  function show(id, text) {
    var el = document.getElementById(id);
    if (el) el.textContent = text;
  }

  show("release", release + " (generation " + (loaded === null ? "?" : loaded) + ", loaded " + new Date().toLocaleTimeString() + ")");

  var banner = document.getElementById("update");
  Cenarius.watch({
    committed: function (event) {
      if (event.generation === loaded) return;
      show("update-text", "A new version is ready (generation " + event.generation + ").");
      banner.hidden = false;
    },
    rolledBack: function (event) {
      // This page runs the release that failed: go back to the one the daemon serves now.
      if (event.from === loaded) location.reload();
      else banner.hidden = true;
    }
  });
  document.getElementById("reload").addEventListener("click", function () { location.reload(); });

  // The app works: confirm the generation it was loaded from.
  Cenarius.ready().then(function (answer) {
    show("trial", answer.status === "confirmed" || answer.status === "already-confirmed" ? "confirmed" : answer.desc || answer.status);
  });
})();
