// MOVIE on the command line: an id, or the start of a title. Resolved here, on the client,
// from one `list`; the daemon only ever sees ids.
import Movies

enum MovieName {
    enum Match: Equatable {
        /// Send this id.
        case id(String)
        /// No id and no title fits: send the text as an id and let the daemon say not-found.
        case none
        /// Several titles start with the text.
        case ambiguous([Movie])
    }

    /// An exact id first; then titles equal to `name` ignoring case; then titles that start
    /// with it ignoring case. Exactly one movie must match at the first level that matches any.
    static func resolve(_ name: String, in movies: [Movie]) -> Match {
        if movies.contains(where: { $0.id == name }) { return .id(name) }
        let wanted = name.lowercased()
        let exact = movies.filter { $0.title.lowercased() == wanted }
        let candidates = exact.isEmpty ? movies.filter { $0.title.lowercased().hasPrefix(wanted) } : exact
        switch candidates.count {
        case 0: return .none
        case 1: return .id(candidates[0].id)
        default: return .ambiguous(candidates)
        }
    }

    /// The message for `.ambiguous`: every candidate, id and title, aligned.
    static func ambiguity(_ name: String, _ candidates: [Movie]) -> String {
        var table = Table("  ID", "TITLE")
        for movie in candidates { table.append("  " + movie.id, TerminalText.escaped(movie.title)) }
        var lines = table.text.split(separator: "\n").map(String.init)
        lines.removeFirst()
        return "'\(name)' matches \(candidates.count) titles; give more of the title, or the id:\n"
            + lines.joined(separator: "\n")
    }
}
