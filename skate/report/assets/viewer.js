/* skate's game viewer: the page of a run folder's viewer/ (skate/report/viewer.py writes it).
 *
 * The run's data comes in pieces, each a script in data/ that calls skateData(kind, number, body):
 * "meta" (the run, its players, how many pieces of each kind), "tasks" and "attempts" (table rows),
 * "task" and "attempt" (whole records by id, loaded when one is opened). Scripts, not fetch(), so
 * that the page works from file://. Every text a model wrote is put in the page as text, never
 * as markup. Views are chosen by the address's hash: #tasks, #attempts, #players, #matrix,
 * #task=ID, #attempt=ID, #player=NAME; a table's filters ride along (#tasks?setter=a&answerer=b).
 */
"use strict";

const S = {meta: null, rows: {tasks: [], attempts: []}, loaded: {tasks: 0, attempts: 0},
           pieces: {task: {}, attempt: {}}, waiting: {}, tables: {}, ready: false};

function skateMissing(src) {
  document.getElementById("loading").textContent =
    "This viewer has no data (" + src + " is missing): write it again with skate view RUN_DIR.";
}

function skateData(kind, number, body) {
  if (kind === "meta") { S.meta = body; start(); return; }
  if (kind === "tasks" || kind === "attempts") {
    S.rows[kind].push(...body);
    S.loaded[kind] += 1;
    rowsArrived(kind, body);
    return;
  }
  S.pieces[kind][number] = body;
  const key = kind + ":" + number;
  (S.waiting[key] || []).forEach(f => f(body));
  delete S.waiting[key];
}

function script(src) {
  return new Promise((resolve, reject) => {
    const el = document.createElement("script");
    el.src = src;
    el.onload = () => resolve();
    el.onerror = () => reject(new Error("cannot load " + src));
    document.body.appendChild(el);
  });
}

function piece(kind, number) {
  if (S.pieces[kind][number]) return Promise.resolve(S.pieces[kind][number]);
  const key = kind + ":" + number;
  const got = new Promise(resolve => { (S.waiting[key] = S.waiting[key] || []).push(resolve); });
  if (S.waiting[key].length === 1) script(`data/${kind}-${String(number).padStart(4, "0")}.js`).catch(e => fail(e));
  return got;
}

function fail(e) { document.getElementById("loading").textContent = String(e.message || e); }

// ------------------------------------------------------------------ small DOM helpers (text only)
function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v; else if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const kid of kids) if (kid !== null && kid !== undefined) node.append(kid instanceof Node ? kid : String(kid));
  return node;
}
const fmt = (x, d = 2) => (x === null || x === undefined || Number.isNaN(x)) ? "–" : Number(x).toFixed(d);
const link = (hash, text) => el("a", {href: "#" + hash}, text);
const taskLink = id => link("task=" + encodeURIComponent(id), id);
const attemptLink = id => link("attempt=" + encodeURIComponent(id), id);
const playerLink = name => link("player=" + encodeURIComponent(name), name);
const textCell = cell => el("span", {text: cell.getValue() === null || cell.getValue() === undefined ? "" : String(cell.getValue())});
const numCell = d => cell => fmt(cell.getValue(), d);
function verdict(ok) {
  if (ok === true) return el("span", {class: "ok", text: "right"});
  if (ok === false) return el("span", {class: "wrong", text: "wrong"});
  if (ok === "void") return el("span", {class: "void", text: "void (the call failed)"});
  return el("span", {class: "unread", text: "unreadable"});
}
function section(title, ...kids) { return el("div", {class: "part"}, el("div", {class: "label", text: title}), ...kids); }
function pre(text, cls) { return el("pre", {class: cls || null, text: text === null || text === undefined ? "" : String(text)}); }

// ------------------------------------------------------------------ start
function start() {
  const m = S.meta;
  S.at = Object.fromEntries(m.players.map((p, i) => [p.name, i]));  // a player's place in the rows' p lists
  if (m.format !== 1) { fail("This viewer was written by another version of skate: write it again with skate view RUN_DIR."); return; }
  document.getElementById("title").textContent = "skate viewer: " + m.name;
  document.getElementById("subtitle").textContent =
    `${m.game}, ${m.players.length} players, ${m.played} of ${m.rounds} rounds, rating ${m.rating}, aug ${m.aug}, seed ${m.seed}`;
  const notes = document.getElementById("notes");
  m.notes.forEach(n => notes.append(el("li", {class: "note", text: n})));
  const c = m.counts;
  const n = x => Number(x).toLocaleString("en-US");
  document.getElementById("summary").textContent =
    `${n(c.tasks)} tasks (${n(c.separating)} separating), ${n(c.attempts)} attempts (${n(c.rejected)} rejected), ${n(c.estimates)} estimates`;
  if (m.report) document.getElementById("report-link").hidden = false;
  fillFilters();
  S.tables.tasks = taskTable();
  S.tables.attempts = attemptTable();
  S.tables.players = playerTable();
  window.addEventListener("hashchange", route);
  // the first piece of each table, then the rest of them
  Promise.all([loadRows("tasks", 0), loadRows("attempts", 0)]).then(() => {
    document.getElementById("loading").hidden = true;
    S.ready = true;
    route();
    document.body.dataset.firstMs = Math.round(performance.now());  // since navigation began
    document.body.dataset.ready = "first";
    return Promise.all([rest("tasks"), rest("attempts")]);
  }).then(() => {
    document.body.dataset.allMs = Math.round(performance.now());
    document.body.dataset.ready = "all";
    route(true);
  }).catch(fail);
}

function loadRows(kind, n) {
  if (n >= S.meta.pieces[kind]) return Promise.resolve();
  return script(`data/${kind}-${String(n).padStart(4, "0")}.js`);
}
async function rest(kind) { for (let n = 1; n < S.meta.pieces[kind]; n++) await loadRows(kind, n); }

function rowsArrived(kind, rows) {
  const t = S.tables[kind];
  if (t && S.tableBuilt && S.tableBuilt[kind]) t.addData(rows, false);  // else tableBuilt sets them all
}

function options(select, values) {
  for (const v of values) select.append(el("option", {value: v, text: v}));
}
function fillFilters() {
  const m = S.meta, names = m.players.map(p => p.name), rounds = [];
  for (let r = 1; r <= Math.max(m.rounds, m.played); r++) rounds.push(r);
  const tf = document.getElementById("task-filters"), af = document.getElementById("attempt-filters");
  options(tf.round, rounds); options(tf.setter, names); options(tf.answerer, names);
  options(af.round, rounds); options(af.player, names);
  options(af.status, m.reasons.map(r => "rejected: " + r));
  for (const [form, kind] of [[tf, "tasks"], [af, "attempts"]]) {
    form.addEventListener("input", () => { applyFilters(kind); writeFilters(kind); });
    form.addEventListener("submit", e => e.preventDefault());
  }
}

// ------------------------------------------------------------------ tables
function built(kind, table) {
  table.on("tableBuilt", () => {
    (S.tableBuilt = S.tableBuilt || {})[kind] = true;
    if (kind in S.rows) table.setData(S.rows[kind]);
    if (kind === "players") table.setData(S.meta.players);
    applyFilters(kind);
  });
  table.on("dataFiltered", (filters, rows) => {
    const form = kind === "tasks" ? "task-filters" : kind === "attempts" ? "attempt-filters" : null;
    if (form) document.getElementById(form).shown.value =
      `${rows.length} of ${kind === "tasks" ? S.meta.counts.tasks : S.meta.counts.attempts} ${kind}` +
      (S.rows[kind].length < (kind === "tasks" ? S.meta.counts.tasks : S.meta.counts.attempts) ? " (loading the rest)" : "");
  });
  return table;
}

function taskTable() {
  const cols = [
    {title: "task", field: "id", formatter: c => taskLink(c.getValue()), width: 190},
    {title: "round", field: "round", width: 80, hozAlign: "right"},
    {title: "setter", field: "setter", formatter: textCell, width: 150},
    {title: "task text", field: "text", formatter: textCell, minWidth: 260, headerSort: false},
    {title: "truth", field: "answer", formatter: textCell, width: 140, headerSort: false},
    {title: "p (answerer)", field: "p", formatter: c => fmt(c.getValue()[S.at[S.answerer]]), width: 130, hozAlign: "right",
     visible: false, sorter: (a, b) => (a[S.at[S.answerer]] ?? -1) - (b[S.at[S.answerer]] ?? -1)},
    {title: "mean p", field: "mean", formatter: numCell(2), width: 95, hozAlign: "right"},
    {title: "variance", field: "var", formatter: numCell(3), width: 95, hozAlign: "right"},
    {title: "difficulty", field: "difficulty", formatter: numCell(2), width: 95, hozAlign: "right"},
    {title: "separating", field: "separating", formatter: c => c.getValue() ? "yes" : "no", width: 100},
  ];
  return built("tasks", new Tabulator("#tasks-table", {maxHeight: "70vh", layout: "fitColumns", index: "id",
    columns: cols, placeholder: "no task matches", initialSort: [{column: "round", dir: "asc"}]}));
}

function attemptTable() {
  const cols = [
    {title: "attempt", field: "id", formatter: c => attemptLink(c.getValue()), width: 210},
    {title: "round", field: "round", width: 80, hozAlign: "right"},
    {title: "setter", field: "player", formatter: textCell, width: 150},
    {title: "outcome", field: "reason", formatter: c => c.getRow().getData().valid ? el("span", {class: "badge valid", text: "valid"})
      : el("span", {class: "badge rejected", text: c.getValue()}), width: 150},
    {title: "why", field: "detail", formatter: textCell, minWidth: 220, headerSort: false},
    {title: "text", field: "text", formatter: textCell, minWidth: 220, headerSort: false},
  ];
  return built("attempts", new Tabulator("#attempts-table", {maxHeight: "70vh", layout: "fitColumns", index: "id",
    columns: cols, placeholder: "no attempt matches"}));
}

function playerTable() {
  const cols = [
    {title: "rank", field: "rank", width: 70, hozAlign: "right"},
    {title: "player", field: "name", formatter: c => playerLink(c.getValue()), width: 180},
    {title: "model", field: "model", formatter: textCell, width: 200},
    {title: "score", field: "score", formatter: numCell(2), width: 90, hozAlign: "right"},
    {title: "true skill", field: "true_skill", formatter: numCell(2), width: 95, hozAlign: "right"},
    {title: "tasks set", field: "tasks", width: 95, hozAlign: "right"},
    {title: "attempts", field: "attempts", width: 95, hozAlign: "right"},
    {title: "rejected", field: "rejected", formatter: c => String(Object.values(c.getValue() || {}).reduce((a, b) => a + b, 0)),
     sorter: (a, b) => Object.values(a || {}).reduce((x, y) => x + y, 0) - Object.values(b || {}).reduce((x, y) => x + y, 0),
     width: 95, hozAlign: "right"},
    {title: "calls", field: "usage.calls", width: 80, hozAlign: "right"},
    {title: "tokens out", field: "usage.completion_tokens", width: 100, hozAlign: "right"},
    {title: "cost (USD)", field: "usage.cost_usd", formatter: numCell(4), width: 100, hozAlign: "right"},
  ];
  return built("players", new Tabulator("#players-table", {layout: "fitColumns", index: "name", columns: cols,
    initialSort: [{column: "rank", dir: "asc"}]}));
}

function filterValues(kind) {
  const form = document.getElementById(kind === "tasks" ? "task-filters" : "attempt-filters");
  return Object.fromEntries(Array.from(form.elements).filter(e => e.name && e.tagName !== "OUTPUT").map(e => [e.name, e.value]));
}

function applyFilters(kind) {
  const t = S.tables[kind];
  if (!t || !(S.tableBuilt || {})[kind] || kind === "players") return;
  const f = filterValues(kind), text = (f.text || "").toLowerCase();
  if (kind === "tasks") {
    const answerer = f.answerer;
    if (answerer !== S.answerer) {
      S.answerer = answerer;
      const col = t.getColumn("p");
      if (answerer) col.updateDefinition({title: "p (" + answerer + ")", visible: true}); else col.hide();
    }
    t.setFilter(r => (!f.round || String(r.round) === f.round) && (!f.setter || r.setter === f.setter)
      && (!answerer || r.p[S.at[answerer]] !== null)
      && (!f.separating || (f.separating === "yes") === r.separating)
      && (!text || (r.id + "\n" + r.text + "\n" + r.answer).toLowerCase().includes(text)));
  } else {
    t.setFilter(r => (!f.round || String(r.round) === f.round) && (!f.player || r.player === f.player)
      && (!f.status || (f.status === "valid" ? r.valid : f.status === "rejected" ? !r.valid : ("rejected: " + r.reason) === f.status))
      && (!text || (r.text + "\n" + r.detail + "\n" + r.reason).toLowerCase().includes(text)));
  }
}

function writeFilters(kind) {
  const f = Object.entries(filterValues(kind)).filter(([, v]) => v);
  const hash = kind + (f.length ? "?" + new URLSearchParams(f).toString() : "");
  if (location.hash.slice(1) !== hash) history.replaceState(null, "", "#" + hash);
}

function readFilters(kind, query) {
  const form = document.getElementById(kind === "tasks" ? "task-filters" : "attempt-filters");
  const params = new URLSearchParams(query || "");
  for (const e of form.elements) if (e.name && e.tagName !== "OUTPUT") e.value = params.get(e.name) || "";
  applyFilters(kind);
}

// ------------------------------------------------------------------ routing
function show(view) {
  document.querySelectorAll(".view").forEach(v => { v.hidden = v.id !== "view-" + view; });
  document.querySelectorAll("#tabs a[data-view]").forEach(a => a.classList.toggle("current", a.dataset.view === view));
  if (S.tables[view]) S.tables[view].redraw();
}

function route(again) {
  if (!S.ready) return;
  const hash = decodeURIComponent(location.hash.slice(1)) || "tasks";
  const [head, query] = hash.split("?");
  const [name, value] = head.split(/=(.*)/s);
  if (name === "tasks" || name === "attempts") { if (again !== true) readFilters(name, query); show(name); return; }
  if (name === "players") { show("players"); return; }
  if (name === "matrix") { matrix(); show("matrix"); return; }
  if (name === "player") { playerPage(value); show("player"); return; }
  if (name === "task" || name === "attempt") {
    if (again === true && document.getElementById("view-" + name).dataset.loaded === value) return;
    record(name, value).catch(fail);
    show(name);
    return;
  }
  show("tasks");
}

function rowOf(kind, id) { return S.rows[kind === "task" ? "tasks" : "attempts"].find(r => r.id === id); }

async function record(kind, id) {
  const view = document.getElementById("view-" + kind);
  view.dataset.id = id;
  delete view.dataset.loaded;
  const row = rowOf(kind, id);
  if (!row) {
    const all = S.rows[kind + "s"].length === S.meta.counts[kind + "s"];
    view.replaceChildren(el("p", {class: "missing", text: all ? `This run has no ${kind} ${id}.` : `Loading ${kind} ${id}…`}));
    return;
  }
  const body = await piece(kind, row.d);
  const rec = body[id];
  view.replaceChildren(kind === "task" ? taskPage(rec) : attemptPage(rec));
  view.dataset.loaded = id;
}

// ------------------------------------------------------------------ a task
function dataList(data) {
  const entries = Object.entries(data || {});
  if (!entries.length) return null;
  const t = el("table", {class: "plain game-data"});
  const chips = v => el("ul", {class: "chips"}, ...v.map(x => el("li", {}, el("code", {text: typeof x === "string" ? x : JSON.stringify(x)}))));
  const flat = v => Array.isArray(v) && v.every(x => x === null || typeof x !== "object");
  for (const [k, v] of entries) t.append(el("tr", {}, el("th", {text: k}), el("td", {}, typeof v === "string" ? pre(v) : flat(v) ? chips(v) : pre(JSON.stringify(v, null, 1)))));
  return t;
}

function replyBlock(reply, label) {
  if (!reply) return null;
  const box = el("div", {class: "reply"});
  if (reply.thinking) box.append(el("details", {class: "thinking"}, el("summary", {text: "thinking (apart from the reply)"}), pre(reply.thinking, "thinking")));
  const notes = [reply.cached ? "from the response cache" : null, reply.finish ? "finish: " + reply.finish : null,
                 reply.thinking_cut ? "cut while thinking" : null, reply.void ? "void: " + reply.void : null].filter(Boolean);
  if (reply.text === "" || reply.text === null || reply.text === undefined) notes.push("empty: the model wrote nothing");
  box.append(el("div", {class: "label", text: (label || "reply") + (notes.length ? " (" + notes.join(", ") + ")" : "")}),
             pre(reply.text, "reply-text"));
  return box;
}

const VERDICT = {"1": true, "0": false, "u": null, "v": "void"};
// An estimate's samples, as replies.jsonl packs them (skate.runlog.replies.pack_samples); values:
// the task's answers by number.
const DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
function unpack(drawn, values) {
  const out = [];
  for (const d of drawn) {
    const ok = d.ok || "", seen = {};
    const answers = typeof d.answer === "string" ? Array.from(d.answer, ch => ch === "-" ? null : DIGITS.indexOf(ch)) : d.answer;
    const calls = Array.isArray(d.call) ? d.call.flatMap(([c, n]) => Array(n).fill(c)) : null;
    for (let k = 0; k < ok.length; k++) {
      const s = {k: out.length, ok: VERDICT[ok[k]]};
      if (answers && answers[k] !== null) s.answer = values[answers[k]];
      if (d.call !== undefined && d.call !== null) {
        s.call = calls ? calls[k] : d.call;
        s.index = d.index ? d.index[k] : (seen[s.call] = (seen[s.call] ?? -1) + 1);
      }
      for (const key of ["tries", "calls"]) if (Array.isArray(d[key])) s[key] = d[key][k];
      out.push(s);
    }
  }
  return out;
}

function sampleBlock(s, replies) {
  const head = el("summary", {}, `sample ${s.k + 1}: `, verdict(s.ok), s.answer !== null && s.answer !== undefined ? el("span", {class: "answer", text: " — " + s.answer}) : null);
  const box = el("details", {class: "sample", "data-ok": String(s.ok)}, head);
  if (s.tries) {
    const list = el("ol", {class: "tries"});
    s.tries.forEach((t, i) => list.append(el("li", {}, el("code", {text: t.input}), " → " + t.verdict + (t.shown ? ": " : ""), t.shown ? el("code", {text: t.shown}) : null)));
    box.append(el("div", {class: "label", text: "attack session"}), list);
    (s.calls || []).forEach(([c, i], n) => box.append(replyBlock(replies[c + ":" + i], "reply at try " + (n + 1))));
  }
  if (s.call !== undefined && replies[s.call + ":" + s.index]) box.append(replyBlock(replies[s.call + ":" + s.index]));
  return box;
}

function taskPage(t) {
  const root = el("article", {class: "task", "data-task": t.id});
  root.append(el("h2", {}, "Task " + t.id + " ", t.separating ? el("span", {class: "badge separating", text: "separating"}) : el("span", {class: "badge", text: "not separating"})));
  root.append(el("p", {}, "round " + t.round + ", set by ", playerLink(t.setter), `; mean p(correct) ${fmt(t.mean)}, variance ${fmt(t.var, 3)}`));
  root.append(section("the task, as the players saw it", pre(t.prompt, "prompt")));
  root.append(section("the truth", pre(t.answer, "truth")));
  const data = dataList(t.data);
  if (data) root.append(section("the game's data about it", data));
  if (t.attempts.length) {
    const list = el("ul", {class: "attempts"});
    t.attempts.forEach(a => { const r = rowOf("attempt", a); list.append(el("li", {}, attemptLink(a), r ? " — " + (r.valid ? "valid" : r.reason) : "")); });
    root.append(section("the setter's attempts this round", list));
  }
  const table = el("table", {class: "plain estimates"}, el("tr", {}, ...["player", "p(correct)", "samples", "right", "unreadable", "void", "how"].map(h => el("th", {text: h}))));
  const answers = el("div", {class: "answers"});
  for (const e of t.estimates) {
    const how = e.skipped ? "not asked" : e.read === true ? "read from its probabilities" : e.read === false ? "sampled (the read failed)" : "sampled";
    table.append(el("tr", {"data-player": e.player}, el("td", {}, playerLink(e.player)), el("td", {class: "num", text: fmt(e.p)}),
      el("td", {class: "num", text: e.n}), el("td", {class: "num", text: fmt(e.correct, Number.isInteger(e.correct) ? 0 : 2)}),
      el("td", {class: "num", text: e.unparsable}), el("td", {class: "num", text: e.void}), el("td", {text: how + (e.joined ? ", joined in " + e.joined : "")})));
    const kept = e.drawn.reduce((n, d) => n + (d.ok || "").length, 0);
    const box = el("details", {class: "player-answers", "data-player": e.player}, el("summary", {text: `${e.player}: p ${fmt(e.p)} ` + (e.read === true ? "read from its probabilities (the call below)" : `from ${kept} samples kept`)}));
    // a player's samples are drawn into the page when its box is first opened (a task of a
    // 200-player game holds tens of thousands)
    box.addEventListener("toggle", () => {
      if (!box.open || box.dataset.filled) return;
      box.dataset.filled = "1";
      const samples = unpack(e.drawn, t.values || []);
      samples.forEach(s => box.append(sampleBlock(s, e.replies)));
      (e.reads || []).forEach(r => box.append(replyBlock(r, "read of its label")));
      if (!samples.length && !(e.reads || []).length) box.append(el("p", {class: "unread", text: S.meta.replies ? "no samples were drawn" : "replies not kept for this run"}));
    });
    answers.append(box);
  }
  root.append(section("each player's p(correct)", table));
  root.append(section("the answers behind them", answers));
  return root;
}

// ------------------------------------------------------------------ an attempt
function attemptPage(a) {
  const root = el("article", {class: "attempt", "data-attempt": a.id});
  root.append(el("h2", {}, "Attempt " + a.id + " ", el("span", {class: "badge " + (a.valid ? "valid" : "rejected"), text: a.valid ? "valid" : "rejected: " + a.reason})));
  root.append(el("p", {}, `round ${a.round}, attempt ${a.attempt} by `, playerLink(a.player),
    a.task ? el("span", {}, "; it became task ", taskLink(a.task)) : null,
    a.novelty !== null && a.novelty !== undefined ? `; distance to the setter's nearest earlier task ${fmt(a.novelty, 3)}` : null));
  if (!a.valid) root.append(section("why it was turned away", pre(a.detail, "why")));
  root.append(section("what the setter wrote (as the game read it)", pre(a.text, "proposal")));
  a.replies.forEach(r => root.append(replyBlock(r, "the setter's reply")));
  a.checks.forEach((r, i) => root.append(replyBlock(r, `the setter's own answer when its task was checked (${i + 1})`)));
  if (!a.replies.length && !S.meta.replies) root.append(el("p", {class: "unread", text: "replies not kept for this run"}));
  const told = S.rows.attempts.filter(r => r.round === a.round && r.player === a.player && r.attempt < a.attempt
                                          && !r.valid && r.reason !== "void" && r.reason !== "infrastructure");
  if (told.length) {
    const list = el("ul", {class: "told"});
    told.forEach(r => list.append(el("li", {}, attemptLink(r.id), " — " + r.reason + ": " + r.detail)));
    const fresh = (S.meta.repair || {})[a.player] === "resample";
    root.append(section(fresh ? "its earlier rejections this round (setter_repair=resample: asked afresh, it was not told of them)"
                              : "what it was told of its earlier attempts this round", list));
  }
  if (a.shown) {
    const hist = a.shown.history || [];
    const list = el("ol", {class: "history"});
    hist.forEach(h => list.append(el("li", {}, taskLink(h.task), h.p ? " — " + Object.entries(h.p).map(([k, v]) => `${k} ${fmt(v)}`).join(", ") : "")));
    root.append(section(`what the setter was shown (aug ${S.meta.aug}): ${hist.length} earlier task${hist.length === 1 ? "" : "s"}`, hist.length ? list : el("p", {text: "no history"})));
    if (a.shown.assignment) root.append(section("its assignment", pre(JSON.stringify(a.shown.assignment, null, 1))));
  }
  return root;
}

// ------------------------------------------------------------------ players
function matrix() {
  const view = document.getElementById("view-matrix");
  const names = S.meta.players.map(p => p.name);
  const t = el("table", {class: "plain matrix"}, el("tr", {}, el("th", {text: "answerer \\ setter"}), ...names.map(n => el("th", {text: n}))));
  for (const p of S.meta.players) {
    const tr = el("tr", {"data-answerer": p.name}, el("th", {}, playerLink(p.name)));
    for (const s of names) {
      const v = p.by_setter[S.at[s]];
      const q = new URLSearchParams({setter: s, answerer: p.name}).toString();
      tr.append(el("td", {class: "num" + (s === p.name ? " self" : ""), "data-setter": s}, v === null ? "–" : link("tasks?" + q, fmt(v))));
    }
    t.append(tr);
  }
  view.replaceChildren(el("h2", {text: "Accuracy by setter"}),
    el("p", {text: "Each cell: the answerer's mean p(correct) on the setter's tasks; the diagonal is a player on its own tasks (self-preference). A cell opens the tasks behind it."}), t);
}

function playerPage(name) {
  const p = S.meta.players.find(x => x.name === name);
  const view = document.getElementById("view-player");
  if (!p) { view.replaceChildren(el("p", {class: "missing", text: `This run has no player ${name}.`})); return; }
  const root = el("article", {class: "player", "data-player": name});
  root.append(el("h2", {text: "Player " + name}));
  root.append(el("p", {text: [p.kind, p.model, p.rank ? "rank " + p.rank : "unranked", "score " + fmt(p.score),
    p.lo !== null && p.lo !== undefined ? `[${fmt(p.lo)}, ${fmt(p.hi)}]` : null,
    p.true_skill !== null && p.true_skill !== undefined ? "true skill " + fmt(p.true_skill) : null].filter(Boolean).join(", ")}));
  if (p.usage) {
    const u = p.usage, t = el("table", {class: "plain usage"});
    for (const k of ["calls", "samples", "cached", "prompt_tokens", "completion_tokens", "thinking_tokens", "cost_usd", "void", "cut", "cut_thinking", "empty"])
      if (u[k] !== undefined) t.append(el("tr", {}, el("th", {text: k}), el("td", {class: "num", text: k === "cost_usd" ? fmt(u[k], 4) : u[k]})));
    root.append(section("its calls", t));
  }
  root.append(section("void estimates (every sample's call failed)", el("p", {text: String(p.void_estimates)})));
  const mine = S.rows.tasks.filter(r => r.setter === name);
  const set = el("table", {class: "plain set-tasks"}, el("tr", {}, ...["task", "round", "others' mean p", "separating"].map(h => el("th", {text: h}))));
  for (const r of mine) {
    const others = r.p.filter((v, i) => v !== null && i !== S.at[name]);
    set.append(el("tr", {}, el("td", {}, taskLink(r.id)), el("td", {class: "num", text: r.round}),
      el("td", {class: "num", text: others.length ? fmt(others.reduce((a, b) => a + b, 0) / others.length) : "–"}), el("td", {text: r.separating ? "yes" : "no"})));
  }
  root.append(section(`tasks it set (${p.tasks}), and how the others did on them`, set));
  const rej = Object.entries(p.rejected);
  const rl = el("ul", {class: "rejections"});
  rej.forEach(([reason, n]) => rl.append(el("li", {}, link("attempts?" + new URLSearchParams({player: name, status: "rejected: " + reason}), `${reason}: ${n}`))));
  root.append(section(`its attempts (${p.attempts}), rejected by reason`, rej.length ? rl : el("p", {text: "none rejected"})));
  const acc = el("table", {class: "plain by-setter"}, el("tr", {}, el("th", {text: "setter"}), el("th", {text: "its mean p"})));
  for (const [s, v] of S.meta.players.map((x, i) => [x.name, p.by_setter[i]]).filter(([, v]) => v !== null))
    acc.append(el("tr", {}, el("td", {}, playerLink(s)), el("td", {class: "num"}, link("tasks?" + new URLSearchParams({setter: s, answerer: name}), fmt(v)))));
  root.append(section("its accuracy by setter", acc));
  view.replaceChildren(root);
}
