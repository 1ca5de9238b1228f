// Which document counters are kept by recount, and the query each one's count() is (documents/recount.ts):
// count rules whose counter's documents lie in one collection; sums and documents over several collections
// are kept by records. Pure: no emulator.
import { isRecountRule, recountQueryOf } from "../src/documents/recount";
import { parseDocumentCounterRules } from "../src/model/document-rules";

const rule = (value: string) => parseDocumentCounterRules("DOCUMENT_COUNTERS", value)[0]!;

describe("recountQueryOf", () => {
  it("counts a post's comments in that post's comments collection", () => {
    const comments = rule("posts/{post}/comments/{c}=post-{post}-comments");
    expect(isRecountRule(comments)).toBe(true);
    expect(recountQueryOf(comments, "post-p1-comments")).toEqual({ collection: "posts/p1/comments", filters: [] });
  });

  it("makes each condition an equality filter on its field path, with its value's own type", () => {
    const published = rule("posts/{post}/comments/{c}[status==published][meta.visible==true][rank==3][note==null][code=='7']=post-{post}-published");
    expect(recountQueryOf(published, "post-p9-published")).toEqual({
      collection: "posts/p9/comments",
      filters: [
        { field: "status", value: "published" },
        { field: "meta.visible", value: true },
        { field: "rank", value: 3 },
        { field: "note", value: null },
        { field: "code", value: "7" },
      ],
    });
  });

  it("counts each author's documents in one collection by the field that names the counter ({=FIELD}), and keeps such a rule over several collections by records", () => {
    const byAuthor = rule("posts/{p}[status==published]=author-{=author}-published");
    expect(isRecountRule(byAuthor)).toBe(true);
    expect(recountQueryOf(byAuthor, "author-ann-published")).toEqual({ collection: "posts", filters: [{ field: "status", value: "published" }, { field: "author", value: "ann" }] });
    const replies = rule("forums/{f}/replies/{r}=user-{=by.uid}-replies");
    expect(isRecountRule(replies)).toBe(false);
    expect(recountQueryOf(replies, "user-u1-replies")).toBeNull();
  });

  it("counts a top-level collection in one counter", () => {
    expect(recountQueryOf(rule("users/{uid}=users-count"), "users-count")).toEqual({ collection: "users", filters: [] });
  });

  it("keeps sums by records: sum() adds doubles and skips what is no number, the counter adds safe integers only", () => {
    const stars = rule("products/{p}/ratings/{r}:stars=product-{p}-stars");
    expect(isRecountRule(stars)).toBe(false);
    expect(recountQueryOf(stars, "product-x-stars")).toBeNull();
  });

  it("keeps by records a counter whose documents lie under several parents (a wildcard that is not the counter's)", () => {
    const all = rule("orgs/{org}/posts/{post}/comments/{c}=post-{post}-comments");
    expect(isRecountRule(all)).toBe(false);
    expect(recountQueryOf(all, "post-p1-comments")).toBeNull();
    const literal = rule("orgs/acme/posts/{post}/comments/{c}=post-{post}-comments");
    expect(isRecountRule(literal)).toBe(true);
    expect(recountQueryOf(literal, "post-p1-comments")).toEqual({ collection: "orgs/acme/posts/p1/comments", filters: [] });
  });
});
