// The one convention every command of the CLI (init, preflight, check-rules, reconcile, firestore-jar) and
// every script of this repository (seed, make-admin, emulators, bench) follows: read argv against a
// declared list of options, validate every value (naming the allowed ones), answer --help with exit 0,
// and turn a user's mistake into one line on stderr with a pointer to --help and exit 2, never a stack
// trace or the whole help. An unexpected error (a bug, not a mistake) is printed with its stack and exits 1.

/** Exit codes the scripts share (each script's --help lists the ones it uses). */
export const EXIT = {
  ok: 0,
  /** An unexpected error, or what the script reports as a failure (reconcile: drift remains). */
  failed: 1,
  usage: 2,
  /** The local emulators do not answer: start them first (npm start). */
  emulatorsDown: 3,
} as const;

/** A user's mistake in the arguments (found while parsing, or when the script first uses one): exit 2. */
export class UsageError extends Error {}

/** An expected failure that is not about the arguments: one line on stderr, then this exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** What a script accepts: options that take no value, options that take one (with what it must be). */
export interface ArgSpec {
  /** Options without a value, e.g. "--fix". */
  flags?: string[];
  /** Options with one value each, mapped to a description of the allowed values ("a demo-* project id"). */
  values?: Record<string, string>;
  /** Positional arguments: how many (at least, at most) and what they are, for the messages. */
  positionals?: { min: number; max: number; name: string };
  /** Arguments after a lone "--" are passed on untouched (emulators.ts exec). */
  passThrough?: boolean;
}

export interface ArgvRead {
  flags: Set<string>;
  /** Every value given for each value option, in order (an option may be repeated). */
  values: Map<string, string[]>;
  positionals: string[];
  /** What came after "--" (with passThrough). */
  rest: string[];
}

/** Reads argv against the spec: "help" for --help / -h anywhere, else what was given; UsageError otherwise. */
export function readArgv(argv: string[], spec: ArgSpec): ArgvRead | "help" {
  const cut = spec.passThrough ? argv.indexOf("--") : -1;
  const own = cut === -1 ? argv : argv.slice(0, cut);
  if (own.includes("--help") || own.includes("-h")) return "help";
  const values = spec.values ?? {};
  const flags = spec.flags ?? [];
  const read: ArgvRead = { flags: new Set(), values: new Map(), positionals: [], rest: cut === -1 ? [] : argv.slice(cut + 1) };
  for (let i = 0; i < own.length; i++) {
    const arg = own[i]!;
    if (flags.includes(arg)) {
      read.flags.add(arg);
    } else if (arg in values) {
      const value = own[i + 1];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`${arg} needs a value: ${values[arg]}`);
      read.values.set(arg, [...(read.values.get(arg) ?? []), value]);
      i++;
    } else if (arg.startsWith("-") && arg !== "-") {
      // A short list fits on the one line; a long one (the benchmark's) is what --help is for.
      const known = [...flags, ...Object.keys(values)];
      const listed = known.length === 0 ? " (this script takes no options)" : known.length <= 10 ? ` (options: ${known.join(", ")})` : "";
      throw new UsageError(`unknown option ${arg}${listed}`);
    } else {
      read.positionals.push(arg);
    }
  }
  const positionals = spec.positionals ?? { min: 0, max: 0, name: "" };
  if (read.positionals.length > positionals.max) {
    throw new UsageError(
      positionals.max === 0 ? `unexpected argument ${read.positionals[0]!}` : `unexpected argument ${read.positionals[positionals.max]!}: give ${positionals.name}`,
    );
  }
  if (read.positionals.length < positionals.min) throw new UsageError(`missing argument: ${positionals.name}`);
  return read;
}

/** The last value given for a value option, if any. */
export function lastValue(read: ArgvRead, option: string): string | undefined {
  return read.values.get(option)?.at(-1);
}

/** A value option that must be a whole number within [min, max]; `fallback` when it is not given. */
export function integerOption(read: ArgvRead, option: string, range: { min: number; max: number }, fallback: number): number {
  const raw = lastValue(read, option);
  return raw === undefined ? fallback : integerValue(option, raw, range);
}

/** `raw` as a whole number within [min, max], or a UsageError naming the option and the range. */
export function integerValue(option: string, raw: string, { min, max }: { min: number; max: number }): number {
  const n = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max >= Number.MAX_SAFE_INTEGER ? `from ${min} up` : `from ${min} to ${max}`;
    throw new UsageError(`${option} takes a whole number ${range}, not ${JSON.stringify(raw)}`);
  }
  return n;
}

/** A project id for the emulators only: it must start with demo- (such a project never reaches real services). */
export function demoProject(option: string, raw: string): string {
  if (!raw.startsWith("demo-")) throw new UsageError(`${option} takes a demo-* project id (the emulators' projects), not ${JSON.stringify(raw)}`);
  return raw;
}

/** A script's name in its messages, and the command that prints its help (default: npm run <name> -- --help). */
export type ScriptName = string | { name: string; helpCommand: string };

/** One line for a user's mistake: the script, the message, and where the options are explained. */
export function usageLine(script: ScriptName, message: string): string {
  const { name, helpCommand } = typeof script === "string" ? { name: script, helpCommand: `npm run ${script} -- --help` } : script;
  return `${name}: ${message} (see ${helpCommand})`;
}

/** Runs a script's main function and exits the process with its code, following the convention above. */
export function exitWith(script: ScriptName, run: () => Promise<number>): void {
  run().then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(usageLine(script, error.message));
        process.exit(EXIT.usage);
      }
      if (error instanceof CliError) {
        console.error(`${typeof script === "string" ? script : script.name}: ${error.message}`);
        process.exit(error.exitCode);
      }
      console.error(error);
      process.exit(EXIT.failed);
    },
  );
}

/**
 * Parses argv (`parse` returns "help" or the options, and throws UsageError on a mistake), prints HELP for
 * --help (exit 0), else runs `main` with the options and exits with its code.
 */
export function runCli<T>(script: ScriptName, help: string, parse: (argv: string[]) => T | "help", main: (args: T) => Promise<number>): void {
  exitWith(script, async () => {
    const args = parse(process.argv.slice(2));
    if (args === "help") {
      console.log(help);
      return EXIT.ok;
    }
    return main(args);
  });
}

/** A command of the CLI: its help, its arguments, and what it does with them (its exit code). */
export interface Command<T> {
  name: string;
  help: string;
  /** Returns "help" for --help, the arguments otherwise; throws UsageError on a mistake. */
  parse(argv: string[]): T | "help";
  run(args: T): Promise<number>;
}

/**
 * How a command names itself in a mistake's line: `firestore-exact-counter <name> --help`, or the npm
 * script that ran it in this repository (npm run <name>), whose arguments follow a `--`.
 */
export function commandName(name: string, env: NodeJS.ProcessEnv = process.env): ScriptName {
  const viaRepositoryScript = env.npm_lifecycle_event === name && env.npm_package_name === "firestore-exact-counter";
  return { name, helpCommand: viaRepositoryScript ? `npm run ${name} -- --help` : `firestore-exact-counter ${name} --help` };
}

/** Runs a command with `argv` (the arguments after its name) and exits the process with its code. */
export function runCommand<T>(command: Command<T>, argv: string[]): void {
  exitWith(commandName(command.name), async () => {
    const args = command.parse(argv);
    if (args === "help") {
      console.log(command.help);
      return EXIT.ok;
    }
    return command.run(args);
  });
}
