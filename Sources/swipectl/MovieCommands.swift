// list, add, toggle-watched, toggle-friends, remove, restore.
import JSONCodec
import Movies
import SwipedClient
import Wire

enum MovieCommands {
    enum Flag {
        case watched, friends

        var op: String { self == .watched ? "toggle-watched" : "toggle-watched-with-friends" }
    }

    static func list(_ conversation: Conversation) throws(Failure) {
        let reply = try conversation.request("list")
        if conversation.json { return }
        let movies = try decodeMovies(reply, conversation)
        var table = Table("ID", "TITLE", "WATCHED")
        for movie in movies { table.append(movie.id, TerminalText.escaped(movie.title), indicators(movie)) }
        // On a terminal, long titles (then long ids) are cut so that each movie stays on one line.
        if let width = TerminalText.terminalColumns() { table.fit(columns: [1, 0], toWidth: width) }
        var text = table.text
        if Output.isTerminal {
            text +=
                "\n\(movies.count) movie\(movies.count == 1 ? "" : "s") (👁 watched, 👥 watched with friends).\n"
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
            conversation, flag.op, [("movie", .string(id))], unmatched: known ? nil : name)
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
            conversation, "remove", [("movie", .string(id))], unmatched: known ? nil : name)
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

    /// 👁 and 👥 for the flags that are set, or nothing.
    static func indicators(_ movie: Movie) -> String {
        [movie.watched ? "👁" : nil, movie.watchedWithFriends ? "👥" : nil].compactMap { $0 }.joined(
            separator: " ")
    }

    // MARK: - Helpers

    /// MOVIE as an id (see MovieName), from one `list` that --json does not print; `known` is
    /// false when nothing matched and `name` is sent as is, for the daemon to say not-found.
    static func resolve(_ conversation: Conversation, _ name: String) throws(Failure) -> (
        id: String, known: Bool
    ) {
        let movies = try decodeMovies(conversation.request("list", echo: false), conversation)
        switch MovieName.resolve(name, in: movies) {
        case .id(let id): return (id, true)
        case .none: return (name, false)
        case .ambiguous(let candidates): throw Failure(.refused, MovieName.ambiguity(name, candidates))
        }
    }

    /// A mutation's reply as (seq, movie). A not-found for a MOVIE that matched no title says so.
    private static func mutation(
        _ conversation: Conversation, _ op: String, _ arguments: [(String, JSON)],
        unmatched name: String? = nil
    ) throws(Failure) -> (UInt64, Movie) {
        let reply: JSONObject
        do {
            reply = try conversation.request(op, arguments)
        } catch {
            var failure = error
            if let name, failure.status == .refused, failure.message.hasPrefix("not-found:"),
                !failure.movieRemoved
            {
                failure.message += "\nno title starts with '\(name)' either (see `swipectl list`)"
            }
            throw failure
        }
        guard let seq = reply.uint("seq"), let value = reply["movie"],
            let movie = try? SwipedClient.movie(value)
        else {
            throw conversation.lost(ClientError(.protocol, "\(op) reply without seq and movie"))
        }
        return (seq, movie)
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
