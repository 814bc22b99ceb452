// The stratagate Memory UI: plain JavaScript over the read-only /api/v1 JSON API.
// Every text is put in the page as text (never as HTML); the server has already redacted
// credentials from every string it sends.
"use strict";

const API = "/api/v1";
const SVG = "http://www.w3.org/2000/svg";
const ui = { ns: null, tab: "overview", token: null, head: 0, logNext: 0 };

// -- helpers ------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "onclick") node.addEventListener("click", value);
    else if (key === "class") node.className = value;
    else if (value !== null && value !== undefined) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "onclick") node.addEventListener("click", value);
    else if (value !== null && value !== undefined) node.setAttribute(key, value);
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function clear(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
  return node;
}

const $ = (id) => document.getElementById(id);

function short(text, size = 120) {
  const value = String(text ?? "");
  return value.length > size ? value.slice(0, size - 1) + "…" : value;
}

function when(value) {
  return value ? String(value).replace("T", " ").replace(/\.\d+Z$/, "Z") : "—";
}

function banner(message) {
  const node = $("banner");
  node.textContent = message || "";
  node.hidden = !message;
}

async function api(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== null && value !== undefined && value !== "") query.set(key, value);
  }
  const url = `${API}${path}${query.toString() ? "?" + query : ""}`;
  const headers = ui.token ? { Authorization: `Bearer ${ui.token}` } : {};
  const response = await fetch(url, { headers });
  const body = await response.json();
  if (!response.ok) {
    const error = body.error;
    const text = typeof error === "string" ? error : `${error.type}: ${error.message}`;
    throw new Error(`${response.status} ${text}`);
  }
  return body;
}

function nsPath(suffix) {
  return `/namespaces/${encodeURIComponent(ui.ns)}${suffix}`;
}

function guarded(action) {
  return async (...args) => {
    try {
      banner("");
      await action(...args);
    } catch (error) {
      banner(error.message);
    }
  };
}

function pager(page, load, size) {
  const node = el("div", { class: "pager" });
  if (page.offset > 0) {
    node.append(el("button", { onclick: () => load(Math.max(0, page.offset - size)) }, "← previous"));
  }
  const shown = page.items ? page.items.length : 0;
  const total = page.total === null || page.total === undefined ? "" : ` of ${page.total}`;
  node.append(el("span", { class: "muted" }, `${page.offset + 1}–${page.offset + shown}${total}`));
  if (page.next !== null && page.next !== undefined) {
    node.append(el("button", { onclick: () => load(page.next) }, "next →"));
  }
  return node;
}

// -- the detail pane: where a memory came from ---------------------------------------------

function messageNode(message, nearby) {
  const tools = (message.tool_calls || []).map((trace) =>
    el("pre", { class: "tool" }, `tool ${trace.name}: ${JSON.stringify(trace.arguments)} → ${JSON.stringify(trace.result)}`),
  );
  return el(
    "div",
    { class: nearby ? "message nearby" : "message", "data-id": message.id },
    el("div", { class: "meta" }, `${message.role} · ${when(message.created_at)} · ${message.id}`),
    el("div", { class: "content" }, message.content),
    tools,
  );
}

async function showSources(ids, title) {
  const found = await api(nsPath("/sources"), { ids: ids.join(",") });
  const pane = clear($("sources"), el("h3", {}, title || "Source messages"));
  for (const item of found.items) {
    pane.append(el("div", { class: "meta muted" }, `${item.kind} ${item.id} — ${item.messages.length} source message(s)`));
    for (const message of item.messages) pane.append(messageNode(message));
  }
}

function detail(...nodes) {
  clear($("sources"), ...nodes);
}

function eventDetail(event) {
  const t = event.temporal || {};
  return [
    el("h3", {}, event.title),
    el("div", { class: `meta status-${event.status}` }, `${event.status} · weight ${event.memory_weight?.toFixed?.(3) ?? "—"} · ${event.id}`),
    el("p", {}, event.summary),
    el("table", {},
      el("tr", {}, el("th", {}, "mentioned"), el("td", {}, when(t.mentioned_at))),
      el("tr", {}, el("th", {}, "happened"), el("td", {}, `${when(t.happened_start)} → ${when(t.happened_end)}`)),
      el("tr", {}, el("th", {}, "time status"), el("td", {}, t.status || "—")),
      el("tr", {}, el("th", {}, "participants"), el("td", {}, (t.participants || []).join(", ") || "—")),
      el("tr", {}, el("th", {}, "superseded by"), el("td", {}, event.superseded_by || "—")),
      el("tr", {}, el("th", {}, "source block"), el("td", {}, event.source_block_id)),
    ),
  ];
}

const openEvent = guarded(async (event) => {
  await showSources([event.id], "Source messages");
  $("sources").prepend(...eventDetail(event));
});

const openElement = guarded(async (elementId) => {
  const card = await api(nsPath(`/elements/${encodeURIComponent(elementId)}`));
  const openFact = guarded(async (fact) => {
    await showSources([fact.id], `Source messages of the fact ${fact.key}`);
    $("sources").prepend(el("button", { class: "back", onclick: () => openElement(card.id) }, `← ${card.name}`));
  });
  const rows = card.facts.map((fact) =>
    el("tr", { class: `fact-${fact.status} clickable`, "data-fact": fact.id, title: "its source messages", onclick: () => openFact(fact) },
      el("td", {}, fact.key),
      el("td", {}, Array.isArray(fact.value) ? fact.value.join(", ") : fact.value),
      el("td", {}, `${when(fact.valid_from)} → ${fact.valid_to ? when(fact.valid_to) : "now"}`),
      el("td", {}, fact.status),
    ),
  );
  await showSources([card.id], "Source messages of the element");
  $("sources").prepend(
    el("h3", { class: "element-name" }, `${card.name} `, el("span", { class: "muted" }, card.type)),
    el("div", { class: "meta muted" }, card.aliases.length ? `aliases: ${card.aliases.join(", ")}` : card.id),
    el("table", { class: "facts" },
      el("tr", {}, el("th", {}, "fact"), el("th", {}, "value"), el("th", {}, "valid"), el("th", {}, "status")),
      rows,
    ),
  );
});

// -- overview ------------------------------------------------------------------------------

function health(ns) {
  const verify = ns.last_verify;
  const jobs = ns.jobs;
  if (verify && !verify.ok) return ["health-bad", `log damaged at ${verify.first_bad_position ?? "?"}`];
  if (jobs.failed) return ["health-warn", `${jobs.failed} failed job(s)`];
  if (jobs.pending) return ["health-warn", `${jobs.pending} pending job(s)`];
  return ["health-ok", verify ? (verify.current ? "verified" : "verified earlier") : "healthy (not verified yet)"];
}

async function loadOverview() {
  const page = await api("/namespaces", { limit: 200 });
  const cards = page.items.map((ns) => {
    const [cls, text] = health(ns);
    const row = (label, value) => [el("dt", {}, label), el("dd", {}, value)];
    return el("div", { class: "card clickable", "data-ns": ns.namespace, onclick: () => selectNamespace(ns.namespace, "search") },
      el("h2", {}, ns.namespace),
      el("div", { class: cls }, text),
      el("dl", {},
        row("turns", ns.turns), row("blocks", ns.blocks), row("events", ns.events),
        row("elements", `${ns.elements} (${ns.facts} facts)`), row("receipts", ns.receipts),
        row("jobs failed / pending", `${ns.jobs.failed} / ${ns.jobs.pending}`),
        row("log head", ns.head), row("last event", when(ns.last_event_at)),
        row("last verify", ns.last_verify ? `${ns.last_verify.ok ? "ok" : "FAILED"} at ${ns.last_verify.position}` : "—"),
      ),
    );
  });
  clear($("pane-overview"), el("div", { class: "cards" }, cards));
}

// -- search --------------------------------------------------------------------------------

async function runSearch(event) {
  event?.preventDefault();
  const q = $("q").value.trim();
  const kind = $("search-kind").value;
  const target = $("search-results");
  if (!q) return clear(target, el("p", { class: "muted" }, "type something to look for"));
  const path = { events: "/events", elements: "/elements", raw: "/sources" }[kind];
  const page = await api(nsPath(path), { q, limit: 20 });
  const hits = page.items.map((hit) => {
    if (kind === "events") {
      return el("div", { class: `hit event-hit status-${hit.status}`, "data-id": hit.id, onclick: () => openEvent(hit) },
        el("div", {}, hit.title),
        el("div", { class: "meta" }, `${hit.status} · score ${hit.score.toFixed(4)} · ${hit.id}`));
    }
    if (kind === "elements") {
      const value = Array.isArray(hit.fact.value) ? hit.fact.value.join(", ") : hit.fact.value;
      return el("div", { class: `hit fact-hit fact-${hit.fact.status}`, "data-id": hit.id, onclick: () => openElement(hit.element_id) },
        el("div", {}, `${hit.name} · ${hit.fact.key}: ${value}`),
        el("div", { class: "meta" }, `${hit.type} · ${hit.fact.status} · valid ${when(hit.fact.valid_from)} → ${hit.fact.valid_to ? when(hit.fact.valid_to) : "now"}`));
    }
    return el("div", { class: "hit raw-hit", "data-id": hit.id, onclick: () => detail(
      el("h3", {}, `turns ${hit.turn_range[0]}–${hit.turn_range[1]} · ${hit.block_id || "open tail"}`),
      hit.nearby.slice(0, 1).map((m) => messageNode(m, true)), messageNode(hit.message), hit.nearby.slice(1).map((m) => messageNode(m, true))) },
      el("div", {}, short(hit.message.content, 200)),
      el("div", { class: "meta" }, `${hit.message.role} · ${hit.thread_id || "—"} · score ${hit.score.toFixed(4)}`));
  });
  clear(target, hits.length ? hits : el("p", { class: "muted no-hits" }, "nothing matches"));
}

// -- blocks --------------------------------------------------------------------------------

function blockNode(block) {
  const content = el("pre", { class: "level-content" });
  const ladder = el("div", { class: "ladder" });
  const show = (level) => {
    content.textContent = block.views[level].content;
    for (const button of ladder.children) button.classList.toggle("shown", Number(button.dataset.level) === level);
  };
  for (const view of block.views) {
    ladder.append(el("button", {
      class: view.level === block.pointer_current_level ? "current" : "",
      "data-level": view.level, title: view.label, onclick: () => show(view.level),
    }, `L${view.level}`));
  }
  const node = el("div", { class: "card block", "data-id": block.id },
    el("h3", {}, `#${block.sequence} ${block.l0_title}`),
    el("div", { class: "meta muted" },
      `thread ${block.thread_id || "—"} · turns ${block.start_turn}–${block.end_turn} · decay has it at L${block.pointer_current_level}` +
      (block.last_lifted_at ? ` (lifted by ${block.last_lift_source} ${when(block.last_lifted_at)})` : "")),
    ladder, content,
    el("button", { onclick: () => guarded(showSources)([block.id], "Messages of the block") }, "source messages"));
  show(block.pointer_current_level);
  return node;
}

async function loadBlocks(offset = 0) {
  const page = await api(nsPath("/blocks"), { offset, limit: 20 });
  clear($("pane-blocks"), pager(page, guarded(loadBlocks), 20), page.items.map(blockNode));
}

// -- timeline: both time axes --------------------------------------------------------------

function parseTime(value) {
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : time;
}

async function loadTimeline() {
  const page = await api(nsPath("/events"), { limit: 500 });
  const events = page.items
    .map((e) => ({ e, t: e.temporal || {}, m: parseTime(e.temporal?.mentioned_at) ?? parseTime(e.created_at) }))
    .sort((a, b) => a.m - b.m);
  const times = events.flatMap(({ t, m }) => [m, parseTime(t.happened_start), parseTime(t.happened_end)]).filter((x) => x !== null);
  const target = $("timeline");
  if (!events.length) return clear(target, el("p", { class: "muted" }, "no events yet"));
  const low = Math.min(...times), high = Math.max(...times) || low + 1;
  const width = 1000, labels = 230, left = 310, right = 20, row = 16, top = 24;
  const x = (time) => left + ((time - low) / Math.max(1, high - low)) * (width - left - right);
  const height = top + events.length * row + 10;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "event timeline" });
  chart.append(svg("text", { x: left, y: 14 }, when(new Date(low).toISOString())));
  chart.append(svg("text", { x: width - right, y: 14, "text-anchor": "end" }, when(new Date(high).toISOString())));
  const rowOf = new Map(events.map(({ e }, i) => [e.id, i]));
  const y = (i) => top + i * row + row / 2;
  events.forEach(({ e, t, m }, i) => {
    const faded = e.status !== "active";
    const group = svg("g", { class: `event status-${e.status}`, "data-id": e.id, onclick: () => openEvent(e), opacity: faded ? 0.45 : 1 });
    group.append(svg("title", {}, `${e.title}\nmentioned ${when(t.mentioned_at)} · happened ${when(t.happened_start)} → ${when(t.happened_end)} · ${t.status || "?"} · ${e.status}`));
    group.append(svg("text", { x: 4, y: y(i) + 4 }, short(e.title, 38)));
    const start = parseTime(t.happened_start), end = parseTime(t.happened_end) ?? start;
    if (start !== null) {
      const planned = t.status === "planned";
      group.append(svg("rect", {
        x: x(start), y: y(i) - 4, width: Math.max(4, x(end) - x(start)), height: 8,
        fill: planned ? "none" : faded ? "#a0a6b0" : "#1f8a4c", stroke: planned ? "#b7791f" : "none",
        "stroke-dasharray": planned ? "3 2" : null, class: planned ? "happened planned" : "happened",
      }));
      group.append(svg("line", { x1: x(m), y1: y(i), x2: x(start), y2: y(i), stroke: "#cbd5e1" }));
    }
    group.append(svg("circle", { cx: x(m), cy: y(i), r: 4, fill: faded ? "#a0a6b0" : "#2f6fde", class: "mentioned" }));
    chart.append(group);
  });
  const link = (from, to, color, dashed, cls) => {
    if (!rowOf.has(from) || !rowOf.has(to)) return;
    const a = y(rowOf.get(from)), b = y(rowOf.get(to)), bend = Math.min(left - labels - 10, 20 + Math.abs(a - b) / 6);
    chart.append(svg("path", { d: `M ${left - 6} ${a} C ${left - 6 - bend} ${a}, ${left - 6 - bend} ${b}, ${left - 6} ${b}`,
      fill: "none", stroke: color, "stroke-dasharray": dashed ? "4 3" : null, class: cls }));
  };
  for (const { e, t } of events) {
    for (const old of t.supersedes_event_ids || []) link(e.id, old, "#7c3aed", false, "supersedes");
    if (e.superseded_by) link(e.superseded_by, e.id, "#7c3aed", false, "supersedes");
    for (const other of t.conflicts_with_event_ids || []) link(e.id, other, "#c0392b", true, "conflict");
  }
  clear(target, chart, page.next !== null ? el("p", { class: "muted" }, `the first ${page.items.length} of ${page.total} events`) : null);
}

// -- graph: elements and their relations ---------------------------------------------------

const TYPE_COLOURS = { person: "#2f6fde", project: "#1f8a4c", organization: "#b7791f", tool: "#7c3aed", place: "#c0392b" };

function layout(nodes, edges, width, height) {
  const n = nodes.length;
  nodes.forEach((node, i) => {
    const angle = (2 * Math.PI * i) / Math.max(1, n);
    node.x = width / 2 + (width / 3) * Math.cos(angle);
    node.y = height / 2 + (height / 3) * Math.sin(angle);
  });
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const links = edges.filter((e) => byId.has(e.target_id) && e.target_id !== e.source).map((e) => [byId.get(e.source), byId.get(e.target_id)]);
  // Fruchterman–Reingold with a pull to the centre: nodes repel, relations attract.
  const k = Math.sqrt((width * height) / Math.max(1, n)) * 0.5;
  const steps = 300;
  for (let step = 0; step < steps; step++) {
    const heat = (width / 8) * (1 - step / steps) + 1;
    for (const a of nodes) { a.dx = (width / 2 - a.x) * 1.2; a.dy = (height / 2 - a.y) * 1.2; }
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const a = nodes[i], b = nodes[j];
        const dx = a.x - b.x, dy = a.y - b.y, d = Math.max(Math.hypot(dx, dy), 0.5);
        const push = (k * k) / d / d;
        a.dx += dx * push; a.dy += dy * push; b.dx -= dx * push; b.dy -= dy * push;
      }
    }
    for (const [a, b] of links) {
      const dx = a.x - b.x, dy = a.y - b.y, d = Math.max(Math.hypot(dx, dy), 0.5);
      const pull = d / k;
      a.dx -= dx * pull; a.dy -= dy * pull; b.dx += dx * pull; b.dy += dy * pull;
    }
    for (const a of nodes) {
      const d = Math.max(Math.hypot(a.dx, a.dy), 0.01), move = Math.min(d, heat);
      a.x = Math.min(width - 130, Math.max(20, a.x + (a.dx / d) * move));
      a.y = Math.min(height - 15, Math.max(15, a.y + (a.dy / d) * move));
    }
  }
  return byId;
}

async function loadGraph() {
  const found = await api(nsPath("/graph"), { limit: 150 });
  const target = $("graph");
  if (!found.nodes.length) return clear(target, el("p", { class: "muted" }, "no elements yet"));
  const width = 1000, height = 620;
  const byId = layout(found.nodes, found.edges, width, height);
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "element graph" });
  for (const edge of found.edges) {
    const a = byId.get(edge.source), b = byId.get(edge.target_id);
    if (!a || !b || a === b) continue;
    const live = edge.status === "active";
    const line = svg("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: live ? "#94a3b8" : "#cbd5e1",
      "stroke-dasharray": live ? null : "5 4", class: `edge fact-${edge.status}`, "data-fact": edge.fact_id });
    line.append(svg("title", {}, `${a.name} —${edge.key}→ ${b.name} (${edge.status}; ${when(edge.valid_from)} → ${edge.valid_to ? when(edge.valid_to) : "now"})`));
    chart.append(line);
    chart.append(svg("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2, fill: "#6b7280", "font-size": 9 }, edge.key));
  }
  for (const node of found.nodes) {
    const group = svg("g", { class: "node", "data-id": node.id, onclick: () => openElement(node.id) });
    group.append(svg("title", {}, `${node.name} (${node.type}) · ${node.fact_count} facts, ${node.superseded_facts} superseded`));
    group.append(svg("circle", { cx: node.x, cy: node.y, r: 6 + Math.min(10, node.fact_count), fill: TYPE_COLOURS[node.type] || "#6b7280", opacity: 0.85 }));
    group.append(svg("text", { x: node.x + 10, y: node.y + 4 }, short(node.name, 28)));
    chart.append(group);
  }
  clear(target, chart, found.next !== null ? el("p", { class: "muted" }, `the first ${found.nodes.length} of ${found.total} elements`) : null);
}

// -- receipts: the usage-audit chain -------------------------------------------------------

const openReceipt = guarded(async (receiptId) => {
  const chain = await api(nsPath(`/receipts/${encodeURIComponent(receiptId)}`));
  const audit = chain.audit || {};
  const step = (title, ...body) => el("div", { class: "step" }, el("strong", {}, title), ...body);
  const assessments = chain.assessments.map((a) =>
    el("div", { class: "meta" }, `${a.assessment.verdict} → ${a.assessment.next_strategy} · accepted ${a.assessment.evidence_refs.join(", ") || "none"}` +
      (a.assessment.rejected_evidence_refs.length ? ` · rejected ${a.assessment.rejected_evidence_refs.map((r) => `${r.ref} (${r.reason})`).join(", ")}` : "")));
  const memories = chain.memories.map((m) => el("div", { class: "memory", "data-id": m.id },
    el("div", {}, `${m.kind} ${m.title || m.id} ${m.reinforced ? "· reinforced" : "· not reinforced"}`),
    m.messages.map((message) => messageNode(message))));
  detail(
    el("h3", {}, `Receipt ${chain.receipt.id}`),
    el("div", { class: "chain" },
      step("answer", el("div", { class: "meta" }, `recorded ${when(chain.receipt.created_at)} at turn ${chain.receipt.turn}${audit.session_id ? ` · session ${audit.session_id}` : ""}`)),
      step("evidence gate", chain.batch ? el("div", { class: "meta" }, `batch ${chain.batch.batch_id} (${chain.batch.kind}) for “${chain.batch.query}” → ${chain.batch.refs.length} refs`) : el("div", { class: "meta" }, "no audited batch"),
        assessments, audit.evidence_refs?.length ? el("div", { class: "meta" }, `evidence cited: ${audit.evidence_refs.join(", ")}`) : null),
      step("selected memories", memories),
    ),
  );
});

async function loadReceipts(offset = 0) {
  const page = await api(nsPath("/receipts"), { offset, limit: 50 });
  const rows = page.items.map((r) => el("div", { class: "receipt", "data-id": r.id, onclick: () => openReceipt(r.id) },
    el("div", {}, `${r.id} · ${r.verdict || "no verdict"}`),
    el("div", { class: "meta muted" }, `${when(r.created_at)} · ${r.event_ids.length} event(s), ${r.element_ids.length} element(s) · batch ${r.batch_id || "—"}`)));
  clear($("pane-receipts"), pager(page, guarded(loadReceipts), 50), rows.length ? rows : el("p", { class: "muted" }, "no recorded use yet"));
}

// -- log, verify and time travel -----------------------------------------------------------

function verifyNode(report) {
  const state = report.ok ? ["health-ok", `verified: ${report.events_checked} events, chain and replay`] : ["health-bad", `FAILED at global position ${report.first_bad_position ?? "?"}: ${report.detail}`];
  return el("div", { class: "verify" }, el("span", { class: state[0] }, state[1]),
    el("span", { class: "muted" }, ` · ${when(report.checked_at)} at position ${report.position}${report.current ? "" : " (the log has moved since)"} `));
}

async function loadVerify(run) {
  const target = $("verify-status");
  const info = await api(nsPath(""));
  const last = info.last_verify;
  const button = el("button", { onclick: guarded(async () => { clear(target, el("span", { class: "muted" }, "verifying…")); await loadVerify(true); }) }, "verify now");
  if (run) {
    const report = await api(nsPath("/verify"));
    return clear(target, verifyNode(report), button);
  }
  clear(target, last ? verifyNode(last) : el("span", { class: "muted" }, "not verified by this server yet "), button);
}

async function showState(position) {
  const state = await api(nsPath("/state"), { at: position, kind: "events", order: "newest", limit: 12 });
  const s = state.stats;
  clear($("state-summary"),
    el("h3", {}, `As of position ${state.position}`, el("span", { class: "muted" }, " — the latest events then")),
    el("div", { class: "state-counts" }, `${s.turns} turns · ${s.blocks} blocks · ${s.events} events · ${s.elements} elements · ${s.facts} facts · ${s.receipts} receipts`),
    state.items.map((e) => el("div", { class: `hit status-${e.status}`, onclick: () => openEvent(e) }, `${e.title} `, el("span", { class: "meta" }, e.status))),
    state.next !== null ? el("div", { class: "muted" }, `… ${state.total - state.items.length} more events`) : null,
  );
}

function logRow(record) {
  return el("tr", { class: "log-row", "data-position": record.position, onclick: () => detail(
    el("h3", {}, `${record.type} at ${record.position}`), el("pre", {}, JSON.stringify(record.data, null, 2))) },
    el("td", {}, record.position), el("td", {}, record.stream), el("td", {}, record.type), el("td", {}, when(record.recorded_at)));
}

async function loadLog(after = 0) {
  const page = await api(nsPath("/log"), { after, limit: 100 });
  ui.head = page.head;
  const slider = $("log-slider");
  slider.max = String(page.head);
  if (after === 0) {
    slider.value = String(page.head);
    $("slider-value").textContent = `${page.head} / ${page.head}`;
  }
  const table = el("table", {}, el("tr", {}, el("th", {}, "position"), el("th", {}, "stream"), el("th", {}, "type"), el("th", {}, "recorded")), page.items.map(logRow));
  const more = page.next !== null ? el("button", { onclick: guarded(() => loadLog(page.next)) }, "next page →") : null;
  const back = after > 0 ? el("button", { onclick: guarded(() => loadLog(0)) }, "← first page") : null;
  clear($("log-table"), el("div", { class: "pager" }, back, el("span", { class: "muted" }, `events after position ${after}`), more), table);
}

async function loadLogTab() {
  await Promise.all([loadVerify(false), loadLog(0)]);
  await showState(ui.head);
}

let sliderTimer = null;
function onSlider() {
  const value = Number($("log-slider").value);
  $("slider-value").textContent = `${value} / ${ui.head}`;
  clearTimeout(sliderTimer);
  sliderTimer = setTimeout(guarded(() => showState(value)), 150);
}

// -- navigation ----------------------------------------------------------------------------

const LOADERS = {
  overview: loadOverview,
  search: async () => { if ($("q").value.trim()) await runSearch(); },
  blocks: () => loadBlocks(0),
  timeline: loadTimeline,
  graph: loadGraph,
  receipts: () => loadReceipts(0),
  log: loadLogTab,
};

const showTab = guarded(async (tab) => {
  ui.tab = tab;
  for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("active", button.dataset.tab === tab);
  for (const pane of document.querySelectorAll(".pane")) pane.hidden = pane.id !== `pane-${tab}`;
  document.body.dataset.tab = tab;
  await LOADERS[tab]();
  document.body.dataset.loaded = tab;
});

function selectNamespace(name, tab) {
  ui.ns = name;
  $("ns-select").value = name;
  detail(el("p", { class: "muted" }, "Click an event, element, fact, block or receipt to see where it came from."));
  return showTab(tab || ui.tab);
}

async function start() {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("token")) {
    sessionStorage.setItem("stratagate-token", hash.get("token"));
    history.replaceState(null, "", location.pathname + location.search);
  }
  ui.token = sessionStorage.getItem("stratagate-token");
  for (const button of document.querySelectorAll("#tabs button")) button.addEventListener("click", () => showTab(button.dataset.tab));
  $("search-form").addEventListener("submit", guarded(runSearch));
  $("log-slider").addEventListener("input", onSlider);
  $("ns-select").addEventListener("change", (e) => selectNamespace(e.target.value));
  const page = await api("/namespaces", { limit: 500 });
  clear($("ns-select"), page.items.map((ns) => el("option", { value: ns.namespace }, ns.namespace)));
  if (!page.items.length) return banner("no namespace with events is served here");
  const wanted = new URLSearchParams(location.search);
  await selectNamespace(wanted.get("ns") || page.items[0].namespace, wanted.get("tab") || "overview");
}

document.addEventListener("DOMContentLoaded", guarded(start));
