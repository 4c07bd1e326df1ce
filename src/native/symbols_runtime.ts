/** Native symbols of the embedded runtime (`native/runtime*.c`). */
export const RUNTIME_SYMBOLS = {} as const;
