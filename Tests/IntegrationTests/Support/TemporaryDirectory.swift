// A directory under /tmp that lives as long as the object, for sockets, state and scripts.

import Foundation
import Glibc

/// A fresh directory (mkdtemp, mode 0700) removed with everything in it on deinit.
/// Its path is short, so Unix socket paths inside it fit in sun_path.
final class TemporaryDirectory {
    let path: String

    /// - Parameter prefix: a few letters naming the user, shown in the directory name.
    init(_ prefix: String = "swiped-it") throws {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard result != nil else { throw SystemCallError("mkdtemp", "/tmp/\(prefix).XXXXXX") }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `name` inside the directory.
    func file(_ name: String) -> String { "\(path)/\(name)" }

    /// Writes `contents` to `name` (mode `mode`) and returns its path.
    @discardableResult
    func write(_ name: String, _ contents: String, mode: mode_t = 0o644) throws -> String {
        let target = file(name)
        try contents.write(toFile: target, atomically: false, encoding: .utf8)
        try retryingEINTR("chmod", target) { chmod(target, mode) }
        return target
    }

    /// Reads `name` as UTF-8.
    func read(_ name: String) throws -> String { try String(contentsOfFile: file(name), encoding: .utf8) }

    /// Makes the directory reachable by other users (0755), for daemons run as test users.
    func allowOthers(mode: mode_t = 0o755) throws {
        try retryingEINTR("chmod", path) { chmod(path, mode) }
    }
}
