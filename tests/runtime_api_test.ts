import assert from "node:assert/strict";
import { captureStderr } from "./_stderr.ts";
import { ErrorCode, Runtime } from "../mod.ts";
import { native } from "../src/native/lib.ts";

// [slot name, the struct name XLA's ffi_api.cc prints, STRUCT_SIZE of its
// args per version 0.1/0.2/0.3/0.4 (spec §2.2; 0: no such slot), returns an error]
const SLOTS: [string, string, [number, number, number, number], boolean][] = [
  ["Error_Create", "XLA_FFI_Error_Create", [28, 28, 28, 28], true],
  ["Error_GetMessage", "XLA_FFI_Error_GetMessage", [32, 32, 32, 32], false],
  ["Error_Destroy", "XLA_FFI_Error_Destroy", [24, 24, 24, 24], false],
  ["Handler_Register", "XLA_FFI_Handler_Register", [84, 84, 84, 84], true],
  ["Stream_Get", "XLA_FFI_Stream_Get", [32, 32, 32, 32], true],
  // XLA checks TypeId_Register / Type_Register against ExecutionContext_Get's size, by that name.
  ["Type(Id)_Register", "XLA_FFI_ExecutionContext_Get_Args", [40, 40, 40, 40], true],
  ["ExecutionContext_Get", "XLA_FFI_ExecutionContext_Get_Args", [40, 40, 40, 40], true],
  ["State_Set", "XLA_FFI_State_Set_Args", [48, 40, 48, 48], true],
  ["State_Get", "XLA_FFI_State_Get_Args", [40, 40, 48, 48], true],
  ["DeviceMemory_Allocate", "XLA_FFI_DeviceMemory_Allocate_Args", [48, 48, 48, 48], true],
  ["DeviceMemory_Free", "XLA_FFI_DeviceMemory_Free_Args", [40, 40, 40, 40], true],
  ["ThreadPool_Schedule", "XLA_FFI_ThreadPool_Schedule_Args", [40, 40, 40, 40], true],
  ["ThreadPool_NumThreads", "XLA_FFI_ThreadPool_NumThreads_Args", [32, 32, 32, 32], true],
  ["Future_Create", "XLA_FFI_Future_Create", [16, 16, 16, 16], true],
  ["Future_SetAvailable", "XLA_FFI_Future_SetAvailable", [24, 24, 24, 24], true],
  ["Future_SetError", "XLA_FFI_Future_SetError", [32, 32, 32, 32], true],
  ["RunId_Get", "XLA_FFI_RunId_Get", [32, 32, 32, 32], true],
  ["DeviceOrdinal_Get", "XLA_FFI_DeviceOrdinal_Get", [28, 28, 28, 28], true],
  // 0.4 appends Error_GetCode (void: XLA logs a too-small size and writes nothing).
  ["Error_GetCode", "XLA_FFI_Error_GetCode", [0, 0, 0, 28], false],
];

const VERSIONS = ["0.1", "0.2", "0.3", "0.4"] as const;

function readError(err: Deno.PointerObject): { code: number; message: string } {
  const sym = native();
  const code = sym.xla_ffi_deno_runtime_error_code(err);
  const message = Deno.UnsafePointerView.getCString(sym.xla_ffi_deno_runtime_error_message(err)!);
  sym.xla_ffi_deno_runtime_error_destroy(err);
  return { code, message };
}

Deno.test("the API tables: 0.1-0.3 with 18 slots (192 bytes), 0.4 with Error_GetCode (200)", () => {
  VERSIONS.forEach((v, i) => {
    const api = new Deno.UnsafePointerView(Runtime.apiTable(v));
    const slots = v === "0.4" ? 19 : 18;
    assert.equal(api.getBigUint64(0), BigInt(48 + 8 * slots));
    assert.equal(api.getBigUint64(16), 24n); // api_version.struct_size
    assert.equal(api.getInt32(32), 0);
    assert.equal(api.getInt32(36), i + 1);
    for (let s = 0; s < slots; s++) assert.notEqual(api.getPointer(48 + 8 * s), null, `slot ${s}`);
  });
  // The default table (and a default runtime's) is the newest.
  assert.equal(new Deno.UnsafePointerView(Runtime.api).getInt32(36), 4);
  using rt4 = new Runtime({ threads: 0 });
  assert.equal(rt4.apiVersion, "0.4");
  using rt = new Runtime({ threads: 0, apiVersion: "0.2" });
  assert.equal(rt.apiVersion, "0.2");
  assert.equal(
    Deno.UnsafePointer.value(rt.api),
    Deno.UnsafePointer.value(Runtime.apiTable("0.2")),
  );
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => new Runtime({ apiVersion: "0.5" as any }),
    (e: unknown) =>
      e instanceof Error &&
      e.message ===
        "Runtime: unsupported XLA FFI API version '0.5' (supported: 0.1, 0.2, 0.3, 0.4)",
  );
});

Deno.test("every API function checks struct_size with XLA's struct names and message", async () => {
  const logged: string[] = [];
  // The void functions log the mismatch on stderr (rate-limited per process): checked here.
  const { text } = await captureStderr(() =>
    VERSIONS.forEach((v, vi) => {
      const api = new Deno.UnsafePointerView(Runtime.apiTable(v));
      SLOTS.forEach(([slotName, name, sizes, returnsError], slot) => {
        const size = sizes[vi]!;
        if (size === 0) return;
        const fn = api.getPointer(48 + 8 * slot)!;
        const args = new BigUint64Array(16); // zeroed
        args[0] = BigInt(size - 1);
        const message = `Unexpected ${name} size: expected ${size}, got ${size - 1}. Check ` +
          `installed software versions. The framework XLA FFI API version is ${v}.`;
        if (returnsError) {
          const f = new Deno.UnsafeFnPointer(fn as Deno.PointerObject<never>, {
            parameters: ["buffer"],
            result: "pointer",
          });
          const err = f.call(args);
          assert.notEqual(err, null, `${v} ${slotName}`);
          const e = readError(err!);
          assert.equal(e.code, ErrorCode.INVALID_ARGUMENT, `${v} ${slotName}`);
          assert.equal(e.message, message);
        } else {
          // Void functions log the mismatch and still act (XLA ffi_api.cc: LOG(ERROR)):
          // GetMessage of a null error writes "".
          const f = new Deno.UnsafeFnPointer(fn as Deno.PointerObject<never>, {
            parameters: ["buffer"],
            result: "void",
          });
          f.call(args);
          if (slotName === "Error_GetMessage") {
            assert.equal(
              Deno.UnsafePointerView.getCString(Deno.UnsafePointer.create(args[3]!)!),
              "",
            );
          }
          logged.push(message);
        }
      });
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
