// The SQLite store's reads (`history` pages, one person's changes, subscribers catching up) run
// here, on a thread of their own with their own connection, so that the event loop never waits
// for the disk: a page of 256 events of an old log may need its movies folded from their
// streams, and a cold page cache makes any read a disk read. WAL lets this connection read while
// the writer commits; it sees only committed transactions, and the store clamps each page to its
// committed state's latestSeq when it hands the page over (the reader may already see a commit
// whose completion the loop has not collected yet).
import CSQLite
import EventLog
import Foundation
import Movies
import Plumbing
import StoreCore

final class SQLiteReader: @unchecked Sendable {
    struct Job {
        var token: UInt64
        var after: UInt64
        var limit: Int
        /// One person's events only (`StoreRead.eventsBy`), up to `through` (the committed state's
        /// latestSeq when it was asked).
        var person: String? = nil
        var through: UInt64 = .max
    }

    /// Readable exactly while answers wait (written and reset under `cond`, as the committer's).
    var fd: Int32 { doorbell.fd }
    private let doorbell: Doorbell

    private let cond = NSCondition()
    // Guarded by `cond`.
    private var jobs: [Job] = []
    private var answers: [ReadResult] = []
    private var closing = false
    private var running = true

    /// Owned by the reader thread once it runs.
    private let log: EventLog

    init(path: String, durability: Durability) throws(LogError) {
        log = try EventLog(path: path, durability: durability, create: false)
        do throws(PlumbingError) {
            doorbell = try Doorbell(path)
        } catch {
            log.close()
            throw .other(error.message)
        }
        Thread { [self] in run() }.start()
    }

    deinit {
        close()
        doorbell.close()
    }

    /// Queues a read; never blocks on I/O.
    func submit(_ job: Job) {
        cond.lock()
        if closing {
            answers.append(ReadResult(token: job.token, result: .failure(.closed)))
            doorbell.ring()
        } else {
            jobs.append(job)
            cond.signal()
        }
        cond.unlock()
    }

    /// The answers so far, in the order the reads were submitted.
    func drain() -> [ReadResult] {
        cond.lock()
        defer { cond.unlock() }
        guard !answers.isEmpty else { return [] }
        doorbell.reset()
        let out = answers
        answers = []
        return out
    }

    /// Answers what is queued, then stops the thread and closes its connection. Idempotent.
    func close() {
        cond.lock()
        closing = true
        cond.broadcast()
        while running { cond.wait() }
        cond.unlock()
    }

    private func run() {
        nameCurrentThread("swiped-log-rd")
        while true {
            cond.lock()
            while jobs.isEmpty && !closing { cond.wait() }
            if jobs.isEmpty {
                running = false
                cond.broadcast()
                cond.unlock()
                break
            }
            let now = jobs
            jobs = []
            cond.unlock()
            let out = now.map { ReadResult(token: $0.token, result: page($0)) }
            cond.lock()
            answers += out
            doorbell.ring()
            cond.unlock()
        }
        log.close()
    }

    private func page(_ job: Job) -> Result<[CommittedEvent], StoreError> {
        do throws(StoreError) {
            let stored: [StoredEvent]
            do throws(LogError) {
                if let person = job.person {
                    stored = try log.events(by: person, after: job.after, upTo: job.through, limit: job.limit)
                } else {
                    stored = try log.events(after: job.after, limit: job.limit)
                }
            } catch {
                throw StoreError(error)
            }
            return .success(try StoredEventDecoding.committedEvents(stored, from: log))
        } catch {
            return .failure(error)
        }
    }
}
