// log-torture: appends under load through GroupCommitter and prints every durably
// acknowledged event as "<seq> <key>\n" on stdout, written only after its commit returned.
// The crash test (EventLogTests/CrashTests) kills it with SIGKILL at random moments and checks
// that every printed event is in the log, in order, exactly once, with gapless seqs.
//
// usage: log-torture <db path> <key prefix> [in-flight batches, default 32]
import EventLog
import Glibc

func complain(_ s: String) {
    let b = Array((s + "\n").utf8)
    _ = b.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
}

let args = CommandLine.arguments
guard args.count >= 3 else {
    complain("usage: log-torture <db path> <key prefix> [in-flight]")
    exit(64)
}
let path = args[1]
let prefix = args[2]
let inFlightMax = args.count > 3 ? Int(args[3]) ?? 32 : 32

let committer: GroupCommitter
do {
    committer = try GroupCommitter(path: path, durability: .full)
} catch {
    complain("log-torture: \(error)")
    exit(1)
}

var nextKey = 0
var nextToken: UInt64 = 0
var inFlight = 0
var rng = SystemRandomNumberGenerator()

func writeAll(_ bytes: [UInt8]) {
    var off = 0
    while off < bytes.count {
        let n = bytes[off...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            exit(3)
        }
        off += n
    }
}

while true {
    while inFlight < inFlightMax {
        let size = Int.random(in: 1...4, using: &rng)
        var batch: [NewEvent] = []
        for _ in 0..<size {
            nextKey += 1
            batch.append(
                NewEvent(
                    stream: "s\(nextKey % 17)", kind: "torture",
                    payload: Array("payload \(nextKey)".utf8), key: "\(prefix)-\(nextKey)"))
        }
        nextToken += 1
        committer.submit(batch, token: nextToken)
        inFlight += 1
    }
    committer.wait()
    var out: [UInt8] = []
    for c in committer.drain() {
        inFlight -= 1
        switch c.result {
        case .success(let events):
            for e in events { out.append(contentsOf: "\(e.seq) \(e.key ?? "-")\n".utf8) }
        case .failure(let e):
            complain("log-torture: commit failed: \(e)")
            exit(2)
        }
    }
    writeAll(out)
}
