/**
 * A small reader of ELF64 little-endian shared objects (x86-64, aarch64, …):
 * the dynamic symbol table, to list the functions a library exports.
 *
 * It reads `.dynsym` and its string table through the section headers, and
 * falls back to the `PT_DYNAMIC` segment (`DT_SYMTAB`, `DT_STRTAB`, and
 * `DT_HASH` or `DT_GNU_HASH` for the symbol count) when section headers are
 * stripped. Every offset and size is checked against the file: a truncated or
 * corrupt file gives an {@link FfiError} (INVALID_ARGUMENT) naming the path and
 * the fault, never a `RangeError` or an endless loop.
 *
 * It sits low, beside the code that opens our own library: the runtime's
 * `HandlerLibrary` and the command line both read symbols with it.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";

/** Binding of an ELF symbol (`STB_*`). */
export type ElfSymbolBinding = "global" | "weak" | "unique";

/** Visibility of an exported ELF symbol (`STV_DEFAULT` or `STV_PROTECTED`). */
export type ElfSymbolVisibility = "default" | "protected";

/** One exported, defined function of a shared object. */
export interface ElfSymbol {
  /** The symbol name, as `dlsym` takes it (without a version suffix). */
  name: string;
  /** `st_value`: the symbol's virtual address in the object. */
  value: number;
  /** `st_size`: the function's size in bytes (0 when unknown). */
  size: number;
  /** `func` (`STT_FUNC`) or `ifunc` (`STT_GNU_IFUNC`, resolved at load time). */
  type: "func" | "ifunc";
  /** The binding. */
  binding: ElfSymbolBinding;
  /** The visibility. */
  visibility: ElfSymbolVisibility;
}

/** What {@link readElfSymbols} finds in a shared object. */
export interface ElfSymbolTable {
  /** `e_machine`, e.g. 62 for x86-64, 183 for aarch64. */
  machine: number;
  /** A readable machine name: `x86_64`, `aarch64`, or `machine <n>`. */
  machineName: string;
  /** `e_type`: 3 (`ET_DYN`) for shared objects, 2 (`ET_EXEC`) for executables. */
  fileType: number;
  /** Where the symbols came from: the section headers or the dynamic segment. */
  source: "sections" | "dynamic";
  /** Exported defined functions, in symbol-table order. */
  symbols: ElfSymbol[];
}

const EM_NAMES: Record<number, string> = {
  3: "i386",
  40: "arm",
  62: "x86_64",
  183: "aarch64",
  243: "riscv64",
  21: "ppc64",
  22: "s390x",
};

const SHT_DYNSYM = 11;
const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const DT_NULL = 0;
const DT_HASH = 4;
const DT_STRTAB = 5;
const DT_SYMTAB = 6;
const DT_STRSZ = 10;
const DT_SYMENT = 11;
const DT_GNU_HASH = 0x6ffffef5;
const SYM_SIZE = 24;
/** No real library has more symbols; bounds the work on a corrupt count. */
const MAX_SYMBOLS = 1 << 24;

/** Random-access bytes of a file or buffer. */
interface _Source {
  readonly size: number;
  read(offset: number, length: number): Uint8Array;
}

class _Reader {
  readonly #source: _Source;
  readonly #label: string;
  readonly size: number;

  constructor(source: _Source, label: string) {
    this.#source = source;
    this.#label = label;
    this.size = source.size;
  }

  fail(what: string): never {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${this.#label}: ${what}`);
  }

  /** Bytes [offset, offset+length), checked against the file size. */
  bytes(offset: number, length: number, what: string): Uint8Array {
    if (
      !Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 ||
      length < 0 || offset + length > this.size
    ) {
      this.fail(
        `truncated or corrupt ELF file: ${what} (${length} bytes at offset ${offset}) ` +
          `lies outside the file (${this.size} bytes)`,
      );
    }
    return this.#source.read(offset, length);
  }

  view(offset: number, length: number, what: string): _View {
    return new _View(this.bytes(offset, length, what), this, what);
  }
}

/** Little-endian field reads within one checked block. */
class _View {
  readonly #dv: DataView;
  readonly #reader: _Reader;
  readonly #what: string;

  constructor(bytes: Uint8Array, reader: _Reader, what: string) {
    this.#dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#reader = reader;
    this.#what = what;
  }

  get length(): number {
    return this.#dv.byteLength;
  }

  #check(offset: number, n: number): void {
    if (offset < 0 || offset + n > this.#dv.byteLength) {
      this.#reader.fail(`truncated or corrupt ELF file: ${this.#what} is too short`);
    }
  }

  u8(offset: number): number {
    this.#check(offset, 1);
    return this.#dv.getUint8(offset);
  }

  u16(offset: number): number {
    this.#check(offset, 2);
    return this.#dv.getUint16(offset, true);
  }

  u32(offset: number): number {
    this.#check(offset, 4);
    return this.#dv.getUint32(offset, true);
  }

  /** A u64 that must fit a safe integer (offsets, sizes, addresses). */
  u64(offset: number, field: string): number {
    this.#check(offset, 8);
    const lo = this.#dv.getUint32(offset, true);
    const hi = this.#dv.getUint32(offset + 4, true);
    if (hi > 0x1fffff) {
      this.#reader.fail(`corrupt ELF file: ${field} in ${this.#what} is out of range`);
    }
    return hi * 0x1_0000_0000 + lo;
  }

  /** A signed 64-bit tag as a number; tags beyond ±2^53 become NaN (unknown). */
  i64tag(offset: number): number {
    this.#check(offset, 8);
    const lo = this.#dv.getUint32(offset, true);
    const hi = this.#dv.getInt32(offset + 4, true);
    if (hi > 0x1fffff || hi < -0x200000) return Number.NaN;
    return hi * 0x1_0000_0000 + lo;
  }
}

interface _Segment {
  type: number;
  offset: number;
  vaddr: number;
  filesz: number;
}

function _fileSource(path: string): _Source & { close(): void } {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new FfiError(ErrorCode.NOT_FOUND, `${path}: no such file`, { cause: e });
    }
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new FfiError(
        ErrorCode.PERMISSION_DENIED,
        `${path}: cannot be read (${(e as Error).message}); run with --allow-read`,
        { cause: e },
      );
    }
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${path}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  try {
    const info = file.statSync();
    if (!info.isFile) {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, `${path}: not a regular file`);
    }
    return {
      size: info.size,
      read(offset, length) {
        const out = new Uint8Array(length);
        file.seekSync(offset, Deno.SeekMode.Start);
        let got = 0;
        while (got < length) {
          const n = file.readSync(out.subarray(got));
          if (n === null || n === 0) {
            throw new FfiError(
              ErrorCode.INVALID_ARGUMENT,
              `${path}: file shrank while being read (offset ${offset + got})`,
            );
          }
          got += n;
        }
        return out;
      },
      close() {
        file.close();
      },
    };
  } catch (e) {
    file.close();
    throw e;
  }
}

/**
 * Lists the exported, defined functions of an ELF64 little-endian shared
 * object file: `STT_FUNC`/`STT_GNU_IFUNC` symbols of the dynamic symbol table
 * with global, weak or unique binding, default or protected visibility and a
 * section (not undefined). These are the names `dlsym` can find.
 *
 * Throws {@link FfiError}: NOT_FOUND when the file does not exist,
 * PERMISSION_DENIED without read permission, INVALID_ARGUMENT when it is not
 * an ELF64 little-endian file or is truncated or corrupt (the message names
 * the path and the fault).
 *
 * @param path the shared object, e.g. `./libhandlers.so`
 * @returns the machine, the file type and the symbols
 *
 * @example
 * ```ts ignore
 * import { readElfSymbols } from "./elf.ts";
 * const { machineName, symbols } = readElfSymbols("./libhandlers.so");
 * console.log(machineName, symbols.map((s) => s.name));
 * ```
 */
export function readElfSymbols(path: string): ElfSymbolTable {
  const source = _fileSource(path);
  try {
    return _parse(new _Reader(source, path));
  } finally {
    source.close();
  }
}

/**
 * Like {@link readElfSymbols}, for the bytes of an ELF file already in memory.
 *
 * @param bytes the whole file
 * @param label names the file in error messages (default `"<bytes>"`)
 *
 * @example
 * ```ts
 * import { ErrorCode } from "../abi/enums.ts";
 * import type { FfiError } from "../errors.ts";
 * import { parseElfSymbols } from "./elf.ts";
 * try {
 *   parseElfSymbols(new TextEncoder().encode("#!/bin/sh\n"), "script.sh");
 * } catch (e) {
 *   console.log((e as FfiError).code === ErrorCode.INVALID_ARGUMENT, (e as Error).message);
 *   // true "script.sh: not an ELF file (no \x7fELF magic)"
 * }
 * ```
 */
export function parseElfSymbols(bytes: Uint8Array, label?: string): ElfSymbolTable {
  const source: _Source = {
    size: bytes.byteLength,
    read: (offset, length) => bytes.subarray(offset, offset + length),
  };
  return _parse(new _Reader(source, label ?? "<bytes>"));
}

function _parse(r: _Reader): ElfSymbolTable {
  if (r.size < 16) {
    if (r.size >= 4 && _isMagic(r.bytes(0, 4, "magic"))) {
      r.fail(`truncated ELF file (${r.size} bytes)`);
    }
    r.fail("not an ELF file (no \\x7fELF magic)");
  }
  const ident = r.bytes(0, 16, "ELF identification");
  if (!_isMagic(ident)) r.fail("not an ELF file (no \\x7fELF magic)");
  if (ident[4] === 1) r.fail("32-bit ELF files are not supported (only ELF64)");
  if (ident[4] !== 2) r.fail(`corrupt ELF file: unknown ELF class ${ident[4]}`);
  if (ident[5] === 2) r.fail("big-endian ELF files are not supported (only little-endian)");
  if (ident[5] !== 1) r.fail(`corrupt ELF file: unknown data encoding ${ident[5]}`);
  if (r.size < 64) r.fail(`truncated ELF file: ${r.size} bytes, the ELF64 header needs 64`);
  const h = r.view(0, 64, "the ELF header");
  const fileType = h.u16(16);
  const machine = h.u16(18);
  const phoff = h.u64(32, "e_phoff");
  const shoff = h.u64(40, "e_shoff");
  const phentsize = h.u16(54);
  const phnum = h.u16(56);
  const shentsize = h.u16(58);
  let shnum = h.u16(60);
  const machineName = EM_NAMES[machine] ?? `machine ${machine}`;

  let symbols: ElfSymbol[] | undefined;
  let source: "sections" | "dynamic" = "sections";
  if (shoff !== 0) {
    if (shentsize !== 64) r.fail(`corrupt ELF file: section header size ${shentsize}, not 64`);
    if (shnum === 0) {
      // More than 0xff00 sections: the count is in section 0's sh_size.
      shnum = r.view(shoff, 64, "section header 0").u64(32, "sh_size");
    }
    if (shnum > 0x100000) r.fail(`corrupt ELF file: ${shnum} section headers`);
    const sh = r.view(shoff, shnum * 64, `the section header table (${shnum} entries)`);
    for (let i = 0; i < shnum; i++) {
      const base = i * 64;
      if (sh.u32(base + 4) !== SHT_DYNSYM) continue;
      const offset = sh.u64(base + 24, "sh_offset");
      const size = sh.u64(base + 32, "sh_size");
      const link = sh.u32(base + 40);
      const entsize = sh.u64(base + 56, "sh_entsize");
      if (entsize !== SYM_SIZE) {
        r.fail(`corrupt ELF file: .dynsym entry size ${entsize}, not ${SYM_SIZE}`);
      }
      if (size % SYM_SIZE !== 0) {
        r.fail(`corrupt ELF file: .dynsym size ${size} is not a multiple of ${SYM_SIZE}`);
      }
      if (link === 0 || link >= shnum) {
        r.fail(`corrupt ELF file: .dynsym links to section ${link} of ${shnum}`);
      }
      const strOffset = sh.u64(link * 64 + 24, "sh_offset");
      const strSize = sh.u64(link * 64 + 32, "sh_size");
      const table = r.view(offset, size, ".dynsym");
      const strtab = r.bytes(strOffset, strSize, ".dynstr");
      symbols = _symbols(r, table, size / SYM_SIZE, strtab);
      break;
    }
  }
  if (symbols === undefined) {
    source = "dynamic";
    symbols = _fromDynamic(r, phoff, phentsize, phnum);
  }
  return { machine, machineName, fileType, source, symbols };
}

function _isMagic(b: Uint8Array): boolean {
  return b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46;
}

function _symbols(r: _Reader, table: _View, count: number, strtab: Uint8Array): ElfSymbol[] {
  if (count > MAX_SYMBOLS) r.fail(`corrupt ELF file: ${count} dynamic symbols`);
  const out: ElfSymbol[] = [];
  const decoder = new TextDecoder();
  for (let i = 1; i < count; i++) {
    const base = i * SYM_SIZE;
    const info = table.u8(base + 4);
    const type = info & 0xf;
    const bind = info >> 4;
    const vis = table.u8(base + 5) & 3;
    const shndx = table.u16(base + 6);
    if (type !== 2 && type !== 10) continue; // STT_FUNC, STT_GNU_IFUNC
    if (bind !== 1 && bind !== 2 && bind !== 10) continue; // GLOBAL, WEAK, GNU_UNIQUE
    if (vis !== 0 && vis !== 3) continue; // DEFAULT, PROTECTED
    if (shndx === 0) continue; // SHN_UNDEF
    const nameOffset = table.u32(base);
    if (nameOffset >= strtab.length) {
      r.fail(
        `corrupt ELF file: symbol ${i} name offset ${nameOffset} is outside the string table ` +
          `(${strtab.length} bytes)`,
      );
    }
    const end = strtab.indexOf(0, nameOffset);
    if (end < 0) r.fail(`corrupt ELF file: symbol ${i} name is not NUL-terminated`);
    out.push({
      name: decoder.decode(strtab.subarray(nameOffset, end)),
      value: table.u64(base + 8, "st_value"),
      size: table.u64(base + 16, "st_size"),
      type: type === 2 ? "func" : "ifunc",
      binding: bind === 1 ? "global" : bind === 2 ? "weak" : "unique",
      visibility: vis === 0 ? "default" : "protected",
    });
  }
  return out;
}

function _fromDynamic(r: _Reader, phoff: number, phentsize: number, phnum: number): ElfSymbol[] {
  if (phoff === 0 || phnum === 0) {
    r.fail("no dynamic symbols: neither a .dynsym section nor a dynamic segment");
  }
  if (phentsize !== 56) r.fail(`corrupt ELF file: program header size ${phentsize}, not 56`);
  const ph = r.view(phoff, phnum * 56, `the program header table (${phnum} entries)`);
  const loads: _Segment[] = [];
  let dynamic: _Segment | undefined;
  for (let i = 0; i < phnum; i++) {
    const b = i * 56;
    const seg: _Segment = {
      type: ph.u32(b),
      offset: ph.u64(b + 8, "p_offset"),
      vaddr: ph.u64(b + 16, "p_vaddr"),
      filesz: ph.u64(b + 32, "p_filesz"),
    };
    if (seg.type === PT_LOAD) loads.push(seg);
    else if (seg.type === PT_DYNAMIC && dynamic === undefined) dynamic = seg;
  }
  if (dynamic === undefined) {
    r.fail("no dynamic symbols: neither a .dynsym section nor a dynamic segment");
  }
  const dyn = r.view(dynamic.offset, dynamic.filesz - (dynamic.filesz % 16), "the dynamic segment");
  const tags = new Map<number, number>();
  for (let b = 0; b + 16 <= dyn.length; b += 16) {
    const tag = dyn.i64tag(b);
    if (tag === DT_NULL) break;
    if (Number.isNaN(tag) || tags.has(tag)) continue;
    if (
      tag === DT_HASH || tag === DT_STRTAB || tag === DT_SYMTAB || tag === DT_STRSZ ||
      tag === DT_SYMENT || tag === DT_GNU_HASH
    ) {
      tags.set(tag, dyn.u64(b + 8, "d_val"));
    }
  }
  const toOffset = (addr: number, what: string): number => {
    for (const s of loads) {
      if (addr >= s.vaddr && addr < s.vaddr + s.filesz) return s.offset + (addr - s.vaddr);
    }
    return r.fail(`corrupt ELF file: ${what} address 0x${addr.toString(16)} is in no segment`);
  };
  const symtab = tags.get(DT_SYMTAB);
  const strtabAddr = tags.get(DT_STRTAB);
  const strsz = tags.get(DT_STRSZ);
  if (symtab === undefined || strtabAddr === undefined || strsz === undefined) {
    r.fail("corrupt ELF file: the dynamic segment lacks DT_SYMTAB, DT_STRTAB or DT_STRSZ");
  }
  const syment = tags.get(DT_SYMENT) ?? SYM_SIZE;
  if (syment !== SYM_SIZE) r.fail(`corrupt ELF file: DT_SYMENT ${syment}, not ${SYM_SIZE}`);
  const symOffset = toOffset(symtab, "DT_SYMTAB");
  const strtab = r.bytes(toOffset(strtabAddr, "DT_STRTAB"), strsz, "the dynamic string table");
  let count: number;
  const hash = tags.get(DT_HASH);
  const gnuHash = tags.get(DT_GNU_HASH);
  if (hash !== undefined) {
    count = r.view(toOffset(hash, "DT_HASH"), 8, "DT_HASH").u32(4); // nchain
  } else if (gnuHash !== undefined) {
    count = _gnuHashCount(r, toOffset(gnuHash, "DT_GNU_HASH"));
  } else {
    return r.fail("corrupt ELF file: no DT_HASH or DT_GNU_HASH to count the dynamic symbols");
  }
  if (count > MAX_SYMBOLS) r.fail(`corrupt ELF file: ${count} dynamic symbols`);
  const table = r.view(symOffset, count * SYM_SIZE, `the dynamic symbol table (${count} entries)`);
  return _symbols(r, table, count, strtab);
}

/** The symbol count from a GNU hash table: one past the last chain's end. */
function _gnuHashCount(r: _Reader, offset: number): number {
  const head = r.view(offset, 16, "DT_GNU_HASH");
  const nbuckets = head.u32(0);
  const symoffset = head.u32(4);
  const bloomSize = head.u32(8);
  const bucketsAt = offset + 16 + bloomSize * 8;
  const buckets = r.view(bucketsAt, nbuckets * 4, "the DT_GNU_HASH buckets");
  let last = 0;
  for (let i = 0; i < nbuckets; i++) last = Math.max(last, buckets.u32(i * 4));
  if (last === 0) return symoffset;
  if (last < symoffset) r.fail("corrupt ELF file: DT_GNU_HASH bucket below its symbol offset");
  const chainAt = bucketsAt + nbuckets * 4;
  // Each step reads 4 more bytes of the file, so the walk ends within the file.
  for (let i = last;; i++) {
    const entry = r.view(chainAt + (i - symoffset) * 4, 4, "the DT_GNU_HASH chains").u32(0);
    if (entry & 1) return i + 1;
  }
}
