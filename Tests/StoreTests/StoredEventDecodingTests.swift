// Stored rows of the SQLite log back into committed events: what a row that cannot be decoded
// says.
import EventLog
import Foundation
import StoreCore
import XCTest

@testable import StoreSQLite

final class StoredEventDecodingTests: XCTestCase {
    /// An event that does not record its movie is found by folding its stream; when an event
    /// of the stream cannot be decoded, the error says why, as the decoder put it.
    func testAnEventThatCannotBeDecodedKeepsTheDecodersMessage() throws {
        let dir = makeStateDirectory(self)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let log = try EventLog(path: dir + "/events.sqlite3")
        defer { log.close() }
        let stored = try log.append([NewEvent(stream: "heat", kind: "added", payload: Array("{".utf8))])
        XCTAssertThrowsError(try StoredEventDecoding.committedEvents(stored, from: log)) { error in
            let message = (error as? StoreError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("event 1 cannot be decoded: "), message)
            XCTAssertFalse(message.hasSuffix("cannot be decoded: "), message)
        }
    }
}
