// `firebase init functions` for a TypeScript codebase, as the repository's pinned firebase-tools (14.27.0)
// runs it: its own setup code (lib/init/features/functions) writes firebase.json's entry and every file of
// the codebase from its own templates, answering its questions as a user who picks TypeScript and takes
// every default (ESLint: yes), except the last one: the dependencies are installed by the test, from
// npm's cache, instead of by firebase-tools' own `npm install`. And `firebase init firestore` the same way
// (lib/init/features/firestore, every default): its rules and its index file, comments included, from its
// templates, as for a project that has no database yet (nothing is downloaded).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";

interface Question {
  message: string;
  default?: unknown;
}

type Prompt = Record<"select" | "confirm" | "input", (question: Question | string) => Promise<unknown>>;

/** The answers that differ from firebase-tools' defaults. */
const ANSWERS: Record<string, unknown> = {
  "What language would you like to use to write Cloud Functions?": "typescript",
  "Do you want to install dependencies with npm now?": false,
};

const requireTools = createRequire(join(REPO_ROOT, "node_modules", "firebase-tools", "package.json"));

/** A firebase.json entry of a functions codebase as firebase init writes it. */
export interface InitCodebase {
  source: string;
  codebase: string;
  predeploy?: string[];
  ignore?: string[];
  [key: string]: unknown;
}

/**
 * Writes what `firebase init functions` (TypeScript, the default answers) writes into the empty project
 * folder `appDir`: firebase.json (its `functions` list) and the codebase folder functions/. Returns
 * firebase.json's functions entry.
 */
export async function firebaseInitFunctions(appDir: string): Promise<InitCodebase> {
  const { doSetup } = requireTools("./lib/init/features/functions") as { doSetup: (setup: unknown, config: unknown, options: unknown) => Promise<void> };
  const setup: { config: { functions?: InitCodebase[] }; rcfile: { projects: Record<string, string> } } = { config: {}, rcfile: { projects: {} } };
  const config = {
    src: {},
    projectDir: appDir,
    askWriteProjectFile(path: string, content: string): Promise<void> {
      mkdirSync(dirname(join(appDir, path)), { recursive: true });
      writeFileSync(join(appDir, path), content);
      return Promise.resolve();
    },
  };
  await withDefaultAnswers(() => doSetup(setup, config, {}));
  const functions = setup.config.functions!;
  writeFileSync(join(appDir, "firebase.json"), `${JSON.stringify({ functions }, null, 2)}\n`);
  return functions[0]!;
}

/** firebase.json's firestore section as `firebase init firestore` writes it. */
export interface InitFirestore {
  database: string;
  location: string;
  rules: string;
  indexes: string;
}

/**
 * Writes what `firebase init firestore` (the default answers, no project selected) writes into `appDir`:
 * firestore.rules and firestore.indexes.json from firebase-tools' templates, by its own Config, and the
 * firestore section into firebase.json (added to what is there). Returns that section.
 */
export async function firebaseInitFirestore(appDir: string): Promise<InitFirestore> {
  const firestore = requireTools("./lib/init/features/firestore") as Record<"askQuestions" | "actuate", (setup: unknown, config: unknown) => Promise<void>>;
  const { Config } = requireTools("./lib/config") as { Config: new (src: unknown, options: { projectDir: string; cwd: string }) => unknown };
  const config = new Config({}, { projectDir: appDir, cwd: appDir });
  const setup: { config: { firestore?: InitFirestore }; rcfile: { projects: Record<string, string> } } = { config: {}, rcfile: { projects: {} } };
  await withDefaultAnswers(async () => {
    await firestore.askQuestions(setup, config);
    await firestore.actuate(setup, config);
  });
  const path = join(appDir, "firebase.json");
  const json = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>) : {};
  writeFileSync(path, `${JSON.stringify({ ...json, firestore: setup.config.firestore }, null, 2)}\n`);
  return setup.config.firestore!;
}

/** Runs firebase-tools' setup code with its prompts answered: ANSWERS, else each question's default. */
async function withDefaultAnswers(setupCode: () => Promise<void>): Promise<void> {
  const prompt = requireTools("./lib/prompt") as Prompt;
  const saved = { select: prompt.select, confirm: prompt.confirm, input: prompt.input };
  const answer = (question: Question | string): Promise<unknown> => {
    const { message, default: fallback } = typeof question === "string" ? { message: question, default: undefined } : question;
    const given = message in ANSWERS ? ANSWERS[message] : fallback;
    if (given === undefined) throw new Error(`firebase init asked "${message}", which has no default and no answer here`);
    return Promise.resolve(given);
  };
  prompt.select = answer;
  prompt.confirm = answer;
  prompt.input = answer;
  try {
    await setupCode();
  } finally {
    Object.assign(prompt, saved);
  }
}
