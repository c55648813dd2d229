// The chat page's glue (no network, no libraries):
// - links "#rag:<kind>/<args>" inside answers and lists are sent to the server through a
//   hidden textbox (each click gets a fresh nonce so clicking the same link twice works);
// - generator choices the server marks unavailable (#rag-off-<name>) are disabled;
// - a click on a point of the map (#rag-map) opens that paper.
(() => {
  if (window.__ragGlue) return;
  window.__ragGlue = true;
  let nonce = 0;

  function send(bridgeId, value) {
    const box = document.querySelector(`#${bridgeId} textarea, #${bridgeId} input`);
    if (!box) return false;
    nonce += 1;
    box.value = `${value}:${nonce}`;
    box.dispatchEvent(new Event("input", { bubbles: true }));
    return true;
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest('a[href^="#rag:"]');
    if (!link) return;
    event.preventDefault();
    event.stopPropagation();
    const value = link.getAttribute("href").slice(5);
    if (value.startsWith("m/")) {  // an answer's "Show on map": the Map tab, on its papers
      send("rag-map-bridge", value);
      return;
    }
    const corpus = value.startsWith("d/");
    document.querySelectorAll(corpus ? ".rag-row.rag-active" : ".rag-cite.rag-active, .rag-card.rag-active")
      .forEach((el) => el.classList.remove("rag-active"));
    link.classList.add("rag-active");
    send(corpus ? "rag-paper-bridge" : "rag-bridge", value);
    const panel = document.getElementById(corpus ? "rag-paper-detail" : "rag-source");
    if (panel && window.innerWidth < 1000 && !value.startsWith("x/")) {
      setTimeout(() => panel.scrollIntoView({ behavior: "smooth", block: "start" }), 150);
    }
  }, true);

  function disableUnavailable() {
    document.querySelectorAll("#rag-generator input[type=radio]").forEach((input) => {
      const off = document.getElementById(`rag-off-${input.value}`);
      input.disabled = Boolean(off);
      const label = input.closest("label");
      if (label) {
        label.classList.toggle("rag-disabled", Boolean(off));
        if (off) label.title = off.textContent.trim();
      }
    });
  }

  // A click on a point of the map opens its paper (customdata[0] is the paper id). Plotly
  // replaces a plot's event emitter when it draws it anew, so each new emitter is bound.
  function bindMap() {
    document.querySelectorAll("#rag-map .js-plotly-plot").forEach((gd) => {
      if (!gd.on || !gd._ev || gd.__ragEv === gd._ev) return;
      gd.__ragEv = gd._ev;
      gd.on("plotly_click", (data) => {
        const point = data && data.points && data.points[0];
        const id = point && point.customdata && point.customdata[0];
        if (id) send("rag-map-bridge", `d/${id}`);
      });
    });
  }

  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; disableUnavailable(); bindMap(); });
  }).observe(document.documentElement, { childList: true, subtree: true });
})();
