/**
 * C++ exports of a shared library, for `inspect` and `run`: which exported
 * functions have C++ linkage (Itanium-mangled `_Z…` names), their demangled
 * names (from `c++filt` or `llvm-cxxfilt` when one is installed), and which
 * are member functions, which are never handlers (a member function takes
 * `this` first, so called as `XLA_FFI_Error* f(XLA_FFI_CallFrame*)` it reads
 * the frame as its object).
 *
 * @module
 */

/** How an exported function name is classified. */
export interface CxxName {
  /** The symbol as exported (what `dlsym` takes). */
  symbol: string;
  /** Demangled name when the symbol is mangled and a demangler ran, else the symbol. */
  name: string;
  /** C++ linkage (an Itanium-mangled name). */
  mangled: boolean;
  /** A non-static member function, constructor or destructor (never a handler). */
  member: boolean;
}

/** True for an Itanium C++ mangled name. */
export function isMangled(symbol: string): boolean {
  return symbol.startsWith("_Z");
}

const DEMANGLERS = ["c++filt", "llvm-cxxfilt"];

function _findTool(names: readonly string[]): string | undefined {
  let path: string | undefined;
  try {
    path = Deno.env.get("PATH");
  } catch {
    return undefined;
  }
  for (const dir of (path ?? "/usr/bin:/bin").split(":").filter(Boolean)) {
    for (const n of names) {
      try {
        if (Deno.statSync(`${dir}/${n}`).isFile) return `${dir}/${n}`;
      } catch { /* not there, or not readable */ }
    }
  }
  return undefined;
}

/**
 * Demangles `symbols` with `c++filt` (or `llvm-cxxfilt`) in one child
 * process; `undefined` when neither is installed or it cannot run (then the
 * names stay mangled).
 */
export async function demangle(symbols: readonly string[]): Promise<string[] | undefined> {
  if (symbols.length === 0) return [];
  const tool = _findTool(DEMANGLERS);
  if (tool === undefined) return undefined;
  try {
    const child = new Deno.Command(tool, { stdin: "piped", stdout: "piped", stderr: "null" })
      .spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(symbols.join("\n") + "\n"));
    await w.close();
    const out = await child.output();
    if (!out.success) return undefined;
    const lines = new TextDecoder().decode(out.stdout).split("\n");
    if (lines.length < symbols.length) return undefined;
    return lines.slice(0, symbols.length);
  } catch {
    return undefined;
  }
}

/** Splits `s` at top-level occurrences of `sep` (outside <>, (), []). */
function _splitTop(s: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "<" || c === "(" || c === "[") depth++;
    else if (c === ">" || c === ")" || c === "]") depth--;
    else if (depth === 0 && s.startsWith(sep, i)) {
      parts.push(s.slice(start, i));
      start = i + sep.length;
      i += sep.length - 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** The index of the `(` opening the parameter list at the end of a demangled function name. */
function _paramsStart(s: string): number {
  let depth = 0;
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s[i]!;
    if (c === ")") depth++;
    else if (c === "(") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/**
 * Whether a mangled function is a non-static member function, a constructor
 * or a destructor. From the mangled name: cv- or ref-qualified nested names
 * (`_ZNK…`), constructors and destructors (`C1`…`D2` ending the nested
 * name); from the demangled name when given: a qualifier after the parameter
 * list, a class template in the scope (namespaces are never templates), or a
 * name equal to its scope's (constructor) or starting with `~`. A member
 * function of a plain class with no qualifier reads like a namespace
 * function and is not detected.
 */
export function isMemberFunction(symbol: string, demangled?: string): boolean {
  if (!isMangled(symbol)) return false;
  if (/^_ZN[KVrRO]/.test(symbol)) return true;
  if (demangled === undefined || demangled === symbol) {
    return /^_ZN.*(C[1-5]|D[0-5])E/.test(symbol);
  }
  const open = _paramsStart(demangled);
  if (open < 0) return false;
  const after = demangled.slice(demangled.lastIndexOf(")") + 1).trim();
  if (/^(const|volatile|&)/.test(after)) return true;
  const scope = _splitTop(demangled.slice(0, open), "::");
  if (scope.length < 2) return false;
  const last = scope[scope.length - 1]!;
  if (scope.slice(0, -1).some((c) => c.includes("<"))) return true;
  const owner = scope[scope.length - 2]!.replace(/<.*$/, "");
  return last.startsWith("~") || last.replace(/<.*$/, "") === owner;
}

/**
 * Classifies exported function names: C or C++ linkage, demangled name,
 * member function or not.
 *
 * @example
 * ```ts ignore
 * const names = await classifyExports(["scale", "_ZNK3foo1HILi3EE4CallEP17XLA_FFI_CallFrame"]);
 * // [{ symbol: "scale", mangled: false, member: false, ... },
 * //  { name: "foo::H<3>::Call(XLA_FFI_CallFrame*) const", mangled: true, member: true, ... }]
 * ```
 */
export async function classifyExports(symbols: readonly string[]): Promise<CxxName[]> {
  const mangled = symbols.filter(isMangled);
  const names = await demangle(mangled);
  const byMangled = new Map<string, string>();
  if (names) mangled.forEach((m, i) => byMangled.set(m, names[i] || m));
  return symbols.map((symbol) => {
    const isCxx = isMangled(symbol);
    const name = byMangled.get(symbol) ?? symbol;
    return {
      symbol,
      name,
      mangled: isCxx,
      member: isCxx && isMemberFunction(symbol, names ? name : undefined),
    };
  });
}
