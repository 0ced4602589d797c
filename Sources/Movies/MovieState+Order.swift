// The fold (`apply`) and list order: where a movie goes when it is added, removed, restored or
// moved (issue 48), and the array surgery that keeps `movies`, `slots` and `positions` in
// step. `decide` (MovieState.swift) names the events; this file places them.
extension MovieState {
    /// Folds a stored event in and returns the movie after it (for `removed`, its last state with
    /// `version = seq`). An event that does not fit (toggle of an unknown id, second `added` of an
    /// id, a move after a movie not in the list) changes nothing but `lastSeq` and returns nil;
    /// `decide` never produces one.
    @discardableResult
    public mutating func apply(_ event: MovieEvent, seq: UInt64) -> Movie? {
        lastSeq = max(lastSeq, seq)
        switch event {
        case .added(let id, let title, let image):
            guard index[id] == nil else { return nil }
            let movie = Movie(id: id, title: title, image: image, version: seq)
            // Its seq is above every key's head (each key's head is at most the seq that made it),
            // unless a log's seqs are out of order: then the next key after the last still keeps
            // the keys increasing.
            var key = OrderKey(added: seq)
            if let last = slots.last?.key, key <= last { key = OrderKey.between(last, nil) }
            insert(movie, key, at: movies.count)
            removed[id] = nil  // not from `decide`, which never adds a used id
            noteSuffix(of: id)
            return movie
        case .watchedToggled(let id):
            guard let i = offset(of: id) else { return nil }
            movies[i].watched.toggle()
            movies[i].version = seq
            return movies[i]
        case .watchedWithFriendsToggled(let id):
            guard let i = offset(of: id) else { return nil }
            movies[i].watchedWithFriends.toggle()
            movies[i].version = seq
            return movies[i]
        case .removed(let id):
            guard let i = offset(of: id) else { return nil }
            var (movie, key) = remove(at: i)
            movie.version = seq
            removed[id] = RemovedMovie(movie: movie, key: key)
            return movie
        case .restored(let id, _):
            // By its key, which is what `to` describes when `decide` made the event.
            guard index[id] == nil, let gone = removed.removeValue(forKey: id) else { return nil }
            var movie = gone.movie
            movie.version = seq
            let s = slot(for: gone.key)
            var key = gone.key
            // A movie moved since into exactly its place holds its key: it goes right after.
            if s > 0 && slots[s - 1].key == key {
                key = OrderKey.between(key, s < slots.count ? slots[s].key : nil)
            }
            insert(movie, key, at: s)
            return movie
        case .moved(let id, let to, _):
            guard let i = offset(of: id) else { return nil }
            // Its place once it is out of the list: right after `to`'s movie, or first.
            var t = 0
            if case .after(let other) = to {
                guard other != id, let a = offset(of: other) else { return nil }
                t = a < i ? a + 1 : a
            }
            // Its neighbours there, by their offsets with it still in the list.
            let low = t == 0 ? nil : slots[t - 1 < i ? t - 1 : t].key
            let high = t == movies.count - 1 ? nil : slots[t < i ? t : t + 1].key
            relocate(from: i, to: t)
            slots[t].key = OrderKey.between(low, high)
            movies[t].version = seq
            return movies[t]
        }
    }

    /// Where `restore` puts `gone` back: among the live movies by its key.
    func restorePlace(of gone: RemovedMovie) -> ListPlace { place(at: slot(for: gone.key)) }

    /// Where the `undo` of a move takes the movie `id` (at `offset`) back to: `to`, its place
    /// before the move, when that movie is still in the list; when it has gone since, where that
    /// movie would come back (its key's place), which is between the movies that surrounded
    /// both; first when `to` was first.
    func placeBack(_ id: String, at offset: Int, to: ListPlace) -> ListPlace {
        guard case .after(let other) = to, index[other] == nil else { return to }
        guard let gone = removed[other] else { return .first }
        var j = slot(for: gone.key) - 1
        if j == offset { j -= 1 }
        return j < 0 ? .first : .after(movies[j].id)
    }

    // MARK: - The arrays

    /// Inserts a live movie at `s`, with a handle.
    private mutating func insert(_ movie: Movie, _ key: OrderKey, at s: Int) {
        let h: Int
        if freeHandle >= 0 {
            h = freeHandle
            freeHandle = -2 - positions[h]
        } else {
            h = positions.count
            positions.append(-1)
        }
        movies.insert(movie, at: s)
        slots.insert(Slot(key: key, handle: h), at: s)
        index[movie.id] = h
        for j in s..<movies.count { positions[slots[j].handle] = j }
    }

    /// Takes the live movie at `i` out; its handle is free again.
    private mutating func remove(at i: Int) -> (Movie, OrderKey) {
        let slot = slots.remove(at: i)
        let movie = movies.remove(at: i)
        index[movie.id] = nil
        positions[slot.handle] = -2 - freeHandle
        freeHandle = slot.handle
        for j in i..<movies.count { positions[slots[j].handle] = j }
        return (movie, slot.key)
    }

    /// Moves the movie at `i` to `t`, shifting those between by one.
    private mutating func relocate(from i: Int, to t: Int) {
        guard i != t else { return }
        MovieState.shift(&movies, from: i, to: t)
        MovieState.shift(&slots, from: i, to: t)
        for j in min(i, t)...max(i, t) { positions[slots[j].handle] = j }
    }

    /// `a[i]` to `a[t]`, the elements between moved over by one: a memmove, not an assignment per
    /// element (each would retain and release the movie's strings).
    private static func shift<T>(_ a: inout [T], from i: Int, to t: Int) {
        a.withUnsafeMutableBufferPointer { b in
            let p = b.baseAddress!
            let x = (p + i).move()
            if i < t {
                (p + i).moveInitialize(from: p + i + 1, count: t - i)
            } else {
                (p + t + 1).moveInitialize(from: p + t, count: i - t)
            }
            (p + t).initialize(to: x)
        }
    }

    /// Appends a live movie read from a snapshot (in list order).
    mutating func appendLive(_ movie: Movie, _ key: OrderKey) { insert(movie, key, at: movies.count) }

    // MARK: - Ids

    /// The next suffix to try for `base`, when an id with a suffix was seen.
    func nextSuffix(for base: String) -> Int? { suffixHint[base] }

    mutating func noteSuffix(of id: String) {
        guard let us = id.utf8.lastIndex(of: 0x5F) else { return }
        let base = String(id[..<us])
        guard let n = Int(id[id.index(after: us)...]), n >= 2 else { return }
        if (suffixHint[base] ?? 2) <= n { suffixHint[base] = n + 1 }
    }
}
