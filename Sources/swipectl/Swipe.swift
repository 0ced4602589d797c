// swipe: a gesture on one movie's row, on one connection (the daemon's swipe engine belongs to
// the connection): a drag in steps of at most 20 points and its release, or "open this edge"
// (the `open` op) and a tap, or "perform this action" (the `perform` op). The numbers are the engine's own (SwipeEngine.Rules), read with the layout and the
// viewport this connection has.
import JSONCodec
import Movies
import SwipeEngine
import SwipedClient
import Wire

enum Swipe {
    /// The longest step of a drag when --steps is not given: a finger reports about every 16 ms,
    /// and 20 points per report is a brisk swipe.
    static let maxStep: Double = 20

    static func run(_ conversation: Conversation, _ name: String, _ gesture: Gesture, verbose: Bool)
        throws(Failure)
    {
        let (id, known) = try MovieCommands.resolve(conversation, name)
        let swipe = Run(
            conversation: conversation, movie: id, unmatched: known ? nil : name, verbose: verbose)
        switch gesture {
        case .drag(let dx, let vx, let steps):
            try swipe.drag(dx, steps: steps ?? max(1, Int((abs(dx) / maxStep).rounded(.up))))
            let (row, reply) = try swipe.release(vx: vx)
            if !verbose { swipe.show("release", row, vx: vx) }
            try swipe.show(outcome: reply)
        case .open(let edge, let tap):
            try swipe.open(edge, thenTap: tap)
        case .perform(let action):
            try swipe.perform(action)
        }
    }

    /// `swipe … --record FILE`: the gesture on a connection that records it (`record`), its
    /// recording written to FILE and the lines with a row that the connection got to
    /// FILE.rows, as `swipectl replay FILE --expect FILE.rows` reads them.
    static func record(
        _ conversation: Conversation, _ name: String, _ gesture: Gesture, verbose: Bool, into file: String
    ) throws(Failure) {
        try conversation.request("record", [("on", .bool(true))], echo: false)
        conversation.transcript = []
        try run(conversation, name, gesture, verbose: verbose)
        let reply = try conversation.request("recording", echo: false)
        guard let recording = reply["recording"] else {
            throw Failure(.unreachable, "the daemon's recording reply has no recording")
        }
        let lines = conversation.transcript ?? []
        conversation.transcript = nil
        try conversation.request("record", [("on", .bool(false))], echo: false)
        var out = JSONWriter()
        out.value(recording)
        out.newline()
        try Files.write(out.bytes, to: file)
        var rows: [String] = []
        for line in lines {
            // Every line came from the daemon, as JSON (the client checked it).
            if try ReplayCommand.parse(Array(line.utf8), "a line from the daemon").objectValue?["row"] != nil
            {
                rows.append(line)
            }
        }
        try Files.write(Array(rows.map { $0 + "\n" }.joined().utf8), to: file + ".rows")
        if !conversation.json {
            Output.out("recorded \(rows.count) rows into \(file) (rows: \(file).rows)\n")
        }
    }

    /// -20 → "-20", 33.333333333333336 → "33.33".
    static func format(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int(value)) }
        return String((value * 100).rounded() / 100)
    }

    /// One line per row: the step, then phase, offset, edge and the visible buttons left to right.
    /// One step's line in columns; a release's `vx` goes last (as `vx -900`), so that a long
    /// one does not push the columns out of line.
    static func line(_ step: String, _ row: RowRender, vx: Double? = nil) -> String {
        var buttons = row.buttons.map(\.action).joined(separator: " | ")
        if row.fullSwipe { buttons += " (full swipe)" }
        if let vx { buttons += (buttons.isEmpty ? "" : "  ") + "vx \(format(vx))" }
        return [
            pad(step, 12), pad(row.phase.rawValue, 9), pad("offset \(format(row.offset))", 12),
            pad(row.edge?.rawValue ?? "-", 9), buttons,
        ].joined(separator: " ").trimmingSuffixSpaces()
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

extension String {
    fileprivate func trimmingSuffixSpaces() -> String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}

/// One gesture's requests and what they print.
private struct Run {
    let conversation: Conversation
    let movie: String
    /// MOVIE as given, when it matched no id or title (for the not-found message).
    let unmatched: String?
    let verbose: Bool

    /// Drags to `dx` in `steps` equal steps (each `drag` carries the total so far).
    func drag(_ dx: Double, steps: Int) throws(Failure) {
        for step in 1...steps {
            let total = dx * Double(step) / Double(steps)
            let reply = try request("drag", [("dx", .number(JSONNumber(total)))], echo: verbose)
            if verbose { show("drag \(Swipe.format(total))", try row(reply)) }
        }
    }

    /// The row after the release, and the reply (its `fired` or `pending`).
    func release(vx: Double?) throws(Failure) -> (RowRender, JSONObject) {
        let reply = try request("release", vx.map { [("vx", .number(JSONNumber($0)))] } ?? [], echo: true)
        let row = try row(reply)
        if verbose { show("release", row, vx: vx) }
        return (row, reply)
    }

    /// Opens the row on `edge` (the `open` op: rule 11); then taps `action` when given.
    func open(_ edge: Edge, thenTap action: String?) throws(Failure) {
        let layout = try conversation.request("configure", echo: false).object("layout")
        let actions = Run.actions(layout, .leading) + Run.actions(layout, .trailing)
        guard actions.contains(where: { $0.edge == edge }) else {
            throw Failure(.refused, "the \(edge.rawValue) edge of \(movie)'s row has no buttons")
        }
        if let action, !actions.contains(where: { $0.action == action }) {
            throw Failure(
                .refused,
                "\(movie)'s row has no \"\(action)\" action; it has "
                    + actions.map { "\($0.action) (\($0.edge.rawValue))" }.joined(separator: ", "))
        }
        let row = try self.row(try request("open", [("edge", .string(edge.rawValue))], echo: true))
        guard row.phase == .open, row.edge == edge else {
            throw Failure(
                .refused, "\(movie)'s row did not open on the \(edge.rawValue) edge: \(Swipe.line("", row))")
        }
        guard let action else { return show("open", row) }
        if verbose { show("open", row) }
        guard row.buttons.contains(where: { $0.action == action }) else {
            throw Failure(
                .refused,
                "the \"\(action)\" button is not showing (showing: "
                    + row.buttons.map(\.action).joined(separator: " | ") + ")")
        }
        let reply = try request("tap", [("action", .string(action))], echo: true)
        let tapped = try self.row(reply)
        show("tap \(action)", tapped)
        try show(outcome: reply)
    }

    /// Fires `action` without swiping (the `perform` op: rule 11).
    func perform(_ action: String) throws(Failure) {
        let reply = try request("perform", [("action", .string(action))], echo: true)
        show("perform", try row(reply))
        try show(outcome: reply)
    }

    /// The actions of one edge of a `configure` reply's layout.
    static func actions(_ layout: JSONObject?, _ edge: Edge) -> [(action: String, edge: Edge)] {
        guard case .array(let items)? = layout?[edge.rawValue] else { return [] }
        return items.compactMap { item in
            guard case .object(let spec) = item, let action = spec.string("action") else { return nil }
            return (action, edge)
        }
    }

    // MARK: - Printing

    func show(_ step: String, _ row: RowRender, vx: Double? = nil) {
        if !conversation.json { Output.out(Swipe.line(step, row, vx: vx) + "\n") }
    }

    /// What a tap or perform did: an action waiting for its confirmation (rule 10), or `fired`.
    func show(outcome reply: JSONObject) throws(Failure) {
        if let action = reply.object("pending")?.string("action") {
            if !conversation.json {
                Output.out(
                    "pending \(action): the row asks to confirm it (tap it within \(Swipe.format(Rules.confirmTimeout)) s)\n"
                )
            }
            return
        }
        try show(fired: reply.object("fired"))
    }

    /// What fired, if anything; a bound action whose command failed is a failure (status 1).
    func show(fired: JSONObject?) throws(Failure) {
        guard let fired, let action = fired.string("action") else {
            if !conversation.json { Output.out("nothing fired\n") }
            return
        }
        if let error = fired.object("error") {
            throw Failure(
                .refused,
                "\(action) fired, but its command failed: \(error.string("code") ?? "error"): "
                    + (error.string("message") ?? ""))
        }
        if conversation.json { return }
        let seq = fired.uint("seq")
        Output.out(
            "fired \(action)" + (seq.map { " (seq \($0))" } ?? "") + (try seq.map(toggled(by:)) ?? "") + "\n")
    }

    /// What a toggle the action fired did, read back from the log (its event has the movie
    /// after it): ": unwatched" rather than a bare "fired watched" for an un-watch (issue 49).
    /// Empty for any other event: "fired delete" says what it did.
    private func toggled(by seq: UInt64) throws(Failure) -> String {
        let page = try conversation.request(
            "history", [("from", .number(JSONNumber(Int(seq - 1)))), ("limit", .number(JSONNumber(1)))],
            echo: false)
        guard case .array(let events)? = page["events"], case .object(let event)? = events.first,
            event.uint("seq") == seq, let movie = event.object("movie")
        else { return "" }
        switch event.string("kind").map(EventKind.init) {
        case .watchedToggled?: return movie.bool("watched") == true ? ": watched" : ": unwatched"
        case .watchedWithFriendsToggled?:
            return movie.bool("watchedWithFriends") == true ? ": watched with friends" : ": not with friends"
        // A bound action's event is a toggle or a removal; the removal says nothing more.
        case .added?, .removed?, .restored?, .moved?, .unknown?, nil: return ""
        }
    }

    // MARK: - Requests

    /// One request on the row; a not-found for a MOVIE that matched no title says so.
    private func request(_ op: String, _ arguments: [(String, JSON)], echo: Bool) throws(Failure)
        -> JSONObject
    {
        do {
            return try conversation.request(op, [("movie", .string(movie))] + arguments, echo: echo)
        } catch {
            var failure = error
            if let unmatched, failure.status == .refused, failure.message.hasPrefix("not-found:"),
                !failure.movieRemoved
            {
                failure.message += "\nno title starts with '\(unmatched)' either (see `swipectl list`)"
            }
            throw failure
        }
    }

    private func row(_ reply: JSONObject) throws(Failure) -> RowRender {
        do {
            return try SwipedClient.row(reply.object("row"))
        } catch {
            throw conversation.lost(error)
        }
    }
}
