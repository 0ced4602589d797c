// history, and the one-line description of an event that `watch` prints too.
import JSONCodec
import Movies
import SwipedClient
import Wire

enum History {
    /// `by`: only that person's changes (the op's `by`), paged the same way.
    static func run(_ conversation: Conversation, from: UInt64?, limit: UInt64?, by: String? = nil)
        throws(Failure)
    {
        var arguments: [(String, JSON)] = []
        if let from { arguments.append(("from", .number(JSONNumber(Int64(clamping: from))))) }
        if let limit { arguments.append(("limit", .number(JSONNumber(Int64(clamping: limit))))) }
        if let by { arguments.append(("by", .string(by))) }
        let reply = try conversation.request("history", arguments)
        if conversation.json { return }
        guard let latest = reply.uint("seq"), case .array(let items)? = reply["events"] else {
            throw conversation.lost(ClientError(.protocol, "history reply without seq and events"))
        }
        var table = Table("SEQ", "TIME", "BY", "CHANGE", "ID", "TITLE")
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
                String(event.seq), time(at), author(event), change(event), event.movie.id,
                TerminalText.escaped(event.movie.title))
            last = event.seq
        }
        // The title first, then the id, then a long name.
        if let width = TerminalText.terminalColumns() { table.fit(columns: [5, 4, 2], toWidth: width) }
        var text = table.text
        if Output.isTerminal {
            text += summary(items.count, latest: latest, last: last, limit: limit, by: by)
        }
        Output.out(text)
    }

    /// The lines under the table on a terminal: how many, and the command for the next page (of
    /// the same size).
    /// Without `by`, a next page is there when the last seq shown is before the latest; with it,
    /// only a full page can have one (the daemon gives every change of that person's it has, up
    /// to the limit), so a full page offers the next.
    static func summary(_ count: Int, latest: UInt64, last: UInt64, limit: UInt64?, by: String?) -> String {
        var text = "\n\(count) change\(count == 1 ? "" : "s")"
        if let by { text += " by \(TerminalText.escaped(by))" }
        text += "; latest seq \(latest)."
        let more = by == nil ? last < latest : UInt64(count) == (limit ?? 100) && last < latest
        if more {
            text += " More with: swipectl history"
            if let by { text += " --by \(Conversation.shellQuoted(by))" }
            text += " --from \(last)"
            if let limit { text += " --limit \(limit)" }
        }
        return text + "\n"
    }

    /// The BY cell: who made the event, or `-` when the daemon does not say (an event of an older
    /// build, or an anonymous browser's): a dash rather than nothing, so that the columns stay
    /// words for `awk` and `cut -w`.
    static func author(_ event: CommittedEvent) -> String {
        event.by.map(TerminalText.escaped) ?? "-"
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
        // Where it went, by the id of the movie it now comes after (issue 48): ids are what the
        // ID column and every command take, and hold no spaces.
        case MovieEvent.Kind.moved: return event.to.map { "moved " + words($0) } ?? "moved"
        // A newer daemon's kind: its word, as it came (escaped, as every text from the daemon).
        case .unknown(let raw): return TerminalText.escaped(raw)
        }
    }

    /// A place in list order as the changes say it: "after matrix", "to the top".
    static func words(_ place: ListPlace) -> String {
        switch place {
        case .first: return "to the top"
        case .after(let id): return "after \(TerminalText.escaped(id))"
        }
    }

    /// RFC 3339 to the second: "2026-11-30T04:43:34.123456Z" → "2026-11-30T04:43:34Z".
    static func time(_ at: String) -> String {
        guard let dot = at.firstIndex(of: "."), at.hasSuffix("Z") else { return at }
        return String(at[..<dot]) + "Z"
    }

}

/// `watch`'s lines: the columns of `history`'s table (SEQ, TIME, BY, CHANGE, ID, TITLE), two
/// cells apart. A stream cannot be measured before it is printed, so each column starts as wide
/// as what it will usually hold (the seq of now, a Unix user name's 8 cells, the longest change,
/// the longest id of the list at the start) and only grows: a wider cell widens its column from
/// that line on.
struct WatchColumns {
    /// The cells of SEQ, TIME, BY, CHANGE and ID (TITLE, the last, is never padded).
    private(set) var widths: [Int]

    init(latestSeq: UInt64, ids: [String]) {
        widths = [
            max(3, String(latestSeq).count), TerminalText.width("2026-11-30T04:43:34Z"), 8,
            WatchColumns.widestChange, ids.map(TerminalText.width).max() ?? 2,
        ]
        widths[4] = max(widths[4], 2)
    }

    /// The column titles, aligned as the lines are.
    var header: String { row(["SEQ", "TIME", "BY", "CHANGE", "ID", "TITLE"]) }

    /// One event's line.
    mutating func line(_ event: CommittedEvent, at: String) -> String {
        let cells = [
            String(event.seq), History.time(at), History.author(event), History.change(event), event.movie.id,
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
        let kinds = EventKind.known
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
