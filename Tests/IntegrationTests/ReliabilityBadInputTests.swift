// Reliability: a generated corpus of malformed request lines. Every non-blank line gets exactly
// one error reply (in order, with the expected code where the case is known), blank lines get
// none, the daemon keeps running, and the shared state is unchanged.

import Foundation
import Glibc
import TestSupport
import XCTest

final class ReliabilityBadInputTests: XCTestCase {
    /// One line of the corpus: its bytes (never a raw `\n`), the code its reply must carry (nil:
    /// any error code), the `id` the reply must echo, and a word that the message must hold.
    struct Case {
        var bytes: [UInt8]
        var code: String?
        var id: Int? = nil
        var mentions: String? = nil
        var what: String

        var isBlank: Bool { bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D } }
    }

    /// The ops and their arguments, as `help` says.
    struct OpInfo {
        var name: String
        var args: [Arg]
    }

    /// An argument as `help` declares it: with a valid value of its own (the first of the values
    /// it takes, when it names them), and whether `null` is one.
    struct Arg {
        var name: String
        var type: String
        var required: Bool
        var valid: String
        var nullable: Bool
    }

    static func validValue(_ type: String) -> String {
        switch type {
        case "string": "\"godfather\""
        case "integer": "1"
        case "number": "200"
        case "boolean": "true"
        case "actions": "[{\"action\":\"flag\"}]"
        default: "null"
        }
    }

    static func wrongValues(_ type: String) -> [String] {
        let all = [
            "\"text\"", "\"\"", "1", "-1", "1.5", "true", "false", "null", "[]", "{}", "[1]",
            "{\"a\":1}", "\"1\"", "\"true\"",
        ]
        switch type {
        case "string": return all.filter { !$0.hasPrefix("\"") }
        case "integer":
            return all.filter { $0 != "1" } + ["1e300", "9223372036854775808", "-9223372036854775809", "0.5"]
        case "number": return all.filter { !["1", "-1", "1.5"].contains($0) } + ["1e300", "-1e10"]
        case "boolean": return all.filter { $0 != "true" && $0 != "false" }
        case "actions":
            return all.filter { $0 != "[]" } + [
                "[{}]", "[{\"action\":1}]", "[{\"action\":\"a\",\"x\":\"y\"}]",
                "[{\"action\":\"\"}]", "[{\"action\":\"a\",\"role\":\"b\"}]",
                "[" + Array(repeating: "{\"action\":\"a\"}", count: 9).joined(separator: ",") + "]",
            ]
        default: return []
        }
    }

    static func corpus(ops: [OpInfo]) -> [Case] {
        var rng = SplitMix64(seed: 0x5eed_cafe)
        var cases: [Case] = []
        var nextID = 1
        func add(_ text: String, _ code: String?, id: Int? = nil, mentions: String? = nil, _ what: String) {
            cases.append(Case(bytes: Array(text.utf8), code: code, id: id, mentions: mentions, what: what))
        }
        let valid = [
            #"{"op":"ping","id":1}"#, #"{"op":"list"}"#, #"{"op":"history","from":0,"limit":10}"#,
            #"{"op":"toggle-watched","movie":"godfather","key":"k1"}"#, #"{"op":"add","title":"Alien"}"#,
            #"{"op":"drag","movie":"seven","dx":-60.5}"#,
            #"{"op":"configure","leading":[{"action":"a","label":"A"}]}"#,
            #"{"op":"viewport","width":390,"direction":"rtl"}"#,
            #"{"op":"tap","movie":"seven","action":"delete"}"#,
            #"{"id":{"a":[1,2,{"b":null}]},"op":"remove","movie":"matrix","expect":3}"#,
            #"{"op":"release","movie":"seven","dx":-80,"vx":-400e0}"#, #"{"op":"subscribe","from":0}"#,
            "{\"op\":\"add\",\"title\":\"caf\u{e9} \u{1F3AC} \\u00e9\\ud83c\\udfac\"}",
        ]
        // 1. Truncated JSON: every strict prefix of valid requests.
        for line in valid {
            let bytes = Array(line.utf8)
            for n in 1..<bytes.count {
                // A prefix ending inside a multi-byte character is invalid UTF-8 as well: still bad-json.
                cases.append(
                    Case(bytes: Array(bytes[..<n]), code: "bad-json", what: "truncated \(line) at \(n)"))
            }
        }
        // 2. Invalid UTF-8 and raw control characters (NUL included) inside strings and outside.
        let invalidUTF8: [[UInt8]] = [
            [0xC0, 0xAF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x9F],
            [0x80], [0xFF], [0xFE], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC3],
            [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x80, 0x80, 0xAF], [0xE2, 0x82],
        ]
        for _ in 0..<(3500 * (soak ? 10 : 1)) {
            var bytes = Array(valid[Int(rng.next() % UInt64(valid.count))].utf8)
            // A position inside a string's contents: right after a quote that opens one.
            var opening: [Int] = []
            var inString = false
            var escaped = false
            for (i, b) in bytes.enumerated() {
                if inString {
                    if escaped {
                        escaped = false
                    } else if b == 0x5C {
                        escaped = true
                    } else if b == 0x22 {
                        inString = false
                    }
                } else if b == 0x22 {
                    inString = true
                    opening.append(i)
                }
            }
            let at = opening[Int(rng.next() % UInt64(opening.count))] + 1
            if rng.next() % 2 == 0 {
                let bad = invalidUTF8[Int(rng.next() % UInt64(invalidUTF8.count))]
                bytes.insert(contentsOf: bad, at: at)
                cases.append(Case(bytes: bytes, code: "bad-json", what: "invalid UTF-8 \(bad)"))
            } else {
                var control = UInt8(rng.next() % 32)
                if control == 0x0A { control = 0 }
                bytes.insert(control, at: at)
                cases.append(Case(bytes: bytes, code: "bad-json", what: "raw control \(control)"))
            }
        }
        for bad in invalidUTF8 {
            cases.append(Case(bytes: bad, code: "bad-json", what: "bare invalid UTF-8"))
            cases.append(
                Case(
                    bytes: Array(#"{"op":"ping"}"#.utf8) + bad, code: "bad-json",
                    what: "trailing invalid UTF-8"))
            cases.append(
                Case(
                    bytes: bad + Array(#"{"op":"ping"}"#.utf8), code: "bad-json",
                    what: "leading invalid UTF-8"))
        }
        cases.append(
            Case(bytes: [0xEF, 0xBB, 0xBF] + Array(#"{"op":"ping"}"#.utf8), code: "bad-json", what: "a BOM"))
        cases.append(Case(bytes: [0], code: "bad-json", what: "a NUL"))
        cases.append(Case(bytes: Array(#"{"op":"ping"}"#.utf8) + [0], code: "bad-json", what: "trailing NUL"))
        cases.append(Case(bytes: [0x00, 0x00, 0x00, 0x00], code: "bad-json", what: "NULs"))
        // 3. Random bytes (no newline); blank ones are expected to get no reply.
        for _ in 0..<(6000 * (soak ? 10 : 1)) {
            let count = 1 + Int(rng.next() % 300)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            for i in bytes.indices where bytes[i] == 0x0A { bytes[i] = 0x0B }
            cases.append(Case(bytes: bytes, code: nil, what: "random bytes"))
        }
        for _ in 0..<100 {
            let whitespace: [UInt8] = [0x20, 0x09, 0x0D]
            cases.append(
                Case(
                    bytes: (0..<(1 + Int(rng.next() % 20))).map { _ in whitespace[Int(rng.next() % 3)] },
                    code: nil, what: "blank"))
        }
        // 4. Scalars and arrays instead of objects, and other non-JSON.
        for text in [
            "[]", #"[{"op":"ping"}]"#, "1", "-0", "1e5", #""ping""#, "true", "false", "null", "[1,2,3]",
            "{", "}", "[", "]", ":", ",", "nul", "tru", "'op'", "{'op':'ping'}", #"{"op":"ping",}"#,
            #"{"op":"ping"}{"op":"ping"}"#, #"{"op":"ping"} 1"#, #"{op:"ping"}"#, #"{"op" "ping"}"#,
            #"{"op":"ping""id":1}"#, "010", "+1", ".5", "1.", "1e", "-", #""\x""#, #""\u12""#,
            #"{"op":"\ud800"}"#, #"{"op":"\udc00\ud800"}"#, #"{"op":"ping","x":[1,]}"#, "//", "/* */",
            #"{"op":"ping"}//"#,
        ] {
            add(text, "bad-json", text)
        }
        // 5. Deep nesting (10,000 levels), closed and unclosed, at the top and inside an argument.
        for depth in [65, 100, 10_000] {
            add(
                String(repeating: "[", count: depth) + String(repeating: "]", count: depth), "bad-json",
                "[]×\(depth)")
            add(String(repeating: "[", count: depth), "bad-json", "[×\(depth)")
            add(
                String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth),
                "bad-json",
                "{}×\(depth)")
            add(
                #"{"op":"ping","x":"# + String(repeating: "[", count: depth)
                    + String(repeating: "]", count: depth) + "}",
                "bad-json", "argument nested \(depth)")
            add(
                #"{"op":"ping","id":"# + String(repeating: "[", count: depth)
                    + String(repeating: "]", count: depth) + "}",
                "bad-json", "id nested \(depth)")
        }
        // 6. Lines over --max-line (65,536 bytes): too-large, whatever they hold.
        add(String(repeating: "a", count: 200_000), "too-large", "200 KB of a")
        add(
            #"{"op":"ping","id":1,"x":""# + String(repeating: "z", count: 200_000) + #""}"#, "too-large",
            "200 KB ping")
        add(
            #"{"op":"add","title":""# + String(repeating: "é", count: 100_000) + #""}"#, "too-large",
            "200 KB add")
        cases.append(
            Case(
                bytes: (0..<200_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) | 0x80 },
                code: "too-large", what: "200 KB of high bytes"))
        add(String(repeating: "[", count: 70_000), "too-large", "70 KB of [")
        // 7. Huge and non-finite numbers.
        for number in [
            "1e999", "-1e999", "1e309", "NaN", "Infinity", "-Infinity", "inf", "nan", "0x10",
            "1" + String(repeating: "0", count: 400), "1e", "--1", "1e+", "Infinity1",
        ] {
            add(#"{"op":"drag","movie":"godfather","dx":\#(number)}"#, "bad-json", "dx \(number)")
            add(#"{"op":"history","limit":\#(number)}"#, "bad-json", "limit \(number)")
        }
        for (arg, number) in [("dx", "1e300"), ("dx", "1e10"), ("dx", "-1e308")] {
            nextID += 1
            add(
                #"{"id":\#(nextID),"op":"drag","movie":"godfather","\#(arg)":\#(number)}"#, "bad-request",
                id: nextID,
                mentions: arg, "\(arg) \(number)")
        }
        for (arg, number) in [
            ("limit", "1e300"), ("limit", "0"), ("limit", "1001"), ("from", "-1"), ("from", "1.5"),
            ("from", "18446744073709551616"), ("from", "9223372036854775808"),
        ] {
            nextID += 1
            add(
                #"{"id":\#(nextID),"op":"history","\#(arg)":\#(number)}"#, "bad-request", id: nextID,
                mentions: arg,
                "\(arg) \(number)")
        }
        // 8. op itself: missing, wrong types, unknown.
        for text in [
            "{}", #"{"id":1}"#, #"{"op":1}"#, #"{"op":null}"#, #"{"op":["ping"]}"#, #"{"op":{}}"#,
            #"{"op":true}"#,
        ] {
            add(text, "bad-request", text)
        }
        for name in [
            "", "fly", "PING", "ping ", " ping", "toggle_watched", String(repeating: "x", count: 2000),
            "pïng", "\\u0000",
        ] {
            nextID += 1
            add(#"{"id":\#(nextID),"op":"\#(name)"}"#, "unknown-op", id: nextID, "op \(name.prefix(20))")
        }
        // 9. Every argument of every op with every wrong type; unknown arguments; duplicate keys;
        //    strings over the limits. Every other required argument is valid, so the error is this one.
        for op in ops {
            let required = op.args.filter(\.required)
            func line(_ override: (name: String, value: String)?, extra: [(String, String)] = [], id: Int)
                -> String
            {
                var members = [#""op":"\#(op.name)""#, #""id":\#(id)"#]
                for arg in required where arg.name != override?.name {
                    members.append(#""\#(arg.name)":\#(arg.valid)"#)
                }
                if let override { members.append(#""\#(override.name)":\#(override.value)"#) }
                for (k, v) in extra { members.append(#""\#(k)":\#(v)"#) }
                // Argument order must not matter.
                if id % 2 == 0 { members.reverse() }
                return "{" + members.joined(separator: ",") + "}"
            }
            for arg in op.args where arg.type != "any" {
                for wrong in wrongValues(arg.type) where !(arg.nullable && wrong == "null") {
                    nextID += 1
                    add(
                        line((arg.name, wrong), id: nextID), "bad-request", id: nextID, mentions: arg.name,
                        "\(op.name).\(arg.name) = \(wrong)")
                }
                if arg.type == "string" {
                    nextID += 1
                    add(
                        line((arg.name, "\"" + String(repeating: "s", count: 1025) + "\""), id: nextID),
                        "bad-request",
                        id: nextID, mentions: arg.name, "\(op.name).\(arg.name) 1025 bytes")
                }
                nextID += 1
                add(
                    line(
                        nil, extra: [(arg.name, arg.valid), (arg.name, arg.valid)],
                        id: nextID),
                    "bad-request", id: nextID, mentions: arg.name, "\(op.name): duplicate \(arg.name)")
            }
            for arg in required {
                nextID += 1
                var members = [#""op":"\#(op.name)""#, #""id":\#(nextID)"#]
                for other in required where other.name != arg.name {
                    members.append(#""\#(other.name)":\#(other.valid)"#)
                }
                add(
                    "{" + members.joined(separator: ",") + "}", "bad-request", id: nextID, mentions: arg.name,
                    "\(op.name) without \(arg.name)")
            }
            for unknown in ["bogus", "ID", "Op", "", "movie ", "op2"] {
                nextID += 1
                add(
                    line(nil, extra: [(unknown, "1")], id: nextID), "bad-request", id: nextID,
                    "\(op.name) + \(unknown)")
            }
            nextID += 1
            add(
                #"{"op":"\#(op.name)","op":"\#(op.name)","id":\#(nextID)}"#, "bad-request", id: nextID,
                mentions: "op",
                "\(op.name): duplicate op")
            nextID += 1
            add(
                line(nil, extra: [("id", "2")], id: nextID), "bad-request", mentions: "id",
                "\(op.name): duplicate id")
        }
        nextID += 1
        add(
            #"{"id":\#(nextID),"op":"toggle-watched","movie":"godfather","key":"\#(String(repeating: "k", count: 129))"}"#,
            "bad-request", id: nextID, mentions: "key", "key of 129 bytes")
        return cases
    }

    func testMalformedLinesGetExactlyOneErrorEachAndChangeNothing() throws {
        let dir = try TemporaryDirectory("swiped-bad")
        let daemon = try AbuseDaemon(state: dir.file("state"), socket: dir.file("s.sock"))
        let observer = try daemon.connect()
        // Some history first, so that "unchanged" means something.
        _ = try observer.request(["op": "toggle-watched", "movie": "matrix"])
        _ = try observer.request(["op": "add", "title": "Alien"])
        let before = try observer.listMovies()
        let historyBefore = try observer.wholeHistory().count

        // The ops and arguments from `help`.
        let help = try observer.request(["op": "help"])
        let ops: [OpInfo] = try XCTUnwrap(help["ops"] as? [[String: Any]]).map { op in
            OpInfo(
                name: op["op"] as? String ?? "?",
                args: (op["args"] as? [[String: Any]] ?? []).map {
                    let type = $0["type"] as? String ?? "?"
                    return Arg(
                        name: $0["name"] as? String ?? "?", type: type,
                        required: $0["required"] as? Bool ?? false,
                        valid: ($0["values"] as? [String])?.first.map { "\"\($0)\"" }
                            ?? Self.validValue(type),
                        nullable: $0["nullable"] as? Bool ?? false)
                })
        }
        XCTAssertGreaterThanOrEqual(ops.count, 17, "help lists fewer ops than protocol.md")

        let cases = Self.corpus(ops: ops)
        let expected = cases.filter { !$0.isBlank }
        XCTAssertGreaterThanOrEqual(expected.count, 10_000)
        for c in cases { precondition(!c.bytes.contains(0x0A), "a corpus line holds a newline: \(c.what)") }

        let client = try daemon.connect()
        var stream: [UInt8] = []
        for c in cases { stream += c.bytes + [0x0A] }
        stream += Array(#"{"op":"ping","id":"end"}"#.utf8) + [0x0A]
        // A writer thread, so that neither side blocks on a full socket buffer.
        let fd = client.fileDescriptor
        let bytes = UncheckedBox(stream)
        let writeError = Locked<Int32>(0)
        let writer = Thread {
            var offset = 0
            bytes.value.withUnsafeBytes { raw in
                while offset < raw.count {
                    // Odd-sized writes, so lines straddle reads.
                    let chunk = min(raw.count - offset, 1 + (offset * 7919) % 9000)
                    let n = send(fd, raw.baseAddress! + offset, chunk, Int32(MSG_NOSIGNAL))
                    if n < 0 {
                        if errno == EINTR { continue }
                        writeError.with { $0 = errno }
                        return
                    }
                    offset += n
                }
            }
        }
        writer.start()

        var codes: [String: Int] = [:]
        for (index, c) in expected.enumerated() {
            let reply: [String: Any]
            do {
                reply = try client.readReply(timeout: .seconds(20))
            } catch {
                XCTFail(
                    "no reply for line \(index) (\(c.what)): \(error); daemon running: \(daemon.isRunning)")
                return
            }
            XCTAssertEqual(reply["ok"] as? Bool, false, "line \(index) (\(c.what)) was accepted: \(reply)")
            let error = reply["error"] as? [String: Any]
            let code = error?["code"] as? String ?? "?"
            codes[code, default: 0] += 1
            if let want = c.code {
                XCTAssertEqual(code, want, "line \(index) (\(c.what)): \(reply)")
            } else {
                XCTAssertTrue(
                    ["bad-json", "bad-request", "unknown-op"].contains(code),
                    "line \(index) (\(c.what)): \(reply)")
            }
            if let id = c.id {
                XCTAssertEqual(reply["id"] as? Int, id, "line \(index) (\(c.what)): id not echoed")
            }
            if let word = c.mentions {
                XCTAssertTrue(
                    (error?["message"] as? String ?? "").contains(word),
                    "line \(index) (\(c.what)): the message does not name \(word): \(reply)")
            }
            if (testRun?.totalFailureCount ?? 0) > 20 { return }
        }
        // Exactly one each: the next reply is the final ping's.
        let last = try client.readReply(timeout: .seconds(20))
        XCTAssertEqual(last["id"] as? String, "end", "an extra reply: \(last)")
        XCTAssertEqual(last["ok"] as? Bool, true)
        XCTAssertTrue(client.events.isEmpty, "unexpected events: \(client.events.prefix(3))")
        XCTAssertEqual(writeError.get, 0)
        print(
            "bad input: \(cases.count) lines (\(cases.count - expected.count) blank), replies by code: \(codes)"
        )

        // The daemon is fine and nothing changed.
        XCTAssertTrue(daemon.isRunning)
        let after = try observer.listMovies()
        XCTAssertEqual(after.seq, before.seq)
        XCTAssertEqual(after.movies, before.movies)
        XCTAssertEqual(try observer.wholeHistory().count, historyBefore)
        XCTAssertEqual(try observer.request(["op": "ping"])["ok"] as? Bool, true)
        daemon.kill(SIGTERM)
        XCTAssertEqual(try daemon.wait(), .exited(0))
    }
}
