/**
 * The values of the second parse of a jobspec with secret variables (see ./secrets.ts): every character of a
 * secret value replaced by a different one of the same kind, so that every field computed from it differs;
 * and the literal values of an HCL text (a var-file, or a jobspec's string literals), read to swap them in a
 * var-file text and to list what a secret jobspec may quote.
 */
import type { JobVariableValue } from "./varfile";

/**
 * Returns the character that replaces `c` in a swapped value: another of the same kind (letter of the same
 * case, digit, punctuation), never a character that would change how HCL reads the text.
 */
function swapChar(c: string): string {
  const code = c.charCodeAt(0);
  if (c >= "a" && c <= "z") return c === "z" ? "a" : String.fromCharCode(code + 1);
  if (c >= "A" && c <= "Z") return c === "Z" ? "A" : String.fromCharCode(code + 1);
  if (c >= "0" && c <= "9") return c === "9" ? "0" : String.fromCharCode(code + 1);
  if (c === "\n" || c === "\r") return c;
  return PUNCT_SWAP[c] ?? (c === "x" ? "y" : "x");
}

const PUNCT_SWAP: Readonly<Record<string, string>> = Object.freeze({
  "-": "_",
  _: "-",
  ".": ",",
  ",": ".",
  " ": "_",
  ":": ";",
  ";": ":",
  "/": "|",
  "|": "/",
  "=": "+",
  "+": "=",
  "@": "#",
  "#": "@",
  "!": "?",
  "?": "!",
  "\t": " ",
});

/** Returns `s` with every character replaced by a different one of the same kind (same length). */
function swapped(s: string): string {
  let out = "";
  for (const c of s) out += swapChar(c);
  return out;
}

export function swappedValue(v: JobVariableValue): JobVariableValue {
  if (typeof v === "boolean") return !v;
  if (typeof v === "number") {
    const t = swappedNumber(String(v));
    const n = Number(t);
    return Number.isFinite(n) && n !== v ? n : v + 1;
  }
  return swapped(v);
}

/** Swaps the digits of a number literal; its first digit never becomes 0 (9 becomes 1). */
function swappedNumber(t: string): string {
  let first = true;
  let out = "";
  for (const c of t) {
    if (c >= "0" && c <= "9") {
      out += first && c === "9" ? "1" : swapChar(c);
      first = false;
    } else out += c;
  }
  return out;
}

/** One literal value of an HCL text: where it is, its text as written, and its value. */
interface Literal {
  start: number;
  end: number;
  kind: "string" | "heredoc" | "number" | "bool";
  value: string;
}

/**
 * Finds the literal values of an HCL text (a var-file, or a jobspec's string literals): quoted strings
 * (escapes and `$${`/`%%{` read), heredocs, numbers and booleans; comments are skipped, names are not values.
 */
function scanLiterals(text: string): Literal[] {
  const out: Literal[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i] ?? "";
    if (c === "#" || (c === "/" && text[i + 1] === "/")) {
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? n : nl + 1;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '"') {
      let j = i + 1;
      let value = "";
      while (j < n && text[j] !== '"' && text[j] !== "\n") {
        if (text[j] === "\\" && j + 1 < n) {
          value += unescapeChar(text[j + 1] ?? "");
          j += 2;
        } else if ((text[j] === "$" || text[j] === "%") && text[j + 1] === text[j] && text[j + 2] === "{") {
          value += `${text[j]}{`;
          j += 3;
        } else {
          value += text[j];
          j++;
        }
      }
      out.push({ start: i + 1, end: j, kind: "string", value });
      i = j + 1;
    } else if (c === "<" && text[i + 1] === "<") {
      const m = /^<<-?([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n/.exec(text.slice(i, i + 200));
      if (m === null) {
        i += 2;
        continue;
      }
      const bodyStart = i + m[0].length;
      const marker = m[1] ?? "";
      let j = bodyStart;
      let end = n;
      while (j < n) {
        const nl = text.indexOf("\n", j);
        const lineEnd = nl < 0 ? n : nl;
        if (text.slice(j, lineEnd).trim() === marker) {
          end = j;
          break;
        }
        j = lineEnd + 1;
      }
      out.push({ start: bodyStart, end, kind: "heredoc", value: text.slice(bodyStart, end) });
      i = end >= n ? n : end + marker.length;
    } else if (c >= "0" && c <= "9" && !/[A-Za-z0-9_-]/.test(text[i - 1] ?? "")) {
      const m = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i));
      const len = m?.[0].length ?? 1;
      out.push({ start: i, end: i + len, kind: "number", value: text.slice(i, i + len) });
      i += len;
    } else if (/[A-Za-z_]/.test(c) && !/[A-Za-z0-9_-]/.test(text[i - 1] ?? "")) {
      const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(text.slice(i));
      const word = m?.[0] ?? c;
      if (word === "true" || word === "false") out.push({ start: i, end: i + word.length, kind: "bool", value: word });
      i += word.length;
    } else i++;
  }
  return out;
}

function unescapeChar(c: string): string {
  switch (c) {
    case "n":
      return "\n";
    case "t":
      return "\t";
    case "r":
      return "\r";
    default:
      return c;
  }
}

/** Returns the string literals and heredoc bodies (and their lines) of an HCL text: what may quote a secret. */
export function hclLiterals(text: string): string[] {
  const out = new Set<string>();
  for (const lit of scanLiterals(text)) {
    if (lit.kind === "bool") continue;
    out.add(lit.value);
    const raw = text.slice(lit.start, lit.end);
    if (raw !== lit.value) out.add(raw);
    if (lit.kind === "heredoc") for (const line of lit.value.split(/\r?\n/)) out.add(line.trim());
  }
  out.delete("");
  return [...out];
}

/** Returns a var-file text with every literal value swapped: strings and heredocs character by character (escapes kept), numbers digit by digit, booleans flipped. */
export function swappedVarFile(text: string): string {
  let out = "";
  let at = 0;
  for (const lit of scanLiterals(text)) {
    out += text.slice(at, lit.start);
    const raw = text.slice(lit.start, lit.end);
    if (lit.kind === "bool") out += raw === "true" ? "false" : "true";
    else if (lit.kind === "number") out += swappedNumber(raw);
    else out += swappedRaw(raw);
    at = lit.end;
  }
  return out + text.slice(at);
}

/** Swaps the characters of a string or heredoc as written, keeping escapes and `$${`/`%%{` as they are. */
function swappedRaw(raw: string): string {
  let out = "";
  for (let j = 0; j < raw.length;) {
    const c = raw[j] ?? "";
    if (c === "\\" && j + 1 < raw.length) {
      out += raw.slice(j, j + 2);
      j += 2;
    } else if ((c === "$" || c === "%") && raw[j + 1] === c && raw[j + 2] === "{") {
      out += raw.slice(j, j + 3);
      j += 3;
    } else if (c === "$" || c === "%" || c === "{" || c === "}") {
      out += c;
      j++;
    } else {
      out += swapChar(c);
      j++;
    }
  }
  return out;
}
