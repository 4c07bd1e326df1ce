/** Opens the ABI test fixture library (native/tests/abi_fixture.c), once per process. */
import { buildSharedLibrary } from "../build.ts";
import { openLibrary } from "../src/native/lib.ts";

const SYMBOLS = {
  abi_fixture_text_ptr: { parameters: [], result: "pointer" },
  abi_fixture_fill: { parameters: ["buffer", "buffer"], result: "i32" },
  abi_fixture_check: { parameters: ["buffer", "pointer"], result: "i32" },
  abi_fixture_frame: { parameters: [], result: "pointer" },
  abi_fixture_attr_count: { parameters: [], result: "i32" },
  abi_fixture_api: { parameters: ["i32"], result: "pointer" },
  abi_fixture_broken_frame: { parameters: ["i32"], result: "pointer" },
  abi_fixture_check_frame: { parameters: ["pointer"], result: "i32" },
  abi_fixture_metadata_extension: { parameters: ["i32"], result: "pointer" },
} as const;

let lib: Deno.DynamicLibrary<typeof SYMBOLS> | undefined;

/** The fixture's symbols (the library stays open for the test process). */
export function fixture(): Deno.DynamicLibrary<typeof SYMBOLS>["symbols"] {
  if (!lib) {
    const path = buildSharedLibrary({
      name: "abi_fixture",
      sources: ["native/tests/abi_fixture.c", "native/tests/abi_fixture_fields.h"],
    });
    lib = openLibrary(path, SYMBOLS);
  }
  return lib.symbols;
}

/** A NUL-terminated C string. */
export function cstr(s: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(s + "\0");
}
