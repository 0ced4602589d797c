/// A system call of the plumbing failed (no eventfd, no epoll descriptor): the message names the
/// owner and says why.
///
/// Plumbing has an error of its own rather than throwing `LogError` (as `Doorbell` did while it
/// lived in EventLog) or `StoreError`: either would make this module depend on a store's, and
/// the point of it is that neither store's SQL comes with a doorbell. Each caller wraps the
/// message in its own error (`LogError.other`, `StoreError(.internal, …)`), as it did with
/// eventfd's failure before.
public struct PlumbingError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
