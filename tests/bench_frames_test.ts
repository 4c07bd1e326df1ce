import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { cCanonicalText, digestHex, drive, FRAMES, openBenchLibrary } from "../bench/bench_lib.ts";
import { canonicalText, fnv1a64Hex, frameDigest, readFrameForDigest } from "../bench/digest.ts";

function fnv1a64(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h;
}

function hasPython(): boolean {
  try {
    return new Deno.Command("python3", { args: ["-c", "import ctypes"] }).outputSync().success;
  } catch {
    return false;
  }
}

Deno.test("bench frames decode in C to the documented contents", () => {
  using lib = openBenchLibrary();
  assert.equal(lib.symbols.bench_frame_count(), FRAMES.length);
  assert.equal(lib.symbols.bench_frame(FRAMES.length), null);
  const std = cCanonicalText(lib, 0).split("\n");
  assert.equal(std[0], "stage 3");
  assert.equal(std[1], "args 4");
  assert.deepEqual(std.slice(2, 6).map((l) => l.split(" ").slice(0, 4).join(" ")), [
    "buf 11 2 16x16",
    "buf 11 1 64",
    "buf 11 3 4x8x8",
    "buf 11 4 2x3x4x5",
  ]);
  assert.equal(std[2], "buf 11 2 16x16 01080f16"); // byte k of buffer 0 = k * 7 + 1
  assert.equal(std[6], "rets 1");
  assert.equal(std[8], "attrs 4");
  assert.deepEqual(std.slice(9, 13), [
    "alpha scalar 11 0000003f", // 0.5f
    "axes array 5 3 000000000000000001000000000000000200000000000000",
    `mode string ${new TextEncoder().encode("reflect").toHex()}`,
    "n scalar 4 2a000000",
  ]);
  const small = cCanonicalText(lib, 1);
  assert.match(small, /^stage 3\nargs 1\nbuf 11 1 8 [0-9a-f]{8}\nrets 0\nattrs 0\n$/);
  const large = cCanonicalText(lib, 2).split("\n");
  assert.equal(large[1], "args 64");
  assert.ok(large.includes("rets 4"));
  assert.ok(large.includes("attrs 32"));
  assert.ok(large.some((l) => /^k06_dict dict 4$/.test(l)), "a dictionary with a nested one");
  assert.ok(large.some((l) => /^options dict 2$/.test(l)));
  assert.ok(large.some((l) => / 0 - [0-9a-f]{2,8}$/.test(l)), "a rank-0 buffer");
});

Deno.test("the C handler's digest is FNV-1a of the canonical text, on any thread", () => {
  using lib = openBenchLibrary();
  const S = lib.symbols;
  const ns = new Float64Array(1);
  for (const f of FRAMES) {
    const want = digestHex(fnv1a64(new TextEncoder().encode(cCanonicalText(lib, f.id))));
    const frame = S.bench_frame(f.id);
    for (const threads of [0, 1, 3]) {
      S.bench_c_take_digest();
      const errors = S.bench_drive(
        S.bench_c_address(0),
        frame,
        5n,
        threads,
        ns,
        S.bench_c_address(2),
      );
      assert.equal(errors, 0n);
      assert.ok(ns[0]! > 0);
      assert.equal(digestHex(S.bench_c_take_digest()), want, `${f.name}, ${threads} threads`);
    }
  }
  assert.equal(S.bench_c_take_digest(), 0n, "taking clears the record");
});

Deno.test("the driver rejects bad arguments", () => {
  using lib = openBenchLibrary();
  const S = lib.symbols;
  const ns = new Float64Array(1);
  const h = S.bench_c_address(1);
  const f = S.bench_frame(0);
  assert.equal(S.bench_drive(null, f, 1n, 0, ns, null), -1n);
  assert.equal(S.bench_drive(h, null, 1n, 0, ns, null), -1n);
  assert.equal(S.bench_drive(h, f, 0n, 0, ns, null), -1n);
  assert.equal(S.bench_drive(h, f, 1n, -1, ns, null), -1n);
  assert.equal(S.bench_drive(h, f, 1n, 65, ns, null), -1n);
  assert.equal(S.bench_c_address(3), null);
});

Deno.test({
  name: "the warp-style Python decoder digests every frame as C does (numpy and ctypes)",
  ignore: !hasPython(),
  async fn() {
    using lib = openBenchLibrary();
    const script = fileURLToPath(new URL("../bench/python/warp_style.py", import.meta.url));
    const requests = FRAMES.flatMap((f) => [0, 2].map((threads) => ({ frame: f.id, threads })));
    for (const extra of [[], ["--no-numpy"]]) {
      const child = new Deno.Command("python3", {
        args: [script, "--lib", lib.path, "--serve", ...extra],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const w = child.stdin.getWriter();
      await w.write(new TextEncoder().encode(
        requests.map((r) => JSON.stringify({ ...r, iters: 3 }) + "\n").join(""),
      ));
      await w.close();
      const out = await child.output();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
      const replies = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      assert.equal(replies.length, requests.length);
      requests.forEach((r, i) => {
        const want = digestHex(fnv1a64(new TextEncoder().encode(cCanonicalText(lib, r.frame))));
        assert.equal(replies[i].errors, 0);
        assert.equal(replies[i].digest, want, `frame ${r.frame} ${extra} threads=${r.threads}`);
        if (extra.length) assert.equal(replies[i].numpy, false, "--no-numpy decodes with ctypes");
      });
    }
  },
});

Deno.test("the TS canonical text of a reference read equals the C one, byte for byte", () => {
  using lib = openBenchLibrary();
  for (const f of FRAMES) {
    const frame = lib.symbols.bench_frame(f.id)!;
    const decoded = readFrameForDigest(frame);
    assert.equal(canonicalText(decoded), cCanonicalText(lib, f.id), f.name);
    const want = digestHex(fnv1a64(new TextEncoder().encode(cCanonicalText(lib, f.id))));
    assert.equal(frameDigest(decoded), want);
  }
  assert.equal(fnv1a64Hex("a"), "af63dc4c8601ec8c"); // FNV-1a 64 test vector
});

Deno.test("drive() runs a JS callback handler on the same thread and on foreign threads", async () => {
  using lib = openBenchLibrary();
  const want = digestHex(fnv1a64(new TextEncoder().encode(cCanonicalText(lib, 0))));
  let calls = 0;
  const seen = new Set<string>();
  const cb = Deno.UnsafeCallback.threadSafe(
    { parameters: ["pointer"], result: "pointer" } as const,
    (frame) => {
      calls++;
      if (frame !== null) seen.add(frameDigest(readFrameForDigest(frame)));
      return null;
    },
  );
  try {
    assert.ok(await drive(lib, cb.pointer, 0, 4, 0) > 0);
    assert.equal(calls, 4);
    assert.ok(await drive(lib, cb.pointer, 0, 3, 2) > 0);
    assert.equal(calls, 10);
    assert.deepEqual([...seen], [want]);
  } finally {
    cb.close();
  }
  await assert.rejects(() => drive(lib, null, 0, 1, 0), /bad arguments/);
  await assert.rejects(() => drive(lib, lib.symbols.bench_c_address(1), 9, 1, 0), RangeError);
});
