// The sample app's only script: shows which release is being served.
(function () {
  "use strict";
  var release = "1.0.0";
  var el = document.getElementById("release");
  if (el) {
    el.textContent = release + " (loaded " + new Date().toLocaleTimeString() + ")";
  }
})();
