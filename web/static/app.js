// statgraph web UI: a board of the plan's tasks, kept live over Server-Sent
// Events, with a task's attempts and diffs and the buttons that steer a
// run. Every text that comes from the server (task titles, model output,
// check output, diffs) goes into the page as text nodes, never as HTML.
"use strict";

const columns = ["pending", "in-progress", "parked", "done", "failed", "blocked", "interrupted"];
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
    renderSpend();
    highlightGraph();
    loadLand();
    if (state.selected) loadDetail(state.selected);
  } catch (err) {
    message(err.message, true);
  }
}

// usd shows a cost in US dollars, or "cost unknown" for null (a model
// without a price): never a made-up $0.
function usd(c) {
  if (c === null || c === undefined) return "cost unknown";
  return "$" + (c < 1 ? c.toFixed(4) : c.toFixed(2));
}

// renderSpend shows what the plan's tasks spent together.
function renderSpend() {
  let tokens = 0, cost = 0, known = true;
  for (const t of state.tasks.values()) {
    if (!t.phase) continue;
    tokens += t.tokens || 0;
    if (t.cost_usd === null || t.cost_usd === undefined) known = false;
    else cost += t.cost_usd;
  }
  const s = document.getElementById("spend");
  s.dataset.known = String(known);
  s.textContent = tokens ? tokens + " tokens · " + usd(known ? cost : null) : "";
}

function setRun(run) {
  state.run = run || { running: false };
  const s = document.getElementById("run-state");
  s.dataset.running = String(!!state.run.running);
  const what = state.run.onto ? "land onto " + state.run.onto : "run";
  s.textContent = state.run.running ? what + " going on" : state.run.error ? "last " + what + " stopped: " + state.run.error : "idle";
  document.getElementById("stop").disabled = !state.run.running;
  document.getElementById("start").disabled = !!state.run.running;
  document.getElementById("land-start").disabled = !!state.run.running;
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
  if (t.phase === "awaiting-approval") meta.push("awaiting approval");
  else if (t.node) meta.push(t.node);
  if (t.attempt || t.status !== "pending") meta.push("attempt " + t.attempt + "/" + t.max_attempts);
  if (t.tokens) meta.push(t.tokens + " tokens", usd(t.cost_usd));
  if (t.status === "parked" && t.parked_until) meta.push("resumes " + new Date(t.parked_until).toLocaleTimeString());
  const c = el("div", { class: "card" + (t.id === state.selected ? " selected" : ""), "data-id": t.id, "data-status": t.status,
      "data-node": t.node || "", "data-attempt": String(t.attempt), onclick: () => select(t.id) },
    el("div", {}, el("span", { class: "id" }, t.id), el("span", { class: "title" }, t.title)),
    meta.length ? el("div", { class: "meta" }, meta.join(" · ")) : null,
    t.dependencies && t.dependencies.length ? el("div", { class: "deps" }, "after " + t.dependencies.join(", ")) : null,
    t.reason ? el("div", { class: "reason" }, t.reason) : null);
  if (t.question && t.question.kind === "approval") {
    c.append(approvalBox(t));
  } else if (t.question) {
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

// approvalBox shows a plan waiting for approval in a text box the person
// may edit. The card is rebuilt on every event of its task; the box of
// the same question is kept (moved into the new card), so that an edit
// in progress is not lost.
function approvalBox(t) {
  const q = t.question;
  const kept = document.querySelector('.card[data-id="' + CSS.escape(t.id) + '"] .approval[data-asked="' + CSS.escape(q.asked) + '"]');
  if (kept) return kept;
  const plan = el("textarea", { class: "plan-text", rows: "8", spellcheck: "false", "aria-label": "plan of task " + t.id });
  plan.value = q.proposal || "";
  const reason = el("input", { class: "reject-reason", type: "text", placeholder: "why (for reject)", "aria-label": "reason to reject" });
  const box = el("div", { class: "question approval", "data-asked": q.asked, onclick: (ev) => ev.stopPropagation() },
    el("div", {}, "Plan waiting for approval:"), plan, reason,
    q.invalid ? el("p", { class: "invalid" }, q.invalid) : null);
  const buttons = [["approve", "approve", () => ""], ["edit", "approve edited plan", () => plan.value], ["reject", "reject", () => reason.value]];
  for (const [a, label, text] of buttons) {
    box.append(el("button", { type: "button", class: "answer", "data-answer": a,
      onclick: (ev) => { ev.stopPropagation(); answer(t.id, a, text()); } }, label));
  }
  return box;
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
  renderSpend();
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
    el("p", { class: "summary" }, "phase " + h.phase + " · " + h.retry_count + " verification(s) of " + (h.max_retries || 3) + " · " + h.tokens + " tokens · " + usd(h.cost_usd))];
  if (h.plan && h.plan.summary) kids.push(el("p", { class: "plan" }, "Plan: " + h.plan.summary));
  if (h.selection) kids.push(candidates(h.id, h.selection));
  for (const a of h.attempts) kids.push(attempt(a));
  if (h.diff && t && t.status === "done") {
    kids.push(el("h3", {}, "Branch " + (h.branch || "") + " against its base"),
      el("p", { class: "hint" }, "Click a line to comment on it (shift-click another for a range), then send the task back."),
      reviewDiff(h.diff, id), reviewBox(id));
  } else if (h.diff) kids.push(el("h3", {}, "Branch " + (h.branch || "") + " against its base"), diffView(h.diff, "branch-diff"));
  if (h.uncommitted) kids.push(el("h3", {}, "Uncommitted work in the workspace"), diffView(h.uncommitted, "uncommitted-diff"));
  d.replaceChildren(...kids);
}

// candidates shows a best-of-N task's candidates side by side, the
// winner marked, and the judge's rounds; the attempts below are the winner's.
function candidates(id, sel) {
  const rows = sel.candidates.map((c) => el("tr", { class: c.k === sel.winner ? "winner" : "", "data-k": String(c.k) },
    el("td", {}, (c.k === sel.winner ? "★ " : "") + c.k), el("td", {}, c.status), el("td", {}, String(c.warnings)),
    el("td", {}, String(c.diff_lines)), el("td", {}, String(c.attempts)), el("td", {}, String(c.tokens)),
    el("td", {}, c.executor + (c.model ? " " + c.model : "")), el("td", {}, c.branch || ""), el("td", {}, c.reason || ""),
    el("td", {}, c.passed && c.k !== sel.winner ? el("button", { type: "button", class: "pick", "data-k": String(c.k),
      onclick: () => pick(id, c.k) }, "pick") : "")));
  const box = el("div", { class: "candidates" },
    el("h3", {}, "Candidates: winner " + sel.winner + " (" + (sel.why || "none passed") + ")"),
    el("table", {}, el("tr", {}, ...["k", "status", "warnings", "diff lines", "tries", "tokens", "agent", "branch", "reason", ""].map((h) => el("th", {}, h))), ...rows));
  for (const r of sel.judge || []) {
    box.append(el("p", { class: "judge" }, r.a ? "Judge: " + r.a + " vs " + r.b + " → " + r.winner + ": " + r.reasoning : "Judge: " + r.reasoning));
  }
  box.append(el("p", { class: "hint" }, "pick (or statgraph pick " + id + " <k>) makes another passing candidate the winner; the attempts below are the winner's."));
  return box;
}

// pick makes candidate k of task id its winner (POST /api/tasks/{id}/pick)
// and shows the task again.
async function pick(id, k) {
  try {
    await api("POST", "/api/tasks/" + encodeURIComponent(id) + "/pick", { k: k });
    message("task " + id + ": candidate " + k + " picked");
    loadDetail(id);
  } catch (err) {
    message(err.message, true);
  }
}

// attemptSpend is what one attempt spent, as " · N tokens · $C", or "".
function attemptSpend(u) {
  const n = u ? u.total_tokens || (u.input_tokens || 0) + (u.output_tokens || 0) : 0;
  if (!n) return "";
  return " · " + n + " tokens · " + usd(u.unpriced_tokens ? null : u.cost_usd || 0);
}

function attempt(a) {
  const verdict = a.passed ? "passed" : "failed";
  const box = el("div", { class: "attempt", "data-n": String(a.n) },
    el("h3", {}, "Attempt " + a.n + " ", el("span", { class: "verdict " + verdict }, verdict),
      a.duration ? " · " + a.duration : "", attemptSpend(a.usage)));
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

// reviewDiff is a done task's diff whose lines (those of the new version
// of a file) can be picked for a review comment.
function reviewDiff(text, id) {
  const pre = el("pre", { class: "diff branch-diff reviewable" });
  let file = "", next = 0, inHunk = false;
  for (const line of text.replace(/\n$/, "").split("\n")) {
    let k = "ctx", num = 0;
    if (line.startsWith("diff ")) { k = "file"; inHunk = false; file = ""; }
    else if (!inHunk && line.startsWith("+++ ")) { k = "file"; file = line.slice(4) === "/dev/null" ? "" : line.slice(4).replace(/^b\//, ""); }
    else if (!inHunk && (line.startsWith("--- ") || !line.startsWith("@@"))) k = "file";
    else if (line.startsWith("@@")) { k = "hunk"; inHunk = true; const m = /\+(\d+)/.exec(line); next = m ? Number(m[1]) : 0; }
    else if (line.startsWith("+")) { k = "add"; num = next++; }
    else if (line.startsWith("-")) k = "del";
    else if (!line.startsWith("\\")) num = next++;
    const attrs = { class: "line " + k };
    if (num && file) {
      const f = file, n = num;
      Object.assign(attrs, { "data-file": f, "data-line": String(n), onclick: (ev) => pickLine(id, f, n, ev.shiftKey) });
    }
    pre.append(el("span", attrs, line + "\n"));
  }
  markPicked(pre);
  return pre;
}

// review holds the comments being written on a task's diff, kept across
// the re-renders of its detail.
function review(id) {
  if (!state.review || state.review.id !== id) state.review = { id, file: "", start: 0, end: 0, draft: "", comments: [] };
  return state.review;
}

function pickLine(id, file, n, extend) {
  const r = review(id);
  if (extend && r.file === file && r.start) {
    r.start = Math.min(r.start, n);
    r.end = Math.max(r.end, n);
  } else {
    Object.assign(r, { file, start: n, end: n });
  }
  markPicked(document.querySelector("#detail .reviewable"));
  const box = document.querySelector("#detail .review");
  if (box) box.replaceWith(reviewBox(id));
  const ta = document.querySelector("#detail .review .comment-text");
  if (ta) ta.focus();
}

function markPicked(pre) {
  if (!pre) return;
  const r = state.review;
  for (const s of pre.querySelectorAll(".line[data-line]")) {
    const n = Number(s.dataset.line);
    s.classList.toggle("picked", !!r && s.dataset.file === r.file && n >= r.start && n <= r.end);
  }
}

function where(c) {
  return c.file + ":" + c.line + (c.end_line ? "-" + c.end_line : "");
}

function reviewBox(id) {
  const r = review(id);
  const box = el("div", { class: "review" });
  if (r.file) {
    const ta = el("textarea", { class: "comment-text", rows: "3", "aria-label": "comment", oninput: (ev) => { r.draft = ev.target.value; } });
    ta.value = r.draft;
    const c = { file: r.file, line: r.start };
    if (r.end > r.start) c.end_line = r.end;
    box.append(el("div", { class: "label" }, "Comment on " + where(c)), ta,
      el("button", { type: "button", class: "add-comment", onclick: () => {
        if (!r.draft.trim()) { message("write what to change first", true); return; }
        r.comments.push(Object.assign(c, { text: r.draft.trim() }));
        Object.assign(r, { file: "", start: 0, end: 0, draft: "" });
        markPicked(document.querySelector("#detail .reviewable"));
        box.replaceWith(reviewBox(id));
      } }, "add comment"));
  }
  const list = el("ul", { class: "comments" });
  r.comments.forEach((c, i) => list.append(el("li", { class: "comment" }, where(c) + ": " + c.text + " ",
    el("button", { type: "button", class: "remove-comment", onclick: () => { r.comments.splice(i, 1); box.replaceWith(reviewBox(id)); } }, "remove"))));
  const send = el("button", { type: "button", class: "send-back", onclick: () => sendBack(id) },
    "send back with " + r.comments.length + " comment(s)");
  send.disabled = !r.comments.length;
  box.append(list, send);
  return box;
}

async function sendBack(id) {
  const r = review(id);
  try {
    await api("POST", "/api/tasks/" + encodeURIComponent(id) + "/review", { comments: r.comments, run: true });
    message("task " + id + " sent back with " + r.comments.length + " comment(s); a run makes its new attempt");
    state.review = null;
  } catch (err) {
    message(err.message, true);
  }
}

async function answer(id, a, text) {
  try {
    await api("POST", "/api/tasks/" + encodeURIComponent(id) + "/answer", { answer: a, text: text || "" });
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
