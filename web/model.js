// The movie list as the page knows it (issue 33): every movie in list order, and the matches of
// the filter box. No DOM here: the page (app.js) renders the few rows in and near the view from it.
//
// List order is the daemon's (protocol.md, "List order"): the order movies were added in, until
// someone moves one (issue 48: `move`, and the `moved` event that says the movie now comes right
// after `after`, or first). Each movie the page knows has a rank, a number that grows in list
// order: its index in the `list` reply, one more than any before for each movie added since, and
// for a movie moved or restored to a place, a number between its new neighbours' ranks (halfway).
// Both arrays are sorted by rank, so a movie's place in either is a binary search. A movie removed
// while the page is open keeps its rank; a `restored` event says where the movie goes back (its
// `after`), and the page puts it there. An older daemon's `restored` event says nothing of where:
// then a movie the page saw go goes back at its rank, and one removed before the page listed,
// which has no rank here, at the end, where an added movie goes, until the page lists again (a
// reload or a new state). Halving the room between two ranks runs out after about fifty moves into
// the same gap: the ranks are then numbered afresh (0, 1, 2…), and the removed movies' ranks are
// forgotten (an older daemon's restore of one of them goes to the end).

const RANK = Symbol("rank");
const FOLD = Symbol("fold");

/** What the filter compares: lowercase, and without combining marks outside ASCII ("Amélie"
 * matches "amel"). ASCII titles, most of them, skip the normalisation. */
export function fold(text) {
  const lower = text.toLowerCase();
  // eslint-disable-next-line no-control-regex
  return /[^\x00-\x7f]/.test(lower) ? lower.normalize("NFD").replace(/\p{M}/gu, "") : lower;
}

function folded(movie) {
  let f = movie[FOLD];
  if (f === undefined) f = movie[FOLD] = fold(movie.title);
  return f;
}

/** The index of the first movie of `movies` (sorted by rank) whose rank is `rank` or more. */
function lowerBound(movies, rank) {
  let lo = 0, hi = movies.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (movies[mid][RANK] < rank) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class MovieList {
  constructor() {
    this.all = [];          // every movie, in list order
    this.matches = null;    // the filter's matches (a subsequence of `all`), or null: no filter
    this.query = "";        // the folded filter text ("" when none)
    this.nextRank = 0;
    this.removedRanks = new Map();  // id -> rank, of movies removed while the page was open
  }

  /** The movies the list shows: the matches while filtering, else all. */
  get shown() { return this.matches ?? this.all; }

  /** A `list` reply's movies, used as they are (parsed once; one pass gives them their ranks). */
  reset(movies) {
    for (let i = 0; i < movies.length; i++) movies[i][RANK] = i;
    this.all = movies;
    this.nextRank = movies.length;
    this.removedRanks.clear();
    if (this.query !== "") this.matches = this.search(this.query, this.all);
  }

  /** The movie with this id, or undefined (a pass over the list: for events, not per frame). */
  get(id) {
    const i = this.indexOf(id);
    return i < 0 ? undefined : this.all[i];
  }

  indexOf(id) {
    const all = this.all;
    for (let i = 0; i < all.length; i++) if (all[i].id === id) return i;
    return -1;
  }

  /** Where `movie` (one this list holds, or held under its id) is in `shown`, or -1. */
  shownIndexOf(movie) {
    const rank = movie[RANK];
    if (rank === undefined) return -1;
    const shown = this.shown;
    const i = lowerBound(shown, rank);
    return i < shown.length && shown[i][RANK] === rank ? i : -1;
  }

  /** An added movie: at the end. */
  add(movie) {
    movie[RANK] = this.nextRank++;
    this.all.push(movie);
    if (this.matches !== null && folded(movie).includes(this.query)) this.matches.push(movie);
  }

  /** A changed movie (flags; a title never changes): it takes the place of the one with its id.
   * Returns the old one, or undefined when the list does not hold it. */
  update(movie) {
    const i = this.indexOf(movie.id);
    if (i < 0) return undefined;
    const old = this.all[i];
    movie[RANK] = old[RANK];
    if (old[FOLD] !== undefined && old.title === movie.title) movie[FOLD] = old[FOLD];
    this.all[i] = movie;
    if (this.matches !== null) {
      const j = lowerBound(this.matches, movie[RANK]);
      if (j < this.matches.length && this.matches[j] === old) this.matches[j] = movie;
    }
    return old;
  }

  /** Takes the movie out; its rank is kept for a restore. Returns its index in `shown` before
   * (-1 when it was not shown), or undefined when the list does not hold it. */
  remove(id) {
    const i = this.indexOf(id);
    if (i < 0) return undefined;
    const movie = this.all[i];
    const shownIndex = this.shownIndexOf(movie);
    this.all.splice(i, 1);
    if (this.matches !== null && shownIndex >= 0) this.matches.splice(shownIndex, 1);
    this.removedRanks.set(id, movie[RANK]);
    return shownIndex;
  }

  /** A restored movie, back at its rank when the page saw it go (else at the end). Returns its
   * index in `shown` (-1 when the filter hides it) and whether its place was known. */
  restore(movie) {
    const rank = this.removedRanks.get(movie.id);
    if (rank === undefined) {
      this.add(movie);
      return { index: this.shownIndexOf(movie), known: false };
    }
    this.removedRanks.delete(movie.id);
    movie[RANK] = rank;
    this.all.splice(lowerBound(this.all, rank), 0, movie);
    if (this.matches !== null && folded(movie).includes(this.query)) this.matches.splice(lowerBound(this.matches, rank), 0, movie);
    return { index: this.shownIndexOf(movie), known: true };
  }

  /** The movie with id `id` moves to right after the movie `after` (an id; null: first), as a
   * `moved` event says, or as this page's own move (app.js) shows it until its event comes.
   * Returns {from, was, index}: the id of the movie it came right after (null: it was first), and
   * its index in `shown` before and now (-1 when the filter hides it); or undefined, changing nothing, when the
   * list holds no movie `id` or no movie `after`. */
  move(id, after) {
    const i = this.indexOf(id);
    if (i < 0 || id === after) return undefined;
    const movie = this.all[i];
    const to = after === null ? 0 : this.indexOf(after);
    if (to < 0) return undefined;
    const from = i > 0 ? this.all[i - 1].id : null;
    const shownIndex = this.shownIndexOf(movie);
    if (shownIndex >= 0 && this.matches !== null) this.matches.splice(shownIndex, 1);
    this.all.splice(i, 1);
    this.insert(movie, after === null ? 0 : (to < i ? to + 1 : to));
    return { from, was: shownIndex, index: this.shownIndexOf(movie) };
  }

  /** The id of the movie right before `movie` in list order, passing over `skip` (a movie being
   * moved), or null when none is: where a movie goes to come right before `movie`. */
  idBefore(movie, skip) {
    let i = this.indexOf(movie.id) - 1;
    if (i >= 0 && this.all[i] === skip) i--;
    return i >= 0 ? this.all[i].id : null;
  }

  /** A restored movie, back right after the movie `after` (an id; null: first), as a `restored`
   * event of a daemon that moves says. Returns its index in `shown` (-1 when the filter hides
   * it), or undefined, changing nothing, when the list holds no movie `after`. */
  restoreAfter(movie, after) {
    const to = after === null ? 0 : this.indexOf(after) + 1;
    if (after !== null && to === 0) return undefined;
    this.removedRanks.delete(movie.id);
    this.insert(movie, to);
    return this.shownIndexOf(movie);
  }

  /** Puts `movie` (in neither array) at index `at` of `all`, with a rank between its neighbours',
   * and among the matches when it is one. */
  insert(movie, at) {
    const all = this.all;
    const hi = at < all.length ? all[at][RANK] : this.nextRank;
    const lo = at > 0 ? all[at - 1][RANK] : hi - 1;
    let rank = (lo + hi) / 2;
    all.splice(at, 0, movie);
    if (!(rank > lo && rank < hi)) {
      // No room left between the two: every movie is numbered afresh, in list order.
      for (let i = 0; i < all.length; i++) all[i][RANK] = i;
      this.nextRank = all.length;
      this.removedRanks.clear();
      rank = at;
    }
    movie[RANK] = rank;
    if (this.matches !== null && folded(movie).includes(this.query)) this.matches.splice(lowerBound(this.matches, rank), 0, movie);
  }

  /** Folds titles ahead of the first keystroke, from `from` on, until `more()` says to stop
   * (an idle callback's time running out). Returns where to go on from, or -1 when done. */
  prepare(from, more) {
    const all = this.all;
    let i = from;
    while (i < all.length) {
      const end = Math.min(all.length, i + 1000);
      for (; i < end; i++) folded(all[i]);
      if (!more()) break;
    }
    return i < all.length ? i : -1;
  }

  /** Sets the filter text: the movies whose title contains it (folded). A longer text that
   * contains the last one searches only the last matches. Returns the number of matches. */
  filter(text) {
    const query = fold(text.trim());
    if (query === "") {
      this.matches = null;
    } else if (this.matches !== null && query.includes(this.query)) {
      // Narrowing: the matches are a subset of the last ones, kept in place (no new array, which
      // for a first letter matching most titles would be as long as the list).
      const matches = this.matches;
      let kept = 0;
      for (let i = 0; i < matches.length; i++) if (folded(matches[i]).includes(query)) matches[kept++] = matches[i];
      matches.length = kept;
    } else {
      this.matches = this.search(query, this.all);
    }
    this.query = query;
    return this.shown.length;
  }

  search(query, from) {
    const out = [];
    for (let i = 0; i < from.length; i++) if (folded(from[i]).includes(query)) out.push(from[i]);
    return out;
  }
}
