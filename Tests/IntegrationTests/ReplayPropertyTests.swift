// Issue 18's property through the real daemon: a recording replayed on the pure engine gives,
// byte for byte, the Row objects the live connection received (replies and `row` events), in
// order. 1,000 random sessions, 40 at a time on one daemon: drags and releases (with and
// without velocity, full swipes that fire bound actions), taps, open, perform, closes, RTL and
// other widths, custom layouts (confirming actions among them), compact rows, timers (the close
// after a full swipe, a confirmation's 3 s timeout), and movie changes by another client while
// recording. Every session's rows are compared in process (Wire's Replay, the code of
// `swipectl replay`), and every 25th also through the swipectl binary with --expect.
import Foundation
import JSONCodec
import TestSupport
import Wire
import XCTest

final class ReplayPropertyTests: XCTestCase {
    static let sessions = 1_000
    static let batch = 40

    /// One recording connection: every line it got since `record` was turned on, in order.
    final class Recorded {
        let client: LineClient
        var lines: [[UInt8]] = []
        var nextID = 1
        /// Movies this session drags (a handful, so that rows meet again).
        var movies: [String] = []
        var layoutActions: [String] = []
        /// The actions of its layout that ask to confirm.
        var confirmActions: [String] = []
        var width = 390.0

        init(_ client: LineClient) { self.client = client }

        /// Sends `body` (members without the braces) with an id; keeps every line up to and
        /// including its reply; returns the reply's members.
        @discardableResult
        func request(_ body: String) throws -> [JSONRawMember] {
            let id = nextID
            nextID += 1
            try client.send("{\"id\":\(id),\(body)}")
            while true {
                guard let line = try client.readLine(timeout: .seconds(10)) else {
                    throw LineClientError("the daemon closed the connection")
                }
                let bytes = Array(line.utf8)
                lines.append(bytes)
                let members = try bytes.withUnsafeBytes { try JSONParser.parseObjectMembers($0) }
                if members.contains(where: { $0.key == "id" && $0.value == .number(JSONNumber(Int64(id))) }) {
                    return members
                }
            }
        }
    }

    var daemon: SwipedDaemon!

    override func setUpWithError() throws {
        daemon = try SwipedDaemon(prefix: "swiped-replay")
    }

    override func tearDownWithError() throws {
        if let daemon { XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError) }
        daemon = nil
    }

    func testReplayingARecordingGivesTheRowsTheLiveSessionGot() throws {
        var rng = SplitMix64(seed: 18)
        let other = try daemon.connect()
        var seen = Counts()
        var ids = try listIDs(other)
        var removed: [String] = []
        let scratch = try TemporaryDirectory("swiped-replay-files")
        var done = 0
        var batchIndex = 0
        while done < Self.sessions {
            let count = min(Self.batch, Self.sessions - done)
            var live: [Recorded] = []
            for _ in 0..<count {
                let r = Recorded(try daemon.connect())
                try setUp(r, ids: ids, &rng, &seen)
                live.append(r)
            }
            // Rounds of one step per session, with the other client's changes between them, and
            // waits that let the daemon's timers fire while recording.
            let rounds = Int.random(in: 12...30, using: &rng)
            for round in 0..<rounds {
                for r in live {
                    // Mostly movies still in the list; now and then one removed (not-found).
                    r.movies = r.movies.map {
                        ids.contains($0) || Int.random(in: 0..<8, using: &rng) == 0
                            ? $0 : ids.randomElement(using: &rng)!
                    }
                    try step(r, &rng, &seen)
                }
                try change(other, &ids, &removed, &rng, &seen)
                if round == rounds / 2 { Thread.sleep(forTimeInterval: 0.6) }
            }
            // A confirmation times out after 3 s: one batch in five starts some and waits.
            let waitsForConfirmations = batchIndex % 5 == 2
            if waitsForConfirmations {
                for r in live {
                    guard let action = r.confirmActions.randomElement(using: &rng) else { continue }
                    let movie = r.movies.first(where: ids.contains) ?? ids[0]
                    try r.request("\"op\":\"perform\",\"movie\":\"\(movie)\",\"action\":\"\(action)\"")
                }
            }
            Thread.sleep(forTimeInterval: waitsForConfirmations ? 3.2 : 0.6)
            for (k, r) in live.enumerated() {
                try check(r, viaSwipectl: (done + k) % 25 == 0 ? scratch : nil, &seen)
                r.client.close()
            }
            done += count
            batchIndex += 1
        }
        // Not a vacuous pass: every kind of thing the issue names happened many times.
        XCTAssertEqual(seen.sessions, Self.sessions)
        XCTAssertGreaterThan(seen.rows, 10_000)
        for (what, n) in [
            ("full swipes that fired", seen.fullSwipes), ("velocity releases", seen.velocityReleases),
            ("close timers", seen.closeTimers), ("confirm timers", seen.confirmTimers),
            ("rtl sessions", seen.rtl), ("custom layouts", seen.customLayouts),
            ("compact sessions", seen.compact), ("movie changes seen", seen.movieChanges),
            ("rows removed by other clients", seen.movieRemovals), ("flags changes", seen.flags),
            ("refused inputs", seen.refused), ("checked by swipectl", seen.swipectl),
        ] {
            XCTAssertGreaterThan(n, 10, what)
        }
    }

    // MARK: - The sessions

    struct Counts {
        var sessions = 0, rows = 0, fullSwipes = 0, velocityReleases = 0, closeTimers = 0
        var confirmTimers = 0, rtl = 0, customLayouts = 0, compact = 0, movieChanges = 0
        var movieRemovals = 0, flags = 0, refused = 0, swipectl = 0
    }

    static let customActions = [
        "watched", "watched-with-friends", "delete", "archive", "flag", "share", "pin", "mute",
    ]

    private func setUp(_ r: Recorded, ids: [String], _ rng: inout SplitMix64, _ seen: inout Counts) throws {
        // Some settings before recording, some after: the recording starts from whatever is set.
        if Bool.random(using: &rng) { try r.request(#""op":"viewport","direction":"rtl""#) }
        try r.request(#""op":"record","on":true"#)
        r.lines = []
        r.movies = (0..<3).map { _ in ids.randomElement(using: &rng)! }
        if Int.random(in: 0..<5, using: &rng) == 0 {
            try r.request(#""op":"options","rows":"compact""#)
            seen.compact += 1
        }
        if Int.random(in: 0..<3, using: &rng) == 0 {
            r.width = Double(Int.random(in: 300...900, using: &rng))
            let direction = Bool.random(using: &rng) ? "rtl" : "ltr"
            try r.request("\"op\":\"viewport\",\"width\":\(Int(r.width)),\"direction\":\"\(direction)\"")
        }
        let reply = try r.request(#""op":"viewport""#)
        if case .object(let viewport)? = reply.first(where: { $0.key == "viewport" })?.value,
            viewport["direction"] == .string("rtl")
        {
            seen.rtl += 1
        }
        if Bool.random(using: &rng) {
            try configure(r, &rng)
            seen.customLayouts += 1
        } else {
            r.layoutActions = ["watched", "watched-with-friends", "delete"]
        }
    }

    private func configure(_ r: Recorded, _ rng: inout SplitMix64) throws {
        let names = Self.customActions.shuffled(using: &rng)
        let leading = Int.random(in: 0...3, using: &rng)
        let trailing = Int.random(in: (leading == 0 ? 1 : 0)...3, using: &rng)
        func action(_ name: String) -> String {
            var fields = ["\"action\":\"\(name)\"", "\"label\":\"\(name.capitalized)\""]
            if Int.random(in: 0..<4, using: &rng) == 0 {
                fields.append("\"confirm\":true")
                r.confirmActions.append(name)
            }
            if name == "watched" { fields.append("\"activeLabel\":\"Unwatch\"") }
            if Int.random(in: 0..<3, using: &rng) == 0 { fields.append("\"role\":\"destructive\"") }
            return "{" + fields.joined(separator: ",") + "}"
        }
        r.confirmActions = []
        let l = names[0..<leading].map(action).joined(separator: ",")
        let t = names[leading..<(leading + trailing)].map(action).joined(separator: ",")
        r.layoutActions = Array(names[0..<(leading + trailing)])
        let width = [50, 70, 90, 120].randomElement(using: &rng)!
        try r.request(
            "\"op\":\"configure\",\"leading\":[\(l)],\"trailing\":[\(t)],\"buttonWidth\":\(width),"
                + "\"allowsFullSwipeLeading\":\(Bool.random(using: &rng)),\"allowsFullSwipeTrailing\":\(Int.random(in: 0..<4, using: &rng) > 0)"
        )
    }

    private func step(_ r: Recorded, _ rng: inout SplitMix64, _ seen: inout Counts) throws {
        let movie = r.movies.randomElement(using: &rng)!
        let m = "\"movie\":\"\(movie)\""
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<45:
            // A swipe: a few drags toward a target, then a release, maybe with velocity.
            let target = Double.random(in: -1.1...1.1, using: &rng) * r.width
            let steps = Int.random(in: 1...5, using: &rng)
            for k in 1...steps {
                let dx = (target * Double(k) / Double(steps) * 4).rounded() / 4
                try r.request("\"op\":\"drag\",\(m),\"dx\":\(dx)")
            }
            switch Int.random(in: 0..<3, using: &rng) {
            case 0:
                try r.request("\"op\":\"release\",\(m)")
            case 1:
                let vx = Int.random(in: -2500...2500, using: &rng)
                seen.velocityReleases += 1
                try r.request("\"op\":\"release\",\(m),\"vx\":\(vx)")
            default:
                try r.request(
                    "\"op\":\"release\",\(m),\"dx\":\(target.rounded()),\"vx\":\(Int.random(in: -900...900, using: &rng))"
                )
                seen.velocityReleases += 1
            }
        case 45..<55:
            try r.request(
                "\"op\":\"open\",\(m),\"edge\":\"\(Bool.random(using: &rng) ? "leading" : "trailing")\"")
        case 55..<70:
            let action = (r.layoutActions + ["nope"]).randomElement(using: &rng)!
            try r.request("\"op\":\"tap\",\(m),\"action\":\"\(action)\"")
        case 70..<78:
            let action = r.layoutActions.randomElement(using: &rng) ?? "watched"
            try r.request("\"op\":\"perform\",\(m),\"action\":\"\(action)\"")
        case 78..<86:
            try r.request("\"op\":\"close\",\(m)")
        case 86..<89:
            try r.request(#""op":"close""#)
        case 89..<92:
            try r.request("\"op\":\"viewport\",\"direction\":\"\(Bool.random(using: &rng) ? "rtl" : "ltr")\"")
        case 92..<94:
            try configure(r, &rng)
        case 94..<96:
            try r.request("\"op\":\"options\",\"rows\":\"\(Bool.random(using: &rng) ? "compact" : "full")\"")
        default:
            try r.request(#""op":"ping""#)
        }
    }

    /// Another client changes the shared list: flags of movies the sessions show, removals
    /// (their rows drop), restores and additions (so that the list never runs out).
    private func change(
        _ other: LineClient, _ ids: inout [String], _ removed: inout [String], _ rng: inout SplitMix64,
        _ seen: inout Counts
    ) throws {
        // Full swipes of the sessions remove movies too: keep at least ten in the list.
        for k in 0..<max(0, 10 - ids.count) {
            if let back = removed.popLast() {
                _ = try other.request(["op": "restore", "movie": back])
            } else {
                _ = try other.request(["op": "add", "title": "Spare \(ids.count + k)"])
            }
        }
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            let pick = Int.random(in: 0..<100, using: &rng)
            if pick < 10, let back = removed.popLast() {
                _ = try other.request(["op": "restore", "movie": back])
            } else if pick < 15 {
                _ = try other.request(["op": "add", "title": "Extra \(ids.count)"])
            } else if pick < 22, let id = ids.randomElement(using: &rng) {
                _ = try other.request(["op": "remove", "movie": id])
            } else if let id = ids.randomElement(using: &rng) {
                let op = Bool.random(using: &rng) ? "toggle-watched" : "toggle-watched-with-friends"
                _ = try other.request(["op": op, "movie": id])
            }
        }
        let now = try listIDs(other)
        removed = Array(Set(removed + ids).subtracting(now))
        ids = now
    }

    private func listIDs(_ client: LineClient) throws -> [String] {
        let reply = try client.request(["op": "list"])
        let movies = reply["movies"] as? [[String: Any]] ?? []
        return movies.compactMap { $0["id"] as? String }
    }

    // MARK: - The comparison

    private func check(_ r: Recorded, viaSwipectl scratch: TemporaryDirectory?, _ seen: inout Counts) throws {
        let reply = try r.request(#""op":"recording""#)
        let liveLines = r.lines.dropLast()
        let raw = try XCTUnwrap(reply.first { $0.key == "recording" })
        let recording = try Recording(json: raw.value)
        XCTAssertFalse(recording.cut)
        let replayed = Replay.run(recording)
        // The live rows, as the raw bytes of each line's "row".
        var live: [[UInt8]] = []
        for line in liveLines {
            let members = try line.withUnsafeBytes { try JSONParser.parseObjectMembers($0) }
            if let row = members.first(where: { $0.key == "row" }) { live.append(Array(line[row.range])) }
        }
        var mine: [[UInt8]] = []
        for step in replayed {
            guard let row = step.row else {
                if case .refused = step.note { seen.refused += 1 }
                continue
            }
            var out = JSONWriter()
            Encode.row(&out, row, form: step.form)
            mine.append(out.bytes)
            if case .fired = step.note, row.fullSwipe { seen.fullSwipes += 1 }
        }
        for entry in recording.entries {
            switch entry.input {
            case .closeTimer: seen.closeTimers += 1
            case .confirmTimer: seen.confirmTimers += 1
            case .movieChanged: seen.movieChanges += 1
            case .movieRemoved: seen.movieRemovals += 1
            case .flags: seen.flags += 1
            default: break
            }
        }
        let firstDifference = zip(live, mine).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        if let i = firstDifference {
            XCTFail(
                "session \(seen.sessions): row \(i + 1) differs\n live:   \(String(decoding: live[i], as: UTF8.self))\n replay: \(String(decoding: mine[i], as: UTF8.self))\n recording: \(String(decoding: r.lines.last!, as: UTF8.self))"
            )
        }
        XCTAssertEqual(live.count, mine.count, "session \(seen.sessions): rows received and replayed")
        seen.rows += live.count
        seen.sessions += 1
        try r.request(#""op":"record","on":false"#)

        guard let scratch else { return }
        // The same through the binary: the recording as a file, the live lines as the expectation.
        let file = scratch.file("session-\(seen.sessions).json")
        var out = JSONWriter()
        out.value(raw.value)
        try Data(out.bytes).write(to: URL(fileURLWithPath: file))
        let expect = liveLines.map { String(decoding: $0, as: UTF8.self) + "\n" }.joined()
        try Data(expect.utf8).write(to: URL(fileURLWithPath: file + ".rows"))
        let result = try Subprocess.run(try Binaries.swipectl, ["replay", file, "--expect", file + ".rows"])
        XCTAssertEqual(result.status, .exited(0), result.standardError)
        XCTAssertEqual(result.standardError, "swipectl: all \(live.count) rows match \(file).rows\n")
        XCTAssertEqual(result.standardOutput.split(separator: "\n").count, replayed.count)
        seen.swipectl += 1
    }
}
