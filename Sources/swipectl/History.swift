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
            guard case .object(let object) = item, let (event, at) = try? SwipedClient.committedEvent(object)
            else {
                throw conversation.lost(ClientError(.protocol, "malformed history event"))
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

    /// One line for `watch`: seq, time, change, id and title, two spaces apart.
    static func line(_ event: CommittedEvent, at: String) -> String {
        "\(event.seq)  \(time(at))  \(change(event))  \(event.movie.id)  \(TerminalText.escaped(event.movie.title))"
    }
}
