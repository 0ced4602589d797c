// wire-bench: parse and write costs of typical protocol lines, in ns per operation.
// Run a release build: swift build -c release --product wire-bench && .build/release/wire-bench
// An argument runs only the benchmarks whose name contains it (for perf record); a second one
// fixes the iteration count and runs one round, for `perf stat -e instructions:u` on a busy machine.
import JSONCodec
import Wire

let filter = CommandLine.arguments.dropFirst().first
let fixedIterations = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) }

/// Runs `body` for about `seconds` (after a warm-up) and returns the best ns/op of five rounds.
@inline(never)
func measure(_ name: String, _ body: () -> Int) {
    if let filter, !name.contains(filter) { return }
    var sink = 0
    var iterations = fixedIterations ?? 1
    let clock = ContinuousClock()
    // Find an iteration count that takes about 20 ms.
    while fixedIterations == nil {
        let elapsed = clock.measure { for _ in 0..<iterations { sink &+= body() } }
        if elapsed > .milliseconds(20) { break }
        iterations *= 2
    }
    var best = Double.infinity
    for _ in 0..<(fixedIterations == nil ? 5 : 1) {
        let elapsed = clock.measure { for _ in 0..<iterations { sink &+= body() } }
        let (seconds, attoseconds) = elapsed.components
        let ns = (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(iterations)
        best = min(best, ns)
    }
    let padded = name + String(repeating: " ", count: max(0, 44 - name.count))
    let figure = String(Int((best * 10).rounded()))
    print("\(padded) \(figure.dropLast()).\(figure.last!) ns/op   (sink \(sink & 1))")
}

let requests: [(String, String)] = [
    ("ping", #"{"op":"ping"}"#),
    ("drag", #"{"op":"drag","movie":"godfather","dx":-60.5,"id":17}"#),
    ("release", #"{"op":"release","movie":"godfather","dx":-212.25,"vx":-1350.0,"id":"r-18"}"#),
    ("toggle", #"{"op":"toggle-watched","movie":"m-42","expect":7,"key":"6f1c2a9e-3d","id":19}"#),
    (
        "configure",
        #"{"op":"configure","trailing":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive"},{"action":"watched","label":"Watched","tint":"blue"}],"allowsFullSwipeTrailing":true,"id":20}"#
    ),
    (
        "add (escapes, non-ASCII)",
        #"{"op":"add","title":"Am\u00e9lie \"Le Fabuleux Destin\" – 2001 🎬","image":"amelie.jpg","id":21}"#
    ),
]

print("wire-bench (release; best of 5 rounds of about 20 ms each)")
print("-- parse (JSONParser.parse) --")
for (name, text) in requests {
    let bytes = Array(text.utf8)
    measure("parse \(name) (\(bytes.count) B)") {
        bytes.withUnsafeBytes { raw in
            guard case .object(let o)? = try? JSONParser.parse(raw) else { return -1 }
            return o.count
        }
    }
}
print("-- parse (JSONParser.parseObjectMembers, with raw ranges) --")
for (name, text) in requests.prefix(2) {
    let bytes = Array(text.utf8)
    measure("members \(name) (\(bytes.count) B)") {
        bytes.withUnsafeBytes { raw in (try? JSONParser.parseObjectMembers(raw))?.count ?? -1 }
    }
}

// The whole request layer (parse, checks, typed request), as the daemon runs it per line.
print("-- decode (RequestDecoder.decode: parse, argument checks, typed request) --")
for (name, text) in [
    ("ping", #"{"op":"ping"}"#), ("ping with id", #"{"op":"ping","id":17}"#),
    ("drag", #"{"op":"drag","movie":"godfather","dx":-60.5,"id":17}"#),
    ("toggle", #"{"op":"toggle-watched","movie":"matrix","expect":6,"key":"k-123","id":3}"#),
] {
    let bytes = Array(text.utf8)
    measure("decode \(name) (\(bytes.count) B)") {
        bytes.withUnsafeBytes { RequestDecoder.decode($0).op?.utf8.count ?? 0 }
    }
}

func writeBenchmarks() {
    print("-- write (JSONWriter, buffer reused) --")
    var writer = JSONWriter(capacity: 1024)
    let idBytes: [UInt8] = Array("17".utf8)
    measure("write ok reply {\"id\":17,\"ok\":true}") {
        writer.reset()
        writer.object { w in
            w.key("id"); w.raw(idBytes)
            w.field("ok", true)
        }
        writer.newline()
        return writer.bytes.count
    }
    measure("write drag reply with row and 2 buttons") {
        writer.reset()
        writer.object { w in
            w.key("id"); w.raw(idBytes)
            w.field("ok", true)
            w.field(
                "row",
                object: { w in
                    w.field("movie", "godfather")
                    w.field("offset", -60.5)
                    w.field("phase", "dragging")
                    w.field("edge", "trailing")
                    w.field("fullSwipe", false)
                    w.field(
                        "buttons",
                        array: { w in
                            w.object { w in
                                w.field("action", "delete"); w.field("label", "Delete");
                                w.field("icon", "trash")
                                w.field("tint", "red"); w.field("role", "destructive")
                                w.field("x", -60.5); w.field("width", 74)
                            }
                            w.object { w in
                                w.field("action", "watched"); w.field("label", "Watched");
                                w.field("icon", "eye")
                                w.field("tint", "blue"); w.field("x", -30.25); w.field("width", 74)
                            }
                        })
                })
        }
        writer.newline()
        return writer.bytes.count
    }
    measure("write movie event with RFC 3339 time") {
        writer.reset()
        writer.object { w in
            w.field("event", "movie")
            w.field("seq", UInt64(123_456))
            w.field("kind", "watched-toggled")
            w.field(
                "movie",
                object: { w in
                    w.field("id", "m-42"); w.field("title", "Amélie"); w.field("image", "amelie.jpg")
                    w.field("watched", true); w.field("watchedWithFriends", false); w.field("version", 7)
                })
            w.key("at")
            w.bytes.append(0x22)
            RFC3339.append(microsecondsSinceEpoch: 1_796_013_814_123_456, to: &w.bytes)
            w.bytes.append(0x22)
        }
        writer.newline()
        return writer.bytes.count
    }
    let parsedConfigure = try! JSONParser.parse(requests[4].1)
    measure("write JSON value (configure request)") {
        writer.reset()
        writer.value(parsedConfigure)
        return writer.bytes.count
    }
}
writeBenchmarks()

print("-- frame (LineFramer, 1,000 drag lines per 52 KB read) --")
var stream: [UInt8] = []
for _ in 0..<1000 { stream += Array(requests[1].1.utf8) + [0x0A] }
var framer = LineFramer()
measure("frame 1,000 lines (per line: divide by 1,000)") {
    stream.withUnsafeBytes { framer.append($0) }
    var n = 0
    while case .line(let line)? = framer.next() { n &+= line.count }
    return n
}
measure("frame + parse 1,000 drag lines (per 1,000)") {
    stream.withUnsafeBytes { framer.append($0) }
    var n = 0
    while case .line(let line)? = framer.next() {
        n &+= line.withUnsafeBytes { (try? JSONParser.parseObjectMembers($0))?.count ?? 0 }
    }
    return n
}
