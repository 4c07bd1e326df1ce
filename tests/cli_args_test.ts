import assert from "node:assert/strict";
import { DataType, ErrorCode, ExecutionStage } from "../src/abi/enums.ts";
import { FfiError } from "../src/errors.ts";
import { parseCommandLine, type ParsedRun, usage } from "../src/cli/args.ts";
import {
  type AttrDictionary,
  type AttrValue,
  MAX_INLINE_VALUES,
  parseArgSpec,
  parseAttrValue,
  parseRetSpec,
  parseValues,
} from "../src/spec/grammar.ts";
import { lookupTypeName, parseTypeName, TYPE_NAMES, typeName } from "../src/spec/type_names.ts";

function usageError(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof FfiError, String(e));
    assert.equal(e.code, ErrorCode.INVALID_ARGUMENT);
    assert.match(e.message, re);
    return true;
  });
}

function run(...argv: string[]): ParsedRun {
  const cmd = parseCommandLine(["run", "./lib.so", "h", ...argv]);
  assert.equal(cmd.command, "run");
  return cmd as ParsedRun;
}

function entries(d: AttrValue | undefined): Map<string, AttrValue> {
  assert.equal(d?.kind, "dictionary");
  return (d as AttrDictionary).entries;
}

Deno.test("type names: XLA spellings and aliases", () => {
  assert.equal(parseTypeName("f32"), DataType.F32);
  assert.equal(parseTypeName("S32"), DataType.S32);
  assert.equal(parseTypeName("i32"), DataType.S32);
  assert.equal(parseTypeName("i64"), DataType.S64);
  assert.equal(parseTypeName("bool"), DataType.PRED);
  assert.equal(parseTypeName("pred"), DataType.PRED);
  assert.equal(parseTypeName("bf16"), DataType.BF16);
  assert.equal(parseTypeName("c128"), DataType.C128);
  assert.equal(parseTypeName("f8e4m3fn"), DataType.F8E4M3FN);
  assert.equal(lookupTypeName("f31"), undefined);
  usageError(() => parseTypeName("float"), /unknown element type 'float' \(one of .*f32/);
  for (const name of TYPE_NAMES) {
    assert.equal(lookupTypeName(typeName(lookupTypeName(name)!)), lookupTypeName(name));
  }
});

Deno.test("values: integers, floats, pred, complex, with range checks", () => {
  assert.deepEqual(parseValues("1, -2, 0x1f, 0b101, 0o17", DataType.S32, "w"), [1, -2, 31, 5, 15]);
  assert.deepEqual(parseValues("-9223372036854775808", DataType.S64, "w"), [-(2n ** 63n)]);
  assert.deepEqual(parseValues("18446744073709551615", DataType.U64, "w"), [2n ** 64n - 1n]);
  assert.deepEqual(parseValues("255,0", DataType.U8, "w"), [255, 0]);
  usageError(
    () => parseValues("256", DataType.U8, "--arg 1"),
    /--arg 1: 256 is out of range for u8 \[0, 255\]/,
  );
  usageError(() => parseValues("-1", DataType.U32, "w"), /out of range for u32/);
  usageError(() => parseValues("1.5", DataType.S8, "w"), /'1.5' is not an integer \(s8\)/);
  usageError(() => parseValues("8", DataType.S4, "w"), /out of range for s4 \[-8, 7\]/);
  assert.deepEqual(parseValues("1.5, -2e3, .5, inf, -Infinity", DataType.F32, "w"), [
    1.5,
    -2000,
    0.5,
    Infinity,
    -Infinity,
  ]);
  assert.ok(Number.isNaN((parseValues("nan", DataType.F64, "w") as number[])[0]));
  usageError(() => parseValues("1e39", DataType.F32, "w"), /1e39 is out of range for f32/);
  usageError(() => parseValues("70000", DataType.F16, "w"), /out of range for f16/);
  usageError(() => parseValues("inf", DataType.F8E4M3FN, "w"), /f8e4m3fn has no infinity/);
  usageError(() => parseValues("abc", DataType.F32, "w"), /'abc' is not a number \(f32\)/);
  usageError(() => parseValues("0x10", DataType.F32, "w"), /not a number/);
  usageError(() => parseValues("1,,2", DataType.F32, "w"), /value 2 is empty/);
  assert.deepEqual(parseValues("true,False,1,0", DataType.PRED, "w"), [1, 0, 1, 0]);
  usageError(() => parseValues("yes", DataType.PRED, "w"), /'yes' is not a pred/);
  assert.deepEqual(parseValues("1+2j, -3.5-4e-1j, 2j, 7, (1-1j)", DataType.C64, "w"), [
    1,
    2,
    -3.5,
    -0.4,
    0,
    2,
    7,
    0,
    1,
    -1,
  ]);
  assert.deepEqual(parseValues("1e+2+1e-2j", DataType.C128, "w"), [100, 0.01]);
  usageError(() => parseValues("1+xj", DataType.C64, "w"), /not a number/);
  assert.deepEqual(parseValues("", DataType.F32, "w"), []);
  assert.deepEqual(parseValues("[[1,2],[3,4]]", DataType.S32, "w"), [1, 2, 3, 4]);
});

Deno.test("--arg specs: inline arrays, scalars, fill, token, .npy", () => {
  assert.deepEqual(parseArgSpec("f32[2,3]=1,2,3,4,5,6", "a"), {
    kind: "inline",
    dtype: DataType.F32,
    dims: [2, 3],
    values: [1, 2, 3, 4, 5, 6],
  });
  assert.deepEqual(parseArgSpec("s32[]=7", "a"), {
    kind: "inline",
    dtype: DataType.S32,
    dims: [],
    values: [7],
  });
  assert.deepEqual(parseArgSpec("f64=2.5", "a"), {
    kind: "inline",
    dtype: DataType.F64,
    dims: [],
    values: [2.5],
  });
  assert.deepEqual(parseArgSpec("u8[2,2]=9", "a"), {
    kind: "inline",
    dtype: DataType.U8,
    dims: [2, 2],
    values: [9, 9, 9, 9],
  });
  assert.deepEqual(parseArgSpec("c64[2]=1+1j", "a"), {
    kind: "inline",
    dtype: DataType.C64,
    dims: [2],
    values: [1, 1, 1, 1],
  });
  assert.deepEqual(parseArgSpec("f32[0]=", "a"), {
    kind: "inline",
    dtype: DataType.F32,
    dims: [0],
    values: [],
  });
  // A zero-sized array needs no values.
  for (const text of ["s32[0,3]", "s32[0,3]=", "s32[2,0]"]) {
    assert.deepEqual(parseArgSpec(text, "a"), {
      kind: "inline",
      dtype: DataType.S32,
      dims: text.startsWith("s32[0") ? [0, 3] : [2, 0],
      values: [],
    }, text);
  }
  assert.deepEqual(parseArgSpec("s64[2]=1,2", "a"), {
    kind: "inline",
    dtype: DataType.S64,
    dims: [2],
    values: [1n, 2n],
  });
  assert.deepEqual(parseArgSpec("token", "a"), { kind: "token" });
  assert.deepEqual(parseArgSpec("data/x.npy", "a"), { kind: "npy", path: "data/x.npy" });
  assert.deepEqual(parseArgSpec("X.NPY", "a"), { kind: "npy", path: "X.NPY" });
  usageError(
    () => parseArgSpec("f32[2,3]=1,2", "--arg 1"),
    /--arg 1: 2 values for the 6 elements of f32\[2,3\]/,
  );
  usageError(
    () => parseArgSpec("f32[2,3]", "--arg 1"),
    /f32\[2,3\] has no values: write f32\[2,3\]=v0,v1/,
  );
  usageError(() => parseArgSpec("float[2]=1,2", "--arg 1"), /unknown element type 'float'/);
  usageError(
    () => parseArgSpec("f32[2,-1]=1", "--arg 1"),
    /dimension '-1' is not a non-negative integer/,
  );
  usageError(() => parseArgSpec("f32[2,x]=1", "--arg 1"), /dimension 'x'/);
  usageError(() => parseArgSpec("f32[99999999999,99999999999]=1", "a"), /too large/);
  usageError(() => parseArgSpec("x.txt", "--arg 2"), /'x.txt' is not an array .* or a .npy file/);
  usageError(() => parseArgSpec("token[2]=1", "a"), /a token has no shape or values/);
  usageError(() => parseArgSpec("f32[2=1,2", "a"), /not an array/);
});

Deno.test("--ret specs", () => {
  assert.deepEqual(parseRetSpec("f32[2,3]", "r"), {
    kind: "buffer",
    dtype: DataType.F32,
    dims: [2, 3],
  });
  assert.deepEqual(parseRetSpec("pred", "r"), { kind: "buffer", dtype: DataType.PRED, dims: [] });
  assert.deepEqual(parseRetSpec("token", "r"), { kind: "token" });
  usageError(() => parseRetSpec("f32[2]=1,2", "--ret 1"), /--ret 1: a result takes no values/);
  usageError(() => parseRetSpec("y.npy", "--ret 1"), /'y.npy' is not a result type/);
  usageError(() => parseRetSpec("q7[1]", "--ret 1"), /unknown element type 'q7'/);
});

Deno.test("attribute values: strings, typed scalars and arrays", () => {
  assert.deepEqual(parseAttrValue("reflect", "w"), { kind: "string", value: "reflect" });
  assert.deepEqual(parseAttrValue("", "w"), { kind: "string", value: "" });
  assert.deepEqual(parseAttrValue("hello world, 1.5", "w"), {
    kind: "string",
    value: "hello world, 1.5",
  });
  assert.deepEqual(parseAttrValue("str:http://x", "w"), { kind: "string", value: "http://x" });
  assert.deepEqual(parseAttrValue("f32:2.5", "w"), {
    kind: "scalar",
    dtype: DataType.F32,
    value: 2.5,
  });
  assert.deepEqual(parseAttrValue("bool:true", "w"), {
    kind: "scalar",
    dtype: DataType.PRED,
    value: 1,
  });
  assert.deepEqual(parseAttrValue("u8:7", "w"), { kind: "scalar", dtype: DataType.U8, value: 7 });
  assert.deepEqual(parseAttrValue("i64:-3", "w"), {
    kind: "scalar",
    dtype: DataType.S64,
    value: -3n,
  });
  assert.deepEqual(parseAttrValue("i64[]:0,2", "w"), {
    kind: "array",
    dtype: DataType.S64,
    values: [0n, 2n],
  });
  assert.deepEqual(parseAttrValue("f32[]:", "w"), {
    kind: "array",
    dtype: DataType.F32,
    values: [],
  });
  usageError(
    () => parseAttrValue("http://x", "--attr url"),
    /--attr url: unknown attribute type 'http' .*str:http:\/\/x/,
  );
  usageError(
    () => parseAttrValue("f32:1,2", "--attr a"),
    /a f32 scalar needs exactly one value, got 2 \(write f32\[\]:/,
  );
  usageError(() => parseAttrValue("f32:", "--attr a"), /needs exactly one value, got 0/);
  usageError(() => parseAttrValue("u8:300", "--attr a"), /300 is out of range for u8/);
  usageError(() => parseAttrValue("c64:1", "--attr a"), /c64 is not an attribute type/);
  usageError(() => parseAttrValue("token:1", "--attr a"), /token is not an attribute type/);
  usageError(() => parseAttrValue("f8e5m2:1", "--attr a"), /f8e5m2 is not an attribute type/);
  usageError(() => parseAttrValue("s4:1", "--attr a"), /s4 is not an attribute type/);
});

Deno.test("run: full command line, both option forms, defaults", () => {
  const r = run(
    "--arg",
    "f32[2]=1,2",
    "--arg=x.npy",
    "--ret",
    "f32[2]",
    "--ret=token",
    "--ret",
    "s32[]",
    "--out",
    "y.npy",
    "--attr",
    "alpha=f32:2.5",
    "--attr=mode=reflect",
    "--attr",
    "axes=i64[]:0,2",
    "--attr",
    "cfg.scale=f32:2",
    "--attr",
    "cfg.inner.flag=bool:false",
    "--attr",
    "cfg.name=x",
    "--stage",
    "prepare",
    "--platform=cuda",
    "--repeat",
    "100",
    "--threads",
    "4",
    "--json",
  );
  assert.deepEqual(r.target, { kind: "library", path: "./lib.so" });
  assert.equal(r.handler, "h");
  assert.equal(r.args.length, 2);
  assert.deepEqual(r.args[1], { kind: "npy", path: "x.npy" });
  assert.deepEqual(r.rets.map((x) => x.kind), ["buffer", "token", "buffer"]);
  assert.deepEqual(r.outs, ["y.npy"]);
  assert.equal(r.stage, ExecutionStage.PREPARE);
  assert.equal(r.platform, "cuda");
  assert.equal(r.repeat, 100);
  assert.equal(r.threads, 4);
  assert.equal(r.json, true);
  const top = r.attrs.entries;
  assert.deepEqual([...top.keys()], ["alpha", "mode", "axes", "cfg"]);
  assert.deepEqual(top.get("mode"), { kind: "string", value: "reflect" });
  const cfg = entries(top.get("cfg"));
  assert.deepEqual([...cfg.keys()], ["scale", "inner", "name"]);
  assert.deepEqual(entries(cfg.get("inner")).get("flag"), {
    kind: "scalar",
    dtype: DataType.PRED,
    value: 0,
  });

  const d = run();
  assert.equal(d.stage, ExecutionStage.EXECUTE);
  assert.equal(d.platform, "host");
  assert.equal(d.repeat, 1);
  assert.equal(d.threads, undefined);
  assert.equal(d.json, false);
  assert.equal(d.attrs.entries.size, 0);
  const m = parseCommandLine(["run", "handlers.ts", "scale", "--arg", "s32[]=-1"]) as ParsedRun;
  assert.deepEqual(m.target, { kind: "module", path: "handlers.ts" });
  assert.deepEqual(m.args[0], { kind: "inline", dtype: DataType.S32, dims: [], values: [-1] });
  // Options may come before the positionals; -- ends the options.
  const early = parseCommandLine(["run", "--json", "lib.so", "--repeat", "2", "h"]) as ParsedRun;
  assert.equal(early.handler, "h");
  assert.equal(early.repeat, 2);
  const dashed = parseCommandLine(["run", "--", "-odd.so", "--h"]) as ParsedRun;
  assert.equal(dashed.target.path, "-odd.so");
  assert.equal(dashed.handler, "--h");
});

Deno.test("run: every malformed option is a usage error naming it", () => {
  usageError(
    () => run("--repaet", "3"),
    /unknown option --repaet for 'run' \(did you mean --repeat\?\)/,
  );
  usageError(() => run("--bogus"), /unknown option --bogus for 'run'; see 'run --help'/);
  usageError(() => run("-x"), /unknown option -x/);
  usageError(() => run("--repeat"), /--repeat needs a value/);
  usageError(() => run("--repeat", "0"), /--repeat '0': expected a whole number from 1/);
  usageError(() => run("--repeat", "2.5"), /--repeat '2.5'/);
  usageError(() => run("--repeat", "--json"), /--repeat '--json'/);
  usageError(() => run("--threads", "0"), /--threads '0'/);
  usageError(() => run("--repeat", "2", "--repeat", "3"), /--repeat is given more than once/);
  usageError(
    () => run("--stage", "exec"),
    /--stage 'exec': expected one of instantiate, prepare, initialize, execute/,
  );
  usageError(() => run("--platform", "rocm"), /--platform 'rocm': expected host or cuda/);
  usageError(() => run("--json=1"), /--json takes no value/);
  usageError(() => run("--out", "y.npy"), /1 --out file for 0 results/);
  usageError(() => run("--ret", "f32[1]", "--out", "y.txt"), /--out 1: 'y.txt' must end in .npy/);
  usageError(() => run("--ret", "token", "--out", "y.npy"), /--out 1 'y.npy': result 1 is a token/);
  usageError(
    () => run("--ret", "f32[1]", "--ret", "f32[1]", "--out", "y.npy", "--out", "y.npy"),
    /--out 'y.npy' is given for two results/,
  );
  usageError(() => run("--arg", "f32[2]=1,2,3"), /--arg 1: 3 values for the 2 elements/);
  usageError(() => run("--arg", "s32[]=1", "--arg", "f32[2]=1,2,3"), /--arg 2: /);
  usageError(() => run("--ret", "f32[1]", "--ret", "f32[x]"), /--ret 2: dimension 'x'/);
  usageError(() => run("--attr", "novalue"), /--attr 'novalue': expected name=value/);
  usageError(() => run("--attr", "=1"), /attribute name '' has an empty/);
  usageError(() => run("--attr", "a..b=1"), /attribute name 'a..b' has an empty/);
  usageError(() => run("--attr", "a=1", "--attr", "a=2"), /attribute 'a' is given twice/);
  usageError(
    () => run("--attr", "a=1", "--attr", "a.b=2"),
    /--attr a.b: 'a' is already a string, not a dictionary/,
  );
  usageError(() => run("--attr", "a.b=1", "--attr", "a=2"), /'a' is already a dictionary/);
  usageError(() => run("--attr", "a.b=f32:x"), /--attr a.b: 'x' is not a number/);
  usageError(
    () => parseCommandLine(["run", "lib.so"]),
    /'run' needs a library .* and a handler name/,
  );
  usageError(
    () => parseCommandLine(["run", "lib.so", "h", "extra"]),
    /two positional arguments, got 3/,
  );
  usageError(() => parseCommandLine(["run", "", "h"]), /library path is empty/);
  usageError(() => parseCommandLine(["rnu"]), /unknown command 'rnu' \(did you mean 'run'\?\)/);
  usageError(
    () => parseCommandLine(["frobnicate"]),
    /unknown command 'frobnicate'; commands: run, inspect, fuzz, help/,
  );
  usageError(() => parseCommandLine(["help", "x"]), /'help x': no such command/);
});

Deno.test("inspect and help", () => {
  assert.deepEqual(parseCommandLine(["inspect", "lib.so"]), {
    command: "inspect",
    path: "lib.so",
    json: false,
    all: false,
    verbose: false,
  });
  assert.deepEqual(parseCommandLine(["inspect", "--json", "lib.so"]), {
    command: "inspect",
    path: "lib.so",
    json: true,
    all: false,
    verbose: false,
  });
  assert.deepEqual(parseCommandLine(["inspect", "--all", "lib.so", "--verbose"]), {
    command: "inspect",
    path: "lib.so",
    json: false,
    all: true,
    verbose: true,
  });
  usageError(() => parseCommandLine(["inspect", "--all=1", "lib.so"]), /--all takes no value/);
  usageError(() => parseCommandLine(["inspect"]), /'inspect' takes one shared library path, got 0/);
  usageError(() => parseCommandLine(["inspect", "a.so", "b.so"]), /got 2/);
  usageError(
    () => parseCommandLine(["inspect", "a.so", "--repeat", "2"]),
    /unknown option --repeat for 'inspect'/,
  );
  assert.deepEqual(parseCommandLine([]), { command: "help" });
  assert.deepEqual(parseCommandLine(["--help"]), { command: "help" });
  assert.deepEqual(parseCommandLine(["help", "inspect"]), { command: "help", topic: "inspect" });
  assert.deepEqual(parseCommandLine(["run", "--help"]), { command: "help", topic: "run" });
  assert.deepEqual(parseCommandLine(["run", "lib.so", "h", "--arg", "bad", "-h"]).command, "help");
  for (const topic of [undefined, "run", "inspect"] as const) {
    const text = usage(topic);
    assert.match(text, /Exit codes:\n {2}0 {3}success/);
    assert.match(text, /70 {2}internal error/);
  }
  assert.match(usage("run"), /--attr NAME=VALUE/);
  assert.match(usage(), /jsr:@deno-xla\/ffi\/cli/);
});

Deno.test("run: --instantiate names the instantiate handler; not with --stage instantiate", () => {
  const run = parseCommandLine(["run", "l.so", "exec", "--instantiate", "init"]);
  assert.equal(run.command === "run" && run.instantiate, "init");
  usageError(
    () => parseCommandLine(["run", "l.so", "h", "--instantiate", "i", "--stage", "instantiate"]),
    /--instantiate goes with the execute/,
  );
  usageError(
    () => parseCommandLine(["run", "l.so", "h", "--instantiate", "a", "--instantiate", "b"]),
    /--instantiate is given more than once/,
  );
});

Deno.test("an inline array too large for the command line fails at once, naming its bytes", () => {
  const cases: [string, RegExp][] = [
    ["f4e2m1fn[100000000]=-1", /f4e2m1fn\[100000000\] has 100000000 elements \(100000000 bytes\)/],
    ["s8[4294967296]=1", /s8\[4294967296\] has 4294967296 elements \(4294967296 bytes\)/],
    ["c64[100000,100000]=0", /c64\[100000,100000\] has 10000000000 elements \(80000000000 bytes\)/],
    ["f32[16777217]", /f32\[16777217\] has 16777217 elements \(67108868 bytes\)/],
  ];
  for (const [text, re] of cases) {
    const t = performance.now();
    usageError(() => parseArgSpec(text, "--arg 1"), re);
    usageError(
      () => parseCommandLine(["run", "./lib.so", "h", "--arg", text]),
      /^--arg 1: .* more than the 16777216 values an array on the command line may hold/,
    );
    assert.ok(performance.now() - t < 1000, `${text} took ${performance.now() - t} ms`);
  }
  assert.equal(MAX_INLINE_VALUES, 2 ** 24);
  // At the limit, one value fills the array (re and im alternating for a complex one).
  const big = parseArgSpec(`u8[${2 ** 24}]=7`, "a");
  assert.ok(
    big.kind === "inline" && big.values.length === 2 ** 24 && big.values[2 ** 24 - 1] === 7,
  );
  const c = parseArgSpec(`c128[${2 ** 23}]=1-2j`, "a");
  assert.ok(c.kind === "inline" && c.values.length === 2 ** 24);
  assert.deepEqual([c.values[0], c.values[1], c.values.at(-2), c.values.at(-1)], [1, -2, 1, -2]);
  assert.deepEqual(parseArgSpec("c64[3]=1+2j", "a"), {
    kind: "inline",
    dtype: DataType.C64,
    dims: [3],
    values: [1, 2, 1, 2, 1, 2],
  });
});

Deno.test("names are looked up in tables of their own: no Object.prototype member is a stage", () => {
  for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
    usageError(
      () => parseCommandLine(["run", "./lib.so", "h", "--stage", name]),
      new RegExp(
        `^--stage '${name}': expected one of instantiate, prepare, initialize, execute$`,
      ),
    );
    usageError(
      () => parseArgSpec(`${name}[2]=1`, "--arg 1"),
      /unknown element type|is not an array/,
    );
  }
});

Deno.test("fuzz, inspect --signature and run --timeout: options and their usage errors", () => {
  const f = parseCommandLine([
    "fuzz",
    "./lib.so",
    "h",
    "--runs",
    "50",
    "--seed",
    "7",
    "--ret",
    "s32[$0.1]",
    "--arg",
    "f32[2,3]",
    "--attr",
    "k=s64:1",
    "--timeout",
    "250",
    "--sanitize",
    "address",
  ]);
  assert.ok(f.command === "fuzz");
  assert.equal(f.runs, 50);
  assert.equal(f.seed, 7);
  assert.deepEqual(f.rets, ["s32[$0.1]"]);
  assert.deepEqual(f.args, ["f32[2,3]"]);
  assert.deepEqual(f.attrs, ["k=s64:1"]);
  assert.equal(f.timeoutMs, 250);
  assert.equal(f.sanitize, "address");
  assert.equal(f.out, "fuzz-failures");
  const bad = (argv: string[], re: RegExp) => usageError(() => parseCommandLine(argv), re);
  bad(["fuzz", "./lib.so"], /'fuzz' takes a shared library and a handler name/);
  bad(["fuzz", "./lib.so", "h", "--seed", "x"], /--seed 'x': expected a whole number/);
  bad(["fuzz", "./lib.so", "h", "--sanitize", "thread"], /expected address/);
  bad(["fuzz", "./lib.so", "h", "--runs", "0"], /--runs '0'/);
  // --values: an argument's contract.
  const v = parseCommandLine([
    "fuzz",
    "./lib.so",
    "h",
    "--values",
    "2=index:$3.0",
    "--values",
    "1=[0,5],sorted",
    "--values",
    "0=[-1.5,2.5]",
  ]);
  assert.ok(v.command === "fuzz");
  assert.deepEqual(v.values, [
    { min: -1.5, max: 2.5 },
    { min: 0, max: 5, sorted: true },
    { indexInto: [3, 0] },
  ]);
  const st = parseCommandLine([
    ...["fuzz", "./lib.so", "h", "--instantiate", "h_inst", "--type", "S=s_type_id"],
  ]);
  assert.ok(st.command === "fuzz");
  assert.equal(st.instantiate, "h_inst");
  assert.deepEqual(st.types, [{ name: "S", symbol: "s_type_id" }]);
  const si = parseCommandLine(["inspect", "--signature", "./lib.so", "h", "--instantiate", "i"]);
  assert.ok(si.command === "inspect");
  assert.equal(si.instantiate, "i");
  bad(["inspect", "./lib.so", "--instantiate", "i"], /go with 'inspect --signature'/);
  bad(["fuzz", "./lib.so", "h", "--type", "S"], /--type 'S': expected NAME=SYMBOL/);
  bad(["fuzz", "./lib.so", "h", "--values", "x"], /--values 'x': no argument index/);
  bad(["fuzz", "./lib.so", "h", "--values", "0=[1]"], /is not a range/);
  bad(["fuzz", "./lib.so", "h", "--values", "0=[5,1]"], /LO more than HI/);
  bad(
    ["fuzz", "./lib.so", "h", "--values", "0=up"],
    /'up' is not a range, index:\$A\.D, offsets:\$A\.D or sorted/,
  );
  const off = parseCommandLine(["fuzz", "./lib.so", "h", "--values", "1=offsets:$0.0"]);
  assert.ok(off.command === "fuzz");
  assert.deepEqual(off.values, [undefined, { offsetsInto: [0, 0] }]);
  bad(["fuzz", "./lib.so", "h", "--values", "0=sorted", "--values", "0=[0,1]"], /given twice/);
  const s = parseCommandLine(["inspect", "--signature", "./lib.so", "h", "--arg", "f32[2]"]);
  assert.ok(s.command === "inspect");
  assert.equal(s.signature, "h");
  assert.deepEqual(s.args, ["f32[2]"]);
  bad(["inspect", "--signature", "./lib.so"], /a shared library and a handler name/);
  bad(["inspect", "./lib.so", "--arg", "f32[2]"], /go with 'inspect --signature'/);
  const r = parseCommandLine(["run", "./lib.so", "h", "--timeout", "100"]);
  assert.ok(r.command === "run");
  assert.equal(r.timeoutMs, 100);
  bad(["run", "m.ts", "h", "--timeout", "100"], /--timeout goes with a shared library/);
});
