import Foundation
import XCTest

@testable import Daemon

#if canImport(Glibc)
    import Glibc
#endif

final class ProcessFiguresTests: XCTestCase {
    func testOpenFilesCountsADescriptorMore() throws {
        let before = try XCTUnwrap(ProcessFigures.openFiles())
        let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        XCTAssertEqual(ProcessFigures.openFiles(), before + 1)
        XCTAssertNil(ProcessFigures.openFiles(directory: "/nonexistent"))
    }

    func testResidentMemoryIsPagesTimesThePageSize() throws {
        let rss = try XCTUnwrap(ProcessFigures.residentBytes())
        XCTAssertEqual(rss % UInt64(sysconf(Int32(_SC_PAGESIZE))), 0)
        XCTAssertGreaterThan(rss, 1 << 20, "an XCTest process is more than a MiB")
        let dir = NSTemporaryDirectory() + "statm-\(getpid())"
        try "100 25 3 1 0 20 0\n".write(toFile: dir, atomically: true, encoding: .utf8)
        defer { unlink(dir) }
        XCTAssertEqual(ProcessFigures.residentBytes(statm: dir), 25 * UInt64(sysconf(Int32(_SC_PAGESIZE))))
        XCTAssertNil(ProcessFigures.residentBytes(statm: "/nonexistent"))
    }
}
