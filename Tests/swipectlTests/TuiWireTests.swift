import JSONCodec
import SwipeEngine
import Terminal
import XCTest

@testable import swipectl

/// The terminal front end's requests as protocol lines, and replies decoded for their request.
final class TuiWireTests: XCTestCase {
    func line(_ request: TuiRequest) -> String {
        let (op, arguments) = TuiWire.line(request)
        var out = JSONWriter()
        out.object { w in
            w.field("op", op)
            for (key, value) in arguments { w.field(key, value) }
        }
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// "Ask before deleting" sends the whole default layout (configure replaces it), its delete
    /// asking with a "Delete?" button; off, the same layout without.
    func testConfigureSendsTheDefaultLayoutWithDeleteAskingToBeConfirmed() {
        let leading =
            #""leading":[{"action":"watched","label":"Watched","icon":"eye","tint":"green","activeIcon":"eye.slash"},"#
            + #"{"action":"watched-with-friends","label":"With Friends","icon":"person.3","tint":"indigo"}]"#
        let end = #""allowsFullSwipeLeading":true,"allowsFullSwipeTrailing":true,"buttonWidth":70}"#
        XCTAssertEqual(
            line(.configure(confirmDelete: true, quiet: false)),
            #"{"op":"configure","# + leading
                + #","trailing":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","#
                + #""confirm":true,"confirmLabel":"Delete?"}],"# + end)
        XCTAssertEqual(
            line(.configure(confirmDelete: false, quiet: true)),
            #"{"op":"configure","# + leading
                + #","trailing":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive"}],"#
                + end)
    }
}
