import Foundation
import Glibc
import Movies
import StoreCore
import StorePostgres
import StoreSQLite
import StoreTestSupport
import XCTest

/// A fresh directory for a store's state, not created yet (opening creates it), removed at the
/// end of the test.
func makeStateDirectory(_ test: XCTestCase, _ name: String = #function) -> String {
    makeTemporaryDirectory(test, "store-\(name.filter(\.isLetter))") + "/state"
}

/// A new, empty directory under the temporary directory, removed at the end of the test.
func makeTemporaryDirectory(_ test: XCTestCase, _ prefix: String) -> String {
    var template = Array("\(FileManager.default.temporaryDirectory.path)/\(prefix)-XXXXXX".utf8CString)
    let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
    return dir
}

extension Store {
    /// A copy of the committed state.
    var stateCopy: MovieState { withState { $0 } }

    /// Runs a loop as the daemon's would (flush, wait for `completionFD`, collect) until `count`
    /// command outcomes and `reads` read outcomes arrived, or 5 s passed.
    func settle(
        results count: Int, reads: Int = 0, file: StaticString = #filePath, line: UInt = #line
    ) -> Completions {
        var all = Completions()
        let deadline = Date().addingTimeInterval(5)
        while all.commands.count < count || all.reads.count < reads, Date() < deadline {
            flush()
            all.append(completions())
            guard all.commands.count < count || all.reads.count < reads else { break }
            var p = pollfd(fd: completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
        }
        XCTAssertEqual(all.commands.count, count, "command outcomes did not arrive", file: file, line: line)
        XCTAssertEqual(all.reads.count, reads, "read outcomes did not arrive", file: file, line: line)
        return all
    }

    /// Collects what the store completes until `done` says so of everything collected, or
    /// `seconds` passed.
    func collect(until done: (Completions) -> Bool, seconds: Double = 5) -> Completions {
        var all = Completions()
        let deadline = Date().addingTimeInterval(seconds)
        while !done(all), Date() < deadline {
            var p = pollfd(fd: completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 50)
            all.append(completions())
        }
        return all
    }

    /// Submits `command` and waits for its outcome.
    func outcome(
        _ command: MovieCommand, token: UInt64 = 1, file: StaticString = #filePath, line: UInt = #line
    )
        -> CommandResult?
    {
        submit(command, token: token)
        return settle(results: 1, file: file, line: line).commands.first
    }

    /// Submits `command`, expecting it to commit; returns its event.
    func submitOK(_ command: MovieCommand, file: StaticString = #filePath, line: UInt = #line)
        -> CommittedEvent?
    {
        let result = outcome(command, file: file, line: line)
        XCTAssertEqual(result?.replayed, false, file: file, line: line)
        do {
            return try result?.result.get()
        } catch {
            XCTFail("\(command) failed: \(error)", file: file, line: line)
            return nil
        }
    }

    /// Submits `command`, expecting its outcome from the very next `completions()` (decided at
    /// once: a refusal or a replay).
    func immediate(
        _ command: MovieCommand, token: UInt64 = 99, file: StaticString = #filePath, line: UInt = #line
    )
        -> CommandResult?
    {
        submit(command, token: token)
        let c = completions()
        XCTAssertEqual(c.commands.map(\.token), [token], "not answered at once", file: file, line: line)
        XCTAssertEqual(c.committed, [], file: file, line: line)
        return c.commands.first
    }

    /// The error of a refused command: refused at once by a store that `refusesAtSubmit`, at
    /// commit (nothing written) by one that does not.
    func refusal(_ command: MovieCommand, file: StaticString = #filePath, line: UInt = #line) -> StoreError? {
        let result: CommandResult?
        if refusesAtSubmit {
            result = immediate(command, file: file, line: line)
        } else {
            let seq = latestSeq
            result = outcome(command, token: 99, file: file, line: line)
            XCTAssertEqual(latestSeq, seq, "a refusal wrote something", file: file, line: line)
        }
        guard case .failure(let e) = result?.result else {
            XCTFail("\(command) was not refused", file: file, line: line)
            return nil
        }
        return e
    }

    /// Reads a page of events and waits for it.
    func events(after: UInt64, limit: Int, file: StaticString = #filePath, line: UInt = #line)
        throws -> [CommittedEvent]
    {
        try page(.events(after: after, limit: limit), file: file, line: line)
    }

    /// Reads a page of one person's events (`StoreRead.eventsBy`) and waits for it.
    func events(
        by person: String, after: UInt64, limit: Int, file: StaticString = #filePath, line: UInt = #line
    )
        throws -> [CommittedEvent]
    {
        try page(.eventsBy(person: person, after: after, limit: limit), file: file, line: line)
    }

    private func page(_ request: StoreRead, file: StaticString, line: UInt) throws -> [CommittedEvent] {
        read(request, token: 7)
        let c = settle(results: 0, reads: 1, file: file, line: line)
        guard let r = c.reads.first else { return [] }
        XCTAssertEqual(r.token, 7, file: file, line: line)
        return try r.result.get()
    }
}

extension Completions {
    /// Each command's outcome by its token (each token is reported once).
    var resultByToken: [UInt64: Result<CommittedEvent, StoreError>] {
        Dictionary(uniqueKeysWithValues: commands.map { ($0.token, $0.result) })
    }
}
