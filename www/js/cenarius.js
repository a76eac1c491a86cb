// cenarius.js: what a page needs to take part in cenariusd's safe releases.
//   Cenarius.generation()       the generation this page was loaded from (null outside cenariusd)
//   Cenarius.ready()            confirm that generation once the app works (ends its trial)
//   Cenarius.watch(handlers)    hear of new releases and rollbacks as they happen
(function (global) {
  "use strict";

  // The generation of this document, from the Server-Timing header the daemon sends with every
  // file. It is what the page was loaded from, not what is current now: a page that confirms
  // must never confirm a newer release it has not run.
  function generation() {
    var nav = global.performance && performance.getEntriesByType && performance.getEntriesByType("navigation")[0];
    var timings = (nav && nav.serverTiming) || [];
    for (var i = 0; i < timings.length; i++) {
      if (timings[i].name === "cenarius-generation") return parseInt(timings[i].description, 10);
    }
    return null;
  }

  function ready() {
    var loaded = generation();
    if (loaded === null) return Promise.resolve({ status: "not-served-by-cenariusd" });
    return fetch("/_cenarius/ready", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ generation: loaded })
    }).then(function (reply) { return reply.json(); });
  }

  // handlers.committed(event), handlers.rolledBack(event), handlers.confirmed(event): each event
  // is the JSON of the daemon's Server-Sent Event (generation, time, and its own fields).
  // EventSource reconnects by itself and resumes after the last event it saw.
  function watch(handlers) {
    var source = new EventSource("/_cenarius/events");
    function on(name, handler) {
      if (!handler) return;
      source.addEventListener(name, function (message) { handler(JSON.parse(message.data)); });
    }
    on("committed", handlers.committed);
    on("rolled-back", handlers.rolledBack);
    on("confirmed", handlers.confirmed);
    on("sync-failed", handlers.syncFailed);
    return source;
  }

  global.Cenarius = { generation: generation, ready: ready, watch: watch };
})(window);
