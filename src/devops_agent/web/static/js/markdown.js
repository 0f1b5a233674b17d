// Markdown to DOM, safe by construction: a small CommonMark subset (headings, paragraphs, lists,
// block quotes, fenced code, tables, rules; inline code, bold, italic, links) is parsed into
// elements built with createElement and text nodes. No HTML in the source is ever parsed, so there
// is nothing to sanitize: a "<script>" in model text stays the literal text "<script>".
// Links are kept only for http(s) and mailto URLs and open with rel="noopener noreferrer".

import { h } from "./dom.js";

const SAFE_URL = /^(https?:|mailto:)/i;

/** Inline spans of one line of text: `code`, **bold**, *em* / _em_, [text](url). */
export function inline(text) {
  const out = [];
  const re = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|(?<!\w)__([^_]+)__(?!\w)|\*([^*\s][^*]*)\*|(?<!\w)_([^_\s][^_]*)_(?!\w)|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  let m;
  while ((m = re.exec(text)) !== null) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) out.push(h("code", {}, m[2]));
    else if (m[3] || m[4]) out.push(h("strong", {}, inline(m[3] || m[4])));
    else if (m[5] || m[6]) out.push(h("em", {}, inline(m[5] || m[6])));
    else if (m[7]) {
      const url = m[8];
      out.push(
        SAFE_URL.test(url)
          ? h("a", { href: url, rel: "noopener noreferrer nofollow", target: "_blank" }, inline(m[7]))
          : `${m[7]} (${url})`,
      );
    }
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

/** Render Markdown text as a DocumentFragment. */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  const lines = String(text ?? "").replace(/\r\n/g, "\n").split("\n");
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) frag.append(h("p", {}, inline(para.join(" "))));
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      flush();
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i++;
      frag.append(h("pre", { class: "code" }, h("code", { "data-lang": fence[2] || null }, body.join("\n"))));
      continue;
    }
    if (!line.trim()) {
      flush();
      i++;
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      flush();
      // Model headings sit under the page's own h1/h2: shift them down two levels.
      const level = Math.min(6, heading[1].length + 2);
      frag.append(h(`h${level}`, {}, inline(heading[2])));
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      frag.append(h("hr", {}));
      i++;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      flush();
      const head = splitRow(line);
      i += 2;
      const rows = [];
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) rows.push(splitRow(lines[i++]));
      frag.append(
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            {},
            h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, inline(c))))),
            h("tbody", {}, rows.map((r) => h("tr", {}, head.map((_, k) => h("td", {}, inline(r[k] ?? "")))))),
          ),
        ),
      );
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const body = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ""));
      frag.append(h("blockquote", {}, renderMarkdown(body.join("\n"))));
      continue;
    }
    const item = line.match(/^(\s*)([-*+]|\d+[.)])\s+(.*)$/);
    if (item) {
      flush();
      const ordered = /\d/.test(item[2]);
      const list = h(ordered ? "ol" : "ul", {});
      while (i < lines.length) {
        const m = lines[i].match(/^(\s*)([-*+]|\d+[.)])\s+(.*)$/);
        if (m && /\d/.test(m[2]) === ordered) {
          list.append(h("li", {}, inline(m[3])));
          i++;
        } else if (lines[i].trim() && /^\s{2,}/.test(lines[i]) && list.lastChild) {
          list.lastChild.append(" ", ...inline(lines[i].trim())); // a continuation line
          i++;
        } else break;
      }
      frag.append(list);
      continue;
    }
    para.push(line.trim());
    i++;
  }
  flush();
  return frag;
}
