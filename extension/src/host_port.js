// The native-messaging port to tether-host. Chrome starts the host when the port opens and
// ends it when the port closes. A dropped port is opened again with backoff; a ping every
// 20 s keeps the port (and with it this service worker) alive.

const HOST_NAME = "dev.tether.host";
const PING_EVERY_MS = 20_000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

export class HostPort {
  #port = null;
  #retryMs = FIRST_RETRY_MS;
  #ping = null;

  /** @param {{onMessage: (msg: object) => void, onConnect: () => void, onDisconnect: (why: string) => void}} handlers */
  constructor(handlers) {
    this.handlers = handlers;
    this.lastError = null;
  }

  get connected() {
    return this.#port !== null;
  }

  connect() {
    if (this.#port) return;
    let port;
    try {
      port = chrome.runtime.connectNative(HOST_NAME);
    } catch (error) {
      this.#scheduleReconnect(String(error));
      return;
    }
    this.#port = port;
    port.onMessage.addListener((message) => {
      // A message means the host is up: the next drop starts the backoff afresh.
      this.#retryMs = FIRST_RETRY_MS;
      this.lastError = null;
      this.handlers.onMessage(message);
    });
    port.onDisconnect.addListener(() => {
      const why = chrome.runtime.lastError?.message ?? "the host closed the port";
      this.#port = null;
      clearInterval(this.#ping);
      this.handlers.onDisconnect(why);
      this.#scheduleReconnect(why);
    });
    this.#ping = setInterval(() => this.send({ type: "ping" }), PING_EVERY_MS);
    this.handlers.onConnect();
  }

  /** Sends one message; false when there is no port. */
  send(message) {
    if (!this.#port) return false;
    try {
      this.#port.postMessage(message);
      return true;
    } catch (error) {
      console.warn("tether: cannot send to the host", error);
      return false;
    }
  }

  #scheduleReconnect(why) {
    this.lastError = why;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
    setTimeout(() => this.connect(), delay);
  }
}
