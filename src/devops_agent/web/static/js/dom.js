// DOM helpers. The page never assigns innerHTML/outerHTML or calls insertAdjacentHTML: every
// string from the server (tool output, model text, titles) becomes a text node, after visible()
// has written out the characters a terminal or a bidi-aware renderer would act on.

const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Text with control characters written out, as devops_agent.textsafe.visible does:
 * C0 controls and DEL as control pictures (ESC as ␛), C1 and bidi controls as escapes. */
export function visible(text) {
  const s = String(text ?? "");
  if (!UNSAFE.test(s)) return s;
  UNSAFE.lastIndex = 0;
  return s.replace(/\r\n/g, "\n").replace(UNSAFE, (ch) => {
    const code = ch.codePointAt(0);
    if (code < 0x20) return String.fromCodePoint(0x2400 + code);
    if (code === 0x7f) return "\u2421";
    if (code <= 0x9f) return "\\x" + code.toString(16).padStart(2, "0");
    return "\\u" + code.toString(16).padStart(4, "0");
  });
}

/** Make an element: h("div", {class: "x", dataset: {id: 1}, onclick: fn}, child, "text", …).
 * String children become text nodes (through visible()); attributes are set one by one. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "text") el.textContent = visible(value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, ...children);
  return el;
}

/** Append children: nodes as they are, strings as (visible) text, arrays flattened. */
export function append(el, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(visible(child)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** JSON pretty-printed for display (arguments, impact). */
export function pretty(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

export function fmtTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toLocaleString();
}
