/** Native symbols of the TS handler entry points (`native/handler*.c`). */
export const HANDLER_SYMBOLS = {} as const;
