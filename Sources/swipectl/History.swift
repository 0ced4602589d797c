// history, and the one-line description of an event that `watch` prints too.
import JSONCodec
import Movies
import SwipedClient
import Wire

enum History {
    static func run(_ conversation: Conversation, from: UInt64?, limit: UInt64?) throws(Failure) {
        var arguments: [(String, JSON)] = []
        if let from { arguments.append(("from", .number(JSONNumber(Int64(clamping: from))))) }
        if let limit { arguments.append(("limit", .number(JSONNumber(Int64(clamping: limit))))) }
        let reply = try conversation.request("history", arguments)
        if conversation.json { return }
        guard let latest = reply.uint("seq"), case .array(let items)? = reply["events"] else {
            throw conversation.lost(ClientError(.protocol, "history reply without seq and events"))
        }
        var table = Table("SEQ", "TIME", "CHANGE", "ID", "TITLE")
        var last = from ?? 0
        for item in items {
            guard case .object(let object) = item else {
                throw conversation.lost(ClientError(.protocol, "a history event that is not an object"))
            }
            let event: CommittedEvent
            let at: String
            do throws(ClientError) {
                (event, at) = try SwipedClient.committedEvent(object)
            } catch {
                throw conversation.lost(ClientError(.protocol, "malformed history event: \(error.message)"))
            }
            table.append(
                String(event.seq), time(at), change(event), event.movie.id,
                TerminalText.escaped(event.movie.title))
            last = event.seq
        }
        if let width = TerminalText.terminalColumns() { table.fit(columns: [4, 3], toWidth: width) }
        var text = table.text
        if Output.isTerminal {
            text += "\n\(items.count) change\(items.count == 1 ? "" : "s"); latest seq \(latest)."
            if last < latest { text += " More with: swipectl history --from \(last)" }
            text += "\n"
        }
        Output.out(text)
    }

    /// What an event did, from its kind and the movie right after it, and what it undid.
    static func change(_ event: CommittedEvent) -> String {
        guard let undoes = event.undoes else { return what(event) }
        return "\(what(event)) (undoes \(undoes))"
    }

    private static func what(_ event: CommittedEvent) -> String {
        switch event.kind {
        case MovieEvent.Kind.added: return "added"
        case MovieEvent.Kind.watchedToggled: return event.movie.watched ? "watched" : "unwatched"
        case MovieEvent.Kind.watchedWithFriendsToggled:
            return event.movie.watchedWithFriends ? "watched with friends" : "unwatched with friends"
        case MovieEvent.Kind.removed: return "removed"
        case MovieEvent.Kind.restored: return "restored"
        default: return event.kind
        }
    }

    /// RFC 3339 to the second: "2026-11-30T04:43:34.123456Z" → "2026-11-30T04:43:34Z".
    static func time(_ at: String) -> String {
        guard let dot = at.firstIndex(of: "."), at.hasSuffix("Z") else { return at }
        return String(at[..<dot]) + "Z"
    }

}

/// `watch`'s lines: the columns of `history`'s table (SEQ, TIME, CHANGE, ID, TITLE), two cells
/// apart. A stream cannot be measured before it is printed, so each column starts as wide as
/// what it will usually hold (the seq of now, the longest change, the longest id of the list at
/// the start) and only grows: a wider cell widens its column from that line on.
struct WatchColumns {
    /// The cells of SEQ, TIME, CHANGE and ID (TITLE, the last, is never padded).
    private(set) var widths: [Int]

    init(latestSeq: UInt64, ids: [String]) {
        widths = [
            max(3, String(latestSeq).count), TerminalText.width("2026-11-30T04:43:34Z"),
            WatchColumns.widestChange, ids.map(TerminalText.width).max() ?? 2,
        ]
        widths[3] = max(widths[3], 2)
    }

    /// The column titles, aligned as the lines are.
    var header: String { row(["SEQ", "TIME", "CHANGE", "ID", "TITLE"]) }

    /// One event's line.
    mutating func line(_ event: CommittedEvent, at: String) -> String {
        let cells = [
            String(event.seq), History.time(at), History.change(event), event.movie.id,
            TerminalText.escaped(event.movie.title),
        ]
        for column in widths.indices {
            widths[column] = max(widths[column], TerminalText.width(cells[column]))
        }
        return row(cells)
    }

    private func row(_ cells: [String]) -> String {
        var line = ""
        for (column, cell) in cells.enumerated() {
            line += cell
            if column < widths.count {
                line += String(repeating: " ", count: widths[column] - TerminalText.width(cell) + 2)
            }
        }
        return line
    }

    /// The widest change `History.change` words for an event that undoes nothing.
    static let widestChange: Int = {
        let kinds = [
            MovieEvent.Kind.added, MovieEvent.Kind.watchedToggled, MovieEvent.Kind.watchedWithFriendsToggled,
            MovieEvent.Kind.removed, MovieEvent.Kind.restored,
        ]
        return kinds.flatMap { kind in
            [false, true].map { flag in
                let movie = Movie(
                    id: "", title: "", image: "", watched: flag, watchedWithFriends: flag, version: 0)
                return TerminalText.width(
                    History.change(CommittedEvent(seq: 0, kind: kind, movie: movie, at: 0)))
            }
        }.max()!
    }()
}
