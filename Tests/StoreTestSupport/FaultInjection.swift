import CSQLite
import Foundation

/// Fault injection for the SQLite log: an SQLite VFS wrapping the default one ("unix") that can make
/// fsync fail (SQLITE_IOERR_FSYNC) or writes fail as if the disk were full (SQLITE_FULL).
/// `install()` makes it the process's default VFS, so every connection opened afterwards
/// (EventLog, GroupCommitter, SQLiteStore) goes through it; `uninstall()` restores "unix".
/// In StoreTestSupport, which only tests and log-bench link: the daemon ships without it.
package enum FaultInjection {
    package static let vfsName = "swiped-faults"

    /// Makes fsync fail with SQLITE_IOERR_FSYNC while true.
    package static var failSyncs: Bool {
        get { state.get(\.failSyncs) }
        set { state.set(\.failSyncs, newValue) }
    }

    /// Makes every fsync this many µs slower while non-zero: a disk in a busy spell, on demand
    /// (log-bench's slow-disk rows, the CommitHold test).
    package static var syncDelayMicros: UInt32 {
        get { state.get(\.syncDelayMicros) }
        set { state.set(\.syncDelayMicros, newValue) }
    }

    /// Makes writes fail with SQLITE_FULL while true.
    package static var failWrites: Bool {
        get { state.get(\.failWrites) }
        set { state.set(\.failWrites, newValue) }
    }

    /// Makes the next write wait until `releaseHeldWrite(failing:)` (a test sees a commit stopped
    /// half-way, and can queue more behind it). Only one write is held; later ones go through.
    package static func holdNextWrite() {
        state.lock.lock()
        state.hold = .armed
        state.lock.unlock()
    }

    /// Waits until a write is held by `holdNextWrite()`; false after `timeout` seconds.
    package static func waitForHeldWrite(timeout: Double = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        state.held.lock()
        defer { state.held.unlock() }
        while state.holdState != .holding {
            if !state.held.wait(until: deadline) { return false }
        }
        return true
    }

    /// Lets the held write go on, or fail as if the disk were full.
    package static func releaseHeldWrite(failing: Bool) {
        state.held.lock()
        state.holdState = failing ? .releasedFailing : .released
        state.held.broadcast()
        state.held.unlock()
    }

    /// Registers the wrapping VFS as the default. Idempotent.
    package static func install() {
        state.lock.lock()
        defer { state.lock.unlock() }
        if state.vfs == nil {
            guard let real = sqlite3_vfs_find("unix") else { fatalError("no unix VFS") }
            let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
            vfs.initialize(to: real.pointee)
            vfs.pointee.pNext = nil
            vfs.pointee.zName = UnsafePointer(strdup(vfsName))
            vfs.pointee.szOsFile = Int32(MemoryLayout<sqlite3_file>.stride) + real.pointee.szOsFile
            vfs.pointee.xOpen = faultOpen
            state.real = real
            state.vfs = vfs
        }
        sqlite3_vfs_register(state.vfs, 1)
    }

    /// Makes "unix" the default VFS again and clears the faults.
    package static func uninstall() {
        failSyncs = false
        failWrites = false
        syncDelayMicros = 0
        state.lock.lock()
        state.hold = .off
        state.lock.unlock()
        state.held.lock()
        if state.holdState == .holding {
            state.holdState = .released
            state.held.broadcast()
        } else {
            state.holdState = .none
        }
        state.held.unlock()
        if let real = sqlite3_vfs_find("unix") { sqlite3_vfs_register(real, 1) }
    }

    final class State: @unchecked Sendable {
        let lock = NSLock()
        var failSyncs = false
        var failWrites = false
        var syncDelayMicros: UInt32 = 0
        /// `holdNextWrite()`: armed until a write takes it (under `lock`).
        var hold = Hold.off
        enum Hold { case off, armed }
        /// The held write and its release (under `held`).
        let held = NSCondition()
        var holdState = HoldState.none
        enum HoldState { case none, holding, released, releasedFailing }
        var real: UnsafeMutablePointer<sqlite3_vfs>?
        var vfs: UnsafeMutablePointer<sqlite3_vfs>?
        var methods: UnsafeMutablePointer<sqlite3_io_methods>?

        func get<T>(_ k: KeyPath<State, T>) -> T {
            lock.lock()
            defer { lock.unlock() }
            return self[keyPath: k]
        }
        func set<T>(_ k: ReferenceWritableKeyPath<State, T>, _ v: T) {
            lock.lock()
            self[keyPath: k] = v
            lock.unlock()
        }
    }
    static let state = State()

    /// Whether this write is the one `holdNextWrite()` asked for.
    static func takeHold() -> Bool {
        state.lock.lock()
        defer { state.lock.unlock() }
        guard state.hold == .armed else { return false }
        state.hold = .off
        return true
    }

    /// Holds the calling write until released; returns whether it is to fail.
    static func waitWhileHeld() -> Bool {
        state.held.lock()
        defer { state.held.unlock() }
        // A release that came first (a test that gave up waiting) is not lost.
        if state.holdState == .none { state.holdState = .holding }
        state.held.broadcast()
        while state.holdState == .holding { state.held.wait() }
        let failing = state.holdState == .releasedFailing
        state.holdState = .none
        return failing
    }

    /// The wrapped file sits right after our sqlite3_file header.
    static func inner(_ f: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(f!) + MemoryLayout<sqlite3_file>.stride).assumingMemoryBound(
            to: sqlite3_file.self)
    }
    static func m(_ f: UnsafeMutablePointer<sqlite3_file>?) -> sqlite3_io_methods {
        inner(f).pointee.pMethods.pointee
    }

    static func wrappedMethods() -> UnsafeMutablePointer<sqlite3_io_methods> {
        state.lock.lock()
        defer { state.lock.unlock() }
        if let m = state.methods { return m }
        var w = sqlite3_io_methods()
        w.iVersion = 3
        w.xClose = { f in FaultInjection.m(f).xClose!(FaultInjection.inner(f)) }
        w.xRead = { f, b, n, o in FaultInjection.m(f).xRead!(FaultInjection.inner(f), b, n, o) }
        w.xWrite = { f, b, n, o in
            if FaultInjection.takeHold() && FaultInjection.waitWhileHeld() { return SQLITE_FULL }
            return FaultInjection.failWrites
                ? SQLITE_FULL : FaultInjection.m(f).xWrite!(FaultInjection.inner(f), b, n, o)
        }
        w.xTruncate = { f, s in FaultInjection.m(f).xTruncate!(FaultInjection.inner(f), s) }
        w.xSync = { f, flags in
            if FaultInjection.failSyncs { return SQLITE_IOERR | (4 << 8) }
            let delay = FaultInjection.syncDelayMicros
            if delay > 0 { usleep(delay) }
            return FaultInjection.m(f).xSync!(FaultInjection.inner(f), flags)
        }
        w.xFileSize = { f, p in FaultInjection.m(f).xFileSize!(FaultInjection.inner(f), p) }
        w.xLock = { f, l in FaultInjection.m(f).xLock!(FaultInjection.inner(f), l) }
        w.xUnlock = { f, l in FaultInjection.m(f).xUnlock!(FaultInjection.inner(f), l) }
        w.xCheckReservedLock = { f, p in FaultInjection.m(f).xCheckReservedLock!(FaultInjection.inner(f), p) }
        w.xFileControl = { f, op, p in FaultInjection.m(f).xFileControl!(FaultInjection.inner(f), op, p) }
        w.xSectorSize = { f in FaultInjection.m(f).xSectorSize!(FaultInjection.inner(f)) }
        w.xDeviceCharacteristics = { f in FaultInjection.m(f).xDeviceCharacteristics!(FaultInjection.inner(f))
        }
        w.xShmMap = { f, pg, sz, ext, pp in
            FaultInjection.m(f).xShmMap!(FaultInjection.inner(f), pg, sz, ext, pp)
        }
        w.xShmLock = { f, off, n, fl in FaultInjection.m(f).xShmLock!(FaultInjection.inner(f), off, n, fl) }
        w.xShmBarrier = { f in FaultInjection.m(f).xShmBarrier!(FaultInjection.inner(f)) }
        w.xShmUnmap = { f, d in FaultInjection.m(f).xShmUnmap!(FaultInjection.inner(f), d) }
        w.xFetch = { f, off, n, pp in FaultInjection.m(f).xFetch!(FaultInjection.inner(f), off, n, pp) }
        w.xUnfetch = { f, off, p in FaultInjection.m(f).xUnfetch!(FaultInjection.inner(f), off, p) }
        let p = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        p.initialize(to: w)
        state.methods = p
        return p
    }
}

private func faultOpen(
    _ vfs: UnsafeMutablePointer<sqlite3_vfs>?, _ name: UnsafePointer<CChar>?,
    _ file: UnsafeMutablePointer<sqlite3_file>?, _ flags: Int32,
    _ outFlags: UnsafeMutablePointer<Int32>?
) -> Int32 {
    let real = FaultInjection.state.real!
    let inner = FaultInjection.inner(file)
    inner.pointee.pMethods = nil
    let rc = real.pointee.xOpen(real, name, inner, flags, outFlags)
    file!.pointee.pMethods =
        inner.pointee.pMethods == nil ? nil : UnsafePointer(FaultInjection.wrappedMethods())
    return rc
}
