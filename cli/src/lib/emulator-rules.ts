// Rules into a Firestore emulator, over its REST endpoint: the emulator keeps rules per project, and its
// answer says whether they compile (a 400 with the message) and with which issues. The preflight compiles
// an app's rules this way; `npm start` loads the React example's (scripts/lib/example-react.ts).

/** PUTs one rules file as `projectId`'s rules; the emulator's answer, for the caller to read. */
export function putRules(firestoreHost: string, projectId: string, file: { name: string; content: string }): Promise<Response> {
  return fetch(`http://${firestoreHost}/emulator/v1/projects/${projectId}:securityRules`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ rules: { files: [file] } }),
  });
}
