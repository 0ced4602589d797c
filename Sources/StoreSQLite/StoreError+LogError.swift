// The one place where the event log's errors become a store's errors.
import EventLog
import StoreCore

extension StoreError {
    init(_ e: LogError) {
        switch e {
        case .full(let m): self.init(.storage, "the disk is full; nothing was saved (\(m))")
        case .io(let m):
            self.init(.storage, "I/O error writing the event log; the daemon stops (\(m))", fatal: true)
        case .keyConflict(let m): self.init(.internal, "idempotency key already in the log (\(m))")
        // Every other failure is the log's own message, as a storage error: each case listed,
        // so that a new kind of failure is mapped here by choice, not by a default.
        case .corrupt, .foreign, .aborted, .closed, .other: self.init(.storage, e.message)
        }
    }

    /// Opening: the log's own message, which names the file.
    init(opening e: LogError) {
        self.init(.storage, e.message, fatal: e.isFatal)
    }
}
