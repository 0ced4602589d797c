import Foundation
import Movies
import SwipeEngine
import Terminal
import XCTest

/// The layout as snapshots of the cell grid (text, then the colours where they matter), with
/// rows as the real engine renders them for the movie layout.
final class LayoutTests: XCTestCase {
    func engine(columns: Int, _ direction: Direction = .ltr) -> SwipeList {
        SwipeList(
            layout: MovieLayout.standard,
            viewport: Viewport(width: ScreenLayout.viewportWidth(columns: columns), direction: direction))
    }

    func model(_ renders: [String: RowRender] = [:], selected: Int? = 0, _ direction: Direction = .ltr)
        -> ScreenModel
    {
        var m = ScreenModel(daemon: "./swiped.sock")
        m.connection = .connected
        m.seq = 12
        m.direction = direction
        m.selected = selected
        let movies: [(String, String, Bool, Bool)] = [
            ("godfather", "The Godfather", true, false),
            ("seven", "Se7en", false, true),
            ("tokyo", "東京物語 🎬", false, false),
        ]
        m.rows = movies.map { id, title, watched, friends in
            let r = renders[id]
            return RowView(
                id: id, title: title, image: id, watched: watched, watchedWithFriends: friends,
                offset: r?.offset ?? 0,
                buttons: r?.buttons ?? [], buttonsOffset: r?.offset ?? 0, phase: r?.phase ?? .closed)
        }
        return m
    }

    func render(_ list: SwipeList, _ row: String) -> RowRender { list.render(row, flags: []) }

    func check(_ grid: Grid, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let actual = grid.text.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.reversed().drop(while: { $0 == " " }).reversed())
        }.joined(separator: "\n")
        XCTAssertEqual(actual, expected, "snapshot:\n\(actual)", file: file, line: line)
    }

    func testClosed() {
        check(
            ScreenLayout.render(model(), width: 40, height: 14),
            """
             swiped  ● connected  seq 12  writer  .…
            ────────────────────────────────────────
             ▶ G  The Godfather                    ⠿
                  ◉ Watched                        ⠿
            ········································
               S  Se7en                            ⠿
                  👥 With friends                  ⠿
            ········································
               T  東京物語 🎬                      ⠿
                                                   ⠿
            ········································


             ↑↓ select  ←→ open  ⏎ fire  / search  …
            """)
    }

    func testDraggingRevealsDeleteInRedWhereTheEngineSays() throws {
        var list = engine(columns: 40)
        _ = try list.send(.dragChanged(row: "seven", dx: -60))
        let row = render(list, "seven")
        XCTAssertEqual(row.phase, .dragging)
        XCTAssertEqual(row.buttons.map(\.x), [140])  // 200-pt row, 60 revealed
        let grid = ScreenLayout.render(model(["seven": row]), width: 40, height: 14)
        check(
            grid,
            """
             swiped  ● connected  seq 12  writer  .…
            ────────────────────────────────────────
             ▶ G  The Godfather                    ⠿
                  ◉ Watched                        ⠿
            ········································
               S  Se7en                ⠿     ✖
                  👥 With friends      ⠿   Delete
            ········································
               T  東京物語 🎬                      ⠿
                                                   ⠿
            ········································


             ↑↓ select  ←→ open  ⏎ fire  / search  …
            """)
        // 60 points are 12 columns: 28 to 39, red (SwiftUI's red, nearest of the 256 colours).
        for x in 0..<40 {
            let red = grid[x, 5].style.background == .indexed(203)
            XCTAssertEqual(red, x >= 28, "column \(x)")
        }
        XCTAssertEqual(Palette.nearest256(255, 59, 48), 203)
        XCTAssertEqual(
            ScreenLayout.hit(model(["seven": row]), width: 40, height: 14, x: 30, y: 5),
            .row(index: 1, button: "delete"))
        XCTAssertEqual(
            ScreenLayout.hit(model(["seven": row]), width: 40, height: 14, x: 10, y: 5),
            .row(index: 1, button: nil))
    }

    func testOpenOnTheLeadingEdgeShowsBothButtonsInTheirTints() throws {
        var list = engine(columns: 60)
        _ = try list.send(.open(row: "godfather", edge: .leading))
        let row = render(list, "godfather")
        XCTAssertEqual(row.offset, 140)
        let grid = ScreenLayout.render(model(["godfather": row], selected: 1), width: 60, height: 14)
        check(
            grid,
            """
             swiped  ● connected  seq 12  writer  ./swiped.sock
            ────────────────────────────────────────────────────────────
                  ◉             👥         G  The Godfather            ⠿
               Watched     With Friends       ◉ Watched                ⠿
            ····························································
             ▶ S  Se7en                                                ⠿
                  👥 With friends                                      ⠿
            ····························································
               T  東京物語 🎬                                          ⠿
                                                                       ⠿
            ····························································


             ↑↓ select  ←→ open  ⏎ fire  / search  s share  g ghosts  ?…
            """)
        XCTAssertEqual(grid[0, 2].style.background, .indexed(Palette.nearest256(52, 199, 89)))
        XCTAssertEqual(grid[14, 2].style.background, .indexed(Palette.nearest256(88, 86, 214)))
        XCTAssertEqual(grid[28, 2].style.background, nil)
        // True colour where the terminal has it.
        var m = model(["godfather": row])
        m.trueColor = true
        XCTAssertEqual(
            ScreenLayout.render(m, width: 60, height: 14)[0, 2].style.background, .rgb(52, 199, 89))
    }

    func testAFullSwipeShowsOnlyTheOutermostButtonAndFiredStaysThere() throws {
        var list = engine(columns: 40)
        _ = try list.send(.dragChanged(row: "godfather", dx: 150))
        let dragging = render(list, "godfather")
        XCTAssertTrue(dragging.fullSwipe)
        check(
            ScreenLayout.render(model(["godfather": dragging]), width: 40, height: 14),
            """
             swiped  ● connected  seq 12  writer  .…
            ────────────────────────────────────────
                          ◉                ▶ G  Th…⠿
                       Watched                  ◉ …⠿
            ········································
               S  Se7en                            ⠿
                  👥 With friends                  ⠿
            ········································
               T  東京物語 🎬                      ⠿
                                                   ⠿
            ········································


             ↑↓ select  ←→ open  ⏎ fire  / search  …
            """)
        _ = try list.send(.released(row: "godfather", dx: nil, vx: nil))
        let fired = render(list, "godfather")
        XCTAssertEqual(fired.phase, .fired)
        let grid = ScreenLayout.render(model(["godfather": fired]), width: 40, height: 14)
        check(
            grid,
            """
             swiped  ● connected  seq 12  writer  .…
            ────────────────────────────────────────
                               ◉
                            Watched
            ········································
               S  Se7en                            ⠿
                  👥 With friends                  ⠿
            ········································
               T  東京物語 🎬                      ⠿
                                                   ⠿
            ········································


             ↑↓ select  ←→ open  ⏎ fire  / search  …
            """)
        XCTAssertEqual(grid[39, 2].style.background, .indexed(Palette.nearest256(52, 199, 89)))
    }

    func testRightToLeftAlignsTitlesRightAndLeadingIsTheRightEdge() throws {
        var list = engine(columns: 60, .rtl)
        _ = try list.send(.open(row: "seven", edge: .leading))
        let row = render(list, "seven")
        XCTAssertLessThan(row.offset, 0)  // leading is on the right in rtl
        check(
            ScreenLayout.render(model(["seven": row], selected: 0, .rtl), width: 60, height: 14),
            """
             swiped  ● connected  seq 12  writer  ./swiped.sock
            ────────────────────────────────────────────────────────────
            ⠿                                        The Godfather G  ◀
            ⠿                                            ◉ Watched
            ····························································
            ⠿                    Se7en S          👥            ◉
            ⠿          👥 With friends       With Friends    Watched
            ····························································
            ⠿                                          東京物語 🎬 T
            ⠿
            ····························································


             ↑↓ select  ←→ open  ⏎ fire  / search  s share  g ghosts  ?…
            """)
    }

    func testNarrowAndWideTerminals() throws {
        var list = engine(columns: 24)
        _ = try list.send(.open(row: "godfather", edge: .trailing))
        check(
            ScreenLayout.render(model(["godfather": render(list, "godfather")]), width: 24, height: 9),
            """
             swiped  ● connected  se
            ────────────────────────
             ▶ G  Th…⠿      ✖
                  ◉ …⠿    Delete
            ························
               S  Se7en            ⠿
                  👥 With friends  ⠿

             ↑↓ select  ←→ open  ⏎ …
            """)
        var wide = engine(columns: 100)
        _ = try wide.send(.open(row: "godfather", edge: .trailing))
        let grid = ScreenLayout.render(model(["godfather": render(wide, "godfather")]), width: 100, height: 9)
        check(
            grid,
            """
             swiped  ● connected  seq 12  writer  ./swiped.sock
            ────────────────────────────────────────────────────────────────────────────────────────────────────
             ▶ G  The Godfather                                                                  ⠿      ✖
                  ◉ Watched                                                                      ⠿    Delete
            ····································································································
               S  Se7en                                                                                        ⠿
                  👥 With friends                                                                              ⠿

             ↑↓ select  ⇧ move  ←→ open  ⏎ fire  / search  a add  r rec  s share  g ghosts  ? help  q quit
            """)
        XCTAssertEqual(ScreenLayout.scale(columns: 100), 5)
        XCTAssertEqual(ScreenLayout.viewportWidth(columns: 10), 100)  // the protocol's least width
        check(ScreenLayout.render(model(), width: 19, height: 9), "swiped: the termin…\n\n\n\n\n\n\n\n")
    }

    func testAsciiHelpPromptAndACollapsingRow() {
        var m = model()
        m.ascii = true
        m.rows[2].height = 0.4
        m.prompt = "Alien"
        check(
            ScreenLayout.render(m, width: 40, height: 14),
            """
             swiped  * connected  seq 12  writer  .…
            ----------------------------------------
             > G  The Godfather                    =
                  [w] Watched                      =
            ........................................
               S  Se7en                            =
                  [f] With friends                 =
            ........................................
               T  東京物語 🎬                      =
                                                   =


             Add a movie: Alien_
             Enter adds  Esc cancels
            """)
        m.prompt = nil
        m.help = true
        let help = ScreenLayout.render(m, width: 60, height: 16).text
        XCTAssertTrue(help.contains("u          undo a delete, anyone's (for 5 s)"), help)
        XCTAssertTrue(help.contains("^ v  j k   select a row"), help)
    }

    /// An action that asks to be confirmed: its one button across the strip, with its
    /// confirmLabel, where `perform` left the row.
    func testAConfirmingRowShowsItsConfirmButton() throws {
        var layout = MovieLayout.standard
        layout.trailing[0].confirm = true
        layout.trailing[0].confirmLabel = "Delete?"
        var list = SwipeList(
            layout: layout, viewport: Viewport(width: ScreenLayout.viewportWidth(columns: 40)))
        _ = try list.send(.perform(row: "seven", action: "delete"))
        let row = render(list, "seven")
        XCTAssertEqual(row.phase, .confirming)
        let grid = ScreenLayout.render(model(["seven": row]), width: 40, height: 14)
        let line = String(grid.text.split(separator: "\n")[6])
        XCTAssertEqual(
            String(line.reversed().drop { $0 == " " }.reversed()), "      👥 With friends    ⠿   Delete?")
        XCTAssertEqual(grid[26, 5].style.background, .indexed(203))
        XCTAssertEqual(grid[25, 5].style.background, nil)
    }

    /// A spring overshoots: after a full swipe the content may be drawn past the row's edge.
    func testContentCarriedPastEitherEdge() throws {
        var list = engine(columns: 40)
        _ = try list.send(.dragChanged(row: "seven", dx: -150))
        let row = render(list, "seven")
        for offset in [-260.0, -200, 200, 260] {
            var m = model()
            m.rows[1].offset = offset
            m.rows[1].buttons = offset < 0 ? row.buttons : []
            m.rows[1].buttonsOffset = row.offset
            let grid = ScreenLayout.render(m, width: 40, height: 14)
            XCTAssertFalse(grid.text.contains("Se7en"), "offset \(offset)")
            if offset < 0 { XCTAssertTrue(grid.text.contains("Delete"), "offset \(offset)") }
        }
    }

    func testAGhostFingerIsDrawnFaintly() {
        var m = model()
        m.rows[1].ghosts = [Ghost(client: 2, offset: -50)]
        let grid = ScreenLayout.render(m, width: 40, height: 14)
        XCTAssertEqual(grid[29, 5].text, "┆")
        XCTAssertTrue(grid[29, 5].style.faint)
        XCTAssertEqual(grid[29, 6].text, "┆")
        XCTAssertEqual(grid[29, 4].text, "·", "only on the row's title and indicator lines")
    }

    /// A sharer's row is laid out in its viewport: on a row half as wide, half the points.
    func testAGhostIsScaledFromTheSharersViewportToThisRow() throws {
        var sharer = SwipeList(layout: MovieLayout.standard, viewport: Viewport(width: 400, direction: .ltr))
        _ = try sharer.send(.open(row: "godfather", edge: .leading))
        let row = sharer.render("godfather", flags: [])
        XCTAssertEqual(row.offset, 140)
        let ghost = Ghost(client: 7, row: row, sharerWidth: 400, width: 200)
        XCTAssertEqual(ghost.client, 7)
        XCTAssertEqual(ghost.offset, 70)
        XCTAssertEqual(ghost.buttons.map(\.x), [0, 35])
        XCTAssertEqual(ghost.buttons.map(\.width), [35, 35])
        XCTAssertEqual(ghost.buttons.map(\.action), ["watched", "watched-with-friends"])
        XCTAssertEqual(Ghost(client: 7, row: row, sharerWidth: 0, width: 200).offset, 140, "no width: as is")
        // An rtl sharer seen in an ltr list: mirrored, so that it reveals the same edge (here the
        // leading one, on the left for this list), its buttons still left to right.
        var rtl = SwipeList(layout: MovieLayout.standard, viewport: Viewport(width: 400, direction: .rtl))
        _ = try rtl.send(.open(row: "godfather", edge: .leading))
        let rtlRow = rtl.render("godfather", flags: [])
        XCTAssertEqual(rtlRow.offset, -140)
        let mirrored = Ghost(client: 7, row: rtlRow, sharerWidth: 400, sharerDirection: .rtl, width: 200)
        XCTAssertEqual(mirrored.offset, 70)
        XCTAssertEqual(mirrored.buttons, ghost.buttons)
        XCTAssertEqual(
            Ghost(
                client: 7, row: rtlRow, sharerWidth: 400, sharerDirection: .rtl, width: 200, direction: .rtl
            ).offset, -70, "the same direction: as it is")
    }

    /// Another person opened Se7en's trailing edge: its strip keeps what the row shows there,
    /// in faint red, with the Delete button's icon and label where the row is blank, and a ┆
    /// at their content's edge; the rest of the row is untouched.
    func testAGhostShowsItsButtonsFaintlyInTheirTints() throws {
        var sharer = engine(columns: 40)
        _ = try sharer.send(.open(row: "seven", edge: .trailing))
        var m = model()
        let width = ScreenLayout.viewportWidth(columns: 40)
        m.rows[1].ghosts = [Ghost(client: 3, row: render(sharer, "seven"), sharerWidth: width, width: width)]
        let grid = ScreenLayout.render(m, width: 40, height: 14)
        check(
            grid,
            """
             swiped  ● connected  seq 12  writer  .…
            ────────────────────────────────────────
             ▶ G  The Godfather                    ⠿
                  ◉ Watched                        ⠿
            ········································
               S  Se7en              ┆      ✖      ⠿
                  👥 With friends    ┆    Delete   ⠿
            ········································
               T  東京物語 🎬                      ⠿
                                                   ⠿
            ········································


             ↑↓ select  ←→ open  ⏎ fire  / search  …
            """)
        let red = Color.indexed(Palette.nearest256(255, 59, 48))
        for x in 26..<40 {
            for y in 5...6 {
                XCTAssertEqual(grid[x, y].style, Style(foreground: red, faint: true), "(\(x), \(y))")
            }
        }
        XCTAssertEqual(grid[25, 5].style, Style(foreground: red, faint: true), "the edge")
        XCTAssertEqual(grid[6, 5].style, Style(bold: true), "the row's own title, as it was")
        XCTAssertEqual(grid[6, 6].style, Style(faint: true))
        XCTAssertEqual(grid[30, 7].text, "·")
        XCTAssertFalse(grid[30, 7].style.faint && grid[30, 7].style.foreground != nil, "not on the rule")
    }

    /// This row's own buttons stay on top of a ghost, and a ghost never hides a title: over
    /// text it only takes the ghost's faint tint.
    func testTheRowsOwnButtonsAndTitleStayOverAGhost() throws {
        var own = engine(columns: 40)
        _ = try own.send(.open(row: "seven", edge: .trailing))
        var sharer = engine(columns: 40)
        _ = try sharer.send(.dragChanged(row: "seven", dx: -150))
        var m = model(["seven": render(own, "seven")], selected: 1)
        let width = ScreenLayout.viewportWidth(columns: 40)
        m.rows[1].ghosts = [Ghost(client: 3, row: render(sharer, "seven"), sharerWidth: width, width: width)]
        let grid = ScreenLayout.render(m, width: 40, height: 14)
        let red = Color.indexed(Palette.nearest256(255, 59, 48))
        // Own Delete: 26 to 39, in solid red, as without the ghost.
        for x in 26..<40 { XCTAssertEqual(grid[x, 5].style.background, red, "column \(x)") }
        XCTAssertFalse(grid[30, 5].style.faint)
        XCTAssertTrue(gridLine(grid, 6).hasSuffix("Delete    "), gridLine(grid, 6))
        // The ghost's strip, -150 points: 30 columns, 10 to 25 not under own buttons. The
        // title and the indicators stay in view (this row is open: its text keeps to what its
        // content covers) and keep their characters, in faint red where the strip crosses
        // them; the ghost's edge, at 9, falls on a letter on both lines and is not drawn.
        XCTAssertEqual(gridLine(grid, 5).prefix(11), " ▶ S  Se7en")
        XCTAssertEqual(grid[9, 5].text, "e")
        XCTAssertEqual(grid[9, 5].style, Style(background: .indexed(236), bold: true))
        XCTAssertEqual(grid[10, 5].style, Style(foreground: red, background: .indexed(236), faint: true))
        XCTAssertEqual(grid[12, 6].style, Style(foreground: red, background: .indexed(236), faint: true))
        // The ghost's icon where the row is blank, its label not (it would cross own buttons).
        XCTAssertEqual(grid[24, 5].text, "✖")
        XCTAssertEqual(grid[24, 5].style, Style(foreground: red, background: .indexed(236), faint: true))
        let alone = ScreenLayout.render(
            model(["seven": render(own, "seven")], selected: 1), width: 40, height: 14)
        for y in 0..<14 where y != 5 {
            XCTAssertEqual(gridLine(grid, y), gridLine(alone, y), "line \(y)")
        }
    }

    /// The header says what this connection records and shares and how many ghosts it shows.
    func testTheHeaderSaysRecordingSharingAndGhosts() {
        var m = model()
        m.recording = .on
        m.sharing = true
        m.ghosts = 2
        XCTAssertEqual(
            gridLine(ScreenLayout.render(m, width: 80, height: 14), 0),
            " swiped  ● connected  seq 12  writer  ● recording…  sharing  ghosts 2  ./swiped…")
        m.recording = .lost
        m.sharing = false
        m.ghosts = nil
        XCTAssertTrue(
            gridLine(ScreenLayout.render(m, width: 80, height: 14), 0).hasPrefix(
                " swiped  ● connected  seq 12  writer  recording lost  ./swiped.sock"))
    }

    /// Who the connection is (issue 45): its person and role, "read-only" in orange when it may
    /// not change the list, the role alone for nobody in particular, and a name's bidi controls
    /// escaped; a daemon before roles still says writer or read-only.
    func testTheHeaderSaysWhoTheConnectionIsAndWhetherItIsReadOnly() {
        var m = model()
        m.user = "alice"
        m.role = "writer"
        XCTAssertEqual(
            gridLine(ScreenLayout.render(m, width: 60, height: 14), 0),
            " swiped  ● connected  seq 12  alice (writer)  ./swiped.sock ")
        m.role = "reader"
        m.writer = false
        let grid = ScreenLayout.render(m, width: 70, height: 14)
        XCTAssertEqual(
            gridLine(grid, 0), " swiped  ● connected  seq 12  alice (reader)  read-only  ./swiped.sock")
        XCTAssertEqual(grid[46, 0].text, "r")
        XCTAssertEqual(grid[46, 0].style, Style(foreground: .indexed(214), bold: true))
        m.user = nil
        XCTAssertTrue(
            gridLine(ScreenLayout.render(m, width: 60, height: 14), 0).hasPrefix(
                " swiped  ● connected  seq 12  reader  read-only  ./"))
        m.user = "e\u{202E}vil"
        XCTAssertTrue(
            gridLine(ScreenLayout.render(m, width: 80, height: 14), 0).contains(
                "  e\\u{202E}vil (reader)  read-only"))
        m.signingIn = true
        XCTAssertTrue(
            gridLine(ScreenLayout.render(m, width: 60, height: 14), 0).hasPrefix(
                " swiped  ● connected  seq 12  signing in…  ./swiped.sock"))
        m.signingIn = false
        m.role = nil
        XCTAssertTrue(
            gridLine(ScreenLayout.render(m, width: 60, height: 14), 0).hasPrefix(
                " swiped  ● connected  seq 12  read-only  ./swiped.sock"))
    }

    /// Each row starts with its poster tile: the image's letter, white and bold, on its colour
    /// (true colour when the terminal has it, else the nearest of the 256), two cells wide.
    func testEachRowShowsItsImagesPosterTileBeforeItsTitle() {
        var m = model()
        m.rows[0].image = "été"
        m.rows[1].image = ""
        m.trueColor = true
        let grid = ScreenLayout.render(m, width: 40, height: 14)
        XCTAssertEqual(gridLine(grid, 2).prefix(18), " ▶ É  The Godfathe")
        XCTAssertEqual(gridLine(grid, 5).prefix(11), "   #  Se7en")
        let tile = Style(foreground: .rgb(255, 255, 255), background: .rgb(0xAD, 0x14, 0x57), bold: true)
        XCTAssertEqual([grid[3, 2].style, grid[4, 2].style], [tile, tile])
        XCTAssertEqual(grid[5, 2].style.background, .indexed(236), "the selected row's own background")
        XCTAssertEqual(grid[3, 5].style.background, .rgb(0x15, 0x65, 0xC0))
        m.trueColor = false
        let palette = ScreenLayout.render(m, width: 40, height: 14)
        XCTAssertEqual(palette[3, 2].style.background, .indexed(125))
        m.rows[0].image = "godfather"  // #2E7D32: green, not the gray the ramp has nearer
        XCTAssertEqual(ScreenLayout.render(m, width: 40, height: 14)[3, 2].style.background, .indexed(29))
        XCTAssertEqual(palette[3, 2].style.foreground, .indexed(231))
    }

    /// An open row, either edge, either direction: its selection marker, its tile and the start
    /// of its title stay in view (cut with "…" before its buttons), so one can tell which row
    /// is open.
    func testAnOpenRowKeepsItsMarkerAndTheStartOfItsTitle() throws {
        for direction in [Direction.ltr, .rtl] {
            for edge in [Edge.leading, .trailing] {
                var list = engine(columns: 40, direction)
                _ = try list.send(.open(row: "godfather", edge: edge))
                let row = render(list, "godfather")
                let grid = ScreenLayout.render(model(["godfather": row], direction), width: 40, height: 14)
                let line = gridLine(grid, 2)
                let what = "\(direction) \(edge): \(line)"
                XCTAssertNotEqual(row.offset, 0)
                if direction == .ltr {
                    XCTAssertTrue(line.contains(" ▶ G  Th"), what)
                } else {
                    XCTAssertTrue(line.contains("Th") && line.contains("G  ◀ "), what)
                }
            }
        }
    }

    /// The footer names s share next to g ghosts, and / search; in 80 columns it leaves out
    /// w f d, a add and r rec to keep them, ⇧ move (issue 48), ? help and q quit (with --ascii,
    /// J/K move too: its words are longer).
    func testTheFooterNamesShareNextToGhosts() {
        var m = model()
        XCTAssertEqual(
            ScreenLayout.keys(m, width: 80),
            " ↑↓ select  ⇧ move  ←→ open  ⏎ fire  / search  s share  g ghosts  ? help  q quit")
        // Narrower, ⇧ move makes way too, after r rec (the keys make way in their order).
        XCTAssertEqual(
            ScreenLayout.keys(m, width: 79),
            " ↑↓ select  ←→ open  ⏎ fire  / search  s share  g ghosts  ? help  q quit")
        m.ascii = true
        XCTAssertEqual(
            ScreenLayout.keys(m, width: 80),
            " j/k select  h/l open  Enter fire  / search  s share  g ghosts  ? help  q quit")
        XCTAssertEqual(
            ScreenLayout.keys(m, width: 110),
            " j/k select  J/K move  h/l open  Enter fire  / search  w f d  a add  r rec  s share  g ghosts  ? help  q quit"
        )
    }

    /// The terminal front end's guide (docs/tui.md) says what the footer shows in 80 columns, and
    /// from how many columns each key that makes way shows: the program's own footer (issue 49:
    /// it said 94 and "a add"). The README's tour shows the same 80-column screen.
    func testTheReadmesFooterIsTheProgramsFooter() throws {
        let top = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        let readme = try String(contentsOfFile: top.appendingPathComponent("README.md").path, encoding: .utf8)
        let guide = try String(
            contentsOfFile: top.appendingPathComponent("docs/tui.md").path, encoding: .utf8)
        let m = model()
        let footer = "\n    " + ScreenLayout.keys(m, width: 80) + "\n"
        for (name, text) in [("README.md", readme), ("docs/tui.md", guide)] {
            XCTAssertTrue(text.contains(footer), "the 80-column footer in \(name)")
        }
        func from(_ key: String) -> Int {
            (1...200).first { ScreenLayout.keys(m, width: $0).contains(key) } ?? 0
        }
        let said =
            "c confirm shows from \(from("c confirm")) columns, w f d from \(from("w f d")), a add from \(from("a add")), r rec from \(from("r rec"))"
        XCTAssertTrue(guide.replacingOccurrences(of: "\n", with: " ").contains(said), said)
    }

    /// "Ask before deleting" (`c`): the header says it is on, `?` names its key, and the
    /// footer does when there is room for it.
    func testTheHeaderHelpAndFooterNameAskBeforeDeleting() {
        var m = model()
        m.confirmDelete = true
        XCTAssertEqual(
            gridLine(ScreenLayout.render(m, width: 60, height: 14), 0),
            " swiped  ● connected  seq 12  writer  confirm delete  ./swi…")
        XCTAssertTrue(ScreenLayout.helpLines.contains("c          ask before deleting (on / off)"))
        m.help = true
        // (In 24 lines, the help's every line shows: in fewer, its last ones are cut.)
        XCTAssertTrue(ScreenLayout.render(m, width: 60, height: 24).text.contains("ask before deleting"))
        let all =
            " ↑↓ select  ⇧ move  ←→ open  ⏎ fire  / search  w f d  a add  r rec  s share  g ghosts  c confirm  ? help  q quit"
        XCTAssertEqual(ScreenLayout.keys(m, width: TextWidth.width(all)), all)
        XCTAssertEqual(
            ScreenLayout.keys(m, width: TextWidth.width(all) - 1),
            " ↑↓ select  ⇧ move  ←→ open  ⏎ fire  / search  w f d  a add  r rec  s share  g ghosts  ? help  q quit"
        )
    }
}

/// Line `y` of a grid's text.
func gridLine(_ grid: Grid, _ y: Int) -> String {
    String(grid.text.split(separator: "\n", omittingEmptySubsequences: false)[y])
}
