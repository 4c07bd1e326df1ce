/**
 * How many public names each entry of deno.json's "exports" has, counted by
 * `deno doc` (types too, as JSR shows them). Every name is one a user may
 * come to depend on, so growth is a decision: an entry above the number
 * written here fails, and raising the number is part of the change that
 * needs it (lowering it is welcome whenever an entry shrinks).
 */
import assert from "node:assert/strict";

/** The most public names each entry may have. */
const LIMITS: Readonly<Record<string, number>> = {
  ".": 104,
  "./abi": 161,
  "./npy": 8,
  "./cuda": 40,
  "./xla": 26,
  // With the spec grammar's AttrDictionary, AttrValue and ElementValues (a FuzzCase's attributes).
  "./testing": 44,
  "./build": 4,
  // A command line exports `main`, what it writes to and its exit codes.
  "./cli": 3,
};

const ROOT = new URL("../", import.meta.url);

interface DocSymbol {
  name: string;
  declarations: { declarationKind?: string }[];
}

/** The public names of each file `deno doc` documents, by file URL. */
async function publicNames(files: string[]): Promise<Map<string, Set<string>>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...files],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, `deno doc failed: ${new TextDecoder().decode(out.stderr)}`);
  const doc = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    nodes: Record<string, { symbols?: DocSymbol[] }>;
  };
  const names = new Map<string, Set<string>>();
  for (const [file, node] of Object.entries(doc.nodes)) {
    names.set(
      file,
      new Set(
        (node.symbols ?? [])
          .filter((s) => s.declarations.some((d) => d.declarationKind === "export"))
          .map((s) => s.name),
      ),
    );
  }
  return names;
}

Deno.test("every entry of deno.json has at most the public names written here", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))) as {
    exports: Record<string, string>;
  };
  const entries = Object.entries(config.exports);
  assert.deepEqual(
    entries.map(([entry]) => entry).sort(),
    Object.keys(LIMITS).sort(),
    "each entry of deno.json has its number here",
  );
  const names = await publicNames(entries.map(([, path]) => path));
  const over: string[] = [];
  const lines: string[] = [];
  let total = 0;
  for (const [entry, path] of entries) {
    const found = names.get(new URL(path, ROOT).href);
    assert.ok(found !== undefined, `deno doc did not document ${path}`);
    total += found.size;
    lines.push(`${entry.padEnd(10)} ${String(found.size).padStart(4)} / ${LIMITS[entry]}`);
    if (found.size > LIMITS[entry]!) {
      over.push(`${entry} (${path}) has ${found.size} public names, more than ${LIMITS[entry]}`);
    }
  }
  console.log(`public names per entry:\n${lines.join("\n")}\ntotal      ${total}`);
  assert.deepEqual(over, [], "a new public name is a decision: raise its number here with it");
});

Deno.test("./cli exports its main, what it writes to and its exit codes", async () => {
  const names = await publicNames(["cli.ts"]);
  assert.deepEqual([...names.get(new URL("cli.ts", ROOT).href)!].sort(), [
    "CliIo",
    "ExitCode",
    "main",
  ]);
});
