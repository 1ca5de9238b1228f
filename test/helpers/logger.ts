// firebase-functions' logger as the module object itself, for tests that watch or silence what the
// functions log. firebase-functions 7's CommonJS build does not mark its modules as ES modules, so
// `import * as logger` yields a copy whose functions are read-only getters (jest.spyOn cannot replace
// them); the functions' own `import * as logger` copies read through to this object, so a spy set on it
// sees every call they make.
import type * as Logger from "firebase-functions/logger";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the module object itself, see above
export const logger = require("firebase-functions/logger") as typeof Logger;

/** One line the functions logged: its level and its arguments as JSON. */
export interface LoggedLine {
  level: string;
  line: string;
}

/**
 * What the functions log during each test of the calling file, captured instead of printed: the returned
 * list is emptied before each test, and the logger is restored after it.
 */
export function captureLogs(): LoggedLine[] {
  const logs: LoggedLine[] = [];
  beforeEach(() => {
    logs.length = 0;
    for (const level of ["debug", "info", "warn", "error"] as const) {
      jest.spyOn(logger, level).mockImplementation((...args: unknown[]) => {
        logs.push({ level, line: JSON.stringify(args) });
      });
    }
  });
  afterEach(() => jest.restoreAllMocks());
  return logs;
}
