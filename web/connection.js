// One WebSocket to the daemon = one connection to it (one swipe engine). Each message is one
// protocol line. Requests get numeric ids; replies are matched by id (the daemon answers in
// request order and echoes the id). Reconnects with backoff; the caller catches up on `open`.
// Not after the daemon took this connection's rights away (hold()): the page decides then.

export class Connection {
  /** @param {string} url  @param {object} handlers  onHello(hello, isReconnect), onEvent(msg),
   * onState(state, detail): connecting, online (the hello), offline (the delay), stopped (why) */
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.nextId = 1;
    this.pending = new Map();  // id -> {resolve, op}
    this.socket = null;
    this.connectedOnce = false;
    this.attempt = 0;
    this.timer = 0;
    this.held = null;          // why the next close does not reconnect (hold()), or null
    this.connect();
  }

  get open() { return this.socket !== null && this.socket.readyState === WebSocket.OPEN && this.ready; }

  connect() {
    this.ready = false;
    this.held = null;
    this.handlers.onState("connecting", this.attempt);
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onmessage = (message) => this.receive(message.data);
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.ready = false;
      // Requests in flight get no reply from this connection: they fail, nothing waits forever.
      for (const [, entry] of this.pending) entry.resolve({ ok: false, error: { code: "offline", message: "the connection closed" } });
      this.pending.clear();
      if (this.held !== null) {
        // The daemon closed it on purpose (access taken back): connecting again at once would
        // only be closed again, or refused; the page says why and connects when it knows better.
        this.handlers.onState("stopped", this.held);
        return;
      }
      // 0.25 s, 0.5 s, 1 s, 2 s, then every 4 s, each ±20 % so that many pages do not come back at once.
      const delay = Math.min(4000, 250 * 2 ** this.attempt) * (0.8 + 0.4 * Math.random());
      this.attempt += 1;
      this.handlers.onState("offline", delay);
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }

  /** Closes the connection while the page sits in the back/forward cache, where the browser may
   * keep its WebSocket open: the daemon then drops this client (its rows, sharing, recording)
   * as when a tab closes. No reconnect until resume(). */
  suspend() {
    clearTimeout(this.timer);
    const socket = this.socket;
    this.socket = null;  // its onclose, whenever it runs, finds it replaced and does nothing
    this.ready = false;
    for (const [, entry] of this.pending) entry.resolve({ ok: false, error: { code: "offline", message: "the page was hidden" } });
    this.pending.clear();
    this.attempt = 0;
    this.handlers.onState("offline", 0);
    if (socket) socket.close(1000, "page hidden");
  }

  /** Connects again after suspend() (the page is shown again). */
  resume() {
    if (this.socket === null) {
      clearTimeout(this.timer);
      this.connect();
    }
  }

  /** The close that follows does not reconnect (`bye` `revoked`: this connection's rights are
   * gone); `why` goes to onState("stopped"). reconnect() ends it. */
  hold(why) {
    this.held = why;
  }

  /** Closes this connection, if open, and opens another at once: after signing in or out, the
   * new WebSocket's handshake carries the cookie that says who the page is (the page cannot
   * hand it over itself: the cookie is HttpOnly). */
  reconnect() {
    clearTimeout(this.timer);
    const socket = this.socket;
    this.socket = null;  // its onclose, whenever it runs, finds it replaced and does nothing
    this.ready = false;
    for (const [, entry] of this.pending) entry.resolve({ ok: false, error: { code: "offline", message: "the page connected again" } });
    this.pending.clear();
    this.attempt = 0;
    if (socket) socket.close(1000, "signing in or out");
    this.connect();
  }

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch (error) {
      console.error("swiped: a line that is not JSON, ignoring it:", text, error);
      return;
    }
    if (typeof message !== "object" || message === null) return;
    if (typeof message.event === "string") {
      if (message.event === "hello") {
        this.ready = true;
        this.attempt = 0;
        const isReconnect = this.connectedOnce;
        this.connectedOnce = true;
        this.handlers.onState("online", message);
        this.handlers.onHello(message, isReconnect);
      } else {
        this.handlers.onEvent(message);
      }
      return;
    }
    if ("id" in message && this.pending.has(message.id)) {
      const entry = this.pending.get(message.id);
      this.pending.delete(message.id);
      entry.resolve(message);
    } else {
      console.warn("swiped: a reply nobody waits for, ignoring it:", message);
    }
  }

  /** Sends a request; resolves with its reply (an `offline` error when the connection is down). */
  request(op, args = {}) {
    if (!this.open) return Promise.resolve({ ok: false, error: { code: "offline", message: "not connected" } });
    const id = this.nextId++;
    const line = JSON.stringify({ op, ...args, id });
    return new Promise((resolve) => {
      this.pending.set(id, { resolve, op });
      this.socket.send(line);
    });
  }
}
