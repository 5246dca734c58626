// mnem ui: a read-only view of a store's memory, served by `mnem ui` (mnem_store/ui/app.py).
// Plain JavaScript, no build step. Every value from the store is put in the page as text
// (textContent), never as markup. Views are chosen by the URL's hash, so back, forward and
// links work, and every view asks the server for one bounded page at a time.
"use strict";

const POLL_MS = 2000;
// head: HEAD's commit as last polled (undefined before the first poll; null in a store without commits).
const state = { head: undefined, where: null, branches: [], ready: null, focus: null };

// The ADR's words for the store's fields: the page names a field by these, never by its name in the store.
const PROVENANCE = [["source", "source"], ["agent_step", "step"], ["observation", "observation"], ["tool_call", "tool call"], ["note", "note"]];
const FIELD_LABELS = {
  content: "value", content_kind: "kind", event_time: "event time",
  ...Object.fromEntries(PROVENANCE.map(([name, label]) => ["provenance." + name, label])),
};
// A diff's field as a person reads it; a key of a map value is "value.KEY".
const fieldLabel = (field) => FIELD_LABELS[field] ?? field.replace(/^content\./, "value.");

// ------------------------------------------------------------------ helpers
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

async function api(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== null && value !== undefined && value !== "") query.set(key, value);
  }
  const response = await fetch(path + (query.size ? "?" + query : ""), { headers: { accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) {
    const error = new Error(body.error ? body.error.message : response.statusText);
    error.status = response.status;
    error.code = body.error ? body.error.code : "error";
    throw error;
  }
  return body;
}

const short = (id) => id.slice(0, 12);
// Who made a commit: its author, and who pushed it into this store when that was someone else (nodes, for el()).
const byline = (commit) => (commit.pushed_by ? [author(commit.author), ` (pushed by ${commit.pushed_by})`] : [author(commit.author)]);
// An author as shown. "unknown" is upstream's for a commit made without one (`mnem commit` with neither
// --author nor MNEM_AUTHOR): it is marked, and the view then says how to name one (authorHint).
const NO_AUTHOR = "unknown";
const author = (name) => (name === NO_AUTHOR ? el("span", { class: "unknown-author" }, name) : name);
// "as of" a commit (its id shortened) or of a branch (its name whole): what an `at` in a URL names.
const asOf = (at) => (/^[0-9a-f]{4,64}$/.test(at) ? ["as of commit ", el("code", {}, short(at))] : ["as of ", el("code", {}, at)]);
const when = (ms) => new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
// Text that wraps between words only: a browser also breaks a line after a hyphen, inside "customer-4821",
// so each run without whitespace of up to LONG_WORD characters is kept on one line (.word in style.css);
// a longer one may break anywhere rather than widen the page.
const LONG_WORD = 40;
const words = (text) => text.split(/(\s+)/).filter(Boolean)
  .map((part) => (/\s/.test(part) || part.length > LONG_WORD ? part : el("span", { class: "word" }, part)));

// A value as pretty JSON (maps and lists indented), keeping its line breaks and indents (.json in style.css);
// undefined (no value: a fact added or removed) shows as a dash.
const jsonValue = (tag, value, cls) => el(tag, { class: `json ${cls}` }, value === undefined ? "—" : words(JSON.stringify(value, null, 2)));
// A node's value; a version whose bytes were redacted shows its record instead (never a value: there is none).
const nodeValue = (tag, node, cls) => node?.redacted
  ? el(tag, { class: `redacted ${cls}` }, words(`redacted at ${when(node.redacted.at)} by ${node.redacted.by}: ${node.redacted.reason}`))
  : jsonValue(tag, node?.content, cls);
const firstLine = (text) => text.split("\n")[0];

function href(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) if (value) query.set(key, value);
  return "#" + path + (query.size ? "?" + query : "");
}

function commitLink(commit) {
  return el("a", { href: href("/commit/" + commit.id), class: "commit", "aria-label": `commit ${short(commit.id)}: ${firstLine(commit.message)}` },
    el("code", {}, short(commit.id)), " ", firstLine(commit.message));
}

function provenanceList(node) {
  const rows = PROVENANCE.filter(([name]) => node.provenance[name] !== null);
  if (!rows.length) return el("p", { class: "dim" }, "(no provenance recorded)");
  return el("dl", { class: "provenance" }, rows.map(([name, label]) => [el("dt", {}, label), el("dd", { "data-field": name }, words(node.provenance[name]))]));
}

function diffTable(diff, caption) {
  if (!diff.length) return el("p", { class: "dim" }, "No field changed.");
  return el("table", { class: "diff" },
    el("caption", {}, caption),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "field"), el("th", { scope: "col" }, "before"), el("th", { scope: "col" }, "after"))),
    el("tbody", {}, diff.map((d) => el("tr", {},
      el("th", { scope: "row" }, fieldLabel(d.field)),
      jsonValue("td", d.before ?? undefined, "before"),  // a diff's null: the field is absent on that side
      jsonValue("td", d.after ?? undefined, "after")))));
}

// An error in part of a view: the server's sentence, which says what went wrong and what to do.
function failure(error) {
  return el("p", { class: "error", role: "alert" }, error.message);
}

// Whether an answer says the thing asked for does not exist (an unknown id, branch or commit).
const isMissing = (error) => error.code === "not_found" || error.code === "invalid_ref";

// A whole view for something that is not there: what is missing, why, and links to go on from.
function missing(title, explanation, links) {
  show(el("h1", {}, title), el("p", {}, explanation),
    el("ul", { class: "next" }, links.map(([text, target]) => el("li", {}, el("a", { href: target }, text)))));
}

function noRevision(at) {
  missing(`No branch or commit “${at}”`,
    `This store has no branch named “${at}” and no commit whose id starts with it.`,
    [["See the history of every branch", href("/history")], ["Back to memory now", href("/")]]);
}

// A store without commits: nothing is wrong, and the page follows the first commit by itself.
function noCommits() {
  show(el("h1", {}, "No commits yet"),
    el("p", {}, "This store holds no commit, so its memory is empty. Facts appear here when an agent commits them ",
      "(through mnem-mcp, MnemosyneStore, or ", el("code", {}, "mnem add ID VALUE"), " then ",
      el("code", {}, "mnem commit -m MESSAGE"), "), and this page updates by itself."));
}

// How to name an author, said once in a view that shows "unknown" (see author()).
function authorHint() {
  return el("p", { class: "author-hint dim", role: "note" }, "“unknown” is the author of a commit made without one: name it with ",
    el("code", {}, "--author NAME"), " (mnem commit, write and merge; mnem-mcp) or the ", el("code", {}, "MNEM_AUTHOR"),
    " environment variable.");
}

// Whatever adds an "unknown" author to the view (a render, an older page of history, an answer), the hint follows.
function watchAuthors() {
  const main = document.getElementById("main");
  new MutationObserver(() => {
    if (main.querySelector(".unknown-author") && !main.querySelector(".author-hint")) main.append(authorHint());
  }).observe(main, { childList: true, subtree: true });
}

function show(...children) {
  const main = document.getElementById("main");
  main.replaceChildren(...children.flat(Infinity).filter((child) => child !== null && child !== undefined));
}

function pager(label, offset, limit, total, go) {
  const pages = Math.max(1, Math.ceil(total / limit));
  const page = Math.floor(offset / limit) + 1;
  return el("nav", { class: "pager", "aria-label": label },
    el("button", { type: "button", disabled: page <= 1, onclick: () => go(offset - limit) }, "Previous page"),
    el("span", {}, ` Page ${page} of ${pages} `),
    el("button", { type: "button", disabled: page >= pages, onclick: () => go(offset + limit) }, "Next page"));
}

// ------------------------------------------------------------------ views
// The facts table's columns after the id: each says when it is shown (a column empty on every row of the
// page is left out, and so is kind while every fact is a note) and what a row's cell holds.
const FACT_COLUMNS = [
  { label: "value", cell: (fact) => nodeValue("td", fact, "value") },
  { label: "kind", shown: (fact) => fact.content_kind !== "note", cell: (fact) => el("td", {}, fact.content_kind) },
  ...PROVENANCE.map(([name, label]) => ({
    label, shown: (fact) => fact.provenance[name] !== null, cell: (fact) => el("td", {}, words(fact.provenance[name] ?? "")),
  })),
  { label: "set by", cell: (fact) => el("td", { class: "set-by" },
    el("span", { class: "word" }, el("span", { class: "author" }, byline(fact.set_by)), " in ",
      el("a", { href: href("/commit/" + fact.set_by.id), "aria-label": `commit ${short(fact.set_by.id)}: ${firstLine(fact.set_by.message)}` },
        el("code", {}, short(fact.set_by.id).slice(0, 8)))),
    " ", el("span", { class: "word" }, "at ", el("span", { class: "time" }, when(fact.time))) ) },
];

async function memoryView(params) {
  const at = params.get("at"), q = params.get("q") || "", offset = Number(params.get("offset") || 0);
  const limit = 50;
  let data;
  try {
    data = await api("/api/facts", { at, q, offset, limit });
  } catch (error) {
    if (at && isMissing(error)) return noRevision(at);
    throw error;
  }
  if (data.commit === null) return noCommits();
  const heading = at
    ? el("h1", {}, "Memory at commit ", el("code", {}, short(data.commit || at)))
    : el("h1", {}, "Memory now");
  const back = at ? el("p", {}, el("a", { href: href("/", { q }) }, "Back to memory now")) : null;
  const search = el("input", { type: "search", id: "search", name: "q", value: q, placeholder: "id, value or source", autocomplete: "off" });
  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => navigate(href("/", { at, q: search.value }), true, "search"), 250);
  });
  const form = el("form", { role: "search", onsubmit: (event) => { event.preventDefault(); navigate(href("/", { at, q: search.value }), true, "search"); } },
    el("label", { for: "search" }, "Search facts "), search);
  const columns = FACT_COLUMNS.filter((column) => !column.shown || data.facts.some(column.shown));
  const rows = data.facts.map((fact) => el("tr", {},
    el("th", { scope: "row" }, el("a", { href: href("/fact", { id: fact.id, at }) }, words(fact.id))),
    columns.map((column) => column.cell(fact))));
  const noun = data.total === 1 ? "fact" : "facts";
  const caption = q ? `${data.total} ${noun} matching “${q}”` : `${data.total} ${noun}`;
  const table = el("div", { class: "scroll" }, el("table", { class: "facts" },
    el("caption", {}, caption),
    el("thead", {}, el("tr", {}, ["fact", ...columns.map((column) => column.label)].map((name) => el("th", { scope: "col" }, name)))),
    el("tbody", {}, rows)));
  show(heading, back, form, data.total ? table : el("p", { class: "dim" }, q ? "No fact matches." : "Memory is empty."),
    data.total > limit ? pager("Facts pages", offset, limit, data.total, (o) => navigate(href("/", { at, q, offset: o }))) : null);
}

async function factView(params) {
  const id = params.get("id"), at = params.get("at");
  const [blame, first] = await Promise.allSettled([api("/api/blame", { id, at }), api("/api/timeline", { id, at, limit: 20 })]);
  if (first.status === "rejected" && !isMissing(first.reason)) throw first.reason;
  if (first.status === "rejected" || !first.value.entries.length) {
    const where = at ? `the history of ${at}` : "the history of HEAD";
    return missing(`No fact “${id}”`, `No commit on ${where} has held a fact with the id “${id}”. Check the id, or search the memory for it.`,
      [[`Search the memory for “${id}”`, href("/", { q: id, at })], ["Back to memory now", href("/")]]);
  }
  const why = el("section", { "aria-labelledby": "why-title" }, el("h2", { id: "why-title" }, "Why it holds this value"));
  const story = el("section", { "aria-labelledby": "timeline-title" }, el("h2", { id: "timeline-title" }, "Timeline"));
  const list = el("ol", { class: "timeline", "aria-label": "values, newest first" });
  story.append(list);
  show(el("h1", {}, "Fact ", el("code", {}, id)), at ? el("p", { class: "dim" }, asOf(at)) : null, why, story);
  if (blame.status === "fulfilled") {
    const commit = blame.value.commit;
    why.append(el("div", { class: "blame" },
      nodeValue("p", blame.value.node, "value"),
      el("p", {}, "Set by ", commitLink(commit), " by ", byline(commit), ` at ${when(commit.time)}`),
      provenanceList(blame.value.node)));
  } else if (first.value.entries[0].kind === "removed") {  // it was in memory once: the timeline says when it left
    why.append(el("p", {}, at ? "Not in memory at this commit: " : "Not in memory now: ", "it was removed by ",
      commitLink(first.value.entries[0].commit), " by ", byline(first.value.entries[0].commit), "."));
  } else {
    why.append(failure(blame.reason));
  }
  showTimeline(id, first.value, list, story);
}

// Append a page of a fact's timeline, with a button for the next page that fetches and shows it in turn.
function showTimeline(id, data, list, story) {
  for (const entry of data.entries) list.append(timelineEntry(id, entry));
  if (!data.next) return;
  const more = el("button", { type: "button", class: "more" }, "Show older values");
  more.addEventListener("click", async () => {
    more.remove();
    try {
      showTimeline(id, await api("/api/timeline", { id, at: data.next, limit: 20 }), list, story);
    } catch (error) {
      story.append(failure(error));
    }
  });
  story.append(more);
}

function timelineEntry(id, entry) {
  const value = entry.value;
  const item = el("li", { class: `step ${entry.kind}` },
    el("h3", {}, `${entry.kind} at ${when(entry.commit.time)}`),
    value ? nodeValue("p", value, "value") : el("p", { class: "dim" }, "(removed from memory)"),
    el("p", {}, "Commit ", commitLink(entry.commit), " by ", byline(entry.commit)),
    entry.origin.id !== entry.commit.id
      ? el("p", {}, "Written on a branch by ", commitLink(entry.origin), " by ", byline(entry.origin), ", merged here")
      : null,
    value ? provenanceList(value) : null,
    diffTable(entry.diff, "Changed from the value before"));
  if (value && !value.redacted) {  // a redacted value cannot be looked for
    const answer = el("output", { class: "when" });
    const ask = el("button", { type: "button" }, "When did this value first hold?");
    ask.addEventListener("click", async () => {
      answer.replaceChildren("Searching…");
      try {
        const found = await api("/api/when", { id, value: JSON.stringify(value.content), at: entry.commit.id });
        answer.replaceChildren("First held at ", commitLink(found.commit), " by ", ...byline(found.commit), ` (${when(found.commit.time)})`);
      } catch (error) {
        answer.replaceChildren(failure(error));
      }
    });
    item.append(el("p", {}, ask, " ", answer));
  }
  return item;
}

// The branch picker: "All branches" (the default) or one branch, the current one first. A thread filter stays.
function branchPicker(at, thread) {
  const where = state.where || {};
  const current = where.branch || where.commit;
  const select = el("select", { id: "branch", onchange: () => navigate(href("/history", { at: select.value, thread })) },
    where.branch ? null : el("option", { value: where.commit || "" }, "detached HEAD (current)"),
    state.branches.map((b) => el("option", { value: b.name, selected: b.name === (at || current) }, b.current ? `${b.name} (current)` : b.name)));
  const choice = (label, checked, target) => el("label", {},
    el("input", { type: "radio", name: "scope", checked, onchange: () => navigate(href("/history", { at: target, thread })) }), ` ${label}`);
  return el("fieldset", { class: "scope" }, el("legend", {}, "Show"),
    choice("All branches", !at, null), " ", choice("One branch", Boolean(at), at || current), " ",
    el("label", { for: "branch", class: "visually-hidden" }, "Branch"), select);
}

// The thread filter: one LangGraph thread's checkpoints and the memory commits between them (mnem log --thread).
function threadFilter(at, thread) {
  const input = el("input", { id: "thread", type: "search", value: thread || "", placeholder: "thread id" });
  const form = el("form", { class: "scope", role: "search", "aria-label": "thread filter" },
    el("label", { for: "thread" }, "Checkpoints of thread"), input,
    el("button", { type: "submit" }, "Filter"),
    thread ? el("a", { href: href("/history", { at }) }, "Show every commit") : null);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    navigate(href("/history", { at, thread: input.value.trim() }));
  });
  return form;
}

// A checkpoint commit's marker: the threads whose checkpoints it wrote, each a link to that thread's timeline.
function checkpointMarker(at, threads) {
  if (!threads.length) return null;
  return el("span", { class: "checkpoint-mark" }, "checkpoint ",
    threads.map((t, i) => [i ? ", " : "", el("a", { href: href("/history", { at, thread: t }), title: `only thread ${t} and memory commits` }, t)]));
}

async function historyView(params) {
  await state.ready;
  const at = params.get("at");
  const thread = params.get("thread");
  const rows = el("ol", { class: "commits", "aria-label": "commits, newest first" });
  const graph = svg("svg", { class: "graph", role: "img", width: 20, height: 0 });
  const more = el("button", { type: "button", class: "more" }, "Load older commits");
  const loaded = [];
  let checkpoints = false;  // whether this history holds checkpoints (the server says): only then a thread filter
  rows.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const links = [...rows.querySelectorAll("a.commit")];
    const index = links.indexOf(document.activeElement);
    if (index < 0) return;
    event.preventDefault();
    links[Math.max(0, Math.min(links.length - 1, index + (event.key === "ArrowDown" ? 1 : -1)))].focus();
  });
  async function page() {
    more.disabled = true;
    const data = await api("/api/log", { at, all: at ? null : 1, thread, offset: loaded.length, limit: 50 });
    loaded.push(...data.commits);
    checkpoints ||= data.checkpoints;
    const tips = new Map(state.branches.map((b) => [b.commit, []]));
    for (const b of state.branches) tips.get(b.commit).push(b.name);
    for (const commit of data.commits) {
      rows.append(el("li", { "data-parents": commit.parents.length, class: commit.threads.length ? "checkpoint" : "memory" },
        commitLink(commit),
        (tips.get(commit.id) || []).map((name) => el("span", { class: "branch" }, name)),
        commit.parents.length > 1 ? el("span", { class: "merge" }, "merge") : null,
        checkpointMarker(at, commit.threads),
        el("span", { class: "dim" }, " ", byline(commit), ` · ${when(commit.time)}`)));
    }
    if (!thread) drawGraph(graph, loaded);  // a filtered list skips commits, so its parents' edges would mislead
    more.hidden = !data.more;
    more.disabled = false;
  }
  try {
    await page();
  } catch (error) {
    if (at && isMissing(error)) return noRevision(at);
    throw error;
  }
  if (!loaded.length && !thread) return noCommits();
  // A mistyped thread id still lists the memory commits: say that none of these is one of its checkpoints.
  const found = loaded.some((commit) => commit.threads.includes(thread));
  const note = thread ? el("p", { class: "dim" }, found
    ? `The checkpoints of thread “${thread}” and the memory commits between them, newest first; other threads' checkpoints are left out.`
    : `None of these commits wrote a checkpoint of thread “${thread}”: only memory commits are listed. Check the thread id, or show every commit.`) : null;
  show(el("h1", {}, "History"), branchPicker(at, thread), checkpoints || thread ? threadFilter(at, thread) : null, note,
    el("div", { class: "history" }, thread ? null : graph, rows), more);
  more.addEventListener("click", () => page().catch((error) => more.replaceWith(failure(error))));
}

// Lanes: each commit takes the lane that was waiting for it (or a free one); its first parent
// inherits the lane, other parents get a lane of their own. Edges travel down their lane.
function drawGraph(graph, commits) {
  const ROW = 32, COL = 16, R = 5;
  const lanes = [], place = new Map(), edges = [];
  commits.forEach((commit, row) => {
    let col = lanes.indexOf(commit.id);
    if (col < 0) { col = lanes.indexOf(null); if (col < 0) col = lanes.length; }
    lanes.forEach((waiting, lane) => { if (waiting === commit.id) lanes[lane] = null; });
    place.set(commit.id, { row, col });
    commit.parents.forEach((parent, i) => {
      let lane = i === 0 ? col : lanes.indexOf(parent);
      if (lane < 0) { lane = lanes.indexOf(null); if (lane < 0) lane = lanes.length; }
      if (lanes[lane] === undefined || lanes[lane] === null || lanes[lane] === parent) lanes[lane] = parent;
      edges.push({ from: commit.id, to: parent, lane });
    });
  });
  const x = (col) => col * COL + COL / 2, y = (row) => row * ROW + ROW / 2;
  const width = Math.max(1, lanes.length) * COL, height = commits.length * ROW;
  graph.replaceChildren();
  graph.setAttribute("width", width);
  graph.setAttribute("height", height);
  graph.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const merges = commits.filter((c) => c.parents.length > 1).length;
  graph.setAttribute("aria-label", `commit graph: ${commits.length} ${commits.length === 1 ? "commit" : "commits"}, ${merges} ${merges === 1 ? "merge" : "merges"}`);
  for (const edge of edges) {
    const a = place.get(edge.from), b = place.get(edge.to);
    const endRow = b ? b.row : commits.length;
    const points = [[x(a.col), y(a.row)], [x(edge.lane), y(a.row) + ROW / 2], [x(edge.lane), y(endRow) - ROW / 2], [x(b ? b.col : edge.lane), y(endRow)]];
    graph.append(svg("polyline", { points: points.map((p) => p.join(",")).join(" "), class: "edge" }));
  }
  for (const commit of commits) {
    const { row, col } = place.get(commit.id);
    const dot = svg("circle", { cx: x(col), cy: y(row), r: R, class: commit.parents.length > 1 ? "node merge" : "node", "data-commit": commit.id });
    const title = svg("title", {});
    title.textContent = `${short(commit.id)} ${firstLine(commit.message)}`;
    dot.append(title);
    dot.addEventListener("click", () => navigate(href("/commit/" + commit.id)));
    graph.append(dot);
  }
}

async function commitView(id, params) {
  const offset = Number(params.get("offset") || 0), limit = 50;
  let data;
  try {
    data = await api("/api/commit/" + encodeURIComponent(id), { offset, limit });
  } catch (error) {
    if (!isMissing(error)) throw error;
    return missing(`No commit ${id}`, `No commit in this store has an id that starts with ${id}. Commit ids are hexadecimal; the history lists every commit.`,
      [["Pick a commit in the history", href("/history")], ["Back to memory now", href("/")]]);
  }
  const commit = data.commit;
  const rows = data.changes.map((change) => el("tr", { class: change.kind },
    el("th", { scope: "row" }, el("a", { href: href("/fact", { id: change.id, at: commit.id }) }, change.id)),
    el("td", {}, change.kind),
    nodeValue("td", change.old, "before"),
    nodeValue("td", change.new, "after"),
    el("td", {}, change.new ? (change.new.provenance.source ?? "") : "")));
  const table = el("div", { class: "scroll" }, el("table", { class: "changes" },
    el("caption", {}, `${data.total} ${data.total === 1 ? "fact" : "facts"} changed`),
    el("thead", {}, el("tr", {}, ["fact", "change", "before", "after", "source"].map((name) => el("th", { scope: "col" }, name)))),
    el("tbody", {}, rows)));
  show(el("h1", {}, "Commit ", el("code", {}, short(commit.id))),
    el("p", { class: "message" }, commit.message),
    el("dl", { class: "meta" },
      el("dt", {}, "id"), el("dd", {}, el("code", {}, commit.id)),
      el("dt", {}, "author"), el("dd", {}, author(commit.author)),
      commit.pushed_by ? [el("dt", {}, "pushed by"), el("dd", {}, `${commit.pushed_by} at ${when(commit.pushed_at)}`)] : null,
      el("dt", {}, "time"), el("dd", {}, when(commit.time)),
      el("dt", {}, "parents"), el("dd", {}, commit.parents.length ? commit.parents.map((p) => [el("a", { href: href("/commit/" + p) }, el("code", {}, short(p))), " "]) : "none (the first commit)")),
    el("p", {}, el("a", { href: href("/", { at: commit.id }) }, "See the memory at this commit")),
    data.total ? table : el("p", { class: "dim" }, "This commit changed no fact."),
    data.total > limit ? pager("Change pages", offset, limit, data.total, (o) => navigate(href("/commit/" + commit.id, { offset: o }))) : null);
}

// ------------------------------------------------------------------ routing and live updates
function navigate(target, replace, focus) {
  state.focus = focus || null;
  if (replace) history.replaceState(null, "", target);
  else history.pushState(null, "", target);
  render();
}

async function render() {
  const [path, query] = (location.hash.slice(1) || "/").split("?");
  const params = new URLSearchParams(query || "");
  document.querySelectorAll("nav a[data-view]").forEach((a) => {
    const current = (a.dataset.view === "history") === (path === "/history" || path.startsWith("/commit/"));
    if (current) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  });
  try {
    if (path === "/fact") await factView(params);
    else if (path === "/history") await historyView(params);
    else if (path.startsWith("/commit/")) await commitView(decodeURIComponent(path.slice("/commit/".length)), params);
    else await memoryView(params);
    document.title = `mnem ui · ${document.querySelector("h1")?.textContent ?? ""}`;
  } catch (error) {  // not a missing thing (each view says that itself): the store or the server failed
    show(el("h1", {}, "This view could not be loaded"), failure(error),
      el("p", {}, "Reload to try again; the terminal running mnem ui may say more. ", el("a", { href: "#/" }, "Back to memory now")));
  }
  if (state.focus === "search") {
    const search = document.getElementById("search");
    search.focus();
    search.setSelectionRange(search.value.length, search.value.length);
  }
  state.focus = null;
}

async function poll() {
  try {
    const head = await api("/api/head");
    state.branches = head.branches;
    state.where = { branch: head.branch, commit: head.commit };
    const store = document.getElementById("store");
    store.textContent = head.name;
    store.title = head.store;
    document.getElementById("head").textContent = head.branch ? `on ${head.branch}` : "detached HEAD";
    const changed = state.head !== undefined && head.commit !== state.head;
    state.head = head.commit;
    if (changed) {
      document.getElementById("live").textContent = `Memory updated: new commit ${short(head.commit || "")}`;
      if (!new URLSearchParams(location.hash.split("?")[1] || "").get("at")) await render();
    }
  } catch (error) {
    document.getElementById("live").textContent = `Cannot reach mnem ui (${error.message})`;
  }
}

document.addEventListener("keydown", (event) => {
  if (event.key === "/" && !(event.target instanceof HTMLInputElement)) {
    const search = document.getElementById("search");
    if (search) { event.preventDefault(); search.focus(); }
  }
});
window.addEventListener("hashchange", () => render());
window.addEventListener("DOMContentLoaded", async () => {
  watchAuthors();
  state.ready = poll();  // the memory view does not wait for it; the history view needs the branches
  await render();
  await state.ready;
  setInterval(poll, POLL_MS);
});
