// statgraph web UI: a board of the plan's tasks, kept live over Server-Sent
// Events, with a task's attempts and diffs and the buttons that steer a
// run. Every text that comes from the server (task titles, model output,
// check output, diffs) goes into the page as text nodes, never as HTML.
"use strict";

const columns = ["pending", "in-progress", "done", "failed", "blocked", "interrupted"];
const state = { tasks: new Map(), selected: "", run: { running: false }, detailTimer: 0 };
// Latencies (ms) from a status change on the server to the page showing
// it; read by the benchmark (tests/bench/webui).
window.sgLatencies = [];

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
  return e;
}

function message(text, isError) {
  const m = document.getElementById("message");
  m.textContent = text || "";
  m.className = isError ? "error" : "";
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (method !== "GET") {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body || {});
  }
  const res = await fetch(path, opts);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error || res.status + " " + res.statusText);
  return data;
}

async function loadAll() {
  try {
    const data = await api("GET", "/api/tasks");
    document.getElementById("file").textContent = data.file;
    state.tasks = new Map(data.tasks.map((t) => [t.id, t]));
    setRun(data.run);
    renderBoard();
    highlightGraph();
    if (state.selected) loadDetail(state.selected);
  } catch (err) {
    message(err.message, true);
  }
}

function setRun(run) {
  state.run = run || { running: false };
  const s = document.getElementById("run-state");
  s.dataset.running = String(!!state.run.running);
  s.textContent = state.run.running ? "run going on" : state.run.error ? "last run stopped: " + state.run.error : "idle";
  document.getElementById("stop").disabled = !state.run.running;
  document.getElementById("start").disabled = !!state.run.running;
}

function renderBoard() {
  const board = document.getElementById("board");
  const cols = new Map();
  const kids = [];
  for (const name of columns) {
    const c = el("div", { class: "column", "data-status": name }, el("h2", {}, name.replace("-", " ")));
    cols.set(name, c);
    kids.push(c);
  }
  for (const t of state.tasks.values()) {
    let c = cols.get(t.status);
    if (!c) {
      c = el("div", { class: "column", "data-status": t.status }, el("h2", {}, t.status));
      cols.set(t.status, c);
      kids.push(c);
    }
    c.append(card(t));
  }
  board.replaceChildren(...kids);
}

function card(t) {
  const meta = [];
  if (t.node) meta.push(t.node);
  if (t.attempt || t.status !== "pending") meta.push("attempt " + t.attempt + "/" + t.max_attempts);
  if (t.tokens) meta.push(t.tokens + " tokens");
  const c = el("div", { class: "card" + (t.id === state.selected ? " selected" : ""), "data-id": t.id, "data-status": t.status,
      "data-node": t.node || "", "data-attempt": String(t.attempt), onclick: () => select(t.id) },
    el("div", {}, el("span", { class: "id" }, t.id), el("span", { class: "title" }, t.title)),
    meta.length ? el("div", { class: "meta" }, meta.join(" · ")) : null,
    t.dependencies && t.dependencies.length ? el("div", { class: "deps" }, "after " + t.dependencies.join(", ")) : null,
    t.reason ? el("div", { class: "reason" }, t.reason) : null);
  if (t.question) {
    const q = el("div", { class: "question" },
      el("div", {}, "Out of retries after " + t.question.attempts + " attempts. What now?"));
    for (const a of ["retry", "skip", "abort"]) {
      q.append(el("button", { type: "button", class: "answer", "data-answer": a,
        onclick: (ev) => { ev.stopPropagation(); answer(t.id, a); } }, a));
    }
    c.append(q);
  }
  return c;
}

function updateTask(t, changedAt) {
  const old = state.tasks.get(t.id);
  state.tasks.set(t.id, t);
  const existing = document.querySelector('.card[data-id="' + CSS.escape(t.id) + '"]');
  const col = document.querySelector('.column[data-status="' + CSS.escape(t.status) + '"]');
  if (!existing || !col) {
    renderBoard();
  } else {
    const fresh = card(t);
    if (existing.parentElement === col) existing.replaceWith(fresh);
    else { existing.remove(); col.append(fresh); }
  }
  if (changedAt && (!old || old.status !== t.status)) {
    window.sgLatencies.push(Date.now() - Date.parse(changedAt));
  }
  highlightGraph();
  if (t.id === state.selected) scheduleDetail();
}

async function loadGraph() {
  try {
    const res = await fetch("/api/graph.svg");
    if (!res.ok) throw new Error("graph: " + res.status);
    const doc = new DOMParser().parseFromString(await res.text(), "image/svg+xml");
    const svg = doc.documentElement;
    if (svg.nodeName !== "svg") throw new Error("graph: not an SVG drawing");
    document.getElementById("graph").replaceChildren(document.importNode(svg, true));
    highlightGraph();
  } catch (err) {
    message(err.message, true);
  }
}

// highlightGraph marks the nodes the selected task is in, or, with none
// selected, every running task's node.
function highlightGraph() {
  const active = new Set();
  for (const t of state.tasks.values()) {
    if (t.node && (!state.selected || t.id === state.selected)) active.add(t.node);
  }
  for (const g of document.querySelectorAll("#graph .node")) {
    g.classList.toggle("active", active.has(g.dataset.node));
  }
}

function select(id) {
  state.selected = id;
  for (const c of document.querySelectorAll(".card")) c.classList.toggle("selected", c.dataset.id === id);
  highlightGraph();
  loadDetail(id);
}

function scheduleDetail() {
  clearTimeout(state.detailTimer);
  state.detailTimer = setTimeout(() => loadDetail(state.selected), 200);
}

async function loadDetail(id) {
  const d = document.getElementById("detail");
  const t = state.tasks.get(id);
  let h;
  try {
    h = await api("GET", "/api/tasks/" + encodeURIComponent(id));
  } catch (err) {
    if (id !== state.selected) return;
    d.replaceChildren(el("h2", {}, "Task " + id + (t ? ": " + t.title : "")), el("p", { class: "hint" }, err.message));
    return;
  }
  if (id !== state.selected) return;
  const kids = [el("h2", {}, "Task " + h.id + ": " + h.title),
    el("p", { class: "summary" }, "phase " + h.phase + " · " + h.retry_count + " verification(s) of " + (h.max_retries || 3) + " · " + h.tokens + " tokens")];
  if (h.plan && h.plan.summary) kids.push(el("p", { class: "plan" }, "Plan: " + h.plan.summary));
  for (const a of h.attempts) kids.push(attempt(a));
  if (h.diff) kids.push(el("h3", {}, "Branch " + (h.branch || "") + " against its base"), diffView(h.diff, "branch-diff"));
  if (h.uncommitted) kids.push(el("h3", {}, "Uncommitted work in the workspace"), diffView(h.uncommitted, "uncommitted-diff"));
  d.replaceChildren(...kids);
}

function attempt(a) {
  const verdict = a.passed ? "passed" : "failed";
  const box = el("div", { class: "attempt", "data-n": String(a.n) },
    el("h3", {}, "Attempt " + a.n + " ", el("span", { class: "verdict " + verdict }, verdict),
      a.duration ? " · " + a.duration : "", a.tokens ? " · " + a.tokens + " tokens" : ""));
  if (a.summary) box.append(el("div", { class: "label" }, "Agent's summary"), el("pre", { class: "agent-log" }, a.summary));
  if (a.log) box.append(el("div", { class: "label" }, "Agent's log (tail)"), el("pre", { class: "agent-tail" }, a.log));
  if (a.no_progress) box.append(el("p", {}, "No progress: the attempt changed nothing."));
  if (a.errors && a.errors.length) box.append(el("div", { class: "label" }, "Checks' output"), el("pre", { class: "checks" }, a.errors.join("\n\n")));
  if (a.feedback) box.append(el("div", { class: "label" }, "Feedback sent back"), el("pre", { class: "feedback" }, a.feedback));
  if (a.diff) box.append(el("div", { class: "label" }, "Diff of this attempt"), diffView(a.diff, "attempt-diff"));
  return box;
}

function diffView(text, cls) {
  const pre = el("pre", { class: "diff " + cls });
  for (const line of text.replace(/\n$/, "").split("\n")) {
    let k = "ctx";
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ")) k = "file";
    else if (line.startsWith("+")) k = "add";
    else if (line.startsWith("-")) k = "del";
    else if (line.startsWith("@@")) k = "hunk";
    pre.append(el("span", { class: "line " + k }, line + "\n"));
  }
  return pre;
}

async function answer(id, a) {
  try {
    await api("POST", "/api/tasks/" + encodeURIComponent(id) + "/answer", { answer: a });
    message("task " + id + ": " + a);
  } catch (err) {
    message(err.message, true);
  }
}

function connect() {
  const conn = document.getElementById("conn");
  const es = new EventSource("/api/events");
  es.onopen = () => { conn.dataset.state = "live"; conn.textContent = "live"; };
  es.onerror = () => { conn.dataset.state = "lost"; conn.textContent = "reconnecting…"; };
  es.addEventListener("resync", () => loadAll());
  es.addEventListener("task", (m) => { const e = JSON.parse(m.data); updateTask(e.task, e.time); });
  es.addEventListener("question", () => {});
  es.addEventListener("answer", () => {});
  es.addEventListener("run", (m) => { const e = JSON.parse(m.data); setRun(e.run); if (!e.run.running) loadAll(); });
}

function wire() {
  document.getElementById("start").addEventListener("click", async () => {
    try { setRun(await api("POST", "/api/run", {})); message("run started"); } catch (err) { message(err.message, true); }
  });
  document.getElementById("stop").addEventListener("click", async () => {
    try { await api("POST", "/api/stop", {}); message("stopping: model calls and commands are cancelled, tasks.json is saved"); } catch (err) { message(err.message, true); }
  });
  document.getElementById("retry-failed").addEventListener("click", async () => {
    try {
      const r = await api("POST", "/api/reset", {});
      message(r.reset.length ? "back to pending: " + r.reset.join(", ") : "no failed or blocked task");
    } catch (err) { message(err.message, true); }
  });
}

// loadWorkers lists the workers of the queue the plan's runs used
// (statgraph run --queue), every 5 s; a plan run here has none and the
// section stays hidden.
async function loadWorkers() {
  try {
    const data = await api("GET", "/api/workers");
    const section = document.getElementById("workers");
    section.hidden = data.workers.length === 0;
    const items = data.workers.map((w) => {
      const units = w.units.map((u) => "task " + u.unit + " (" + u.limits + ")").join("; ");
      return el("li", { class: "worker", "data-alive": String(w.alive) },
        (w.alive ? "alive" : "gone") + " · " + w.host + " pid " + w.pid + " · " + w.id.slice(0, 8) +
        " · last seen " + new Date(w.last_seen).toLocaleTimeString() + (units ? " · " + units : " · idle"));
    });
    document.getElementById("worker-list").replaceChildren(...items);
  } catch (err) {
    message(err.message, true);
  }
}

wire();
loadGraph();
loadAll();
loadWorkers();
setInterval(loadWorkers, 5000);
connect();
