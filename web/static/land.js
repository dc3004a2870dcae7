// statgraph web UI: the merge queue (statgraph land). It lists, for each
// branch land ran onto, every done task landed, waiting or blocked with
// its reason, and lands the done tasks onto a branch from the page. It
// uses app.js's el, api and message (app.js is loaded after it and calls
// loadLand when the tasks or the run change).
"use strict";

// loadLand reads the merge queues and shows them.
async function loadLand() {
  try {
    const data = await api("GET", "/api/land");
    renderLand(data.queues);
  } catch (err) {
    message(err.message, true);
  }
}

function renderLand(queues) {
  const box = document.getElementById("land-queues");
  if (!queues.length) {
    box.replaceChildren(el("p", { class: "hint" }, "No task has been landed yet."));
    return;
  }
  box.replaceChildren(...queues.map((q) => el("div", { class: "land-queue", "data-onto": q.onto },
    el("h3", {}, "onto " + q.onto),
    el("table", {},
      el("thead", {}, el("tr", {}, el("th", {}, "task"), el("th", {}, "state"), el("th", {}, "why"))),
      el("tbody", {}, ...q.tasks.map((t) => el("tr", { class: "land-row", "data-id": t.id, "data-state": t.state },
        el("td", {}, el("span", { class: "id" }, t.id), " " + t.title),
        el("td", { class: "land-state" }, t.state),
        el("td", { class: "land-reason" }, t.reason || (t.commit ? "at " + t.commit.slice(0, 12) : "")))))))));
}

document.getElementById("land-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const onto = document.getElementById("land-onto").value.trim();
  try {
    setRun(await api("POST", "/api/land", { onto }));
    message("landing the done tasks onto " + onto + ", one at a time, each merge checked");
  } catch (err) {
    message(err.message, true);
  }
});
