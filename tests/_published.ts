/**
 * The module's published file set (deno.json's `publish` include and
 * exclude globs), served over HTTP on 127.0.0.1 as JSR serves a package.
 *
 * @module
 */
const ROOT = new URL("../", import.meta.url);

/** A glob of deno.json (`**`, `*`, a folder ending in `/`) as a regular expression. */
function globRegExp(glob: string): RegExp {
  if (glob.endsWith("/")) glob += "**";
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      re += glob[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += glob[i + 2] === "/" ? 2 : 1;
    } else if (c === "*") re += "[^/]*";
    else re += c.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** The module's files that `deno publish` includes, relative to its root, sorted. */
export function publishedFiles(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT)));
  const include = (config.publish.include as string[]).map(globRegExp);
  const exclude = [...config.publish.exclude, ...config.exclude].map(globRegExp);
  const files: string[] = [];
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(new URL(rel || ".", ROOT))) {
      const path = rel + e.name;
      if (e.isDirectory) {
        if (e.name !== ".git" && e.name !== "node_modules") walk(`${path}/`);
      } else if (include.some((r) => r.test(path)) && !exclude.some((r) => r.test(path))) {
        files.push(path);
      }
    }
  };
  walk("");
  return files.sort();
}

const TYPES: Record<string, string> = {
  ts: "application/typescript; charset=utf-8",
  json: "application/json",
  md: "text/markdown",
};

/** A server of the published files; `omit` are left out (404). */
export function servePublished(omit: readonly string[] = []): {
  host: string;
  close(): Promise<void>;
} {
  const files = new Set(publishedFiles().filter((f) => !omit.includes(f)));
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen() {} },
    async (req) => {
      const path = decodeURIComponent(new URL(req.url).pathname.slice(1));
      if (!files.has(path)) return new Response("not found", { status: 404 });
      const body = await Deno.readFile(new URL(path, ROOT));
      const type = TYPES[path.slice(path.lastIndexOf(".") + 1)] ?? "text/plain";
      return new Response(body, { headers: { "content-type": type } });
    },
  );
  return {
    host: `127.0.0.1:${server.addr.port}`,
    async close() {
      ac.abort();
      await server.finished;
    },
  };
}

/** What a child Deno printed and how it ended. */
export interface ChildResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs a script of `code` (in a folder of its own) with `deno run` and
 * `flags`, and only the environment `env` (no PATH unless given).
 */
export async function runDeno(
  flags: readonly string[],
  code: string,
  env: Record<string, string>,
  timeoutMs?: number,
): Promise<ChildResult> {
  const dir = Deno.makeTempDirSync();
  Deno.writeTextFileSync(`${dir}/main.ts`, code);
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "--no-prompt", "--no-config", ...flags, `${dir}/main.ts`],
    cwd: dir,
    env: { NO_COLOR: "1", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
    // A child that hangs is killed (SIGTERM) and fails with its signal's code.
    ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
  }).output();
  Deno.removeSync(dir, { recursive: true });
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
    ms: performance.now() - t0,
  };
}

/** The README's first code block: the first handler. */
export function readmeFirstHandler(): string {
  const readme = Deno.readTextFileSync(new URL("README.md", ROOT));
  const m = /```ts\n([\s\S]*?)```/.exec(readme);
  if (!m) throw new Error("README.md has no ts code block");
  return m[1]!;
}
