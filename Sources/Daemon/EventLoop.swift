// A thin owner of one sd_event loop (sd-event(3)): I/O sources, one-shot timers, signals and the
// watchdog. Each source is a small object that keeps its Swift handler alive and unrefs its
// sd_event_source when cancelled or released, so a connection that goes away takes its sources
// with it. Everything here runs on the loop's thread; nothing is shared with other threads.
//
// sd-event's calls are checked. Those that can fail for want of memory or descriptors throw, to
// a caller who says what happens next; the others fail only on misuse (a finished loop, a forked
// process, a source of another type), so a failure stops the daemon with the call's name and
// errno, rather than leave a timer unarmed that the daemon waits for.
import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

public final class EventLoop {
    let event: OpaquePointer

    public init() throws(SystemError) {
        var e: OpaquePointer?
        let r = sd_event_new(&e)
        guard r >= 0, let e else { throw SystemError("sd_event_new", errno: -r) }
        event = e
    }

    deinit { sd_event_unref(event) }

    /// Sends WATCHDOG=1 at half of $WATCHDOG_USEC when the service manager asked for it (true),
    /// or does nothing (false, not asked).
    public func enableWatchdog() throws(SystemError) -> Bool {
        let r = sd_event_set_watchdog(event, 1)
        guard r >= 0 else { throw SystemError("sd_event_set_watchdog", errno: -r) }
        return r > 0
    }

    public func run() throws(SystemError) {
        let r = sd_event_loop(event)
        if r < 0 { throw SystemError("sd_event_loop", errno: -r) }
    }

    public func exit(code: Int32 = 0) {
        let r = sd_event_exit(event, code)
        precondition(r >= 0, "sd_event_exit(\(code)): \(SystemError("sd_event_exit", errno: -r))")
    }

    /// Now on CLOCK_MONOTONIC, in µs, as cached by the loop for this iteration.
    public var now: UInt64 {
        var usec: UInt64 = 0
        let r = sd_event_now(event, CLOCK_MONOTONIC, &usec)
        precondition(r >= 0, "\(SystemError("sd_event_now", errno: -r))")
        return usec
    }

    /// Names `source` for sd-event's own debug output; on failure (out of memory) releases it.
    private static func describe(_ source: OpaquePointer?, _ description: String) throws(SystemError) {
        let r = sd_event_source_set_description(source, description)
        guard r >= 0 else {
            sd_event_source_disable_unref(source)
            throw SystemError("sd_event_source_set_description", errno: -r)
        }
    }

    // MARK: - I/O

    public final class IOSource {
        fileprivate var source: OpaquePointer?
        fileprivate let handler: (UInt32) -> Void
        fileprivate init(handler: @escaping (UInt32) -> Void) { self.handler = handler }

        /// The epoll events watched (EPOLLIN, EPOLLOUT…).
        public fileprivate(set) var events: UInt32 = 0

        /// Watches for `events` instead: one epoll_ctl, which may fail (out of memory).
        public func watch(_ events: UInt32) throws(SystemError) {
            guard events != self.events, let source else { return }
            let r = sd_event_source_set_io_events(source, events)
            guard r >= 0 else { throw SystemError("sd_event_source_set_io_events", errno: -r) }
            self.events = events
        }

        public func cancel() {
            if let source { sd_event_source_disable_unref(source) }
            source = nil
        }

        deinit { cancel() }
    }

    public func addIO(fd: Int32, events: UInt32, description: String, _ handler: @escaping (UInt32) -> Void)
        throws(SystemError) -> IOSource
    {
        let box = IOSource(handler: handler)
        var s: OpaquePointer?
        let r = sd_event_add_io(
            event, &s, fd, events,
            { _, _, revents, userdata in
                Unmanaged<IOSource>.fromOpaque(userdata!).takeUnretainedValue().handler(revents)
                return 0
            }, Unmanaged.passUnretained(box).toOpaque())
        guard r >= 0 else { throw SystemError("sd_event_add_io", errno: -r) }
        try Self.describe(s, description)
        box.source = s
        box.events = events
        return box
    }

    // MARK: - Timers

    /// A one-shot timer on CLOCK_MONOTONIC, created once and re-armed as often as needed.
    public final class Timer {
        fileprivate var source: OpaquePointer?
        fileprivate let handler: () -> Void
        /// As given to `makeTimer`, for the messages below.
        let description: String
        fileprivate init(description: String, handler: @escaping () -> Void) {
            self.description = description
            self.handler = handler
        }

        /// Fails only on misuse (a loop finished, or `usec` past the clock's end): see the top.
        public func arm(afterMicroseconds usec: UInt64) {
            guard let source else { return }
            var r = sd_event_source_set_time_relative(source, usec)
            precondition(
                r >= 0,
                "timer \(description), in \(usec) µs: \(SystemError("sd_event_source_set_time_relative", errno: -r))"
            )
            r = sd_event_source_set_enabled(source, Int32(SD_EVENT_ONESHOT))
            precondition(
                r >= 0, "timer \(description): \(SystemError("sd_event_source_set_enabled", errno: -r))")
        }

        public func disarm() {
            guard let source else { return }
            let r = sd_event_source_set_enabled(source, Int32(SD_EVENT_OFF))
            precondition(
                r >= 0, "timer \(description): \(SystemError("sd_event_source_set_enabled", errno: -r))")
        }

        public var isArmed: Bool {
            guard let source else { return false }
            var state: Int32 = 0
            let r = sd_event_source_get_enabled(source, &state)
            precondition(
                r >= 0, "timer \(description): \(SystemError("sd_event_source_get_enabled", errno: -r))")
            return state != Int32(SD_EVENT_OFF)
        }

        public func cancel() {
            if let source { sd_event_source_disable_unref(source) }
            source = nil
        }

        deinit { cancel() }
    }

    /// A disarmed timer; `arm` starts it. Accuracy 1 ms: a close 0.5 s after a full swipe need
    /// not wake the CPU at an exact microsecond.
    public func makeTimer(description: String, _ handler: @escaping () -> Void) throws(SystemError) -> Timer {
        let box = Timer(description: description, handler: handler)
        var s: OpaquePointer?
        let r = sd_event_add_time_relative(
            event, &s, CLOCK_MONOTONIC, UInt64.max / 2, 1000,
            { _, _, userdata in
                Unmanaged<Timer>.fromOpaque(userdata!).takeUnretainedValue().handler()
                return 0
            }, Unmanaged.passUnretained(box).toOpaque())
        guard r >= 0 else { throw SystemError("sd_event_add_time_relative", errno: -r) }
        try Self.describe(s, description)
        box.source = s
        box.disarm()
        return box
    }

    // MARK: - Post

    /// Runs after every loop iteration that dispatched some other source (sd_event_add_post):
    /// work batched across all the sources of one iteration.
    public final class PostSource {
        fileprivate var source: OpaquePointer?
        fileprivate let handler: () -> Void
        fileprivate init(handler: @escaping () -> Void) { self.handler = handler }
        deinit { if let source { sd_event_source_disable_unref(source) } }
    }

    public func addPost(description: String, _ handler: @escaping () -> Void) throws(SystemError)
        -> PostSource
    {
        let box = PostSource(handler: handler)
        var s: OpaquePointer?
        let r = sd_event_add_post(
            event, &s,
            { _, userdata in
                Unmanaged<PostSource>.fromOpaque(userdata!).takeUnretainedValue().handler()
                return 0
            }, Unmanaged.passUnretained(box).toOpaque())
        guard r >= 0 else { throw SystemError("sd_event_add_post", errno: -r) }
        try Self.describe(s, description)
        box.source = s
        return box
    }

    // MARK: - Signals

    public final class SignalSource {
        fileprivate var source: OpaquePointer?
        fileprivate let handler: (Int32) -> Void
        fileprivate init(handler: @escaping (Int32) -> Void) { self.handler = handler }
        deinit { if let source { sd_event_source_disable_unref(source) } }
    }

    /// Blocks `signals` in the calling thread. Call it before any other thread starts (threads
    /// inherit the mask): a signal left unblocked in some thread is delivered there, with its
    /// default action (for SIGTERM: death without a word).
    public static func blockSignals(_ signals: [Int32]) throws(SystemError) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        let r = pthread_sigmask(SIG_BLOCK, &mask, nil)
        guard r == 0 else { throw SystemError("pthread_sigmask", errno: r) }
    }

    /// Delivers `signals` through signalfd in the loop (blocking them here too).
    public func addSignals(
        _ signals: [Int32], description: String, _ handler: @escaping (Int32) -> Void
    ) throws(SystemError)
        -> [SignalSource]
    {
        try EventLoop.blockSignals(signals)
        var sources: [SignalSource] = []
        for signal in signals {
            let box = SignalSource(handler: handler)
            var s: OpaquePointer?
            let r = sd_event_add_signal(
                event, &s, signal,
                { _, info, userdata in
                    Unmanaged<SignalSource>.fromOpaque(userdata!).takeUnretainedValue()
                        .handler(Int32(info!.pointee.ssi_signo))
                    return 0
                }, Unmanaged.passUnretained(box).toOpaque())
            guard r >= 0 else { throw SystemError("sd_event_add_signal", errno: -r) }
            try Self.describe(s, "\(description)-\(signal)")
            box.source = s
            sources.append(box)
        }
        return sources
    }
}
