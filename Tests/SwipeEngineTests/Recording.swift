import Movies
import SwipeEngine

// A recording: a list's configuration, then timed inputs, each followed by what must come out.
// Line-based so that fixtures are written by hand and diffs read well (`Fixtures/*.swipe`):
//
//   # a comment; blank lines are ignored; `#` also starts a trailing comment
//   layout standard                 header: standard | demo000 (MovieLayout) | confirm (standard,
//                                   delete and watched-with-friends asking to confirm); default
//                                   standard
//   viewport 390 rtl                header: width and direction; default 390 ltr
//   buttonwidth 90                  header: overrides the layout's W
//   fullswipe trailing off          header: overrides allowsFullSwipe of an edge (on | off)
//   style trailing dismiss          header: an edge's full-swipe style (fill | close | dismiss)
//   crossings on                    header: the list reports threshold crossings (rule 12)
//   flags godfather watched         header: a row's flags for render lines (comma-separated)
//
//   0.000 drag godfather -60        inputs: <seconds> drag <row> <dx> [dy=<n>]
//   0.120 release godfather         release <row> [dx=<n>] [vx=<n>]
//   0.200 tap godfather delete      tap <row> <action>
//   0.300 close godfather           close <row> | close *     (* = every row)
//   0.400 remove godfather          remove <row>
//   0.450 open godfather leading    open <row> <edge>
//   0.460 perform godfather delete  perform <row> <action>
//   0.470 peek godfather            peek <row> [edge]
//   0.620 timer godfather           the close timer of <row>; it must have been scheduled by an
//                                   effect and be due exactly now (the replayer keeps the timers)
//   3.460 confirm-timer godfather   the confirmation timer of <row>, likewise
//
//   => row godfather open -70       expectations of the input above: <phase> <offset> [rest <n>]
//   => row godfather closed         (rest defaults to the offset for open/fired, to 0 for dragging)
//   => row godfather confirming -70 pending 0     [pending <index of the action on its edge>]
//   => effect fire godfather delete           fire <row> <action>
//   => effect schedule close godfather 0.5    schedule close <row> <seconds>
//   => effect cancel close godfather          cancel close <row>
//   => effect closed heat                     closed <row>
//   => effect pending godfather delete        pending <row> <action>
//   => effect schedule confirm godfather 3    schedule confirm <row> <seconds>
//   => effect cancel confirm godfather        cancel confirm <row>
//   => effect crossed godfather open out      crossed <row> <open|full> <out|back>
//   => effect scroll godfather                scroll <row>
//   => scrolling godfather                    the row whose touch scrolls now (or `none`)
//   => error not-revealed godfather watched   not-revealed | unknown-action | firing <row> <action>
//   => error no-buttons godfather leading     no-buttons <row> <edge>
//   => render godfather trailing delete@320+70   <edge|none> [full] then buttons left to right
//
// Exhaustive, like the TestStore: the effect lines are exactly the effects, in order; every row
// whose state changed has a row line, and a change of the scrolling row a scrolling line; a refused
// input has exactly its error line and nothing else.
// Render lines are optional checks. Timers due at or before an input's time must be replayed
// (with their `timer` line) before it.

struct Recording: Equatable {
    var layoutName = "standard"
    var viewport = Viewport()
    var buttonWidth: Double?
    var fullSwipe: [Edge: Bool] = [:]
    var styles: [Edge: FullSwipeStyle] = [:]
    var crossings = false
    var flags: [RowID: RowFlags] = [:]
    var steps: [Step] = []

    struct Step: Equatable {
        var time: Double
        var event: Event
        var expectations: [Expectation] = []
        var line = 0
    }

    enum Event: Equatable {
        case input(Input)
        case timer(row: RowID)
        case confirmTimer(row: RowID)
    }

    enum Expectation: Equatable {
        case row(RowID, RowState)
        case effect(Effect)
        case error(SwipeError)
        case render(row: RowID, edge: Edge?, fullSwipe: Bool, buttons: [String])
        case scrolling(RowID?)
    }

    var layout: Layout {
        get throws {
            var layout: Layout
            switch layoutName {
            case "standard": layout = MovieLayout.standard
            case "demo000": layout = MovieLayout.demo000
            case "confirm":
                layout = MovieLayout.standard
                layout.trailing[0].confirm = true
                layout.leading[1].confirm = true
            default: throw ParseError(line: 0, message: "unknown layout \(layoutName)")
            }
            if let buttonWidth { layout.buttonWidth = buttonWidth }
            if let on = fullSwipe[.leading] { layout.allowsFullSwipeLeading = on }
            if let on = fullSwipe[.trailing] { layout.allowsFullSwipeTrailing = on }
            if let style = styles[.leading] { layout.fullSwipeStyleLeading = style }
            if let style = styles[.trailing] { layout.fullSwipeStyleTrailing = style }
            return layout
        }
    }
}

struct ParseError: Error, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "line \(line): \(message)" }
}

extension Recording {
    init(parsing text: String) throws {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            let content = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = words.first else { continue }
            func fail(_ message: String) -> ParseError { ParseError(line: lineNumber, message: message) }
            func number(_ word: String) throws -> Double {
                guard let value = Double(word) else { throw fail("not a number: \(word)") }
                return value
            }
            func arity(_ n: Int) throws {
                guard words.count == n else { throw fail("expected \(n) words, got \(words.count)") }
            }
            switch first {
            case "layout":
                try arity(2)
                layoutName = words[1]
                guard (try? layout) != nil else { throw fail("unknown layout \(words[1])") }
            case "viewport":
                try arity(3)
                guard let direction = Direction(rawValue: words[2]) else { throw fail("bad direction") }
                viewport = Viewport(width: try number(words[1]), direction: direction)
            case "buttonwidth":
                try arity(2)
                buttonWidth = try number(words[1])
            case "fullswipe":
                try arity(3)
                guard let edge = Edge(rawValue: words[1]), ["on", "off"].contains(words[2]) else {
                    throw fail("fullswipe <leading|trailing> <on|off>")
                }
                fullSwipe[edge] = words[2] == "on"
            case "style":
                try arity(3)
                guard let edge = Edge(rawValue: words[1]), let style = FullSwipeStyle(rawValue: words[2])
                else {
                    throw fail("style <leading|trailing> <fill|close|dismiss>")
                }
                styles[edge] = style
            case "crossings":
                try arity(2)
                guard ["on", "off"].contains(words[1]) else { throw fail("crossings <on|off>") }
                crossings = words[1] == "on"
            case "flags":
                guard words.count >= 2 else { throw fail("flags <row> [a,b]") }
                flags[words[1]] = words.count > 2 ? Set(words[2].split(separator: ",").map(String.init)) : []
            case "=>":
                guard !steps.isEmpty else { throw fail("expectation before any input") }
                steps[steps.count - 1].expectations.append(
                    try Self.expectation(Array(words.dropFirst()), fail))
            default:
                let time = try number(first)
                if let last = steps.last, time < last.time { throw fail("time goes backwards") }
                guard words.count >= 3 else { throw fail("<time> <verb> <row> ...") }
                let row = words[2]
                let event: Event
                switch words[1] {
                case "drag":
                    guard words.count == 4 || (words.count == 5 && words[4].hasPrefix("dy=")) else {
                        throw fail("drag <row> <dx> [dy=<n>]")
                    }
                    let dy = words.count == 5 ? try number(String(words[4].dropFirst(3))) : nil
                    event = .input(.dragChanged(row: row, dx: try number(words[3]), dy: dy))
                case "release":
                    var dx: Double?
                    var vx: Double?
                    for word in words.dropFirst(3) {
                        if word.hasPrefix("dx=") {
                            dx = try number(String(word.dropFirst(3)))
                        } else if word.hasPrefix("vx=") {
                            vx = try number(String(word.dropFirst(3)))
                        } else {
                            throw fail("release takes dx= and vx=")
                        }
                    }
                    event = .input(.released(row: row, dx: dx, vx: vx))
                case "tap":
                    try arity(4)
                    event = .input(.tapped(row: row, action: words[3]))
                case "close":
                    try arity(3)
                    event = .input(.close(row: row == "*" ? nil : row))
                case "remove":
                    try arity(3)
                    event = .input(.rowRemoved(row: row))
                case "open":
                    try arity(4)
                    guard let edge = Edge(rawValue: words[3]) else { throw fail("bad edge") }
                    event = .input(.open(row: row, edge: edge))
                case "perform":
                    try arity(4)
                    event = .input(.perform(row: row, action: words[3]))
                case "peek":
                    guard words.count == 3 || words.count == 4 else { throw fail("peek <row> [edge]") }
                    var edge: Edge?
                    if words.count == 4 {
                        guard let e = Edge(rawValue: words[3]) else { throw fail("bad edge") }
                        edge = e
                    }
                    event = .input(.peek(row: row, edge: edge))
                case "timer":
                    try arity(3)
                    event = .timer(row: row)
                case "confirm-timer":
                    try arity(3)
                    event = .confirmTimer(row: row)
                default:
                    throw fail("unknown input \(words[1])")
                }
                steps.append(Step(time: time, event: event, line: lineNumber))
            }
        }
    }

    private static func expectation(
        _ w: [String], _ fail: (String) -> ParseError
    ) throws -> Expectation {
        func number(_ word: String) throws -> Double {
            guard let value = Double(word) else { throw fail("not a number: \(word)") }
            return value
        }
        switch (w.first, w.count) {
        case ("row", 3) where w[2] == "closed":
            return .row(w[1], .closed)
        case ("row", 4), ("row", 6), ("row", 8):
            guard let phase = Phase(rawValue: w[2]), phase != .closed else { throw fail("bad phase") }
            let offset = try number(w[3])
            var rest = phase == .dragging || phase == .peeking ? 0 : offset
            var pending: Int?
            for i in stride(from: 4, to: w.count, by: 2) {
                switch w[i] {
                case "rest": rest = try number(w[i + 1])
                case "pending":
                    guard let index = Int(w[i + 1]) else { throw fail("bad pending index") }
                    pending = index
                default: throw fail("expected rest <n> or pending <n>")
                }
            }
            return .row(w[1], RowState(offset: offset, restingOffset: rest, phase: phase, pending: pending))
        case ("effect", 4) where w[1] == "fire":
            return .effect(.fire(row: w[2], action: w[3]))
        case ("effect", 5) where w[1] == "schedule" && w[2] == "close":
            return .effect(.schedule(.close(row: w[3]), after: try number(w[4])))
        case ("effect", 4) where w[1] == "cancel" && w[2] == "close":
            return .effect(.cancel(.close(row: w[3])))
        case ("effect", 3) where w[1] == "closed":
            return .effect(.closed(row: w[2]))
        case ("effect", 4) where w[1] == "pending":
            return .effect(.pending(row: w[2], action: w[3]))
        case ("effect", 5) where w[1] == "schedule" && w[2] == "confirm":
            return .effect(.schedule(.confirmTimeout(row: w[3]), after: try number(w[4])))
        case ("effect", 4) where w[1] == "cancel" && w[2] == "confirm":
            return .effect(.cancel(.confirmTimeout(row: w[3])))
        case ("effect", 5) where w[1] == "crossed":
            guard let threshold = Crossing.Threshold(rawValue: w[3]),
                let direction = Crossing.Direction(rawValue: w[4])
            else { throw fail("crossed <row> <open|full> <out|back>") }
            return .effect(.crossed(row: w[2], Crossing(threshold, direction)))
        case ("effect", 3) where w[1] == "scroll":
            return .effect(.scroll(row: w[2]))
        case ("scrolling", 2):
            return .scrolling(w[1] == "none" ? nil : w[1])
        case ("error", 4) where w[1] == "no-buttons":
            guard let edge = Edge(rawValue: w[3]) else { throw fail("bad edge") }
            return .error(.noButtons(row: w[2], edge: edge))
        case ("error", 4) where w[1] == "not-revealed":
            return .error(.notRevealed(row: w[2], action: w[3]))
        case ("error", 4) where w[1] == "unknown-action":
            return .error(.unknownAction(row: w[2], action: w[3]))
        case ("error", 4) where w[1] == "firing":
            return .error(.firing(row: w[2], action: w[3]))
        case ("render", _) where w.count >= 3:
            let edge: Edge?
            if w[2] == "none" {
                edge = nil
            } else if let e = Edge(rawValue: w[2]) {
                edge = e
            } else {
                throw fail("bad edge \(w[2])")
            }
            let full = w.count > 3 && w[3] == "full"
            return .render(row: w[1], edge: edge, fullSwipe: full, buttons: Array(w.dropFirst(full ? 4 : 3)))
        default:
            throw fail("bad expectation: \(w.joined(separator: " "))")
        }
    }
}

// MARK: Writing (the recorder side: a session in, the text a fixture would hold out)

extension Recording {
    var text: String {
        var lines = [
            "layout \(layoutName)", "viewport \(Self.format(viewport.width)) \(viewport.direction.rawValue)",
        ]
        if let buttonWidth { lines.append("buttonwidth \(Self.format(buttonWidth))") }
        for edge in Edge.allCases {
            if let on = fullSwipe[edge] { lines.append("fullswipe \(edge.rawValue) \(on ? "on" : "off")") }
            if let style = styles[edge] { lines.append("style \(edge.rawValue) \(style.rawValue)") }
        }
        if crossings { lines.append("crossings on") }
        for (row, set) in flags.sorted(by: { $0.key < $1.key }) {
            lines.append("flags \(row) \(set.sorted().joined(separator: ","))")
        }
        for step in steps {
            lines.append("\(Self.format(step.time)) \(Self.describe(step.event))")
            lines += step.expectations.map { "=> " + Self.describe($0) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Shortest text that parses back to the same Double ("-70", "0.1", "12.345").
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return "\(value)"
    }

    static func describe(_ event: Event) -> String {
        switch event {
        case let .timer(row): return "timer \(row)"
        case let .confirmTimer(row): return "confirm-timer \(row)"
        case let .input(input):
            switch input {
            case let .dragChanged(row, dx, dy):
                return "drag \(row) \(format(dx))" + (dy.map { " dy=\(format($0))" } ?? "")
            case let .released(row, dx, vx):
                return
                    (["release", row]
                    + [dx.map { "dx=\(format($0))" }, vx.map { "vx=\(format($0))" }]
                    .compactMap { $0 }).joined(separator: " ")
            case let .tapped(row, action): return "tap \(row) \(action)"
            case let .close(row): return "close \(row ?? "*")"
            case let .timerFired(row): return "timer \(row)"
            case let .rowRemoved(row): return "remove \(row)"
            case let .open(row, edge): return "open \(row) \(edge.rawValue)"
            case let .perform(row, action): return "perform \(row) \(action)"
            case let .confirmTimedOut(row): return "confirm-timer \(row)"
            case let .peek(row, edge): return "peek \(row)" + (edge.map { " \($0.rawValue)" } ?? "")
            }
        }
    }

    static func describe(_ expectation: Expectation) -> String {
        switch expectation {
        case let .row(row, state):
            if state.phase == .closed { return "row \(row) closed" }
            let defaultRest = state.phase == .dragging || state.phase == .peeking ? 0 : state.offset
            let rest = state.restingOffset == defaultRest ? "" : " rest \(format(state.restingOffset))"
            let pending = state.pending.map { " pending \($0)" } ?? ""
            return "row \(row) \(state.phase.rawValue) \(format(state.offset))\(rest)\(pending)"
        case let .effect(effect):
            switch effect {
            case let .fire(row, action): return "effect fire \(row) \(action)"
            case let .schedule(.close(row), after): return "effect schedule close \(row) \(format(after))"
            case let .cancel(.close(row)): return "effect cancel close \(row)"
            case let .closed(row): return "effect closed \(row)"
            case let .pending(row, action): return "effect pending \(row) \(action)"
            case let .schedule(.confirmTimeout(row), after):
                return "effect schedule confirm \(row) \(format(after))"
            case let .cancel(.confirmTimeout(row)): return "effect cancel confirm \(row)"
            case let .crossed(row, crossing):
                return "effect crossed \(row) \(crossing.threshold.rawValue) \(crossing.direction.rawValue)"
            case let .scroll(row): return "effect scroll \(row)"
            }
        case let .scrolling(row): return "scrolling \(row ?? "none")"
        case let .error(.notRevealed(row, action)): return "error not-revealed \(row) \(action)"
        case let .error(.unknownAction(row, action)): return "error unknown-action \(row) \(action)"
        case let .error(.firing(row, action)): return "error firing \(row) \(action)"
        case let .error(.noButtons(row, edge)): return "error no-buttons \(row) \(edge.rawValue)"
        case let .render(row, edge, full, buttons):
            return (["render", row, edge?.rawValue ?? "none"] + (full ? ["full"] : []) + buttons)
                .joined(separator: " ")
        }
    }
}
