// firebase-functions-test, initialized before the functions are imported (see helpers/functions.ts).
// Wrapped tests use their own project id so the real rollup trigger running in the functions emulator
// (project demo-counter) never sees their writes.
import functionsTest from "firebase-functions-test";

export const TEST_PROJECT = "demo-counter-test";
export const fft = functionsTest({ projectId: TEST_PROJECT });
