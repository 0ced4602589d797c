// Stored rows of the SQLite log back into committed events, each with the movie as it was right
// after it and who made it. Used on the loop thread (an idempotent replay) and on the reader
// thread (pages).
import EventLog
import Movies
import StoreCore

enum StoredEventDecoding {
    /// Decodes `stored` (in seq order). A movie comes from the event's payload when it records
    /// it (everything this code writes), else from `current` when the movie is still at that
    /// version, else from the fold of its stream up to that seq, read from `log`.
    static func committedEvents(
        _ stored: [StoredEvent], from log: EventLog, current: (String) -> Movie? = { _ in nil }
    ) throws(StoreError) -> [CommittedEvent] {
        var out: [CommittedEvent] = []
        out.reserveCapacity(stored.count)
        var folded: [String: [UInt64: Movie]] = [:]
        for e in stored {
            // nil: an empty payload, written before the movie was recorded with its event (the
            // fold below finds it); a payload that does not decode is damage, said as such.
            let recorded: MovieEvent.Recorded?
            do throws(MovieDecodingError) {
                recorded = try MovieEvent.recorded(
                    stream: e.stream, kind: e.kind, payload: e.payload, seq: e.seq)
            } catch {
                throw StoreError(.storage, "event \(e.seq) cannot be decoded: \(error.message)")
            }
            if let r = recorded {
                out.append(
                    CommittedEvent(
                        seq: e.seq, kind: EventKind(e.kind), movie: r.movie, at: e.at, undoes: r.undoes,
                        by: e.author,
                        to: r.to, from: r.from))
                continue
            }
            if let m = current(e.stream), m.version == e.seq {
                out.append(
                    CommittedEvent(seq: e.seq, kind: EventKind(e.kind), movie: m, at: e.at, by: e.author))
                continue
            }
            if folded[e.stream]?[e.seq] == nil {
                let upTo = stored.last { $0.stream == e.stream }!.seq
                folded[e.stream] = try fold(stream: e.stream, upTo: upTo, from: log)
            }
            guard let m = folded[e.stream]?[e.seq] else {
                throw StoreError(.internal, "\(log.path): event \(e.seq) does not apply to movie \(e.stream)")
            }
            out.append(CommittedEvent(seq: e.seq, kind: EventKind(e.kind), movie: m, at: e.at, by: e.author))
        }
        return out
    }

    /// The movie after each event of `stream` up to `upTo`, by seq.
    private static func fold(stream: String, upTo: UInt64, from log: EventLog) throws(StoreError)
        -> [UInt64: Movie]
    {
        var s = MovieState()
        var movies: [UInt64: Movie] = [:]
        do throws(LogError) {
            for x in try log.events(stream: stream, upTo: upTo) {
                let ev: MovieEvent
                do throws(MovieDecodingError) {
                    ev = try MovieEvent(stream: x.stream, kind: x.kind, payload: x.payload)
                } catch {
                    throw .corrupt("\(log.path): event \(x.seq) cannot be decoded: \(error.message)")
                }
                if let m = s.apply(ev, seq: x.seq) { movies[x.seq] = m }
            }
        } catch {
            throw StoreError(error)
        }
        return movies
    }
}
