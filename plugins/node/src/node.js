// Node's globals and built-in modules, written over the native `__host`
// (files, streams, clocks, module resolution) that `host.rs` provides.
// Evaluated once at the start of each run; it leaves `__node` for the
// engine (start, tick, finish, report) and the module loader (exportNames,
// exportsOf), and takes `__host` off the global object.
(function () {
  "use strict";
  const host = globalThis.__host;
  delete globalThis.__host;

  // Once `process.exit` is called nothing more of the script reaches its
  // streams (the engine stops it at its next step); the `exit` handlers
  // write again.
  let exiting = false;
  const writeStream = (fd, data) => {
    if (!exiting) host.write(fd, typeof data === "string" ? wellFormed(data) : data);
  };

  // ---- util.format and inspect ---------------------------------------

  function inspect(value, options, legacyDepth) {
    if (typeof options !== "object" || options === null) options = legacyDepth === undefined ? {} : { depth: legacyDepth };
    const depth = options.depth === null ? Infinity : options.depth !== undefined ? options.depth : 2;
    const seen = [];
    function quote(text) {
      return "'" + text.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n") + "'";
    }
    function key(name) {
      return /^[A-Za-z_$][\w$]*$/.test(name) ? name : quote(name);
    }
    function show(v, level, nested) {
      switch (typeof v) {
        case "string":
          return nested ? quote(v) : v;
        case "number":
          return Object.is(v, -0) ? "-0" : String(v);
        case "bigint":
          return v + "n";
        case "boolean":
        case "undefined":
          return String(v);
        case "symbol":
          return v.toString();
        case "function": {
          if (/^class\b/.test(Function.prototype.toString.call(v))) {
            const parent = Object.getPrototypeOf(v);
            const extended = parent && parent.name ? ` extends ${parent.name}` : "";
            return `[class ${v.name || "(anonymous)"}${extended}]`;
          }
          return v.name ? `[Function: ${v.name}]` : "[Function (anonymous)]";
        }
      }
      if (v === null) return "null";
      if (seen.includes(v)) return "[Circular *1]";
      if (v instanceof Error) return errorText(v);
      if (v instanceof Date) return isNaN(v) ? "Invalid Date" : v.toISOString();
      if (v instanceof RegExp) return String(v);
      if (typeof Buffer === "function" && v instanceof Buffer) {
        const shown = Array.from(v.subarray(0, 50), (b) => b.toString(16).padStart(2, "0")).join(" ");
        return `<Buffer${shown ? " " + shown : ""}${v.length > 50 ? ` ... ${v.length - 50} more bytes` : ""}>`;
      }
      if (v instanceof Promise) return "Promise { <pending> }";
      const empty = Object.keys(v).length === 0 && !(v instanceof Map && v.size) && !(v instanceof Set && v.size);
      if (level > depth && !empty) {
        if (Array.isArray(v)) return "[Array]";
        const name = v.constructor && v.constructor.name;
        return name && name !== "Object" ? `[${name}]` : "[Object]";
      }
      seen.push(v);
      try {
        let parts;
        let open = "{";
        let close = "}";
        let prefix = "";
        if (Array.isArray(v) || ArrayBuffer.isView(v)) {
          parts = [];
          const shown = Math.min(v.length, 100);
          for (let i = 0; i < shown; i++) parts.push(show(v[i], level + 1, true));
          if (v.length > shown) parts.push(`... ${v.length - shown} more items`);
          for (const name of Object.keys(v)) if (!/^\d+$/.test(name)) parts.push(`${key(name)}: ${show(v[name], level + 1, true)}`);
          open = "[";
          close = "]";
          if (!Array.isArray(v)) prefix = `${v.constructor.name}(${v.length}) `;
        } else if (v instanceof Map) {
          parts = Array.from(v, ([k, val]) => `${show(k, level + 1, true)} => ${show(val, level + 1, true)}`);
          prefix = `Map(${v.size}) `;
        } else if (v instanceof Set) {
          parts = Array.from(v, (item) => show(item, level + 1, true));
          prefix = `Set(${v.size}) `;
        } else {
          parts = Object.keys(v).map((name) => `${key(name)}: ${show(v[name], level + 1, true)}`);
          const proto = Object.getPrototypeOf(v);
          if (proto === null) prefix = "[Object: null prototype] ";
          else if (proto.constructor && proto.constructor.name && proto.constructor !== Object) prefix = proto.constructor.name + " ";
        }
        if (parts.length === 0) return prefix + open + close;
        const line = `${prefix}${open} ${parts.join(", ")} ${close}`;
        if (line.length <= 72 && !line.includes("\n")) return line;
        const pad = "  ".repeat(level + 1);
        return `${prefix}${open}\n${pad}${parts.join(`,\n${pad}`)}\n${"  ".repeat(level)}${close}`;
      } finally {
        seen.pop();
      }
    }
    return show(value, 0, false);
  }

  // An error as Node prints it: its name and message, then its stack, less
  // the interpreter's own frames, which say nothing about the script.
  function errorText(error) {
    const stack = (error.stack || "")
      .split("\n")
      .filter((line) => line && !line.includes("node:internal") && !line.includes("(native)"))
      .join("\n");
    return stack.startsWith(String(error)) ? stack : stack ? `${String(error)}\n${stack}` : String(error);
  }

  function format(...args) {
    if (typeof args[0] !== "string") return args.map((a) => inspect(a)).join(" ");
    if (args.length === 1) return args[0];
    let rest = args.slice(1);
    let out = args[0].replace(/%([sdifjoOc%])/g, (match, kind) => {
      if (kind === "%") return "%";
      if (rest.length === 0) return match;
      const v = rest.shift();
      switch (kind) {
        case "s":
          return typeof v === "string" ? v : typeof v === "bigint" ? v + "n" : typeof v === "object" && v !== null ? inspect(v, { depth: 0 }) : String(v);
        case "d":
        case "i": {
          const n = Number(v);
          return kind === "i" ? String(Math.trunc(n)) : String(n);
        }
        case "f":
          return String(parseFloat(v));
        case "j":
          try {
            return JSON.stringify(v);
          } catch {
            return "[Circular]";
          }
        case "c":
          return "";
        default:
          return inspect(v);
      }
    });
    for (const v of rest) out += " " + (typeof v === "string" ? v : inspect(v));
    return out;
  }

  // ---- Buffer, TextEncoder, TextDecoder -----------------------------

  const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

  function normalEncoding(encoding) {
    const name = String(encoding || "utf8").toLowerCase();
    switch (name) {
      case "utf8":
      case "utf-8":
        return "utf8";
      case "hex":
      case "base64":
      case "base64url":
      case "ascii":
        return name;
      case "latin1":
      case "binary":
        return "latin1";
      case "utf16le":
      case "utf-16le":
      case "ucs2":
      case "ucs-2":
        return "utf16le";
      default:
        throw codeError(TypeError, "ERR_UNKNOWN_ENCODING", `Unknown encoding: ${encoding}`);
    }
  }

  // A string as the host can take it: lone surrogates become U+FFFD, as
  // Node writes them.
  function wellFormed(text) {
    return typeof text.toWellFormed === "function" ? text.toWellFormed() : text;
  }

  function bytesOf(text, encoding) {
    switch (normalEncoding(encoding)) {
      case "utf8":
        return host.encode(wellFormed(text));
      case "hex": {
        const out = new Uint8Array(text.length >> 1);
        for (let i = 0; i < out.length; i++) {
          const byte = parseInt(text.substr(i * 2, 2), 16);
          if (Number.isNaN(byte)) return out.subarray(0, i);
          out[i] = byte;
        }
        return out;
      }
      case "base64":
      case "base64url": {
        const clean = text.replace(/-/g, "+").replace(/_/g, "/").replace(/[^A-Za-z0-9+/]/g, "");
        const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
        let bits = 0;
        let value = 0;
        let at = 0;
        for (const c of clean) {
          value = (value << 6) | BASE64.indexOf(c);
          bits += 6;
          if (bits >= 8) {
            bits -= 8;
            out[at++] = (value >> bits) & 0xff;
          }
        }
        return out.subarray(0, at);
      }
      case "utf16le": {
        const out = new Uint8Array(text.length * 2);
        for (let i = 0; i < text.length; i++) {
          const unit = text.charCodeAt(i);
          out[i * 2] = unit & 0xff;
          out[i * 2 + 1] = unit >> 8;
        }
        return out;
      }
      default: {
        const out = new Uint8Array(text.length);
        for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
        return out;
      }
    }
  }

  function textOf(bytes, encoding) {
    switch (normalEncoding(encoding)) {
      case "utf8":
        return host.decode(bytes);
      case "hex":
        return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      case "base64":
      case "base64url": {
        let out = "";
        for (let i = 0; i < bytes.length; i += 3) {
          const n = (bytes[i] << 16) | ((bytes[i + 1] || 0) << 8) | (bytes[i + 2] || 0);
          out += BASE64[(n >> 18) & 63] + BASE64[(n >> 12) & 63];
          out += i + 1 < bytes.length ? BASE64[(n >> 6) & 63] : "=";
          out += i + 2 < bytes.length ? BASE64[n & 63] : "=";
        }
        return normalEncoding(encoding) === "base64url" ? out.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") : out;
      }
      case "utf16le": {
        let out = "";
        for (let i = 0; i + 1 < bytes.length; i += 2) out += String.fromCharCode(bytes[i] | (bytes[i + 1] << 8));
        return out;
      }
      case "ascii": {
        let out = "";
        for (const b of bytes) out += String.fromCharCode(b & 0x7f);
        return out;
      }
      default: {
        let out = "";
        for (const b of bytes) out += String.fromCharCode(b);
        return out;
      }
    }
  }

  class Buffer extends Uint8Array {
    static from(value, encodingOrOffset, length) {
      if (typeof value === "string") return Buffer.fromBytes(bytesOf(value, encodingOrOffset));
      if (value instanceof ArrayBuffer) return new Buffer(value, encodingOrOffset || 0, length === undefined ? value.byteLength - (encodingOrOffset || 0) : length);
      if (ArrayBuffer.isView(value)) return Buffer.fromBytes(new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice());
      if (value && value.type === "Buffer" && Array.isArray(value.data)) return Buffer.fromBytes(Uint8Array.from(value.data));
      if (Array.isArray(value) || (value && typeof value.length === "number")) return Buffer.fromBytes(Uint8Array.from(value));
      throw new TypeError("The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object.");
    }
    static fromBytes(bytes) {
      return new Buffer(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    static alloc(size, fill, encoding) {
      const out = new Buffer(size);
      if (fill !== undefined) out.fill(fill, 0, size, encoding);
      return out;
    }
    static allocUnsafe(size) {
      return new Buffer(size);
    }
    static isBuffer(value) {
      return value instanceof Buffer;
    }
    static isEncoding(encoding) {
      try {
        normalEncoding(encoding);
        return true;
      } catch {
        return false;
      }
    }
    static byteLength(value, encoding) {
      return typeof value === "string" ? bytesOf(value, encoding).length : value.byteLength;
    }
    static concat(list, total) {
      const length = total === undefined ? list.reduce((sum, item) => sum + item.length, 0) : total;
      const out = Buffer.alloc(length);
      let at = 0;
      for (const item of list) {
        if (at >= length) break;
        const part = item.subarray(0, length - at);
        out.set(part, at);
        at += part.length;
      }
      return out;
    }
    static compare(a, b) {
      return a.compare(b);
    }
    toString(encoding, start, end) {
      return textOf(this.subarray(start || 0, end === undefined ? this.length : end), encoding);
    }
    toJSON() {
      return { type: "Buffer", data: Array.from(this) };
    }
    equals(other) {
      return this.compare(other) === 0;
    }
    compare(other) {
      const n = Math.min(this.length, other.length);
      for (let i = 0; i < n; i++) if (this[i] !== other[i]) return this[i] < other[i] ? -1 : 1;
      return this.length === other.length ? 0 : this.length < other.length ? -1 : 1;
    }
    slice(start, end) {
      return this.subarray(start, end);
    }
    write(text, offset, length, encoding) {
      if (typeof offset === "string") [encoding, offset, length] = [offset, 0, undefined];
      else if (typeof length === "string") [encoding, length] = [length, undefined];
      const bytes = bytesOf(text, encoding).subarray(0, length === undefined ? undefined : length);
      const at = offset || 0;
      const n = Math.min(bytes.length, this.length - at);
      this.set(bytes.subarray(0, n), at);
      return n;
    }
    fill(value, start, end, encoding) {
      if (typeof value === "string") {
        const bytes = bytesOf(value, encoding);
        for (let i = start || 0, j = 0; i < (end === undefined ? this.length : end); i++, j++) this[i] = bytes[j % bytes.length];
        return this;
      }
      return super.fill(value, start, end);
    }
    copy(target, targetStart = 0, sourceStart = 0, sourceEnd = this.length) {
      const part = this.subarray(sourceStart, sourceEnd).subarray(0, target.length - targetStart);
      target.set(part, targetStart);
      return part.length;
    }
    indexOf(value, from, encoding) {
      const needle = typeof value === "number" ? [value] : typeof value === "string" ? bytesOf(value, encoding) : value;
      outer: for (let i = from || 0; i + needle.length <= this.length; i++) {
        for (let j = 0; j < needle.length; j++) if (this[i + j] !== needle[j]) continue outer;
        return i;
      }
      return -1;
    }
    includes(value, from, encoding) {
      return this.indexOf(value, from, encoding) !== -1;
    }
  }

  // The typed reads and writes (`readInt32BE`, `writeDoubleLE`...), over a
  // DataView of the buffer, with Node's range check.
  const TYPED = [
    ["Int8", 1, "Int8"],
    ["UInt8", 1, "Uint8"],
    ["Int16", 2, "Int16"],
    ["UInt16", 2, "Uint16"],
    ["Int32", 4, "Int32"],
    ["UInt32", 4, "Uint32"],
    ["Float", 4, "Float32"],
    ["Double", 8, "Float64"],
    ["BigInt64", 8, "BigInt64"],
    ["BigUInt64", 8, "BigUint64"],
  ];
  function inRange(buffer, at, size) {
    if (!Number.isInteger(at) || at < 0 || at + size > buffer.length) {
      throw codeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "offset" is out of range. It must be >= 0 and <= ${buffer.length - size}. Received ${at}`);
    }
  }
  for (const [name, size, view] of TYPED) {
    for (const [suffix, little] of size === 1 ? [["", false]] : [["LE", true], ["BE", false]]) {
      const read = function (at = 0) {
        inRange(this, at, size);
        return new DataView(this.buffer, this.byteOffset, this.byteLength)["get" + view](at, little);
      };
      const write = function (value, at = 0) {
        inRange(this, at, size);
        new DataView(this.buffer, this.byteOffset, this.byteLength)["set" + view](at, value, little);
        return at + size;
      };
      for (const spelled of new Set([name, name.replace("UInt", "Uint")])) {
        Buffer.prototype["read" + spelled + suffix] = read;
        Buffer.prototype["write" + spelled + suffix] = write;
      }
    }
  }

  class TextEncoder {
    get encoding() {
      return "utf-8";
    }
    encode(text = "") {
      return host.encode(wellFormed(String(text)));
    }
  }

  class TextDecoder {
    constructor(encoding = "utf-8", options = {}) {
      this.encoding = normalEncoding(encoding) === "utf8" ? "utf-8" : encoding;
      this.fatal = !!options.fatal;
    }
    decode(bytes) {
      if (bytes === undefined) return "";
      const view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      return this.encoding === "utf-8" ? host.decode(view, this.fatal) : textOf(view, this.encoding);
    }
  }

  function codeError(Kind, code, message) {
    const error = new Kind(message);
    error.code = code;
    return error;
  }

  // ---- events ----------------------------------------------------------

  // A function, not a class, so that code written for `util.inherits`
  // can call `EventEmitter.call(this)`.
  function EventEmitter() {
    if (!this._events) this._events = new Map();
  }
  EventEmitter.prototype._list = function _list(name) {
    if (!this._events) this._events = new Map();
    if (!this._events.has(name)) this._events.set(name, []);
    return this._events.get(name);
  };
  EventEmitter.prototype.on = function on(name, listener) {
    this._list(name).push(listener);
    return this;
  };
  EventEmitter.prototype.addListener = function addListener(name, listener) {
    return this.on(name, listener);
  };
  EventEmitter.prototype.prependListener = function prependListener(name, listener) {
    this._list(name).unshift(listener);
    return this;
  };
  EventEmitter.prototype.once = function once(name, listener) {
    const once = (...args) => {
      this.off(name, once);
      listener.apply(this, args);
    };
    once.listener = listener;
    return this.on(name, once);
  };
  EventEmitter.prototype.off = function off(name, listener) {
    const list = this._list(name);
    const at = list.findIndex((l) => l === listener || l.listener === listener);
    if (at !== -1) list.splice(at, 1);
    return this;
  };
  EventEmitter.prototype.removeListener = function removeListener(name, listener) {
    return this.off(name, listener);
  };
  EventEmitter.prototype.removeAllListeners = function removeAllListeners(name) {
    if (name === undefined) this._events = new Map();
    else this._list(name).length = 0;
    return this;
  };
  EventEmitter.prototype.emit = function emit(name, ...args) {
    const list = this._list(name).slice();
    if (list.length === 0 && name === "error") throw args[0] instanceof Error ? args[0] : new Error(`Unhandled error. (${inspect(args[0])})`);
    for (const listener of list) listener.apply(this, args);
    return list.length > 0;
  };
  EventEmitter.prototype.listeners = function listeners(name) {
    return this._list(name).map((l) => l.listener || l);
  };
  EventEmitter.prototype.listenerCount = function listenerCount(name) {
    return this._list(name).length;
  };
  EventEmitter.prototype.eventNames = function eventNames() {
    const events = this._events || new Map();
    return Array.from(events.keys()).filter((name) => events.get(name).length > 0);
  };
  EventEmitter.prototype.setMaxListeners = function setMaxListeners() {
    return this;
  };
  EventEmitter.EventEmitter = EventEmitter;
  EventEmitter.once = (emitter, name) => new Promise((resolve) => emitter.once(name, (...args) => resolve(args)));

  // ---- timers ----------------------------------------------------------

  const timers = new Map();
  let nextTimer = 1;

  class Timeout {
    constructor(id) {
      this.id = id;
    }
    ref() {
      const timer = timers.get(this.id);
      if (timer) timer.ref = true;
      return this;
    }
    // An unref'd timer does not keep the script running, as in Node.
    unref() {
      const timer = timers.get(this.id);
      if (timer) timer.ref = false;
      return this;
    }
    hasRef() {
      const timer = timers.get(this.id);
      return !!(timer && timer.ref);
    }
    [Symbol.toPrimitive]() {
      return this.id;
    }
  }

  function addTimer(callback, delay, args, repeat) {
    if (typeof callback !== "function") throw codeError(TypeError, "ERR_INVALID_ARG_TYPE", 'The "callback" argument must be of type function');
    const id = nextTimer++;
    // Node takes a delay outside 1 to 2^31-1 ms as 1 ms.
    let ms = Number(delay);
    if (!(ms >= 1 && ms <= 2 ** 31 - 1)) ms = 1;
    timers.set(id, { at: host.monotonic() + ms, ms, callback, args, repeat, order: id, ref: true });
    return new Timeout(id);
  }

  function clearTimer(timer) {
    if (timer !== undefined && timer !== null) timers.delete(typeof timer === "object" ? timer.id : timer);
  }

  const setTimeout = (callback, delay, ...args) => addTimer(callback, delay, args, false);
  const promisifyCustom = Symbol.for("nodejs.util.promisify.custom");
  const timersPromises = {
    setTimeout: (delay, value) => new Promise((resolve) => addTimer(resolve, delay, [value], false)),
    setImmediate: (value) => new Promise((resolve) => setImmediate(resolve, value)),
  };
  setTimeout[promisifyCustom] = timersPromises.setTimeout;
  const setInterval = (callback, delay, ...args) => addTimer(callback, delay, args, true);
  function setImmediate(callback, ...args) {
    const timer = addTimer(callback, 0, args, false);
    timers.get(timer.id).at = host.monotonic();
    return timer;
  }
  setImmediate[promisifyCustom] = (value) => new Promise((resolve) => setImmediate(resolve, value));

  // Fires the earliest due timer (waiting for it): 0, or -1 when no timer
  // that keeps the script running is left.
  function tick() {
    if (![...timers.values()].some((timer) => timer.ref)) return -1;
    let first = null;
    for (const [id, timer] of timers) if (first === null || timer.at < first[1].at || (timer.at === first[1].at && timer.order < first[1].order)) first = [id, timer];
    const wait = first[1].at - host.monotonic();
    if (wait > 0) host.sleep(wait);
    const [id, timer] = first;
    if (timer.repeat) {
      timer.at = host.monotonic() + timer.ms;
      timer.order = nextTimer++;
    } else timers.delete(id);
    timer.callback.apply(undefined, timer.args);
    return 0;
  }

  // ---- path ------------------------------------------------------------

  function normalizeParts(parts, absolute) {
    const out = [];
    for (const part of parts) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
        else if (!absolute) out.push("..");
      } else out.push(part);
    }
    return out;
  }

  const path = {
    sep: "/",
    delimiter: ":",
    normalize(p) {
      if (p === "") return ".";
      const absolute = p.startsWith("/");
      const trailing = p.endsWith("/");
      let out = normalizeParts(p.split("/"), absolute).join("/");
      if (out === "" && !absolute) out = ".";
      if (out !== "" && trailing) out += "/";
      return (absolute ? "/" : "") + out;
    },
    join(...parts) {
      const joined = parts.filter((part) => part !== "").join("/");
      return joined === "" ? "." : path.normalize(joined);
    },
    resolve(...parts) {
      let resolved = "";
      for (let i = parts.length - 1; i >= 0 && !resolved.startsWith("/"); i--) {
        if (parts[i]) resolved = parts[i] + (resolved ? "/" + resolved : "");
      }
      if (!resolved.startsWith("/")) resolved = process.cwd() + (resolved ? "/" + resolved : "");
      const out = "/" + normalizeParts(resolved.split("/"), true).join("/");
      return out;
    },
    isAbsolute(p) {
      return p.startsWith("/");
    },
    dirname(p) {
      if (p === "") return ".";
      const trimmed = p.length > 1 ? p.replace(/\/+$/, "") : p;
      const at = trimmed.lastIndexOf("/");
      if (at === -1) return ".";
      if (at === 0) return "/";
      return trimmed.slice(0, at);
    },
    basename(p, ext) {
      const trimmed = p.length > 1 ? p.replace(/\/+$/, "") : p;
      let base = trimmed.slice(trimmed.lastIndexOf("/") + 1);
      if (ext && base.endsWith(ext) && base !== ext) base = base.slice(0, -ext.length);
      return base;
    },
    extname(p) {
      const base = path.basename(p);
      const at = base.lastIndexOf(".");
      return at <= 0 ? "" : base.slice(at);
    },
    relative(from, to) {
      const a = path.resolve(from).split("/").filter(Boolean);
      const b = path.resolve(to).split("/").filter(Boolean);
      let i = 0;
      while (i < a.length && i < b.length && a[i] === b[i]) i++;
      return [...a.slice(i).map(() => ".."), ...b.slice(i)].join("/");
    },
    parse(p) {
      const root = p.startsWith("/") ? "/" : "";
      const base = path.basename(p);
      const ext = path.extname(p);
      const dir = p.includes("/") ? path.dirname(p) : "";
      return { root, dir, base, ext, name: ext ? base.slice(0, -ext.length) : base };
    },
    format(parts) {
      const dir = parts.dir || parts.root || "";
      const base = parts.base || (parts.name || "") + (parts.ext || "");
      return dir ? (dir.endsWith("/") ? dir + base : dir + "/" + base) : base;
    },
    toNamespacedPath(p) {
      return p;
    },
  };
  path.posix = path;

  // ---- fs --------------------------------------------------------------

  function pathOf(p) {
    if (p instanceof URL) return fileURLToPath(p);
    if (typeof p === "string" && p.startsWith("file://")) return fileURLToPath(p);
    if (ArrayBuffer.isView(p)) return textOf(p, "utf8");
    if (typeof p !== "string") throw codeError(TypeError, "ERR_INVALID_ARG_TYPE", `The "path" argument must be of type string. Received ${inspect(p)}`);
    return p;
  }

  function encodingOf(options) {
    return typeof options === "string" ? options : options && options.encoding;
  }

  class Stats {
    constructor(raw) {
      this.size = raw.size;
      this.mtimeMs = raw.mtimeMs;
      this.atimeMs = raw.atimeMs;
      this.ctimeMs = raw.mtimeMs;
      this.birthtimeMs = raw.birthtimeMs;
      this.mtime = new Date(raw.mtimeMs);
      this.atime = new Date(raw.atimeMs);
      this.ctime = new Date(raw.mtimeMs);
      this.birthtime = new Date(raw.birthtimeMs);
      this.mode = raw.kind === "dir" ? 0o40755 : raw.kind === "symlink" ? 0o120777 : 0o100644;
      this.uid = 0;
      this.gid = 0;
      this.nlink = 1;
      this.blksize = 4096;
      this.blocks = Math.ceil(raw.size / 512);
      Object.defineProperty(this, "_kind", { value: raw.kind });
    }
    isFile() {
      return this._kind === "file";
    }
    isDirectory() {
      return this._kind === "dir";
    }
    isSymbolicLink() {
      return this._kind === "symlink";
    }
    isFIFO() {
      return false;
    }
    isSocket() {
      return false;
    }
    isBlockDevice() {
      return false;
    }
    isCharacterDevice() {
      return false;
    }
  }

  class Dirent {
    constructor(name, kind, parentPath) {
      this.name = name;
      this.parentPath = parentPath;
      this.path = parentPath;
      Object.defineProperty(this, "_kind", { value: kind });
    }
    isFile() {
      return this._kind === "file";
    }
    isDirectory() {
      return this._kind === "dir";
    }
    isSymbolicLink() {
      return this._kind === "symlink";
    }
  }

  // Open files: what `openSync` gave, written at `closeSync`.
  const openFiles = new Map();
  let nextFd = 10;

  function writeTo(target, data, options, append) {
    if (typeof data !== "string" && !ArrayBuffer.isView(data)) {
      throw codeError(TypeError, "ERR_INVALID_ARG_TYPE", `The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView. Received ${inspect(data)}`);
    }
    const bytes = typeof data === "string" ? bytesOf(data, encodingOf(options) || "utf8") : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (target === "/dev/stdout") target = 1;
    if (target === "/dev/stderr") target = 2;
    if (target === 1 || target === 2) return writeStream(target, bytes);
    if (typeof target === "number") {
      const file = openFiles.get(target);
      if (!file) throw codeError(Error, "EBADF", "EBADF: bad file descriptor, write");
      return host.writeFile(file.path, bytes, true);
    }
    const flag = options && options.flag;
    host.writeFile(pathOf(target), bytes, append || flag === "a" || flag === "a+");
  }

  function statOf(p, follow, options) {
    try {
      return new Stats(host.stat(pathOf(p), follow));
    } catch (error) {
      if (options && options.throwIfNoEntry === false && error.code === "ENOENT") return undefined;
      throw error;
    }
  }

  function readdirOf(p, options) {
    const dir = pathOf(p);
    const recursive = options && options.recursive;
    const out = [];
    const walk = (folder, prefix) => {
      for (const [name, kind] of host.readdir(folder)) {
        const shown = prefix ? prefix + "/" + name : name;
        out.push(options && options.withFileTypes ? new Dirent(name, kind, folder) : shown);
        if (recursive && kind === "dir") walk(folder + "/" + name, shown);
      }
    };
    walk(dir, "");
    return out;
  }

  const fsSync = {
    readFileSync(p, options) {
      const bytes = p === 0 || p === "/dev/stdin" ? host.readStdin() : host.readFile(pathOf(p));
      const encoding = encodingOf(options);
      return encoding ? textOf(bytes, encoding) : Buffer.fromBytes(bytes);
    },
    writeFileSync(p, data, options) {
      writeTo(p, data, options, false);
    },
    appendFileSync(p, data, options) {
      writeTo(p, data, options, true);
    },
    existsSync(p) {
      try {
        host.stat(pathOf(p), true);
        return true;
      } catch {
        return false;
      }
    },
    accessSync(p) {
      host.stat(pathOf(p), true);
    },
    statSync(p, options) {
      return statOf(p, true, options);
    },
    lstatSync(p, options) {
      return statOf(p, false, options);
    },
    readdirSync: readdirOf,
    mkdirSync(p, options) {
      const recursive = options && (options.recursive || options === true);
      const target = pathOf(p);
      const existed = recursive && fsSync.existsSync(target);
      host.mkdir(target, !!recursive);
      return recursive && !existed ? path.resolve(target) : undefined;
    },
    mkdtempSync(prefix) {
      for (;;) {
        const candidate = prefix + Math.random().toString(36).slice(2, 8);
        if (!fsSync.existsSync(candidate)) {
          host.mkdir(candidate, false);
          return candidate;
        }
      }
    },
    rmSync(p, options) {
      const target = pathOf(p);
      try {
        const stats = host.stat(target, false);
        if (stats.kind === "dir" && !(options && options.recursive)) {
          throw codeError(Error, "ERR_FS_EISDIR", `Path is a directory: rm returned EISDIR (is a directory) ${target}`);
        }
        host.remove(target, "tree");
      } catch (error) {
        if (!(options && options.force && error.code === "ENOENT")) throw error;
      }
    },
    rmdirSync(p, options) {
      host.remove(pathOf(p), options && options.recursive ? "tree" : "rmdir");
    },
    unlinkSync(p) {
      host.remove(pathOf(p), "file");
    },
    renameSync(from, to) {
      host.rename(pathOf(from), pathOf(to));
    },
    copyFileSync(from, to) {
      host.copyFile(pathOf(from), pathOf(to));
    },
    cpSync(from, to, options) {
      const source = pathOf(from);
      const target = pathOf(to);
      if (host.stat(source, true).kind === "dir") {
        if (!(options && options.recursive)) throw codeError(Error, "ERR_FS_EISDIR", `Recursive option is required to copy a directory: ${source}`);
        host.mkdir(target, true);
        for (const [name] of host.readdir(source)) fsSync.cpSync(source + "/" + name, target + "/" + name, options);
      } else host.copyFile(source, target);
    },
    realpathSync(p) {
      const resolved = path.resolve(pathOf(p));
      host.stat(resolved, true);
      return resolved;
    },
    openSync(p, flags = "r") {
      const target = path.resolve(pathOf(p));
      if (/^[wa]/.test(flags)) {
        if (flags.startsWith("w")) host.writeFile(target, "", false);
        else host.writeFile(target, "", true);
      } else host.stat(target, true);
      const fd = nextFd++;
      openFiles.set(fd, { path: target, flags });
      return fd;
    },
    closeSync(fd) {
      if (!openFiles.delete(fd)) throw codeError(Error, "EBADF", "EBADF: bad file descriptor, close");
    },
    writeSync(fd, data) {
      writeTo(fd, typeof data === "string" || ArrayBuffer.isView(data) ? data : String(data), undefined, true);
      return typeof data === "string" ? host.encode(data).length : data.byteLength;
    },
    fsyncSync() {},
    chmodSync() {},
    utimesSync() {},
  };
  fsSync.realpathSync.native = fsSync.realpathSync;

  // The promise and callback forms, over the synchronous ones: the
  // sandbox's files are local, so nothing is gained by waiting.
  const fsPromises = {};
  const fs = { ...fsSync, promises: fsPromises, constants: { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1 }, Stats, Dirent };
  for (const [name, sync] of Object.entries(fsSync)) {
    if (!name.endsWith("Sync")) continue;
    const base = name.slice(0, -4);
    fsPromises[base] = (...args) => new Promise((resolve) => resolve(sync(...args)));
    fs[base] = (...args) => {
      const callback = typeof args[args.length - 1] === "function" ? args.pop() : null;
      let result;
      let failure = null;
      try {
        result = sync(...args);
      } catch (error) {
        failure = error;
      }
      if (callback) setImmediate(() => (base === "exists" ? callback(failure === null && result) : callback(failure, result)));
      else if (failure) throw failure;
    };
  }
  fsPromises.constants = fs.constants;

  // A write stream that writes each chunk through to its file.
  class WriteStream extends EventEmitter {
    constructor(p, options) {
      super();
      this.path = pathOf(p);
      this.bytesWritten = 0;
      host.writeFile(this.path, "", !!(options && options.flags && options.flags.startsWith("a")));
    }
    write(chunk, encoding, callback) {
      if (typeof encoding === "function") callback = encoding;
      const bytes = typeof chunk === "string" ? bytesOf(chunk, typeof encoding === "string" ? encoding : "utf8") : chunk;
      host.writeFile(this.path, bytes, true);
      this.bytesWritten += bytes.length;
      if (callback) setImmediate(callback);
      return true;
    }
    end(chunk, encoding, callback) {
      if (typeof chunk === "function") [callback, chunk] = [chunk, undefined];
      if (chunk !== undefined && chunk !== null) this.write(chunk, encoding);
      setImmediate(() => {
        this.emit("finish");
        this.emit("close");
        if (callback) callback();
      });
      return this;
    }
  }
  fs.createWriteStream = (p, options) => new WriteStream(p, options);
  fs.WriteStream = WriteStream;

  // ---- url -------------------------------------------------------------

  class URL {
    constructor(input, base) {
      let text = String(input);
      if (!/^[a-zA-Z][a-zA-Z\d+.-]*:/.test(text)) {
        if (base === undefined) throw codeError(TypeError, "ERR_INVALID_URL", `Invalid URL: ${text}`);
        const parent = new URL(base);
        if (text.startsWith("//")) text = parent.protocol + text;
        else if (text.startsWith("/")) text = parent.origin + text;
        else if (text.startsWith("?") || text.startsWith("#")) text = parent.origin + parent.pathname + (text.startsWith("#") ? parent.search : "") + text;
        else text = parent.origin + path.normalize(parent.pathname.replace(/[^/]*$/, "") + text);
        if (parent.protocol === "file:") text = "file://" + text.replace(/^file:(\/\/)?/, "");
      }
      const match = /^([a-zA-Z][a-zA-Z\d+.-]*:)(?:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^:/?#]*)(?::(\d+))?)?([^?#]*)(\?[^#]*)?(#.*)?$/.exec(text);
      if (!match) throw codeError(TypeError, "ERR_INVALID_URL", `Invalid URL: ${text}`);
      this.protocol = match[1].toLowerCase();
      this.username = match[2] || "";
      this.password = match[3] || "";
      this.hostname = match[4] || "";
      this.port = match[5] || "";
      this.pathname = match[6] || (this.hostname || this.protocol === "file:" ? "/" : "");
      this.search = match[7] && match[7] !== "?" ? match[7] : "";
      this.hash = match[8] && match[8] !== "#" ? match[8] : "";
    }
    get host() {
      return this.hostname + (this.port ? ":" + this.port : "");
    }
    get origin() {
      return this.protocol + "//" + this.host;
    }
    get href() {
      const auth = this.username ? this.username + (this.password ? ":" + this.password : "") + "@" : "";
      return this.protocol + "//" + auth + this.host + this.pathname + this.search + this.hash;
    }
    // One object, linked: changing it changes the URL's `search`.
    get searchParams() {
      if (!this._params) {
        this._params = new URLSearchParams(this.search);
        this._params._url = this;
      }
      return this._params;
    }
    toString() {
      return this.href;
    }
    toJSON() {
      return this.href;
    }
  }

  class URLSearchParams {
    constructor(init = "") {
      this._pairs = [];
      if (typeof init === "string") {
        for (const part of init.replace(/^\?/, "").split("&")) {
          if (!part) continue;
          const [name, ...value] = part.split("=");
          const decode = (t) => decodeURIComponent(t.replace(/\+/g, " "));
          this._pairs.push([decode(name), decode(value.join("="))]);
        }
      } else if (init) for (const [name, value] of Array.isArray(init) ? init : Object.entries(init)) this._pairs.push([String(name), String(value)]);
    }
    get(name) {
      const found = this._pairs.find(([n]) => n === name);
      return found ? found[1] : null;
    }
    getAll(name) {
      return this._pairs.filter(([n]) => n === name).map(([, v]) => v);
    }
    has(name) {
      return this._pairs.some(([n]) => n === name);
    }
    set(name, value) {
      const at = this._pairs.findIndex(([n]) => n === name);
      if (at === -1) return this.append(name, value);
      this._pairs = this._pairs.filter(([n], i) => n !== name || i === at);
      this._pairs[at][1] = String(value);
      this._changed();
    }
    append(name, value) {
      this._pairs.push([String(name), String(value)]);
      this._changed();
    }
    delete(name) {
      this._pairs = this._pairs.filter(([n]) => n !== name);
      this._changed();
    }
    sort() {
      this._pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      this._changed();
    }
    _changed() {
      if (this._url) {
        const text = this.toString();
        this._url.search = text ? "?" + text : "";
      }
    }
    get size() {
      return this._pairs.length;
    }
    forEach(callback, self) {
      for (const [name, value] of this._pairs) callback.call(self, value, name, this);
    }
    keys() {
      return this._pairs.map(([name]) => name)[Symbol.iterator]();
    }
    values() {
      return this._pairs.map(([, value]) => value)[Symbol.iterator]();
    }
    entries() {
      return this._pairs.map((pair) => pair.slice())[Symbol.iterator]();
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    toString() {
      const encode = (text) => encodeURIComponent(text).replace(/%20/g, "+");
      return this._pairs.map(([n, v]) => encode(n) + "=" + encode(v)).join("&");
    }
  }

  function fileURLToPath(url) {
    const parsed = typeof url === "string" ? new URL(url) : url;
    if (parsed.protocol !== "file:") throw codeError(TypeError, "ERR_INVALID_URL_SCHEME", "The URL must be of scheme file");
    return decodeURIComponent(parsed.pathname);
  }

  function pathToFileURL(p) {
    return new URL("file://" + encodeURI(path.resolve(p)));
  }

  // ---- process -----------------------------------------------------------

  const env = {};
  function refreshEnv(pairs) {
    for (const [name, value] of pairs) env[name] = value;
  }

  function stream(fd) {
    const out = new EventEmitter();
    out.fd = fd;
    out.isTTY = false;
    out.columns = 80;
    out.write = (chunk, encoding, callback) => {
      if (typeof encoding === "function") callback = encoding;
      writeStream(fd, typeof chunk === "string" ? chunk : chunk instanceof Uint8Array ? chunk : String(chunk));
      if (callback) setImmediate(callback);
      return true;
    };
    out.end = (chunk) => {
      if (chunk !== undefined) out.write(chunk);
    };
    return out;
  }

  const stdin = new EventEmitter();
  stdin.fd = 0;
  stdin.isTTY = false;
  stdin.setEncoding = (encoding) => {
    stdin._encoding = encoding;
    return stdin;
  };
  stdin.resume = () => stdin;
  stdin.pause = () => stdin;
  // Standard input arrives whole once the script has set its listeners.
  let stdinRead = false;
  const deliverStdin = () => {
    if (stdinRead) return;
    stdinRead = true;
    const bytes = Buffer.fromBytes(host.readStdin());
    if (bytes.length > 0) stdin.emit("data", stdin._encoding ? bytes.toString(stdin._encoding) : bytes);
    stdin.emit("end");
    stdin.emit("close");
  };
  const listen = stdin.on.bind(stdin);
  stdin.on = (name, listener) => {
    listen(name, listener);
    if (name === "data" || name === "end" || name === "readable") setImmediate(deliverStdin);
    return stdin;
  };
  stdin.addListener = stdin.on;
  stdin.read = () => null;
  stdin[Symbol.asyncIterator] = async function* () {
    if (stdinRead) return;
    stdinRead = true;
    const bytes = Buffer.fromBytes(host.readStdin());
    if (bytes.length > 0) yield stdin._encoding ? bytes.toString(stdin._encoding) : bytes;
  };

  // `process.nextTick` callbacks: the engine runs them before promise
  // jobs, as Node does.
  const ticks = [];
  function runTicks() {
    while (ticks.length > 0) {
      const [callback, args] = ticks.shift();
      callback(...args);
    }
  }

  const started = host.monotonic();
  const process = new EventEmitter();
  Object.assign(process, {
    argv: ["node"],
    argv0: "node",
    execArgv: [],
    execPath: "/usr/bin/node",
    env,
    pid: 1,
    ppid: 0,
    platform: "wasi",
    arch: "wasm32",
    version: "v22.0.0",
    versions: { node: "22.0.0", quickjs: "cordon" },
    release: { name: "node" },
    title: "node",
    exitCode: undefined,
    stdout: stream(1),
    stderr: stream(2),
    stdin,
    cwd: () => host.cwd(),
    chdir: (dir) => host.chdir(dir),
    exit(code) {
      if (code !== undefined) process.exitCode = code;
      exiting = true;
      host.exit(Number(process.exitCode) || 0);
      // The engine stops the script at its next step; nothing after runs.
      for (;;) {}
    },
    abort() {
      exiting = true;
      host.exit(134);
      for (;;) {}
    },
    nextTick(callback, ...args) {
      ticks.push([callback, args]);
    },
    hrtime: Object.assign(
      (previous) => {
        const now = host.monotonic();
        const seconds = Math.floor(now / 1000);
        const nanos = Math.floor((now % 1000) * 1e6);
        if (!previous) return [seconds, nanos];
        let ds = seconds - previous[0];
        let dn = nanos - previous[1];
        if (dn < 0) {
          ds -= 1;
          dn += 1e9;
        }
        return [ds, dn];
      },
      { bigint: () => BigInt(Math.floor(host.monotonic() * 1e6)) },
    ),
    uptime: () => (host.monotonic() - started) / 1000,
    memoryUsage: Object.assign(() => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }), { rss: () => 0 }),
    cpuUsage: () => ({ user: 0, system: 0 }),
    emitWarning(warning) {
      writeStream(2, `(node) Warning: ${warning instanceof Error ? warning.message : warning}\n`);
    },
    umask: () => 0o22,
    getuid: () => 0,
    getgid: () => 0,
    kill() {
      throw codeError(Error, "ENOSYS", "process.kill is not available in the sandbox: there are no other processes");
    },
  });

  // ---- console -----------------------------------------------------------

  const counts = new Map();
  const times = new Map();
  let groupIndent = "";
  const out = (fd, text) => writeStream(fd, groupIndent ? text.replace(/^/gm, groupIndent) + "\n" : text + "\n");
  const console = {
    log: (...args) => out(1, format(...args)),
    info: (...args) => out(1, format(...args)),
    debug: (...args) => out(1, format(...args)),
    error: (...args) => out(2, format(...args)),
    warn: (...args) => out(2, format(...args)),
    trace: (...args) => out(2, "Trace: " + format(...args) + "\n" + (new Error().stack || "")),
    dir: (value, options) => out(1, inspect(value, options)),
    assert(condition, ...args) {
      if (!condition) out(2, "Assertion failed" + (args.length ? ": " + format(...args) : ""));
    },
    count(label = "default") {
      counts.set(label, (counts.get(label) || 0) + 1);
      out(1, `${label}: ${counts.get(label)}`);
    },
    countReset(label = "default") {
      counts.delete(label);
    },
    time(label = "default") {
      times.set(label, host.monotonic());
    },
    timeEnd(label = "default") {
      if (times.has(label)) out(1, `${label}: ${(host.monotonic() - times.get(label)).toFixed(3)}ms`);
      times.delete(label);
    },
    timeLog(label = "default", ...args) {
      if (times.has(label)) out(1, `${label}: ${(host.monotonic() - times.get(label)).toFixed(3)}ms` + (args.length ? " " + format(...args) : ""));
    },
    group(...args) {
      if (args.length) out(1, format(...args));
      groupIndent += "  ";
    },
    groupEnd() {
      groupIndent = groupIndent.slice(2);
    },
    table(data) {
      if (typeof data !== "object" || data === null) return out(1, format(data));
      const rows = Object.entries(data);
      const columns = [];
      for (const [, row] of rows) if (row && typeof row === "object") for (const name of Object.keys(row)) if (!columns.includes(name)) columns.push(name);
      const header = ["(index)", ...(columns.length ? columns : ["Values"])];
      const cells = rows.map(([index, row]) => [index, ...(columns.length ? columns.map((c) => (row && c in row ? inspect(row[c], { depth: 0 }) : "")) : [inspect(row)])]);
      const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => String(r[i]).length)) + 2);
      const line = (l, m, r) => l + widths.map((w) => "─".repeat(w)).join(m) + r;
      const row = (r) => "│" + r.map((c, i) => {
        const text = String(c);
        const left = Math.floor((widths[i] - text.length) / 2);
        return " ".repeat(left) + text + " ".repeat(widths[i] - text.length - left);
      }).join("│") + "│";
      out(1, [line("┌", "┬", "┐"), row(header), line("├", "┼", "┤"), ...cells.map(row), line("└", "┴", "┘")].join("\n"));
    },
  };
  console.groupCollapsed = console.group;

  // ---- modules ---------------------------------------------------------

  // A module whose every function throws: it imports, so a script that
  // only might use it loads, and a call says why it cannot run.
  function refuse(name, members) {
    const module = {};
    for (const member of members) {
      module[member] = () => {
        throw codeError(Error, "ERR_SANDBOX", `${name}.${member} is not available in the sandbox: scripts run no processes`);
      };
    }
    return module;
  }

  const util = {
    format,
    inspect,
    promisify(fn) {
      if (typeof fn !== "function") throw codeError(TypeError, "ERR_INVALID_ARG_TYPE", 'The "original" argument must be of type function');
      if (typeof fn[promisifyCustom] === "function") return fn[promisifyCustom];
      return function (...args) {
        return new Promise((resolve, reject) => fn.call(this, ...args, (error, value) => (error ? reject(error) : resolve(value))));
      };
    },
    callbackify(fn) {
      return (...args) => {
        const callback = args.pop();
        fn(...args).then((value) => callback(null, value), (error) => callback(error));
      };
    },
    inherits(child, parent) {
      Object.setPrototypeOf(child.prototype, parent.prototype);
      Object.setPrototypeOf(child, parent);
      child.super_ = parent;
    },
    deprecate(fn) {
      return fn;
    },
    isDeepStrictEqual(a, b) {
      return deepEqual(a, b);
    },
    types: {
      isPromise: (v) => v instanceof Promise,
      isDate: (v) => v instanceof Date,
      isRegExp: (v) => v instanceof RegExp,
      isUint8Array: (v) => v instanceof Uint8Array,
    },
    TextEncoder,
    TextDecoder,
    isArray: Array.isArray,
  };
  util.inspect.custom = Symbol.for("nodejs.util.inspect.custom");
  util.promisify.custom = promisifyCustom;

  function deepEqual(a, b) {
    if (Object.is(a, b)) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
    if (a instanceof Date) return a.getTime() === b.getTime();
    if (a instanceof Error && (a.name !== b.name || a.message !== b.message)) return false;
    if (a instanceof Map || a instanceof Set) return deepEqual(Array.from(a), Array.from(b));
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }

  class AssertionError extends Error {
    constructor(options) {
      super(options.message);
      this.name = "AssertionError";
      this.code = "ERR_ASSERTION";
      this.actual = options.actual;
      this.expected = options.expected;
      this.operator = options.operator;
    }
  }

  function check(ok, message, actual, expected, operator, fallback) {
    if (ok) return;
    if (message instanceof Error) throw message;
    throw new AssertionError({ message: message || fallback, actual, expected, operator });
  }

  // Whether `error` is what `assert.throws` expected: an instance of a
  // class, a match of a pattern, an object's properties, or a validator's yes.
  function matchesExpected(error, expected, message, operator) {
    if (expected === undefined || typeof expected === "string") return;
    let ok;
    if (expected instanceof RegExp) ok = expected.test(String(error));
    else if (typeof expected === "function") {
      if (expected === Error || Error.isPrototypeOf(expected)) ok = error instanceof expected;
      else if (expected.prototype !== undefined && error instanceof expected) ok = true;
      else ok = expected.call({}, error) === true;
    } else ok = Object.keys(expected).every((key) => (expected[key] instanceof RegExp && typeof error[key] === "string" ? expected[key].test(error[key]) : deepEqual(error[key], expected[key])));
    if (!ok) throw error instanceof Error && typeof expected === "function" && !message ? error : new AssertionError({ message: message || `The error is not what was expected: ${inspect(error)}`, actual: error, expected, operator });
  }

  const assert = (value, message) => check(value, message, value, true, "==", "The expression evaluated to a falsy value");
  Object.assign(assert, {
    ok: (value, message) => assert(value, message),
    equal: (a, b, message) => check(a == b, message, a, b, "==", `${inspect(a)} == ${inspect(b)}`),
    notEqual: (a, b, message) => check(a != b, message, a, b, "!=", `${inspect(a)} != ${inspect(b)}`),
    strictEqual: (a, b, message) => check(Object.is(a, b), message, a, b, "strictEqual", `Expected values to be strictly equal:\n\n${inspect(a)} !== ${inspect(b)}\n`),
    notStrictEqual: (a, b, message) => check(!Object.is(a, b), message, a, b, "notStrictEqual", `Expected "actual" to be strictly unequal to: ${inspect(b)}`),
    deepEqual: (a, b, message) => check(deepEqual(a, b), message, a, b, "deepEqual", "Expected values to be loosely deep-equal"),
    deepStrictEqual: (a, b, message) => check(deepEqual(a, b), message, a, b, "deepStrictEqual", `Expected values to be strictly deep-equal:\n${inspect(a)}\n\nshould equal\n\n${inspect(b)}`),
    notDeepStrictEqual: (a, b, message) => check(!deepEqual(a, b), message, a, b, "notDeepStrictEqual", "Expected values not to be strictly deep-equal"),
    fail: (message) => check(false, message, undefined, undefined, "fail", "Failed"),
    match: (text, pattern, message) => check(pattern.test(text), message, text, pattern, "match", `The input did not match the regular expression ${pattern}`),
    throws(fn, expected, message) {
      try {
        fn();
      } catch (error) {
        return matchesExpected(error, expected, message, "throws");
      }
      check(false, typeof expected === "string" ? expected : message, undefined, expected, "throws", "Missing expected exception.");
    },
    async rejects(promise, expected, message) {
      try {
        await (typeof promise === "function" ? promise() : promise);
      } catch (error) {
        return matchesExpected(error, expected, message, "rejects");
      }
      check(false, typeof expected === "string" ? expected : message, undefined, expected, "rejects", "Missing expected rejection.");
    },
    AssertionError,
  });
  // The strict mode: `equal` and `deepEqual` are the strict ones.
  const strict = (value, message) => assert(value, message);
  Object.assign(strict, assert, {
    equal: assert.strictEqual,
    notEqual: assert.notStrictEqual,
    deepEqual: assert.deepStrictEqual,
    notDeepEqual: assert.notDeepStrictEqual,
  });
  strict.strict = strict;
  assert.strict = strict;

  const os = {
    EOL: "\n",
    platform: () => "wasi",
    type: () => "WASI",
    arch: () => "wasm32",
    release: () => "0.2",
    hostname: () => "sandbox",
    homedir: () => env.HOME || "/tmp",
    tmpdir: () => env.TMPDIR || "/tmp",
    userInfo: () => ({ username: env.USER || "sandbox", uid: 0, gid: 0, shell: null, homedir: env.HOME || "/tmp" }),
    cpus: () => [{ model: "wasm32", speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }],
    availableParallelism: () => 1,
    totalmem: () => 0,
    freemem: () => 0,
    loadavg: () => [0, 0, 0],
    uptime: () => 0,
    networkInterfaces: () => ({}),
    endianness: () => "LE",
    constants: { signals: {} },
  };

  const builtins = {
    assert,
    buffer: { Buffer, constants: { MAX_LENGTH: 2 ** 31 - 1 } },
    child_process: refuse("child_process", ["exec", "execSync", "execFile", "execFileSync", "spawn", "spawnSync", "fork"]),
    "timers/promises": timersPromises,
    "assert/strict": null,
    events: EventEmitter,
    fs,
    "fs/promises": fsPromises,
    os,
    path,
    "path/posix": path,
    process,
    timers: { setTimeout, setInterval, setImmediate, clearTimeout: clearTimer, clearInterval: clearTimer, clearImmediate: clearTimer },
    url: { URL, URLSearchParams, fileURLToPath, pathToFileURL },
    util,
  };

  // CommonJS, as Node runs it: each file wrapped in a function of
  // (exports, require, module, __filename, __dirname), cached by path.
  class Module {
    constructor(id, parent) {
      this.id = id;
      this.filename = id;
      this.path = path.dirname(id);
      this.exports = {};
      this.parent = parent;
      this.loaded = false;
      this.children = [];
      this.paths = [];
    }
  }
  const cache = Object.create(null);
  builtins["assert/strict"] = strict;
  builtins.module = { Module, builtinModules: [...Object.keys(builtins), "module"].sort(), createRequire: (from) => makeRequire(new Module(createRequireBase(from), null)) };

  // The file `createRequire` resolves from: a folder's path ending in `/`
  // stands for a file in it.
  function createRequireBase(from) {
    const base = pathOf(from);
    return base.endsWith("/") ? base + "noop.js" : base;
  }

  function makeRequire(module) {
    const require = (request) => {
      if (typeof request !== "string") throw codeError(TypeError, "ERR_INVALID_ARG_TYPE", 'The "id" argument must be of type string');
      return requireFrom(request, module);
    };
    require.resolve = (request) => host.resolve(request, module.path, "require");
    require.cache = cache;
    require.main = mainModule;
    return require;
  }

  let mainModule;

  function requireFrom(request, parent) {
    const resolved = host.resolve(request, parent ? parent.path : process.cwd(), "require");
    if (resolved.startsWith("node:")) return builtins[resolved.slice(5)];
    return requireFile(resolved, parent);
  }

  function requireFile(file, parent) {
    if (cache[file]) return cache[file].exports;
    const module = new Module(file, parent);
    if (parent) parent.children.push(module);
    cache[file] = module;
    try {
      const kind = host.format(file);
      if (kind === "json") module.exports = JSON.parse(host.readText(file));
      else if (kind === "module") {
        throw codeError(Error, "ERR_REQUIRE_ESM", `require() of ES Module ${file} is not supported here: use import`);
      } else runCommonJs(module, host.readText(file));
    } catch (error) {
      delete cache[file];
      throw error;
    }
    module.loaded = true;
    return module.exports;
  }

  function runCommonJs(module, source) {
    const body = source.startsWith("#!") ? "//" + source : source;
    const wrapper = host.evalScript(`(function (exports, require, module, __filename, __dirname) {${body}\n})`, module.filename);
    wrapper.call(module.exports, module.exports, makeRequire(module), module, module.filename, module.path);
  }

  // The module loader's view: the names a wrapper module exports, and
  // the object behind them.
  function exportsOf(kind, name) {
    return kind === "builtin" ? builtins[name] : requireFile(name, null);
  }
  function exportNames(kind, name) {
    const value = exportsOf(kind, name);
    if (value === null || (typeof value !== "object" && typeof value !== "function")) return [];
    const reserved = new Set(["default", "arguments", "eval", "await", "yield", "let", "static", "enum", "implements", "package", "protected", "interface", "private", "public", "new", "delete", "class", "function", "var", "const", "if", "else", "for", "while", "do", "return", "switch", "case", "break", "continue", "throw", "try", "catch", "finally", "typeof", "instanceof", "in", "of", "void", "with", "this", "super", "import", "export", "extends", "null", "true", "false", "debugger"]);
    return Object.keys(value).filter((key) => /^[A-Za-z_$][\w$]*$/.test(key) && !reserved.has(key));
  }

  // ---- uncaught errors and unhandled rejections -----------------------

  const unhandled = new Map();
  function trackRejection(promise, reason, handled) {
    if (handled) unhandled.delete(promise);
    else unhandled.set(promise, reason);
  }

  function report(error) {
    if (error instanceof Error) {
      const own = Object.keys(error).filter((k) => k !== "stack" && k !== "message");
      let text = errorText(error);
      if (own.length) text += " " + inspect(Object.fromEntries(own.map((k) => [k, error[k]])));
      writeStream(2, `${text}\n\nNode.js ${process.version}\n`);
    } else writeStream(2, `Uncaught ${inspect(error, { depth: 2 })}\n`);
  }

  // ---- start and finish ---------------------------------------------------

  function globalsFor(module) {
    globalThis.require = makeRequire(module);
    globalThis.module = module;
    globalThis.exports = module.exports;
    globalThis.__filename = module.filename;
    globalThis.__dirname = module.path;
  }

  // An ES module's body runs as a promise job, as in Node: the promise
  // callbacks it queues run before its `process.nextTick` ones.
  function importMain(file) {
    Promise.resolve()
      .then(() => host.import(file))
      .catch((error) => {
      if (!uncaught(error)) host.exit(1);
    });
  }

  function start(kind, source, args, module) {
    refreshEnv(host.env());
    if (kind === "script") {
      let file;
      try {
        file = host.resolve(source.startsWith("/") ? source : "./" + source, process.cwd(), "require");
      } catch (error) {
        writeStream(2, `node: cannot find module '${path.resolve(source)}'\n`);
        host.exit(1);
        return;
      }
      process.argv = ["node", file, ...args];
      mainModule = new Module(file, null);
      if (host.format(file) === "module") return importMain(file);
      cache[file] = mainModule;
      const text = host.readText(file);
      runCommonJs(mainModule, text);
      mainModule.loaded = true;
      return;
    }
    process.argv = ["node", ...args];
    const text = kind === "stdin" ? textOf(host.readStdin(), "utf8") : source;
    const name = path.join(process.cwd(), kind === "stdin" ? "[stdin]" : "[eval]");
    mainModule = new Module(name, null);
    if (module) {
      Promise.resolve()
        .then(() => host.importSource(name, text))
        .catch((error) => {
        if (!uncaught(error)) host.exit(1);
      });
      return;
    }
    globalsFor(mainModule);
    const result = host.evalScript(text, `[${kind === "stdin" ? "stdin" : "eval"}]`);
    if (kind === "print") console.log(typeof result === "string" ? result : inspect(result));
  }

  // After the ticks and jobs of a turn: each rejection nobody handled goes
  // to the `unhandledRejection` listeners, or is reported; whether one was
  // reported (which ends the run).
  function checkRejections() {
    for (const [promise, reason] of unhandled) {
      unhandled.delete(promise);
      if (process.listenerCount("unhandledRejection") > 0) {
        process.emit("unhandledRejection", reason, promise);
        continue;
      }
      report(reason instanceof Error ? reason : Object.assign(new Error(`This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "${inspect(reason)}".`), { code: "ERR_UNHANDLED_REJECTION" }));
      return true;
    }
    return false;
  }

  // An uncaught exception goes to the `uncaughtException` listeners, or is
  // reported; whether a listener took it.
  function uncaught(error) {
    if (process.listenerCount("uncaughtException") > 0) {
      process.emit("uncaughtException", error, "uncaughtException");
      return true;
    }
    report(error);
    return false;
  }

  function finish(failed) {
    const status = failed ? 1 : Number(process.exitCode) || 0;
    process.emit("exit", status);
    return failed ? 1 : Number(process.exitCode) || 0;
  }

  Object.assign(globalThis, {
    Buffer,
    TextEncoder,
    TextDecoder,
    URL,
    URLSearchParams,
    console,
    process,
    setTimeout,
    setInterval,
    setImmediate,
    clearTimeout: clearTimer,
    clearInterval: clearTimer,
    clearImmediate: clearTimer,
    global: globalThis,
  });
  Object.defineProperty(globalThis, "__node", {
    value: Object.freeze({ start, tick, runTicks, hasTicks: () => ticks.length > 0, checkRejections, uncaught, finish, emitExit(status) {
        exiting = false;
        process.emit("exit", status);
      }, report, trackRejection, exportNames, exportsOf }),
  });
})();
