// The shape every operator script shares: parse argv, answer --help (exit 0) or a usage error (exit 2),
// run, and exit with the run's code; an unexpected error is printed and exits 1.

/** Exit codes the scripts share (each script's --help lists the ones it uses). */
export const EXIT = {
  ok: 0,
  /** An unexpected error, or what the script reports as a failure (reconcile: drift remains). */
  failed: 1,
  usage: 2,
  /** The local emulators do not answer: start them first (npm start). */
  emulatorsDown: 3,
} as const;

/** What an argument parser returns: the options, a request for help, or what was wrong. */
export type Parsed<T> = T | { help: true } | { error: string };

/** Runs a script's main function and exits the process with its code (1 on an unexpected error). */
export function exitWith(run: () => Promise<number>): void {
  run().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

/** Parses argv, prints HELP for --help (0) or an error with HELP (2), else runs `main` with the options. */
export function runCli<T extends object>(
  help: string,
  parse: (argv: string[]) => Parsed<T>,
  main: (args: T) => Promise<number>,
): void {
  exitWith(async () => {
    const args = parse(process.argv.slice(2));
    if ("help" in args) {
      console.log(help);
      return 0;
    }
    if ("error" in args) {
      console.error(`${args.error}\n\n${help}`);
      return 2;
    }
    return main(args);
  });
}
