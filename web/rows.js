// Drawing rows exactly as the daemon's Row says: the content's offset (animated by the row's
// spring), the visible buttons at their x and width, their tints, labels and icons.
// Everything here writes the DOM and never reads layout: a frame costs one transform per moving
// row and a few button boxes (no layout thrashing). The row width comes from the caller, who
// measures it once per resize.

/** The platform's system colours, by the protocol's tint names. */
export const TINTS = {
  red: "#FF3B30", orange: "#FF9500", yellow: "#FFCC00", green: "#34C759", mint: "#00C7BE",
  teal: "#30B0C7", cyan: "#32ADE6", blue: "#007AFF", indigo: "#5856D6", purple: "#AF52DE",
  pink: "#FF2D55", brown: "#A2845E", gray: "#8E8E93",
};

/** A button's label colour on its tint: black or white, whichever contrasts more (WCAG 2's
 * contrast ratio), so that every label reads at 4.5:1 or better (white on the system red is
 * 3.6:1, which axe reports as a serious failure). */
export function labelColour(hex) {
  const luminance = relativeLuminance(hex);
  return (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) ? "#000" : "#fff";
}
function relativeLuminance(hex) {
  const channel = (i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

// --- Poster tiles (issue 29) ------------------------------------------------------------------------
// No poster files ship: a movie's `image` is drawn as a tile made from its name, the same in
// every front end (the terminal's too; docs/web.md gives the definition).
/** The tiles' colours, all readable under white text (5:1 or better). */
export const POSTER_PALETTE = ["#A4262C", "#9A4A00", "#6B6B00", "#2E7D32", "#00695C", "#1565C0", "#5E35B1", "#AD1457"];

const utf8 = new TextEncoder();

/** FNV-1a, 32 bits, of the UTF-8 bytes of `text`. */
export function fnv1a32(text) {
  let hash = 2166136261;
  for (const byte of utf8.encode(text)) hash = Math.imul(hash ^ byte, 16777619) >>> 0;
  return hash >>> 0;
}

const LETTER_OR_DIGIT = /[\p{L}\p{Nd}]/u;

/** The tile of an image name: its first letter or decimal digit, uppercased when that stays one
 * code point (else as it is), or "#" when it has none; its colour from the name's hash. */
export function poster(image) {
  let letter = "#";
  for (const ch of image) {  // by code point
    if (!LETTER_OR_DIGIT.test(ch)) continue;
    const upper = ch.toUpperCase();
    letter = [...upper].length === 1 ? upper : ch;
    break;
  }
  return { letter, colour: POSTER_PALETTE[fnv1a32(image) % POSTER_PALETTE.length] };
}

const SVG_NS = "http://www.w3.org/2000/svg";
/** SF Symbols the layouts use, as inline SVG (stroke drawings in currentColor). */
const ICON_PATHS = {
  eye: ["M1.5 12s4-7 10.5-7 10.5 7 10.5 7-4 7-10.5 7S1.5 12 1.5 12z", "M12 8.5a3.5 3.5 0 1 0 0 7a3.5 3.5 0 1 0 0-7z"],
  "eye.slash": ["M1.5 12s4-7 10.5-7 10.5 7 10.5 7-4 7-10.5 7S1.5 12 1.5 12z", "M12 8.5a3.5 3.5 0 1 0 0 7a3.5 3.5 0 1 0 0-7z", "M3 3l18 18"],
  "person.3": [
    "M12 5a3 3 0 1 0 0 6a3 3 0 1 0 0-6z", "M6.5 20c0-3.5 2.5-6 5.5-6s5.5 2.5 5.5 6",
    "M5 7.5a2.2 2.2 0 1 0 0 4.4a2.2 2.2 0 1 0 0-4.4z", "M1 18c0-2.5 1.6-4.3 3.8-4.6",
    "M19 7.5a2.2 2.2 0 1 0 0 4.4a2.2 2.2 0 1 0 0-4.4z", "M23 18c0-2.5-1.6-4.3-3.8-4.6",
  ],
  trash: ["M3.5 6h17", "M9 6V3.5h6V6", "M5.5 6l1.2 14.5h10.6L18.5 6", "M10 10v7", "M14 10v7"],
  flag: ["M5 21V3.5", "M5 4h12l-2.5 4.5L17 13H5"],
  "envelope.open": ["M3 10l9-6 9 6v10H3z", "M3 10l9 6 9-6"],
};

/** An icon by its SF Symbol name: inline SVG when known, else nothing (the label says it). */
export function icon(name) {
  const paths = ICON_PATHS[name];
  if (!paths) return null;
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("fill", "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", "1.8");
  svg.setAttribute("stroke-linecap", "round");
  svg.setAttribute("stroke-linejoin", "round");
  svg.setAttribute("aria-hidden", "true");
  svg.dataset.icon = name;
  for (const d of paths) {
    const path = document.createElementNS(SVG_NS, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

/** SwiftUI's .spring(response:dampingFraction:) as a damped oscillator, stepped per frame. */
export function stepSpring(position, velocity, target, spring, dt) {
  const omega = (2 * Math.PI) / Math.max(spring.response, 0.01);
  const zeta = spring.dampingFraction;
  // Small fixed sub-steps keep the semi-implicit Euler stable for stiff (fast) springs.
  let x = position, v = velocity, left = Math.min(dt, 0.064);
  while (left > 0) {
    const h = Math.min(left, 1 / 240);
    v += (-omega * omega * (x - target) - 2 * zeta * omega * v) * h;
    x += v * h;
    left -= h;
  }
  return [x, v];
}

/** Where a movie object carries the row's line about its last change ("watched by bob", issue
 * 46), which app.js puts there from the `movie` event that made it: the Movie the daemon sends
 * does not say who changed it, so a row shows it for changes made while the page is open. */
export const LAST_CHANGE = Symbol("lastChange");

/** The spring a row settles with when its Row carries none (a compact row). */
const DEFAULT_SPRING = { response: 0.5, dampingFraction: 0.85 };

/** One row on screen: the movie, its last Row from the daemon, and what is drawn.
 *
 * A row of the list's grid (issue 49, the WAI-ARIA grid pattern): its cells are the movie (the
 * content: poster, title, flags) and its actions as buttons, under the row's box (style.css), which
 * grows to show them while the keyboard is on the row. The list is one Tab stop: of all the cells of all the rows, only the one app.js makes the stop
 * (setTabStop) has tabindex 0. The buttons a swipe reveals are drawing only (aria-hidden, never a
 * stop): the action cells and Enter on the movie do what they do. */
export class RowView {
  constructor(movie, actions) {
    this.movie = movie;
    this.row = null;            // the daemon's latest Row, or null while never touched
    this.offset = 0;            // drawn
    this.velocity = 0;          // points per second, of the drawn offset
    this.target = 0;
    this.spring = DEFAULT_SPRING;
    this.drawnButtons = [];     // the buttons drawn and the row offset they belong to
    this.buttonsOffset = 0;
    this.ghostOffset = null;    // another finger's offset (issue 18), drawn faint; null: none
    this.ghostLabel = "";       // whose finger it is, written at the ghost's edge that shows
    this.removing = false;
    this.flags = -1;            // the flags drawn (watched 1, with friends 2)
    this.pastOpen = false;      // the finger is past the open / the full-swipe threshold (cue())
    this.pastFull = false;
    this.tabStop = null;        // the cell that is the list's Tab stop: 0 the movie, i its i-th action; null none
    this.index = 0;             // aria-rowindex as last written

    const el = document.createElement("div");
    el.className = "row";
    el.setAttribute("role", "row");
    el.dataset.movie = movie.id;
    el.dataset.phase = "closed";
    this.el = el;
    this.buttonsEl = document.createElement("div");
    this.buttonsEl.className = "buttons";
    // What a finger reveals, drawn: a screen reader has the same actions as cells (actionsEl), and a
    // keyboard fires the revealed one with Enter on the movie.
    this.buttonsEl.setAttribute("aria-hidden", "true");
    this.ghostEl = document.createElement("div");
    this.ghostEl.className = "ghost";
    this.ghostEl.setAttribute("aria-hidden", "true");
    this.contentEl = document.createElement("div");
    this.contentEl.className = "content";
    this.contentEl.setAttribute("role", "gridcell");
    this.contentEl.tabIndex = -1;
    this.contentEl.setAttribute("aria-keyshortcuts", "ArrowLeft ArrowRight Enter Escape Alt+ArrowUp Alt+ArrowDown");
    // How to use a row, said once in the page (#row-help) for every row.
    this.contentEl.setAttribute("aria-describedby", "row-help");
    // The movie's image as a tile (its name's letter on its colour): decoration, the title says it.
    this.posterEl = document.createElement("span");
    this.posterEl.className = "poster";
    this.posterEl.setAttribute("aria-hidden", "true");
    this.posterImage = null;
    // The title, and under it in small print who changed the movie last (hidden when nobody).
    this.textEl = document.createElement("span");
    this.textEl.className = "text";
    this.titleEl = document.createElement("span");
    this.titleEl.className = "title";
    this.bylineEl = document.createElement("span");
    this.bylineEl.className = "byline";
    this.bylineEl.hidden = true;
    this.textEl.append(this.titleEl, this.bylineEl);
    this.flagsEl = document.createElement("span");
    this.flagsEl.className = "flags";
    // The drag handle (issue 48), at the row's end: a finger, the mouse or a pen on it moves the row
    // up and down the list, or swipes it when its first movement is sideways (app.js, "Reordering").
    // Never a Tab stop (the list has one): the keys are Alt+↑ and Alt+↓ on the row. Hidden for a
    // page that may not change the list (style.css, body.read-only).
    this.handleEl = document.createElement("button");
    this.handleEl.type = "button";
    this.handleEl.className = "handle";
    this.handleEl.tabIndex = -1;
    this.handleEl.textContent = "⠿";
    this.handleEl.title = "Drag to move (Alt+↑ and Alt+↓ from the keyboard)";
    this.handleEl.setAttribute("aria-keyshortcuts", "Alt+ArrowUp Alt+ArrowDown");
    this.contentEl.append(this.posterEl, this.textEl, this.flagsEl, this.handleEl);
    // The action cells: no role of its own, so that the row owns the cells (a group between them
    // would break the grid).
    this.actionsEl = document.createElement("div");
    this.actionsEl.className = "a11y-actions";
    // The ghost (another finger, issue 18) is drawn over the content, faint, and lets pointers through.
    el.append(this.buttonsEl, this.contentEl, this.ghostEl, this.actionsEl);
    this.setMovie(movie, actions);
  }

  /** The view, taken from the pool of a virtualised list, now shows `movie`: every trace of the
   * movie it showed before goes (its Row, ghost, classes); the caller draws it and gives it its
   * position. */
  rebind(movie, actions) {
    this.reset();
    this.removing = false;
    this.ghostOffset = null;
    this.ghostLabel = "";
    if (this.el.className !== "row") this.el.className = "row";
    if (this.el.style.transform !== "") this.el.style.transform = "";  // a row dragged up or down (issue 48)
    this.el.removeAttribute("aria-hidden");
    this.el.dataset.movie = movie.id;
    this.setTabStop(null, true);
    this.setMovie(movie, actions);
  }

  /** aria-rowindex: the row's place in the whole list (the grid's aria-rowcount), most of which
   * is not in the DOM. Written only when it changes. */
  setPosition(index) {
    if (index !== this.index) { this.index = index; this.el.setAttribute("aria-rowindex", String(index)); }
  }

  /** The action buttons, in order (each in its gridcell). */
  get actionButtons() {
    return Array.from(this.actionsEl.children, (cell) => cell.firstChild);
  }

  /** The cell `column` (0: the movie, i: its i-th action), or the movie when it has no such action. */
  cell(column) {
    return (column > 0 && this.actionsEl.children[column - 1]?.firstChild) || this.contentEl;
  }

  /** Makes cell `column` the list's Tab stop (tabindex 0) and every other cell of the row not
   * (-1); null: none of them. A row going away is never the stop. Writes only what changes. */
  setTabStop(column, force = false) {
    if (this.removing) column = null;
    if (column !== null && column > this.actionsEl.children.length) column = 0;
    if (column === this.tabStop && !force) return;
    this.tabStop = column;
    const set = (el, stop) => { const t = stop ? 0 : -1; if (el.tabIndex !== t) el.tabIndex = t; };
    set(this.contentEl, column === 0);
    this.actionButtons.forEach((b, i) => set(b, column === i + 1));
  }

  /** The movie changed (title, flags): redraws the content and the accessibility actions. */
  setMovie(movie, actions) {
    this.movie = movie;
    // Only what changed is written: a row taken from the pool for another movie while the list
    // scrolls fast is rewritten in every frame.
    if (this.titleEl.textContent !== movie.title) {
      this.titleEl.textContent = movie.title;
      this.handleEl.setAttribute("aria-label", `Move ${movie.title}`);
    }
    const image = movie.image ?? "";
    if (image !== this.posterImage) {
      this.posterImage = image;
      const tile = poster(image);
      this.posterEl.textContent = tile.letter;  // text, never markup: a name may hold any printable text
      this.posterEl.style.background = tile.colour;
      this.posterEl.dataset.image = image;
    }
    const flags = (movie.watched ? 1 : 0) | (movie.watchedWithFriends ? 2 : 0);
    if (flags !== this.flags) {
      this.flags = flags;
      this.flagsEl.replaceChildren();
      if (movie.watched) this.flagsEl.append(flagIcon("eye", "watched"));
      if (movie.watchedWithFriends) this.flagsEl.append(flagIcon("person.3", "watched with friends"));
    }
    const byline = movie[LAST_CHANGE] ?? "";
    if (this.bylineEl.textContent !== byline) {
      this.bylineEl.textContent = byline;
      this.bylineEl.hidden = byline === "";
    }
    const said = [movie.title];
    if (movie.watched) said.push("watched");
    if (movie.watchedWithFriends) said.push("watched with friends");
    // The cell's name is its label, which the line under the title is part of too.
    if (byline) said.push(byline);
    this.contentEl.setAttribute("aria-label", said.join(", "));
    this.setActions(this.row?.accessibilityActions ?? actions);
  }

  /** The row's accessibilityActions as buttons (fired with `perform`), each in a cell of the
   * row. The buttons are rewritten in place, so that the one a keyboard is on keeps the focus
   * when its label changes (a layout's activeLabel, once the action is performed). */
  setActions(actions) {
    const list = actions ?? [];
    const key = JSON.stringify(list);
    if (key === this.actionsKey) return;
    this.actionsKey = key;
    const cells = this.actionsEl.children;
    list.forEach((a, i) => {
      let cell = cells[i];
      if (!cell) {
        cell = document.createElement("div");
        cell.setAttribute("role", "gridcell");
        const button = document.createElement("button");
        button.type = "button";
        button.tabIndex = -1;
        cell.append(button);
        this.actionsEl.append(cell);
      }
      const b = cell.firstChild;
      b.textContent = a.label;
      b.dataset.perform = a.action;
      b.classList.toggle("destructive", a.destructive === true);
    });
    for (let i = cells.length - 1; i >= list.length; i--) {
      if (cells[i].contains(document.activeElement)) this.contentEl.focus({ preventScroll: true });
      cells[i].remove();
    }
    this.setTabStop(this.tabStop, true);  // new buttons, or the stop's own gone
  }

  /** Takes the daemon's Row; the caller draws it in the next animation frame. */
  apply(row, releaseVelocity) {
    this.row = row;
    this.target = row.offset;
    this.spring = row.spring ?? DEFAULT_SPRING;
    if (releaseVelocity !== undefined && Math.sign(releaseVelocity) === Math.sign(row.offset - this.offset)) {
      this.velocity = releaseVelocity;
    }
    if (row.buttons.length > 0) {
      this.drawnButtons = row.buttons;
      this.buttonsOffset = row.offset;
    }
    this.el.dataset.phase = row.phase;
    this.el.dataset.edge = row.edge ?? "";
    if (row.phase !== "dragging") this.setPast(false, false);
    if (row.accessibilityActions) this.setActions(row.accessibilityActions);
  }

  /** The thresholds a drag of this row crossed (the daemon's `crossed`, issue 47), in order: the
   * row says how far the finger is (`data-past`: "open" when letting go opens it, "full" when it
   * fires its outer button; style.css outlines the buttons), and its buttons flash once. */
  cue(crossings) {
    let open = this.pastOpen, full = this.pastFull;
    for (const c of crossings) {
      if (c.threshold === "open") open = c.direction === "out";
      else full = c.direction === "out";
    }
    this.setPast(open, full);
    // The Web Animations API: no class to take off and put back, so no layout is read.
    this.buttonsEl.animate?.([{ filter: "brightness(1.6)" }, { filter: "none" }], { duration: 180 });
  }

  setPast(open, full) {
    if (open === this.pastOpen && full === this.pastFull) return;
    this.pastOpen = open;
    this.pastFull = full;
    const past = full ? "full" : open ? "open" : "";
    if (past) this.el.dataset.past = past;
    else delete this.el.dataset.past;
  }

  /** Closed at once, without animation (a new connection's rows are all closed). */
  reset() {
    this.row = null;
    this.setPast(false, false);
    this.offset = this.target = this.velocity = 0;
    this.drawnButtons = [];
    this.el.dataset.phase = "closed";
    this.el.dataset.edge = "";
  }

  /** Whether the drawn offset still moves toward the target. */
  get moving() {
    return Math.abs(this.offset - this.target) > 0.25 || Math.abs(this.velocity) > 1;
  }

  /** Advances the spring by dt seconds and writes the DOM. `width`: the row width in CSS px. */
  draw(dt, width) {
    if (this.moving) {
      [this.offset, this.velocity] = stepSpring(this.offset, this.velocity, this.target, this.spring, dt);
      if (!this.moving) { this.offset = this.target; this.velocity = 0; }
    } else {
      this.offset = this.target;
      this.velocity = 0;
    }
    this.contentEl.style.transform = `translateX(${this.offset}px)`;
    if (this.ghostOffset !== null) {
      this.ghostEl.style.transform = `translateX(${this.ghostOffset}px)`;
      if (this.ghostEl.textContent !== this.ghostLabel) this.ghostEl.textContent = this.ghostLabel;
      // Moved left, the ghost's right edge is the one on screen: the label goes there.
      this.ghostEl.classList.toggle("moved-left", this.ghostOffset < 0);
    }
    this.el.classList.toggle("has-ghost", this.ghostOffset !== null);
    this.drawButtons(width);
  }

  /** The buttons as the Row gives them; while the content springs elsewhere (closing, settling),
   * the same buttons scaled to tile the strip the content reveals, as SwiftUI stretches them. */
  drawButtons(width) {
    const buttons = this.drawnButtons;
    const from = this.buttonsOffset;
    let ratio = from === 0 ? 0 : this.offset / from;
    if (!(ratio > 0)) ratio = 0;
    const els = this.buttonsEl.children;
    for (let i = 0; i < buttons.length; i++) {
      const b = buttons[i];
      let el = els[i];
      if (!el) {
        el = document.createElement("button");
        el.type = "button";
        el.tabIndex = -1;
        this.buttonsEl.append(el);
      }
      const key = `${b.action}|${b.label ?? ""}|${b.icon ?? ""}|${b.tint}|${b.role ?? ""}`;
      if (el.dataset.key !== key) {
        el.dataset.key = key;
        el.dataset.action = b.action;
        el.dataset.tint = b.tint;
        const tint = TINTS[b.tint] ?? TINTS.gray;
        el.style.background = tint;
        el.style.color = labelColour(tint);
        const parts = [];
        const svg = b.icon ? icon(b.icon) : null;
        if (svg) parts.push(svg);
        if (b.label) { const span = document.createElement("span"); span.textContent = b.label; parts.push(span); }
        el.replaceChildren(...parts);
        el.setAttribute("aria-label", b.label ?? b.action);
      }
      const x = from < 0 ? width + (b.x - width) * ratio : b.x * ratio;
      const w = b.width * ratio;
      el.style.left = `${x}px`;
      el.style.width = `${w}px`;
      el.hidden = w < 0.5;
      // Never a Tab stop (the list has one), nor focused by a tap (app.js, mousedown): should one
      // have the focus anyway as it goes, the focus goes to the movie, not to <body>.
      if (el.hidden && el === document.activeElement) this.contentEl.focus({ preventScroll: true });
    }
    for (let i = els.length - 1; i >= buttons.length; i--) {
      if (els[i] === document.activeElement) this.contentEl.focus({ preventScroll: true });
      els[i].remove();
    }
  }
}

function flagIcon(name, label) {
  const svg = icon(name);
  svg.setAttribute("role", "img");
  svg.removeAttribute("aria-hidden");
  svg.setAttribute("aria-label", label);
  return svg;
}
