import assert from "node:assert/strict";
import { buildExecutable } from "../build.ts";
import {
  API,
  API_SLOTS_V0_1,
  API_SLOTS_V0_4,
  API_V0_4,
  API_V0_5,
  LAYOUTS,
  type StructLayout,
} from "../src/abi/layout.ts";
import { jaxlibHeaders } from "./_jax.ts";

interface CLayout {
  sizeof: number;
  structSize: number | null;
  fields: Record<string, { offset: number; size: number }>;
}

/** The dumps' shared headers: part of their build keys, so a change rebuilds them. */
const DUMP_HEADERS = ["native/tests/layout_json.h", "native/tests/layout_common.h"];

/**
 * Runs a program the tests built: directly, or through the emulator
 * `XLA_FFI_DENO_TEST_EXEC` names (the aarch64 run under qemu-user, where a
 * child aarch64 program cannot be started by the kernel).
 */
function runProgram(exe: string): Deno.CommandOutput {
  const wrapper = (Deno.env.get("XLA_FFI_DENO_TEST_EXEC") ?? "").split(" ").filter(Boolean);
  const [cmd, ...args] = [...wrapper, exe];
  return new Deno.Command(cmd!, { args, stdout: "piped", stderr: "piped" }).outputSync();
}

function cLayouts(): Record<string, CLayout> {
  const exe = buildExecutable({
    name: "layout_dump",
    sources: ["native/tests/layout_dump.c", ...DUMP_HEADERS],
  });
  const out = runProgram(exe);
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** Every difference between the C view and the TS tables, one line each. */
function compare(c: Record<string, CLayout>, ts: Record<string, StructLayout>): string[] {
  const errors: string[] = [];
  for (const name of Object.keys(c)) {
    if (!(name in ts)) errors.push(`${name}: in the C header but not in LAYOUTS`);
  }
  for (const [name, t] of Object.entries(ts)) {
    const cl = c[name];
    if (!cl) {
      errors.push(`${name}: in LAYOUTS but not dumped from the C header`);
      continue;
    }
    if (t.name !== name) errors.push(`${name}: registry key differs from layout name ${t.name}`);
    if (cl.sizeof !== t.sizeof) errors.push(`${name}: sizeof C ${cl.sizeof} vs TS ${t.sizeof}`);
    if (cl.structSize !== t.structSize) {
      errors.push(`${name}: STRUCT_SIZE C ${cl.structSize} vs TS ${t.structSize}`);
    }
    for (const [f, cf] of Object.entries(cl.fields)) {
      const tf = t.fields[f];
      if (!tf) {
        errors.push(`${name}.${f}: in the C header but not in the TS table`);
        continue;
      }
      if (tf.offset !== cf.offset) {
        errors.push(`${name}.${f}: offset C ${cf.offset} vs TS ${tf.offset}`);
      }
      if (tf.size !== cf.size) errors.push(`${name}.${f}: size C ${cf.size} vs TS ${tf.size}`);
    }
    for (const f of Object.keys(t.fields)) {
      if (!(f in cl.fields)) errors.push(`${name}.${f}: in the TS table but not in the C header`);
    }
    // The TS table's own consistency: STRUCT_SIZE = offset + size of the named field.
    if (t.structSizeField !== null) {
      const nf = t.fields[t.structSizeField];
      if (!nf) errors.push(`${name}: structSizeField ${t.structSizeField} is not a field`);
      else if (nf.offset + nf.size !== t.structSize) {
        errors.push(`${name}: STRUCT_SIZE ${t.structSize} is not the end of ${t.structSizeField}`);
      }
    } else if (t.structSize !== null) {
      errors.push(`${name}: STRUCT_SIZE without a named field`);
    }
    const fields = Object.entries(t.fields).sort((a, b) => a[1].offset - b[1].offset);
    for (let i = 0; i < fields.length; i++) {
      const [f, l] = fields[i]!;
      if (l.offset + l.size > t.sizeof) errors.push(`${name}.${f}: ends past sizeof`);
      const next = fields[i + 1];
      if (next && l.offset + l.size > next[1].offset) {
        errors.push(`${name}.${f}: overlaps ${next[0]}`);
      }
    }
  }
  return errors;
}

Deno.test(`every TS layout matches the C compiler's view of xla_ffi.h, both directions (${Deno.build.os}-${Deno.build.arch})`, () => {
  const c = cLayouts();
  assert.deepEqual(compare(c, LAYOUTS as Record<string, StructLayout>), []);
  // Coverage: 43 structs and variants, each with fields.
  assert.equal(Object.keys(c).length, 43);
  assert.equal(Object.keys(LAYOUTS).length, 43);
});

/**
 * XLA's own names of the 0.3 structs (jaxlib's c_api.h) → this project's
 * tables: the ones that changed after 0.1 carry a version suffix here.
 */
const XLA_0_3_NAMES: Record<string, string> = {
  XLA_FFI_Type_Register_Args: "XLA_FFI_Type_Register_Args_V0_2",
  XLA_FFI_TypeInfo: "XLA_FFI_TypeInfo_V0_2",
  XLA_FFI_State_Set_Args: "XLA_FFI_State_Set_Args_V0_3",
  XLA_FFI_State_Get_Args: "XLA_FFI_State_Get_Args_V0_3",
  XLA_FFI_Metadata: "XLA_FFI_Metadata_V0_2",
  XLA_FFI_Api: "XLA_FFI_Api_V0_2",
};

/** 0.4 (jaxlib 0.11): the table gains Error_GetCode; its args are 0.4's. */
const XLA_0_4_NAMES: Record<string, string> = {
  ...XLA_0_3_NAMES,
  XLA_FFI_Api: "XLA_FFI_Api_V0_4",
};

const jax = jaxlibHeaders();

Deno.test({
  name: "the 0.3 or 0.4 tables match the XLA FFI header jaxlib ships, compiled at test time" +
    (jax.reason ? ` (${jax.reason})` : ""),
  ignore: jax.includeDir === undefined,
  fn: () => {
    const exe = buildExecutable({
      name: "jax_layout_dump",
      sources: ["native/tests/jax_layout_dump.c", ...DUMP_HEADERS],
      includeDirs: [jax.includeDir!],
    });
    const out = runProgram(exe);
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const dump = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      version: [number, number];
      structs: Record<string, CLayout>;
    };
    const minor = dump.version[1];
    assert.ok(
      dump.version[0] === 0 && (minor === 3 || minor === 4),
      `the jaxlib header is API ${dump.version.join(".")}, not 0.3 or 0.4`,
    );
    const names = minor === 4 ? XLA_0_4_NAMES : XLA_0_3_NAMES;
    const ours: Record<string, StructLayout> = {};
    for (const xlaName of Object.keys(dump.structs)) {
      const layout = LAYOUTS[names[xlaName] ?? xlaName];
      assert.ok(layout, `${xlaName}: no table here`);
      ours[xlaName] = { ...layout, name: xlaName };
    }
    assert.deepEqual(compare(dump.structs, ours), []);
    // every struct with a layout (0.4 adds XLA_FFI_Error_GetCode_Args)
    assert.equal(Object.keys(dump.structs).length, minor === 4 ? 31 : 30);
  },
});

Deno.test("the comparison names the struct and field of a mismatch", () => {
  const c = cLayouts();
  const broken: Record<string, StructLayout> = { ...LAYOUTS };
  const cf = LAYOUTS["XLA_FFI_CallFrame"]!;
  broken["XLA_FFI_CallFrame"] = {
    ...cf,
    fields: { ...cf.fields, stage: { offset: 36, size: 4, type: "enum" }, extra: cf.fields.ctx! },
  };
  delete broken["XLA_FFI_Scalar"];
  broken["XLA_FFI_Metadata"] = { ...LAYOUTS["XLA_FFI_Metadata"]!, structSize: 40 };
  const errors = compare(c, broken);
  assert.ok(errors.includes("XLA_FFI_CallFrame.stage: offset C 32 vs TS 36"), errors.join("\n"));
  assert.ok(errors.includes("XLA_FFI_CallFrame.extra: in the TS table but not in the C header"));
  assert.ok(errors.includes("XLA_FFI_Scalar: in the C header but not in LAYOUTS"));
  assert.ok(errors.includes("XLA_FFI_Metadata: STRUCT_SIZE C 36 vs TS 40"));
});

Deno.test("the STRUCT_SIZE anomalies are as the spec gives them", () => {
  const l = LAYOUTS;
  assert.deepEqual([l.XLA_FFI_CallFrame!.structSize, l.XLA_FFI_CallFrame!.sizeof], [168, 176]);
  const fc = l.XLA_FFI_Future_Create_Args!;
  assert.deepEqual([fc.structSize, fc.sizeof], [16, 24]);
  assert.deepEqual([l.XLA_FFI_Metadata!.structSize, l.XLA_FFI_Metadata!.sizeof], [36, 40]);
  const m2 = l.XLA_FFI_Metadata_V0_2!;
  assert.deepEqual([m2.structSize, m2.sizeof, m2.fields.state_type_id!.offset], [36, 48, 40]);
  assert.equal(API_SLOTS_V0_1.length, 18);
  assert.equal(Object.keys(API.fields).length, 22);
  assert.equal(Object.keys(API_V0_5.fields).length, 23);
  assert.equal(API_V0_5.fields.XLA_FFI_Error_GetCode.offset, 192);
  // 0.4: the 0.3 slots (slot 5 Type_Register), then Error_GetCode at 192.
  assert.equal(API_SLOTS_V0_4.length, 19);
  assert.equal(API_V0_4.fields.XLA_FFI_Type_Register.offset, 88);
  assert.deepEqual(
    [API_V0_4.structSize, API_V0_4.fields.XLA_FFI_Error_GetCode.offset],
    [200, 192],
  );
  assert.equal(LAYOUTS.XLA_FFI_Error_GetCode_Args!.version, "0.4");
});

Deno.test("buildExecutable caches by key and shows the compiler's output on failure", async () => {
  const { ErrorCode } = await import("../src/abi/enums.ts");
  const { FfiError } = await import("../src/errors.ts");
  const dir = Deno.makeTempDirSync();
  try {
    const src = `${dir}/prog.c`;
    Deno.writeTextFileSync(src, '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n');
    const opts = { name: "prog", sources: [new URL(`file://${src}`)], outDir: dir };
    const exe = buildExecutable(opts);
    assert.equal(buildExecutable(opts), exe);
    assert.ok(exe.endsWith("/prog"));
    const out = runProgram(exe);
    assert.equal(new TextDecoder().decode(out.stdout), "hi\n");
    Deno.writeTextFileSync(src, "int main(void) { return y; }\n");
    assert.throws(
      () => buildExecutable(opts),
      (e: unknown) =>
        e instanceof FfiError && e.code === ErrorCode.INTERNAL &&
        /^Compiling prog failed/.test(e.message) && /\by\b/.test(e.message),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
