/**
 * The code blocks of the README and docs/: every TypeScript or JavaScript
 * block runs as a doc test, or is fenced `ts ignore` under a comment
 * `<!-- not run: <reason> -->`; each imports the module as a user does
 * (docs/README.md, "Code blocks").
 */
import assert from "node:assert/strict";

/** Languages `deno test --doc` runs (the first word of a fence's info string). */
const RUN = new Set([
  "ts",
  "typescript",
  "js",
  "javascript",
  "tsx",
  "jsx",
  "mts",
  "mjs",
  "cts",
  "cjs",
]);
/** Languages never run: commands, other languages' sources, output and files. */
const OTHER = new Set([
  "sh",
  "bash",
  "shell",
  "console",
  "python",
  "py",
  "c",
  "cpp",
  "c++",
  "cc",
  "text",
  "txt",
  "json",
  "jsonc",
  "markdown",
  "md",
  "diff",
  "toml",
  "yaml",
]);
const MARK = /^<!--\s*not run:\s*(.*?)\s*-->$/;
const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;
/** Import specifiers: `from "x"`, `import "x"`, `import("x")`. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])([^"'\n]+)\1/g;

/** A fenced block: where it starts (1-based), its language, attributes and body. */
interface Block {
  line: number;
  lang: string;
  attrs: string[];
  body: string[];
  /** The nearest non-blank line above the fence. */
  above: string;
}

function blocks(text: string): Block[] {
  const lines = text.split("\n");
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const info = open[2]!.trim();
    if (fence[0] === "`" && info.includes("`")) continue; // inline code, not a fence
    const [lang = "", ...attrs] = info.split(/[\s{]+/).filter((w) => w !== "");
    let j = i - 1;
    while (j >= 0 && lines[j]!.trim() === "") j--;
    const body: string[] = [];
    let k = i + 1;
    for (; k < lines.length; k++) {
      const close = FENCE.exec(lines[k]!);
      if (
        close && close[1]![0] === fence[0] && close[1]!.length >= fence.length &&
        close[2]!.trim() === ""
      ) break;
      body.push(lines[k]!);
    }
    out.push({ line: i + 1, lang: lang.toLowerCase(), attrs, body, above: lines[j]?.trim() ?? "" });
    i = k;
  }
  return out;
}

/** What is wrong with the blocks of `text` (a file named `name`), as `name:line: ...`. */
function problems(name: string, text: string): string[] {
  const found: string[] = [];
  for (const b of blocks(text)) {
    const at = `${name}:${b.line}`;
    const mark = MARK.exec(b.above);
    if (b.lang === "") {
      found.push(`${at}: a fence without a language (ts, sh, text, ...)`);
    } else if (RUN.has(b.lang)) {
      if (b.attrs.includes("ignore")) {
        if (!mark) {
          found.push(`${at}: a ${b.lang} ignore block without <!-- not run: <reason> --> above it`);
        } else if (mark[1] === "") {
          found.push(`${at}: <!-- not run: --> gives no reason`);
        }
      } else if (mark) {
        found.push(`${at}: marked "not run" but runs as a doc test (drop the mark or add ignore)`);
      }
      b.body.forEach((l, n) => {
        for (const m of l.matchAll(IMPORT)) {
          const spec = m[2]!;
          if (/^(\.|\/|file:)/.test(spec)) {
            found.push(
              `${name}:${b.line + 1 + n}: imports '${spec}' by path; ` +
                `import the module as a user does (@deno-xla/ffi, @deno-xla/ffi/build, ...)`,
            );
          }
        }
      });
    } else if (!OTHER.has(b.lang)) {
      found.push(
        `${at}: language '${b.lang}' is neither run nor known to this test: ` +
          `use ts, or add it to OTHER in tests/doc_blocks_test.ts`,
      );
    } else if (mark) {
      found.push(`${at}: <!-- not run --> on a ${b.lang} block, which never runs`);
    }
  }
  return found;
}

const ROOT = new URL("../", import.meta.url);

function docFiles(): string[] {
  const files = ["README.md"];
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(new URL(rel, ROOT))) {
      if (e.isDirectory) walk(`${rel}${e.name}/`);
      else if (e.name.endsWith(".md")) files.push(`${rel}${e.name}`);
    }
  };
  walk("docs/");
  return files.sort();
}

Deno.test("doc blocks: every TS block in the README and docs/ runs or says why not", () => {
  const files = docFiles();
  assert.ok(files.length > 10, `${files}`);
  const found = files.flatMap((f) => problems(f, Deno.readTextFileSync(new URL(f, ROOT))));
  assert.deepEqual(found, [], `\n${found.join("\n")}`);
});

Deno.test("doc blocks: deno task test runs the README's and docs/' blocks", () => {
  const config = JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT)));
  const words = String(config.tasks.test).split(/\s+/);
  assert.ok(words.includes("--doc"), config.tasks.test);
  assert.ok(words.includes("README.md") && words.includes("docs/"), config.tasks.test);
});

Deno.test("doc blocks: the check names each kind of mistake by file and line", () => {
  const text = [
    "```ts", //                                            1: runs
    'import { Runtime } from "@deno-xla/ffi";',
    "```",
    "```ts ignore", //                                     4: no mark
    "x",
    "```",
    "<!-- not run: needs a GPU -->",
    "",
    "```ts ignore", //                                     9: marked
    'import { x } from "../src/x.ts";', //                10: by path
    "```",
    "<!-- not run: needs a GPU -->",
    "```ts", //                                           13: marked, but runs
    "```",
    "```", //                                             15: no language
    "```",
    "```sh", //                                           17: never runs
    "deno task test",
    "```",
    "````markdown", //                                    20: a fence inside is text
    "```ts ignore",
    "````",
    "<!-- not run:  -->",
    "```js ignore", //                                    24: no reason
    'const m = await import("./mod.ts");', //             25: by path
    "```",
    "```rust", //                                         27: unknown
    "```",
  ].join("\n");
  const found = problems("x.md", text);
  assert.deepEqual(found.map((p) => p.split(": ")[0]), [
    "x.md:4",
    "x.md:10",
    "x.md:13",
    "x.md:15",
    "x.md:24",
    "x.md:25",
    "x.md:27",
  ]);
  assert.match(found[0]!, /without <!-- not run: <reason> -->/);
  assert.match(found[1]!, /imports '\.\.\/src\/x\.ts' by path/);
  assert.match(found[2]!, /runs as a doc test/);
  assert.match(found[4]!, /gives no reason/);
  assert.match(found[6]!, /language 'rust'/);
});
