// Who made each change (issue 46): another person's change is said on the line above the keys
// as its `movie` event arrives ("alice removed “Inception”", "bob marked “The Matrix” watched"),
// and another person's removal may be undone with u for 5 s, as this front end's own delete may.
import Movies

extension TuiStateMachine {
    /// Who made `event`, as this front end says it: `.me` when its `by` is this connection's
    /// person (the same name from another door is the same person: protocol.md, "Who may do
    /// what"), `.someone` when the daemon names nobody for it though it names this connection (an
    /// anonymous browser's change), nil when nothing can be told (a daemon before people names
    /// no one, this connection included).
    func author(_ event: CommittedEvent) -> TuiAuthor? {
        if let by = event.by { return by == state.model.user ? .me : .person(by) }
        return state.model.user == nil ? nil : .someone
    }

    /// Says another person's change, unless the line holds something of this front end's own
    /// that the person still needs: the undo of its own delete, or a message of its own still
    /// showing (a confirmation to make, an error, what a key did). Another person's change takes
    /// the place of the one before it. A removal offers its undo to a writer (u restores it);
    /// a reader is only told.
    mutating func news(_ event: CommittedEvent, _ now: Double) {
        // A removal that someone restored can no longer be undone, whoever's it was.
        if event.kind == MovieEvent.Kind.restored, state.undo?.movie == event.movie.id {
            state.undo = nil
            state.model.status = nil
            redraw()
        }
        guard let author = author(event), author != .me else { return }
        if let undo = state.undo, now < undo.until {
            if undo.by == .me { return }
        } else if state.model.status != nil && !state.statusIsNews && now < state.statusUntil ?? .infinity {
            // A message of its own, still showing (one without an end, such as "Lost the
            // daemon", stays until something replaces it).
            return
        }
        state.statusIsNews = true
        state.model.statusIsError = false
        if event.kind == MovieEvent.Kind.removed && state.model.writer {
            // The hint's words are the frame's (TuiStateMachine.frame), as for this front end's
            // own delete.
            state.undo = .init(
                movie: event.movie.id, title: event.movie.title, seq: event.seq, until: now + Self.undoTime,
                by: author)
            state.model.status = nil
            state.statusUntil = nil
        } else {
            state.undo = nil
            // A move says where, by the title of the movie it now comes after (issue 48).
            let after = event.to?.after.flatMap { state.positions[$0] }.map { state.entries[$0].movie.title }
            state.model.status = Self.words(event, by: author, after: after)
            state.statusUntil = now + Self.statusTime
        }
        redraw()
    }

    /// What `author` did, in a sentence: "alice removed “Inception”", "bob moved “Se7en” after
    /// “The Matrix”" (`after`: that movie's title; its id when it is not known).
    static func words(_ event: CommittedEvent, by author: TuiAuthor, after: String? = nil) -> String {
        let title = "“\(event.movie.title)”"
        let did: String
        switch event.kind {
        case MovieEvent.Kind.added: did = "added \(title)"
        case MovieEvent.Kind.watchedToggled:
            did = "marked \(title) \(event.movie.watched ? "watched" : "not watched")"
        case MovieEvent.Kind.watchedWithFriendsToggled:
            did = "marked \(title) \(event.movie.watchedWithFriends ? "watched" : "not watched") with friends"
        case MovieEvent.Kind.removed: did = "removed \(title)"
        case MovieEvent.Kind.restored: did = "restored \(title)"
        case MovieEvent.Kind.moved:
            switch event.to {
            case .first?: did = "moved \(title) to the top"
            case .after(let id)?: did = "moved \(title) after “\(after ?? id)”"
            case nil: did = "moved \(title)"
            }
        case .unknown: did = "changed \(title)"  // a kind a later protocol 1 adds
        }
        return "\(author.subject) \(did)"
    }
}
