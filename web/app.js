// swiped's web front end: the movie list, swiped with Pointer Events, kept live by `subscribe`.
// This tab is one client of the daemon (one swipe engine); the daemon decides every gesture,
// the page sends the finger's movement and draws the Row each reply carries.
import { Connection } from "./connection.js";
import { RowView } from "./rows.js";

const params = new URLSearchParams(location.search);
if (params.get("dir") === "rtl" || params.get("dir") === "ltr") document.documentElement.dir = params.get("dir");
const direction = getComputedStyle(document.documentElement).direction === "rtl" ? "rtl" : "ltr";

const list = document.getElementById("list");
const statusEl = document.getElementById("status");
const readonlyEl = document.getElementById("readonly");
const toastEl = document.getElementById("toast");
const toastText = document.getElementById("toast-text");
const toastUndo = document.getElementById("toast-undo");
const announceEl = document.getElementById("announce");

/** movie id -> RowView, in no particular order (the DOM holds the list order). */
const views = new Map();
let layout = { leading: [], trailing: [] };
let movieLayout = null;    // the daemon's movie layout (`configure` without arguments), once known
let lastSeq = -1;          // the latest event seq this page has applied
let width = 390;           // the row width in CSS px, sent as the viewport
let writer = true;

// --- Frames ------------------------------------------------------------------------------------
// Replies are applied in the next animation frame, then every moving row is drawn. Nothing in a
// frame reads layout.
const incoming = [];       // [view, row, releaseVelocity]
const active = new Set();  // views whose spring still moves
let frameRequested = false;
let lastFrame = 0;

function requestFrame() {
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(frame);
}

function frame(now) {
  frameRequested = false;
  const dt = lastFrame === 0 ? 1 / 60 : Math.min((now - lastFrame) / 1000, 0.1);
  lastFrame = now;
  for (const [view, row, vx] of incoming) {
    view.apply(row, vx);
    active.add(view);
  }
  incoming.length = 0;
  for (const view of active) {
    view.draw(dt, width);
    if (!view.moving) active.delete(view);
  }
  if (active.size > 0) requestFrame();
  else lastFrame = 0;
}

function showRow(row, releaseVelocity) {
  const view = views.get(row.movie);
  if (!view || view.removing) return;
  incoming.push([view, row, releaseVelocity]);
  requestFrame();
}

// --- The connection -----------------------------------------------------------------------------
const scheme = location.protocol === "https:" ? "wss:" : "ws:";
const conn = new Connection(`${scheme}//${location.host}/`, { onHello, onEvent, onState });

// A page kept in the back/forward cache leaves the daemon (others stop seeing its fingers); it
// comes back as after a reconnect, catching up from its last seq.
addEventListener("pagehide", (e) => { if (e.persisted) conn.suspend(); });
addEventListener("pageshow", (e) => { if (e.persisted) conn.resume(); });

function onState(state, detail) {
  statusEl.dataset.state = state;
  document.body.classList.toggle("offline", state !== "online");
  if (state === "online") statusEl.textContent = `Online · client ${detail.client}`;
  else if (state === "offline") statusEl.textContent = `Offline — reconnecting in ${Math.ceil(detail / 1000)} s…`;
  else statusEl.textContent = "Connecting…";
  if (state === "offline") {
    // The daemon forgets a connection's recording, sharing and watching with the connection.
    clearPeers();
    if (recording) recordingLost();
  }
}

async function onHello(hello, isReconnect) {
  writer = hello.writer !== false;
  readonlyEl.hidden = writer;
  // A new connection is a new swipe engine: every row is closed there.
  gesture = null;
  for (const view of views.values()) view.reset();
  incoming.length = 0;
  for (const view of views.values()) active.add(view);
  requestFrame();
  const viewport = conn.request("viewport", { width, direction });
  // No arguments: the movie layout, which it answers; with "Ask before deleting" on, that layout
  // asking, sent before anything that could swipe (the daemon answers in order).
  const asking = askBox.checked;
  let configured = conn.request("configure", asking && movieLayout ? askingLayout(movieLayout) : {});
  if (asking && !movieLayout) {
    const reply = await configured;
    if (reply.ok) movieLayout = reply.layout;
    configured = reply.ok ? conn.request("configure", askingLayout(movieLayout)) : Promise.resolve(reply);
  }
  const listed = isReconnect ? null : conn.request("list");
  const subscribed = isReconnect ? conn.request("subscribe", { from: lastSeq }) : null;
  const sized = await viewport;
  if (!sized.ok) complain("viewport", sized);  // rows then keep the daemon's default width, 390
  const reply = await configured;
  if (reply.ok) {
    layout = reply.layout;
    if (!asking) movieLayout = reply.layout;
  } else complain("configure", reply);  // the actions stay as the last layout said
  if (listed) {
    const movies = await listed;
    if (!movies.ok) return complain("list", movies);
    lastSeq = movies.seq;
    reconcile(movies.movies);
    const sub = await conn.request("subscribe", { from: lastSeq });
    if (!sub.ok) complain("subscribe", sub);
  } else {
    const sub = await subscribed;
    if (!sub.ok) {
      // `from` past the daemon's latest seq: this is not the log the page knew (a new state).
      console.warn("swiped: cannot catch up from seq", lastSeq, sub.error, "; listing again");
      const movies = await conn.request("list");
      if (!movies.ok) return complain("list", movies);
      lastSeq = movies.seq;
      reconcile(movies.movies);
      const again = await conn.request("subscribe", { from: lastSeq });
      if (!again.ok) complain("subscribe", again);
    }
  }
  for (const view of views.values()) view.setMovie(view.movie, actionsFor(view.movie));
  // Sharing and watching are the connection's: a new one is told again what the toggles say.
  if (shareBox.checked) sendShare();
  if (watchBox.checked) sendWatch();
}

function onEvent(message) {
  if (message.event === "movie") {
    if (message.seq <= lastSeq) return;  // already applied (the list included it)
    lastSeq = message.seq;
    const movie = message.movie;
    if (message.kind === "removed") removeView(movie.id);
    else if (!views.has(movie.id)) {
      addView(movie);
      // A restored movie goes back to its old place, which the event does not say: ask the list.
      if (message.kind !== "added") refreshOrder();
    } else views.get(movie.id).setMovie(movie, actionsFor(movie));
  } else if (message.event === "row") {
    if (message.removed) removeView(message.row.movie);
    else showRow(message.row);
    if (message.cancelled === "timeout") announce(`Not confirmed: “${titleOf(message.row.movie)}” stays.`);
  } else if (message.event === "peer-row") {
    // Events that were on their way when the page stopped watching are dropped.
    if (watchBox.checked) peerRow(message.client, message.viewport, message.row);
  } else if (message.event === "bye") {
    console.info("swiped: the daemon said bye:", message.reason);
  }
  // Other events (a later protocol 1's) are ignored, as protocol.md asks.
}

function complain(what, reply) {
  console.error(`swiped: ${what} failed:`, reply.error);
  if (reply.error?.code !== "offline") toast(`${what}: ${reply.error?.message ?? "failed"}`);
}

/** The accessibility actions of a movie's row from the layout (before any Row arrives). */
function actionsFor(movie) {
  const label = (a) => (flagOf(movie, a.action) && a.activeLabel ? a.activeLabel : a.label ?? a.action);
  return [
    ...layout.leading.map((a) => ({ action: a.action, label: label(a), destructive: a.role === "destructive", edge: "leading" })),
    ...layout.trailing.map((a) => ({ action: a.action, label: label(a), destructive: a.role === "destructive", edge: "trailing" })),
  ];
}
function flagOf(movie, action) {
  return action === "watched" ? movie.watched : action === "watched-with-friends" ? movie.watchedWithFriends : false;
}

// --- The list -----------------------------------------------------------------------------------
function addView(movie, before = null) {
  const view = new RowView(movie, actionsFor(movie));
  views.set(movie.id, view);
  list.insertBefore(view.el, before);
  drawGhost(movie.id);  // someone's finger may already be on it
  return view;
}

/** Makes the list exactly `movies`, in that order, reusing rows. */
function reconcile(movies) {
  const keep = new Set(movies.map((m) => m.id));
  for (const [id, view] of views) if (!keep.has(id)) { view.el.remove(); views.delete(id); }
  let next = list.firstElementChild;
  for (const movie of movies) {
    let view = views.get(movie.id);
    if (view) view.setMovie(movie, actionsFor(movie));
    else view = addView(movie, next);
    if (view.el !== next) list.insertBefore(view.el, next);
    else next = next.nextElementSibling;
  }
  while (next) { const after = next.nextElementSibling; if (!views.has(next.dataset.movie)) next.remove(); next = after; }
}

let orderRequested = false;
async function refreshOrder() {
  if (orderRequested) return;
  orderRequested = true;
  const movies = await conn.request("list");
  orderRequested = false;
  if (movies.ok) reconcile(movies.movies);
  else complain("list", movies);
}

/** Titles of movies removed while this page was open, for the Undo toast (its reply may come
 * after the removal's event). */
const removedTitles = new Map();

/** Animates a row away (whoever removed its movie), then drops it. */
function removeView(id) {
  const view = views.get(id);
  if (!view || view.removing) return;
  view.removing = true;
  removedTitles.set(id, view.movie.title);
  views.delete(id);
  for (const peer of peers.values()) peer.rows.delete(id);  // its ghost goes with it (a restore starts clean)
  active.delete(view);
  if (gesture?.view === view) gesture = null;
  const el = view.el;
  const wasFocused = el.contains(document.activeElement);
  const next = rowBeside(el, true) ?? rowBeside(el, false);
  el.classList.add("removing");
  el.removeAttribute("tabindex");
  el.setAttribute("aria-hidden", "true");
  if (wasFocused && next) next.focus({ preventScroll: true });
  setTimeout(() => el.remove(), 350);
}

// --- Pointer gestures -----------------------------------------------------------------------------
// One gesture at a time. The first movement past 8 px decides: mostly horizontal, a swipe (the
// row captures the pointer and sends `drag`); mostly vertical, a scroll (touch: the browser pans,
// `touch-action: pan-y`, and cancels the pointer; mouse and pen: the page scrolls the list).
const SLOP = 8;
let gesture = null;

list.addEventListener("pointerdown", (e) => {
  if (gesture || !e.isPrimary || (e.pointerType === "mouse" && e.button !== 0)) return;
  const li = e.target.closest(".row");
  if (!li || e.target.closest(".a11y-actions")) return;
  const view = views.get(li.dataset.movie);
  if (!view || view.removing) return;
  gesture = {
    view, id: e.pointerId, type: e.pointerType, x0: e.clientX, y0: e.clientY,
    scroll0: list.scrollTop, kind: null, dx: 0, sentDx: null, inFlight: false, samples: [],
  };
});

list.addEventListener("pointermove", (e) => {
  const g = gesture;
  if (!g || e.pointerId !== g.id) return;
  const dx = e.clientX - g.x0;
  const dy = e.clientY - g.y0;
  if (g.kind === null) {
    if (Math.hypot(dx, dy) < SLOP) return;
    g.kind = Math.abs(dx) > Math.abs(dy) ? "swipe" : "scroll";
    if (g.kind === "swipe" || g.type !== "touch") g.view.el.setPointerCapture(e.pointerId);
  }
  if (g.kind === "scroll") {
    if (g.type !== "touch") list.scrollTop = g.scroll0 - dy;
    return;
  }
  e.preventDefault();
  g.dx = dx;
  g.samples.push([e.timeStamp, e.clientX]);
  while (g.samples.length > 2 && e.timeStamp - g.samples[0][0] > 100) g.samples.shift();
  sendDrag(g);
});

/** Sends the latest dx, one drag in flight at a time (the next goes when its reply is in). */
function sendDrag(g) {
  if (g.inFlight || g.sentDx === g.dx || g.ended) return;
  g.inFlight = true;
  g.sentDx = g.dx;
  conn.request("drag", { movie: g.view.movie.id, dx: g.dx }).then((reply) => {
    g.inFlight = false;
    if (reply.ok) showRow(reply.row);
    else if (reply.error?.code === "not-found") removeView(g.view.movie.id);
    if (gesture === g) sendDrag(g);
  });
}

/** The release velocity in CSS px (points) per second, from the last ~100 ms of movement. */
function velocity(g, now) {
  const s = g.samples.filter(([t]) => now - t <= 100);
  if (s.length < 2) return 0;
  const [t0, x0] = s[0];
  const [t1, x1] = s[s.length - 1];
  return t1 - t0 < 1 ? 0 : ((x1 - x0) / (t1 - t0)) * 1000;
}

list.addEventListener("pointerup", (e) => {
  const g = gesture;
  if (!g || e.pointerId !== g.id) return;
  gesture = null;
  if (g.kind !== "swipe") return;
  g.ended = true;
  const dx = e.clientX - g.x0;
  const vx = velocity(g, e.timeStamp);
  const movie = g.view.movie.id;
  conn.request("release", { movie, dx, vx: Math.max(-1e6, Math.min(1e6, vx)) }).then((reply) => handleFire(reply, movie, vx));
});

list.addEventListener("pointercancel", (e) => {
  const g = gesture;
  if (!g || e.pointerId !== g.id) return;
  gesture = null;
  g.ended = true;
  // The browser took the gesture (a pan, a zoom): no row is ever left dragging.
  if (g.kind === "swipe" && g.sentDx !== null) closeRow(g.view.movie.id);
});

// A click (a tap, or Enter/Space on a focused button) on a revealed button taps it; on the
// content of an open row, closes it; on an accessibility action, performs it.
list.addEventListener("click", (e) => {
  const li = e.target.closest(".row");
  const view = li && views.get(li.dataset.movie);
  if (!view) return;
  const button = e.target.closest(".buttons button");
  const perform = e.target.closest("[data-perform]");
  if (button && button.dataset.action) {
    const movie = view.movie.id;
    conn.request("tap", { movie, action: button.dataset.action }).then((reply) => handleFire(reply, movie));
  } else if (perform) {
    const movie = view.movie.id;
    conn.request("perform", { movie, action: perform.dataset.perform }).then((reply) => handleFire(reply, movie));
  } else if (e.target.closest(".content") && view.row && view.row.phase !== "closed") {
    closeRow(view.movie.id);
  }
});

function closeRow(movie) {
  conn.request("close", { movie }).then((reply) => { if (reply.ok) showRow(reply.row); });
}

/** A reply to release, tap or perform: draw its row; a delete offers Undo; read-only says so. */
function handleFire(reply, movie, vx) {
  if (!reply.ok) {
    if (reply.error?.code === "forbidden") {
      // The row stays as the gesture left it: settle it, and say why nothing happened.
      toast("Read-only: this change is not allowed here.");
      closeRow(movie);
    } else if (reply.error?.code === "not-found") removeView(movie);
    else complain(reply.error?.code ?? "request", reply);
    return;
  }
  showRow(reply.row, vx);
  if (reply.pending) {
    // The row asks (rule 10): its one button reads the confirmLabel; a second tap, Enter or the
    // same action within 3 s fires it.
    const label = actionLabel(reply.pending.action);
    announce(`${label} “${titleOf(movie)}”? Press ${label} again within 3 seconds to confirm.`);
  }
  const fired = reply.fired;
  if (fired?.error) toast(`${fired.action} failed: ${fired.error.message}`);
  else if (fired?.action === "delete" && typeof fired.seq === "number") {
    toast(`Deleted “${titleOf(movie)}”`, () => conn.request("restore", { movie, expect: fired.seq }).then((r) => {
      if (!r.ok) toast(`Undo failed: ${r.error?.message ?? "not connected"}`);
    }));
  }
}

// --- Keyboard -------------------------------------------------------------------------------------
// The row the keyboard is on shows its actions under it (class show-actions), from the key or the
// keyboard focus that got there until the focus leaves the row: its buttons stay shown while Tab
// walks through them (a focused button that stopped being displayed would drop the focus to
// <body>, as a `:focus-visible` rule did). One row at a time. A pointer that focuses a row does
// not show them, so that nothing moves under a finger.
let actionsRow = null;
let lastRow = null;  // the row the focus was last in
function showActions(li) {
  if (li === actionsRow) return;
  actionsRow?.classList.remove("show-actions");
  actionsRow = li;
  li?.classList.add("show-actions");
}
list.addEventListener("focusin", (e) => {
  const li = e.target.closest(".row");
  if (li) lastRow = li;
  if (li && e.target.matches(":focus-visible")) showActions(li);
  else if (li !== actionsRow) showActions(null);
});
list.addEventListener("focusout", (e) => {
  if (!actionsRow?.contains(e.relatedTarget)) showActions(null);
});

/** The row after (or before) `li` that can take the focus: rows going away cannot. */
function rowBeside(li, forward) {
  let el = forward ? li.nextElementSibling : li.previousElementSibling;
  while (el && el.classList.contains("removing")) el = forward ? el.nextElementSibling : el.previousElementSibling;
  return el;
}

const ROW_KEYS_ON_BUTTONS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Escape"]);

list.addEventListener("keydown", (e) => {
  const li = e.target.closest?.(".row");
  if (!li || li.classList.contains("removing")) return;
  const view = views.get(li.dataset.movie);
  if (!view) return;
  // Before Tab moves on, the actions it goes through show: this row's, or on Shift-Tab from the
  // row itself the row before's (its last action comes before this row).
  if (e.key === "Tab" && e.shiftKey && e.target === li) showActions(rowBeside(li, false));
  else showActions(li);
  // On one of the row's buttons, Enter and Space are the button's; the arrows and Escape are the
  // row's (Escape also takes the focus back to the row).
  if (e.target !== li && !ROW_KEYS_ON_BUTTONS.has(e.key)) return;
  const movie = view.movie.id;
  const offset = view.row?.offset ?? 0;
  // The edge on each physical side: in rtl the leading edge is the right one.
  const rightEdge = direction === "rtl" ? "leading" : "trailing";
  const leftEdge = direction === "rtl" ? "trailing" : "leading";
  switch (e.key) {
    case "ArrowLeft":   // the content moves left: reveal the right edge, or close the left one
    case "ArrowRight": {
      const left = e.key === "ArrowLeft";
      if (left ? offset > 0 : offset < 0) closeRow(movie);
      else {
        const edge = left ? rightEdge : leftEdge;
        if (layout[edge].length === 0) return;
        conn.request("open", { movie, edge }).then((r) => (r.ok ? showRow(r.row) : complain("open", r)));
      }
      break;
    }
    case "Enter": {
      // Fires the outermost revealed button: the one a full swipe would fire.
      const buttons = view.row?.phase === "open" || view.row?.phase === "confirming" ? view.row.buttons : [];
      if (buttons.length === 0) return;
      const outer = offset < 0 ? buttons[buttons.length - 1] : buttons[0];
      conn.request("tap", { movie, action: outer.action }).then((reply) => handleFire(reply, movie));
      break;
    }
    case "Escape": closeRow(movie); if (e.target !== li) li.focus(); break;
    case "ArrowDown": rowBeside(li, true)?.focus(); break;
    case "ArrowUp": rowBeside(li, false)?.focus(); break;
    default: return;
  }
  e.preventDefault();
});

function titleOf(movie) {
  return views.get(movie)?.movie.title ?? removedTitles.get(movie) ?? movie;
}
function actionLabel(action) {
  return [...layout.leading, ...layout.trailing].find((a) => a.action === action)?.label ?? action;
}

/** Says `text` to screen readers (a polite live region); the row shows it already. */
function announce(text) {
  announceEl.textContent = "";
  announceEl.textContent = text;
}

// --- Ask before deleting (issue 29) -----------------------------------------------------------------
// A setting of this browser (localStorage): `configure` replaces the whole layout, so it sends the
// movie layout (as the daemon answers it: leading Watched and With Friends, trailing Delete) with
// `confirm` on delete: a delete then waits for a tap on its "Delete?" button (rule 10). Off, it
// sends `configure` without arguments: the movie layout again. Each new connection is told too
// (onHello): a layout is the connection's.
const ASK_KEY = "swiped.askBeforeDeleting";
const askBox = document.getElementById("ask-delete");
askBox.checked = storedAsk();
askBox.addEventListener("change", () => {
  try {
    localStorage.setItem(ASK_KEY, askBox.checked ? "1" : "0");
  } catch (error) {
    console.warn("swiped: cannot keep Ask before deleting in localStorage (it holds for this page only):", error);
  }
  sendAsk();
});

function storedAsk() {
  try {
    return localStorage.getItem(ASK_KEY) === "1";
  } catch (error) {
    console.warn("swiped: cannot read localStorage; Ask before deleting starts off:", error);
    return false;
  }
}

/** `layout` with its delete action asking first. */
function askingLayout(base) {
  const ask = (a) => (a.action === "delete" ? { ...a, confirm: true, confirmLabel: "Delete?" } : a);
  return { ...base, leading: base.leading.map(ask), trailing: base.trailing.map(ask) };
}

async function sendAsk() {
  const on = askBox.checked;
  // Offline: nothing to tell; the next connection is told in onHello.
  if (!conn.open) return;
  if (on && !movieLayout) {
    const plain = await conn.request("configure");
    if (!plain.ok) return complain("configure", plain);
    movieLayout = plain.layout;
  }
  const reply = await conn.request("configure", on ? askingLayout(movieLayout) : {});
  if (askBox.checked !== on) return;  // toggled again meanwhile: that request's reply decides
  if (!reply.ok) return complain("configure", reply);
  layout = reply.layout;
  closedNow(reply.closed);
  for (const view of views.values()) view.setMovie(view.movie, actionsFor(view.movie));
}

// --- Toast ----------------------------------------------------------------------------------------
let toastTimer = 0;
let toastAction = null;
function toast(text, undo = null) {
  toastText.textContent = text;
  toastAction = undo;
  if (undo === null) leaveToast();
  toastUndo.hidden = undo === null;
  toastEl.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { leaveToast(); toastEl.hidden = true; toastAction = null; }, 5000);
}
/** Before Undo goes away with the focus on it: the focus goes back to the row it came from (or
 * the first row), not to <body>. */
function leaveToast() {
  if (!toastEl.contains(document.activeElement)) return;
  const row = lastRow?.isConnected && !lastRow.classList.contains("removing") ? lastRow : list.querySelector(".row:not(.removing)");
  row?.focus({ preventScroll: true });
}
toastUndo.addEventListener("click", () => {
  const action = toastAction;
  leaveToast();
  toastEl.hidden = true;
  toastAction = null;
  clearTimeout(toastTimer);
  if (action) action();
});

// --- The row width --------------------------------------------------------------------------------
// Measured here only, when the list resizes; a new viewport closes every row in the daemon.
new ResizeObserver((entries) => {
  const w = Math.round(entries[entries.length - 1].contentRect.width);
  const clamped = Math.max(100, Math.min(4000, w));
  if (clamped === width) return;
  width = clamped;
  if (conn.open) conn.request("viewport", { width, direction }).then((reply) => {
    if (reply.ok) closedNow(reply.closed);
    requestFrame();
  });
  for (const movie of ghostMovies()) drawGhost(movie);  // ghosts are scaled to this width
}).observe(list);

/** Rows the daemon closed at once (a new viewport, a recording's start): drawn closed now. */
function closedNow(ids) {
  for (const id of ids) { const v = views.get(id); if (v) { v.reset(); active.add(v); } }
  requestFrame();
}

// --- Ghost rows (issue 18) --------------------------------------------------------------------------
// Another person's finger on a row, drawn faint at its offset under this page's own; null hides it.
// `label` says whose it is.
export function setGhost(movie, offset, label = "") {
  const view = views.get(movie);
  if (!view) return false;
  view.ghostOffset = offset;
  view.ghostLabel = label;
  active.add(view);
  requestFrame();
  return true;
}

// Two toggles, because they are two different things: "Share my fingers" (`share`) lets others
// see this tab's rows; "Show others' fingers" (`peers {watch}`) draws the rows others share.
// Watching never shares: a person's fingers stay private until they tick the first.
const shareBox = document.getElementById("share");
const watchBox = document.getElementById("watch");

/** Sharing clients' rows that are not closed: client -> {viewport, rows: movie -> {offset, at}}. */
const peers = new Map();
let peerTick = 0;  // orders peer rows by arrival: the latest finger on a row is the one drawn

shareBox.addEventListener("change", () => sendShare());
watchBox.addEventListener("change", () => sendWatch());

async function sendShare() {
  const on = shareBox.checked;
  const reply = await conn.request("share", { on });
  if (reply.ok || shareBox.checked !== on) return;
  // Offline: the toggle stays, and the next connection is told (onHello). Refused: it goes back.
  if (reply.error?.code === "offline") return;
  shareBox.checked = false;
  complain("share", reply);
}

async function sendWatch() {
  const on = watchBox.checked;
  const reply = await conn.request("peers", { watch: on });
  if (watchBox.checked !== on) return;  // toggled again meanwhile: that request's reply decides
  clearPeers();
  if (!reply.ok) {
    if (reply.error?.code === "offline") return;
    watchBox.checked = false;
    return complain("peers", reply);
  }
  // The reply is the present (every sharer's open rows); peer-row events follow it on the wire.
  if (on) for (const peer of reply.peers) for (const row of peer.rows) peerRow(peer.client, peer.viewport, row);
}

function peerRow(client, viewport, row) {
  let peer = peers.get(client);
  if (!peer) peers.set(client, (peer = { viewport, rows: new Map() }));
  peer.viewport = viewport;
  if (row.phase === "closed") peer.rows.delete(row.movie);
  else peer.rows.set(row.movie, { offset: row.offset, at: ++peerTick });
  if (peer.rows.size === 0) peers.delete(client);
  drawGhost(row.movie);
}

/** The movies some peer's finger is on. */
function ghostMovies() {
  const movies = new Set();
  for (const peer of peers.values()) for (const movie of peer.rows.keys()) movies.add(movie);
  return movies;
}

/** Draws the latest peer row of `movie` as this row's ghost, or none. The sharer's offset is in
 * its own viewport: scaled to this row's width, and mirrored when its direction is not this
 * page's, so that the ghost reveals the same edge (the same actions) as the sharer's finger. */
function drawGhost(movie) {
  let latest = null;
  for (const [client, peer] of peers) {
    const row = peer.rows.get(movie);
    if (row && (latest === null || row.at > latest.row.at)) latest = { row, viewport: peer.viewport, client };
  }
  if (latest === null) return setGhost(movie, null);
  const scale = width / latest.viewport.width;
  const mirror = latest.viewport.direction === direction ? 1 : -1;
  return setGhost(movie, latest.row.offset * scale * mirror, `client ${latest.client}`);
}

function clearPeers() {
  const movies = ghostMovies();
  peers.clear();
  for (const movie of movies) setGhost(movie, null);
}

// --- Recording (issue 18) -----------------------------------------------------------------------------
// Record starts recording this tab's connection (`record {on:true}`, which closes its rows);
// pressed again it stops, fetches `recording` and saves it as swiped-recording-TIME.json, which
// `swipectl replay FILE` replays. The daemon keeps a recording only as long as its connection:
// if the connection goes while recording, the page says the recording is lost.
const recordButton = document.getElementById("record");
const recordLabel = document.getElementById("record-label");
const idleTitle = recordButton.title;
let recording = null;  // {started, timer} while recording
let recordBusy = false;

recordButton.addEventListener("click", async () => {
  if (recordBusy) return;  // one start or stop at a time (not `disabled`: the button keeps focus)
  recordBusy = true;
  recordButton.setAttribute("aria-busy", "true");
  try {
    if (recording) await stopRecording();
    else await startRecording();
  } finally {
    recordBusy = false;
    recordButton.removeAttribute("aria-busy");
  }
});

async function startRecording() {
  const reply = await conn.request("record", { on: true });
  if (!reply.ok) return complain("record", reply);
  closedNow(reply.closed);
  const started = performance.now();
  const tick = () => {
    const s = Math.floor((performance.now() - started) / 1000);
    recordLabel.textContent = `Recording ${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  };
  recording = { started, timer: setInterval(tick, 1000) };
  tick();
  recordButton.setAttribute("aria-pressed", "true");
  recordButton.title = "Recording: press again to stop and save it as a file";
}

function recordingOff() {
  if (!recording) return;
  clearInterval(recording.timer);
  recording = null;
  recordLabel.textContent = "Record";
  recordButton.setAttribute("aria-pressed", "false");
  recordButton.title = idleTitle;
}

/** The connection closed before the recording was saved: the daemon dropped it with the connection. */
function recordingLost() {
  recordingOff();
  console.error("swiped: the connection closed while recording; the daemon dropped the recording");
  toast("Recording lost: the connection closed. Press Record to start again.");
}

async function stopRecording() {
  const stopped = await conn.request("record", { on: false });
  if (!stopped.ok) {
    // Offline: onState has already said the recording is lost (it runs before this reply).
    if (stopped.error?.code === "offline") return;
    return complain("record", stopped);  // still recording: pressing again tries again
  }
  recordingOff();
  const got = await conn.request("recording");
  if (!got.ok) {
    if (got.error?.code === "offline") return recordingLost();
    return complain("recording", got);
  }
  const name = `swiped-recording-${new Date().toISOString().replace(/\.\d+Z$/, "Z").replaceAll(":", "-")}.json`;
  download(name, JSON.stringify(got.recording) + "\n");
  const r = got.recording;
  toast(`Saved ${name}: ${r.inputs} inputs${r.cut ? `, cut at its cap of ${r.cap} (recording stopped there)` : ""}.`);
  console.info("swiped: saved the recording as", name);
}

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

window.swipedPage = { setGhost };
