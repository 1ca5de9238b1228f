// The like button and its number: what the page renders, and nothing about Firebase. `render` takes the
// count (null: no counter yet), how much of it are this user's taps the server total does not hold yet,
// and the user's liked state (null: a plain counter, which has none; a unique counter, where a like
// counts once per user, passes true/false and the button shows it).
// Every rendered count is also appended to `window.__values`, so a test can check the sequence a user saw.

declare global {
  interface Window {
    /** Every count rendered, in order (null renders as "–"). */
    __values: (number | null)[];
  }
}

export interface LikeState {
  count: number | null;
  /** Taps shown but not in the server's total yet (0: the count is exactly the server's total). */
  pending: number;
  liked: boolean | null;
}

export interface LikeButton {
  render(state: LikeState): void;
  /** A line under the button: what happened, or what to do. */
  say(message: string, kind?: "info" | "error"): void;
}

/** Wires the button in `root` to `onTap` (taps are never blocked: each one is its own action). */
export function mountLikeButton(root: Document, onTap: () => void): LikeButton {
  const button = element(root, "like", HTMLButtonElement);
  const count = element(root, "count", HTMLElement);
  const pending = element(root, "pending", HTMLElement);
  const liked = element(root, "liked", HTMLElement);
  const status = element(root, "status", HTMLElement);
  window.__values = [];
  button.addEventListener("click", onTap);
  return {
    render(state) {
      window.__values.push(state.count);
      count.textContent = state.count === null ? "–" : String(state.count);
      button.disabled = state.count === null;
      pending.textContent =
        state.pending === 0
          ? ""
          : state.liked === null
            ? `${state.pending} on the way to the server`
            : `your ${state.pending > 0 ? "like" : "unlike"} is on the way to the server`;
      liked.hidden = state.liked !== true;
      button.setAttribute("aria-pressed", String(state.liked === true));
    },
    say(message, kind = "info") {
      status.textContent = message;
      status.className = kind;
    },
  };
}

function element<T extends HTMLElement>(root: Document, id: string, type: new () => T): T {
  const found = root.getElementById(id);
  if (!(found instanceof type)) throw new Error(`index.html has no #${id}`);
  return found;
}
