// The page of `ripplemem ui` (server/ui_page.py). It reads the memory only through the JSON API under /api/.
// What is shown lives in the URL's hash (#ns=...&person=...&m=...): links, reloads and Back work.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const token = document.querySelector('meta[name="ripplemem-token"]').content;
  const readOnly = document.querySelector('meta[name="ripplemem-read-only"]').content === "1";
  const FILTERS = ["person", "place", "conversation", "text"];
  const LINK_NAMES = {semantic: "Semantic", structural: "Structural (shared cues)", session: "Session",
                      "same turns": "Same turns", "superseded by": "Superseded by", supersedes: "Supersedes"};
  // stale: the shown timeline page no longer matches the store (after a forget), whatever the URL says
  let state = {}, shown = {}, overview = null, lastRecall = null, firstTimeline = true, stale = false;

  // -- talking to the server ----------------------------------------------------------------
  async function api(path, params, body) {
    const query = params ? "?" + new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined &&
                                                                                   v !== null && v !== "")) : "";
    const headers = {"Accept": "application/json"};
    if (token) headers["X-RippleMem-Token"] = token;
    if (body) headers["Content-Type"] = "application/json";
    const response = await fetch("/api/" + path + query, {method: body ? "POST" : "GET", headers,
                                                          body: body ? JSON.stringify(body) : undefined});
    const data = await response.json().catch(() => ({error: response.statusText}));
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  function notice(text, isError) {
    const box = $("notice");
    box.textContent = text;
    box.className = isError ? "error" : "";
    box.hidden = !text;
  }

  const guarded = (work) => (...args) => work(...args).catch((err) => notice(err.message, true));

  // -- small DOM helpers (text is always set as text, never parsed as HTML) --------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(key, value);
    }
    for (const child of children.flat(Infinity)) if (child !== null && child !== undefined)
      node.append(child instanceof Node ? child : String(child));
    return node;
  }

  const who = (unit) => unit.speaker || unit.participants.join(", ");

  // -- the state in the URL ------------------------------------------------------------------
  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    return {ns: params.get("ns") || "", person: params.get("person") || "", place: params.get("place") || "",
            conversation: params.get("conversation") || "", text: params.get("text") || "",
            order: params.get("order") || "oldest", offset: parseInt(params.get("offset") || "0", 10) || 0,
            m: params.get("m") || "", tab: params.get("tab") || "timeline"};
  }

  function hashOf(next) {
    const params = new URLSearchParams();
    for (const key of ["ns", ...FILTERS, "order", "offset", "m", "tab"])
      if (next[key] && !(key === "order" && next[key] === "oldest") && !(key === "tab" && next[key] === "timeline"))
        params.set(key, next[key]);
    return "#" + params.toString();
  }

  // Show `changes`: a new history entry (Back returns), or with `replace` the same entry rewritten.
  function go(changes, replace) {
    const hash = hashOf({...state, ...changes});
    if (hash === location.hash || (hash === "#" && !location.hash)) return guarded(render)();
    if (replace) { history.replaceState(null, "", hash); return guarded(render)(); }
    location.hash = hash;  // the hashchange event renders
  }

  // -- namespaces and what one holds ---------------------------------------------------------
  async function loadNamespaces() {
    const {namespaces} = await api("namespaces");
    const list = $("namespaces");
    list.replaceChildren(...namespaces.map((row) => el("li", {dataset: {ns: row.namespace},
      onclick: () => go({ns: row.namespace, person: "", place: "", conversation: "", text: "", offset: 0, m: ""})},
      el("span", {}, row.namespace), el("span", {class: "count"}, row.units === null ? "" : row.units.toLocaleString()))));
    if (!namespaces.length) notice("This store holds no memories yet.");
    return namespaces;
  }

  function facetList(id, facets, filter, more) {
    $(id + "-count").textContent = facets.length ? `(${facets.length}${more ? "+" : ""})` : "";
    $(id).replaceChildren(...facets.map((facet) => el("li", {
      class: state[filter] === facet.value ? "selected" : "", dataset: {value: facet.value},
      onclick: () => go({[filter]: state[filter] === facet.value ? "" : facet.value, offset: 0})},
      el("span", {}, facet.label), el("span", {class: "count"}, facet.count.toLocaleString()))));
  }

  async function loadOverview() {
    overview = await api("overview", {namespace: state.ns});
    drawFacets();
  }

  function drawFacets() {
    if (!overview) return;
    $("facets").hidden = false;
    facetList("people", overview.people, "person", overview.more.people);
    facetList("places", overview.places, "place", overview.more.places);
    facetList("conversations", overview.conversations, "conversation", overview.more.conversations);
  }

  // -- the timeline --------------------------------------------------------------------------
  function itemRow(unit, extra) {
    const classes = ["item", unit.suppressed ? "suppressed" : "", unit.superseded ? "superseded" : "",
                     unit.id === state.m ? "selected" : ""].join(" ");
    const flags = [unit.suppressed ? "suppressed" : "", unit.superseded ? "superseded" : ""].filter(Boolean);
    return el("li", {class: classes, dataset: {id: unit.id}, onclick: () => go({m: unit.id})},
      el("span", {class: "who", title: who(unit)}, who(unit)),
      el("span", {}, el("span", {class: "text"}, unit.text),
         flags.length ? el("span", {class: "flags"}, flags.join(", ")) : null, extra || null));
  }

  function withDays(units, row) {
    const out = [];
    let day = null;
    for (const unit of units) {
      const thisDay = unit.day || "no time";
      if (thisDay !== day) { out.push(el("li", {class: "day"}, thisDay)); day = thisDay; }
      out.push(row(unit));
    }
    return out;
  }

  async function loadTimeline(at) {
    const params = {namespace: state.ns, offset: state.offset, limit: 50, order: state.order, at};
    for (const key of FILTERS) params[key] = state[key];
    const page = await api("timeline", params);
    if (at) {  // the server says where that day starts: remember it without loading the page again
      state.offset = shown.offset = page.offset;
      history.replaceState(null, "", hashOf(state));
    }
    $("timeline").replaceChildren(...withDays(page.units, (unit) => itemRow(unit)));
    if (!page.units.length) $("timeline").append(el("li", {class: "muted"}, "No memory matches."));
    const last = Math.min(page.offset + page.units.length, page.total);
    $("range").textContent = page.total ? `${(page.offset + 1).toLocaleString()}\u2013${last.toLocaleString()} of ` +
      `${page.total.toLocaleString()}` : "0 memories";
    $("prev").disabled = page.offset <= 0;
    $("next").disabled = last >= page.total;
    const top = Math.max(1, ...page.bins.map((b) => b.count));
    $("bins").replaceChildren(...page.bins.map((bin) => el("div", {class: "bin", dataset: {start: bin.start},
      style: `height:${Math.max(6, Math.round(100 * bin.count / top))}%`,
      title: `${page.bin_unit === "month" ? bin.start.slice(0, 7) : bin.start}: ${bin.count.toLocaleString()}`,
      onclick: () => loadTimeline(bin.start).catch((err) => notice(err.message, true))})));
    drawChips(page.total);
    if (firstTimeline) {
      firstTimeline = false;
      performance.mark("ripplemem-timeline");
      document.body.dataset.ready = "1";
    }
  }

  function drawChips(total) {
    const chips = FILTERS.filter((key) => state[key]).map((key) => el("span", {class: "chip", dataset: {filter: key}},
      `${key}: ${state[key]}`, el("button", {type: "button", title: "remove", onclick: () => go({[key]: "", offset: 0})},
                                   "\u00d7")));
    for (const [key, what] of [["person", "person"], ["conversation", "conversation"]]) {
      if (state[key] && !readOnly && total)
        chips.push(el("button", {type: "button", class: "danger", id: `forget-${key}`,
          onclick: () => askForget(what, state[key], `Forget all ${total.toLocaleString()} memories of ${what} ` +
                                   `\u201c${state[key]}\u201d in ${state.ns}?`, true)},
          `Forget this ${what}\u2026`));
    }
    $("chips").replaceChildren(...chips);
  }

  // -- one memory ----------------------------------------------------------------------------
  async function loadMemory() {
    const box = $("detail");
    if (!state.m) {
      box.replaceChildren(el("p", {class: "muted"}, "Click a memory to see it whole: its source, time, people, " +
                             "places, cues and links."));
      return;
    }
    const {unit, links} = await api("memory", {namespace: state.ns, id: state.m});
    const time = unit.time ? (unit.time.start === unit.time.end ? unit.time.start :
                              `${unit.time.start} \u2192 ${unit.time.end}`) : "none";
    const facts = [["Time", unit.day || time], ["Said", unit.metadata.session_time || ""],
                   ["Source", `${unit.source.conversation_id} \u00b7 session ${unit.source.session_id}`],
                   ["Turns", unit.source.turn_ids.join(", ")], ["People", unit.participants.join(", ")],
                   ["Places", unit.locations.join(", ")], ["Cues", (unit.cues || []).join(", ")],
                   ["Topics", (unit.topics || []).join(", ")], ["Kind", unit.kind],
                   ["Superseded", unit.metadata.superseded_by ? `by ${unit.metadata.superseded_by}` +
                    (unit.metadata.superseded_attribute ? ` (${unit.metadata.superseded_attribute})` : "") : ""],
                   ["Suppressed", unit.metadata.suppressed ? unit.metadata.suppressed.reason : ""],
                   ["Id", unit.id]].filter(([, value]) => value);
    const sections = Object.entries(links).map(([kind, rows]) => [
      el("h3", {class: kind.replace(/ /g, "-")}, `${LINK_NAMES[kind] || kind} (${rows.length})`),
      el("ul", {class: "list"}, rows.map((row) => el("li", {},
        el("button", {type: "button", class: "link", dataset: {id: row.id, kind},
                      onclick: () => go({m: row.id})}, row.text || row.id),
        row.role ? el("span", {class: "weight"}, row.role) : null,
        row.weight !== undefined ? el("span", {class: "weight"}, row.weight.toFixed(2)) : null)))]);
    box.replaceChildren(
      el("h2", {}, "Memory"), el("p", {class: "text", id: "detail-text"}, unit.restatement),
      el("dl", {}, facts.map(([name, value]) => [el("dt", {}, name), el("dd", {}, value)])),
      el("div", {class: "links"}, el("h2", {}, "Links"), sections.length ? sections : el("p", {class: "muted"},
                                                                                        "No links.")),
      readOnly ? null : el("div", {class: "actions"}, el("button", {type: "button", class: "danger",
        id: "forget-memory", onclick: () => askForget("memory", unit.id, `Forget this memory?\n\n\u201c${unit.restatement}\u201d`,
                                                      false)}, "Forget this memory\u2026")));
    for (const item of document.querySelectorAll(".timeline li.item"))
      item.classList.toggle("selected", item.dataset.id === state.m);
  }

  // -- recall --------------------------------------------------------------------------------
  // `show`: switch to the recall tab (not when a forget runs the shown recall again).
  async function runRecall(query, show = true) {
    if (!state.ns) throw new Error("choose a namespace first");
    $("recall-button").disabled = true;
    $("recall-meta").textContent = "Recalling\u2026";
    if (show && state.tab !== "recall") go({tab: "recall"});
    try {
      lastRecall = await api("recall", null, {namespace: state.ns, query, k: parseInt($("k").value, 10) || 10});
    } finally { $("recall-button").disabled = false; }
    drawRecall();
  }

  function drawRecall() {
    const result = lastRecall;
    if (!result) return;
    $("recall-meta").textContent = `\u201c${result.query}\u201d \u00b7 ${result.memories.length} memories \u00b7 ` +
      `${result.rounds.length} round${result.rounds.length === 1 ? "" : "s"} \u00b7 ${result.seconds} s`;
    $("recall-memories").replaceChildren(...result.memories.map((unit) => itemRow(unit,
      el("span", {class: "score"}, `${unit.score.toFixed(3)} \u00b7 ${unit.found_by.join("+")}` +
                                    (unit.anchor ? " \u00b7 anchor" : "")))));
    $("rounds").replaceChildren(...result.rounds.map((round) => el("div", {class: "round"},
      el("b", {}, `Round ${round.round + 1}`), ": ", round.sufficient ? "sufficient" : "not sufficient",
      round.reason ? ` \u2014 ${round.reason}` : "",
      el("div", {class: "muted"}, `first hop: ${Object.entries(round.first_hop).map(([view, ids]) =>
        `${view} ${ids.length}`).join(", ")}; ${round.anchors.length} anchors; ${round.expanded.length} added by expansion`))));
    $("picture").srcdoc = result.picture;
    document.body.dataset.recalled = String(Number(document.body.dataset.recalled || 0) + 1);
  }

  // -- forgetting ----------------------------------------------------------------------------
  function askForget(what, target, question, typed) {
    const dialog = $("confirm");
    $("confirm-text").textContent = question + " This cannot be undone.";
    $("confirm-target").textContent = target;
    $("confirm-typed-row").hidden = !typed;
    $("confirm-typed").value = "";
    $("confirm-ok").disabled = typed;
    $("confirm-typed").oninput = () => { $("confirm-ok").disabled = $("confirm-typed").value !== target; };
    $("confirm-cancel").onclick = () => dialog.close();
    $("confirm-ok").onclick = guarded(async () => {
      dialog.close();
      const report = await api("forget", null, {namespace: state.ns, what, target, confirm: target});
      notice(`${report.summary}; ${report.files.length} file${report.files.length === 1 ? "" : "s"} rewritten ` +
             `so nothing of ${report.unit_ids.length === 1 ? "it" : "them"} remains.`);
      const gone = new Set(report.unit_ids);
      const reset = {offset: 0};
      if (gone.has(state.m)) reset.m = "";
      if (what !== "memory") reset[what] = "";
      await loadNamespaces().catch(() => null);
      overview = null;
      stale = true;
      go(reset, true);
      if (lastRecall) await runRecall(lastRecall.query, false);
    });
    dialog.showModal();
  }

  // -- putting it together -------------------------------------------------------------------
  async function render() {
    const before = shown;
    state = readHash();
    shown = {...state};
    for (const li of $("namespaces").children) li.classList.toggle("selected", li.dataset.ns === state.ns);
    for (const button of document.querySelectorAll(".tabs button"))
      button.setAttribute("aria-selected", String(button.dataset.tab === state.tab));
    $("timeline-tab").hidden = state.tab !== "timeline";
    $("recall-tab").hidden = state.tab !== "recall";
    $("text").value = state.text;
    $("order").value = state.order;
    if (!state.ns) return;
    const work = [];
    if (before.ns !== state.ns || !overview) work.push(loadOverview());
    else drawFacets();
    if (before.ns !== state.ns || before.offset !== state.offset || before.order !== state.order ||
        FILTERS.some((key) => before[key] !== state[key]) || firstTimeline || stale) {
      stale = false;
      work.push(loadTimeline());
    }
    if (before.m !== state.m || before.ns !== state.ns) work.push(loadMemory());
    await Promise.all(work);
  }

  $("prev").onclick = () => go({offset: Math.max(0, state.offset - 50)});
  $("next").onclick = () => go({offset: state.offset + 50});
  $("order").onchange = () => go({order: $("order").value, offset: 0});
  $("filters").onsubmit = (event) => { event.preventDefault(); go({text: $("text").value.trim(), offset: 0}); };
  $("text").onsearch = () => go({text: $("text").value.trim(), offset: 0});
  $("recall-form").onsubmit = (event) => {
    event.preventDefault();
    const query = $("query").value.trim();
    if (query) guarded(runRecall)(query);
  };
  for (const button of document.querySelectorAll(".tabs button")) button.onclick = () => go({tab: button.dataset.tab});
  window.addEventListener("hashchange", guarded(render));
  $("read-only").hidden = !readOnly;

  guarded(async () => {
    const namespaces = await loadNamespaces();
    if (!readHash().ns && namespaces.length) go({ns: namespaces[0].namespace}, true);
    else await render();
  })();
})();
