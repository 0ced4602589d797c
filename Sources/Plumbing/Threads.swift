// Linux's per-thread and per-descriptor calls that Swift cannot make directly (CPlumbing's shims).
import CPlumbing

/// Names the calling thread, as `ps -L`, `top -H` and gdb show it (the kernel keeps at most 15
/// bytes). A failure is ignored: the name is only for the eyes of whoever looks, nothing reads it.
public func nameCurrentThread(_ name: String) {
    _ = swiped_name_thread(name)
}

/// An epoll descriptor readable while `a` or `b` is (level-triggered), close-on-exec, for an event
/// loop to watch in place of two; -1 on failure with errno set (epoll_create1 or epoll_ctl's).
public func epollEither(_ a: Int32, _ b: Int32) -> Int32 {
    swiped_epoll_either(a, b)
}
