import JSONCodec
import TestSupport
import XCTest

@testable import Session

/// A connection's replies go out in request order however their commands and reads are
/// answered, and the queue's accounting comes back to nothing, across many more replies than a
/// window (the first slot is left behind and the array compacted now and then).
final class ReplyQueueTests: XCTestCase {
    func testRepliesGoOutInRequestOrder() {
        var rng = SplitMix64(seed: 17)
        var queue = ReplyQueue()
        var waiting: [(ticket: UInt64, read: Bool)] = []
        var next: UInt64 = 0
        var expected: [UInt8] = []
        func line(_ n: UInt64) -> [UInt8] { Array("\(n)\n".utf8) }
        for i in 0..<6_000 {
            // Phases that pipeline (many wait: the first slots are left behind and the array
            // compacted) and phases that drain (the queue empties).
            let r = rng.next() % 8
            let pipelining = (i / 500) % 2 == 0
            switch pipelining ? (r < 5 ? 0 : r < 6 ? 3 : 7) : (r < 1 ? 0 : r < 2 ? 3 : 7) {
            case 0:  // a command or a read waits for the store
                next += 1
                let read = rng.next() % 4 == 0
                let command = Slot.command(ticket: next, .mutation(id: nil, op: "toggle"))
                queue.park(read ? .read(ticket: next, id: nil) : command)
                waiting.append((next, read))
                expected += line(next)
            case 3:  // a reply worded at once, behind whatever waits
                next += 1
                queue.send { $0.bytes += line(next) }
                expected += line(next)
            default:  // the store answers one, mostly the oldest
                guard !waiting.isEmpty else { continue }
                let k = rng.next() % 3 == 0 ? Int(rng.next() % UInt64(waiting.count)) : 0
                let (ticket, read) = waiting.remove(at: k)
                let filled =
                    read
                    ? queue.fill(read: ticket) { out, _ in out.bytes += line(ticket) }
                    : queue.fill(command: ticket) { out, _ in out.bytes += line(ticket) }
                XCTAssertTrue(filled)
                // The first reply still waiting, if any, holds the others back (none is late).
                XCTAssertNil(queue.release())
            }
            let out = queue.out.bytes
            XCTAssertEqual(out, Array(expected.prefix(out.count)))
            XCTAssertEqual(queue.hasSlots, !waiting.isEmpty)
            if waiting.isEmpty {
                XCTAssertEqual(out.count, expected.count)
                XCTAssertEqual(queue.backlog, out.count)
            }
        }
        for (ticket, read) in waiting {
            _ =
                read
                ? queue.fill(read: ticket) { out, _ in out.bytes += line(ticket) }
                : queue.fill(command: ticket) { out, _ in out.bytes += line(ticket) }
            _ = queue.release()
        }
        XCTAssertEqual(queue.out.bytes, expected)
        XCTAssertFalse(queue.hasSlots)
        XCTAssertEqual(queue.backlog, expected.count)
        XCTAssertFalse(queue.fill(command: 1) { _, _ in })
    }
}
