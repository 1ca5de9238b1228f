// What the feed is told at run time (GET /config.json from the server that serves it): the project, the
// emulators to connect to and the posts to show. No Firebase import, so the server side
// (scripts/lib/example-react.ts) shares the type.
export interface FeedConfig {
  projectId: string;
  /** The functions' region (the REGION param). */
  region: string;
  /** host:port of each emulator. */
  emulators: { auth: string; firestore: string; functions: string };
  /** The posts of the feed, unless the URL names others (?posts=<id>,<id>). */
  posts: Post[];
}

export interface Post {
  /**
   * Its counters are post-<id>-likes (unique), post-<id>-views (windowed) and post-<id>-comments, the
   * document counter of posts/<id>/comments (DOCUMENT_COUNTERS in functions/.env).
   */
  id: string;
  title: string;
}

export const likesOf = (post: Post) => `post-${post.id}-likes`;
export const viewsOf = (post: Post) => `post-${post.id}-views`;
export const commentsOf = (post: Post) => `post-${post.id}-comments`;
