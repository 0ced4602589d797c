// list, add, toggle-watched, toggle-friends, remove, restore, move, undo.
import JSONCodec
import Movies
import SwipedClient
import Wire

enum MovieCommands {
    enum Flag {
        case watched, friends

        var op: String { self == .watched ? "toggle-watched" : "toggle-watched-with-friends" }
    }

    static func list(_ conversation: Conversation, from: String?, limit: UInt64?, match: String?)
        throws(Failure)
    {
        var arguments: [(String, JSON)] = []
        if let from { arguments.append(("after", .string(from))) }
        if let limit { arguments.append(("limit", .number(JSONNumber(Int(limit))))) }
        if let match { arguments.append(("match", .string(match))) }
        let reply = try conversation.request("list", arguments)
        if conversation.json { return }
        let movies = try decodeMovies(reply, conversation)
        // Nothing to show a person: a sentence, not a header over no rows (a pipe still gets
        // the header alone, as a script reading columns expects).
        if movies.isEmpty && Output.isTerminal && from == nil {
            let said =
                match.map { "No movie's title contains “\(TerminalText.escaped($0))”.\n" } ?? "No movies.\n"
            return Output.out(said)
        }
        var table = Table("ID", "TITLE", "WATCHED")
        for movie in movies { table.append(movie.id, TerminalText.escaped(movie.title), indicators(movie)) }
        // On a terminal, long titles (then long ids) are cut so that each movie stays on one line.
        if let width = TerminalText.terminalColumns() { table.fit(columns: [1, 0], toWidth: width) }
        var text = table.text
        if Output.isTerminal {
            text +=
                "\n\(movies.count) movie\(movies.count == 1 ? "" : "s") (👁 watched, 👥 watched with friends).\n"
            if case .string(let next)? = reply["next"] {
                text += "More: swipectl list --from \(Conversation.shellQuoted(next))\(more(limit, match))\n"
            }
        }
        Output.out(text)
    }

    static func add(_ conversation: Conversation, title: String, image: String?) throws(Failure) {
        var arguments: [(String, JSON)] = [("title", .string(title))]
        if let image { arguments.append(("image", .string(image))) }
        let (seq, movie) = try mutation(conversation, "add", arguments)
        if conversation.json { return }
        Output.out("Added \(movie.id) \"\(TerminalText.escaped(movie.title))\" (seq \(seq)).\n")
    }

    static func toggle(_ conversation: Conversation, _ flag: Flag, _ name: String) throws(Failure) {
        let (id, known) = try resolve(conversation, name)
        let (seq, movie) = try mutation(
            conversation, flag.op, [("movie", .string(id))], unmatched: known ? [:] : ["movie": name])
        if conversation.json { return }
        let state: String
        switch flag {
        case .watched: state = movie.watched ? "watched 👁" : "not watched"
        case .friends:
            state = movie.watchedWithFriends ? "watched with friends 👥" : "not watched with friends"
        }
        Output.out("\(movie.id) \"\(TerminalText.escaped(movie.title))\": \(state) (seq \(seq)).\n")
    }

    static func remove(_ conversation: Conversation, _ name: String) throws(Failure) {
        let (id, known) = try resolve(conversation, name)
        let (seq, movie) = try mutation(
            conversation, "remove", [("movie", .string(id))], unmatched: known ? [:] : ["movie": name])
        if conversation.json { return }
        Output.out("Removed \(movie.id) \"\(TerminalText.escaped(movie.title))\" (seq \(seq)).\n")
    }

    /// MOVIE is the id of a removed movie, sent as is: a removed movie is not in `list`, whose
    /// titles a name is matched against.
    static func restore(_ conversation: Conversation, _ id: String) throws(Failure) {
        let (seq, movie) = try mutation(conversation, "restore", [("movie", .string(id))])
        if conversation.json { return }
        Output.out("Restored \(movie.id) \"\(TerminalText.escaped(movie.title))\" (seq \(seq)).\n")
    }

    /// `move` (issue 48): MOVIE, and the movie it goes after, are resolved as every MOVIE is; the
    /// reply says where it went (its `after`, an id), which is what is said.
    static func move(_ conversation: Conversation, _ name: String, to place: ListPlace) throws(Failure) {
        let (id, known) = try resolve(conversation, name)
        var after = JSON.null
        var unmatched = known ? [String: String]() : ["movie": name]
        if case .after(let other) = place {
            let (otherID, otherKnown) = try resolve(conversation, other)
            after = .string(otherID)
            if !otherKnown { unmatched["after"] = other }
        }
        var went = place
        let (seq, movie) = try mutation(
            conversation, "move", [("movie", .string(id)), ("after", after)], unmatched: unmatched,
            reply: { went = SwipedClient.place($0, "after") ?? place })
        if conversation.json { return }
        Output.out(
            "Moved \(movie.id) \"\(TerminalText.escaped(movie.title))\" \(History.words(went)) (seq \(seq)).\n"
        )
    }

    /// `undo` of the change at `seq`; says what the undo did, read back from the log (the
    /// reply has the movie after it, not what changed), and whose change it was (the reply's
    /// `undoesBy`, issue 46; left out when the daemon does not say).
    static func undo(_ conversation: Conversation, seq: UInt64) throws(Failure) {
        var undoesBy: String?
        let (undoSeq, movie) = try mutation(
            conversation, "undo", [("seq", .number(JSONNumber(Int(seq))))],
            reply: { undoesBy = $0.string("undoesBy") })
        if conversation.json { return }
        let page = try conversation.request(
            "history", [("from", .number(JSONNumber(Int(undoSeq - 1)))), ("limit", .number(JSONNumber(1)))],
            echo: false)
        var kind: EventKind?
        var place: ListPlace?
        if case .array(let events)? = page["events"], case .object(let event)? = events.first,
            event.uint("seq") == undoSeq
        {
            kind = event.string("kind").map(EventKind.init)
            place = SwipedClient.place(event, "after")
        }
        let did: String
        switch kind {
        case .removed?: did = "removed"
        case .restored?: did = "restored"
        case .moved?: did = "moved back " + (place.map(History.words) ?? "")
        case .watchedToggled?: did = movie.watched ? "watched" : "unwatched"
        case .watchedWithFriendsToggled?:
            did = movie.watchedWithFriends ? "watched with friends" : "not with friends"
        // An undo never adds; a kind a later protocol 1 adds, or a page that did not say.
        case .added?, .unknown?, nil: did = "changed"
        }
        let whose = undoesBy.map { " (by \(TerminalText.escaped($0)))" } ?? ""
        Output.out(
            "Undid seq \(seq)\(whose): \(movie.id) \"\(TerminalText.escaped(movie.title))\" \(did) (seq \(undoSeq)).\n"
        )
    }

    /// The options of the next page's command besides --from.
    private static func more(_ limit: UInt64?, _ match: String?) -> String {
        (limit.map { " --limit \($0)" } ?? "")
            + (match.map { " --match \(Conversation.shellQuoted($0))" } ?? "")
    }

    /// 👁 and 👥 for the flags that are set, or nothing.
    static func indicators(_ movie: Movie) -> String {
        [movie.watched ? "👁" : nil, movie.watchedWithFriends ? "👥" : nil].compactMap { $0 }.joined(
            separator: " ")
    }

    // MARK: - Helpers

    /// MOVIE as an id (see MovieName), from `list` requests that --json does not print; `known`
    /// is false when nothing matched and `name` is sent as is, for the daemon to say not-found.
    static func resolve(_ conversation: Conversation, _ name: String) throws(Failure) -> (
        id: String, known: Bool
    ) {
        if try isID(conversation, name) { return (name, true) }
        switch MovieName.resolve(name, in: try titlesContaining(conversation, name)) {
        case .id(let id): return (id, true)
        case .none: return (name, false)
        case .ambiguous(let candidates): throw Failure(.refused, MovieName.ambiguity(name, candidates))
        }
    }

    /// Whether `name` is the id of a movie, now or removed: `list` after it answers, where an id
    /// that never existed is not-found. Only a text that can be an id is asked about.
    private static func isID(_ conversation: Conversation, _ name: String) throws(Failure) -> Bool {
        guard MovieState.isValidID(name) else { return false }
        do {
            _ = try conversation.request(
                "list", [("after", .string(name)), ("limit", .number(JSONNumber(1)))], echo: false)
            return true
        } catch {
            guard error.status == .refused, error.message.hasPrefix("not-found:") else { throw error }
            return false
        }
    }

    /// The movies whose title contains `name` ignoring case (`list`'s `match`, page by page): a
    /// superset of the titles MovieName matches, without fetching the whole list. Pages of 256,
    /// which the daemon words at once and never refuses as overloaded (protocol.md, `list`).
    private static func titlesContaining(_ conversation: Conversation, _ name: String) throws(Failure)
        -> [Movie]
    {
        // Longer than `match` takes: longer than any title, too.
        guard Limits.stringBytes.contains(name.utf8.count) else { return [] }
        var movies: [Movie] = []
        var after: String?
        repeat {
            var arguments: [(String, JSON)] = [
                ("match", .string(name)), ("limit", .number(JSONNumber(256))),
            ]
            if let after { arguments.append(("after", .string(after))) }
            let reply = try conversation.request("list", arguments, echo: false)
            movies += try decodeMovies(reply, conversation)
            if case .string(let next)? = reply["next"] { after = next } else { after = nil }
        } while after != nil
        return movies
    }

    /// A mutation's reply as (seq, movie); `reply` is given the whole reply, for what else it
    /// says. `unmatched`: the text given for each argument that names a movie (`movie`, `move`'s
    /// `after`) and matched no title: a not-found for it says so (the daemon's message says
    /// which argument it is about: `after:` first for `after`, protocol.md).
    private static func mutation(
        _ conversation: Conversation, _ op: String, _ arguments: [(String, JSON)],
        unmatched names: [String: String] = [:], reply read: (JSONObject) -> Void = { _ in }
    ) throws(Failure) -> (UInt64, Movie) {
        let reply: JSONObject
        do {
            reply = try conversation.request(op, arguments)
        } catch {
            var failure = error
            let about = failure.message.hasPrefix("not-found: after:") ? "after" : "movie"
            if let name = names[about], failure.status == .refused, failure.message.hasPrefix("not-found:"),
                !failure.movieRemoved
            {
                failure.message += "\nno title starts with '\(name)' either (see `swipectl list`)"
            }
            throw failure
        }
        guard let seq = reply.uint("seq"), let value = reply["movie"] else {
            throw conversation.lost(ClientError(.protocol, "\(op) reply without seq and movie"))
        }
        read(reply)
        do throws(ClientError) {
            return (seq, try SwipedClient.movie(value))
        } catch {
            throw conversation.lost(ClientError(.protocol, "\(op) reply's movie: \(error.message)"))
        }
    }

    static func decodeMovies(_ reply: JSONObject, _ conversation: Conversation) throws(Failure) -> [Movie] {
        guard case .array(let items)? = reply["movies"] else {
            throw conversation.lost(ClientError(.protocol, "list reply without movies"))
        }
        var movies: [Movie] = []
        for item in items {
            do {
                movies.append(try SwipedClient.movie(item))
            } catch {
                throw conversation.lost(error)
            }
        }
        return movies
    }
}
