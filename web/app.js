// swiped's web front end: the movie list, swiped with Pointer Events, kept live by `subscribe`.
// This tab is one client of the daemon (one swipe engine); the daemon decides every gesture,
// the page sends the finger's movement and draws the Row each reply carries.
import { Connection } from "./connection.js";
import { LAST_CHANGE, RowView } from "./rows.js";
import { MovieList } from "./model.js";

const params = new URLSearchParams(location.search);
if (params.get("dir") === "rtl" || params.get("dir") === "ltr") document.documentElement.dir = params.get("dir");
const direction = getComputedStyle(document.documentElement).direction === "rtl" ? "rtl" : "ltr";
// The help said with every movie (index.html) names ltr's arrows; the keys are mirrored in rtl.
if (direction === "rtl") {
  const help = document.getElementById("row-help");
  help.textContent = help.textContent.replace(/Right|Left/g, (arrow) => (arrow === "Right" ? "Left" : "Right"));
}

const list = document.getElementById("list");
const statusEl = document.getElementById("status");
const readonlyEl = document.getElementById("readonly");
const toastEl = document.getElementById("toast");
const toastText = document.getElementById("toast-text");
const toastUndo = document.getElementById("toast-undo");
const announceEl = document.getElementById("announce");
const filterBox = document.getElementById("filter");
const filterCount = document.getElementById("filter-count");
const noMatch = document.getElementById("no-match");
const accountEl = document.getElementById("account");
const whoEl = document.getElementById("who");
const signInButton = document.getElementById("sign-in");
const gateEl = document.getElementById("gate");
const gateText = document.getElementById("gate-text");
const gateButton = document.getElementById("gate-sign-in");

/** Every movie in list order, and the filter's matches (model.js). */
const model = new MovieList();
/** movie id -> RowView, for the rows in the DOM (a few screens of them, issue 33). */
const views = new Map();
let layout = { leading: [], trailing: [] };
let movieLayout = null;    // the daemon's movie layout (`configure` without arguments), once known
let lastSeq = -1;          // the latest event seq this page has applied
let logId = null;          // the log's id the last hello said: lastSeq is a seq of that log
let width = 390;           // the row width in CSS px, sent as the viewport
// Who this connection acts for (issue 45): hello's `user` (null: nobody, an anonymous page) and
// `role`, then the `role` events. `role` is null for a daemon older than roles, whose hello says
// only `writer`.
let user = null;
let role = null;
let writer = true;         // may change the list: role writer or admin (or hello's writer)

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
    if (view.movie.id !== row.movie || views.get(row.movie) !== view) continue;  // scrolled away meanwhile: rowState has it
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
  // Kept for the rows not in the DOM, or that leave it: drawn so when they come back.
  if (row.phase === "closed") rowState.delete(row.movie);
  else rowState.set(row.movie, row);
  const view = views.get(row.movie);
  if (!view || view.removing) return;
  incoming.push([view, row, releaseVelocity]);
  requestFrame();
}

// --- The connection -----------------------------------------------------------------------------
// The daemon's WebSocket is `ws` next to this page, resolved from the page's own address: a proxy
// that serves the page under a prefix (https://example.org/swiped/) serves it there too. Its
// scheme follows the page's (wss: under https:).
const socketURL = new URL("ws", location.href);
socketURL.protocol = location.protocol === "https:" ? "wss:" : "ws:";
const conn = new Connection(socketURL.href, { onHello, onEvent, onState });

// A page kept in the back/forward cache leaves the daemon (others stop seeing its fingers); it
// comes back as after a reconnect, catching up from its last seq.
addEventListener("pagehide", (e) => { if (e.persisted) conn.suspend(); });
addEventListener("pageshow", (e) => { if (e.persisted) conn.resume(); });

function onState(state, detail) {
  statusEl.dataset.state = state;
  document.body.classList.toggle("offline", state !== "online");
  if (state === "online") statusEl.textContent = `Online · client ${detail.client}`;
  else if (state === "offline") statusEl.textContent = `Offline — reconnecting in ${Math.ceil(detail / 1000)} s…`;
  else if (state === "stopped") statusEl.textContent = detail;  // closed on purpose: says why (accessRevoked)
  else statusEl.textContent = "Connecting…";
  if (state === "offline" || state === "stopped") {
    // The daemon forgets a connection's recording, sharing and watching with the connection.
    clearPeers();
    if (recording) recordingLost();
  }
}

/** Whether a page greeted before with `before` (a log's id, null when none was said) goes on
 * from its seqs with `hello`: not when the daemon now serves another log (imported or restored
 * meanwhile), whose seqs are not this page's. A hello without an id (an older daemon) tells
 * nothing either way. */
function sameLog(before, hello) {
  return typeof hello.log !== "string" || before === null || hello.log === before;
}

async function onHello(hello, isReconnect) {
  setAccess(typeof hello.user === "string" ? hello.user : null, typeof hello.role === "string" ? hello.role : null,
            hello.writer !== false);
  afterSignInOrOut();
  // Role none: only signing in works here (the gate says so); nothing else is asked, nor
  // retried: the connection stays, idle, until the page signs in and connects again.
  if (role === "none") return;
  // Another log: list it all again, as on the first hello, instead of catching up from a seq
  // that means nothing there; the Undo offered for a removal of the old log goes too. A page
  // that never listed (its first connection could not read) lists now.
  const listedBefore = lastSeq >= 0;
  const catchUp = isReconnect && listedBefore && sameLog(logId, hello);
  if (typeof hello.log === "string") logId = hello.log;
  if (isReconnect && listedBefore && !catchUp) {
    console.warn("swiped: the daemon serves another log now (imported or restored); listing again");
    endToast();
    removedTitles.clear();
  }
  // A new connection is a new swipe engine: every row is closed there.
  gesture = null;
  rowState.clear();
  for (const view of views.values()) view.reset();
  incoming.length = 0;
  for (const view of views.values()) active.add(view);
  requestFrame();
  const viewport = conn.request("viewport", { width, direction });
  // Threshold crossings in the replies to drags (issue 47: a haptic and a cue); a daemon that does
  // not know the option answers bad-request, and the page goes on without them.
  conn.request("options", { crossings: true });
  // No arguments: the movie layout, which it answers; with "Ask before deleting" on or another
  // full-swipe style, that layout as the settings say, sent before anything that could swipe
  // (the daemon answers in order).
  const custom = customLayout();
  let configured = conn.request("configure", custom && movieLayout ? settingsLayout(movieLayout) : {});
  if (custom && !movieLayout) {
    const reply = await configured;
    if (reply.ok) movieLayout = reply.layout;
    configured = reply.ok ? conn.request("configure", settingsLayout(movieLayout)) : Promise.resolve(reply);
  }
  const listed = catchUp ? null : conn.request("list");
  const subscribed = catchUp ? conn.request("subscribe", { from: lastSeq }) : null;
  const sized = await viewport;
  if (!sized.ok) complain("viewport", sized);  // rows then keep the daemon's default width, 390
  const reply = await configured;
  if (reply.ok) {
    layout = reply.layout;
    if (!custom) movieLayout = reply.layout;
  } else complain("configure", reply);  // the actions stay as the last layout said
  if (listed) {
    const movies = await listed;
    if (!movies.ok) return complain("list", movies);
    lastSeq = movies.seq;
    showList(movies.movies);
    hintOnFirstUse();
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
      showList(movies.movies);
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
    const author = authorOf(message);
    // The row says who changed it last (rows.js): nothing when the daemon names nobody.
    movie[LAST_CHANGE] = lastChange(message, author);
    if (message.kind === "removed") {
      removeMovie(movie.id);
      othersRemoval(movie, message.seq, author);
    } else if (message.kind === "moved") {
      // Issue 48: right after `after` (null: first), whoever moved it, this page included.
      movedMovie(movie, message.after ?? null);
    } else {
      // Back, by whoever: the Undo offered for its removal has nothing left to undo.
      if (message.kind === "restored" && toastRemoval?.movie === movie.id) endToast();
      restoreOrUpdate(movie, message.kind, message.after);
    }
  } else if (message.event === "row") {
    if (message.removed) removeMovie(message.row.movie);
    else showRow(message.row);
    if (message.cancelled === "timeout") announce(`Not confirmed: “${titleOf(message.row.movie)}” stays.`);
  } else if (message.event === "peer-row") {
    // Events that were on their way when the page stopped watching are dropped.
    if (watchBox.checked) peerRow(message.client, message.viewport, message.row);
  } else if (message.event === "role") {
    roleChanged(message);
  } else if (message.event === "bye") {
    console.info("swiped: the daemon said bye:", message.reason);
    if (message.reason === "revoked") accessRevoked();
  }
  // Other events (a later protocol 1's) are ignored, as protocol.md asks.
}

/** A movie event other than a removal or a move: the movie added, back, or changed in place.
 * `after`: where a restored movie went back (a daemon before moves says nothing: undefined). */
function restoreOrUpdate(movie, kind, after) {
  if (removing.has(movie.id)) {
    // Back (restored) while its row still goes away: it stays, where the event says.
    keepMovie(movie.id);
    updateMovie(movie);
    if (after !== undefined && asDaemon(() => placeMovie(movie.id, after)) !== undefined) render();
  } else if (model.get(movie.id) === undefined) {
    // A restored movie goes back where the event says, without listing again; an older daemon's
    // event does not say, and the model knows the old place when this page saw it go (model.js).
    if (kind === "added") addMovie(movie);
    else restoreMovie(movie, after);
  } else updateMovie(movie);
}

// --- Who made each change (issue 46) ----------------------------------------------------------------
// Each `movie` event names its author (`by`), unless the daemon names nobody for it: a change made
// before authors were kept, or an anonymous page's. A row says who changed it last ("watched by
// bob"), and another person's removal is said in the toast, with Undo for a page that may write.
const YOU = Symbol("you");
const SOMEONE = Symbol("someone");

/** Who made a movie event, as this page says it: YOU for this page's person (the same name from
 * any door is the same person: alice's terminal is alice), another person's name, SOMEONE when the
 * daemon names nobody for it though it names this page (an anonymous page's change), or null when
 * nothing can be told (an anonymous page cannot tell its own changes from another anonymous
 * page's, and a daemon before people names nobody). */
function authorOf(message) {
  if (typeof message.by === "string") return message.by === user ? YOU : message.by;
  return user !== null ? SOMEONE : null;
}

/** The row's line for its last change, "watched by bob", or null when nobody is named for it. */
function lastChange(message, author) {
  if (author === null || author === SOMEONE) return null;
  const movie = message.movie;
  const did = {
    "added": "added",
    "watched-toggled": movie.watched ? "watched" : "unwatched",
    "watched-with-friends-toggled": movie.watchedWithFriends ? "watched with friends" : "unwatched with friends",
    "restored": "restored",
    "moved": "moved",
  }[message.kind] ?? "changed";
  return `${did} by ${author === YOU ? "you" : author}`;
}

/** Another person's removal: said in the toast ("alice removed “Inception”"), with Undo (`restore`
 * with the removal's seq, as for this page's own delete) when this page may write. It never takes
 * the place of the Undo of this page's own delete while that shows: someone else's change does not
 * take a person's own undo away. */
function othersRemoval(movie, seq, author) {
  if (author === null || author === YOU) return;
  if (toastRemoval?.own && !toastEl.hidden) return;
  const who = author === SOMEONE ? "Someone" : author;
  const undo = writer ? () => conn.request("restore", { movie: movie.id, expect: seq }).then((r) => {
    if (!r.ok) toast(`Undo failed: ${r.error?.message ?? "not connected"}`);
  }) : null;
  toast(`${who} removed “${movie.title}”`, undo, { movie: movie.id, own: false });
}

function complain(what, reply) {
  console.error(`swiped: ${what} failed:`, reply.error);
  if (reply.error?.code === "overloaded") slowDown(reply.error);
  else if (reply.error?.code === "forbidden") toast(readOnlyWords());
  else if (reply.error?.code !== "offline") toast(`${what}: ${reply.error?.message ?? "failed"}`);
}

/** `overloaded`: this person's changes came faster than the daemon's rate limit (issue 45; its
 * `retryAfter` says how long until one would go, in ms), or the daemon's disk is behind. Said,
 * so that a change that did not happen is never silent. */
function slowDown(error) {
  const ms = error.retryAfter;
  if (typeof ms === "number") {
    // Tenths of a second under one, whole seconds from it, rounded up: never "0 s" nor "1.0 s".
    const wait = ms < 1000 ? Math.max(1, Math.ceil(ms / 100)) / 10 : Math.ceil(ms / 1000);
    toast(`Slow down: too many changes at once, this one was not made. Try again in ${wait} s.`);
  } else toast(`Slow down: swiped is busy, this change was not made (${error.message}).`);
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

// --- The list (virtualised, issue 33) ------------------------------------------------------------
// The DOM holds the rows in and near the view: the window, a screen above and below the one shown
// (a few screens of rows, whatever the list's length), between two spacers as tall as the rows not
// there. Rows are all ROW_HEIGHT tall (style.css), so a row's place is its index times that: no
// row is measured. A row scrolled out of the window goes back to a pool and shows another movie
// when one scrolls in; what it showed is kept by movie id (rowState, ghosts) and drawn again when
// that movie's row comes back. Two rows stay in the DOM out of the window, placed where they
// belong (class "pinned"): the list's Tab stop (below), so that the keyboard never loses it and
// Tab always finds it, and the one a finger drags. The list is a WAI-ARIA grid (issue 49): screen
// readers get its size from its aria-rowcount and each row's place from its aria-rowindex. The
// browser's scroll anchoring is off (style.css): the page keeps the rows on screen where they are
// itself when rows above them come or go.
//
// The grid is one Tab stop (a roving tabindex): one cell of one row, `current`, has tabindex 0,
// every other -1. It is the cell the focus was last in (focusin), so Tab from before the list and
// Shift-Tab from after it come back to it, wherever the list has scrolled since; it follows the
// keys (keydown), goes to the next row (or the one before, at the end) when its movie is removed,
// and to the first row shown when the filter hides it or the list is listed again.
const ROW_HEIGHT = parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--row-height")) || 56;
const topSpacer = spacer();
const bottomSpacer = spacer();
list.append(topSpacer, bottomSpacer);
const pool = [];            // RowViews out of the DOM, ready for another movie
const POOL_SIZE = 64;
const rowState = new Map(); // movie id -> the daemon's latest Row that is not closed
const ghosts = new Map();   // movie id -> {offset, label}: another finger on it (issue 18)
const removing = new Map(); // movie id -> timer: rows animating away, still in the model
let viewHeight = list.clientHeight;  // measured on resize
let windowStart = 0;        // the window: model.shown's indices [windowStart, windowEnd) in flow
let windowEnd = 0;
let rowCount = -1;          // the grid's aria-rowcount as last written
let current = null;         // the Tab stop: {movie, column} (column 0 the movie, i its i-th action), or null: no rows

function spacer() {
  const el = document.createElement("div");
  el.className = "spacer";
  el.setAttribute("aria-hidden", "true");
  return el;
}

// render()'s scratch, kept: it runs in every frame of a scroll, which should allocate little.
const renderWanted = new Map();
const renderEls = [];

/** Puts in the DOM the rows of the window and the pinned ones, in list order, reusing rows. */
function render() {
  const shown = model.shown;
  const n = shown.length;
  const screen = Math.max(4, Math.ceil(viewHeight / ROW_HEIGHT));
  const first = Math.max(0, Math.min(Math.floor(list.scrollTop / ROW_HEIGHT), n - screen));
  const start = Math.max(0, first - screen);
  const end = Math.min(n, first + 2 * screen + 1);
  const wanted = renderWanted;  // movie id -> index in shown
  wanted.clear();
  for (let i = start; i < end; i++) wanted.set(shown[i].id, i);
  // The Tab stop is on a row shown, not going away (one is when the list has any).
  if (current && (model.shownIndexOf(current.movie) < 0 || removing.has(current.movie.id))) current = null;
  if (!current && n > 0) {
    const first = beside(-1, +1);
    if (first) current = { movie: first, column: 0 };
  }
  const pins = [];
  for (const movie of pinnedMovies()) {
    const i = model.shownIndexOf(movie);
    if (i >= 0 && !wanted.has(shown[i].id)) { wanted.set(shown[i].id, i); pins.push(i); }
  }
  pins.sort((a, b) => a - b);
  for (const [id, view] of views) if (!wanted.has(id)) recycle(id, view);
  const els = renderEls;
  els.length = 0;
  for (const i of pins) if (i < start) els.push(place(shown, i, true));
  for (let i = start; i < end; i++) els.push(place(shown, i, false));
  for (const i of pins) if (i >= end) els.push(place(shown, i, true));
  topSpacer.style.height = `${start * ROW_HEIGHT}px`;
  bottomSpacer.style.height = `${(n - end) * ROW_HEIGHT}px`;
  if (n !== rowCount) {
    rowCount = n;
    list.setAttribute("aria-rowcount", String(n));
    // A grid must have rows (axe's aria-required-children): without any (before the list comes, a
    // filter that matches nothing, which #no-match says) it is hidden from screen readers.
    if (n === 0) list.setAttribute("aria-hidden", "true");
    else list.removeAttribute("aria-hidden");
  }
  // The rows kept are in list order already, unless a movie moved (issue 48): new ones are
  // inserted, and rows out of order moved with moveBefore where the browser has it, which keeps
  // the focus in a row it moves (insertBefore drops it: it is given back).
  const focused = document.activeElement;
  let next = topSpacer.nextElementSibling;
  for (const el of els) {
    if (el === next) next = next.nextElementSibling;
    else if (el.parentNode === list && list.moveBefore) list.moveBefore(el, next);
    else list.insertBefore(el, next);
  }
  if (document.activeElement !== focused && list.contains(focused)) focused.focus({ preventScroll: true });
  windowStart = start;
  windowEnd = end;
  if (reorder?.moved) drawReorder();
}

/** The movies whose rows stay in the DOM wherever the list is scrolled: the Tab stop's (the
 * focus is in it when it is in the list: focusin), the swiped one's and the one moved by its
 * handle (issue 48). */
function pinnedMovies() {
  const movies = [];
  if (current) movies.push(current.movie);
  if (gesture) movies.push(gesture.view.movie);
  if (reorder) movies.push(reorder.view.movie);
  return movies;
}

/** The row of shown[i], from the DOM, the pool or new. */
function place(shown, i, pinned) {
  const movie = shown[i];
  let view = views.get(movie.id);
  if (!view) {
    view = pool.pop() ?? new RowView(movie, actionsFor(movie));
    bind(view, movie);
    views.set(movie.id, view);
  } else if (view.movie !== movie) {
    view.setMovie(movie, actionsFor(movie));  // changed while in the DOM, or listed again
  }
  view.setPosition(i + 1);
  view.setTabStop(current?.movie.id === movie.id ? current.column : null);
  if (pinned !== view.el.classList.contains("pinned")) view.el.classList.toggle("pinned", pinned);
  if (pinned) view.el.style.top = `${i * ROW_HEIGHT}px`;
  else if (view.el.style.top !== "") view.el.style.top = "";
  return view.el;
}

/** A row from the pool shows `movie` as this page last knew it: its Row, its ghost, going away. */
function bind(view, movie) {
  view.rebind(movie, actionsFor(movie));
  const row = rowState.get(movie.id);
  if (row) {
    view.apply(row);
    view.offset = view.target;  // where the row is now: no spring from another movie's offset
  }
  const ghost = ghosts.get(movie.id);
  if (ghost) { view.ghostOffset = ghost.offset; view.ghostLabel = ghost.label; }
  if (removing.has(movie.id)) markRemoving(view);
  view.draw(0, width);
}

function recycle(id, view) {
  views.delete(id);
  active.delete(view);
  if (actionsRow === view.el) actionsRow = null;
  view.el.remove();
  if (pool.length < POOL_SIZE) pool.push(view);
}

list.addEventListener("scroll", () => render(), { passive: true });

/** A `list` reply: the model, parsed once and used as it is (model.js), and the window. */
function showList(movies) {
  for (const timer of removing.values()) clearTimeout(timer);
  removing.clear();
  const focused = list.contains(document.activeElement);
  localMoves = [];  // the list says where everything is now; their replies change nothing
  model.reset(movies);
  // The Tab stop stays on its movie when the new list has it (the objects are new: a movie's place
  // is looked up by the new one's), else goes to the first row (render).
  const again = current && model.get(current.movie.id);
  current = again ? { movie: again, column: current.column } : null;
  render();
  if (focused && current) focusMovie(current.movie, true, current.column);
  showCount();
  if (document.activeElement === filterBox) prepareFilter();
}

/** Folds the titles for the filter while the page is idle, from when the filter box gets the
 * focus (a person then takes longer to type than this takes), so that the first keystroke does
 * not fold 100,000 titles; not before, because it gives each movie a string of its own, which a
 * page nobody filters need not hold, nor make while rows are dragged. */
let preparing = false;
function prepareFilter() {
  if (preparing) return;
  preparing = true;
  let from = 0;
  const step = (deadline) => {
    from = model.prepare(from, () => deadline.timeRemaining() > 2);
    if (from >= 0) requestIdleCallback(step);
    else preparing = false;
  };
  requestIdleCallback(step);
}

/** Whether shown[index]'s row is on screen (in the viewport, not only in the window). */
function onScreen(index) {
  const y = index * ROW_HEIGHT;
  const top = list.scrollTop;
  return y + ROW_HEIGHT > top && y < top + viewHeight;
}

/** Scrolls as little as puts shown[index] on screen, and renders. */
function revealIndex(index) {
  const y = index * ROW_HEIGHT;
  const top = list.scrollTop;
  if (y < top) list.scrollTop = y;
  else if (y + ROW_HEIGHT > top + viewHeight) list.scrollTop = y + ROW_HEIGHT - viewHeight;
  render();
}

/** Rows above the ones on screen changed by `rows` (+1 came, -1 went): the rows on screen stay. */
function keepAnchored(rows) {
  list.scrollTop += rows * ROW_HEIGHT;
}

/** Makes cell `column` of `movie`'s row the list's Tab stop (null: none), in the DOM at once
 * for a row there; render() places it on a row that comes. */
function setCurrent(movie, column = 0) {
  if (current && current.movie.id !== movie?.id) views.get(current.movie.id)?.setTabStop(null);
  current = movie ? { movie, column } : null;
  if (movie) views.get(movie.id)?.setTabStop(column);
}

/** Focuses cell `column` (0: the movie, i: its i-th action) of `movie`'s row, which becomes the
 * Tab stop: the row is rendered first (its index scrolled to, or, with preventScroll, pinned where
 * it is), so a row far from the rows in the DOM is focused as soon as it is there. */
function focusMovie(movie, preventScroll = false, column = 0) {
  const index = model.shownIndexOf(movie);
  if (index < 0 || removing.has(movie.id)) return false;
  setCurrent(movie, column);
  if (!preventScroll && !onScreen(index)) revealIndex(index);
  else if (!views.has(movie.id)) render();
  const view = views.get(movie.id);
  if (!view) return false;
  // An action cell shows only while the keyboard is on its row (showActions).
  if (column > 0) showActions(view.el);
  view.cell(column).focus({ preventScroll });
  return true;
}

/** Focuses the list's Tab stop where it is (a row or an action), or returns false when there is none. */
function focusCurrent() {
  return current !== null && focusMovie(current.movie, true, current.column);
}

/** The movie beside shown[index] (step +1 or -1) whose row is not going away. */
function beside(index, step) {
  const shown = model.shown;
  let i = index + step;
  while (i >= 0 && i < shown.length && removing.has(shown[i].id)) i += step;
  return i >= 0 && i < shown.length ? shown[i] : undefined;
}

function addMovie(movie) {
  model.add(movie);
  drawGhost(movie.id);  // someone's finger may already be on it
  render();
  showCount();
}

/** A movie back: right after `after` (null: first), as a `restored` event says; where it was
 * when the event says nothing (an older daemon's). */
function restoreMovie(movie, after) {
  asDaemon(() => {
    if (after !== undefined && model.restoreAfter(movie, after) !== undefined) return;
    if (after !== undefined) console.warn(`swiped: "${movie.id}" was restored after "${after}", which this page does not hold`);
    const { known } = model.restore(movie);
    if (!known) console.info(`swiped: "${movie.id}" was restored; removed before this page listed, its place is not known here: shown at the end until the page lists again`);
  });
  const index = model.shownIndexOf(movie);
  if (index >= 0 && index < Math.floor(list.scrollTop / ROW_HEIGHT)) keepAnchored(+1);
  drawGhost(movie.id);
  render();
  showCount();
}

function updateMovie(movie) {
  if (model.update(movie) === undefined) return;
  showsNow(movie);
  render();  // a row in the DOM shows it now; others when they come
}

/** The model holds `movie` in place of the object it held under its id: the Tab stop and the row
 * that shows it take it too, so that each is placed by the rank the model gives it (a move
 * changes it: model.js). */
function showsNow(movie) {
  if (current?.movie.id === movie.id) current.movie = movie;
  const view = views.get(movie.id);
  if (view && view.movie !== movie) view.setMovie(movie, actionsFor(movie));
}

/** Titles of movies removed while this page was open, for the Undo toast (its reply may come
 * after the removal's event). */
const removedTitles = new Map();

/** A movie removed (by anyone): its row animates away when on screen, else goes at once. */
function removeMovie(id) {
  if (removing.has(id)) return;
  const movie = model.get(id);
  if (!movie) return;
  removedTitles.set(id, movie.title);
  rowState.delete(id);
  for (const peer of peers.values()) peer.rows.delete(id);  // its ghost goes with it (a restore starts clean)
  ghosts.delete(id);
  if (gesture?.view.movie.id === id) gesture = null;
  if (reorder?.view.movie.id === id) endReorder(false);
  const view = views.get(id);
  const index = model.shownIndexOf(movie);
  // The Tab stop, and the focus when it is there, go to the next row (or the one before at the
  // end), as they would in a list without holes; onto its movie, whatever cell they were on.
  const focused = !!view?.el.contains(document.activeElement);
  const next = current?.movie.id === id ? beside(index, +1) ?? beside(index, -1) ?? null : undefined;
  if (next !== undefined) setCurrent(next, 0);
  if (view && index >= 0 && onScreen(index)) {
    removing.set(id, setTimeout(() => { removing.delete(id); drop(id, true); }, 350));
    markRemoving(view);
    active.delete(view);
    if (focused && next) focusMovie(next, true);
    else if (next) render();  // the new Tab stop in the DOM
  } else {
    // Focused before the row goes, so the focus never falls to <body> meanwhile.
    if (focused && next) focusMovie(next, true);
    drop(id, false);
  }
}

function markRemoving(view) {
  view.removing = true;
  view.el.classList.add("removing");
  view.setTabStop(null);
  view.el.setAttribute("aria-hidden", "true");
}

/** The movie leaves the model. `animated`: its row collapsed in place (height 0 now), so nothing
 * on screen moves; else a row above the screen keeps the rows on screen where they are. */
function drop(id, animated) {
  const wasInFlow = animated && views.has(id) && !views.get(id).el.classList.contains("pinned");
  const index = asDaemon(() => model.remove(id));
  if (index === undefined) return;
  if (!wasInFlow && index >= 0 && (index + 1) * ROW_HEIGHT <= list.scrollTop) keepAnchored(-1);
  render();
  showCount();
}

/** A movie back while its row was still going away: the row stays. */
function keepMovie(id) {
  clearTimeout(removing.get(id));
  removing.delete(id);
  const view = views.get(id);
  if (view) {
    recycle(id, view);  // drawn afresh (its classes, its tabindex) by the next render
    render();
  }
}

// --- Filter (issue 33) -----------------------------------------------------------------------------
// Narrows the list to the titles that contain the text, as it is typed (model.js: folded, and a
// longer text searches only the last matches). The count of matches is shown, and said by its
// live region. Escape clears it.
const numbers = new Intl.NumberFormat("en");
filterBox.addEventListener("input", () => applyFilter());
filterBox.addEventListener("focus", () => prepareFilter());
filterBox.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && filterBox.value !== "") {
    filterBox.value = "";
    applyFilter();
    e.preventDefault();
  } else if (e.key === "ArrowDown" && model.shown.length > 0) {
    focusMovie(model.shown[0]);
    e.preventDefault();
  }
});

function applyFilter() {
  model.filter(filterBox.value);
  list.scrollTop = 0;
  render();
  showCount();
}

function showCount() {
  const text = model.matches === null ? "" : model.matches.length === 1 ? "1 match" : `${numbers.format(model.matches.length)} matches`;
  if (filterCount.textContent !== text) filterCount.textContent = text;
  // A filter that matches nothing says so where the rows were, not with an empty list (issue 49).
  const none = model.matches !== null && model.matches.length === 0;
  if (none) noMatch.textContent = `No movie matches “${filterBox.value}”`;
  noMatch.hidden = !none;
}

// --- Pointer gestures -----------------------------------------------------------------------------
// One gesture at a time. The page sends every move of the pointer from its first, with dx and dy
// (issue 47), and the daemon decides, when the finger first passes 10 points on either axis,
// whether the touch swipes the row or scrolls the list (its rule 13: vertical wins when |dy| >
// |dx|). A reply with "scroll":true makes the gesture a scroll: the page scrolls the list itself,
// for touch too (rows have `touch-action: none`, so the browser leaves every touch on a row to
// the page), and carries a touch's scroll on with its speed when the finger lifts. Nothing is
// sent before the pointer has moved SLOP px: a tap that trembles stays a tap (a drag of any size
// would cancel a confirmation, the daemon's rule 10).
const SLOP = 8;
let gesture = null;
let reorder = null;  // a row moved up or down by its handle (issue 48, "Reordering")

list.addEventListener("pointerdown", (e) => {
  if (gesture || reorder || !e.isPrimary || (e.pointerType === "mouse" && e.button !== 0)) return;
  const li = e.target.closest(".row");
  // A press on the handle waits for its first movement (issue 48, "Reordering"): sideways, it
  // becomes a gesture of this kind, as if pressed here; up or down, it moves the row.
  if (!li || e.target.closest(".a11y-actions, .handle")) return;
  const view = views.get(li.dataset.movie);
  if (!view || view.removing) return;
  stopFling();
  gesture = newGesture(view, e.pointerId, e.pointerType, e.clientX, e.clientY, list.scrollTop);
});

/** A swipe (or, as the daemon decides, a scroll) of `view`'s row by the pointer `id` pressed at
 * (x0, y0), the list then scrolled to scroll0. */
function newGesture(view, id, type, x0, y0, scroll0) {
  return {
    view, id, type, x0, y0, scroll0, kind: null, dx: 0, dy: 0, sentDx: null, sentDy: null, inFlight: false,
    samples: [], captured: false,
  };
}

list.addEventListener("pointermove", (e) => {
  const g = gesture;
  if (!g || e.pointerId !== g.id) return;
  gestureMoved(g, e);
});

/** A move of the gesture's pointer: nothing until SLOP px from the press, then every move sent
 * (or, once the daemon said scroll, the list scrolled). */
function gestureMoved(g, e) {
  const dx = e.clientX - g.x0;
  const dy = e.clientY - g.y0;
  if (dx === g.dx && dy === g.dy) return;
  if (!g.captured) {
    if (Math.hypot(dx, dy) < SLOP) return;
    // The row keeps the pointer from then on, whatever the daemon decides: the moves that leave
    // the row still come (a scroll leaves it at once).
    g.view.el.setPointerCapture(e.pointerId);
    g.captured = true;
  }
  e.preventDefault();
  g.dx = dx;
  g.dy = dy;
  g.samples.push([e.timeStamp, e.clientX, e.clientY]);
  while (g.samples.length > 2 && e.timeStamp - g.samples[0][0] > 100) g.samples.shift();
  if (g.kind === "scroll") list.scrollTop = g.scroll0 - dy;
  else sendDrag(g);
}

/** Sends the latest dx and dy, one drag in flight at a time (the next goes when its reply is in). */
function sendDrag(g) {
  if (g.inFlight || (g.sentDx === g.dx && g.sentDy === g.dy) || g.ended) return;
  g.inFlight = true;
  g.sentDx = g.dx;
  g.sentDy = g.dy;
  conn.request("drag", { movie: g.view.movie.id, dx: g.dx, dy: g.dy }).then((reply) => {
    g.inFlight = false;
    if (reply.ok) dragged(g, reply);
    else if (reply.error?.code === "not-found") removeMovie(g.view.movie.id);
    if (gesture === g && g.kind !== "scroll") sendDrag(g);
  });
}

/** A drag's reply: the daemon decided scroll (the page scrolls, from where the finger is now), or
 * the row moved; a threshold crossed is felt (touch) and seen (rows.js). */
function dragged(g, reply) {
  if (reply.scroll && g.kind !== "scroll") {
    g.kind = "scroll";
    if (gesture === g) list.scrollTop = g.scroll0 - g.dy;
  } else if (!reply.scroll && reply.row.phase === "dragging") g.kind = "swipe";
  showRow(reply.row);
  if (reply.crossed) crossed(g.view, reply.crossed, g.type);
}

/** Threshold crossings (the daemon's rule 12): a short vibration on touch devices that have one,
 * a longer one past the full-swipe threshold, and the row's cue (rows.js). */
function crossed(view, crossings, pointerType) {
  const last = crossings[crossings.length - 1];
  if (pointerType === "touch" && typeof navigator.vibrate === "function") {
    navigator.vibrate(last.threshold === "full" && last.direction === "out" ? 20 : 10);
  }
  view.cue(crossings);
}

/** The release velocity in CSS px (points) per second along x (1) or y (2), from the last
 * ~100 ms of movement. */
function velocity(g, now, axis = 1) {
  const s = g.samples.filter((sample) => now - sample[0] <= 100);
  if (s.length < 2) return 0;
  const first = s[0];
  const last = s[s.length - 1];
  return last[0] - first[0] < 1 ? 0 : ((last[axis] - first[axis]) / (last[0] - first[0])) * 1000;
}

list.addEventListener("pointerup", (e) => {
  const g = gesture;
  if (!g || e.pointerId !== g.id) return;
  gesture = null;
  g.ended = true;
  const movie = g.view.movie.id;
  if (g.kind === "scroll") {
    // The touch ends for the daemon too; the list goes on with the finger's speed.
    conn.request("release", { movie }).then((reply) => { if (reply.ok) showRow(reply.row); });
    if (g.type === "touch") fling(velocity(g, e.timeStamp, 2));
    return;
  }
  if (g.sentDx === null) return;  // no move: a click (the click listener)
  const dx = e.clientX - g.x0;
  const dy = e.clientY - g.y0;
  // Where the pointer lifted may not have been sent: the daemon decides with it first (a touch
  // still undecided may turn out a scroll), then the release ends the touch. In request order.
  if (g.kind === null && (dx !== g.sentDx || dy !== g.sentDy)) {
    conn.request("drag", { movie, dx, dy }).then((reply) => { if (reply.ok) dragged(g, reply); });
  }
  const vx = velocity(g, e.timeStamp);
  conn.request("release", { movie, dx, vx: Math.max(-1e6, Math.min(1e6, vx)) }).then((reply) => {
    if (reply.scroll) { if (reply.ok) showRow(reply.row); return; }
    handleFire(reply, movie, vx);
  });
});

list.addEventListener("pointercancel", (e) => {
  const g = gesture;
  if (!g || e.pointerId !== g.id) return;
  gesture = null;
  g.ended = true;
  // The browser took the gesture (a pinch, a system gesture): no row is ever left dragging, and
  // no touch left scrolling in the daemon.
  if (g.kind === "scroll") conn.request("release", { movie: g.view.movie.id });
  else if (g.sentDx !== null) closeRow(g.view.movie.id);
});

// A touch's scroll goes on after the finger lifts, slowing down as a page scrolled by the
// browser does (a little faster each frame than it loses: ~0.95 a frame at 60 Hz).
let flingFrame = 0;
function fling(speed) {
  stopFling();
  let v = -speed;  // px a second; the content follows the finger, the scroll goes the other way
  let last = performance.now();
  const step = (now) => {
    const dt = Math.min((now - last) / 1000, 0.05);
    last = now;
    v *= Math.pow(0.05, dt);
    if (Math.abs(v) < 20) { flingFrame = 0; return; }
    list.scrollTop += v * dt;
    flingFrame = requestAnimationFrame(step);
  };
  if (Math.abs(v) >= 50) flingFrame = requestAnimationFrame(step);
}
function stopFling() {
  if (flingFrame) cancelAnimationFrame(flingFrame);
  flingFrame = 0;
}

// A click (a tap, or Enter/Space on a focused button) on a revealed button taps it; on the
// content of an open row, closes it; on an accessibility action, performs it. A peeking row's
// buttons (the first-use hint) are shown, not offered.
list.addEventListener("click", (e) => {
  const li = e.target.closest(".row");
  const view = li && views.get(li.dataset.movie);
  if (!view) return;
  const button = e.target.closest(".buttons button");
  const perform = e.target.closest("[data-perform]");
  if (e.target.closest(".handle")) {
    handleTapped(view);
  } else if (button && button.dataset.action) {
    if (view.row?.phase === "peeking") return;
    const movie = view.movie.id;
    conn.request("tap", { movie, action: button.dataset.action }).then((reply) => handleFire(reply, movie));
  } else if (perform) {
    const movie = view.movie.id;
    conn.request("perform", { movie, action: perform.dataset.perform }).then((reply) => handleFire(reply, movie));
  } else if (e.target.closest(".content") && view.row && view.row.phase !== "closed" && view.row.phase !== "peeking") {
    closeRow(view.movie.id);
  }
});

function closeRow(movie) {
  conn.request("close", { movie }).then((reply) => { if (reply.ok) showRow(reply.row); });
}

/** A reply to release, tap or perform: draw its row; a delete offers Undo; read-only says so. */
function handleFire(reply, movie, vx) {
  if (!reply.ok) {
    if (reply.error?.code === "forbidden" || reply.error?.code === "overloaded") {
      // The row stays as the gesture left it: settle it, and say why nothing happened.
      if (reply.error.code === "forbidden") toast(readOnlyWords());
      else slowDown(reply.error);
      closeRow(movie);
    } else if (reply.error?.code === "not-found") removeMovie(movie);
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
  if (fired?.error?.code === "overloaded") slowDown(fired.error);  // past the rate limit: not made
  else if (fired?.error) toast(`${fired.action} failed: ${fired.error.message}`);
  else if (fired?.action === "delete" && typeof fired.seq === "number") {
    toast(`Deleted “${titleOf(movie)}”`, () => conn.request("restore", { movie, expect: fired.seq }).then((r) => {
      if (!r.ok) toast(`Undo failed: ${r.error?.message ?? "not connected"}`);
    }), { movie, own: true });
  }
}

// --- Reordering (issue 48) ----------------------------------------------------------------------
// A person moves a movie up or down the list with a finger, the mouse or a pen on its row's handle,
// or with Alt+↑ and Alt+↓ on its row. A press on the handle decides by its first movement, as a
// press on the row decides between a swipe and a scroll: once it has moved SLOP px, mostly
// sideways (|dx| > |dy|) it is a swipe of the row from where it was pressed, exactly as one
// started on the row's body (on phones a swipe to the trailing edge starts at the row's end,
// where the handle is); else it moves the row. Nothing happens before (a tap stays a tap). A
// swipe started anywhere else on the row never moves it. While a pointer moves it, the row
// follows the pointer over the others (its place left empty) and a line shows where it will
// land; near the list's top or bottom edge the list scrolls, faster the nearer the edge and the
// longer the pointer stays there. The row is pinned (render) for the whole gesture, so that rows
// come and go around it as the list scrolls while it stays. Escape, or the browser taking the pointer (pointercancel), puts it back.
//
// The page sends `move` with `after`, the movie it then comes right after (null: first), and
// `expect`, its version, and shows the move at once. Until the daemon's `moved` event for it is
// in, the move is this page's own (localMoves, in the order made), shown on top of the list as
// the daemon has it: every event that places movies (moved, restored, a removal leaving the
// model) is applied with this page's own moves taken back first and made again after (asDaemon),
// so that the page ends with the daemon's order whatever others moved meanwhile (protocol.md,
// "List order"). Moves are sent one at a time, so that each `expect` is the version the last one
// made. A move refused (a reader, the movie changed or removed meanwhile, the movie it was to
// follow gone) is taken back, with those of the same movie made after it, and the toast says why.
// Each move done is said to screen readers: "Moved “Se7en” to position 3 of 10."

/** This page's moves whose `moved` event is not in yet: {id, after, from, applied, seq}; `from`
 * where the movie was when last made (what taking it back restores), `seq` the reply's. */
let localMoves = [];
let moveChain = Promise.resolve();

/** Moves the movie in the model (model.move), keeping the rows on screen where they are when it
 * goes from above them to below, or back. Returns model.move's answer. */
function placeMovie(id, after) {
  const moved = model.move(id, after);
  if (moved === undefined) return undefined;
  const above = (index) => index >= 0 && (index + 1) * ROW_HEIGHT <= list.scrollTop;
  const was = above(moved.was);
  const is = above(moved.index);
  if (was && !is) keepAnchored(-1);
  else if (!was && is) keepAnchored(+1);
  return moved;
}

/** Runs `change`, which places movies as the daemon did (an event), on the list as the daemon
 * has it: this page's own moves are taken back first, and made again after, but for those whose
 * event is now in. Returns what `change` returns. */
function asDaemon(change) {
  if (localMoves.length === 0) return change();
  takeBackFrom(0);
  const result = change();
  localMoves = localMoves.filter((m) => m.seq === null || m.seq > lastSeq);
  makeAgain(localMoves);
  return result;
}

/** Takes back this page's moves from localMoves[at] on, the last first. */
function takeBackFrom(at) {
  for (let i = localMoves.length - 1; i >= at; i--) {
    const m = localMoves[i];
    if (m.applied) placeMovie(m.id, m.from);
    m.applied = false;
  }
}

/** Makes `moves` again, in order; one whose movie or `after` is gone meanwhile is not made (its
 * reply says why). */
function makeAgain(moves) {
  for (const m of moves) {
    const moved = placeMovie(m.id, m.after);
    m.applied = moved !== undefined;
    if (moved) m.from = moved.from;
  }
}

/** A `moved` event: right after `after` (null: first), at once, whoever moved it (this page's own
 * move too, which it then stops showing on its own). Open rows stay open, wherever they go. */
function movedMovie(movie, after) {
  asDaemon(() => {
    if (model.update(movie) === undefined) return console.warn(`swiped: "${movie.id}" moved, but this page does not hold it`);
    if (placeMovie(movie.id, after) === undefined) console.warn(`swiped: "${movie.id}" moved after "${after}", which this page does not hold`);
  });
  showsNow(movie);
  render();
}

/** This page moves `movie` right after `after` (an id; null: first): shown at once, sent in turn. */
function moveMovie(movie, after) {
  const moved = placeMovie(movie.id, after);
  if (moved === undefined) return;
  localMoves.push({ id: movie.id, after, from: moved.from, applied: true, seq: null });
  const entry = localMoves[localMoves.length - 1];
  render();
  moveChain = moveChain.then(() => sendMove(entry)).catch((error) => console.error("swiped: move:", error));
}

async function sendMove(entry) {
  if (!localMoves.includes(entry)) return;  // taken back meanwhile (a move before it refused), or listed again
  const movie = model.get(entry.id);
  const args = { movie: entry.id, after: entry.after };
  if (movie) args.expect = movie.version;
  const reply = await conn.request("move", args);
  if (!localMoves.includes(entry)) return;
  if (!reply.ok) {
    refuseMove(entry, reply.error ?? {});
    return;
  }
  entry.seq = reply.seq;
  // The next move of it expects this version, whether or not the event is in yet.
  const now = model.get(entry.id);
  if (now && now.version < reply.movie.version) now.version = reply.movie.version;
  if (reply.seq <= lastSeq) localMoves.splice(localMoves.indexOf(entry), 1);  // its event came first
  if (now) {
    const index = model.shownIndexOf(now);
    if (index >= 0) announce(`Moved “${now.title}” to position ${numbers.format(index + 1)} of ${numbers.format(model.shown.length)}.`);
  }
}

/** A move the daemon refused: taken back, with the moves of the same movie made after it (they
 * were made from where it put the movie), and said. */
function refuseMove(entry, error) {
  console.error("swiped: move failed:", error);
  const at = localMoves.indexOf(entry);
  takeBackFrom(at);
  const later = localMoves.slice(at + 1).filter((m) => m.id !== entry.id);
  localMoves.length = at;
  localMoves.push(...later);
  makeAgain(later);
  render();
  const title = `“${titleOf(entry.id)}”`;
  if (error.code === "forbidden") toast(readOnlyWords());
  else if (error.code === "overloaded") slowDown(error);
  else if (error.code === "conflict") toast(`Not moved: ${title} changed meanwhile. Try again.`);
  else if (error.code === "not-found" && error.message?.startsWith("after:")) toast(`Not moved: the movie ${title} was to follow is gone.`);
  else if (error.code === "not-found") toast(`Not moved: ${title} was removed.`);
  else if (error.code === "offline") toast(`Not moved: ${title} stays where it was (not connected).`);
  else toast(`Not moved: ${error.message ?? "the daemon refused"}.`);
}

/** Alt+↑ (step -1) and Alt+↓ (+1) on a row: the movie one place up or down among the rows
 * shown, the focus staying on its cell. */
function moveByKey(view, column, step) {
  if (!writer) return toast(readOnlyWords());
  const movie = view.movie;
  const index = model.shownIndexOf(movie);
  if (index < 0) return;
  const other = beside(index, step);
  if (!other) return announce(`“${movie.title}” is already ${step < 0 ? "first" : "last"}.`);
  // Down: right after the next row's movie. Up: right after the movie before the row above's.
  moveMovie(movie, step > 0 ? other.id : model.idBefore(other, movie));
  focusMovie(movie, false, column);
}

/** A tap on a handle, or its button pressed by a screen reader: says how to move the row, and
 * puts the focus on it for the keys. */
function handleTapped(view) {
  focusMovie(view.movie, true, 0);
  announce(`Drag the handle to move “${view.movie.title}”, or press Alt+Up or Alt+Down on it.`);
}

const dropLine = document.createElement("div");
dropLine.id = "drop-line";
dropLine.setAttribute("aria-hidden", "true");
dropLine.hidden = true;
list.append(dropLine);  // after the bottom spacer: render() never moves it

list.addEventListener("pointerdown", (e) => {
  const handle = e.target.closest?.(".handle");
  if (!handle || gesture || reorder || !writer || !e.isPrimary || (e.pointerType === "mouse" && e.button !== 0)) return;
  const view = views.get(handle.closest(".row").dataset.movie);
  if (!view || view.removing) return;
  // Not the mouse's mousedown: the focus stays where it was, and no text is selected.
  e.preventDefault();
  stopFling();
  const box = list.getBoundingClientRect();
  reorder = {
    view, id: e.pointerId, type: e.pointerType, x0: e.clientX, y0: e.clientY, clientY: e.clientY, scroll0: list.scrollTop,
    grab: e.clientY - view.el.getBoundingClientRect().top, top: box.top, bottom: box.bottom,
    moved: false, landing: -1, frame: 0, last: 0, edgeSince: 0,
  };
});

list.addEventListener("pointermove", (e) => {
  const r = reorder;
  if (!r || e.pointerId !== r.id) return;
  r.clientY = e.clientY;
  if (!r.moved) {
    const dx = e.clientX - r.x0;
    const dy = e.clientY - r.y0;
    if (Math.hypot(dx, dy) < SLOP) return;  // still a tap
    if (Math.abs(dx) > Math.abs(dy)) {
      // Sideways first: a swipe of the row (or a scroll, should the daemon say so), from the press.
      reorder = null;
      gesture = newGesture(r.view, r.id, r.type, r.x0, r.y0, r.scroll0);
      gestureMoved(gesture, e);
      return;
    }
    r.moved = true;
    // The list keeps the pointer (not the row: render() may move the row in the DOM).
    list.setPointerCapture(e.pointerId);
    r.view.el.classList.add("lifted");
    document.body.classList.add("reordering");
    dropLine.hidden = false;
    render();  // pinned, so that it stays in the DOM however far the list scrolls
  }
  e.preventDefault();
  drawReorder();
  if (!r.frame) r.frame = requestAnimationFrame(autoScroll);
});

list.addEventListener("pointerup", (e) => {
  if (reorder && e.pointerId === reorder.id) endReorder(true);
});
list.addEventListener("pointercancel", (e) => {
  if (reorder && e.pointerId === reorder.id) endReorder(false);
});
// Escape puts the row back, before the row's own keys see it.
document.addEventListener("keydown", (e) => {
  if (!reorder || e.key !== "Escape") return;
  e.preventDefault();
  e.stopPropagation();
  endReorder(false);
}, true);

/** The moved row where the pointer holds it, and the line where it would land: between the rows
 * whose middles are above and below the row's middle. Reads the row's place in the list (its
 * offsetTop: in flow, or pinned): once per move of the pointer or frame of scrolling. */
function drawReorder(r = reorder) {
  const el = r.view.el;
  const top = r.clientY - r.top + list.scrollTop - r.grab;  // the row's top in the list's content
  el.style.transform = `translateY(${top - el.offsetTop}px)`;
  const own = model.shownIndexOf(r.view.movie);
  const n = model.shown.length;
  if (own < 0) return;
  // Rows (its own empty place among them) whose middles are above its middle, then the others.
  const above = Math.max(0, Math.min(n, Math.ceil((top + ROW_HEIGHT / 2) / ROW_HEIGHT - 0.5)));
  r.landing = above - (own < above ? 1 : 0);  // its index once there, in the list without it
  const line = r.landing > own ? r.landing + 1 : r.landing;
  dropLine.style.transform = `translateY(${line * ROW_HEIGHT}px)`;
}

/** While the pointer is within the edge zone at the list's top or bottom (or past it), the list
 * scrolls toward it: from 10 rows a second, 40 more for each second it stays, up to 150; slower
 * toward the zone's inner side. */
function autoScroll(now) {
  const r = reorder;
  if (!r) return;
  r.frame = 0;
  const zone = Math.min(ROW_HEIGHT, (r.bottom - r.top) / 4);
  const depth = r.clientY < r.top + zone ? -Math.min(1, (r.top + zone - r.clientY) / zone)
    : r.clientY > r.bottom - zone ? Math.min(1, (r.clientY - (r.bottom - zone)) / zone) : 0;
  if (depth === 0) {
    r.edgeSince = r.last = 0;
    return;  // the next move of the pointer starts it again
  }
  if (r.edgeSince === 0) r.edgeSince = now;
  const dt = r.last === 0 ? 1 / 60 : Math.min((now - r.last) / 1000, 0.05);
  r.last = now;
  const rows = Math.min(150, 10 + 40 * ((now - r.edgeSince) / 1000));
  const by = Math.sign(depth) * Math.max(1, rows * ROW_HEIGHT * Math.abs(depth) * dt);
  const before = list.scrollTop;
  list.scrollTop = before + by;
  if (list.scrollTop !== before) render();  // which draws the row and the line where they are now
  r.frame = requestAnimationFrame(autoScroll);
}

/** The gesture ends: dropped (`drop`), the movie goes where the line was; else the row goes back. */
function endReorder(drop) {
  const r = reorder;
  if (!r) return;
  reorder = null;
  if (r.frame) cancelAnimationFrame(r.frame);
  if (list.hasPointerCapture(r.id)) list.releasePointerCapture(r.id);
  const view = r.view;
  const dropped = drop && r.moved && !view.removing;
  if (dropped) drawReorder(r);  // where it lands for the pointer where it lifted
  view.el.classList.remove("lifted");
  view.el.style.transform = "";
  document.body.classList.remove("reordering");
  dropLine.hidden = true;
  if (dropped) {
    const after = landingAfter(view.movie, r.landing);
    if (after !== undefined) moveMovie(view.movie, after);
  }
  render();  // no longer pinned, unless it is the Tab stop
}

/** The `after` that puts `movie` at index `landing` of the rows shown without it: the movie it
 * then comes right after, null for first; undefined when that is where it is. */
function landingAfter(movie, landing) {
  const shown = model.shown;
  const own = model.shownIndexOf(movie);
  if (own < 0 || landing < 0 || landing === own) return undefined;
  const other = (i) => shown[i < own ? i : i + 1];  // the rows shown without it
  if (landing > 0) {
    // Past rows going away (removed, still animating): the movie before them.
    let i = landing - 1;
    while (i > 0 && removing.has(other(i).id)) i--;
    if (!removing.has(other(i).id)) return other(i).id;
    return model.idBefore(other(i), movie);
  }
  // First among the rows shown: right after the movie before the first of them (the filter may
  // hide some), or first.
  return model.idBefore(other(0), movie);
}

// --- Keyboard (issue 49: the WAI-ARIA grid pattern) -------------------------------------------------
// The list is a grid, one Tab stop (the roving tabindex of "The list" above): Tab and Shift-Tab go
// past it, to the controls before and after it (the filter box, the toast's Undo), and come back
// to its remembered cell. In it, the keys move the focus from cell to cell:
// - ↑ ↓ the row above and below, PageUp PageDown a screen of rows, Home End (or Ctrl+Home,
//   Ctrl+End) the first and the last row, staying on the same cell: the movie, or the same action.
//   A row not in the DOM is scrolled to and rendered first (focusMovie).
// - On an action, → and ← the next and the one before (mirrored in rtl: the reading direction);
//   ← from the first goes back to the movie. Enter and Space are the button's: `perform`.
// - On the movie, the keys it had before the grid: the arrow against the reading direction (← in
//   ltr) reveals the trailing edge, as a finger swiping that way, or closes the leading one; the
//   other closes the trailing edge, or goes into the row's actions when it is not open. Enter
//   fires the outermost revealed button (what a full swipe fires). Escape closes the row, and on
//   an action also takes the focus back to the movie.
// The row the keyboard is on shows its actions (class show-actions), from the key or the keyboard
// focus that got there until the focus leaves the row. One row at a time. A pointer that focuses
// a row does not show them, so that nothing moves under a finger.
let actionsRow = null;
function showActions(el) {
  if (el === actionsRow) return;
  actionsRow?.classList.remove("show-actions");
  actionsRow = el;
  el?.classList.add("show-actions");
}

/** The cell of `view` that `el` is: 0 the movie, i its i-th action, -1 neither (a revealed
 * button, which a tap does not focus; should it have the focus, it counts as the movie's). */
function columnOf(view, el) {
  if (el === view.contentEl) return 0;
  const cell = el.closest?.(".a11y-actions > *");
  return cell ? Array.prototype.indexOf.call(view.actionsEl.children, cell) + 1 : -1;
}

list.addEventListener("focusin", (e) => {
  const el = e.target.closest(".row");
  const view = el && views.get(el.dataset.movie);
  if (view && !view.removing) setCurrent(view.movie, Math.max(0, columnOf(view, e.target)));
  if (el && e.target.matches(":focus-visible")) showActions(el);
  else if (el !== actionsRow) showActions(null);
});
list.addEventListener("focusout", (e) => {
  if (!actionsRow?.contains(e.relatedTarget)) showActions(null);
});
// A tap on a revealed button fires it without taking the focus: those buttons are drawing, not
// cells (rows.js), and the focus stays where the keyboard left it.
list.addEventListener("mousedown", (e) => {
  if (e.target.closest(".buttons button")) e.preventDefault();
});

/** The movie `rows` rows from shown[index] (clamped to the list), or the nearest one beyond it
 * that is not going away. */
function rowFrom(index, rows) {
  const shown = model.shown;
  const i = Math.max(0, Math.min(shown.length - 1, index + rows));
  if (!removing.has(shown[i].id)) return shown[i];
  const step = rows >= 0 ? +1 : -1;
  return beside(i, step) ?? beside(i, -step);
}

list.addEventListener("keydown", (e) => {
  const el = e.target.closest?.(".row");
  if (!el || el.classList.contains("removing") || e.metaKey) return;
  const view = views.get(el.dataset.movie);
  if (!view) return;
  const column = Math.max(0, columnOf(view, e.target));
  if (e.altKey) {
    // Issue 48: Alt+↑ and Alt+↓ move the movie one place up or down, the focus with it.
    if ((e.key !== "ArrowUp" && e.key !== "ArrowDown") || e.ctrlKey || e.shiftKey) return;
    e.preventDefault();
    if (!reorder) moveByKey(view, column, e.key === "ArrowDown" ? +1 : -1);
    return;
  }
  const index = model.shownIndexOf(view.movie);
  if (index < 0) return;
  // Ctrl is for Ctrl+Home and Ctrl+End only (Ctrl+Z is the toast's).
  if (e.ctrlKey && e.key !== "Home" && e.key !== "End") return;
  showActions(el);
  const movie = view.movie.id;
  const offset = view.row?.offset ?? 0;
  // The reading direction: → in ltr, ← in rtl, goes on into the row's actions. The edge on each
  // physical side: in rtl the leading edge is the right one.
  const forwardKey = direction === "rtl" ? "ArrowLeft" : "ArrowRight";
  const rightEdge = direction === "rtl" ? "leading" : "trailing";
  const leftEdge = direction === "rtl" ? "trailing" : "leading";
  const page = Math.max(1, Math.floor(viewHeight / ROW_HEIGHT) - 1);
  switch (e.key) {
    case "ArrowDown":
    case "ArrowUp": {
      const to = beside(index, e.key === "ArrowDown" ? +1 : -1);
      if (to) focusMovie(to, false, column);
      break;
    }
    case "PageDown":
    case "PageUp": focusMovie(rowFrom(index, e.key === "PageDown" ? page : -page), false, column); break;
    case "Home":
    case "End": focusMovie(rowFrom(e.key === "Home" ? 0 : model.shown.length - 1, 0), false, column); break;
    case "ArrowLeft":
    case "ArrowRight": {
      const forward = e.key === forwardKey;
      if (column > 0) {
        // Between the actions, and from the first back to the movie; nothing past the last.
        if (!forward) focusMovie(view.movie, false, column - 1);
        else if (column < view.actionsEl.children.length) focusMovie(view.movie, false, column + 1);
        break;
      }
      // On the movie: the swipe keys. The content moves the arrow's way: ← reveals the right
      // edge or closes the left one.
      const left = e.key === "ArrowLeft";
      if (left ? offset > 0 : offset < 0) closeRow(movie);
      else if (forward) {
        if (view.actionsEl.children.length > 0) focusMovie(view.movie, false, 1);
      } else {
        const edge = left ? rightEdge : leftEdge;
        if (layout[edge].length === 0) return;
        conn.request("open", { movie, edge }).then((r) => (r.ok ? showRow(r.row) : complain("open", r)));
      }
      break;
    }
    case "Enter": {
      if (column > 0) return;  // the action's button: a click, which performs it
      // Fires the outermost revealed button: the one a full swipe would fire.
      const buttons = view.row?.phase === "open" || view.row?.phase === "confirming" ? view.row.buttons : [];
      if (buttons.length === 0) return;
      const outer = offset < 0 ? buttons[buttons.length - 1] : buttons[0];
      conn.request("tap", { movie, action: outer.action }).then((reply) => handleFire(reply, movie));
      break;
    }
    case "Escape":
      closeRow(movie);
      if (column > 0) focusMovie(view.movie, false, 0);
      break;
    default: return;
  }
  e.preventDefault();
});

function titleOf(movie) {
  return views.get(movie)?.movie.title ?? removedTitles.get(movie) ?? model.get(movie)?.title ?? movie;
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

// --- Full-swipe style and the swipe hint (issue 47) --------------------------------------------------
// "Full swipe" says what a full swipe does once its action fires, on both edges: fill (the button
// fills the row, which springs back), close (the row closes at once) or dismiss (the row slides
// out; a delete takes it away). Kept in this browser, sent with the layout (sendAsk).
const STYLE_KEY = "swiped.fullSwipe";
const fullSwipeBox = document.getElementById("full-swipe");
fullSwipeBox.value = stored(STYLE_KEY, "fill");
if (!["fill", "close", "dismiss"].includes(fullSwipeBox.value)) fullSwipeBox.value = "fill";
fullSwipeBox.addEventListener("change", () => {
  store(STYLE_KEY, fullSwipeBox.value);
  sendAsk();
});

// The swipe hint: once in this browser, the first row peeks when the list first comes (the
// daemon's `peek`: half its buttons show, then it springs back), so that a person sees that rows
// have actions. "Swipe hint" off: never; ticked again: once more, now.
const HINT_KEY = "swiped.swipeHint";  // "off", "shown", or nothing (not yet)
const hintBox = document.getElementById("swipe-hint");
hintBox.checked = stored(HINT_KEY, "") !== "off";
hintBox.addEventListener("change", () => {
  store(HINT_KEY, hintBox.checked ? "" : "off");
  if (hintBox.checked) hintOnFirstUse();
});

function hintOnFirstUse() {
  if (!hintBox.checked || stored(HINT_KEY, "") !== "" || !conn.open) return;
  const first = model.shown[0];
  if (!first) return;
  store(HINT_KEY, "shown");
  conn.request("peek", { movie: first.id }).then((reply) => { if (reply.ok) showRow(reply.row); });
}

function stored(key, fallback) {
  try {
    return localStorage.getItem(key) ?? fallback;
  } catch (error) {
    console.warn(`swiped: cannot read localStorage (${key}):`, error);
    return fallback;
  }
}
function store(key, value) {
  try {
    if (value === "") localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch (error) {
    console.warn(`swiped: cannot keep ${key} in localStorage (it holds for this page only):`, error);
  }
}

function storedAsk() {
  try {
    return localStorage.getItem(ASK_KEY) === "1";
  } catch (error) {
    console.warn("swiped: cannot read localStorage; Ask before deleting starts off:", error);
    return false;
  }
}

/** Whether the settings ask for another layout than the movie layout. */
function customLayout() {
  return askBox.checked || fullSwipeBox.value !== "fill";
}

/** `base` as the settings say: its delete action asking first when "Ask before deleting" is on,
 * a full swipe on either edge doing what "Full swipe" says (issue 47, the daemon's rule 15). */
function settingsLayout(base) {
  const ask = (a) => (askBox.checked && a.action === "delete" ? { ...a, confirm: true, confirmLabel: "Delete?" } : a);
  const { fullSwipeStyleLeading, fullSwipeStyleTrailing, ...plain } = base;
  const style = fullSwipeBox.value;
  const styles = style === "fill" ? {} : { fullSwipeStyleLeading: style, fullSwipeStyleTrailing: style };
  return { ...plain, leading: base.leading.map(ask), trailing: base.trailing.map(ask), ...styles };
}

async function sendAsk() {
  const on = customLayout();
  const settings = `${askBox.checked} ${fullSwipeBox.value}`;
  // Offline: nothing to tell; the next connection is told in onHello.
  if (!conn.open) return;
  if (on && !movieLayout) {
    const plain = await conn.request("configure");
    if (!plain.ok) return complain("configure", plain);
    movieLayout = plain.layout;
  }
  const reply = await conn.request("configure", on ? settingsLayout(movieLayout) : {});
  // Changed again meanwhile: that request's reply decides.
  if (`${askBox.checked} ${fullSwipeBox.value}` !== settings) return;
  if (!reply.ok) return complain("configure", reply);
  layout = reply.layout;
  closedNow(reply.closed);
  for (const view of views.values()) view.setMovie(view.movie, actionsFor(view.movie));
}

// --- Toast ----------------------------------------------------------------------------------------
let toastTimer = 0;
let toastAction = null;
let toastRemoval = null;  // the removal the toast is about: {movie, own} (own: this page's delete), or null
function toast(text, undo = null, removal = null) {
  toastText.textContent = text;
  toastAction = undo;
  toastRemoval = removal;
  if (undo === null) leaveToast();
  toastUndo.hidden = undo === null;
  toastEl.hidden = false;
  // While it shows, the list ends with room for it, so that its last rows can be scrolled
  // above it rather than stay under it (issue 49; style.css, body.toasting).
  document.body.classList.add("toasting");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(endToast, 5000);
}
/** The toast goes, and what it offered with it. */
function endToast() {
  leaveToast();
  hideToast();
  toastAction = null;
  clearTimeout(toastTimer);
}
function hideToast() {
  toastEl.hidden = true;
  toastRemoval = null;
  document.body.classList.remove("toasting");
}
/** Before Undo goes away with the focus on it: the focus goes back to the list's Tab stop (the
 * row it came from, or the one after it when that one went), not to <body>. */
function leaveToast() {
  if (!toastEl.contains(document.activeElement)) return;
  focusCurrent();
}
// While the toast offers Undo, U or Ctrl+Z (⌘Z) takes it from wherever the keyboard is, but a
// text box (issue 49: reaching the toast's button took up to 44 Tab presses, in its 5 s).
document.addEventListener("keydown", (e) => {
  // Not from the sign-in dialog (a modal: the page behind it takes no keys).
  if (toastAction === null || toastEl.hidden || e.altKey || e.repeat || signInDialog.open) return;
  const plainU = (e.key === "u" || e.key === "U") && !e.ctrlKey && !e.metaKey;
  const undoKey = (e.key === "z" || e.key === "Z") && (e.ctrlKey || e.metaKey) && !e.shiftKey;
  if (!plainU && !undoKey) return;
  if (plainU && e.target.closest?.("input, textarea, [contenteditable]")) return;
  e.preventDefault();
  toastUndo.click();
});
toastUndo.addEventListener("click", () => {
  const action = toastAction;
  endToast();
  if (action) action();
});

// --- The row width --------------------------------------------------------------------------------
// Measured here only, when the list resizes; a new viewport closes every row in the daemon.
new ResizeObserver((entries) => {
  const box = entries[entries.length - 1].contentRect;
  // Hidden (the gate shows instead, issue 45): the list keeps the size it had, for when it shows.
  if (box.width === 0 && box.height === 0) return;
  if (box.height !== viewHeight) {
    viewHeight = box.height;
    render();  // a taller list needs more rows in the DOM
  }
  const w = Math.round(box.width);
  const clamped = Math.max(100, Math.min(4000, w));
  if (clamped === width) return;
  width = clamped;
  if (conn.open && role !== "none") conn.request("viewport", { width, direction }).then((reply) => {
    if (reply.ok) closedNow(reply.closed);
    requestFrame();
  });
  for (const movie of ghostMovies()) drawGhost(movie);  // ghosts are scaled to this width
}).observe(list);

/** Rows the daemon closed at once (a new viewport, a recording's start): drawn closed now. */
function closedNow(ids) {
  for (const id of ids) {
    rowState.delete(id);
    const v = views.get(id);
    if (v) { v.reset(); active.add(v); }
  }
  requestFrame();
}

// --- Ghost rows (issue 18) --------------------------------------------------------------------------
// Another person's finger on a row, drawn faint at its offset under this page's own; null hides it.
// `label` says whose it is.
export function setGhost(movie, offset, label = "") {
  // Kept for rows not in the DOM (drawn when they come), as their Rows are.
  if (offset === null) ghosts.delete(movie);
  else ghosts.set(movie, { offset, label });
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

// --- Who this page is, and signing in (issue 45) ------------------------------------------------------
// Every connection acts for a person with a role, or for nobody (an anonymous page, with the
// daemon's --web-anonymous role): hello says which, `role` events say when it changes (a token
// revoked or expired, a role given). The page shows it ("Signed in as alice (writer)"), is
// read-only below writer, and with role none shows only the sign-in (the gate).
//
// Signing in is POST login (relative: next to the page, also under a proxy's prefix) with the
// pasted token as the body. The daemon answers with a cookie holding it, HttpOnly and
// SameSite=Strict: no page script (this one included) can read it, no other site's page can
// send it, and it is never in a URL. The token is kept nowhere else: not in localStorage, not in
// a variable past the request, and the box is emptied after every use. A WebSocket's handshake
// carries the cookie, so the page connects again after signing in or out: the new connection's
// hello says who it is now. The connection's recording is saved first, not lost with it.

/** This connection acts for `name` (null: nobody) with role `access` (null: a daemon before
 * roles, which says only whether it may write, `mayWrite`). */
function setAccess(name, access, mayWrite) {
  user = name;
  role = access;
  writer = access === null ? mayWrite : access === "writer" || access === "admin";
  showAccess();
}

/** The toolbar's who and button, the read-only banner, and the gate, as user and role say. */
function showAccess() {
  const gated = role === "none";
  accountEl.hidden = role === null;  // a daemon before roles: there is no sign-in to offer
  whoEl.textContent = role === null ? "" : describe(user, role);
  signInButton.textContent = user === null ? "Sign in" : "Sign out";
  signInButton.title = user === null ? "Sign in with a token an admin made for you" : `Sign out: this browser forgets ${user}'s sign-in`;
  if (user === null) signInButton.setAttribute("aria-haspopup", "dialog");
  else signInButton.removeAttribute("aria-haspopup");
  document.body.classList.toggle("gated", gated);
  // No drag handles for a page that may not change the list (issue 48; style.css).
  document.body.classList.toggle("read-only", !writer);
  gateEl.hidden = !gated;
  readonlyEl.hidden = writer || gated;
  readonlyEl.textContent = role === null ? "Read-only: you can swipe, but only the daemon's writers may change the movies."
    : user === null ? "Read-only: you can swipe, but changing the movies needs a writer's sign-in."
    : `Read-only: ${user} is a ${role} here. You can swipe, but only writers may change the movies.`;
}

/** Closes this connection and opens another at once, whose handshake carries the cookie as it is
 * now; what the daemon kept for the old one (its ghosts, a recording) goes with it. */
function connectAgain() {
  clearPeers();
  if (recording) recordingLost();
  conn.reconnect();
}

/** "Anonymous (reader)", "Signed in as alice (writer)"; "Not signed in" when that gives no right. */
function describe(name, access) {
  if (name === null) return access === "none" ? "Not signed in" : `Anonymous (${access})`;
  return access === "none" ? `${name}: no access` : `Signed in as ${name} (${access})`;
}

/** Who the connection is, in a sentence: "anonymous (reader)", "alice (writer)". */
function nowWords() {
  if (role === "none") return user === null ? "not signed in" : `${user}, with no access`;
  return user === null ? `anonymous (${role})` : `${user} (${role})`;
}

/** Why a change was refused (`forbidden`), in the page's words. */
function readOnlyWords() {
  if (role === null) return "Read-only: this change is not allowed here.";
  if (user === null) return "Read-only: sign in as a writer to change the movies.";
  return `Read-only: ${user} (${role}) may not change the movies.`;
}

/** The person whose rights just went (a `role` event with role none), until the next event says
 * who the connection is now, or `bye` closes it. */
let lostUser = null;

function roleChanged(message) {
  const name = typeof message.user === "string" ? message.user : null;
  const access = message.role;
  if (access === "none" && name !== null && lostUser === null) {
    // This person may do nothing here now (its token revoked or expired, or `none` given to the
    // name). Said at once; the gate waits for the next word, which follows at once.
    lostUser = name;
    writer = false;
    toast(`${name}'s access was taken back.`);
    return;
  }
  const lost = lostUser;
  lostUser = null;
  if (lost !== null && access === "none") {
    // Nobody here may do anything either: `bye` follows, and says it (accessRevoked).
    lostUser = lost;
    setAccess(name, access, false);
    return;
  }
  const wasGated = role === "none";
  setAccess(name, access, access === "writer" || access === "admin");
  if (lost !== null) {
    // The token this page signed in with is gone and the connection goes on as someone else:
    // the cookie that carries the token is forgotten, so that the next connection does not
    // present a dead token (which the daemon counts as a failed sign-in, and slows).
    forgetSignIn();
    toast(`${lost}'s access was taken back: now ${nowWords()}.`);
  } else toast(`Your access changed: now ${nowWords()}.`);
  // Gated until now: nothing was listed nor subscribed; a new connection starts it all.
  if (wasGated && access !== "none") connectAgain();
}

/** When the last `bye` `revoked` came (performance.now()): one soon after another does not
 * connect again (a loop that would only hammer the daemon); the gate waits for a sign-in. */
let revokedAt = -Infinity;

/** `bye` `revoked`: the daemon took this connection's rights away and closes it. The page says
 * so, forgets the sign-in cookie (its person may do nothing here now) and connects once more,
 * as whoever that makes it (anonymous, or the proxy's user). */
function accessRevoked() {
  const name = lostUser ?? user;
  lostUser = null;
  const now = performance.now();
  const again = now - revokedAt < 10000;
  revokedAt = now;
  const words = name === null ? "This page's access was taken back" : `${name}'s access was taken back`;
  conn.hold("Disconnected: access taken back");
  gateText.textContent = `${words}. Sign in again with a token an admin gives you.`;
  setAccess(null, "none", false);
  toast(`${words}.`);
  // Unless a sign-in came meanwhile (it connects itself), or this is the second in a row.
  forgetSignIn().then(() => { if (!again && role === "none" && expected === null) connectAgain(); });
}

const signInDialog = document.getElementById("sign-in-dialog");
const signInForm = document.getElementById("sign-in-form");
const tokenBox = document.getElementById("token");
const signInError = document.getElementById("sign-in-error");
let opener = null;         // the button that opened the dialog: the focus goes back to it
let signInBusy = false;    // one sign-in or sign-out at a time
let retryAt = 0;           // performance.now() until which the daemon asked this address to wait (429)
let expected = null;       // what the next hello should say: {user} after signing in, {user: null} after signing out

signInButton.addEventListener("click", () => (user === null ? openSignIn(signInButton) : signOut()));
gateButton.addEventListener("click", () => openSignIn(gateButton));
document.getElementById("sign-in-cancel").addEventListener("click", () => signInDialog.close());
// Escape closes it (the browser's own `cancel`); every way of closing empties the box and gives
// the focus back.
signInDialog.addEventListener("close", () => {
  tokenBox.value = "";
  showSignInError("");
  const back = opener?.isConnected && opener.getClientRects().length > 0 ? opener : signInButton;
  opener = null;
  back.focus();
});

function openSignIn(from) {
  if (signInDialog.open) return;
  opener = from;
  tokenBox.value = "";
  showSignInError("");
  signInDialog.showModal();
  tokenBox.focus();
}

function showSignInError(text) {
  signInError.textContent = text;
  if (text) tokenBox.setAttribute("aria-invalid", "true");
  else tokenBox.removeAttribute("aria-invalid");
}

function waitWords(seconds) {
  return `Too many failed sign-ins from this address: wait ${seconds} s, then try again.`;
}

signInForm.addEventListener("submit", async (e) => {
  e.preventDefault();
  if (signInBusy) return;
  const token = tokenBox.value.trim();
  tokenBox.value = "";
  if (token === "") return showSignInError("Paste a token first.");
  const wait = Math.ceil((retryAt - performance.now()) / 1000);
  if (wait > 0) return showSignInError(waitWords(wait));
  signInBusy = true;
  signInForm.setAttribute("aria-busy", "true");
  showSignInError("");
  try {
    const outcome = await postLogin(token);
    if (outcome.error) {
      showSignInError(outcome.error);
      tokenBox.focus();
      return;
    }
    // Signed in: the cookie is set. The dialog closes onto the toolbar's button (Sign out now:
    // the gate's goes away), the recording is saved, and a new connection carries the cookie.
    expected = { user: outcome.user };
    revokedAt = -Infinity;
    opener = signInButton;
    signInDialog.close();
    if (recording) await stopRecording();
    connectAgain();
  } finally {
    signInBusy = false;
    signInForm.removeAttribute("aria-busy");
  }
});

/** POST login with the token: {user, role}, or {error} in words. */
async function postLogin(token) {
  let response;
  try {
    response = await fetch("login", {
      method: "POST", credentials: "same-origin", cache: "no-store",
      headers: { "Content-Type": "text/plain" }, body: token,
    });
  } catch (error) {
    console.error("swiped: POST login failed:", error);
    return { error: "Cannot reach swiped: try again once the page is online." };
  }
  const text = (await response.text().catch(() => "")).trim().replace(/\.$/, "");
  if (response.ok) {
    try {
      const who = JSON.parse(text);
      if (typeof who.user === "string" && typeof who.role === "string") return who;
    } catch (error) {
      console.error("swiped: POST login answered what is not JSON:", text, error);
    }
    return { error: "swiped's answer to the sign-in is not one this page understands." };
  }
  // 403: the daemon's reason (no such token, expired, no rights); 429: failed sign-ins from this
  // address are slowed, Retry-After says for how long.
  if (response.status === 403) return { error: `Not signed in: ${text || "the token was refused"}.` };
  if (response.status === 429) {
    const seconds = Math.max(1, parseInt(response.headers.get("Retry-After"), 10) || 1);
    retryAt = performance.now() + seconds * 1000;
    return { error: waitWords(seconds) };
  }
  if (response.status === 404 || response.status === 405) return { error: "This swiped has no sign-in." };
  return { error: `Not signed in: swiped answered ${response.status}${text ? ` (${text})` : ""}.` };
}

/** POST logout: the daemon clears the cookie (the page cannot: it is HttpOnly). */
async function forgetSignIn() {
  try {
    const response = await fetch("logout", { method: "POST", credentials: "same-origin", cache: "no-store" });
    if (response.ok) return true;
    console.error("swiped: POST logout answered", response.status);
  } catch (error) {
    console.error("swiped: POST logout failed:", error);
  }
  return false;
}

async function signOut() {
  if (signInBusy) return;
  signInBusy = true;
  try {
    if (!(await forgetSignIn())) return toast("Not signed out: cannot reach swiped. Try again once the page is online.");
    expected = { user: null };
    if (recording) await stopRecording();
    connectAgain();
  } finally {
    signInBusy = false;
  }
}

/** After signing in or out, the new connection's hello says whether it took: a browser that
 * refuses cookies stays anonymous, and a proxy in front of the daemon may name the person
 * whatever the page does. */
function afterSignInOrOut() {
  if (expected === null) return;
  const wanted = expected.user;
  expected = null;
  if (wanted !== null) {
    if (user === wanted) toast(`Signed in as ${user} (${role}).`);
    else toast(`Signed in as ${wanted}, but this connection is ${nowWords()}: this browser did not keep the sign-in cookie (are cookies blocked for this site?).`);
  } else if (user === null) toast(`Signed out: now ${nowWords()}.`);
  else toast(`Signed out here, but this connection is still ${user}'s: the proxy in front of swiped names you.`);
}

window.swipedPage = { setGhost };
