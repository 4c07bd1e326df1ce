/** Native symbols of the ABI layer (identity, layout dump, test fixtures). */
export const ABI_SYMBOLS = {
  /** () → int32_t */
  xla_ffi_deno_abi_version: { parameters: [], result: "i32" },
} as const;
