import Foundation
import JSONCodec
import Movies
import Session
import StoreTestSupport
import Wire
import XCTest

/// `list`: long replies worded as the output drains (ListStream.swift), their cap for the whole
/// daemon, and pages (`after`, `limit`, `match`).
final class SessionListTests: XCTestCase {
    /// A store of the ten seed movies and `extra` more ("Movie 1"…), added through a session.
    private func store(extra: Int) -> InMemoryStore {
        let store = InMemoryStore()
        let h = SessionHarness(store: store)
        // In batches: a pipeline of more than the output cap's worth of commands pauses.
        for batch in stride(from: 1, through: extra, by: 500) {
            for n in batch...min(batch + 499, extra) { h.send(#"{"op":"add","title":"Movie \#(n)"}"#) }
            h.settle()
            _ = h.read()
        }
        precondition(store.withState { $0.movies.count } == 10 + extra)
        return store
    }

    /// Takes at most `max` bytes of the output, as a socket taking that much would.
    private func take(_ h: SessionHarness, max: Int) -> [UInt8] {
        let bytes = h.session.withPendingOutput { Array($0.prefix(max)) }
        h.hear(.written(bytes.count))
        return bytes
    }

    private func lines(_ bytes: [UInt8]) -> [String] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }

    private func ids(_ reply: [String: Any]) -> [String] {
        (reply["movies"] as? [[String: Any]] ?? []).map { $0["id"] as? String ?? "?" }
    }

    // MARK: - Long replies

    func testALongListIsWordedAsTheOutputDrainsToTheBytesOfTheWholeReply() {
        let store = store(extra: 2000)
        let h = SessionHarness(store: store)
        _ = h.read()
        h.send(#"{"op":"list","id":5}"#)
        let whole = store.withState { state -> [UInt8] in
            var out = JSONWriter()
            Encode.list(&out, id: Array("5".utf8), seq: state.lastSeq, movies: state.movies)
            return out.bytes
        }
        XCTAssertGreaterThan(whole.count, 150_000)
        var got: [UInt8] = []
        var most = 0
        while h.session.pendingOutput > 0 {
            most = max(most, h.session.pendingOutput)
            got += take(h, max: 4096)
        }
        XCTAssertEqual(got, whole, "one line, byte for byte the reply worded whole")
        XCTAssertLessThanOrEqual(most, 20 * 1024, "the output holds a chunk at a time")
        XCTAssertTrue(String(decoding: whole, as: UTF8.self).hasSuffix(#"],"next":null}"# + "\n"))
    }

    func testTheListKeepsItsSeqWhileTheStateChangesAndEventsWaitForTheEndOfItsLine() {
        let store = store(extra: 1000)
        let h = SessionHarness(store: store)
        _ = h.read()
        XCTAssertEqual(h.exchange(#"{"op":"subscribe"}"#).count, 1)
        let seq = store.latestSeq
        h.send(#"{"op":"list","id":1}"#)
        h.send(#"{"op":"toggle-watched","movie":"godfather","id":2}"#)
        h.settle()
        XCTAssertEqual(store.latestSeq, seq + 1, "the toggle committed while the list was worded")
        let lines = h.read()
        XCTAssertEqual(lines.count, 3)
        let list = h.json(lines[0])
        XCTAssertEqual(list["seq"] as? Int, Int(seq))
        let godfather = (list["movies"] as? [[String: Any]])?.first { $0["id"] as? String == "godfather" }
        XCTAssertEqual(godfather?["watched"] as? Bool, false, "the movies as they were at the list's seq")
        XCTAssertEqual(ids(list).count, 1010)
        XCTAssertEqual(
            h.json(lines[1])["event"] as? String, "movie", "the event after the line it waited for")
        XCTAssertEqual(h.json(lines[2])["id"] as? Int, 2)
    }

    func testListsPipelinedBehindALongOneAreAnsweredOnceItIsRead() {
        let store = store(extra: 1000)
        let h = SessionHarness(store: store)
        _ = h.read()
        for id in 1...3 { h.send(#"{"op":"list","id":\#(id)}"#) }
        h.send(#"{"op":"ping","id":4}"#)
        let lines = h.read()
        XCTAssertEqual(lines.map { h.json($0)["id"] as? Int }, [1, 2, 3, 4])
        XCTAssertEqual(lines[0], lines[0].replacingOccurrences(of: "\n", with: ""))
        XCTAssertEqual(ids(h.json(lines[2])).count, 1010)
    }

    func testLongRepliesPastTheDaemonsCapAreRefusedOverloadedAndLoggedOnce() {
        let store = store(extra: 1000)
        // Room for one reply's reservation and its movies, not a second reservation.
        let cap = LargeReplies.reservation + 1010 * MemoryLayout<Movie>.stride + 100
        let budget = LargeReplies(cap: cap)
        let first = SessionHarness(store: store, largeReplies: budget)
        let second = SessionHarness(store: store, largeReplies: budget)
        _ = first.read()
        _ = second.read()
        first.send(#"{"op":"list","id":1}"#)
        XCTAssertEqual(budget.replies, 1)
        second.send(#"{"op":"list","id":2}"#)
        second.send(#"{"op":"list","id":3}"#)
        second.send(#"{"op":"list","limit":5,"id":4}"#)
        second.perform()
        let refused = second.read()
        XCTAssertEqual(refused.count, 3)
        for line in refused.prefix(2) {
            XCTAssertEqual((second.json(line)["error"] as? [String: Any])?["code"] as? String, "overloaded")
        }
        XCTAssertEqual(second.ids(second.json(refused[2])).count, 5, "a short page is always served")
        XCTAssertEqual(second.logs.filter { $0.level == .warning }.count, 1, "the cap is logged once")
        XCTAssertEqual(first.read().count, 1)
        XCTAssertEqual(budget.replies, 0)
        XCTAssertEqual(budget.held, 0)
        second.send(#"{"op":"list","id":5}"#)
        XCTAssertEqual(ids(second.json(second.read()[0])).count, 1010, "served again once the first drained")
        // The cap met again after it drained below half: logged again, once.
        first.send(#"{"op":"list","id":6}"#)
        second.send(#"{"op":"list","id":7}"#)
        second.send(#"{"op":"list","id":8}"#)
        second.perform()
        XCTAssertEqual(second.read().count, 2)
        XCTAssertEqual(second.logs.filter { $0.level == .warning }.count, 2)
    }

    func testAConnectionDroppedMidReplyGivesItsShareBack() {
        let store = store(extra: 1000)
        let budget = LargeReplies()
        var h: SessionHarness? = SessionHarness(store: store, largeReplies: budget)
        _ = h!.read()
        h!.send(#"{"op":"list"}"#)
        XCTAssertGreaterThan(budget.held, 0)
        h = nil
        XCTAssertEqual(budget.held, 0)
        XCTAssertEqual(budget.replies, 0)
    }

    // MARK: - Pages

    func testPagesWithLimitAndNextCoverTheListOnce() {
        let store = store(extra: 25)
        let h = SessionHarness(store: store)
        _ = h.read()
        var seen: [String] = []
        var after: String?
        var pages = 0
        repeat {
            let arg = after.map { #","after":"\#($0)""# } ?? ""
            let page = h.json(h.exchange(#"{"op":"list","limit":7\#(arg)}"#)[0])
            XCTAssertLessThanOrEqual(ids(page).count, 7)
            seen += ids(page)
            after = page["next"] as? String
            if let after { XCTAssertEqual(after, ids(page).last) }
            pages += 1
        } while after != nil
        XCTAssertEqual(pages, 5)
        XCTAssertEqual(seen, store.withState { $0.movies.map(\.id) })
        let last = h.json(h.exchange(#"{"op":"list","limit":5,"after":"movie_25"}"#)[0])
        XCTAssertEqual(ids(last), [])
        XCTAssertTrue(last["next"] is NSNull)
        let exact = h.json(h.exchange(#"{"op":"list","limit":5,"after":"movie_20"}"#)[0])
        XCTAssertEqual(ids(exact).count, 5)
        XCTAssertTrue(exact["next"] is NSNull, "no movie follows the page: next is null")
    }

    func testAfterARemovedMovieStartsAtItsPlaceAndAnUnknownIdIsNotFound() {
        let h = SessionHarness(store: store(extra: 5))
        _ = h.read()
        _ = h.exchange(#"{"op":"remove","movie":"movie_2"}"#)
        let page = h.json(h.exchange(#"{"op":"list","after":"movie_2","limit":2}"#)[0])
        XCTAssertEqual(ids(page), ["movie_3", "movie_4"])
        XCTAssertEqual(
            h.exchange(#"{"op":"list","after":"nope","id":1}"#),
            [#"{"id":1,"ok":false,"error":{"code":"not-found","message":"no movie with id \"nope\""}}"#])
    }

    func testLimitOutOfRangeIsABadRequestWithItsBounds() {
        let h = SessionHarness()
        _ = h.read()
        for limit in ["0", "1001", "2.5"] {
            XCTAssertEqual(
                h.exchange(#"{"op":"list","limit":\#(limit)}"#),
                [
                    #"{"ok":false,"error":{"code":"bad-request","message":"\"limit\" must be a whole number from 1 to 1000"}}"#
                ])
        }
        XCTAssertEqual(ids(h.json(h.exchange(#"{"op":"list","limit":1000}"#)[0])).count, 10)
        XCTAssertEqual(ids(h.json(h.exchange(#"{"op":"list","limit":1}"#)[0])), ["godfather"])
    }

    func testMatchIgnoresCaseAcrossScriptsAndCombinesWithPages() {
        let h = SessionHarness()
        _ = h.read()
        for title in ["Amélie", "ÉCOLE", "Straße", "İstanbul"] {
            _ = h.exchange(#"{"op":"add","title":"\#(title)"}"#)
        }
        func match(_ text: String, _ more: String = "") -> [String] {
            let reply = h.json(h.exchange(#"{"op":"list","match":"\#(text)"\#(more)}"#)[0])
            return (reply["movies"] as? [[String: Any]] ?? []).map { $0["title"] as? String ?? "?" }
        }
        XCTAssertEqual(
            match("THE"),
            ["The Godfather", "The Dark Knight", "The Matrix", "The Silence of the Lambs", "The Green Mile"])
        XCTAssertEqual(match("amÉ"), ["Amélie"])
        // NFD text is made NFC: "e" and U+0301 find "É".
        XCTAssertEqual(match("e\u{301}cole"), ["ÉCOLE"])
        XCTAssertEqual(match("STRASSE"), [], "lowercasing, not case folding: ß is not ss")
        XCTAssertEqual(match("STRAẞE"), ["Straße"])
        XCTAssertEqual(match("i\u{307}stan"), ["İstanbul"], "İ lowercases to i and U+0307")
        XCTAssertEqual(match("zzz"), [])
        let page = h.json(h.exchange(#"{"op":"list","match":"the","limit":2}"#)[0])
        XCTAssertEqual(ids(page), ["godfather", "dark_knight"])
        XCTAssertEqual(page["next"] as? String, "dark_knight")
        XCTAssertEqual(
            ids(h.json(h.exchange(#"{"op":"list","match":"the","after":"dark_knight","limit":2}"#)[0])),
            ["matrix", "silence_of_lambs"])
    }
}

extension SessionHarness {
    fileprivate func ids(_ reply: [String: Any]) -> [String] {
        (reply["movies"] as? [[String: Any]] ?? []).map { $0["id"] as? String ?? "?" }
    }
}
