// Memory given back to the system once connections go. glibc keeps what is freed in its heaps
// for the next allocations: it gives back the top of a heap by itself, not the free pages
// between blocks still in use, and a thousand subscribers that each held their catch-up window
// left tens of MB of such pages after they all closed (VmRSS stayed there). malloc_trim(0)
// gives those pages back (madvise) in every arena, the store reader thread's too. It walks
// every free list, so it runs only once enough connections went to have freed something worth
// it, and a second after the first of them: a burst of closes is trimmed once, after it.
import CSystemd

enum MemoryTrim {
    /// Connections gone since the last trim that make the next one worth its walk.
    static let afterDrops = 32
    /// How long after the drop that reached `afterDrops` the trim runs, µs.
    static let delay: UInt64 = 1_000_000
}

extension Server {
    /// A connection went: trims a second later once enough went since the last trim.
    func connectionGone() {
        dropsSinceTrim += 1
        guard dropsSinceTrim >= MemoryTrim.afterDrops, let trimTimer, !trimTimer.isArmed else { return }
        trimTimer.arm(afterMicroseconds: MemoryTrim.delay)
    }

    func trimMemory() {
        let drops = dropsSinceTrim
        dropsSinceTrim = 0
        let released = swiped_malloc_trim() == 1
        journal.log(
            .debug, "free memory given back after connections went",
            [
                ("DROPS", "\(drops)"), ("RELEASED", released ? "yes" : "no"),
                ("CLIENTS", "\(connections.count)"),
            ])
    }
}
