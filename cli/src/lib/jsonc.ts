// JSON with comments, read as firebase-tools 14.27 reads the Firestore index file (and firebase.json): its
// loadCJSON runs the cjson package (0.3), which removes every U+FEFF, then `//` and `/* */` comments outside
// strings, and hands the rest to JSON.parse. `firebase init` writes the index file with `//` comments, so
// a reader that takes plain JSON refuses a stock project. The same rules here, quirks included (a `"` after
// a backslash never ends a string, so `"a\\"` does not end where JSON says; comments are removed, not
// blanked, so `1/**/2` reads as 12): what firebase-tools accepts is accepted, and what it refuses is refused
// with the line and column of the original text. Also an edit that appends entries to top-level arrays and
// keeps every other byte (the user's comments, formatting and key order).

export type JsoncRead = { value: unknown } | { error: string; line: number; column: number };

interface Stripped {
  /** The text without comments (and U+FEFF), what JSON.parse reads. */
  code: string;
  /** For each character of `code`, its index in the original text. */
  at: number[];
}

/** cjson's decomment, keeping where each remaining character came from. */
function strip(text: string): Stripped {
  let code = "";
  const at: number[] = [];
  let inString = false;
  let inComment: false | "line" | "block" = false;
  const prev = (i: number): string | undefined => {
    // cjson looks at the previous character of its BOM-free text.
    for (let j = i - 1; j >= 0; j--) if (text[j] !== "\ufeff") return text[j];
    return undefined;
  };
  for (let i = 0; i < text.length; i++) {
    let char = text[i]!;
    if (char === "\ufeff") continue;
    const next = nextChar(text, i);
    if (!inComment && char === '"' && prev(i) !== "\\") inString = !inString;
    if (!inString) {
      if (!inComment && char === "/" && next.char === "/") {
        i = next.index;
        inComment = "line";
      } else if (inComment === "line" && char === "\n") {
        inComment = false;
      } else if (!inComment && char === "/" && next.char === "*") {
        i = next.index;
        inComment = "block";
        char = "";
      } else if (inComment === "block" && char === "*" && next.char === "/") {
        i = next.index;
        inComment = false;
        char = "";
      }
      if (inComment) char = "";
    }
    if (char !== "") {
      code += char;
      at.push(i);
    }
  }
  return { code, at };
}

/** The character after index i, skipping U+FEFF (cjson removes them all before it looks). */
function nextChar(text: string, i: number): { char: string | undefined; index: number } {
  let j = i + 1;
  while (text[j] === "\ufeff") j++;
  return { char: text[j], index: j };
}

function lineAndColumn(text: string, index: number): { line: number; column: number } {
  const before = text.slice(0, index);
  const line = before.split("\n").length;
  return { line, column: index - (before.lastIndexOf("\n") + 1) + 1 };
}

/** Reads `text` as firebase-tools does: the value, or what JSON.parse refused and where in `text`. */
export function readJsonc(text: string): JsoncRead {
  const { code, at } = strip(text);
  try {
    return { value: JSON.parse(code) as unknown };
  } catch (error) {
    // JSON.parse's reason without its position (which it gives for some mistakes only) or its quote of the text.
    const reason = (error instanceof Error ? error.message : String(error))
      .replace(/ in JSON at position \d+.*$/s, "")
      .replace(/, (\.\.\.)?".*"(\.\.\.)? is not valid JSON$/s, "");
    const index = errorIndex(code);
    return { error: reason, ...lineAndColumn(text, index < code.length ? at[index]! : text.length) };
  }
}

/** Where JSON.parse stops reading `code`: the index of the first character that is not JSON there. */
function errorIndex(code: string): number {
  let i = 0;
  const stop = (): never => {
    throw new RangeError(String(i));
  };
  const space = () => {
    while (i < code.length && " \t\n\r".includes(code[i]!)) i++;
  };
  const string = () => {
    i++;
    for (;;) {
      const char = code[i];
      if (char === undefined || char < " ") stop();
      i++;
      if (char === '"') return;
      if (char === "\\") {
        const escape = code[i];
        if (escape === "u" && /^[0-9a-fA-F]{4}$/.test(code.slice(i + 1, i + 5))) i += 5;
        else if (escape !== undefined && '"\\/bfnrt'.includes(escape)) i++;
        else stop();
      }
    }
  };
  const value = (): void => {
    space();
    const char = code[i];
    if (char === "{" || char === "[") {
      const close = char === "{" ? "}" : "]";
      i++;
      space();
      if (code[i] === close) {
        i++;
        return;
      }
      for (;;) {
        if (char === "{") {
          space();
          if (code[i] !== '"') stop();
          string();
          space();
          if (code[i] !== ":") stop();
          i++;
        }
        value();
        space();
        if (code[i] === close) {
          i++;
          return;
        }
        if (code[i] !== ",") stop();
        i++;
      }
    }
    if (char === '"') return string();
    const word = /^(true|false|null|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)/.exec(code.slice(i));
    if (word === null) stop();
    i += word![0].length;
  };
  try {
    value();
    space();
    return i < code.length ? i : code.length;
  } catch (error) {
    if (error instanceof RangeError) return Number(error.message);
    throw error;
  }
}

/** A value's span in the comment-free code: [start, end). */
interface Span {
  start: number;
  end: number;
}

interface Member {
  key: string;
  value: Span;
  /** The elements' spans, when the value is an array. */
  elements?: Span[];
}

interface TopLevel {
  open: number;
  close: number;
  members: Member[];
}

/** The top-level object's members in `code` (valid JSON: JSON.parse took it), with their spans. */
function topLevel(code: string): TopLevel {
  let i = 0;
  const space = () => {
    while (/\s/.test(code[i] ?? "")) i++;
  };
  const value = (): Span => {
    space();
    const start = i;
    const char = code[i];
    if (char === '"') {
      i++;
      while (code[i] !== '"') i += code[i] === "\\" ? 2 : 1;
      i++;
    } else if (char === "{" || char === "[") {
      const close = char === "{" ? "}" : "]";
      i++;
      space();
      while (code[i] !== close) {
        if (char === "{") {
          value(); // the key
          space();
          i++; // the colon
        }
        value();
        space();
        if (code[i] === ",") i++;
        space();
      }
      i++;
    } else {
      while (i < code.length && !/[\s,\]}]/.test(code[i]!)) i++;
    }
    return { start, end: i };
  };
  const elements = (span: Span): Span[] => {
    const spans: Span[] = [];
    i = span.start + 1;
    space();
    while (code[i] !== "]") {
      spans.push(value());
      space();
      if (code[i] === ",") i++;
      space();
    }
    return spans;
  };
  space();
  const open = i;
  i++;
  const members: Member[] = [];
  space();
  while (code[i] !== "}") {
    const key = value();
    space();
    i++;
    const span = value();
    const end = i;
    const member: Member = { key: JSON.parse(code.slice(key.start, key.end)) as string, value: span };
    if (code[span.start] === "[") member.elements = elements(span);
    i = end;
    members.push(member);
    space();
    if (code[i] === ",") i++;
    space();
  }
  return { open, close: i, members };
}

/** The indentation of the line `index` lies on, in `text`. */
function indentOf(text: string, index: number): string {
  const lineStart = text.lastIndexOf("\n", index - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

/**
 * Where to append after the value ending at `end` (an index into `text`): right there, unless the rest of
 * its line is a `//` comment, which stays with the value (the comma goes before the comment, the new lines
 * after it).
 */
function afterValue(text: string, end: number): { comma: number; insert: number } {
  const lineEnd = text.indexOf("\n", end);
  const rest = text.slice(end, lineEnd === -1 ? text.length : lineEnd);
  return /^[ \t]*\/\/.*$/.test(rest) ? { comma: end, insert: end + rest.length } : { comma: end, insert: end };
}

/**
 * `text` (an object, as readJsonc reads it) with `items` appended to the top-level arrays their keys name
 * (a key it lacks is added as the last member): every other byte as it was. The result is read back and
 * compared with the value it must have; a difference is a bug here, thrown rather than written.
 */
export function appendToTopLevelArrays(text: string, additions: ReadonlyArray<readonly [key: string, items: readonly unknown[]]>): string {
  const read = readJsonc(text);
  if (!("value" in read) || typeof read.value !== "object" || read.value === null || Array.isArray(read.value)) {
    throw new Error("appendToTopLevelArrays: the text does not hold an object");
  }
  const { code, at } = strip(text);
  const top = topLevel(code);
  const original = (index: number) => at[index]!;
  // The members' indentation and one level of it, from the file; two spaces where it has no member yet.
  const first = top.members[0];
  const memberIndent = first === undefined ? "  " : indentOf(text, original(first.value.start)) || "  ";
  const unit = /^\t+$/.test(memberIndent) ? "\t" : memberIndent.length >= 2 && memberIndent.length % 2 === 0 ? memberIndent.slice(0, 2) : memberIndent;
  const itemIndent = memberIndent + unit;
  const itemText = (item: unknown) => JSON.stringify(item, null, unit).split("\n").join(`\n${itemIndent}`);
  const itemsText = (items: readonly unknown[]) => items.map((item) => `\n${itemIndent}${itemText(item)}`).join(",");

  const inserts: { at: number; text: string; upTo?: number }[] = [];
  const expected = { ...(read.value as Record<string, unknown>) };
  const added: string[] = [];
  for (const [key, items] of additions) {
    if (items.length === 0) continue;
    // JSON.parse keeps the last of two members of one name: so does this.
    const member = top.members.filter((m) => m.key === key).pop();
    if (member !== undefined && member.elements === undefined) throw new Error(`appendToTopLevelArrays: ${key} is not an array`);
    expected[key] = [...((expected[key] as unknown[] | undefined) ?? []), ...items];
    if (member === undefined) {
      added.push(`"${key}": [${itemsText(items)}\n${memberIndent}]`);
      continue;
    }
    const elements = member.elements!;
    const last = elements[elements.length - 1];
    if (last !== undefined) {
      const { comma, insert } = afterValue(text, original(last.end - 1) + 1);
      inserts.push({ at: comma, text: "," }, { at: insert, text: itemsText(items) });
    } else {
      const open = original(member.value.start);
      const close = original(member.value.end - 1);
      const inside = text.slice(open + 1, close);
      // An empty `[]` (or one holding only spaces) closes on a line of its own; comments inside stay after the items.
      inserts.push(inside.trim() === "" ? { at: open + 1, text: `${itemsText(items)}\n${memberIndent}`, upTo: close } : { at: open + 1, text: itemsText(items) });
    }
  }
  if (added.length > 0) {
    const lastMember = top.members[top.members.length - 1];
    const members = added.map((m) => `\n${memberIndent}${m}`).join(",");
    if (lastMember !== undefined) {
      const { comma, insert } = afterValue(text, original(lastMember.value.end - 1) + 1);
      inserts.push({ at: comma, text: "," }, { at: insert, text: members });
    } else {
      const open = original(top.open);
      const close = original(top.close);
      const inside = text.slice(open + 1, close);
      inserts.push(inside.trim() === "" ? { at: open + 1, text: `${members}\n`, upTo: close } : { at: open + 1, text: members });
    }
  }
  let result = text;
  // From the end, so that each insertion leaves the positions before it as they were (a comma before the
  // items at the same position: the later entry of two at one place goes in first).
  const ordered = inserts.map((insert, order) => ({ ...insert, order })).sort((a, b) => b.at - a.at || b.order - a.order);
  for (const insert of ordered) result = result.slice(0, insert.at) + insert.text + result.slice(insert.upTo ?? insert.at);
  const check = readJsonc(result);
  if (!("value" in check) || JSON.stringify(check.value) !== JSON.stringify(expected)) {
    throw new Error(`appendToTopLevelArrays: the edited text does not read back as the merged value:\n${result}`);
  }
  return result;
}
