import assert from "node:assert/strict";
import { captureStderr } from "./_stderr.ts";
import { ErrorCode, Runtime } from "../mod.ts";
import { native } from "../src/native/lib.ts";

// [slot name, STRUCT_SIZE of its args (spec §2.2), returns an error]
const SLOTS: [string, number, boolean][] = [
  ["XLA_FFI_Error_Create", 28, true],
  ["XLA_FFI_Error_GetMessage", 32, false],
  ["XLA_FFI_Error_Destroy", 24, false],
  ["XLA_FFI_Handler_Register", 84, true],
  ["XLA_FFI_Stream_Get", 32, true],
  ["XLA_FFI_TypeId_Register", 40, true],
  ["XLA_FFI_ExecutionContext_Get", 40, true],
  ["XLA_FFI_State_Set", 48, true],
  ["XLA_FFI_State_Get", 40, true],
  ["XLA_FFI_DeviceMemory_Allocate", 48, true],
  ["XLA_FFI_DeviceMemory_Free", 40, true],
  ["XLA_FFI_ThreadPool_Schedule", 40, true],
  ["XLA_FFI_ThreadPool_NumThreads", 32, true],
  ["XLA_FFI_Future_Create", 16, true],
  ["XLA_FFI_Future_SetAvailable", 24, true],
  ["XLA_FFI_Future_SetError", 32, true],
  ["XLA_FFI_RunId_Get", 32, true],
  ["XLA_FFI_DeviceOrdinal_Get", 28, true],
];

function readError(err: Deno.PointerObject): { code: number; message: string } {
  const sym = native();
  const code = sym.xrt_error_code(err);
  const message = Deno.UnsafePointerView.getCString(sym.xrt_error_message(err)!);
  sym.xrt_error_destroy(err);
  return { code, message };
}

Deno.test("the API table: version 0.1, 18 slots, struct_size 192", () => {
  const api = new Deno.UnsafePointerView(Runtime.api);
  assert.equal(api.getBigUint64(0), 192n);
  assert.equal(api.getBigUint64(16), 24n); // api_version.struct_size
  assert.equal(api.getInt32(32), 0);
  assert.equal(api.getInt32(36), 1);
  for (let i = 0; i < 18; i++) assert.notEqual(api.getPointer(48 + 8 * i), null, `slot ${i}`);
});

Deno.test("every API function checks struct_size with XLA's message", async () => {
  const api = new Deno.UnsafePointerView(Runtime.api);
  const before = native().xrt_debug_stats(new BigInt64Array(0), 0);
  assert.ok(before > 0);
  const logged: string[] = [];
  // The void functions log the mismatch on stderr (rate-limited per process): checked here.
  const { text } = await captureStderr(() =>
    SLOTS.forEach(([name, size, returnsError], slot) => {
      const fn = api.getPointer(48 + 8 * slot)!;
      const args = new BigUint64Array(16); // zeroed
      args[0] = BigInt(size - 1);
      if (returnsError) {
        const f = new Deno.UnsafeFnPointer(fn as Deno.PointerObject<never>, {
          parameters: ["buffer"],
          result: "pointer",
        });
        const err = f.call(args);
        assert.notEqual(err, null, name);
        const e = readError(err!);
        assert.equal(e.code, ErrorCode.INVALID_ARGUMENT, name);
        assert.equal(
          e.message,
          `Unexpected ${name} size: expected ${size}, got ${size - 1}. Check installed ` +
            `software versions. The framework XLA FFI API version is 0.1.`,
        );
      } else {
        // Void functions only log the mismatch and write nothing.
        const f = new Deno.UnsafeFnPointer(fn as Deno.PointerObject<never>, {
          parameters: ["buffer"],
          result: "void",
        });
        f.call(args);
        assert.equal(args[3], 0n, name);
        logged.push(
          `Unexpected ${name} size: expected ${size}, got ${size - 1}. Check installed ` +
            `software versions. The framework XLA FFI API version is 0.1.`,
        );
      }
    })
  );
  for (const line of text.split("\n").filter(Boolean)) {
    assert.ok(
      logged.includes(line) || line === "xla_ffi_deno: further warnings suppressed",
      line,
    );
  }
});

Deno.test("Error_Create / GetMessage / Destroy through the table; OK errors read as ''", () => {
  const api = new Deno.UnsafePointerView(Runtime.api);
  const create = new Deno.UnsafeFnPointer(api.getPointer(48)! as Deno.PointerObject<never>, {
    parameters: ["buffer"],
    result: "pointer",
  });
  const getMessage = new Deno.UnsafeFnPointer(api.getPointer(56)! as Deno.PointerObject<never>, {
    parameters: ["buffer"],
    result: "void",
  });
  const destroy = new Deno.UnsafeFnPointer(api.getPointer(64)! as Deno.PointerObject<never>, {
    parameters: ["buffer"],
    result: "void",
  });
  const text = new TextEncoder().encode("boom\0");
  for (const [code, expected] of [[ErrorCode.NOT_FOUND, "boom"], [ErrorCode.OK, ""]] as const) {
    const a = new BigUint64Array(5);
    a[0] = 28n;
    a[2] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(text)));
    a[3] = BigInt(code);
    const err = create.call(a)!;
    text[0] = "X".charCodeAt(0); // the error holds its own copy
    const g = new BigUint64Array(4);
    g[0] = 32n;
    g[2] = BigInt(Deno.UnsafePointer.value(err));
    getMessage.call(g);
    const msg = Deno.UnsafePointerView.getCString(Deno.UnsafePointer.create(g[3]!)!);
    assert.equal(msg, expected);
    const d = new BigUint64Array(3);
    d[0] = 24n;
    d[2] = BigInt(Deno.UnsafePointer.value(err));
    destroy.call(d);
    text[0] = "b".charCodeAt(0);
  }
});
