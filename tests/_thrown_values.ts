/**
 * Every kind of JavaScript value a handler may throw, reject or resolve
 * with, for the error fuzzers (tests/errors_test.ts, the real-XLA `errors`
 * case): primitives, symbols, bigints, null-prototype objects, proxies and
 * getters that throw, huge and non-UTF-8 strings, cyclic causes, FfiErrors
 * with forged codes. Each entry makes a fresh value.
 *
 * @module
 */
import { ErrorCode, FfiError } from "../mod.ts";

const huge = "x".repeat(1 << 24);

function throwing(what: string): never {
  throw new Error(`${what} throws`);
}

/** [name, make] pairs, one per kind of value. */
export function thrownValues(): [string, () => unknown][] {
  const cyclic = () => {
    const a = new Error("a") as Error & { cause?: unknown };
    const b = new Error("b", { cause: a });
    a.cause = b;
    return a;
  };
  const everyTrapThrows = () =>
    new Proxy({}, {
      get: () => throwing("get"),
      getPrototypeOf: () => throwing("getPrototypeOf"),
      has: () => throwing("has"),
      ownKeys: () => throwing("ownKeys"),
      getOwnPropertyDescriptor: () => throwing("getOwnPropertyDescriptor"),
    });
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  };
  const forged = (code: unknown) => () => {
    const e = new FfiError(ErrorCode.INTERNAL, "forged");
    Object.defineProperty(e, "code", { value: code });
    return e;
  };
  const codeGetterThrows = () => {
    const e = new FfiError(ErrorCode.ABORTED, "getter");
    Object.defineProperty(e, "code", { get: () => throwing("code") });
    return e;
  };
  return [
    ["undefined", () => undefined],
    ["null", () => null],
    ["true", () => true],
    ["0", () => 0],
    ["-0", () => -0],
    ["NaN", () => NaN],
    ["Infinity", () => Infinity],
    ["a float", () => 1.5],
    ["a bigint", () => 12345678901234567890n],
    ["a symbol", () => Symbol("s")],
    ["a symbol without description", () => Symbol()],
    ["an empty string", () => ""],
    ["a string", () => "a string"],
    ["a string with NUL", () => "before\0after"],
    ["a lone surrogate", () => "bad \ud800 utf-16"],
    ["non-ASCII", () => "ünïcödé 😀"],
    ["a 16 MiB string", () => huge],
    ["a function", () => function named() {}],
    ["a class", () => class K {}],
    ["a null-prototype object", () => Object.create(null)],
    ["an object", () => ({ a: 1 })],
    ["an array", () => [1, [2]]],
    ["a Date", () => new Date(0)],
    ["a RegExp", () => /re/g],
    ["a Promise", () => Promise.resolve(1)],
    ["an Error", () => new Error("plain")],
    ["a TypeError", () => new TypeError("type")],
    ["an AggregateError", () => new AggregateError([new Error("one")], "many")],
    ["a DOMException", () => new DOMException("dom", "AbortError")],
    ["an Error with a 16 MiB message", () => new Error(huge)],
    ["an Error whose message getter throws", () => {
      const e = new Error("x");
      Object.defineProperty(e, "message", { get: () => throwing("message") });
      return e;
    }],
    ["an Error whose message is an object", () => {
      const e = new Error("x");
      Object.defineProperty(e, "message", { value: { not: "a string" } });
      return e;
    }],
    ["cyclic causes", cyclic],
    ["toString throws", () => ({ toString: () => throwing("toString") })],
    ["Symbol.toPrimitive throws", () => ({ [Symbol.toPrimitive]: () => throwing("toPrimitive") })],
    ["a then getter that throws", () => ({
      get then() {
        return throwing("then");
      },
    })],
    ["a proxy whose traps throw", everyTrapThrows],
    ["a revoked proxy", revoked],
    ["a proxy of an FfiError", () => new Proxy(new FfiError(ErrorCode.ABORTED, "p"), {})],
    ["an FfiError with code NaN", forged(NaN)],
    ["an FfiError with code undefined", forged(undefined)],
    ["an FfiError with code null", forged(null)],
    ["an FfiError with code 'INTERNAL'", forged("INTERNAL")],
    ["an FfiError with code 0", forged(0)],
    ["an FfiError with code 2^40", forged(2 ** 40)],
    ["an FfiError whose code getter throws", codeGetterThrows],
    ["an FfiError with a non-string message", () => {
      const e = new FfiError(ErrorCode.ABORTED, "x");
      Object.defineProperty(e, "message", { value: Symbol("m") });
      return e;
    }],
  ];
}
