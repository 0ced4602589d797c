import Glibc
import StoreCore

/// An exclusive `flock` on `<dir>/lock`: one store per state directory, so the log has one writer
/// (`swiped import` takes it too, so that no daemon starts on a log being imported).
public final class DirectoryLock {
    private var fd: Int32

    public init(_ directory: String) throws(StoreError) {
        let path = directory + "/" + StateDirectory.lockName
        fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError(
                .storage, "\(path): cannot open the lock file: \(String(cString: strerror(errno)))")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let busy = errno == EWOULDBLOCK
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            fd = -1
            throw StoreError(
                .storage,
                busy
                    ? "\(directory): the state directory is in use by another process"
                    : "\(path): cannot lock: \(why)")
        }
    }

    public func release() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { release() }
}
