// The two forms of a row (RowForm.swift): the compact form is the full one stopped after
// `buttons`, in every message that carries a row, and `options` sets and reports the form.
import JSONCodec
import Movies
import XCTest

@testable import SwipeEngine
@testable import Wire

final class RowFormTests: XCTestCase {
    /// Seven dragged 60 points left under the movie layout, in a 390-point row.
    private func dragged() -> RowRender {
        var list = SwipeList(layout: MovieLayout.standard)
        _ = try? list.send(.dragChanged(row: "seven", dx: -60))
        return list.render("seven", flags: [])
    }

    private func text(_ write: (inout JSONWriter) -> Void) -> String {
        var out = JSONWriter()
        write(&out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    private static let compactSeven =
        #"{"movie":"seven","offset":-60,"phase":"dragging","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":330,"width":60}]}"#

    func testACompactRowIsExactlyItsPlaceAndButtons() {
        XCTAssertEqual(text { Encode.row(&$0, dragged(), form: .compact) }, Self.compactSeven)
        XCTAssertEqual(
            text { Encode.row(&$0, id: Array("1".utf8), row: dragged(), form: .compact, fired: nil) },
            #"{"id":1,"ok":true,"row":"# + Self.compactSeven + "}\n")
        XCTAssertEqual(
            text { Encode.rowEvent(&$0, row: dragged(), form: .compact, removed: true) },
            #"{"event":"row","row":"# + Self.compactSeven + #","removed":true}"# + "\n")
        XCTAssertEqual(
            text { Encode.rows(&$0, id: nil, rows: [dragged(), dragged()], form: .compact) },
            #"{"ok":true,"rows":["# + Self.compactSeven + "," + Self.compactSeven + "]}\n")
        XCTAssertEqual(
            text {
                Encode.row(
                    &$0, id: nil, row: dragged(), form: .compact, fired: .bound(action: "delete", seq: 12))
            },
            #"{"ok":true,"row":"# + Self.compactSeven + #","fired":{"action":"delete","seq":12}}"# + "\n")
    }

    /// A confirming row (the engine's rule 10) in both forms: one button with the confirm label
    /// and no icon; `pending` in a reply, `cancelled` in a row event.
    func testAConfirmingRowInBothFormsWithPendingAndCancelled() throws {
        var layout = MovieLayout.standard
        layout.trailing[0].confirm = true
        var list = SwipeList(layout: layout)
        _ = try? list.send(.perform(row: "seven", action: "delete"))
        let render = list.render("seven", flags: [])
        let compact =
            #"{"movie":"seven","offset":-70,"phase":"confirming","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Confirm","tint":"red","role":"destructive","x":320,"width":70}]}"#
        XCTAssertEqual(
            text { Encode.row(&$0, id: nil, row: render, form: .compact, fired: .pending(action: "delete")) },
            #"{"ok":true,"row":"# + compact + #","pending":{"action":"delete"}}"# + "\n")
        let full = text { Encode.row(&$0, render, form: .full) }
        XCTAssertTrue(full.hasPrefix(String(compact.dropLast()) + #","spring":{"target":-70,"#), full)
        XCTAssertTrue(full.contains(#","accessibilityActions":[{"action":"watched","#), full)
        _ = list.confirmTimedOut(row: "seven")
        XCTAssertEqual(
            text {
                Encode.rowEvent(
                    &$0, row: list.render("seven", flags: []), form: .compact, removed: false, timedOut: true)
            },
            #"{"event":"row","row":{"movie":"seven","offset":0,"phase":"closed","edge":null,"fullSwipe":false,"buttons":[]},"cancelled":"timeout"}"#
                + "\n")
    }

    /// The full form is the compact one with the spring and the accessibility actions after
    /// `buttons`.
    func testTheFullFormAddsTheSpringAndTheAccessibilityActions() throws {
        let full = text { Encode.row(&$0, dragged(), form: .full) }
        XCTAssertTrue(full.hasPrefix(String(Self.compactSeven.dropLast())), full)
        XCTAssertTrue(
            full.dropFirst(Self.compactSeven.count - 1).hasPrefix(
                #","spring":{"target":-60,"response":"#), full)
        XCTAssertTrue(full.contains(#","accessibilityActions":[{"action":"watched","#), full)
        let object = try XCTUnwrap(JSONParser.parse(Array(full.utf8)).objectValue)
        XCTAssertEqual(
            object.members.map(\.key),
            ["movie", "offset", "phase", "edge", "fullSwipe", "buttons", "spring", "accessibilityActions"])
    }

    func testTheOptionsReply() {
        XCTAssertEqual(
            text { Encode.options(&$0, id: Array(#""o""#.utf8), rows: .compact) },
            #"{"id":"o","ok":true,"options":{"rows":"compact"}}"# + "\n")
        XCTAssertEqual(
            text { Encode.options(&$0, id: nil, rows: .full) },
            #"{"ok":true,"options":{"rows":"full"}}"# + "\n")
    }

    private func decode(_ line: String) -> Result<Request, WireError> {
        Array(line.utf8).withUnsafeBytes { RequestDecoder.decode($0).result }
    }

    func testOptionsDecodes() {
        XCTAssertEqual(decode(#"{"op":"options","rows":"compact"}"#), .success(.options(rows: .compact)))
        XCTAssertEqual(decode(#"{"op":"options","rows":"full"}"#), .success(.options(rows: .full)))
        XCTAssertEqual(decode(#"{"op":"options"}"#), .success(.options(rows: nil)))
        XCTAssertEqual(
            decode(#"{"op":"options","rows":"tiny"}"#),
            .failure(.badRequest(#""rows" must be "full" or "compact", not "tiny""#)))
        XCTAssertEqual(
            decode(#"{"op":"options","rows":true}"#),
            .failure(.badRequest(#""rows" must be a string, not a boolean"#)))
        XCTAssertEqual(
            decode(#"{"op":"options","spring":false}"#),
            .failure(.badRequest(#"unknown argument "spring" for op "options"; it takes rows, crossings"#)))
    }
}
